"""solverspace as the search space *under* Kernel Tuner: a lazy `Searchspace` with the
interface Kernel Tuner 1.5's strategies use, and `tune_kernel` with Kernel Tuner's own signature.

A Kernel Tuner user changes one import::

    from solverspace.integrations.kernel_tuner.searchspace import tune_kernel        # was: from kernel_tuner import tune_kernel
    results, env = tune_kernel("matmul", source, size, args, tune_params, restrictions=restrictions)

`tune_kernel` builds our space from `tune_params` and `restrictions` exactly as Kernel Tuner does
(`build_space`), or takes a solverspace `Space` or space file (`space=`), then runs Kernel Tuner's
own `tune_kernel` with our `Searchspace` in place of its own: Kernel Tuner has no argument for a
prebuilt search space, so the module-level name `kernel_tuner.interface.Searchspace` is replaced for
the duration of the call (per thread: a thread that calls Kernel Tuner's own `tune_kernel` meanwhile
gets Kernel Tuner's `Searchspace`) and restored on any exit. Results, cache file and return values
are Kernel Tuner's own.

How the space is built from Kernel Tuner's arguments (`build_space`):

- `tune_params` (name -> list of values, in Kernel Tuner's order) become the parameters; a
  parameter's *Kernel Tuner index* of a value is its position in that list, as in Kernel Tuner.
- string restrictions are read by our safe T1 reader (`solverspace.io.t1.read`: parsed with `ast`,
  never `eval`) and compiled; one it cannot translate runs as a Python predicate through the safe
  evaluator (`solverspace.io.t1.predicates`: a whitelist, closures, bounded values, never `eval`), said
  once (a warning of this module's logger) with the reader's reason; one even that refuses is refused with both reasons;
- callables are Python predicates, evaluated on each configuration, exactly as Kernel Tuner's own
  build calls them: a lone function of one argument with several parameters gets the configuration
  as a dict (Kernel Tuner's old monolithic form); `(function, [names])` (or `(function, [names],
  source)`) gets those values positionally; any other callable gets every value positionally, in
  `tune_params` order; a python-constraint `Constraint` object is evaluated by Kernel Tuner's own
  `util.check_restriction`. The space is then the compiled space of the strings filtered by the
  predicates, listed once (logged once, with the size): predicates cannot be compiled.
- Kernel Tuner's automatic rule: when any of `block_size_names` (default `block_size_x`,
  `block_size_y`, `block_size_z`) are parameters, `product of those <= max_threads` is added,
  `max_threads` being the device's (Kernel Tuner passes it; simulation mode: 1e9).

The exact count of a compiled space is remembered: the counted work units of its compiled
enumerator (what `space[i]` and `space.index` descend through) are written beside the module
(`remember_units`) and given back in the next process (`remembered_units`), so a warm
`Searchspace` is ready without counting again.

`run_kernel` is Kernel Tuner's, for one configuration: `params` are checked against our space
first (`broken_restrictions` names each restriction they break).

The `Searchspace` answers from the space without listing it (see the README's table for each
method a shipped strategy calls): `size` is the exact count, validity the compiled check,
positions `space[i]`/`space.index` of a space whose canonical order is Kernel Tuner's own list order
(`order.py`: python-constraint's variable order, values last first), random and Latin hypercube
samples Kernel Tuner's own algorithms drawing from the same generators (`seed=`), neighbours with
Kernel Tuner's five methods on Kernel Tuner's indices, always by `solverspace.moves`
(`Moves.neighbors_in` over the `tune_params` lists: their order, values the space never takes,
Python predicates as a further test, the neighbours of an invalid configuration; each
parameter's supported index range from its occurring indices): the plan's loops over the candidate
values (valid by construction). `list`, `sorted_list` and the NumPy views need the
whole list: they materialize it on first use as NumPy arrays, log it once with the size,
and refuse above `materialize_limit` bytes.
"""
from __future__ import annotations

import importlib
import inspect
import json
import logging
import math
import random
import threading
from pathlib import Path
from typing import Callable

import numpy as np

from solverspace.moves.value_lists import ParamIndex, ValueListError
from solverspace.registry.backends import get_backend
from solverspace.core.errors import ArgumentTypeError, OptionError, SpaceDefinitionError
from solverspace.core.options import check_whole
from solverspace.io.t1.predicates import UnsafeExpression, compile_predicate, parse_restriction

__all__ = ["DEFAULT_BLOCK_SIZE_NAMES", "MATERIALIZE_LIMIT", "NEIGHBOR_METHODS", "Searchspace", "broken_restrictions",
           "build_space", "remember_units", "remembered_units", "replaced_searchspace", "run_kernel", "seeded_draws", "tune_kernel"]

NEIGHBOR_METHODS = ("strictly-adjacent", "adjacent", "Hamming", "Hamming-adjacent", "closest-param-indices")
DEFAULT_BLOCK_SIZE_NAMES = ("block_size_x", "block_size_y", "block_size_z")
MATERIALIZE_LIMIT = 2 * 1024 ** 3      # bytes the whole list may take as NumPy arrays
PERMUTATION_LIMIT = 50_000_000        # up to this size a random sample permutes every position, as Kernel
                                      # Tuner's numpy.random.choice does (same stream); 400 MB at the limit
INDEX_MATRIX_LIMIT = 5_000_000        # up to this size the LHS snaps an invalid point against every row's
                                      # indices in NumPy (as Kernel Tuner); above, a closest-indices search
TUNE_VALUES_LIMIT = 100_000            # values in all that tune_params may list: each one passes through the
                                       # T1 text, its reader and the model (about 40 us of CPU each: 100,000
                                       # take 4 s, 1,000,000 took 37 s and 1.1 GB); a space file writes a long
                                       # grid as `range(...)`, which costs nothing per value


_log = logging.getLogger(__name__)


def _say(message: str) -> None:
    """A notice for the Kernel Tuner user: a warning of this module's logger (shown where the
    program configures logging: `logging.basicConfig()`)."""
    _log.warning(message)


# ---------------------------------------------------------------------------------- building the space
def _t1_type(values: list) -> str:
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return "int"
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in values):
        return "float"
    if all(isinstance(v, str) for v in values):
        return "string"
    raise OptionError(f"tune_params: values {values!r} mix types or hold a type T1 has no place for",
                      hint="give each parameter values of one kind: integers, numbers, strings or booleans")


