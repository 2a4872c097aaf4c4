"""Optuna on the valid set (the optional extra `solverspace[optuna]`).

Optuna's constraints are soft (judged after a trial) and a categorical parameter's choices may
not change between trials, so define-by-run cannot narrow them. We know the valid set exactly;
this module makes Optuna propose only from it, and puts `tune`'s records in an Optuna storage.

- `distributions(space)`: each parameter's Optuna distribution, fixed across trials, from its
  *value list* (`Space.value_lists`, the superset domain): an integer value list that is an
  arithmetic progression (a range, one value included) is an `IntDistribution(low, high, step)`;
  any other (integers with gaps such as powers of two, strings, orders, mixed) is a
  `CategoricalDistribution` whose choices are the values in value-list order, an order being its
  items joined by `>` (`"i>j>k"`; the empty order is `""`); integers past 2**53 (Optuna keeps an
  integer parameter as a float) are categorical too.
- `suggest(trial, space) -> dict`: asks the trial for every parameter with that distribution and
  returns the configuration (orders as tuples); the derived values of the configuration go in as
  the trial's user attributes (an order as its text).
- `SolverspaceSampler(space, base=None, *, startup="lhs", n_startup=5, seed=None, strategy=None)`: an Optuna
  sampler whose every proposal is a valid configuration never tried before in the study.
  Start-up trials come from an exact uniform sample (`startup="uniform"`, `Space.sample`) or a
  space-filling design over the valid set (`"lhs"`, `"sobol"`: `Space.design`), taken in order
  and skipping what the study has tried. Then `base` (any Optuna sampler; default
  `TPESampler(seed=seed)`) proposes a point of the value-list box through Optuna's public
  sampler methods (`infer_relative_search_space`, `sample_relative`, `sample_independent`, with
  the study and trial it is given), and the point is repaired (`Space.repair`: the valid
  configuration nearest in parameter indices). A repaired configuration the study has tried is
  replaced by its untried Hamming neighbour (`Space.neighbors`) nearest to the base's point
  (L1 distance in parameter indices; ties: the neighbours' order), else by a configuration drawn
  uniformly among the untried valid ones (by rank over the canonical positions). When it gives out
  the last valid configuration the sampler calls `study.stop()`, so `study.optimize` ends after
  exactly `len(space)` trials; asking for more is a `SpaceExhaustedError` (an `optuna.TrialPruned`:
  a racing thread's trial ends PRUNED).
  With `strategy=` (a strategy of `solverspace.strategies`: `make("model", space, seed=0)`, the
  model-based search, or `make("random", ...)`, exact uniform search) the space's parameters come
  from the strategy instead, start-up included: every proposal chosen among the valid
  configurations, never a repaired box point. Before each proposal the study's finished trials it
  has not been told are told to it (its own and any other trial holding a valid configuration:
  enqueued, added, another worker's): a complete trial's value as a time (to minimise: the value;
  to maximise: its reciprocal; a strategy models the logarithm, so a value that is not positive is
  refused with the trial's number), a failed or pruned trial as failed (learned as worse than
  every measured one). One study, one objective per strategy; `base` then samples only the
  parameters the objective asks for that the space does not have. The sampler takes the strategy
  as an object (this integration sits below `solverspace.strategies` in the layers and does not
  import it).
- `export_records(db, storage, study_name, *, run=None, space=None)`: the measurements of a
  `tune` database (read by `solverspace.analysis.tune_db.read_records`) into any Optuna storage, one trial each, through
  `optuna.create_trial` and `Study.add_trials`; `OptunaRecorder`: the same, one record at a time,
  as a `tune` run goes (`solverspace tune --optuna-storage URL`).

Refused with a message: a study whose trials ask for a parameter of the space with another
distribution (the parameter named), a `base` that is not an Optuna sampler. A `base` that
raises is reported (`BaseSamplerError`, the original exception chained), never swallowed.
"""
from __future__ import annotations

import datetime
import math
import threading
import weakref
from collections.abc import Mapping

try:
    import optuna
    from optuna.distributions import BaseDistribution, CategoricalDistribution, IntDistribution
    from optuna.samplers import BaseSampler, TPESampler
    from optuna.trial import TrialState
except ImportError as exc:                      # pragma: no cover - the extra is installed in CI
    raise ImportError("solverspace.integrations.optuna needs Optuna: pip install 'solverspace[optuna]'") from exc

import numpy as np

from solverspace.core.errors import ArgumentTypeError, OptionError, SolverspaceError, SpaceDefinitionError
from solverspace.core.orders import SEPARATOR
from solverspace.moves.neighbors import METHODS as NEIGHBOR_METHODS
from solverspace.analysis.tune_db import bound_text, canonical_key, read_records

