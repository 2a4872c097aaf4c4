"""Benchmark of uniform sampling (issue 5), exact method through the compiled enumerator.

For the K40c GEMM space and the H100 single-real opt-in space, each in a fresh process (so the
peak memory is its own), after the compiled module is built and cached: time to the first
sample (counting every work unit included), time for 10,000 samples, peak memory.
Targets: K40c 10,000 samples < 1 s after the build; H100 < 10 s with peak memory < 500 MiB.

    python bench/sample.py
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SPACES = {
    "K40c double-real-NN": {},
    "H100 single-real opt-in": {"device": "h100", "precision": "single", "shared_memory": "opt-in"},
}


def child(name: str) -> None:
    from solverspace import Space
    from solverspace.sampling import sample
    from translators.c_backend import CBackend, CEnumerator
    space = Space.load("gemm", SPACES[name])
    CBackend().enumerator(space.plan)  # build (or load from cache): not timed
    CEnumerator._cache.clear()
    start = time.perf_counter()
    first, info = sample(space, 1, seed=1)
    first_seconds = time.perf_counter() - start
    start = time.perf_counter()
    many, _ = sample(space, 10_000, seed=2)
    many_seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"size": info.size, "first": first_seconds, "many": many_seconds, "peak_mib": peak}))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    print(f"machine: {os.cpu_count()} cores; exact method (per-unit counts of the compiled enumerator)")
    for name in SPACES:
        proc = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, check=True)
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{name}: {r['size']} configurations; first sample {r['first']:.2f} s (counting included); "
              f"10,000 samples {r['many']:.2f} s; peak memory {r['peak_mib']:.0f} MiB")


if __name__ == "__main__":
    main()
