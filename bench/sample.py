"""Benchmark of uniform sampling (issue 5).

Exact method (compiled enumerator): for the K40c GEMM space and the H100 single-real opt-in
space, each in a fresh process (so the peak memory is its own), after the compiled module is
built and cached: time to the first sample (counting every work unit included), time for
10,000 samples, peak memory. Targets: K40c 10,000 samples < 1 s after the build; H100 < 10 s
with peak memory < 500 MiB.

CP-SAT method (self-reducibility over exact CP-SAT counts, one worker): K40c, 1,000 samples
without replacement, with the default table limit and with components listed only below 2,000
solutions (so most draws descend value by value), plus the p-value of the (dim_m, dim_n) cell
chi-square of those samples against the full listing. Target: 1,000 K40c samples in < 120 s
passing that test (p > 0.01).

    python bench/sample.py            # everything
    python bench/sample.py --exact    # exact method only
    python bench/sample.py --cpsat    # CP-SAT method only
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
    from solverspace.scale.sampling import sample
    from solverspace.translators.c.backend import CBackend, CEnumerator
    space = Space.load("gemm", SPACES[name])
    CBackend().enumerator(space.plan)  # build (or load from cache): not timed
    CEnumerator.clear_cache()
    start = time.perf_counter()
    first, info = sample(space, 1, seed=1)
    first_seconds = time.perf_counter() - start
    start = time.perf_counter()
    many, _ = sample(space, 10_000, seed=2)
    many_seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"size": info.size, "first": first_seconds, "many": many_seconds, "peak_mib": peak}))


CPSAT_RUNS = {"default tables": None, "tables below 2,000 solutions": 2_000}


def child_cpsat(label: str) -> None:
    from solverspace import Space
    from solverspace.translators.cpsat.samplers import CpSatSampler
    from solverspace.validation.uniformity import chi_square_p
    space = Space.load("gemm")
    limit = CPSAT_RUNS[label]
    start = time.perf_counter()
    sampler = CpSatSampler(space, threads=1, **({} if limit is None else {"table_limit": limit}))
    sampler.draw(1, seed=1, replace=False)
    first_seconds = time.perf_counter() - start
    counts_before = sampler.sampler.counts_made
    start = time.perf_counter()
    many = sampler.draw(1_000, seed=2026, replace=False)
    many_seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    p_value = chi_square_p(many, space.to_array("c"))
    print(json.dumps({"size": sampler.size(), "first": first_seconds, "many": many_seconds, "peak_mib": peak,
                      "p": p_value, "counts": sampler.sampler.counts_made - counts_before}))


def run_child(*args) -> dict:
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "--child-cpsat":
        return child_cpsat(sys.argv[2])
    which = set(sys.argv[1:]) or {"--exact", "--cpsat"}
    print(f"machine: {os.cpu_count()} cores")
    if "--exact" in which:
        print("exact method (per-unit counts of the compiled enumerator)")
        for name in SPACES:
            r = run_child("--child", name)
            print(f"  {name}: {r['size']} configurations; first sample {r['first']:.2f} s (counting included); "
                  f"10,000 samples {r['many']:.2f} s; peak memory {r['peak_mib']:.0f} MiB")
    if "--cpsat" in which:
        print("CP-SAT method (self-reducibility over exact CP-SAT counts, 1 worker), K40c double-real-NN")
        for label in CPSAT_RUNS:
            r = run_child("--child-cpsat", label)
            print(f"  {label}: {r['size']} configurations; first sample {r['first']:.2f} s (counting included); "
                  f"1,000 more samples {r['many']:.2f} s ({r['counts']} CP-SAT counts); total "
                  f"{r['first'] + r['many']:.2f} s; peak memory {r['peak_mib']:.0f} MiB; "
                  f"cell chi-square p = {r['p']:.3f}")


if __name__ == "__main__":
    main()