EXACT_FLOAT_INT = 2 ** 53       # Optuna keeps an IntDistribution's values as floats: beyond this, categorical
STARTUPS = ("lhs", "sobol", "uniform")


class StudyMismatchError(SolverspaceError, ValueError):
    """An Optuna study (or a trial's request) whose distribution of a parameter is not the one the
    space's value list gives, or a study that cannot hold these records."""


class BaseSamplerError(SolverspaceError, RuntimeError):
    """The `base` sampler of a `SolverspaceSampler` raised (the original exception is chained)."""


class SpaceExhaustedError(SolverspaceError, optuna.TrialPruned):
    """Every valid configuration has been tried in this study: there is nothing left to propose.
    Also an `optuna.TrialPruned`, so that inside `study.optimize` (several threads, `n_jobs`) a
    trial that asked after the last configuration was given ends as PRUNED, without parameters,
    and the study stops; with ask and tell the caller sees this error."""


# ---------------------------------------------------------------------------------- distributions
class Codec:
    """A space's face in Optuna: each parameter's distribution (from its value list), the values
    Optuna stores for our values and back, and parameter indices of Optuna values."""

    def __init__(self, space):
        self.space = space
        self.names = tuple(space.parameters)
        lists = space.value_lists()
        self.values: dict[str, tuple] = {}
        self.distributions: dict[str, BaseDistribution] = {}
        self.index: dict[str, dict] = {}          # our value -> its index in the value list
        self.back: dict[str, dict] = {}           # Optuna's value -> ours
        self.text: dict[str, dict] = {}           # an order's text -> the order (order parameters only)
        for name in self.names:
            values = tuple(lists[name])
            if not values:
                raise SpaceDefinitionError(f"the space has no valid configuration: parameter {name!r} takes no value",
                                           hint="an Optuna study needs at least one valid configuration")
            self.values[name] = values
            self.index[name] = {value: i for i, value in enumerate(values)}
            stored = [_stored(value) for value in values]
            if len(set(map(_typed, stored))) != len(stored):
                raise SpaceDefinitionError(f"parameter {name!r}: two of its values have the same text in Optuna "
                                           f"({stored})", hint="give order items that print differently")
            self.back[name] = {_typed(s): v for s, v in zip(stored, values)}
            if any(isinstance(value, tuple) for value in values):
                self.text[name] = {s: v for s, v in zip(stored, values) if isinstance(v, tuple)}
            self.distributions[name] = _distribution(values, stored)

    def to_optuna(self, name: str, value):
        """The value Optuna stores for our `value` of parameter `name`."""
        return _stored(value)

    def from_optuna(self, name: str, value):
        """Our value for the value Optuna holds (KeyError: not in the value list)."""
        return self.back[name][_typed(value)]

    def normalise(self, name: str, value):
        """A value from a structured array or a record (an order as its text or a list, numpy
        scalars) as the value-list value."""
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, list):
            value = tuple(value)
        if name in self.text and isinstance(value, str):
            return self.text[name][value]
        return value

    def key(self, config) -> tuple:
        """A configuration (dict or tuple in parameter order) as a tuple of value-list values."""
        if isinstance(config, Mapping):
            config = [config[name] for name in self.names]
        return tuple(self.normalise(name, value) for name, value in zip(self.names, config))

    def indices(self, key: tuple) -> tuple:
        return tuple(self.index[name][value] for name, value in zip(self.names, key))

    def params(self, key: tuple) -> dict:
        """A configuration as Optuna parameters."""
        return {name: self.to_optuna(name, value) for name, value in zip(self.names, key)}


def _stored(value):
    """What Optuna stores for one of our values: an order as its text, anything else itself."""
    if isinstance(value, tuple):
        return SEPARATOR.join(str(item) for item in value)
    return value


def _typed(value):
    """A dict key that keeps 1 and "1" (and True) apart."""
    return (type(value).__name__, value)


def distribution_for(values) -> BaseDistribution:
    """The Optuna distribution of a list of values by this module's rule (an arithmetic progression
    of integers up to 2**53 in size: `IntDistribution`; anything else: categorical, orders as their
    text), e.g. of a parameter's Cartesian domain where a study asks for it without this sampler."""
    values = tuple(values)
    return _distribution(values, [_stored(v) for v in values])


