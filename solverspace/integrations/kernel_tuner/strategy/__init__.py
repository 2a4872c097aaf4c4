"""solverspace's own search strategies (`solverspace.strategies`) as Kernel Tuner strategies.

Names: `solverspace_<name>` for each strategy of `solverspace.strategies.STRATEGIES`:
`solverspace_model` (Bayesian optimisation whose proposals are chosen among the valid
configurations) and `solverspace_random` (exact uniform random search without replacement). The
prefix keeps them apart from Kernel Tuner's own names (its `random_sample` draws with its own
sampler, its `bayes_opt` over its own box) and says whose they are; the rest is the name
`solverspace tune --strategy` takes, so one name means one search everywhere.

Three ways in:

- the drop-in (`solverspace.integrations.kernel_tuner.tune_kernel`, this module's `tune_kernel`):
  `tune_kernel(..., strategy="solverspace_model", strategy_options={"max_fevals": 100, "seed": 1})`;
  while it runs the names are entries of Kernel Tuner's `strategy_map` (`registered`), so Kernel
  Tuner checks and records the name as it does its own;
- Kernel Tuner's own `tune_kernel(..., strategy=KernelTunerStrategy("model"))`: Kernel Tuner takes
  any object with a `tune` method; on its own `Searchspace` our space is built from its
  `tune_params` and the call's restrictions (`build_space`, as the drop-in builds it);
- `with registered(): kernel_tuner.tune_kernel(..., strategy="solverspace_model")`.

A run (`KernelTunerStrategy.tune`): the strategy asks a valid configuration it has not proposed
before; Kernel Tuner's own cost function (`strategies.common.CostFunc`) runs it through the runner
(so its cache, its results, its budget: `max_fevals`, `time_limit`), and its time is told back
(a failed one, an `__error__` result, as failed: learned as worse than every measured one). The
run ends when the budget is spent (Kernel Tuner's `StopCriterionReached`) or every valid
configuration has been proposed; the results are the cost function's, as Kernel Tuner's strategies
return them. A configuration the search space rejects although our space holds it (a restriction
that runs in Python, callables, filters our compiled space) is passed over unmeasured and never
proposed again: it costs nothing and teaches the model nothing. The objective is modelled as a
time (its logarithm): a higher-is-better objective is told as its reciprocal; an objective that is
not positive is refused, as is more than one objective.

`strategy_options` (`OPTIONS`, besides Kernel Tuner's `max_fevals`, `time_limit` and
`searchspace_construction_options`): `seed` (the strategy's own generator; default: drawn from
`numpy.random`'s global generator, so the drop-in's `seed=` reaches it and without either a run
is random as Kernel Tuner's are) and `prior` (the path of another device's Kernel Tuner cache or
`tune` database of the same space: a rank prior, `solverspace.strategies.prior.RankPrior`; for
`solverspace_model` only).

This is a folder of its own because it runs `solverspace.strategies`, a layer above the
integrations (the strategies read Kernel Tuner caches as priors): it sits in the strategies layer
(`tests/test_layers.py`), and the rest of the Kernel Tuner integration does not import it but
through the package's lazy table.
"""
from __future__ import annotations

import functools
import sys
import threading

import numpy as np

from solverspace.core.errors import OptionError, did_you_mean
from solverspace.strategies import STRATEGIES, SpaceExhausted, make

PREFIX = "solverspace_"
NAMES = tuple(PREFIX + name for name in STRATEGIES)
OPTIONS = {
    "seed": ("the strategy's seed (a whole number); default: drawn from numpy.random's global generator", None),
    "prior": ("path of another device's Kernel Tuner cache or tune database of the same space (model only)", None),
}
KERNEL_TUNER_OPTIONS = ("max_fevals", "time_limit", "searchspace_construction_options")


class KernelTunerStrategy:
    """A strategy of `solverspace.strategies` (by its name there: `model`, `random`) with the
    interface Kernel Tuner calls (`tune(searchspace, runner, tuning_options)`)."""

    def __init__(self, name: str):
        if name not in STRATEGIES:
            hint = did_you_mean(name, STRATEGIES)
            raise OptionError(f"KernelTunerStrategy({name!r}): expected one of {', '.join(STRATEGIES)}",
                              hint=hint or "KernelTunerStrategy('model')")
        self.name = name

    def __repr__(self) -> str:
        return f"KernelTunerStrategy({self.name!r})"

    def tune(self, searchspace, runner, tuning_options) -> list:
        from kernel_tuner.strategies.common import CostFunc
        from kernel_tuner.util import StopCriterionReached
        options = _options(tuning_options.strategy_options, self.name)
        objectives = list(tuning_options.objective)
        if len(objectives) != 1:
            raise OptionError(f"{PREFIX}{self.name}: one objective, got {objectives}",
                              hint="objective='time' (or one other metric)")
        higher = bool(tuning_options.objective_higher_is_better[0])
        space = _space_of(searchspace, tuning_options)
        prior = None
        if options["prior"] is not None:
            from solverspace.strategies.prior import RankPrior
            prior = RankPrior.from_path(space, options["prior"])
        seed = options["seed"]
        if seed is None:
            seed = int(np.random.randint(0, 2 ** 31 - 1))
        strategy = make(self.name, space, seed, prior)
        cost_func = CostFunc(searchspace, tuning_options, runner)
        while True:
            try:
                config = strategy.ask()
            except SpaceExhausted:
                break
            if not searchspace.is_param_config_valid(config):
                continue
            try:
                cost = cost_func(list(config), check_restrictions=False)
            except StopCriterionReached as stop:
                if tuning_options.verbose:
                    print(stop)
                break
            strategy.tell(config, _as_time(cost, higher, objectives[0]))
        return cost_func.results


