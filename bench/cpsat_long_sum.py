"""CP-SAT counting a long sum: n binary parameters with `x0 + ... + x(n-1) <= 2`
(1 + n + n(n-1)/2 configurations), one component that no structure splits, so CP-SAT enumerates
every solution, split into sub-problems past 10,000 solutions (`translators/cpsat/count/joint.py`).
Printed per n: the count, wall and CPU seconds of the count alone (the model loaded before), the
solutions CP-SAT enumerated in all (`solutions`, and `discarded`: those of sub-problems stopped at
their cap) and their ratio to the count: the work thrown away when a split is lopsided.

    python bench/cpsat_long_sum.py                  # n = 100, 200, 300
    python bench/cpsat_long_sum.py --n 300 --workers 1
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solverspace import Space  # noqa: E402
from solverspace.translators.cpsat.backend import count  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="*", default=[100, 200, 300])
    parser.add_argument("--workers", type=int, default=None, help="CP-SAT workers (default: every core)")
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for n in args.n:
        text = "".join(f"x{i} = range(2)\n" for i in range(n)) + \
            f"require({' + '.join(f'x{i}' for i in range(n))} <= 2)\n"
        space = Space.from_source(text)
        wall, cpu = time.perf_counter(), time.process_time()
        stats = count(space, workers=args.workers, undefined=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert stats.count == 1 + n + n * (n - 1) // 2, stats.count
        enumerated = stats.solutions + stats.discarded
        print(f"n={n}: {stats.count:,} configurations in {wall:.1f} s ({cpu:.1f} CPU-s); {enumerated:,} solutions "
              f"enumerated, {enumerated / stats.count:.2f}x the count", flush=True)


if __name__ == "__main__":
    main()
