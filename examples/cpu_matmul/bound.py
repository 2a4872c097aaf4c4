"""The roofline bound of space.py, and a check of it against measurements.

    python examples/cpu_matmul/bound.py --print                  # the --bound expression
    python examples/cpu_matmul/bound.py --settings               # --set arguments of machine.json
    python examples/cpu_matmul/bound.py SAMPLE.csv [--set NAME=VALUE ...]   # bound vs measured, per row

SAMPLE.csv is what `solverspace sample examples/cpu_matmul/space.py -n 20 -o SAMPLE.csv` (or
`solverspace list ... -o`) writes. The machine's figures are space.py's: machine.json when
peak.py has written one here, else reference_machine.json. Each row is measured with
measure.py's `run` (same repeats and check) in this process.
"""
from __future__ import annotations

import argparse
import contextlib
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
    "kernel": "2 * N**3 / (kernel_rate * 10**6)",
    "loads": "vector_loads / (LOAD_RATE * 10**6)",
    "l2": "l2_bytes / (L2_BANDWIDTH * 10**6)",
}
BOUND = "max(" + ", ".join(TERMS.values()) + ")"


def machine_settings(path: Path = HERE / "machine.json") -> dict:
    """The scalar settings peak.py wrote (space.py reads the file itself; these are for --set
    elsewhere, e.g. with a copy of the space). ValueError: no file, or not peak.py's."""
    try:
        return json.loads(path.read_text())["settings"]
    except FileNotFoundError:
        raise ValueError(f"{path} does not exist: run python examples/cpu_matmul/peak.py first") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not what peak.py writes ({exc!r}): run python examples/cpu_matmul/peak.py "
                         "again") from None


def evaluator(settings: dict | None = None):
    """(space, function: configuration -> {term: Fraction seconds, 'bound': the max})."""
    sys.path.insert(0, str(HERE.parent.parent))
    from solverspace import Space
    from solverspace.lang.evaluate import evaluate
    from solverspace.analysis.objective import parse_objective

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


def read_settings(items, parser) -> dict:
    settings = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            settings[name] = int(value)
        except ValueError:
            parser.error(f"--set {item}: give NAME=INTEGER")
    return settings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample", nargs="?", help="CSV of configurations (solverspace sample/enumerate -o)")
    parser.add_argument("--print", action="store_true", help="print the bound expression and exit")
    parser.add_argument("--settings", action="store_true",
                        help="print the --set arguments of machine.json (peak.py) and exit")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting of space.py (integer), as solverspace's --set")
    parser.add_argument("--write", metavar="CSV",
                        help="also write the rows with their measured `seconds` (read back instead of measuring)")
    parser.add_argument("--summary", action="store_true", help="print the summary only, not a line per row")
    args = parser.parse_args(argv)
    if args.print:
        print(BOUND)
        return 0
    if args.settings:
        try:
            print(" ".join(f"--set {k}={v}" for k, v in machine_settings().items()))
        except ValueError as exc:
            print(f"bound.py: {exc}", file=sys.stderr)
            return 2
        return 0
    if not args.sample:
        parser.error("give a CSV of configurations, or --print")
    from solverspace.core.errors import SolverspaceError
    try:
        return report(args.sample, read_settings(args.set, parser), args.write, args.summary)
    except (OSError, ValueError, ArithmeticError, SolverspaceError) as exc:
        print(f"bound.py: {exc}", file=sys.stderr)
        return 2


COLUMNS = ("tile_i", "tile_j", "tile_k", "unroll_i", "unroll_j", "order")


def read_rows(path: str) -> list:
    """[(line, configuration, seconds or None)] of a CSV; ValueError says which line is wrong."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}: no column {', '.join(missing)}; give a CSV that "
                             "`solverspace sample` or `solverspace enumerate` wrote with -o")
        rows = []
        for line, row in enumerate(reader, start=2):
            try:
                config = {k: int(row[k]) for k in COLUMNS[:5]}
                seconds = float(row["seconds"]) if row.get("seconds") else None
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path}, line {line}: {exc}") from None
            if seconds is not None and not seconds > 0:
                raise ValueError(f"{path}, line {line}: seconds {row['seconds']} is not a positive time")
            config["order"] = row["order"]
            rows.append((line, config, seconds))
    return rows


def report(sample: str, settings: dict, write: str | None, summary: bool) -> int:
    """Bound against measured time per row of `sample`, then the summary; 1 if a row is below its bound."""
    space, terms = evaluator(settings)
    n = {s.name: s.value for s in space.model.settings}["N"]
    sys.path.insert(0, str(HERE))
    import measure

    rows = read_rows(sample)
    if rows and rows[0][2] is not None:
        print(f"measured times: the `seconds` column of {sample} (not measured again)")
    if not summary:
        print(f"{'tile_i':>6} {'tile_j':>6} {'tile_k':>6} {'ui':>3} {'uj':>3} {'order':>5} "
              f"{'bound ms':>9} {'term':>7} {'measured ms':>11} {'ratio':>6} {'GFLOP/s':>8}")
    results = []                     # (bound, seconds, binding term)
    with open(write, "w", newline="") if write else contextlib.nullcontext() as out:
        writer = csv.writer(out) if out else None
        if writer:
            writer.writerow([*COLUMNS, "seconds"])
        for line, config, seconds in rows:
            try:
                t = terms(config)
                if seconds is None:
                    seconds = measure.run(n, **config)[0]
            except (ValueError, ArithmeticError) as exc:
                raise type(exc)(f"{sample}, line {line}: {exc}") from None
            if writer:
                writer.writerow([*config.values(), repr(seconds)])
            top = max(TERMS, key=lambda k: t[k])
            results.append((t["bound"], seconds, top))
            if not summary:
                print(f"{config['tile_i']:>6} {config['tile_j']:>6} {config['tile_k']:>6} {config['unroll_i']:>3} "
                      f"{config['unroll_j']:>3} {config['order']:>5} {float(t['bound']) * 1e3:>9.3f} {top:>7} "
                      f"{seconds * 1e3:>11.3f} {seconds / float(t['bound']):>6.2f} "
                      f"{2 * n ** 3 / seconds / 1e9:>8.1f}", flush=True)
    if not results:
        print("no rows")
        return 1
    worst = max(float(b) / s for b, s, _ in results)
    verdict = "a lower bound on every row" if worst <= 1 else "NOT a lower bound"
    print(f"rows: {len(results)}; largest bound / measured: {worst:.3f} ({verdict})")
    print("binding term: " + ", ".join(f"{k} {sum(1 for *_, t in results if t == k)}" for k in TERMS))
    fastest = min(s for _, s, _ in results)
    below = sum(1 for b, _, _ in results if b < fastest)
    print(f"fastest measured: {fastest * 1e3:.4f} ms; rows whose bound is below it: {below} "
          f"({100 * below / len(results):.1f}%): over these rows, a proof measures at least that many")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
