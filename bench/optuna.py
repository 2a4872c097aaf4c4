"""Benchmark (issue 27): Optuna's TPE on replayed complete caches, two ways.

For each problem, a *complete* cache gives the time of every valid configuration (a brute-force
Kernel Tuner cache, or a model), so a trial costs nothing and the true optimum is known. Per seed,
Optuna's `TPESampler(seed=seed)` tunes it for `--trials` trials:

- **penalty**: the usual way: every parameter asked for over its Cartesian domain (the cache's
  `tune_params`, as the Kernel Tuner user wrote them; for GEMM the value lists), with the
  distribution rule of `solverspace.integrations.optuna.distribution_for`; a configuration that breaks the
  constraints (`Space.is_valid`) returns a penalty (`PENALTY`), as does one whose cache entry
  failed (compile or run failure);
- **solverspace**: `SolverspaceSampler(space, TPESampler(seed=seed), seed=seed)` with
  `suggest(trial, space)`: every proposal valid and new; a failed entry returns the penalty too.

Printed per problem and way, over the seeds: the share of invalid trials, the share of repeated
configurations, and the best time found after 25, 50, 100 and 200 trials as a fraction of the true
optimum (optimum / best found: 1.0 found it, 0 found nothing valid), mean and worst seed.

Problems: convolution_milo and dedispersion_milo on the A100 (brute-force Kernel Tuner caches of the
AutoTuningAssociation benchmark hub, `cachefiles/<kernel>/A100.json.gz`, with their T1 files from
`tests/data/peer_spaces/benchmark_hub_T1`), and the K40c GEMM space (1,207,600 configurations) with
times from a model (`gemm_times`: a roofline with occupancy and per-thread work, times seeded noise
of up to 15%), computed for every valid configuration at once.

    python bench/optuna.py --hub PATH_TO_benchmark_hub [--seeds 20] [--trials 200] [--problems convolution,dedispersion,gemm]

(`fetch github:AutoTuningAssociation/benchmark_hub`, or `git clone` it, for `--hub`; a `.json.gz`
cache is read through `solverspace.integrations.kernel_tuner.read_cache` after decompressing it to a temporary file.)
"""
from __future__ import annotations

import argparse
import gzip
import math
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

# This file is bench/optuna.py and Python puts its folder first on sys.path: `import optuna` would
# import this file again instead of Optuna. The folder holds no module this script needs.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402
import optuna  # noqa: E402

from solverspace import Space  # noqa: E402
from solverspace.integrations.kernel_tuner import read_cache  # noqa: E402
from solverspace.integrations.optuna import SolverspaceSampler, distribution_for, suggest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
optuna.logging.set_verbosity(optuna.logging.ERROR)
PEER = ROOT / "tests" / "data" / "peer_spaces" / "benchmark_hub_T1"
BUDGETS = (25, 50, 100, 200)
PENALTY = 1e9


class Problem:
    def __init__(self, name: str, space: Space, time_of, optimum: float, domains: dict, note: str):
        self.name, self.space, self.time_of, self.optimum, self.domains, self.note = \
            name, space, time_of, optimum, domains, note