def _plain_values(name: str, values) -> list:
    if isinstance(values, (str, bytes)):   # Kernel Tuner would iterate it: 'abc' as three values
        raise ArgumentTypeError(f"tune_params[{name!r}] = {values!r}: expected a list of values, not a "
                                f"{type(values).__name__} (it would be read as the {len(values)} values "
                                f"{', '.join(repr(c) for c in list(values)[:3])}{', ...' if len(values) > 3 else ''})",
                                hint=f"tune_params[{name!r}] = [{values!r}] for one value")
    try:
        values = list(values)
    except TypeError:
        raise OptionError(f"tune_params[{name!r}] = {values!r}: expected a list of values",
                          hint=f"e.g. tune_params[{name!r}] = [16, 32, 64]") from None
    if not values:
        raise OptionError(f"tune_params[{name!r}] is empty: a parameter needs at least one value")
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def _names_in(text: str, names) -> list:
    import ast
    tree = parse_restriction(text)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return [n for n in names if n in used]


def _predicate(restriction, names: list, lone: bool):
    """A Python predicate config-dict -> bool with Kernel Tuner's build semantics for a callable
    restriction (see the module's documentation); None for a string (compiled instead)."""
    if isinstance(restriction, str):
        return None
    try:
        from constraint import Constraint       # python-constraint: installed with Kernel Tuner
    except ImportError:                         # pragma: no cover - only without Kernel Tuner
        Constraint = ()
    if isinstance(restriction, tuple) and len(restriction) in (2, 3) and isinstance(restriction[1], (list, tuple)):
        function, used = restriction[0], list(restriction[1])
        unknown = [n for n in used if n not in names]
        if unknown:
            raise OptionError(f"restriction {restriction!r} names {unknown}, which are not in tune_params")
        if Constraint and isinstance(function, Constraint):
            from kernel_tuner.util import check_restriction
            return lambda config: bool(check_restriction((function, used), config))
        if not callable(function):
            raise OptionError(f"restriction {restriction!r}: the first item is not callable")
        return lambda config: bool(function(*[config[n] for n in used]))
    if Constraint and isinstance(restriction, Constraint):
        from kernel_tuner.util import check_restriction
        return lambda config: bool(check_restriction(restriction, config))
    if callable(restriction):
        if lone or getattr(restriction, "__name__", None) == "<lambda>":
            # Kernel Tuner rewrites a lambda from its source into a string of the parameter names
            # (`lambda p: p["x"] > 2` is `x > 2`): the lambda of the configuration dict
            return lambda config: bool(restriction(dict(config)))
        return lambda config: bool(restriction(*[config[n] for n in names]))
    raise OptionError(f"restriction {restriction!r} of type {type(restriction).__name__}: Kernel Tuner accepts "
                      "strings, callables, (callable, [names]) tuples and python-constraint Constraints",
                      hint="e.g. restrictions=['block_size_x * block_size_y <= 1024']")


def _lone_monolithic(restrictions: list, names: list) -> bool:
    """Kernel Tuner's old form: a single callable of one argument, several parameters (gets a dict)."""
    if len(restrictions) != 1 or isinstance(restrictions[0], (str, tuple)) or not callable(restrictions[0]):
        return False
    try:
        from constraint import Constraint
        if isinstance(restrictions[0], Constraint):
            return False
    except ImportError:                         # pragma: no cover
        pass
    try:
        return len(inspect.signature(restrictions[0]).parameters) == 1 and len(names) > 1
    except (TypeError, ValueError):
        return False


def _lambda_text(restriction, names: list, parameters: list):
    """A lambda restriction as the string Kernel Tuner makes of it (`kernel_tuner.util`'s rewrite of
    its source: `lambda p: p["x"] > 2` is `x > 2`), when that is the only lambda on its source line
    and our T1 reader reads the string; else None (it stays a Python predicate)."""
    if getattr(restriction, "__name__", None) != "<lambda>":
        return None
    try:
        from kernel_tuner.util import get_all_lambda_asts, unparse_constraint_lambda
        found = get_all_lambda_asts(restriction)
        if len(found) != 1 or len(found[0].args.args) != 1:
            return None
        text = unparse_constraint_lambda(found[0])
    except Exception:                   # no Kernel Tuner, no source, a form its rewrite does not take
        return None
    from solverspace.io.t1.read import load_t1_text
    condition = {"Parameters": _names_in(text, names), "Expression": text}
    try:
        load_t1_text(json.dumps({"ConfigurationSpace": {"TuningParameters": parameters, "Conditions": [condition]}}),
                     "<lambda>")
    except SpaceDefinitionError:
        return None
    return text


def _check_values_limit(listed: dict) -> None:
    """tune_params list at most `TUNE_VALUES_LIMIT` values in all (named refusal past it)."""
    total = sum(len(values) for values in listed.values())
    if total > TUNE_VALUES_LIMIT:
        name = max(listed, key=lambda n: len(listed[n]))
        raise OptionError(f"tune_params list {total:,} values in all ({name!r} alone {len(listed[name]):,}): more than "
                          f"the {TUNE_VALUES_LIMIT:,} a Searchspace built from tune_params takes (each value passes "
                          f"through the T1 text and reader: about 40 us each)",
                          hint=f"a coarser grid; or write the space as a space file ({name} = range(...) costs "
                               f"nothing per value) and pass Searchspace(space=Space.load('space.py'))")


def _check_max_threads(max_threads) -> int | None:
    """Kernel Tuner's `max_threads`: None, or a whole number of at least 1 (the block-size rule's bound;
    a float with a whole value counts, as Kernel Tuner's simulation mode passes 1e9)."""
    if max_threads is None:
        return None
    if isinstance(max_threads, (float, np.floating)) and math.isfinite(max_threads) and float(max_threads).is_integer():
        max_threads = int(max_threads)
    number = check_whole(max_threads, "max_threads", "a whole number of threads")
    if number < 1:
        raise OptionError(f"max_threads={max_threads!r}: expected at least 1 (the bound of the block-size "
                          f"product; {number} would make every configuration with a block size invalid)",
                          hint="e.g. max_threads=1024, or max_threads=None for no bound")
    return number


