"""Search moves against brute force over the listed space.

Each check takes a `Space` and its listed valid configurations (`rows`, tuples in column order,
from the reference) and returns a list of problems (empty when all agree). Kernel Tuner's
definitions (`kernel_tuner/searchspace.py`) are applied literally to the whole list, in NumPy, as
Kernel Tuner computes them (but in exact integers):

- `check_value_lists`: every value of every valid configuration is in its parameter's value list;
  each list is duplicate-free and in the documented order.
- `check_param_indices`: `param_indices` / `from_param_indices` round trip on every listed
  configuration; `is_valid` is True on them and equals membership in the list on random points
  of the index box.
- `check_neighbors(space, rows, method, configs)`: for each configuration, `neighbors` equals
  the brute-force set (sorted by parameter indices), `count_neighbors` its size, and
  `random_neighbor` is one of them (None when there are none).
- `check_compiled(space, rows, configs)`: the compiled check and walks
  (`translators/c/config_check.py`) against the reference check and brute force: validity of
  every listed configuration and of random points of the index box (and the same errors), each
  parameter's occurring indices, and all five neighbour methods through the compiled engine.
- `check_moves(space, rows, ..., compiled=False)`: all of the above on one listed space (what
  `validate` runs; `compiled`: `check_compiled` too, where C does not refuse the space).

Later checks of search moves (repair, designs, conditional samples) are added here as functions of
the same shape and called from `check_moves`.
"""
from __future__ import annotations

import random

import numpy as np

__all__ = ["METHODS", "brute_neighbors", "check_value_lists", "check_param_indices", "check_neighbors",
           "check_compiled", "check_moves", "compiled_neighbors", "index_array", "listable", "MAX_ROWS"]

MAX_ROWS = 20_000   # the largest space `check_moves` lists for brute force
METHODS = ("strictly-adjacent", "adjacent", "Hamming", "Hamming-adjacent", "closest-param-indices")


def listable(space, max_rows: int = MAX_ROWS) -> bool:
    """Whether the space is small enough to list for brute force (the reference's count)."""
    return space.count("reference") <= max_rows


def index_array(space, rows: list[tuple]) -> np.ndarray:
    """The listed configurations' parameter indices, one row each (N x D, int64)."""
    lookups = [{v: i for i, v in enumerate(values)} for values in space.value_lists().values()]
    array = np.array([[lookup[v] for lookup, v in zip(lookups, row)] for row in rows], dtype=np.int64)
    return array.reshape(len(rows), len(lookups))


def brute_neighbors(indices: np.ndarray, target: np.ndarray, method: str) -> list[tuple]:
    """Kernel Tuner's neighbours of the listed configuration with parameter indices `target`
    among the listed `indices` (N x D), its own row excluded, sorted by parameter indices."""
    diff = indices - target
    self_row = np.all(diff == 0, axis=1)
    if method == "Hamming":
        mask = np.count_nonzero(diff, axis=1) == 1
    elif method == "strictly-adjacent":
        mask = np.max(np.abs(diff), axis=1, initial=0) <= 1
    elif method == "adjacent":
        upper = np.array([np.min(column[column > 0], initial=np.iinfo(np.int64).max) for column in diff.T])
        lower = np.array([np.max(column[column < 0], initial=np.iinfo(np.int64).min) for column in diff.T])
        mask = np.all((diff <= upper) & (diff >= lower), axis=1)
    elif method == "Hamming-adjacent":
        hamming = np.count_nonzero(diff, axis=1) == 1
        rows = indices[hamming]
        upper = np.min(rows, initial=np.iinfo(np.int64).max, axis=0, where=rows > target)
        lower = np.max(rows, initial=np.iinfo(np.int64).min, axis=0, where=rows < target)
        mask = np.zeros(len(indices), dtype=bool)
        mask[np.flatnonzero(hamming)] = np.all((lower <= rows) & (rows <= upper), axis=1)
    elif method == "closest-param-indices":
        distance = np.abs(diff).sum(axis=1)
        distance[self_row] = np.iinfo(np.int64).max
        mask = (distance == distance.min()) if len(distance) and not self_row.all() else np.zeros(len(distance), bool)
    else:
        raise ValueError(f"unknown method {method!r}")
    mask &= ~self_row
    return sorted(tuple(int(i) for i in row) for row in indices[mask])