def _distribution(values: tuple, stored: list) -> BaseDistribution:
    """An arithmetic progression of integers (|v| <= 2**53): IntDistribution; else categorical."""
    if all(type(v) is int and abs(v) <= EXACT_FLOAT_INT for v in values):
        steps = {b - a for a, b in zip(values, values[1:])}
        if len(values) == 1:
            return IntDistribution(values[0], values[0])
        if len(steps) == 1 and min(steps) > 0:
            return IntDistribution(values[0], values[-1], step=steps.pop())
    return CategoricalDistribution(stored)


_CODECS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_CODECS_LOCK = threading.Lock()


def codec(space) -> Codec:
    """The space's `Codec`, made once per `Space` object (its value lists are computed once)."""
    with _CODECS_LOCK:
        found = _CODECS.get(space)
        if found is None:
            found = _CODECS[space] = Codec(space)
        return found


def distributions(space) -> dict[str, BaseDistribution]:
    """Each parameter's Optuna distribution (see the module's documentation)."""
    return dict(codec(space).distributions)


def suggest(trial, space) -> dict:
    """Ask `trial` for every parameter of `space` with its value-list distribution; the
    configuration (a dict in parameter order, orders as tuples). The configuration's derived
    values are set as the trial's user attributes (orders as their text); with a sampler other
    than `SolverspaceSampler` the configuration may be invalid (`space.is_valid(config)`), and
    then only the derived values that evaluate are set."""
    found = codec(space)
    config = {}
    for name, dist in found.distributions.items():
        if isinstance(dist, IntDistribution):
            value = trial.suggest_int(name, dist.low, dist.high, step=dist.step)
        else:
            value = trial.suggest_categorical(name, dist.choices)
        try:
            config[name] = found.from_optuna(name, value)
        except (KeyError, TypeError):
            raise StudyMismatchError(f"parameter {name!r}: the trial gave {value!r}, which is not in its value list "
                                     f"({dist})", hint="a FixedTrial or an enqueued trial must hold values of the "
                                                       "space's value lists") from None
    for name, value in space.check(config).derived.items():
        trial.set_user_attr(name, _stored(value) if isinstance(value, tuple) else value)
    return config


# ---------------------------------------------------------------------------------- the sampler
_NOT_A_CONFIGURATION = object()