def build_space(tune_params: dict, restrictions=None, max_threads: int | None = None,
                block_size_names=DEFAULT_BLOCK_SIZE_NAMES, *, kernel_tuner_order: bool = False):
    """(Space, predicates, description): our space from Kernel Tuner's arguments, as Kernel Tuner
    builds its own (strings through the T1 reader; Kernel Tuner's block-size rule), and the
    callable restrictions as Python predicates (config dict -> bool) left to filter it. With
    `kernel_tuner_order`, the space's canonical order (`space[i]`, `index`, `rows`) is the order of
    Kernel Tuner's own `Searchspace.list` (`order.variable_order`: its loops in python-constraint's
    variable order, each value list from its last value to its first); the valid set is the same."""
    from solverspace.space import Space
    from solverspace.io.t1.read import load_t1_text
    if not isinstance(tune_params, dict) or not tune_params:
        raise OptionError("tune_params: expected a non-empty dict {name: [values]}",
                          hint="e.g. tune_params = {'block_size_x': [32, 64, 128]}")
    names = [str(n) for n in tune_params]
    parameters = []
    listed = {name: _plain_values(name, tune_params[name]) for name in names}
    _check_values_limit(listed)
    max_threads = _check_max_threads(max_threads)
    for name in names:
        values = listed[name][::-1] if kernel_tuner_order else listed[name]
        kind = _t1_type(values)
        parameters.append({"Name": name, "Type": kind, "Values": json.dumps(values) if kind != "bool"
                           else "[" + ", ".join(repr(v) for v in values) + "]"})
    if restrictions is None:
        restrictions = []
    elif not isinstance(restrictions, (list, tuple)) or (isinstance(restrictions, tuple) and len(restrictions) in (2, 3)
                                                          and callable(restrictions[0])
                                                          and isinstance(restrictions[1], (list, tuple))):
        restrictions = [restrictions]
    restrictions = list(restrictions)
    lone = _lone_monolithic(restrictions, names)
    conditions, predicates, texts = [], [], []
    for restriction in restrictions:
        text = _lambda_text(restriction, names, parameters)
        if text is not None:
            restriction = text          # a lambda read from its source, as Kernel Tuner reads it: compiled
        predicate = _predicate(restriction, names, lone)
        if predicate is None:
            conditions.append({"Parameters": _names_in(restriction, names), "Expression": restriction})
            texts.append(restriction)
        else:
            predicates.append(predicate)
    if max_threads is not None:
        used = [n for n in block_size_names if n in names]
        if used:
            rule = f"{' * '.join(used)} <= {max_threads}"
            conditions.append({"Parameters": used, "Expression": rule})
            texts.append(rule)
    untranslated = _untranslated(parameters, conditions)
    for condition, reason in untranslated:
        text = condition["Expression"]
        try:
            predicates.append(compile_predicate(text, names))
        except UnsafeExpression as exc:
            raise UnsafeExpression(f"{exc.message}; and the T1 reader cannot translate it either: {reason}",
                                   hint=exc.hint) from None
        conditions.remove(condition)
        texts.remove(text)
        _say(f"restriction {text!r} runs in Python on each configuration (the reference backend's way), "
             f"not compiled: the T1 reader cannot translate it ({reason})")
    document = {"ConfigurationSpace": {"TuningParameters": parameters, "Conditions": conditions}}
    model = load_t1_text(json.dumps(document), "<tune_params>")
    if not kernel_tuner_order:
        return Space(model), predicates, texts
    from solverspace.analysis.plan import make_plan
    from solverspace.integrations.kernel_tuner.order import variable_order
    uses = [c["Parameters"] for c in conditions] + [_predicate_uses(r, names) for r in restrictions
                                                    if not isinstance(r, str)]
    loops = variable_order({n: listed[n] for n in names}, restrictions, max_threads, block_size_names, uses)
    return Space(model, make_plan(model, loops)), predicates, texts


def _predicate_uses(restriction, names: list) -> list:
    """The parameters a callable restriction reads: its names, or all of them."""
    if isinstance(restriction, tuple) and len(restriction) >= 2 and isinstance(restriction[1], (list, tuple)):
        return list(restriction[1])
    return list(names)


def _untranslated(parameters: list, conditions: list) -> list:
    """The conditions the T1 reader refuses, each with its reason (the reader's message, first
    line), in their order; a refusal of the parameters themselves is raised."""
    from solverspace.io.t1.read import load_t1_text

    def read(some: list) -> None:
        load_t1_text(json.dumps({"ConfigurationSpace": {"TuningParameters": parameters, "Conditions": some}}),
                     "<tune_params>")
    try:
        read(conditions)
        return []
    except SpaceDefinitionError:
        read([])        # the parameters alone: their error is the user's to see
    refused = []
    for condition in conditions:
        try:
            read([condition])
        except SpaceDefinitionError as exc:
            reason = exc.message.splitlines()[0]
            refused.append((condition, reason.split(": ", 1)[1] if reason.startswith("condition ") else reason))
    return refused


# ---------------------------------------------------------------------------------- the search space
def remembered_units(space) -> bool:
    """Give the space's compiled enumerator (when its module is built) its work units *with their
    counts* from the cache entry a previous count left (`remember_units`), so that the exact count,
    `space[i]` and `space.index` need no count in this process (the C backend's
    `recall_units`, made through the registry). True when the units were given."""
    return get_backend("c").recall_units(space.plan)


def remember_units(space) -> None:
    """Remember the counted work units of the space's compiled enumerator beside its module (for
    `remembered_units` in the next process). Nothing when the space was not counted in C."""
    get_backend("c").remember_units(space.plan)


class _Compiled:
    """The valid set answered by the compiled space: count, `space[i]`, `index`, the check. The
    count and the work units behind `space[i]` come from the cache when a previous process
    counted the same space (`remembered_units`), and are remembered after a count here."""

    def __init__(self, space):
        self.space = space
        remembered_units(space)
        self.size = space.count("auto")
        remember_units(space)

    def at(self, position: int) -> tuple:
        return tuple(self.space[position])

    def index(self, config: tuple):
        try:
            return self.space.index(config)
        except ValueError:
            return None

    def valid(self, config: tuple) -> bool:
        return self.space.is_valid(config)

    def rows(self):
        return self.space.rows("auto")


class _Filtered:
    """The valid set of a compiled space filtered by Python predicates: listed once."""

    def __init__(self, space, predicates: list, names: list):
        self.space, self.predicates, self.names = space, predicates, names
        self.list = [tuple(row[:len(names)]) for row in space.rows("auto") if self._holds(row)]
        self.position = {config: i for i, config in enumerate(self.list)}
        self.size = len(self.list)

    def _holds(self, config) -> bool:
        values = dict(zip(self.names, config))
        return all(p(values) for p in self.predicates)

    def at(self, position: int) -> tuple:
        return self.list[position]

    def index(self, config: tuple):
        return self.position.get(config)

    def valid(self, config: tuple) -> bool:
        return config in self.position

    def rows(self):
        return iter(self.list)


class _Rows:
    """The whole list, materialized as NumPy arrays (one per parameter), read as tuples."""

    def __init__(self, columns: list, size: int):
        self.columns, self.size = columns, size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.size))]
        return tuple(c[i].item() for c in self.columns)

    def __iter__(self):
        for i in range(self.size):
            yield self[i]

    def index(self, config) -> int:
        for i, row in enumerate(self):
            if row == tuple(config):
                return i
        raise ValueError(f"{config} is not in the list")

    def __contains__(self, config) -> bool:
        try:
            self.index(config)
        except ValueError:
            return False
        return True


