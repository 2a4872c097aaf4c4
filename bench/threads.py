"""Thread scaling of the compiled C/OpenMP enumerator (the LANAI paper's question, seed 001):
count, exact sample and `.npy` listing of the K40c and H100 single-real opt-in GEMM spaces at
1, 2, 4, ... up to all cores, each the best of `--repeat` runs on a cached module, with the speedup
over one thread and the parallel efficiency.

Run it on a machine with many cores (the 16-core device machine); on 2 cores it prints two rows.

    python bench/threads.py [--repeat 3] [--max-threads N] [--skip-h100] [--out DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solverspace import Space  # noqa: E402
from solverspace.translators.c.backend import CBackend, CEnumerator  # noqa: E402

SPACES = {
    "K40c double-real-NN": {},
    "H100 single-real opt-in": {"device": "h100", "precision": "single", "arithmetic": "real",
                                "shared_memory": "opt-in"},
}


def best_of(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def thread_counts(most: int) -> list[int]:
    counts, t = [], 1
    while t < most:
        counts.append(t)
        t *= 2
    return counts + [most]


def backend(threads: int) -> CBackend:
    """A backend on the cached module whose enumerator has not counted yet."""
    CEnumerator.clear_cache()
    return CBackend(threads=threads)


def scale(name: str, settings: dict, threads: list[int], repeat: int, out: Path) -> None:
    space = Space.load("gemm", settings)
    start = time.perf_counter()
    backend(1).enumerator(space.plan)
    print(f"\n{name}: module ready in {time.perf_counter() - start:.1f} s")
    print(f"{'threads':>7} {'count s':>9} {'x':>6} {'eff':>5} {'sample 10k s':>13} {'x':>6} "
          f"{'.npy s':>8} {'x':>6} {'eff':>5}")
    base = None
    expected = None
    for t in threads:
        count_s, count = best_of(lambda: backend(t).count(space.plan).count, repeat)
        if expected is None:
            expected = count
        elif count != expected:
            raise SystemExit(f"{name}: {t} threads counted {count}, 1 thread {expected}")
        sample_s, _ = best_of(lambda: space.sample(10_000, seed=1, threads=t), repeat)
        target = out / f"{name.split()[0]}.npy"
        npy_s, rows = best_of(lambda: backend(t).write(space.plan, target, "npy"), repeat)
        target.unlink(missing_ok=True)
        if base is None:
            base = (count_s, sample_s, npy_s)
        print(f"{t:>7} {count_s:>9.3f} {base[0] / count_s:>6.1f} {base[0] / count_s / t:>5.2f} "
              f"{sample_s:>13.3f} {base[1] / sample_s:>6.1f} {npy_s:>8.2f} {base[2] / npy_s:>6.1f} "
              f"{base[2] / npy_s / t:>5.2f}")
    print(f"  ({expected:,} configurations)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--skip-h100", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="folder for the .npy files (deleted after)")
    args = parser.parse_args()
    threads = thread_counts(args.max_threads)
    print(f"{os.cpu_count()} cores; threads {threads}; best of {args.repeat}")
    with tempfile.TemporaryDirectory(dir=args.out) as out:
        for name, settings in SPACES.items():
            if args.skip_h100 and name.startswith("H100"):
                continue
            scale(name, settings, threads, args.repeat, Path(out))


if __name__ == "__main__":
    main()