class SolverspaceSampler(BaseSampler):
    """An Optuna sampler that proposes only valid, untried configurations of `space` (see the
    module's documentation). The objective asks for them with `suggest(trial, space)`.

    `counts` says where the proposals came from: `startup`, `base` (valid as proposed), `repaired`
    (the base's point was not valid), `neighbour` and `uniform` (the repaired configuration had
    been tried), `strategy` (the `strategy=` asked).
    """

    def __init__(self, space, base: BaseSampler | None = None, *, startup: str | None = None,
                 n_startup: int | None = None, seed: int | None = None, neighbors: str = "Hamming", strategy=None):
        if strategy is not None:
            _check_strategy(strategy, space, startup, n_startup)
        startup = "lhs" if startup is None else startup
        n_startup = 5 if n_startup is None else n_startup
        if base is not None and not isinstance(base, BaseSampler):
            raise ArgumentTypeError(f"base={base!r}: expected an Optuna sampler (optuna.samplers.BaseSampler), "
                                    f"not {type(base).__name__}", hint="e.g. base=optuna.samplers.TPESampler(seed=0)")
        if startup not in STARTUPS:
            raise OptionError(f"startup={startup!r}: expected one of {', '.join(map(repr, STARTUPS))}",
                              hint="startup='lhs' (a Latin hypercube over the valid set) or 'uniform'")
        if isinstance(n_startup, bool) or not isinstance(n_startup, int) or n_startup < 0:
            raise OptionError(f"n_startup={n_startup!r}: expected a whole number of trials (0 or more)")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise OptionError(f"seed={seed!r}: expected a whole number (0 or more) or None")
        if neighbors not in NEIGHBOR_METHODS:
            raise OptionError(f"neighbors={neighbors!r}: expected one of {', '.join(map(repr, NEIGHBOR_METHODS))}",
                              hint="the neighbours a tried repaired configuration is replaced by; default 'Hamming'")
        self.space = space
        self.codec = codec(space)
        self.strategy = strategy
        self._told: set = set()                  # trial numbers told to the strategy
        self._study: str | None = None           # the one study a strategy searches
        # Repair is what every proposal after the start-up goes through: a space it refuses (issue
        # 25's moves refuse order-valued parameters, naming the parameter) is refused here, not
        # at the first proposal after the start-up trials.
        from solverspace.translators.errors import UnsupportedConstruct
        try:
            if strategy is None:
                space.repair(indices=tuple(0 for _ in self.codec.names))
        except UnsupportedConstruct as refusal:   # orders: repair and designs need one loop per parameter
            refusal.message = f"SolverspaceSampler repairs the base sampler's points, and {refusal.message}"
            refusal.hint = ("suggest(trial, space) asks for such a space with any Optuna sampler (an order as "
                            "its items joined by '>'), space.is_valid(config) telling the valid ones; or model the "
                            "order with one parameter per position")
            refusal.args = (refusal.render(),)
            raise
        self.base = base if base is not None else TPESampler(seed=seed)
        self.startup, self.n_startup, self.seed, self.method = startup, n_startup, seed, neighbors
        self.counts = {"startup": 0, "base": 0, "repaired": 0, "neighbour": 0, "uniform": 0, "strategy": 0}
        self._rng = np.random.default_rng(seed)
        self._lock = threading.RLock()
        self._size: int | None | bool = False    # False: not asked yet; None: past what len() holds
        self._design: list | None = None
        self._finished: dict[str, dict] = {}     # study -> trial number -> key (finished trials)
        self._proposed: dict[tuple, tuple] = {}  # (study, trial number) -> key, until the trial ends
        self._valid: dict[tuple, bool] = {}
        self._positions: dict[tuple, int] = {}

    def __str__(self) -> str:
        if self.strategy is not None:
            return f"SolverspaceSampler(strategy={getattr(self.strategy, 'name', type(self.strategy).__name__)})"
        return f"SolverspaceSampler({self.base})"

    # ------------------------------------------------------------------------------ Optuna's interface
    def reseed_rng(self) -> None:
        self._rng = np.random.default_rng()
        self._call_base("reseed_rng", self.base.reseed_rng)

    def before_trial(self, study, trial) -> None:
        self._call_base("before_trial", self.base.before_trial, study, trial)

    def infer_relative_search_space(self, study, trial) -> dict:
        return dict(self.codec.distributions)

    def sample_relative(self, study, trial, search_space) -> dict:
        with self._lock:
            tried = self._tried(study, trial)
            size = self.size()
            if size is not None and self._valid_count(tried) >= size:
                _stop(study)
                raise SpaceExhaustedError(f"every one of the {size} valid configurations of the space has been tried "
                                          f"in study {study.study_name!r}: nothing is left to propose",
                                          hint="the best is study.best_trial; with study.optimize the sampler stops "
                                               "the study itself at this point")
            if self.strategy is not None:
                key, source = self._from_strategy(study, tried), "strategy"
            elif len(tried) < self.n_startup:
                key, source = self._startup_point(tried), "startup"
            else:
                key, source = self._from_base(study, trial, tried)
            if not self.space.is_valid(key):          # never: repair, neighbours and draws give valid ones
                raise SolverspaceError(f"internal error: the sampler made an invalid configuration {key} ({source})")
            self.counts[source] += 1
            self._proposed[(study.study_name, trial.number)] = key
            self._valid[key] = True
            if size is not None and self._valid_count(tried) + 1 >= size:
                _stop(study)        # the last one: optimize ends once the running trials finish
            # Nothing is handed to Optuna as relative: it would compare an objective's request with the
            # relative distribution itself and refuse another kind (`suggest_float` for an integer
            # parameter) with its own message; `sample_independent` gives the values, or the refusal.
            return {}

    def sample_independent(self, study, trial, param_name, param_distribution):
        if param_name in self.codec.distributions:
            ours = self.codec.distributions[param_name]
            with self._lock:
                key = self._proposed.get((study.study_name, trial.number))
            if param_distribution != ours:
                raise StudyMismatchError(
                    f"parameter {param_name!r} was asked for with {param_distribution}, but the space's value list "
                    f"gives {ours}", hint="ask for the space's parameters with solverspace.integrations.optuna.suggest(trial, space)")
            if key is None:   # not proposed (an objective asking before the sampler ran: not through Optuna)
                raise SolverspaceError(f"internal error: trial #{trial.number} asks for {param_name!r} and no "
                                       f"configuration was proposed to it")
            return self.codec.params(key)[param_name]
        # a parameter the space does not have (another knob of the objective): the base samples it
        return self._call_base("sample_independent", self.base.sample_independent, study, trial, param_name,
                               param_distribution, number=trial.number)

    def after_trial(self, study, trial, state, values) -> None:
        try:
            self._call_base("after_trial", self.base.after_trial, study, trial, state, values, number=trial.number)
        finally:
            with self._lock:
                self._proposed.pop((study.study_name, trial.number), None)
                key = self._key_of(trial)
                self._finished.setdefault(study.study_name, {})[trial.number] = key
                tried = self._tried(study, None)
                size = self.size()
                exhausted = size is not None and self._valid_count(tried) >= size
        if exhausted:
            _stop(study)

    # ------------------------------------------------------------------------------ what was tried
    def size(self) -> int | None:
        """The number of valid configurations (None: more than `len()` can hold; then the study is
        never exhausted)."""
        if self._size is False:
            try:
                self._size = len(self.space)
            except OverflowError:
                self._size = None
        return self._size

    def _key_of(self, trial):
        """The configuration a trial holds (`_NOT_A_CONFIGURATION` if it lacks a parameter of the
        space); a parameter asked for with another distribution is refused, named."""
        for name, dist in trial.distributions.items():
            ours = self.codec.distributions.get(name)
            if ours is not None and dist != ours:
                raise StudyMismatchError(
                    f"parameter {name!r}: trial #{trial.number} of the study has {dist}, but the space's value list "
                    f"gives {ours}",
                    hint="use a new study for this space, ask with solverspace.integrations.optuna.suggest(trial, space), or "
                         "export records with export_records(..., space=space)")
        if any(name not in trial.params for name in self.codec.names):
            return _NOT_A_CONFIGURATION
        try:
            return tuple(self.codec.from_optuna(name, trial.params[name]) for name in self.codec.names)
        except KeyError:
            return _NOT_A_CONFIGURATION

    def _tried(self, study, trial) -> set:
        """Every configuration the study holds (any state) or this sampler has proposed to a trial
        still running, but the current trial's."""
        finished = self._finished.setdefault(study.study_name, {})
        current = None if trial is None else trial.number
        tried = set()
        for other in study.get_trials(deepcopy=False):
            if other.number == current:
                continue
            key = finished.get(other.number)
            if key is None:
                key = self._key_of(other)
                if other.state.is_finished():
                    finished[other.number] = key
            if key is not _NOT_A_CONFIGURATION:
                tried.add(key)
        tried.update(key for (name, number), key in self._proposed.items()
                     if name == study.study_name and number != current)
        return tried

    def _valid_count(self, tried: set) -> int:
        for key in tried:
            if key not in self._valid:
                self._valid[key] = self.space.is_valid(key)
        return sum(self._valid[key] for key in tried)

    # ------------------------------------------------------------------------------ proposals
    def _startup_point(self, tried: set) -> tuple:
        if self._design is None:
            seed = int(self._rng.integers(2 ** 31))
            size = self.size()
            n = self.n_startup if size is None else min(self.n_startup, size)
            if self.startup == "uniform":
                rows = self.space.sample(n, seed=seed)
            else:
                rows = self.space.design(n, method=self.startup, seed=seed)
            self._design = [self.codec.key(row) for row in rows.tolist()]
        for key in self._design:
            if key not in tried:
                return key
        return self._uniform_untried(tried)

    def _from_strategy(self, study, tried: set) -> tuple:
        """The strategy's next configuration the study does not hold, the study's finished trials told
        to it first."""
        self._tell_finished(study)
        while True:
            try:
                key = self.codec.key(self.strategy.ask())
            except StopIteration:       # the strategy's SpaceExhausted
                _stop(study)
                raise SpaceExhaustedError(f"the strategy {self} has proposed every valid configuration",
                                          hint="the best is study.best_trial") from None
            if key not in tried:       # else a running trial holds it: told when it finishes
                return key

    def _tell_finished(self, study) -> None:
        """Tell the strategy every finished trial of the study it has not been told (its own proposals
        and any other: enqueued, added, another worker's) holding a valid configuration: a complete
        trial's value as a time (`_as_time`), a failed or pruned one as failed (None)."""
        if self._study is None:
            self._study = study.study_name
        elif self._study != study.study_name:
            raise OptionError(f"a SolverspaceSampler with a strategy searches one study ({self._study!r}); "
                              f"study {study.study_name!r} asked it too",
                              hint="give each study a sampler (and a strategy) of its own")
        if len(study.directions) != 1:
            raise OptionError(f"study {study.study_name!r} has {len(study.directions)} objectives: a strategy "
                              "searches for one", hint="use base=optuna.samplers.NSGAIISampler() without strategy")
        maximize = study.direction == optuna.study.StudyDirection.MAXIMIZE
        for trial in study.get_trials(deepcopy=False):
            if trial.number in self._told or not trial.state.is_finished():
                continue
            self._told.add(trial.number)
            key = self._key_of(trial)
            if key is _NOT_A_CONFIGURATION:
                continue
            if key not in self._valid:
                self._valid[key] = self.space.is_valid(key)
            if not self._valid[key]:
                continue
            found = _as_time(trial.value, maximize, trial.number) if trial.state == TrialState.COMPLETE else None
            self.strategy.tell(key, found)

    def _from_base(self, study, trial, tried: set) -> tuple[tuple, str]:
        point = self._ask_base(study, trial)
        repaired = self.codec.key(self.space.repair(indices=point))
        source = "base" if repaired == self._from_indices(point) else "repaired"
        if repaired not in tried:
            return repaired, source
        nearest = self._nearest_untried(repaired, point, tried)
        if nearest is not None:
            return nearest, "neighbour"
        return self._uniform_untried(tried), "uniform"

    def _from_indices(self, point: tuple) -> tuple:
        return tuple(self.codec.values[name][i] for name, i in zip(self.codec.names, point))

    def _ask_base(self, study, trial) -> tuple:
        """The base sampler's point of the value-list box, as parameter indices."""
        dists = self.codec.distributions
        found = self._call_base("infer_relative_search_space", self.base.infer_relative_search_space, study, trial,
                                number=trial.number)
        found = {name: dist for name, dist in found.items() if name in dists}
        proposal = self._call_base("sample_relative", self.base.sample_relative, study, trial, found,
                                   number=trial.number) if found else {}
        point = []
        for name, dist in dists.items():
            if name in proposal and name in found:
                value = proposal[name]
            elif dist.single():
                value = dist.low if isinstance(dist, IntDistribution) else dist.choices[0]
            else:
                value = self._call_base("sample_independent", self.base.sample_independent, study, trial, name, dist,
                                        number=trial.number)
            try:
                point.append(self.codec.index[name][self.codec.from_optuna(name, _plain(value, dist))])
            except (KeyError, TypeError, ValueError):
                raise BaseSamplerError(f"the base sampler {self.base} proposed {name}={value!r} at trial "
                                       f"#{trial.number}, which is not in the parameter's distribution {dist}") from None
        return tuple(point)

    def _call_base(self, what: str, method, *args, number=None):
        try:
            return method(*args)
        except SolverspaceError:
            raise
        except Exception as exc:
            at = "" if number is None else f" at trial #{number}"
            raise BaseSamplerError(f"the base sampler {self.base} failed in {what}{at}: {type(exc).__name__}: {exc}",
                                   hint="the trial is not run; fix or replace the base sampler") from exc

    def _nearest_untried(self, repaired: tuple, point: tuple, tried: set) -> tuple | None:
        best = None
        for neighbour in self.space.neighbors(repaired, method=self.method):
            key = self.codec.key(neighbour)
            if key in tried:
                continue
            distance = sum(abs(a - b) for a, b in zip(self.codec.indices(key), point))
            if best is None or distance < best[0]:
                best = (distance, key)
        return None if best is None else best[1]

    def _uniform_untried(self, tried: set) -> tuple:
        """A configuration drawn uniformly among the valid ones not tried: a uniform rank among
        the untried canonical positions (rejection from uniform draws past `len()`)."""
        size = self.size()
        if size is None:
            while True:
                seed = int(self._rng.integers(2 ** 31))
                key = self.codec.key(self.space.sample(1, seed=seed, replace=True).tolist()[0])
                if key not in tried:
                    return key
        self._valid_count(tried)
        taken = sorted(self._position(key) for key in tried if self._valid[key])
        rank = int(self._rng.integers(size - len(taken)))
        for position in taken:
            if position <= rank:
                rank += 1
            else:
                break
        return self.codec.key(self.space[rank])

    def _position(self, key: tuple) -> int:
        position = self._positions.get(key)
        if position is None:
            position = self._positions[key] = self.space.index(key)
        return position