class Searchspace:
    """A lazy search space with the interface Kernel Tuner 1.5's strategies use.

    Built like Kernel Tuner's (`Searchspace(tune_params, restrictions, max_threads, ...)`) or from
    a solverspace space: `Searchspace(space=Space.load("gemm", {"device": "h100"}))`. Kernel
    Tuner's construction options `framework`, `solver_method`, `build_neighbors_index` and
    `defer_construction` choose how *it* builds its list; there is no list here, so they change
    nothing (`from_cache` and `path_to_ATF_cache`, which replace the space, are refused).

    Built from `tune_params`, its positions (`list`, `get_param_configs_at_indices`,
    `get_param_config_index`) are those of Kernel Tuner's own list, in its order (`order`); with
    `space=` they are the space's canonical order (Kernel Tuner has no list of such a space). Random
    draws are Kernel Tuner's: without `seed`, from the global `random` and `numpy.random` generators
    (its samples the same draws as Kernel Tuner's own from the same state); with `seed`, from
    generators of our own seeded with it. `materialize_limit` (bytes) bounds the whole list built on
    first use by `list` and the NumPy views."""

    def __init__(self, tune_params: dict | None = None, restrictions=None, max_threads: int | None = None,
                 block_size_names=DEFAULT_BLOCK_SIZE_NAMES, defer_construction=False, build_neighbors_index=False,
                 neighbor_method=None, from_cache: dict | None = None, framework="PythonConstraint",
                 solver_method="PC_OptimizedBacktrackingSolver", path_to_ATF_cache=None, *, space=None, seed: int | None = None,
                 materialize_limit: int = MATERIALIZE_LIMIT):
        if from_cache is not None or path_to_ATF_cache is not None:
            raise OptionError("solverspace's Searchspace builds the space itself: from_cache and path_to_ATF_cache "
                              "(a list of configurations to use instead) are not taken",
                              hint="leave them out, or check a cache against the space with `solverspace cache-check`")
        if neighbor_method is not None and neighbor_method not in NEIGHBOR_METHODS:
            raise ValueError(f"Neighbor method is {neighbor_method}, must be one of {list(NEIGHBOR_METHODS)}")
        self.neighbor_method = neighbor_method
        self.block_size_names = list(block_size_names)
        self.max_threads = max_threads
        self.build_neighbors_index = build_neighbors_index
        predicates: list = []
        if space is not None:
            space = _as_space(space)
            lists = space.value_lists()
            if tune_params is not None:
                _check_same_parameters(tune_params, space)
                self.tune_params = tune_params
            else:
                self.tune_params = {name: list(values) for name, values in lists.items()}
            self.restrictions = []
            texts: list = []
        else:
            if tune_params is None:
                raise OptionError("Searchspace: give tune_params (and restrictions, max_threads), or space=",
                                  hint="Searchspace(tune_params, restrictions, max_threads) or Searchspace(space=...)")
            space, predicates, texts = build_space(tune_params, restrictions, max_threads, block_size_names,
                                                   kernel_tuner_order=True)
            self.tune_params = tune_params
            self.restrictions = list(restrictions) if isinstance(restrictions, (list, tuple)) else \
                ([] if restrictions is None else [restrictions])
        self.space = space
        self.param_names = list(self.tune_params)
        if tuple(self.param_names) != tuple(space.parameters):
            raise OptionError(f"tune_params {self.param_names} are not the space's parameters {list(space.parameters)} "
                              "in its order")
        self.original_tune_params = dict(self.tune_params)
        self.params_values = tuple(tuple(_plain_values(n, v)) for n, v in self.tune_params.items())
        self.num_params = len(self.param_names)
        self.tune_param_is_numeric = {
            n: all(isinstance(v, (int, float)) for v in vals) and not any(isinstance(v, bool) for v in vals)
            for n, vals in zip(self.param_names, self.params_values)}
        self.tune_param_is_numeric_mask = np.array(list(self.tune_param_is_numeric.values()), dtype=bool)
        self._index = ParamIndex(tuple(self.param_names), dict(zip(self.param_names, self.params_values)))
        self._lookup = self._index.positions
        if predicates:
            self._set = _Filtered(space, predicates, self.param_names)
            _say(f"{len(predicates)} restriction(s) run in Python (callables, strings the T1 reader cannot "
                 f"translate): evaluated on each configuration of the compiled space of the others; the "
                 f"{self._set.size:,} valid configurations are listed once")
            for predicate in predicates:
                if getattr(predicate, "undefined", 0):
                    _say(f"restriction {predicate.text!r} is undefined (an arithmetic error: division by zero, "
                         f"overflow) on {predicate.undefined:,} configuration(s), e.g. {predicate.example}: they "
                         "are invalid, as undefined operations are everywhere in solverspace")
        else:
            self._set = _Compiled(space)
        self.size = self._set.size
        self.restriction_texts = texts
        # Kernel Tuner's tune_kernel reads this as its tuning_options.restrictions (simulation mode checks
        # a configuration missing from the cache with it): our own check, a monolithic callable.
        self._modified_restrictions = lambda params: self.is_param_config_valid(tuple(params.values()))
        # Kernel Tuner draws from the global generators (`random`, `numpy.random`; its LHS from scipy,
        # unseeded): without a seed, so do we (so `random.seed`/`numpy.random.seed`, or tune_kernel's
        # seed=, reproduce the draws of Kernel Tuner's own); with one, generators of our own.
        self._rng = random if seed is None else random.Random(seed)
        self._np = np.random.mtrand._rand if seed is None else np.random.RandomState(seed)
        self._indices = None     # every row's Kernel Tuner indices, once an LHS asked for them
        self._keys = None        # (weights, sorted row keys, their positions): positions from the matrix
        self._neighbors: dict = {m: {} for m in NEIGHBOR_METHODS}
        self._neighbor_engine = None
        self._rows: _Rows | None = None
        self.materialize_limit = materialize_limit

    # ------------------------------------------------------------------------------ values and indices
    def _canonical(self, param_config):
        """The configuration with the values of `tune_params` (1.0 is 1, numpy scalars plain), or
        None when a value is in no list."""
        config = tuple(param_config)
        if len(config) != self.num_params:
            raise ValueError(f"a configuration has {self.num_params} values ({', '.join(self.param_names)}), "
                             f"got {len(config)}: {config}")
        try:
            return self._index.values(self._index.indices(config))
        except ValueListError:
            return None

    def get_param_indices(self, param_config: tuple) -> tuple:
        """Each value's position in its `tune_params` list (Kernel Tuner's parameter indices)."""
        indices = []
        for i, value in enumerate(tuple(param_config)):
            index = self._lookup[i].get(value)
            if index is None:
                raise ValueError(f"Parameter value {value} ({type(value)}) is not in the list of values "
                                 f"{self.params_values[i]}")
            indices.append(index)
        return tuple(indices)

    def get_param_config_from_param_indices(self, param_indices: tuple) -> tuple:
        return tuple(self.params_values[i][int(j)] for i, j in enumerate(param_indices))

    def get_param_indices_lower_bounds(self) -> np.ndarray:
        return np.array([min(self._supported(i)) for i in range(self.num_params)])

    def get_param_indices_upper_bounds(self) -> np.ndarray:
        return np.array([max(self._supported(i)) for i in range(self.num_params)])

    def get_param_config_from_numeric(self, param_config: tuple) -> tuple:
        if isinstance(param_config, np.ndarray):
            param_config = tuple(param_config.tolist())
        return tuple(v if self.tune_param_is_numeric_mask[i] else self.params_values[i][int(v)]
                     for i, v in enumerate(param_config))

    # ------------------------------------------------------------------------------ configurations
    def is_param_config_valid(self, param_config: tuple) -> bool:
        """Whether the configuration is valid: the compiled check (a value in no list: not valid)."""
        config = self._canonical(param_config)
        return config is not None and self._set.valid(config)

    def get_param_config_index(self, param_config):
        """The configuration's position in the list (Kernel Tuner's order), None when it is not valid."""
        config = self._canonical(param_config)
        if config is None:
            return None
        if self._keys is not None:
            weights, keys, order = self._keys
            key = sum(int(w) * self._lookup[i][v] for i, (w, v) in enumerate(zip(weights, config)))
            found = int(np.searchsorted(keys, key))
            return int(order[found]) if found < len(keys) and keys[found] == key else None
        if not self._set.valid(config):
            return None
        return self._set.index(config)

    def get_param_configs_at_indices(self, indices) -> list:
        if self._indices is not None:
            values = self.params_values
            return [tuple(values[j][k] for j, k in enumerate(self._indices[int(i)].tolist())) for i in indices]
        return [self._set.at(int(i)) for i in indices]

    def get_true_tunable_params(self) -> dict:
        """The parameters that take more than one value over the valid configurations."""
        return {n: self.tune_params[n] for i, n in enumerate(self.param_names)
                if len(self.params_values[i]) > 1 and len(self._supported(i, stop_at=2)) > 1}

    # ------------------------------------------------------------------------------ samples
    def get_random_sample_indices(self, num_samples: int) -> np.ndarray:
        """`num_samples` distinct positions, uniform: Kernel Tuner's own draw (`numpy.random.choice` of
        the positions without replacement, a permutation of them all) up to `PERMUTATION_LIMIT`
        configurations, the same random stream; above, distinct positions drawn one by one."""
        if num_samples > self.size:
            raise ValueError(f"The number of samples requested ({num_samples}) is greater than the searchspace size "
                             f"({self.size})")
        num_samples = int(num_samples)
        if self.size <= PERMUTATION_LIMIT:
            return np.asarray(self._np.choice(self.size, size=num_samples, replace=False), dtype=np.int64)
        chosen: dict = {}
        while len(chosen) < num_samples:
            chosen.setdefault(int(self._np.randint(0, self.size, dtype=np.int64)), None)
        return np.array(list(chosen), dtype=np.int64)

    def get_random_sample(self, num_samples: int) -> list:
        """`num_samples` distinct valid configurations, uniform and seeded (fewer if the space is smaller)."""
        if self.size < num_samples:
            import warnings
            warnings.warn(f"Too many samples requested ({num_samples}), reducing the number of samples to the "
                          f"searchspace size ({self.size})")
            num_samples = self.size
        return self.get_param_configs_at_indices(self.get_random_sample_indices(num_samples))

    def _index_matrix(self):
        """Every configuration's Kernel Tuner indices in list order (int32, one row each), built once from
        the rows when there are at most `INDEX_MATRIX_LIMIT` of them (what Kernel Tuner's LHS measures
        distances against); None above."""
        if self._indices is None and self.size <= INDEX_MATRIX_LIMIT:
            columns = list(zip(*(row[:self.num_params] for row in self._set.rows()))) or [()] * self.num_params
            longest = max(len(v) for v in self.params_values)
            dtype = np.int8 if longest <= 127 else np.int16 if longest <= 32767 else np.int32    # as Kernel Tuner
            matrix = np.empty((self.size, self.num_params), dtype=dtype)
            for i, (lookup, column) in enumerate(zip(self._lookup, columns)):
                matrix[:, i] = np.fromiter(map(lookup.__getitem__, column), dtype=dtype, count=self.size)
            radix = [len(v) for v in self.params_values]
            if math.prod(radix) < 2 ** 62:      # each row's indices as one number, sorted: index by search
                weights = np.array([math.prod(radix[i + 1:]) for i in range(self.num_params)], dtype=np.int64)
                keys = matrix.astype(np.int64) @ weights
                order = np.argsort(keys, kind="stable")
                self._keys = (weights, keys[order], order)
            self._indices = matrix
            widest = sum(len(v) - 1 for v in self.params_values)     # the largest sum of index differences
            wide = np.int16 if widest <= 32767 else np.int32 if widest < 2 ** 31 else np.int64
            self._columns = [np.ascontiguousarray(matrix[:, i], dtype=wide) for i in range(self.num_params)]
            self._scratch = np.empty(self.size, dtype=wide), np.empty(self.size, dtype=wide)
            self._bounds = (matrix.min(axis=0), matrix.max(axis=0)) if self.size else None
        return self._indices

    def _nearest_position(self, indices) -> int:
        """Kernel Tuner's LHS snap of an invalid point: the first configuration of the list at the smallest
        sum of index differences (its argmin)."""
        matrix = self._index_matrix()
        if matrix is not None:      # column by column, in a type no sum overflows (Kernel Tuner's int8 sum wraps)
            difference, total = self._scratch
            total.fill(0)
            for column, index in zip(self._columns, indices):
                np.subtract(column, index, out=difference)
                np.abs(difference, out=difference)
                np.add(total, difference, out=total)
            return int(np.argmin(total))
        config = self.get_param_config_from_param_indices(indices)
        return min(self._set.index(c) for c in self.get_neighbors_no_cache(config, "closest-param-indices"))

    def get_LHS_sample_indices(self, num_samples: int) -> list:
        """Kernel Tuner's Latin hypercube sample of positions: a scipy `LatinHypercube` over each parameter's
        supported Kernel Tuner indices (ends included), each point its own position when valid, else
        the first configuration of the list at the smallest sum of index differences; repeats removed
        and topped up with uniform positions, as Kernel Tuner does (`list(set(...))`, so in its order).
        Its hypercube is unseeded (fresh entropy); ours draws from the samples' generator, without
        scipy's copy of it (`_latin_hypercube_integers`)."""
        if num_samples > self.size:
            import warnings
            warnings.warn(f"Too many samples requested ({num_samples}), reducing the number of samples to half of "
                          f"the searchspace size ({self.size})")
            num_samples = round(self.size / 2)
        num_samples = int(num_samples)
        if num_samples <= 0:
            return []
        if num_samples == self.size:        # Kernel Tuner 1.5 calls a `np.shuffle` that does not exist here
            return self._np.permutation(self.size).tolist()
        if self._index_matrix() is not None:     # positions from the rows' indices from now on
            lower, upper = self._bounds
        else:
            lower, upper = self.get_param_indices_lower_bounds(), self.get_param_indices_upper_bounds()
        points = _latin_hypercube_integers(self._np, self.num_params, lower, upper, num_samples)
        positions = []
        for point in points.tolist():
            position = self.get_param_config_index(self.get_param_config_from_param_indices(point))
            positions.append(position if position is not None else self._nearest_position(point))
        positions = list(set(positions))
        while len(positions) < num_samples:
            positions.extend(self.get_random_sample_indices(num_samples - len(positions)).tolist())
            positions = list(set(positions))
        return positions

    def get_LHS_sample(self, num_samples: int) -> list:
        return self.get_param_configs_at_indices(self.get_LHS_sample_indices(num_samples))

    def get_distributed_random_sample(self, num_samples: int, sampling_factor=10) -> list:
        return self.get_LHS_sample(num_samples)

    # ------------------------------------------------------------------------------ neighbours
    def _moves(self):
        """The neighbour queries of `moves/` in Kernel Tuner's indices (`Moves.neighbors_in` over the
        `tune_params` lists), made once: the compiled engine where the space is large; with Python
        predicates, the reference engine keeping the configurations they keep."""
        if self._neighbor_engine is None:
            from solverspace.moves.engine import Moves
            lists = dict(zip(self.param_names, self.params_values))
            if isinstance(self._set, _Filtered):
                self._neighbor_engine = Moves(self.space).neighbors_in(lists, keep=self._set.valid,
                                                                       occurring=self._filtered_occurring)
            else:
                self._neighbor_engine = Moves(self.space).neighbors_in(lists)
        return self._neighbor_engine

    def _filtered_occurring(self) -> list[list[int]]:
        """Per parameter, the Kernel Tuner indices its values take over the listed (filtered) set."""
        seen = [set() for _ in range(self.num_params)]
        for row in self._set.rows():
            for j in range(self.num_params):
                seen[j].add(self._lookup[j][row[j]])
        return [sorted(taken) for taken in seen]

    def _supported(self, i: int, stop_at: int | None = None) -> list:
        """The Kernel Tuner indices of parameter i's values that some valid configuration has (the
        first `stop_at` of them, when given): `moves/`' occurring indices."""
        return self._moves().projection()[i][:stop_at]

    def _neighbors_of(self, config: tuple, method: str) -> list:
        """By `moves/` (valid or not: Kernel Tuner asks for the neighbours of an invalid configuration too),
        sorted by Kernel Tuner's indices."""
        return self._moves().neighbors(config, method, valid_only=False)

    def _method(self, neighbor_method):
        method = neighbor_method if neighbor_method is not None else self.neighbor_method
        if method is None:
            raise ValueError("Neither the neighbor_method argument nor self.neighbor_method was set")
        if method not in NEIGHBOR_METHODS:
            raise ValueError(f"The neighbor method {method} is not in {list(NEIGHBOR_METHODS)}")
        return method

    def get_neighbors(self, param_config: tuple, neighbor_method=None, build_full_cache=False) -> list:
        """The valid neighbours of a configuration (valid or not) by Kernel Tuner's method, sorted by
        Kernel Tuner's parameter indices."""
        method = self._method(neighbor_method)
        config = self._canonical(param_config)
        if config is None:
            self.get_param_indices(tuple(param_config))     # Kernel Tuner's error naming the value
        cache = self._neighbors[method]
        if config not in cache:
            cache[config] = self._neighbors_of(config, method)
        return list(cache[config])

    def get_neighbors_no_cache(self, param_config: tuple, neighbor_method=None) -> list:
        config = self._canonical(param_config)
        if config is None:
            self.get_param_indices(tuple(param_config))
        return self._neighbors_of(config, self._method(neighbor_method))

    def get_neighbors_indices(self, param_config: tuple, neighbor_method=None, build_full_cache=False) -> list:
        return [self._set.index(c) for c in self.get_neighbors(param_config, neighbor_method)]

    def get_neighbors_indices_no_cache(self, param_config: tuple, neighbor_method=None,
                                       build_full_cache=False) -> list:
        return [self._set.index(c) for c in self.get_neighbors_no_cache(param_config, neighbor_method)]

    def are_neighbors_indices_cached(self, param_config: tuple, neighbor_method=None) -> bool:
        return self._canonical(param_config) in self._neighbors[self._method(neighbor_method)]

    def get_random_neighbor(self, param_config: tuple, neighbor_method=None, use_partial_cache=True):
        """One neighbour, uniform over the valid neighbours (seeded); None when there is none."""
        neighbors = self.get_neighbors(param_config, neighbor_method)
        return self._rng.choice(neighbors) if neighbors else None

    def get_param_neighbors(self, param_config: tuple, index: int, neighbor_method: str, randomize: bool) -> list:
        """The values parameter `index` takes in the neighbours that change it."""
        original = tuple(param_config)[index]
        values = sorted({n[index] for n in self.get_neighbors(param_config, neighbor_method) if n[index] != original},
                        key=lambda v: self._lookup[index][v])
        if randomize:
            self._rng.shuffle(values)
        return values

    # ------------------------------------------------------------------------------ the whole list
    def _materialize(self) -> _Rows:
        if self._rows is None:
            itemsize = sum(np.asarray(vals).dtype.itemsize for vals in self.params_values)
            needed = self.size * itemsize
            if needed > self.materialize_limit:
                raise OptionError(
                    f"this strategy needs the whole list of {self.size:,} configurations as NumPy arrays (about "
                    f"{needed / 2 ** 20:,.0f} MiB), more than materialize_limit={self.materialize_limit:,} bytes",
                    hint="use a strategy that moves by neighbours and samples (random_sample, genetic_algorithm, "
                         "simulated_annealing, greedy_ils, mls, diff_evo, pso, firefly_algorithm, ...), or raise "
                         "materialize_limit")
            _say(f"materializing all {self.size:,} configurations as NumPy arrays (about {needed / 2 ** 20:,.1f} MiB) "
                 "for a method that needs the whole list")
            rows = [tuple(row[:self.num_params]) for row in self._set.rows()]
            columns = [np.asarray([r[i] for r in rows], dtype=np.asarray(vals).dtype) if rows else
                       np.asarray([], dtype=np.asarray(vals).dtype)
                       for i, vals in enumerate(self.params_values)]
            self._rows = _Rows(columns, len(rows))
        return self._rows

    @property
    def list(self) -> _Rows:
        return self._materialize()

    @property
    def listed(self) -> bool:
        """Whether the whole list has been materialized (by `list`, `sorted_list` or a NumPy view)."""
        return self._rows is not None

    @property
    def indices(self) -> np.ndarray:
        return np.arange(self.size)

    def sorted_list(self, sort_last_param_first=False) -> list:
        rows = list(self._materialize())
        rows.sort(key=(lambda c: tuple(reversed(self.get_param_indices(c)))) if sort_last_param_first
                  else self.get_param_indices)
        return rows

    def get_list_dict(self) -> dict:
        return {c: i for i, c in enumerate(self._materialize())}

    def get_list_numpy(self) -> np.ndarray:
        rows = self._materialize()
        dtype = np.dtype([(n, c.dtype) for n, c in zip(self.param_names, rows.columns)])
        out = np.empty(rows.size, dtype=dtype)
        for n, c in zip(self.param_names, rows.columns):
            out[n] = c
        return out

    def get_list_param_indices_numpy(self) -> np.ndarray:
        rows = self._materialize()
        out = np.empty((rows.size, self.num_params), dtype=np.int32)
        for i, c in enumerate(rows.columns):
            lookup = self._lookup[i]
            out[:, i] = [lookup[v] for v in c.tolist()]
        return out

    def get_list_numpy_numeric(self) -> np.ndarray:
        rows = self._materialize()
        indices = None
        columns = []
        for i, c in enumerate(rows.columns):
            if self.tune_param_is_numeric_mask[i]:
                columns.append(c.astype(float))
            else:
                indices = self.get_list_param_indices_numpy() if indices is None else indices
                columns.append(indices[:, i].astype(float))
        return np.column_stack(columns) if columns else np.empty((0, 0))

    def __getattr__(self, name: str):
        raise AttributeError(f"solverspace's Searchspace has no {name!r} (Kernel Tuner 1.5's strategies do not use it; "
                             "see the README's Kernel Tuner table for what is provided)")