def _options(given, name: str) -> dict:
    """Our options from `strategy_options`, unknown keys refused (Kernel Tuner's own are let through)."""
    given = dict(given or {})
    for key in given:
        if key not in OPTIONS and key not in KERNEL_TUNER_OPTIONS:
            known = list(OPTIONS) + list(KERNEL_TUNER_OPTIONS)
            raise OptionError(f"strategy_options[{key!r}]: {PREFIX}{name} takes {', '.join(known)}",
                              hint=did_you_mean(key, known) or "leave it out")
    out = {key: given.get(key, default) for key, (_, default) in OPTIONS.items()}
    seed = out["seed"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise OptionError(f"strategy_options['seed']={seed!r}: expected a whole number >= 0", hint="e.g. 'seed': 1")
    if out["prior"] is not None and name != "model":
        raise OptionError(f"strategy_options['prior'] with {PREFIX}{name}: only {PREFIX}model reads a prior",
                          hint=f"strategy='{PREFIX}model'")
    return out


def _space_of(searchspace, tuning_options):
    """Our space under Kernel Tuner's search space: the drop-in's `Searchspace` holds it; for Kernel
    Tuner's own it is built again from its `tune_params` and the call's restrictions, in Kernel
    Tuner's order as the drop-in builds it (so a seed gives the same search either way in)."""
    from solverspace.space import Space
    space = getattr(searchspace, "space", None)
    if isinstance(space, Space):
        return space
    from solverspace.integrations.kernel_tuner.searchspace import build_space
    try:    # set as an attribute by Kernel Tuner 1.5's tune_kernel (its Options is a dict)
        restrictions = tuning_options.restrictions_unmodified
    except (AttributeError, KeyError):
        raise OptionError("a solverspace strategy on Kernel Tuner's own Searchspace needs the call's restrictions "
                          "(tuning_options.restrictions_unmodified, set by Kernel Tuner 1.5's tune_kernel): not found",
                          hint="call it through kernel_tuner.tune_kernel or solverspace.integrations.kernel_tuner."
                               "tune_kernel") from None
    built, _, _ = build_space(searchspace.tune_params, restrictions,
                              searchspace.max_threads, searchspace.block_size_names, kernel_tuner_order=True)
    return built


def _as_time(cost: float, higher_is_better: bool, objective: str) -> float | None:
    """A Kernel Tuner cost as the time our strategies model (None: the configuration failed)."""
    if cost >= sys.float_info.max:
        return None
    value = -cost if higher_is_better else cost
    if not value > 0 or not np.isfinite(value):
        raise OptionError(f"objective {objective!r} measured {value!r}: solverspace's strategies model the "
                          "logarithm of a positive objective",
                          hint="tune a positive metric (a time, a throughput), or use a Kernel Tuner strategy")
    return 1.0 / value if higher_is_better else float(value)


# ------------------------------------------------------------------------------ by name
_LOCK = threading.Lock()
_REGISTERED = {"count": 0}


class registered:
    """Context manager: while open, `solverspace_<name>` are entries of Kernel Tuner's
    `strategy_map` (its `tune_kernel` takes them by name); removed when the last one (of any thread)
    closes, on any exit. A name Kernel Tuner already has is left to it."""

    def __enter__(self):
        from kernel_tuner.interface import strategy_map
        with _LOCK:
            if _REGISTERED["count"] == 0:
                _REGISTERED["added"] = [n for n in NAMES if n not in strategy_map]
                for name in _REGISTERED["added"]:
                    strategy_map[name] = KernelTunerStrategy(name[len(PREFIX):])
            _REGISTERED["count"] += 1
        return self

    def __exit__(self, *exc):
        from kernel_tuner.interface import strategy_map
        with _LOCK:
            _REGISTERED["count"] -= 1
            if _REGISTERED["count"] == 0:
                for name in _REGISTERED.pop("added"):
                    strategy_map.pop(name, None)
        return False


def _drop_in():
    from solverspace.integrations.kernel_tuner.searchspace import tune_kernel
    return tune_kernel


@functools.wraps(_drop_in())
def tune_kernel(*args, **kwargs):
    with registered():
        return _drop_in()(*args, **kwargs)


tune_kernel.__doc__ = (_drop_in().__doc__ or "") + (
    "\n\n    Also takes solverspace's own strategies by name (`strategy=\"solverspace_model\"`, "
    "`\"solverspace_random\"`; `solverspace.integrations.kernel_tuner.strategy`).")

__all__ = ["KernelTunerStrategy", "NAMES", "OPTIONS", "registered", "tune_kernel"]
