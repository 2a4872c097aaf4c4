"""CP-SAT on the K40c GEMM space: count time next to the C backend's, one feasibility question,
and best --top 10.

    python bench/cpsat_gemm.py                      # K40c, double real NN (the paper's space)
    python bench/cpsat_gemm.py --variants           # all 16 precision/arithmetic/transpose variants
    python bench/cpsat_gemm.py --workers 1 --device k40c

Times are wall-clock seconds (CPU seconds of this process in parentheses: the machine may be
shared). Where the time goes: the analysis (lowering every item once to learn which can be
undefined, and the DAG structure) and building the component's CP-SAT model take milliseconds;
trying to count the reader pairs per separator assignment (declined on the K40c: the outer part
has over a million solutions) a fraction of a second; the undefined-operation tally (the count
with and without it); the rest is CP-SAT enumerating the joint solutions, reported per second.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solverspace import Space  # noqa: E402
from solverspace.registry.backends import BACKENDS  # noqa: E402
from solverspace.translators.cpsat.backend import best, complete, count  # noqa: E402
from solverspace.translators.cpsat.count import Counter, Options, describe  # noqa: E402


def timed(fn, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def fmt(wall, cpu):
    return f"{wall:7.2f} s ({cpu:6.2f} CPU-s)"


def c_count(space):
    if "c" not in BACKENDS:
        return None, None
    try:
        space.stats("c")  # build the module (cached on disk) and warm up
        fresh = Space(space.model)  # a new plan: nothing computed for it yet
        stats, wall, _ = timed(fresh.stats, "c")
        return stats.count, wall
    except Exception as exc:  # no compiler here: report, do not fail the benchmark
        print(f"  C backend unavailable: {exc}".splitlines()[0])
        return None, None


def breakdown(space, workers):
    options = Options(workers=workers)
    counter, wall_a, _ = timed(Counter, space.model, space.plan, options)
    problem, wall_p, _ = timed(counter.full_problem)
    structure, wall_s, _ = timed(counter.structure, problem)
    wall_a += wall_p
    component = structure.components[0]
    _, wall_b, _ = timed(counter.build, component.params, component.factors)
    for line in describe(space.plan).splitlines():
        print("  " + line)
    separated, wall_t, _ = timed(counter.count_separated, component, {}, None) if component.groups else (None, 0, 0)
    print(f"  analysis + structure {wall_a + wall_s:.3f} s, model build {wall_b:.3f} s, trying separated "
          f"counting {wall_t:.2f} s ({'used' if separated else 'declined: joint enumeration'})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="k40c")
    parser.add_argument("--workers", type=int, default=None, help="CP-SAT threads (default: all cores)")
    parser.add_argument("--variants", action="store_true", help="count all 16 variants")
    parser.add_argument("--objective", default="fmas_per_block - loads_per_block")
    args = parser.parse_args(argv)
    workers = args.workers or os.cpu_count()
    print(f"CP-SAT benchmark: device {args.device}, {workers} worker(s), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")

    space = Space.load("gemm", {"device": args.device})
    print(f"\ncount, {args.device} double real NN")
    breakdown(space, workers)
    stats, wall, cpu = timed(count, space, workers=workers)
    _, wall_nu, cpu_nu = timed(count, space, workers=workers, undefined=False)
    print(f"  CP-SAT count {stats.count:>10} in {fmt(wall, cpu)}; {stats.solutions} CP-SAT solutions enumerated "
          f"({stats.solutions / max(wall, 1e-9):.0f}/s); without the undefined tally {fmt(wall_nu, cpu_nu)}")
    c_result, c_wall = c_count(space)
    if c_result is not None:
        print(f"  C count      {c_result:>10} in {c_wall:7.2f} s   {'(agree)' if c_result == stats.count else '(DISAGREE)'}")

    print("\nfeasibility questions (check with a partial assignment)")
    for assignment in ({"dim_m": 17}, {"dim_m": 3}):
        result, wall, cpu = timed(complete, space, assignment, workers=workers)
        answer = (f"valid completion found" if result.feasible else
                  f"ruled out by {len(result.conflict)} constraints (minimal: {result.minimal})")
        print(f"  {assignment}: {answer} in {fmt(wall, cpu)}")

    print(f"\nbest --top 10 --maximize {args.objective!r}")
    result, wall, cpu = timed(best, space, args.objective, maximize=True, top=10, workers=workers)
    print(f"  best value {result.ranked[0].objective if result.ranked else None}, "
          f"{len(result.ranked)} configurations in {fmt(wall, cpu)}")

    if args.variants:
        print("\nall 16 variants (CP-SAT count, C count)")
        for precision, arithmetic, ta, tb in itertools.product(["single", "double"], ["real", "complex"], [0, 1], [0, 1]):
            variant = Space.load("gemm", {"device": args.device, "precision": precision, "arithmetic": arithmetic,
                                          "trans_a": ta, "trans_b": tb})
            stats, wall, cpu = timed(count, variant, workers=workers)
            c_result, c_wall = c_count(variant)
            agree = "" if c_result is None else ("agree" if c_result == stats.count else "DISAGREE")
            c_text = f"C {c_result} in {c_wall:.2f} s {agree}" if c_result is not None else ""
            print(f"  {precision:6} {arithmetic:7} {ta}{tb}: {stats.count:>9} (undefined {stats.undefined}) "
                  f"in {fmt(wall, cpu)}, {stats.solutions:>7} solutions; {c_text}", flush=True)


if __name__ == "__main__":
    main()
