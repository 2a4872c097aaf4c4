"""Benchmark: the peers of our strategies on bench/search.py's replayed caches: Kernel Tuner's own
strategies and Optuna's TPE with a penalty for invalid configurations, as their users run them.

Ways (give them to `bench/search.py --ways`, or run this file: the same table with these ways):

- `kt-<strategy>` (any name of Kernel Tuner's `strategy_map`; `pso`, `genetic_algorithm`,
  `bayes_opt`, `random_sample` are the measured ones): Kernel Tuner 1.5's own `tune_kernel` in
  simulation mode on the cache file (decompressed once per cache), its own `Searchspace` built from
  the T1 file's `tune_params` and restriction strings (what a Kernel Tuner user writes), the
  strategy's default options, `strategy_options={"max_fevals": --budget}`, inside
  `seeded_draws(seed)` (the global `random` and `numpy.random` seeded, and bayes_opt's Latin
  hypercube drawn from numpy's: Kernel Tuner 1.5 has no seed option). `kt-solverspace_model` and
  `kt-solverspace_random` run our strategies the same way, by name through the drop-in's
  `tune_kernel` (our `Searchspace` in Kernel Tuner's order; `strategy_options` `seed`).
- `optuna-tpe-penalty`: Optuna's `TPESampler(seed=seed)` with its defaults, every parameter asked
  over its Cartesian domain (the cache's `tune_params`, `distribution_for`'s rule), the penalty
  (`bench/optuna.py`'s `PENALTY`) returned for a configuration the constraints reject and for one
  whose cache entry failed; asked and told until `--budget` measurements (or `TRIALS_PER_MEASUREMENT`
  times that many trials: a run that gets stuck on repeats stops there, said in its note).
- `optuna-tpe-penalty/trial`: the same runs (run once per cache and seed, shared), counted per
  trial as Optuna's `n_trials` counts them: an invalid or repeated trial costs one too.

Budget accounting, as in bench/search.py: a *measurement* is the first evaluation of a valid
configuration; one that failed in the cache (compile or run failure) costs its measurement. A
repeated configuration (Kernel Tuner serves it from its cache) and one the restrictions reject
(never compiled) cost nothing: this is Kernel Tuner's own `max_fevals` count, so a `kt-` run with
`max_fevals` = 200 is 200 measurements. The best found / optimum is read after 25, 50, 100 and 200
measurements of one run (these strategies take `max_fevals` only as a stop, bayes_opt also as its
loop bound). Per way and cache a note says how many evaluations or trials the measurements took
(repeats, invalid; Kernel Tuner's results hold no configuration its restrictions reject: its cost
function drops them unevaluated). The CPU time per measurement (per trial for `/trial`) printed in the table is the whole run's process
time over its measurements (Kernel Tuner's start-up included: reading the cache, building its
search space).

Measured (12 caches x 10 seeds, `nice -n 10 python bench/search_peers.py --hub PATH --seeds 10`, 2-core
machine at load 4-10 shared with other jobs: 50 min wall, 1,164 CPU-s), geometric mean over the caches of
the mean best/optimum at 25 / 50 / 100 / 200 measurements, and the range over caches at 100:

    kt-pso                    1.438 1.278 1.128 1.044   conv 1.096-1.447, dedisp 1.007-1.051
    kt-genetic_algorithm      1.391 1.260 1.133 1.041   conv 1.118-1.282, dedisp 1.003-1.256
    kt-bayes_opt              1.442 1.309 1.215 1.079   conv 1.143-2.984, dedisp 1.003-1.040
    kt-random_sample          1.429 1.257 1.195 1.130   conv 1.136-1.770, dedisp 1.005-1.182
    optuna-tpe-penalty        1.428 1.241 1.203 1.106   conv 1.212-2.447, dedisp 1.001-1.172
    optuna-tpe-penalty/trial  1.505 1.303 1.222 1.195   conv 1.223-2.483, dedisp 1.003-1.209

Kernel Tuner's bayes_opt ("multi-ultrafast") refits its model or not by wall-clock timings, so its
figures move with the machine's load (an earlier run, at e02a5fc: 1.183 at 100); the others are deterministic
for a seed.

    python bench/search_peers.py --hub PATH [--seeds 10] [--ways kt-pso,...] [other bench/search.py options]
    python bench/search.py --hub PATH --ways model,kt-pso,optuna-tpe-penalty
"""
from __future__ import annotations