def check_value_lists(space, rows: list[tuple]) -> list[str]:
    problems = []
    lists = space.value_lists()
    key = value_key(space.model)
    for column, (name, values) in enumerate(lists.items()):
        if len(set(values)) != len(values):
            problems.append(f"value list of {name!r} has duplicates: {values}")
        if list(values) != sorted(values, key=key):
            problems.append(f"value list of {name!r} is not in the documented order: {values}")
        missing = {row[column] for row in rows} - set(values)
        if missing:
            problems.append(f"valid values of {name!r} missing from its value list: {sorted(map(repr, missing))[:5]}")
    return problems


def check_param_indices(space, rows: list[tuple], *, points: int = 200, seed: int = 0) -> list[str]:
    problems = []
    for row in rows:
        indices = space.param_indices(row)
        if space.from_param_indices(indices) != tuple(row):
            problems.append(f"round trip of {row}: indices {indices} give {space.from_param_indices(indices)}")
        if not space.is_valid(row):
            problems.append(f"is_valid({row}) is False for a listed configuration")
        if len(problems) > 5:
            return problems
    listed = set(rows)
    sizes = [len(values) for values in space.value_lists().values()]
    if all(sizes):
        rng = random.Random(seed)
        for _ in range(points):
            config = space.from_param_indices(tuple(rng.randrange(size) for size in sizes))
            if space.is_valid(config) != (config in listed):
                problems.append(f"is_valid({config}) is {space.is_valid(config)}; the list says {config in listed}")
    return problems


def check_neighbors(space, rows: list[tuple], method: str, configs: list[tuple] | None = None, *,
                    indices: np.ndarray | None = None, seed: int = 0, engine=None) -> list[str]:
    """Neighbours of `configs` (default: every listed configuration) by `method` against
    `brute_neighbors`; `engine`: a `Neighbors` to ask instead of the space's own."""
    problems = []
    indices = index_array(space, rows) if indices is None else indices
    ask = space if engine is None else engine
    for config in rows if configs is None else configs:
        target = np.array(space.param_indices(config), dtype=np.int64)
        expected = [space.from_param_indices(point) for point in brute_neighbors(indices, target, method)]
        got = ask.neighbors(tuple(config), method)
        counted = ask.count_neighbors(tuple(config), method) if engine is None else ask.count(tuple(config), method)
        if got != expected:
            problems.append(f"{method} neighbours of {config}: got {got[:6]}{'...' if len(got) > 6 else ''} "
                            f"({len(got)}), brute force {expected[:6]}{'...' if len(expected) > 6 else ''} "
                            f"({len(expected)})")
        elif counted != len(expected):
            problems.append(f"{method} count of {config}: {counted}, brute force {len(expected)}")
        else:
            drawn = (space.random_neighbor(config, method, seed=seed) if engine is None
                     else engine.random(tuple(config), method, seed))
            if (drawn is None) != (not expected) or (drawn is not None and drawn not in expected):
                problems.append(f"{method} random neighbour of {config}: {drawn} is not one of {len(expected)}")
        if len(problems) > 5:
            break
    return problems


def compiled_neighbors(space, *, quick: bool = True):
    """(a `Neighbors` answering through the compiled engine, its `CompiledChecker`) for a space;
    `UnsupportedConstruct` where C refuses it. `quick`: the module's -O0 build (tests, validation)."""
    index = ParamIndex(space.parameters, value_lists(space.model))
    compiled = CompiledChecker(space.plan, index.lists, quick=quick)
    return Neighbors(ConfigChecker(space.plan), index, compiled.occurring, compiled=compiled), compiled