def _check_strategy(strategy, space, startup, n_startup) -> None:
    """A `strategy=` is a strategy of `solverspace.strategies` (duck-typed: `ask`, `tell`) on this
    space; it makes its own start-up."""
    if not (callable(getattr(strategy, "ask", None)) and callable(getattr(strategy, "tell", None))):
        raise ArgumentTypeError(f"strategy={strategy!r}: expected a strategy of solverspace.strategies (with ask() "
                                f"and tell(config, time)), not {type(strategy).__name__}",
                                hint="e.g. strategy=solverspace.strategies.make('model', space, seed=0)")
    theirs = getattr(strategy, "space", None)
    if theirs is None or tuple(theirs.parameters) != tuple(space.parameters) or \
            theirs.value_lists() != space.value_lists():
        raise OptionError(f"strategy={strategy!r} searches another space than the sampler's",
                          hint="make the strategy on the same space: make('model', space, seed=0)")
    for name, value in (("startup", startup), ("n_startup", n_startup)):
        if value is not None:
            raise OptionError(f"{name}={value!r} with strategy=: the strategy makes its own start-up",
                              hint=f"leave {name} out (e.g. ModelBased(space, n_startup=10) sets the model's)")


def _as_time(value: float, maximize: bool, number: int) -> float:
    """A complete trial's value as the time a strategy models (the logarithm of a positive number,
    the smaller the better): a value to minimise itself, one to maximise its reciprocal."""
    if not (value > 0 and math.isfinite(value)):
        raise OptionError(f"trial #{number} returned {value!r}: a strategy of solverspace.strategies models the "
                          "logarithm of a positive objective (a time)",
                          hint="return a positive value (e.g. a time or exp(loss)), or use a base sampler "
                               "without strategy=")
    return 1.0 / value if maximize else float(value)