def cache_problem(name: str, t1: Path, cache: Path) -> Problem:
    """A brute-force Kernel Tuner cache replayed: checked complete (every valid configuration of
    the T1 file has an entry, and every entry is valid)."""
    space = Space.load(t1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cache.json"
        with (gzip.open(cache, "rb") if cache.suffix == ".gz" else open(cache, "rb")) as src, open(path, "wb") as out:
            shutil.copyfileobj(src, out)
        data = read_cache(path)
    names = space.parameters
    if sorted(data["tune_params_keys"]) != sorted(names):
        raise SystemExit(f"{cache}: parameters {data['tune_params_keys']} are not {t1}'s {list(names)}")
    times = {}
    for entry in data["cache"].values():
        key = tuple(entry[n] for n in names)
        times[key] = None if "__error__" in entry else float(entry["time"])
    invalid = sum(not space.is_valid(key) for key in times)
    if invalid or len(times) != len(space):
        raise SystemExit(f"{cache}: not a complete brute-force cache of {t1}: {len(times)} entries, "
                         f"{len(space)} valid configurations, {invalid} entries invalid")
    ran = [t for t in times.values() if t is not None]
    domains = {n: data["tune_params"][n] for n in names}
    failed = len(times) - len(ran)
    note = (f"{len(times)} entries = {len(space)} valid configurations ({failed} failed to compile or run), "
            f"Cartesian {math.prod(len(v) for v in domains.values()):,}; optimum {min(ran):.6g} ms")
    return Problem(name, space, times.get, min(ran), domains, note)


def gemm_times(space: Space) -> np.ndarray:
    """Model times (ms) of every valid K40c GEMM configuration, in canonical position order:
    an N = 4096 DGEMM roofline, the compute roof lowered by occupancy and per-thread work, texture
    and bank options worth a few percent, times seeded noise of up to 15%."""
    rows = space.to_array("c", with_derived=("max_threads_by_regs", "max_threads_by_shmem", "regs_per_thread"))
    n = 4096
    flops = 2.0 * n ** 3
    bytes_ = n ** 3 * (1.0 / rows["blk_m"] + 1.0 / rows["blk_n"]) * 8
    occupancy = np.minimum(1.0, np.minimum(rows["max_threads_by_regs"], rows["max_threads_by_shmem"]) / 2048.0)
    work = np.minimum(1.0, rows["regs_per_thread"] / 16.0) ** 0.5
    factor = (1 - 0.03 * rows["tex_a"]) * (1 - 0.03 * rows["tex_b"]) * (1 - 0.02 * rows["shmem_banks"]) \
        * (1 - 0.04 * (rows["dim_vec"] > 1))
    compute = flops / (1.43e9 * work * (0.2 + 0.8 * occupancy) * (2 - factor))   # 1.43 TFLOP/s: ms
    memory = bytes_ / 288e6                                                      # 288 GB/s: ms
    noise = 1 + 0.15 * np.random.default_rng(27).random(len(rows))
    return np.maximum(compute, memory) * noise, rows


def gemm_problem() -> Problem:
    space = Space.load("gemm")
    times, rows = gemm_times(space)
    for position in np.random.default_rng(0).integers(len(rows), size=20):   # to_array's order is canonical
        assert space.index(tuple(rows[position][list(space.parameters)].tolist())) == position
    domains = space.value_lists()
    note = (f"{len(space):,} valid configurations (model times), value-list box "
            f"{math.prod(len(v) for v in domains.values()):.3g}; optimum {times.min():.6g} ms")
    return Problem("gemm K40c (model)", space, lambda key: float(times[space.index(key)]), float(times.min()),
                   domains, note)


def run(problem: Problem, way: str, seed: int, trials: int, startup: str = "lhs", n_startup: int = 5) -> dict:
    space = problem.space
    names = space.parameters
    tpe = optuna.samplers.TPESampler(seed=seed)
    if way == "penalty":
        sampler = tpe
        dists = {n: distribution_for(problem.domains[n]) for n in names}
    else:
        sampler = SolverspaceSampler(space, tpe, seed=seed, startup=startup, n_startup=n_startup)
    study = optuna.create_study(sampler=sampler)
    best, trajectory, invalid, seen, repeats = math.inf, [], 0, set(), 0

    def objective(trial):
        nonlocal best, invalid, repeats
        if way == "penalty":
            config = {n: ask(trial, n, dists[n]) for n in names}
        else:
            config = suggest(trial, space)
        key = tuple(config[n] for n in names)
        repeats += key in seen
        seen.add(key)
        if not space.is_valid(key):
            invalid += 1
            value = PENALTY
        else:
            found = problem.time_of(key)
            value = PENALTY if found is None else found
            if found is not None:
                best = min(best, found)
        trajectory.append(best)
        return value

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=trials)
    n = len(trajectory)
    return {"invalid": invalid / n, "repeats": repeats / n, "seconds": time.perf_counter() - start,
            "fraction": {b: (problem.optimum / trajectory[min(b, n) - 1] if trajectory[min(b, n) - 1] < math.inf
                             else 0.0) for b in BUDGETS if b <= trials}}


def ask(trial, name, dist):
    if isinstance(dist, optuna.distributions.IntDistribution):
        return trial.suggest_int(name, dist.low, dist.high, step=dist.step)
    value = trial.suggest_categorical(name, dist.choices)
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hub", type=Path, help="a checkout of AutoTuningAssociation/benchmark_hub")
    parser.add_argument("--device", default="A100", help="the cache file's device (default A100)")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--problems", default="convolution,dedispersion,gemm")
    parser.add_argument("--startup", default="lhs", help="SolverspaceSampler's start-up: lhs, sobol or uniform")
    parser.add_argument("--n-startup", type=int, default=5, help="SolverspaceSampler start-up trials (default 5)")
    parser.add_argument("--ways", default="penalty,solverspace")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problems = []
    for name in args.problems.split(","):
        if name == "gemm":
            problems.append(gemm_problem)
        else:
            if args.hub is None:
                parser.error(f"{name}: give --hub (a checkout of AutoTuningAssociation/benchmark_hub)")
            cache = args.hub / "cachefiles" / f"{name}_milo" / f"{args.device}.json.gz"
            problems.append(lambda name=name, cache=cache: cache_problem(f"{name}_milo {args.device}",
                                                                         PEER / f"{name}_milo.json", cache))
    print(f"TPE (Optuna {optuna.__version__}), {args.seeds} seeds, {args.trials} trials; fraction = optimum / best "
          f"found (mean over seeds, worst seed); SolverspaceSampler start-up: {args.n_startup} {args.startup}")
    for make in problems:
        problem = make()
        print(f"\n{problem.name}: {problem.note}")
        print(f"  {'way':12} {'invalid':>8} {'repeats':>8} " + " ".join(f"{'@' + str(b):>14}" for b in BUDGETS
                                                                            if b <= args.trials) + "  s/seed")
        for way in args.ways.split(","):
            results = [run(problem, way, seed, args.trials, args.startup, args.n_startup) for seed in range(args.seeds)]
            cells = []
            for b in BUDGETS:
                if b <= args.trials:
                    values = [r["fraction"][b] for r in results]
                    cells.append(f"{np.mean(values):6.3f} ({min(values):5.3f})")
            print(f"  {way:12} {np.mean([r['invalid'] for r in results]):8.1%} "
                  f"{np.mean([r['repeats'] for r in results]):8.1%} " + " ".join(f"{c:>14}" for c in cells)
                  + f"  {np.mean([r['seconds'] for r in results]):6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