import gzip
import importlib.util
import json
import math
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PEERS = ("kt-pso", "kt-genetic_algorithm", "kt-bayes_opt", "kt-random_sample", "optuna-tpe-penalty",
         "optuna-tpe-penalty/trial")
TRIALS_PER_MEASUREMENT = 5
PEER_T1 = ROOT / "tests" / "data" / "peer_spaces" / "benchmark_hub_T1"


def _load(name: str):
    """A bench script loaded by path (bench/optuna.py's and bench/kernel_tuner.py's names are packages')."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def trajectory(evaluations, budget: int) -> tuple[list, dict]:
    """Best time found after each measurement (see the module's documentation), from evaluations
    `(configuration, valid, time or None)` in the order they ran; and the counts of evaluations,
    repeated ones and invalid ones it took to make those measurements."""
    seen, best, out = set(), math.inf, []
    counts = {"evaluations": 0, "repeats": 0, "invalid": 0}
    for config, valid, found in evaluations:
        if len(out) == budget:
            break
        counts["evaluations"] += 1
        if not valid:
            counts["invalid"] += 1
        elif config in seen:
            counts["repeats"] += 1
        else:
            seen.add(config)
            if found is not None:
                best = min(best, found)
            out.append(best)
    return out, counts


def fractions_of(best: list, optimum: float, budgets) -> dict:
    """best found / optimum after each budget (inf: nothing valid measured yet); a run that made
    fewer measurements is read at its last."""
    return {b: best[min(b, len(best)) - 1] / optimum if best else math.inf for b in budgets}


# ------------------------------------------------------------------------------- Kernel Tuner
class KernelTunerCache:
    """A `.json.gz` cache decompressed once, with the T1 file's arguments for Kernel Tuner."""

    def __init__(self, cache: Path):
        from tests.helpers import t1_arguments
        self.folder = tempfile.TemporaryDirectory()
        self.path = Path(self.folder.name) / cache.name.removesuffix(".gz")
        with gzip.open(cache, "rb") as src, open(self.path, "wb") as out:
            shutil.copyfileobj(src, out)
        data = json.loads(self.path.read_text())
        self.kernel_name, self.problem_size = data["kernel_name"], tuple(data["problem_size"])
        self.tune_params, self.restrictions = t1_arguments(PEER_T1 / f"{cache.parent.name}.json")
        if self.tune_params != data["tune_params"]:
            raise SystemExit(f"{cache}: its tune_params are not those of the T1 file {cache.parent.name}.json")


def kernel_tuner_run(strategy: str, cache: KernelTunerCache, seed: int, budget: int) -> list:
    """Kernel Tuner's own `tune_kernel` (see the module's documentation): its evaluations in order."""
    import kernel_tuner
    from kernel_tuner.util import InvalidConfig
    from solverspace.integrations.kernel_tuner.searchspace import seeded_draws
    tune, options = kernel_tuner.tune_kernel, {"max_fevals": budget}
    if strategy.startswith("solverspace_"):       # ours, by name, through the drop-in
        from solverspace.integrations.kernel_tuner import tune_kernel as tune
        options["seed"] = seed
    with seeded_draws(seed), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = tune(
            cache.kernel_name, "", cache.problem_size, [], cache.tune_params, restrictions=list(cache.restrictions),
            cache=str(cache.path), simulation_mode=True, strategy=strategy, strategy_options=options,
            quiet=True, verbose=False)
    names = list(cache.tune_params)
    return [(tuple(r[n] for n in names), not any(isinstance(r.get(k), InvalidConfig) for k in ("__error__", "time")),
             r["time"] if isinstance(r.get("time"), (int, float)) else None) for r in results]


# ------------------------------------------------------------------------------- Optuna
def tpe_penalty_run(problem, seed: int, budget: int) -> list:
    """Optuna's TPE with a penalty (see the module's documentation): its trials in order."""
    import optuna
    from solverspace.integrations.optuna import distribution_for
    penalty = _load("optuna").PENALTY
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    names = problem.space.parameters
    domains = {n: distribution_for(problem.domains[n]) for n in names}
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    evaluations, measured = [], set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while len(measured) < budget and len(evaluations) < TRIALS_PER_MEASUREMENT * budget:
            trial = study.ask(domains)
            config = tuple(trial.params[n] for n in names)
            valid = problem.space.is_valid(config)
            found = problem.time_of(config) if valid else None
            study.tell(trial, penalty if found is None else found)
            evaluations.append((config, valid, found))
            if valid:
                measured.add(config)
    return evaluations


def _per_trial(evaluations, budget: int) -> list:
    """Best time found after each trial (Optuna's count: every trial costs one)."""
    best, out = math.inf, []
    for _, _, found in evaluations[:budget]:
        if found is not None:
            best = min(best, found)
        out.append(best)
    return out


_TPE_RUNS: dict = {}


def run_way(way: str, problem, args, cache: Path) -> list[dict]:
    """One result per seed, as bench/search.py's `run_way` gives them: `fractions` (best found /
    optimum per budget) and `cpu` (CPU seconds per measurement); `cache` is the problem's cache
    file (its folder named after the kernel's T1 file)."""
    budgets = tuple(b for b in (25, 50, 100, 200) if b <= args.budget)
    out, totals = [], {"evaluations": 0, "repeats": 0, "invalid": 0, "measurements": 0}
    peer = KernelTunerCache(cache) if way.startswith("kt-") else None
    for seed in range(args.seeds):
        start = time.process_time()
        if peer is not None:
            evaluations = kernel_tuner_run(way[3:], peer, seed, args.budget)
        elif way in ("optuna-tpe-penalty", "optuna-tpe-penalty/trial"):
            key = (problem.name, seed, args.budget)
            if key not in _TPE_RUNS:
                _TPE_RUNS[key] = (tpe_penalty_run(problem, seed, args.budget), time.process_time() - start)
            evaluations, _ = _TPE_RUNS[key]
        else:
            raise SystemExit(f"unknown way {way!r}: the peers are kt-<Kernel Tuner strategy>, "
                             f"optuna-tpe-penalty and optuna-tpe-penalty/trial")
        cpu = _TPE_RUNS[key][1] if peer is None else time.process_time() - start
        per_trial = way.endswith("/trial")
        measured, counts = trajectory(evaluations[:args.budget] if per_trial else evaluations, args.budget)
        best = _per_trial(evaluations, args.budget) if per_trial else measured
        totals["measurements"] += len(measured)
        for k in counts:
            totals[k] += counts[k]
        out.append({"fractions": fractions_of(best, problem.optimum, budgets),
                    "cpu": [cpu / max(1, len(best))]})
    if peer is not None:
        peer.folder.cleanup()
    print(f"  {way}: {totals['measurements'] / args.seeds:.0f} measurements per seed in "
          f"{totals['evaluations'] / args.seeds:.0f} evaluations ({totals['repeats'] / args.seeds:.0f} repeated, "
          f"{totals['invalid'] / args.seeds:.0f} invalid)", flush=True)
    return out


def main() -> int:
    """bench/search.py's table with the peers' ways (unless `--ways` is given)."""
    if not any(a == "--ways" or a.startswith("--ways=") for a in sys.argv[1:]):
        sys.argv[1:1] = ["--ways", ",".join(PEERS)]
    return _load("search").main()


if __name__ == "__main__":
    sys.exit(main())
