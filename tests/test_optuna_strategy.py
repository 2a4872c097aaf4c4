"""`SolverspaceSampler(space, strategy=...)` with real Optuna: the space's parameters come from a
strategy of `solverspace.strategies` (the same proposals as the strategy driven by hand), every one
valid and new, the study's finished trials told to it (failed, pruned, enqueued, maximised), and
what it cannot take refused with a message."""
from __future__ import annotations

import warnings
import zlib

import pytest

optuna = pytest.importorskip("optuna")

from solverspace.core.errors import ArgumentTypeError, OptionError                   # noqa: E402
from solverspace.integrations.optuna import SolverspaceSampler, SpaceExhaustedError, suggest  # noqa: E402
from solverspace.strategies import make                                               # noqa: E402
from tests.helpers import SMALL, space                                                # noqa: E402

optuna.logging.set_verbosity(optuna.logging.ERROR)


def value_of(config: dict) -> float:
    """A positive synthetic time, stable per configuration."""
    return 1.0 + zlib.crc32(repr(sorted(config.items())).encode()) % 1000 / 10.0


def optimize(sp, sampler, n_trials, objective=None, direction="minimize"):
    study = optuna.create_study(sampler=sampler, direction=direction)

    def default(trial):
        config = suggest(trial, sp)
        assert sp.is_valid(config), config
        return value_of(config)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective or default, n_trials=n_trials)
    return study


def configs(study) -> list[tuple]:
    return [tuple(t.params.values()) for t in study.trials if t.params]


@pytest.mark.parametrize("name", ["model", "random"])
def test_every_valid_configuration_once_then_the_study_stops(name):
    sp = space(SMALL)
    sampler = SolverspaceSampler(sp, strategy=make(name, sp, seed=1))
    study = optimize(sp, sampler, len(sp) + 20)
    assert len(study.trials) == len(sp)
    assert sorted(configs(study)) == sorted(sp.rows())
    assert sampler.counts["strategy"] == len(sp) and sum(sampler.counts.values()) == len(sp)


def test_the_proposals_are_the_strategys_own():
    sp = space(SMALL)
    study = optimize(sp, SolverspaceSampler(sp, strategy=make("model", sp, seed=3)), 25)
    by_hand = make("model", sp, seed=3)
    expected = []
    for _ in range(25):
        config = by_hand.ask()
        expected.append(config)
        by_hand.tell(config, value_of(dict(zip(sp.parameters, config))))
    assert configs(study) == expected


def test_failed_pruned_enqueued_and_maximised_trials_are_told():
    sp = space(SMALL)
    strategy = make("model", sp, seed=0)
    study = optuna.create_study(sampler=SolverspaceSampler(sp, strategy=strategy), direction="maximize")
    rows = list(sp.rows())
    study.enqueue_trial(dict(zip(sp.parameters, rows[0])))
    outcome = {}

    def objective(trial):
        config = suggest(trial, sp)
        n = trial.number
        if n == 1:
            raise RuntimeError("did not compile")
        if n == 2:
            raise optuna.TrialPruned()
        outcome[tuple(config.values())] = value_of(config)
        return value_of(config)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=12, catch=(RuntimeError,))
    held = configs(study)
    assert held[0] == rows[0] and len(set(held)) == 12
    strategy_results = strategy.results
    assert strategy_results[held[1]] is None and strategy_results[held[2]] is None
    for config, value in outcome.items():
        if config in strategy_results:       # the last trial is told at the next proposal
            assert strategy_results[config] == pytest.approx(1.0 / value)
    assert len(strategy_results) == 11


def test_parameters_the_space_lacks_come_from_the_base():
    sp = space(SMALL)
    sampler = SolverspaceSampler(sp, optuna.samplers.RandomSampler(seed=0), strategy=make("random", sp, seed=0))

    def objective(trial):
        config = suggest(trial, sp)
        rate = trial.suggest_float("rate", 0.1, 1.0)
        return value_of(config) * rate

    study = optimize(sp, sampler, 8, objective)
    assert all(0.1 <= t.params["rate"] <= 1.0 for t in study.trials) and len(set(configs(study))) == 8


def test_what_a_strategy_cannot_take_is_refused():
    sp = space(SMALL)
    with pytest.raises(ArgumentTypeError, match=r"strategy='model'.*expected a strategy"):
        SolverspaceSampler(sp, strategy="model")
    other = space("x = range(1, 5)\ny = range(1, 4)\n")
    with pytest.raises(OptionError, match="another space"):
        SolverspaceSampler(sp, strategy=make("random", other, seed=0))
    with pytest.raises(OptionError, match="n_startup=3 with strategy="):
        SolverspaceSampler(sp, strategy=make("random", sp, seed=0), n_startup=3)
    sampler = SolverspaceSampler(sp, strategy=make("model", sp, seed=0))
    with pytest.raises(OptionError, match=r"trial #0 returned -1.0"):
        optimize(sp, sampler, 3, lambda trial: suggest(trial, sp) and -1.0)
    with pytest.raises(OptionError, match="searches one study"):
        optimize(sp, sampler, 2)
    sampler = SolverspaceSampler(sp, strategy=make("model", sp, seed=0))
    study = optuna.create_study(sampler=sampler, directions=["minimize", "minimize"])
    with pytest.raises(OptionError, match="2 objectives"):
        suggest(study.ask(), sp)


def test_asking_past_the_last_configuration_with_ask_and_tell():
    sp = space("x = range(1, 4)\n")
    study = optuna.create_study(sampler=SolverspaceSampler(sp, strategy=make("random", sp, seed=0)))
    for _ in range(3):
        trial = study.ask()
        study.tell(trial, value_of(suggest(trial, sp)))
    with pytest.raises(SpaceExhaustedError):
        suggest(study.ask(), sp)
