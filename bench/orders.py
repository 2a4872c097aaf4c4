"""Benchmark of order-valued parameters (issue 15).

A permutation of n items (n = 6, 8, 10, 12) with three precedence rules (`require(before(seq,
"a0", "a1"))`, and the same for a2/a3 and a4/a5), so n!/8 orders are valid. For each n: the
count and the time of the compiled C enumerator (after its build, which is timed separately),
of CP-SAT (one worker) and of the reference (Python; skipped above `--reference-max` items,
default 8: 10! candidates take minutes there), then the time of 10,000 exact samples of the
n = 10 space (C's canonical order, positions drawn uniformly). Target: n = 10 counts in C in
well under a second.

    python bench/orders.py [--sizes 6,8,10,12] [--reference-max 8] [--cpsat-max 10] [--threads N]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def source(n: int) -> str:
    items = [f"a{i}" for i in range(n)]
    return (f"seq = permutation({items!r})\n"
            'require(before(seq, "a0", "a1"))\nrequire(before(seq, "a2", "a3"))\nrequire(before(seq, "a4", "a5"))\n')


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="6,8,10,12")
    parser.add_argument("--reference-max", type=int, default=8)
    parser.add_argument("--cpsat-max", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    from solverspace import Space
    from solverspace.translators.c.backend import CBackend
    print(f"{'n':>3} {'valid':>12} {'C build s':>10} {'C count s':>10} {'CP-SAT s':>10} {'reference s':>12}")
    for n in (int(s) for s in args.sizes.split(",")):
        space = Space.from_source(source(n))
        expected = math.factorial(n) // 8
        from solverspace.translators.order_slots import OrderSlots
        backend = OrderSlots(CBackend(threads=args.threads))
        _, build = timed(lambda: backend.enumerator(backend.inner_plan(space.plan)))
        count, c_seconds = timed(lambda: space.count(backend))
        assert count == expected, (count, expected)
        cpsat = reference = "-"
        if n <= args.cpsat_max:
            value, seconds = timed(lambda: space.count("cpsat", workers=1))
            assert value == expected, (value, expected)
            cpsat = f"{seconds:.2f}"
        if n <= args.reference_max:
            value, seconds = timed(lambda: space.count("reference"))
            assert value == expected, (value, expected)
            reference = f"{seconds:.2f}"
        print(f"{n:>3} {count:>12,} {build:>10.2f} {c_seconds:>10.3f} {cpsat:>10} {reference:>12}", flush=True)

    space = Space.from_source(source(10))
    space.count("c", threads=args.threads)   # the module is built and its units counted once
    _, seconds = timed(lambda: space.sample(10_000, seed=1, threads=args.threads))
    print(f"10,000 exact samples of the n = 10 space: {seconds:.2f} s")


if __name__ == "__main__":
    main()