def _latin_hypercube_integers(rng, d: int, lower, upper, n: int) -> np.ndarray:
    """scipy's `LatinHypercube(d, seed=rng).integers(lower, u_bounds=upper, n=n, endpoint=True)` (scipy
    1.17: centred-off, scrambled, no optimization): the same draws from `rng` in the same order, the same
    integers, without the copy of `rng`'s state scipy makes first (0.3 ms for numpy's Mersenne Twister,
    most of a call on a small space)."""
    samples = rng.uniform(size=(n, d))
    perms = np.tile(np.arange(1, n + 1), (d, 1))
    for i in range(d):
        rng.shuffle(perms[i, :])
    unit = (perms.T - samples) / n
    lower, upper = np.atleast_1d(lower), np.atleast_1d(upper) + 1
    return np.floor(unit * (upper - lower) + lower).astype(np.int64)


def _as_space(space):
    from solverspace.space import Space
    if isinstance(space, Space):
        return space
    if isinstance(space, (str, Path)):
        return Space.load(space)
    raise OptionError(f"space={space!r}: expected a solverspace Space or the path of a space file",
                      hint="e.g. space=Space.load('gemm', {'device': 'h100'}) or space='my_space.py'")


def _check_same_parameters(tune_params: dict, space) -> None:
    names = list(tune_params)
    if tuple(names) != tuple(space.parameters):
        raise OptionError(f"tune_params {names} are not the space's parameters {list(space.parameters)} in order",
                          hint="pass tune_params=None with space= (the space's value lists are used), or list them "
                               "in the space's order")
    lists = space.value_lists()
    for name in names:
        missing = [v for v in lists[name] if v not in list(tune_params[name])]
        if missing:
            raise OptionError(f"tune_params[{name!r}] lacks values the space gives it: {missing}",
                              hint="pass tune_params=None with space= (the space's value lists are used)")


