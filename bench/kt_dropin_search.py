"""Benchmark: is Kernel Tuner's search through our drop-in the same search as on Kernel Tuner's own
`Searchspace`? And `get_LHS_sample`'s time, ours against Kernel Tuner's.

Each brute-force convolution cache of the benchmark hub (`cachefiles/convolution_milo/<device>.json.gz`,
the space from `tests/data/peer_spaces/benchmark_hub_T1/convolution_milo.json`: its `tune_params` and its
conditions as restriction strings) is replayed in Kernel Tuner's simulation mode (a measurement costs
nothing; the optimum is known) with a Kernel Tuner strategy (`--strategy`, bayes_opt by default, its
default options), `max_fevals` = `--budget`, per seed two ways:

- **theirs**: `kernel_tuner.tune_kernel` on its own `Searchspace`, inside `seeded_draws(seed)` (the
  global `random` and `numpy.random` seeded, bayes_opt's Latin hypercube drawn from numpy's);
- **ours**: `solverspace.integrations.kernel_tuner.tune_kernel(..., seed=seed)` (the same seeding).

With `--offset K`, theirs runs with seed + K instead: the two ways then draw independently, and the
tests compare two independent samples of the same search (the question a user asks: is the drop-in
the same search?). Per cache: best time found in the first `--budget` evaluations / optimum, mean over the seeds, both
ways; how many seeds proposed the identical sequence; a two-sided Mann-Whitney U test and a paired
Wilcoxon signed-rank test of the two samples of best/optimum (scipy.stats; p = 1 when every pair is
equal), and over all caches pooled. Kernel Tuner's default bayes_opt method ("multi-ultrafast") refits
its model or not by the wall-clock times of its predictions and evaluations, so two of its own runs
with the same seed can differ under another load: identical sequences are expected where the
timings fall alike, equal distributions always.

`--lhs` instead times `get_LHS_sample(20)` (bayes_opt's and diff_evo's initial population size) on
each peer space of `tests/test_kernel_tuner.py`'s fast list, ours and Kernel Tuner's own, in one
process: CPU seconds per call (mean of `--repeat` calls after one warm-up call; our first call, which
lists the rows' indices once, given on its own).

    python bench/kt_dropin_search.py --hub PATH [--seeds 10] [--budget 100] [--devices A100,...] [--strategy bayes_opt] [--offset 1000]
    python bench/kt_dropin_search.py --lhs [--repeat 50]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# this folder must not shadow the kernel_tuner package (bench/kernel_tuner.py)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))

DEVICES = ("A100", "A4000", "A6000", "MI250X", "W6600", "W7800")
T1 = ROOT / "tests" / "data" / "peer_spaces" / "benchmark_hub_T1" / "convolution_milo.json"


def decompressed(cache: Path, folder: Path) -> Path:
    path = folder / (cache.name.removesuffix(".gz"))
    with gzip.open(cache, "rb") as src, open(path, "wb") as out:
        shutil.copyfileobj(src, out)
    return path


def one_run(tune, cache: Path, data: dict, restrictions: list, strategy: str, budget: int, **extra) -> list:
    """The configurations Kernel Tuner evaluated, in order, with their times (None: failed)."""
    tune_params = {n: list(v) for n, v in data["tune_params"].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune(data["kernel_name"], "", tuple(data["problem_size"]), [], tune_params,
                          restrictions=list(restrictions), cache=str(cache), simulation_mode=True, strategy=strategy,
                          strategy_options={"max_fevals": budget}, quiet=True, verbose=False, **extra)
    names = list(tune_params)
    return [(tuple(r[n] for n in names), r["time"] if isinstance(r["time"], (int, float)) else None)
            for r in results]


def best_fraction(run: list, budget: int, optimum: float) -> float:
    times = [t for _, t in run[:budget] if t is not None]
    return min(times) / optimum if times else float("inf")


def tests(ours: list, theirs: list) -> tuple[float, float]:
    from scipy import stats
    if ours == theirs:
        return 1.0, 1.0
    u = stats.mannwhitneyu(ours, theirs, alternative="two-sided").pvalue
    differences = [a - b for a, b in zip(ours, theirs)]
    w = stats.wilcoxon(ours, theirs).pvalue if any(differences) else 1.0
    return float(u), float(w)


def search(args) -> int:
    import kernel_tuner
    from solverspace.integrations.kernel_tuner.searchspace import seeded_draws, tune_kernel
    from tests.test_kernel_tuner import t1_arguments
    _, restrictions = t1_arguments(T1)
    hub = Path(args.hub)
    pooled = {"ours": [], "theirs": []}
    print(f"Kernel Tuner {kernel_tuner.__version__ if hasattr(kernel_tuner, '__version__') else '1.5'} "
          f"{args.strategy}, {args.budget} evaluations, seeds 0..{args.seeds - 1} (theirs + {args.offset}); load average "
          f"{os.getloadavg()[0]:.1f} at start")
    print(f"{'cache':<8} {'theirs mean':>11} {'ours mean':>10} {'identical':>9} {'p (U)':>7} {'p (W)':>7} "
          f"{'CPU-s theirs/ours per run':>26}")
    with tempfile.TemporaryDirectory() as tmp:
        for device in args.devices.split(","):
            cache = decompressed(hub / "cachefiles" / "convolution_milo" / f"{device}.json.gz", Path(tmp))
            data = json.loads(cache.read_text())
            optimum = min(e["time"] for e in data["cache"].values() if isinstance(e.get("time"), (int, float)))
            fractions = {"ours": [], "theirs": []}
            cpu = {"ours": 0.0, "theirs": 0.0}
            identical = 0
            for seed in range(args.seeds):
                start = time.process_time()
                with seeded_draws(seed + args.offset):
                    theirs = one_run(kernel_tuner.tune_kernel, cache, data, restrictions, args.strategy, args.budget)
                middle = time.process_time()
                ours = one_run(tune_kernel, cache, data, restrictions, args.strategy, args.budget, seed=seed)
                cpu["theirs"] += middle - start
                cpu["ours"] += time.process_time() - middle
                identical += [c for c, _ in ours] == [c for c, _ in theirs]
                fractions["theirs"].append(best_fraction(theirs, args.budget, optimum))
                fractions["ours"].append(best_fraction(ours, args.budget, optimum))
            u, w = tests(fractions["ours"], fractions["theirs"])
            for way in pooled:
                pooled[way].extend(fractions[way])
            print(f"{device:<8} {np.mean(fractions['theirs']):>11.3f} {np.mean(fractions['ours']):>10.3f} "
                  f"{identical:>6}/{args.seeds:<2} {u:>7.3f} {w:>7.3f} "
                  f"{cpu['theirs'] / args.seeds:>12.1f} / {cpu['ours'] / args.seeds:<6.1f}", flush=True)
    u, w = tests(pooled["ours"], pooled["theirs"])
    print(f"{'pooled':<8} {np.mean(pooled['theirs']):>11.3f} {np.mean(pooled['ours']):>10.3f} {'':>9} "
          f"{u:>7.3f} {w:>7.3f}; load average {os.getloadavg()[0]:.1f} at the end")
    return 0


def lhs(args) -> int:
    from kernel_tuner.searchspace import Searchspace as KernelTunerSearchspace
    from solverspace.integrations.kernel_tuner.searchspace import Searchspace
    from tests.test_kernel_tuner import FAST_FILES, MAX_THREADS, PEER, t1_arguments
    print(f"get_LHS_sample(20), CPU ms per call, mean of {args.repeat} after a warm-up call; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'space':<36} {'size':>7} {'Kernel Tuner':>12} {'ours':>7} {'ours, first call':>16}")
    for name in FAST_FILES:
        tune_params, restrictions = t1_arguments(PEER / f"{name}.json")
        theirs = KernelTunerSearchspace(tune_params, restrictions, MAX_THREADS)
        ours = Searchspace(tune_params, restrictions, MAX_THREADS, seed=0)
        figures = []
        for searchspace in (theirs, ours):
            start = time.process_time()
            searchspace.get_LHS_sample(20)
            first = time.process_time() - start
            start = time.process_time()
            for _ in range(args.repeat):
                searchspace.get_LHS_sample(20)
            figures.append(((time.process_time() - start) / args.repeat, first))
        print(f"{name:<36} {ours.size:>7,} {figures[0][0] * 1e3:>12.2f} {figures[1][0] * 1e3:>7.2f} "
              f"{figures[1][1] * 1e3:>16.1f}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hub", help="a checkout of AutoTuningAssociation/benchmark_hub")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--devices", default=",".join(DEVICES))
    parser.add_argument("--strategy", default="bayes_opt")
    parser.add_argument("--offset", type=int, default=0,
                        help="theirs seeded with seed + OFFSET: independent samples (a real two-sample test)")
    parser.add_argument("--lhs", action="store_true")
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    if args.lhs:
        return lhs(args)
    if not args.hub:
        parser.error("--hub PATH (a checkout of AutoTuningAssociation/benchmark_hub) or --lhs")
    return search(args)


if __name__ == "__main__":
    sys.exit(main())
