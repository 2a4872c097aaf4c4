"""Benchmark of the compiled C/OpenMP enumerator on the BEAST GEMM space (issue 3).

Prints, from one run on one machine:
- K40c (double, real, no transposes): compile time cold and cached; count-only time; time to
  write CSV and .npy; at 1 thread and at all threads;
- the ratio of literal mode (every optimization off) to optimized mode on the same space;
- the H100 single-real space with 227 KiB opt-in shared memory: count-only and .npy time, with
  the peak memory of a fresh process doing it;
next to the seed papers' published figures. Targets (2-core machine, cached build): K40c count
< 0.3 s, CSV < 1.5 s; H100 count < 6 s, .npy < 30 s; peak memory < 1 GiB; literal >= 100x slower.

    python bench/enumerate_gemm.py [--repeat 3] [--skip-h100]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solverspace import Space  # noqa: E402
from solverspace.translators.c.backend import CBackend, CEnumerator  # noqa: E402
from solverspace.translators.c.optimize import Options  # noqa: E402

H100 = {"device": "h100", "precision": "single", "arithmetic": "real", "shared_memory": "opt-in"}


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def fresh(space, threads, options=Options()):
    """A backend whose enumerator has not counted yet (the compiled module stays cached)."""
    CEnumerator.clear_cache()
    return CBackend(threads=threads, options=options)


def k40c(repeat, out_dir):
    space = Space.load("gemm")
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as cache:
        os.environ["SOLVERSPACE_CACHE"] = cache
        start = time.perf_counter()
        CBackend().enumerator(space.plan)
        cold = time.perf_counter() - start
    os.environ.pop("SOLVERSPACE_CACHE")
    CEnumerator.clear_cache()
    CBackend().enumerator(space.plan)  # fill the default cache
    cached, _ = best(lambda: fresh(space, None).enumerator(space.plan), repeat)
    print(f"K40c double-real-NN: compile cold {cold:.2f} s, cached {cached:.3f} s "
          f"(code generation + cache lookup)")
    rows = {}
    for threads in sorted({1, cores}):
        count_t, count = best(lambda: fresh(space, threads).count(space.plan).count, repeat)
        csv_t, _ = best(lambda: fresh(space, threads).write(space.plan, out_dir / "k40c.csv", "csv"), repeat)
        npy_t, _ = best(lambda: fresh(space, threads).write(space.plan, out_dir / "k40c.npy", "npy"), repeat)
        rows[threads] = (count_t, csv_t, npy_t)
        print(f"  threads={threads}: count {count} in {count_t:.3f} s; CSV {csv_t:.3f} s "
              f"({(out_dir / 'k40c.csv').stat().st_size / 2**20:.0f} MiB); .npy {npy_t:.3f} s")
    return space, rows


def literal_ratio(repeat):
    """Literal vs optimized count on the full K40c space (literal runs seconds here, not minutes:
    constraints are already placed at their earliest loop in the literal plan)."""
    space = Space.load("gemm")
    cores = os.cpu_count() or 1
    fresh(space, cores, Options.literal()).enumerator(space.plan)
    lit_t, lit = best(lambda: fresh(space, cores, Options.literal()).count(space.plan).count, 1)
    opt_t, opt = best(lambda: fresh(space, cores).count(space.plan).count, repeat)
    if lit != opt:
        raise SystemExit(f"literal and optimized counts differ: {lit} vs {opt}")
    print(f"literal mode on K40c (all {cores} threads): {lit_t:.2f} s vs optimized {opt_t:.3f} s: "
          f"{lit_t / opt_t:.0f}x")
    for name in ("break", "tighten", "solve", "hoist", "split"):
        without = Options(Options().enabled - {name})
        fresh(space, cores, without).enumerator(space.plan)
        t, n = best(lambda: fresh(space, cores, without).count(space.plan).count, repeat)
        if n != opt:
            raise SystemExit(f"count without {name} differs: {n} vs {opt}")
        print(f"  without {name:<5}: {t:.3f} s")


def h100_child(what, out):
    """Runs in a fresh process so that its peak memory is its own."""
    import resource
    space = Space.load("gemm", H100)
    backend = CBackend()
    backend.enumerator(space.plan)
    start = time.perf_counter()
    if what == "count":
        result = backend.count(space.plan).count
    else:
        result = backend.write(space.plan, out, "npy")
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"result": result, "seconds": seconds, "peak_mib": peak}))


def h100(out_dir):
    for what in ("count", "npy"):
        target = out_dir / "h100.npy"
        proc = subprocess.run([sys.executable, __file__, "--child", what, str(target)],
                              capture_output=True, text=True, check=True)
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        extra = f", file {target.stat().st_size / 2**30:.2f} GiB" if what == "npy" else ""
        print(f"H100 single-real opt-in ({os.cpu_count()} threads): {what} {result['result']} in "
              f"{result['seconds']:.2f} s, peak memory {result['peak_mib']:.0f} MiB{extra}")
        target.unlink(missing_ok=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-h100", action="store_true")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return h100_child(*args.child)
    print(f"machine: {os.cpu_count()} cores; seed figures: BEAST generated C 264 s (seed 004), "
          f"LANAI 124 s sequential and 7.35 s on 20 threads (seed 001), K40c space")
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp)
        k40c(args.repeat, out_dir)
        literal_ratio(args.repeat)
        if not args.skip_h100:
            h100(out_dir)


if __name__ == "__main__":
    main()
