"""Benchmark of the XOR-hash mode (issue 5): ApproxMC2 counts and UniGen2 near-uniform samples.

Scaled-down GEMM (`tiny`, 336 configurations, listed by the exact methods for comparison):
ApproxMC2 estimate and time, UniGen2 set-up (its (0.8, 0.8) ApproxMC2 count) and the time for
1,000 samples, and how far 33,600 samples (100 per configuration) are from uniform: total
variation distance, the largest and smallest frequency ratio (UniGen2 promises every ratio within
a factor 1 + epsilon = 17.1), chi-square p-value. The same 33,600 draws from the exact CP-SAT
method give the noise floor of those statistics.

K40c GEMM (1,207,600 configurations): the time to enumerate one hash cell at the size UniGen2
would use (the exact count stands in for ApproxMC2 here, to place the hash), measured on a few
cells; the times for a full ApproxMC2 count and for 1,000 samples are extrapolated from it and
printed as such.

    python bench/sample_xor.py
"""
from __future__ import annotations

import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solverspace import Space  # noqa: E402
from solverspace.translators.cpsat.samplers import CpSatSampler  # noqa: E402
from solverspace.translators.cpsat.count import Options  # noqa: E402
from solverspace.translators.cpsat.hashing import (
    HI_THRESH, LO_THRESH, PIVOT, UNIGEN_EPSILON, HashedSpace, NearUniformSampler, approximate_count,
    approxmc_rounds)


def distance_from_uniform(configs, rows):
    from scipy import stats
    index = {row: i for i, row in enumerate(rows)}
    observed = np.bincount([index[c] for c in configs], minlength=len(rows))
    expected = len(configs) / len(rows)
    tv = 0.5 * np.abs(observed / len(configs) - 1 / len(rows)).sum()
    return tv, observed.max() / expected, observed.min() / expected, stats.chisquare(observed).pvalue


def tiny() -> None:
    space = Space.load("gemm", {"device": "tiny"})
    rows = list(space.rows("reference"))
    columns = space.columns()
    start = time.perf_counter()
    count = approximate_count(space.plan, 0.8, 0.2, seed=1)
    print(f"tiny GEMM ({len(rows)} configurations): ApproxMC2 (0.8, 0.2) estimate {count.estimate} "
          f"in {time.perf_counter() - start:.2f} s ({count.cells} cells)")
    start = time.perf_counter()
    sampler = NearUniformSampler(space.plan, Options(workers=1), seed=1)
    setup = time.perf_counter() - start
    draws, start = [], time.perf_counter()
    while len(draws) < 1_000:
        draws += sampler.draw_cell()
    thousand = time.perf_counter() - start
    while len(draws) < 100 * len(rows):
        draws += sampler.draw_cell()
    total = time.perf_counter() - start
    configs = [tuple(d[c] for c in columns) for d in draws[:100 * len(rows)]]
    tv, high, low, p = distance_from_uniform(configs, rows)
    print(f"  UniGen2: set-up {setup:.2f} s (ApproxMC2 (0.8, 0.8) estimate {sampler.count.estimate}); "
          f"1,000 samples {thousand:.2f} s; {len(configs)} samples {total:.2f} s, {sampler.failures} failed attempts")
    print(f"  UniGen2 samples: total variation from uniform {tv:.4f}; frequency / expected between "
          f"{low:.2f} and {high:.2f} (bound: 1/{1 + UNIGEN_EPSILON:.1f} to {1 + UNIGEN_EPSILON:.1f}); chi-square p = {p:.3g}")
    exact = CpSatSampler(space, threads=1).draw(len(configs), seed=1, replace=True)
    tv, high, low, p = distance_from_uniform([tuple(r) for r in exact.tolist()], rows)
    print(f"  exact CP-SAT method, same number: total variation {tv:.4f}; frequency / expected between "
          f"{low:.2f} and {high:.2f}; chi-square p = {p:.3g}")


def k40c(cells: int = 3) -> None:
    space = Space.load("gemm")
    size = space.count("c")
    start = time.perf_counter()
    hashed = HashedSpace(space.plan, Options(workers=1))
    build = time.perf_counter() - start
    m = round(math.log2(size) + math.log2(1.8) - math.log2(PIVOT))
    rng = np.random.Generator(np.random.PCG64(1))
    seconds, sizes = [], []
    for _ in range(cells):
        rows = hashed.random_rows(m, rng)
        start = time.perf_counter()
        sizes.append(len(hashed.cell(rows, HI_THRESH)))
        seconds.append(time.perf_counter() - start)
    per_cell = statistics.median(seconds)
    bits = len(hashed.bits)
    approx_cells = approxmc_rounds(0.8) * math.ceil(math.log2(bits))
    print(f"K40c GEMM ({size} configurations, {bits} bits): model {build:.2f} s; cells with {m} XOR rows hold "
          f"{sizes} configurations, {', '.join(f'{s:.2f}' for s in seconds)} s each (median {per_cell:.2f} s)")
    print(f"  extrapolated, not run: UniGen2 set-up (ApproxMC2 (0.8, 0.8): {approx_cells} cells) about "
          f"{approx_cells * per_cell / 60:.0f} min; 1,000 samples ({math.ceil(1000 / LO_THRESH)} accepted cells, "
          f"1-3 tries each) {math.ceil(1000 / LO_THRESH) * per_cell / 60:.0f}-{3 * math.ceil(1000 / LO_THRESH) * per_cell / 60:.0f} min")


if __name__ == "__main__":
    print(f"machine: {os.cpu_count()} cores; CP-SAT with 1 worker")
    tiny()
    k40c()