def _stop(study) -> None:
    """`study.stop()` inside `study.optimize`; outside it (ask and tell) Optuna refuses, and the
    next ask is a `SpaceExhaustedError`."""
    try:
        study.stop()
    except RuntimeError:
        pass


def _plain(value, dist):
    """A value from a base sampler as Optuna would store it (numpy scalars, integral floats)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(dist, IntDistribution) and isinstance(value, float) and value.is_integer():
        value = int(value)
    return value


# ---------------------------------------------------------------------------------- tune records
RECORD_ATTRIBUTES = ("status", "times", "bound", "bound_exact", "bottleneck", "error", "seconds",
                     "solverspace_run", "solverspace_key")
COMPLETE_STATUSES = ("ok", "below bound")     # measured: a time (a FAIL trial otherwise)


def record_trial(record: dict, names, dists: dict, normalise, to_optuna):
    """One tune measurement as an Optuna trial (not yet in a study)."""
    config = record["configuration"]
    params = {name: to_optuna(name, normalise(name, config[name])) for name in names}
    complete = record["status"] in COMPLETE_STATUSES and record["value"] is not None
    attrs = {"status": record["status"], "times": record["times"], "bound": _finite(record["bound"]),
             "bound_exact": record["bound_exact"], "bottleneck": record["bottleneck"], "error": record["error"],
             "seconds": record["seconds"], "solverspace_run": record["run"], "solverspace_key": record["key"]}
    trial = optuna.create_trial(state=TrialState.COMPLETE if complete else TrialState.FAIL,
                                value=float(record["value"]) if complete else None, params=params,
                                distributions={name: dists[name] for name in names}, user_attrs=attrs)
    if record.get("measured_at") is not None:
        end = datetime.datetime.fromtimestamp(record["measured_at"])
        trial.datetime_start = end - datetime.timedelta(seconds=record["seconds"] or 0.0)
        trial.datetime_complete = end
    return trial


def _finite(value):
    return value if value is None or math.isfinite(value) else None


def _record_codec(names, records):
    """Distributions from the recorded values alone (no space given): each parameter's distinct
    values, numbers ascending, then strings, then orders by text, by the rule of `distributions`."""
    values = {}
    for name in names:
        seen = {_plain_record(r["configuration"][name]) for r in records}
        ordered = sorted(seen, key=lambda v: (0, v, "") if type(v) is int else
                         (1, 0, v) if isinstance(v, str) else (2, 0, _stored(v)))
        values[name] = tuple(ordered)
    return {name: distribution_for(vals) for name, vals in values.items()}


def _plain_record(value):
    return tuple(value) if isinstance(value, list) else value


def _open_study(storage, study_name: str):
    if not isinstance(study_name, str) or not study_name:
        raise OptionError(f"study_name={study_name!r}: expected the name of an Optuna study (a non-empty str)")
    try:
        study = optuna.create_study(storage=storage, study_name=study_name, direction="minimize", load_if_exists=True)
    except Exception as exc:        # a URL SQLAlchemy cannot parse, a database it cannot open, a missing driver
        raise OptionError(f"Optuna storage {storage!r}: {type(exc).__name__}: {exc}",
                          hint="give a storage URL such as sqlite:///optuna.db (in an existing, writable directory) "
                               "or an Optuna storage object") from None
    if len(study.directions) != 1 or study.directions[0] != optuna.study.StudyDirection.MINIMIZE:
        raise StudyMismatchError(f"Optuna study {study_name!r} does not minimize one value: tune's records are times",
                                 hint="give another --optuna-study (study_name) name")
    return study


def _check_study(study, dists: dict) -> set:
    """The configurations (`solverspace_key`) the study already holds; a trial asking a parameter with another
    distribution is refused, named."""
    keys = set()
    for trial in study.get_trials(deepcopy=False):
        for name, dist in trial.distributions.items():
            if name in dists and dist != dists[name]:
                raise StudyMismatchError(
                    f"parameter {name!r}: trial #{trial.number} of Optuna study {study.study_name!r} has {dist}, "
                    f"but these records give {dists[name]}",
                    hint="export into a new study name, or give space= so that the distributions are the space's "
                         "value lists")
        key = trial.user_attrs.get("solverspace_key")
        if key is not None:
            keys.add(key)
    return keys


def export_records(db, storage, study_name: str, *, run: str | None = None, space=None) -> int:
    """Put the measurements of a `tune` database into the Optuna study `study_name` of `storage`
    (a URL such as "sqlite:///optuna.db", or an Optuna storage object; created when missing,
    minimizing): one trial per measured configuration, `COMPLETE` with its time (status `ok`,
    `below bound`) or `FAIL` (`failed`, `timeout`, `invalid output`); user attributes `status`,
    `times`, `bound` (a float; `bound_exact` its exact text), `bottleneck` (the model's term that
    set the bound), `error`, `seconds`, `solverspace_run`, `solverspace_key` (the configuration's
    canonical JSON). A configuration the study already holds (by `solverspace_key`) is not added
    again: a study holds one trial per configuration, so export each run into a study of its own. Distributions: with
    `space`, the space's (`distributions(space)`: the study can go on with `SolverspaceSampler`);
    without, each parameter's recorded values by the same rule. Returns how many trials were added."""
    run, records = read_records(db, run)
    if not records:
        return 0
    names = list(records[0]["configuration"])
    if space is not None:
        found = codec(space)
        if set(names) != set(found.names):
            raise StudyMismatchError(f"the records' parameters {names} are not the space's {list(found.names)}",
                                     hint="give the space the tune run measured")
        names, dists, normalise, to_optuna = list(found.names), found.distributions, found.normalise, found.to_optuna
    else:
        dists = _record_codec(names, records)
        normalise, to_optuna = (lambda name, v: _plain_record(v)), (lambda name, v: _stored(v))
    study = _open_study(storage, study_name)
    held = _check_study(study, dists)
    trials = []
    for record in records:
        if record["key"] in held:
            continue
        try:
            trials.append(record_trial(record, names, dists, normalise, to_optuna))
        except (KeyError, ValueError) as exc:
            raise StudyMismatchError(f"the measurement of {record['configuration']} does not fit the distributions "
                                     f"({type(exc).__name__}: {exc})",
                                     hint="give the space the tune run measured, or no space") from None
    study.add_trials(trials)
    return len(trials)