def _outcome(check, config):
    """`check(config)`, or the error it raises, as something two engines' answers compare by."""
    try:
        return bool(check(config))
    except SolverspaceError as exc:
        return "error"


def check_compiled(space, rows: list[tuple], configs: list[tuple] | None = None, *, points: int = 300,
                   seed: int = 0, quick: bool = True) -> list[str]:
    """The compiled engine against the reference check and brute force on a listed space:
    `valid_many` on every listed configuration (all valid) and, one by one and in one batch, on
    random points of the index box (as the reference check says, errors included); each
    parameter's occurring indices (`occurring`) as the list takes them; the five methods'
    neighbours of `configs` (default: up to 20 listed ones). A space C refuses by construct is
    the one problem naming the refusal's message (callers that expect it catch nothing)."""
    engine, compiled = compiled_neighbors(space, quick=quick)
    rows = [tuple(row) for row in rows]
    problems = []
    if rows and not all(compiled.valid_many(rows)):
        bad = [row for row, ok in zip(rows, compiled.valid_many(rows)) if not ok]
        problems.append(f"the compiled check rejects listed configurations, e.g. {bad[0]}")
    reference = ConfigChecker(space.plan)
    sizes = [len(values) for values in space.value_lists().values()]
    if all(sizes):
        rng = random.Random(seed)
        box = [space.from_param_indices(tuple(rng.randrange(size) for size in sizes)) for _ in range(points)]
        expected = [_outcome(reference.valid, config) for config in box]
        got = [_outcome(compiled.valid, config) for config in box]
        for config, want, have in zip(box, expected, got):
            if want != have:
                problems.append(f"validity of {config}: reference {want}, compiled {have}")
                break
        if not any(isinstance(x, str) for x in expected) and compiled.valid_many(box) != expected:
            problems.append("the compiled check's batch answer differs from its one-by-one answers")
    if problems or not rows:
        return problems
    listed = index_array(space, rows)
    occurring = [sorted(set(column.tolist())) for column in listed.T]
    if compiled.occurring() != occurring:
        problems.append(f"occurring indices: compiled {compiled.occurring()}, listed {occurring}")
    chosen = configs if configs is not None else random.Random(seed).sample(rows, min(20, len(rows)))
    for method in METHODS:
        problems += check_neighbors(space, rows, method, chosen, indices=listed, seed=seed, engine=engine)
    return problems


def check_moves(space, rows: list[tuple] | None = None, *, configs: int = 20, seed: int = 0,
                compiled: bool = False) -> list[str]:
    """Every check of this module on one listed space (`rows`: its valid configurations, listed
    by the reference when not given), neighbours of up to `configs` random listed configurations
    by every method (`compiled`: through the compiled engine too, `check_compiled`, unless C
    refuses the space by construct). A space of more than `MAX_ROWS` configurations is not
    listed: the result is the one problem saying so (callers check `listable` first)."""
    if rows is None:
        if not listable(space):
            return [f"the space has more than {MAX_ROWS} configurations: too many to check by brute force"]
        rows = list(space.rows("reference"))
    rows = [tuple(row) for row in rows]
    problems = check_value_lists(space, rows) + check_param_indices(space, rows, seed=seed)
    if problems or not rows:
        return problems
    chosen = random.Random(seed).sample(rows, min(configs, len(rows)))
    indices = index_array(space, rows)
    for method in METHODS:
        problems += check_neighbors(space, rows, method, chosen, indices=indices, seed=seed)
    if compiled and not problems:
        try:
            problems += check_compiled(space, rows, chosen, seed=seed)
        except UnsupportedConstruct:
            pass   # refused by construct: the reference engine answers this space
    return problems


from solverspace.analysis.config_check import ConfigChecker
from solverspace.core.errors import SolverspaceError
from solverspace.moves.neighbors import Neighbors
from solverspace.moves.value_lists import value_key, ParamIndex, value_lists
from solverspace.translators.c.config_check import CompiledChecker
from solverspace.translators.errors import UnsupportedConstruct