# ---------------------------------------------------------------------------------- inside Kernel Tuner
_LOCK = threading.Lock()


class _Swap:
    """A module attribute replaced while at least one holder is inside, in any thread (counted),
    and the original put back when the last one leaves; `original` is what it replaced."""

    def __init__(self, module: str, attribute: str, replacement):
        self.module, self.attribute, self.replacement = module, attribute, replacement
        self.count, self.original = 0, None

    def enter(self) -> None:
        module = importlib.import_module(self.module)
        with _LOCK:
            if self.count == 0:
                self.original = getattr(module, self.attribute)
                setattr(module, self.attribute, self.replacement)
            self.count += 1

    def leave(self) -> None:
        module = importlib.import_module(self.module)
        with _LOCK:
            self.count -= 1
            if self.count == 0:
                setattr(module, self.attribute, self.original)
                self.original = None


_LOCAL = threading.local()


def _dispatch(*args, **kwargs):
    """What `kernel_tuner.interface.Searchspace` is while one of our calls runs: ours for the
    threads inside `tune_kernel` here, Kernel Tuner's own for every other thread."""
    factory = getattr(_LOCAL, "factory", None)
    if factory is None:
        return _SEARCHSPACE.original(*args, **kwargs)
    return factory(*args, **kwargs)


class replaced_searchspace:
    """Context manager: while it is open, Kernel Tuner's `tune_kernel` in this thread builds its
    search space with `factory(tune_params, restrictions, max_threads, **options)`; the module-level
    name is restored when the last such context (of any thread) closes, on any exit."""

    def __init__(self, factory: Callable):
        self.factory = factory

    def __enter__(self):
        if getattr(_LOCAL, "factory", None) is not None:
            raise OptionError("solverspace.integrations.kernel_tuner.tune_kernel is already running in this thread",
                              hint="call it again after the first call returns")
        _SEARCHSPACE.enter()
        _LOCAL.factory = self.factory
        return self

    def __exit__(self, *exc):
        _LOCAL.factory = None
        _SEARCHSPACE.leave()
        return False