class OptunaRecorder:
    """A `tune` sink (`solverspace.analysis.tune.Sink`): each measurement goes into the Optuna study
    `study_name` of `storage` as it is made, as `export_records` would put it (`seconds` and the
    start time are not known to a sink: the trial starts and ends when it is recorded). Used by
    `solverspace tune --optuna-storage URL [--optuna-study NAME]`; in Python
    `space.tune(..., sinks=[OptunaRecorder(space, "sqlite:///optuna.db", "my-study")])`."""

    def __init__(self, space, storage, study_name: str, run: str | None = None):
        self.codec = codec(space)
        self.storage, self.study_name, self.run = storage, study_name, run
        self.study = _open_study(storage, study_name)
        self.held = _check_study(self.study, self.codec.distributions)
        self.added = 0

    def __repr__(self) -> str:
        return f"OptunaRecorder(study {self.study_name!r})"

    def add(self, measurement) -> None:
        config = {name: list(v) if isinstance(v, tuple) else v for name, v in measurement.configuration.items()}
        key = canonical_key(config)
        if key in self.held:
            return
        bound = measurement.bound
        record = {"key": key, "configuration": config, "times": list(measurement.times), "value": measurement.time,
                  "bound_exact": None if bound is None else bound_text(bound), "bound": _bound_float(bound),
                  "status": measurement.status, "bottleneck": measurement.bottleneck, "error": measurement.error,
                  "seconds": None, "measured_at": None, "run": self.run}
        trial = record_trial(record, list(self.codec.names), self.codec.distributions, self.codec.normalise,
                             self.codec.to_optuna)
        self.study.add_trial(trial)
        self.held.add(key)
        self.added += 1

    def close(self) -> None:
        pass                        # every trial was stored when it was added


def _bound_float(bound):
    """A bound as a float (None: undefined, -inf; past the float range: None)."""
    if bound is None or bound == -math.inf:
        return None
    try:
        value = float(bound)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


__all__ = ["BaseSamplerError", "Codec", "OptunaRecorder", "SolverspaceSampler", "SpaceExhaustedError",
           "StudyMismatchError", "codec", "distribution_for", "distributions", "export_records", "read_records", "suggest"]
