"""Optuna's TPE on a replayed brute-force Kernel Tuner cache, two ways (issue 27).

    python examples/optuna_replay/replay.py CACHE.json[.gz] T1.json [--trials 100] [--seed 0]

The cache holds the time of every valid configuration of the T1 file's space, so each trial is a
look-up (`solverspace.integrations.kernel_tuner.CacheMeasure`, as `tune --measure-from` reads it) and the true
optimum is known. The same `TPESampler(seed=SEED)` tunes it

1. the usual way: every parameter over its Cartesian domain (the cache's `tune_params`), and a
   configuration that breaks the constraints answered with a penalty value;
2. inside `SolverspaceSampler(space, TPESampler(seed=SEED))`, the parameters asked for with
   `solverspace.integrations.optuna.suggest(trial, space)`: every proposal valid and new.

A configuration whose cache entry failed (compilation or run time) gets the penalty both ways.
"""
from __future__ import annotations

import argparse
import gzip
import math
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import optuna

from solverspace import Space
from solverspace.analysis.tune_measure import DidNotRun
from solverspace.integrations.kernel_tuner import CacheMeasure
from solverspace.integrations.optuna import SolverspaceSampler, distribution_for, suggest

PENALTY = 1e9       # seconds: worse than any time


def penalty_way(space, measure, domains: dict, trials: int, seed: int):
    dists = {name: distribution_for(domains[name]) for name in space.parameters}

    def objective(trial):
        config = {}
        for name, dist in dists.items():
            if isinstance(dist, optuna.distributions.IntDistribution):
                config[name] = trial.suggest_int(name, dist.low, dist.high, step=dist.step)
            else:
                config[name] = trial.suggest_categorical(name, dist.choices)
        if not space.is_valid(config):
            trial.set_user_attr("invalid", True)
            return PENALTY
        return timed(measure, config)

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=trials)
    return study


def solverspace_way(space, measure, trials: int, seed: int):
    sampler = SolverspaceSampler(space, optuna.samplers.TPESampler(seed=seed), seed=seed)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda trial: timed(measure, suggest(trial, space)), n_trials=trials)
    return study


def timed(measure, config: dict) -> float:
    try:
        return measure.once(config)
    except DidNotRun:
        return PENALTY


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cache", type=Path, help="a complete (brute-force) Kernel Tuner cache, .json or .json.gz")
    parser.add_argument("t1", type=Path, help="the T1 file of the same kernel")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
    space = Space.load(args.t1)
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "cache.json"
        with (gzip.open(args.cache) if args.cache.suffix == ".gz" else open(args.cache, "rb")) as src, \
                open(plain, "wb") as out:
            shutil.copyfileobj(src, out)
        measure = CacheMeasure(space, plain)
    times = [e["time"] / 1000 for e in measure.cache.values() if "__error__" not in e]
    optimum = min(times)
    domains = {name: measure.data["tune_params"][name] for name in space.parameters}
    print(f"{args.t1.name}: {len(space):,} valid configurations of {math.prod(map(len, domains.values())):,}; "
          f"the cache has {len(measure.cache):,} entries; optimum {optimum * 1000:.4g} ms")
    for name, study in (("TPE, penalty", penalty_way(space, measure, domains, args.trials, args.seed)),
                        ("SolverspaceSampler(TPE)", solverspace_way(space, measure, args.trials, args.seed))):
        invalid = sum(t.user_attrs.get("invalid", False) for t in study.trials)
        distinct = len({tuple(t.params.values()) for t in study.trials})
        best = study.best_value
        print(f"{name:24} {len(study.trials)} trials: {invalid} invalid, {distinct} distinct configurations; "
              f"best {best * 1000:.4g} ms ({optimum / best:.1%} of the optimum's speed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