_SEARCHSPACE = _Swap("kernel_tuner.interface", "Searchspace", _dispatch)


class seeded_draws:
    """Context manager: the global generators Kernel Tuner's strategies and our `Searchspace` draw from
    (`random`, `numpy.random`) seeded with `seed` while it is open, and the Latin hypercube of Kernel
    Tuner's `bayes_opt` (scipy's, which Kernel Tuner leaves unseeded: fresh entropy) drawn from
    `numpy.random`'s, for this thread; the generators' states before are restored on any exit. A
    `seed` of None changes nothing (Kernel Tuner's own behaviour)."""

    def __init__(self, seed: int | None):
        self.seed = None if seed is None else check_whole(seed, "seed", "a whole number, or None")
        if self.seed is not None and not 0 <= self.seed < 2 ** 32:
            raise OptionError(f"seed={seed!r}: numpy.random.seed takes 0 to 2**32 - 1", hint="e.g. seed=1")

    def __enter__(self):
        if self.seed is None:
            return self
        self.states = random.getstate(), np.random.get_state()
        random.seed(self.seed)
        np.random.seed(self.seed)
        _LATIN_HYPERCUBE.enter()
        _LOCAL.seeded = True
        return self

    def __exit__(self, *exc):
        if self.seed is None:
            return False
        _LOCAL.seeded = False
        _LATIN_HYPERCUBE.leave()
        random.setstate(self.states[0])
        np.random.set_state(self.states[1])
        return False


