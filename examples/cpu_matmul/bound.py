"""The roofline bound of space.py, and a check of it against measurements.

    python examples/cpu_matmul/bound.py --print                  # the --bound expression
    python examples/cpu_matmul/bound.py --settings               # --set arguments from machine.json
    python examples/cpu_matmul/bound.py SAMPLE.csv [--machine]   # bound vs measured time per row

SAMPLE.csv is what `solverspace sample examples/cpu_matmul/space.py -n 20 -o SAMPLE.csv` writes.
With --machine the settings come from machine.json (peak.py) instead of space.py's defaults.
Each row is measured with measure.py's `run` (same repeats and check) in this process.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPACE = HERE / "space.py"

# Each term: work / (rate per microsecond * 10**6) = seconds, an exact fraction. The bound is the
# largest: the time of the resource that limits the configuration (the roofline).
TERMS = {
    "flops": "2 * N**3 / (PEAK_FLOPS * 10**6)",
    "loads": "vector_loads / (LOAD_RATE * 10**6)",
    "latency": "fma_chain / (CHAIN_RATE * 10**6)",
    "l2": "l2_bytes / (L2_BANDWIDTH * 10**6)",
}
BOUND = "max(" + ", ".join(TERMS.values()) + ")"


def machine_settings(path: Path = HERE / "machine.json") -> dict:
    if not path.exists():
        raise SystemExit(f"{path} does not exist: run python examples/cpu_matmul/peak.py first")
    return json.loads(path.read_text())["settings"]


def evaluator(settings: dict | None = None):
    """(space, function: configuration -> {term: Fraction seconds, 'bound': the max})."""
    sys.path.insert(0, str(HERE.parent.parent))
    from solverspace import Space
    from solverspace.evaluate import evaluate
    from solverspace.objective import parse_objective

    space = Space.load(str(SPACE), settings or {})
    exprs = {name: parse_objective(space.model, text) for name, text in TERMS.items()}
    exprs["bound"] = parse_objective(space.model, BOUND)

    def terms(config: dict) -> dict:
        result = space.check(config)
        if not result.valid:
            raise ValueError(f"not a configuration of the space: {config}")
        env = {**config, **result.derived}
        return {name: Fraction(evaluate(expr, env)) for name, expr in exprs.items()}

    return space, terms


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample", nargs="?", help="CSV of configurations (solverspace sample -o)")
    parser.add_argument("--print", action="store_true", help="print the bound expression and exit")
    parser.add_argument("--settings", action="store_true",
                        help="print the --set arguments of machine.json (peak.py) and exit")
    parser.add_argument("--machine", action="store_true", help="settings from machine.json (peak.py)")
    parser.add_argument("--n", type=int, help="N (default: the space's)")
    args = parser.parse_args(argv)
    if args.print:
        print(BOUND)
        return 0
    if args.settings:
        print(" ".join(f"--set {k}={v}" for k, v in machine_settings().items()))
        return 0
    if not args.sample:
        parser.error("give a CSV of configurations, or --print")
    settings = machine_settings() if args.machine else {}
    if args.n:
        settings["N"] = args.n
    space, terms = evaluator(settings)
    n = {s.name: s.value for s in space.model.settings}["N"]
    sys.path.insert(0, str(HERE))
    import measure

    with open(args.sample, newline="") as f:
        rows = list(csv.DictReader(f))
    ints = ("tile_i", "tile_j", "tile_k", "unroll_i", "unroll_j")
    print(f"{'tile_i':>6} {'tile_j':>6} {'tile_k':>6} {'ui':>3} {'uj':>3} {'order':>5} "
          f"{'bound ms':>9} {'term':>7} {'measured ms':>11} {'ratio':>6} {'GFLOP/s':>8}")
    worst = 0.0
    for row in rows:
        config = {k: int(row[k]) for k in ints}
        config["order"] = row["order"]
        t = terms(config)
        seconds, _ = measure.run(n, **config)
        top = max(TERMS, key=lambda k: t[k])
        ratio = seconds / float(t["bound"])
        worst = max(worst, float(t["bound"]) / seconds)
        print(f"{config['tile_i']:>6} {config['tile_j']:>6} {config['tile_k']:>6} {config['unroll_i']:>3} "
              f"{config['unroll_j']:>3} {config['order']:>5} {float(t['bound']) * 1e3:>9.3f} {top:>7} "
              f"{seconds * 1e3:>11.3f} {ratio:>6.2f} {2 * n ** 3 / seconds / 1e9:>8.1f}", flush=True)
    verdict = "a lower bound on every row" if worst <= 1 else "NOT a lower bound"
    print(f"largest bound / measured: {worst:.3f} ({verdict})")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
