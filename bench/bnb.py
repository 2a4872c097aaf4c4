"""Benchmark (issue 14): the K best GEMM configurations by a roofline model, by branch and bound.

For the K40c (double, real) and the H100 single-real opt-in GEMM spaces, with a roofline model of
each device (peak rates from `gemm/devices.py`, each sourced there) for an N x N x N GEMM:

    time_ns = max(flops / peak_flop_per_ns, bytes / bytes_per_ns)
    flops   = 2 * N**3 (times 4 for complex arithmetic)
    bytes   = N**3 * (1 / blk_m + 1 / blk_n) * element size   (each block reads its panels of A and B)

it prints the space size, then per engine the time and the answer:

- `bnb`: branch and bound compiled in C (translators/c/best.py), with prefixes visited against
  the space size; `exhaustive`: every valid configuration evaluated by the same compiled walk.
  Both are timed warm (`build` is the first call: generation and compilation, paid once per
  space shape and objective) and their time is the whole `Space.best` call;
- `bnb-reference`: the same branch and bound walked in Python;
- `cpsat` (OR-Tools; it refuses these constants, past its 64-bit range, so it also runs the
  model divided by 2**20, which ranks the same).

Each is stopped at `--time-limit`. The top K configurations of the engines that finished must
agree (checked, printed).

    python bench/bnb.py [--top 10] [--time-limit 120] [--n 4096] [--devices k40c,h100]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solverspace import Space  # noqa: E402
from solverspace.core.errors import SolverspaceError  # noqa: E402
from solverspace.gemm.devices import PEAK_RATES  # noqa: E402

SETTINGS = {
    "k40c": {"device": "k40c"},
    "h100": {"device": "h100", "precision": "single", "arithmetic": "real", "shared_memory": "opt-in"},
}


def roofline(device: str, settings: dict, n: int, scale: int = 1) -> str:
    """The model in nanoseconds (divided by `scale`, a power of two dividing N**3: same ranking)."""
    peak = PEAK_RATES[device]
    single = settings.get("precision", "double") == "single"
    complex_ = settings.get("arithmetic", "real") == "complex"
    element = (4 if single else 8) * (2 if complex_ else 1)
    flops = 2 * n ** 3 * (4 if complex_ else 1)
    rate = peak.fp32_flop_per_ns if single else peak.fp64_flop_per_ns
    return (f"max({flops // scale} / {rate}, {n ** 3 * element // scale} * (blk_m + blk_n) / "
            f"(blk_m * blk_n * {peak.bytes_per_ns}))")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--devices", default="k40c,h100")
    args = parser.parse_args()
    for device in args.devices.split(","):
        settings = SETTINGS[device]
        space = Space.load("gemm", settings)
        start = time.perf_counter()
        size = space.count("c")
        counted = time.perf_counter() - start
        model = roofline(device, settings, args.n)
        print(f"\n{device} {settings}: {size:,} configurations (C count {counted:.2f} s)")
        print(f"  model (ns): {model}")
        answers = {}
        scaled = roofline(device, settings, args.n, 2 ** 20)
        runs = [("build", "bnb", model), ("bnb", "bnb", model), ("exhaustive", "exhaustive", model),
                ("bnb-reference", "bnb-reference", model), ("cpsat", "cpsat", model), ("cpsat/2^20", "cpsat", scaled)]
        for label, engine, objective in runs:
            start = time.perf_counter()
            try:
                result = space.best(objective, maximize=False, top=args.top, backend=engine,
                                    time_limit=args.time_limit)
            except SolverspaceError as exc:
                print(f"  {label:13} {time.perf_counter() - start:8.3f} s  refused: {str(exc).splitlines()[0][-160:]}")
                continue
            seconds = time.perf_counter() - start
            line = f"  {label:13} {seconds:8.3f} s"
            if label == "build":
                print(line + "  (first bnb call: generate and compile the search; later calls load it)", flush=True)
                continue
            if not result.exact:
                line += f"  stopped by the {args.time_limit:g} s limit: not proven"
            elif label != "cpsat/2^20":
                answers[label] = [r.configuration for r in result.ranked]
            if result.search is not None:
                visited = sum(result.search.visited)
                line += (f"  prefixes visited {visited:,} ({100 * visited / size:.3f}% of the space size), "
                         f"configurations evaluated {result.search.evaluated:,}, subtrees cut {sum(result.search.pruned):,}")
            if result.ranked:
                line += f"  best {float(result.ranked[0].objective):,.0f} ns"
            print(line, flush=True)
        finished = list(answers.values()) or [None]
        agree = all(a == finished[0] for a in finished)
        print(f"  top {args.top} configurations of the engines that finished ({', '.join(answers)}): "
              + ("identical" if agree else "DIFFERENT"))


if __name__ == "__main__":
    main()