def _latin_hypercube(*args, **kwargs):
    """scipy's LatinHypercube for Kernel Tuner's bayes_opt: from `numpy.random`'s global generator in a
    thread inside `seeded_draws`, as Kernel Tuner makes it (unseeded) elsewhere."""
    if getattr(_LOCAL, "seeded", False) and "rng" not in kwargs and "seed" not in kwargs:
        kwargs["seed"] = np.random.mtrand._rand     # scipy takes a RandomState as `seed` (its `rng` wants a Generator)
    return _LATIN_HYPERCUBE.original(*args, **kwargs)


_LATIN_HYPERCUBE = _Swap("kernel_tuner.strategies.bayes_opt", "LatinHypercube", _latin_hypercube)


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params=None, *args, space=None,
                seed: int | None = None, materialize_limit: int = MATERIALIZE_LIMIT, **kwargs):
    """Kernel Tuner's `tune_kernel` (same arguments, results and return values), with solverspace's
    `Searchspace` under it: built from `tune_params` and `restrictions` as Kernel Tuner does (its
    list in Kernel Tuner's order), or `space=` a solverspace `Space` or space file (then
    `tune_params` may be None: the space's value lists). Every draw, ours and the strategy's, comes
    from the global `random` and `numpy.random` generators, as in Kernel Tuner; `seed` seeds them
    for the call (and Kernel Tuner's bayes_opt Latin hypercube, otherwise unseeded) and restores them
    after (`seeded_draws`): the same draws as Kernel Tuner's own after `random.seed(seed)` and
    `numpy.random.seed(seed)`."""
    import kernel_tuner
    built: dict = {}

    def factory(kt_tune_params, restrictions, max_threads, **options):
        options = {k: v for k, v in options.items() if k in ("block_size_names", "neighbor_method")}
        searchspace = Searchspace(kt_tune_params if space is None else kt_tune_params, restrictions if space is None
                                  else None, max_threads, space=None if space is None else loaded,
                                  seed=None, materialize_limit=materialize_limit, **options)
        built["searchspace"] = searchspace
        return searchspace

    loaded = None
    if space is not None:
        loaded = _as_space(space)
        if tune_params is None:
            tune_params = {name: list(values) for name, values in loaded.value_lists().items()}
        if kwargs.get("restrictions"):
            raise OptionError("tune_kernel: restrictions with space=: the space holds the constraints",
                              hint="leave restrictions out, or build from tune_params and restrictions without space=")
    elif tune_params is None:
        raise OptionError("tune_kernel: give tune_params, or space=")
    with replaced_searchspace(factory), seeded_draws(seed):
        return kernel_tuner.tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, *args,
                                        **kwargs)


# ---------------------------------------------------------------------------------- one configuration
def _predicate_name(predicate) -> str:
    text = getattr(predicate, "text", None)
    return repr(text) if text is not None else "a Python callable restriction"


def broken_restrictions(params: dict, *, space=None, tune_params: dict | None = None, restrictions=None,
                        max_threads: int | None = None, block_size_names=DEFAULT_BLOCK_SIZE_NAMES) -> list:
    """What the configuration `params` (a dict; keys other than the space's parameters are left
    alone, as Kernel Tuner passes them on) breaks in our space: each broken restriction as the user
    wrote it (a string, Kernel Tuner's block-size rule, a callable by name) with the values it reads,
    or a value outside a parameter's list; [] when the configuration is valid. The space is `space=`
    (a `Space` or space file), or built from `tune_params`, `restrictions` and `max_threads` as
    `build_space` builds it."""
    if not isinstance(params, dict):
        raise OptionError(f"params={params!r}: expected a dict {{parameter: value}}",
                          hint="e.g. params={'block_size_x': 128}")
    predicates: list = []
    texts: list = []
    if space is not None:
        if tune_params is not None or restrictions is not None:
            raise OptionError("give space= or tune_params= (with restrictions=), not both",
                              hint="the space holds its own value lists and constraints")
        space = _as_space(space)
    elif tune_params is not None:
        space, predicates, texts = build_space(tune_params, restrictions, max_threads, block_size_names)
    else:
        raise OptionError("no space to check params against: give space= (a solverspace Space or space file) or "
                          "tune_params= (with restrictions= and max_threads=, as to tune_kernel)",
                          hint="to run a configuration without a check, call kernel_tuner.run_kernel itself")
    missing = [n for n in space.parameters if n not in params]
    if missing:
        raise OptionError(f"params lacks {missing}, parameters of the space",
                          hint=f"give every parameter: {list(space.parameters)}")
    config = {n: params[n].item() if isinstance(params[n], np.generic) else params[n] for n in space.parameters}
    lists = space.value_lists()
    outside = [f"{n}={v!r} is not among its values {list(lists[n])}" for n, v in config.items() if v not in lists[n]]
    if outside:
        return outside
    broken = []
    for rejection in space.check(config).rejections:
        number = rejection.rule[len("condition_"):] if rejection.rule.startswith("condition_") else ""
        text = texts[int(number) - 1] if number.isdigit() and 0 < int(number) <= len(texts) else rejection.reason
        values = ", ".join(f"{k}={v!r}" for k, v in rejection.values.items())
        broken.append(f"{text!r}{' (undefined)' if rejection.undefined else ''} with {values}" if texts else
                      f"{rejection.rule}: {rejection.reason} with {values}")
    for predicate in predicates:
        if not predicate(dict(config)):
            broken.append(f"{_predicate_name(predicate)}")
    return broken


def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, *args, space=None,
               tune_params: dict | None = None, restrictions=None, max_threads: int | None = None, **kwargs):
    """Kernel Tuner's `run_kernel` (same arguments, same return value: the output arguments), for
    one configuration of our space: `params` is checked first against `space=` (a `Space` or
    space file) or the space of `tune_params`, `restrictions` and `max_threads` (built as
    `tune_kernel` builds it; Kernel Tuner's block-size rule only with `max_threads`), and a
    configuration the space calls invalid is refused, naming each broken restriction and the values
    it reads. Then Kernel Tuner's own `run_kernel` runs it, with every other argument as given."""
    import kernel_tuner
    names = kwargs.get("block_size_names") or DEFAULT_BLOCK_SIZE_NAMES
    broken = broken_restrictions(params, space=space, tune_params=tune_params, restrictions=restrictions,
                                 max_threads=max_threads, block_size_names=names)
    if broken:
        shown = {k: v for k, v in params.items()}
        raise OptionError(f"run_kernel: params {shown} are not a valid configuration of the space: it breaks "
                          + "; ".join(broken),
                          hint="choose values that meet the restrictions (Searchspace.get_random_sample, "
                               "Space.repair give valid ones)")
    return kernel_tuner.run_kernel(kernel_name, kernel_source, problem_size, arguments, params, *args, **kwargs)
