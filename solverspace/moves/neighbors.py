"""Neighbours of a valid configuration without listing the space: Kernel Tuner's five
methods (`kernel_tuner/searchspace.py`, `Searchspace.get_neighbors`), with their exact meaning in
parameter indices (positions in the value lists, `value_lists`). For a valid configuration `c`
with parameter indices `i(c)` and the valid configurations `V`:

- `Hamming`: the `x` in `V` that differ from `c` in exactly one parameter.
- `strictly-adjacent`: the `x` in `V`, `x != c`, with `|i_p(x) - i_p(c)| <= 1` for every parameter.
- `adjacent`: the `x` in `V`, `x != c`, with `i_p(x)` between `below_p` and `above_p` for every
  parameter, where `below_p` is the largest index under `i_p(c)` that some configuration of `V`
  takes, and `above_p` the smallest above it (no bound on a side where there is none). Kernel
  Tuner reads them off its whole list (the nearest index differences of each column of its index
  array); here they come from each parameter's *occurring indices* (`projection`), computed
  once per space.
- `Hamming-adjacent`: for each parameter, the Hamming neighbours that change only that parameter,
  to the nearest index below and the nearest above (at most two per parameter).
- `closest-param-indices`: the `x` in `V`, `x != c`, at the smallest L1 distance
  `sum_p |i_p(x) - i_p(c)|`, all of them (Kernel Tuner computes the sum in its index array's
  small integer type and can wrap around; here it is exact).

Two engines answer them, never by a scan of the space:

- the *compiled* one (`compiled`, given by the API layer: `translators/c/config_check.py`'s
  `CompiledChecker`, or any object with its `changes`, `walk` and `occurring`): `Hamming` and
  `Hamming-adjacent` are one C call that tries every value-list value of every parameter with
  the others pinned; the adjacent methods are one compiled walk of the window box, each
  parameter bounded by its window and each loop's constraints pruning; `closest-param-indices`
  is that walk over the whole box with an L1 budget (the Hamming-adjacent neighbours' distance)
  that tightens as closer configurations are found;
- the *reference* one, `ConfigChecker` (the reference's compiled levels, in Python), used where
  no compiled engine is given (small spaces, constructs C refuses): `Hamming` tries each
  parameter's domain (at the configuration's other values, which is a part of its value list)
  with the others fixed, re-evaluating only the loops from the changed parameter on; the
  adjacent methods walk the plan's loops over each parameter's window of indices;
  `closest-param-indices` is a branch and bound over the loops with the distance of the
  parameters bound so far as its bound.

Both give the same sets (tests/test_moves_compiled.py, `validation.moves.check_compiled`).
A configuration that is not valid (each value in its list) has neighbours by the same
definitions when asked with `valid_only=False` (Kernel Tuner asks for them: a strategy's move
can land off the valid set): `Hamming` is then, per parameter, a walk of the box with every other
parameter pinned, and `Hamming-adjacent` the nearest below and above of each such walk.
Its `closest-param-indices`, on the compiled engine over the space's own value lists, is the
repair search's (`Moves.nearest_all`: the exact smallest distance by the compiled nearest search,
then every configuration at it by the search over the work units' boxes): a walk of the box has
no distance bound to start from when the point has no Hamming neighbour, and on a large space
(K40c GEMM) it took minutes per point, even given the smallest distance. Over a caller's other
lists, with `keep`, or where repair is refused, the walk answers as before.
Neighbours are returned sorted by their parameter indices (definition order), the configuration
itself excluded; a random neighbour is drawn uniformly from them with NumPy's generator for the
seed.
"""
from __future__ import annotations

import bisect
from typing import Callable

from solverspace.core.errors import SpaceDefinitionError, did_you_mean
from solverspace.analysis.config_check import ConfigChecker, contains
from solverspace.moves.value_lists import ParamIndex

__all__ = ["METHODS", "NeighborError", "Neighbors", "method_name"]

METHODS = ("strictly-adjacent", "adjacent", "Hamming", "Hamming-adjacent", "closest-param-indices")


class NeighborError(SpaceDefinitionError):
    """A neighbour query that cannot be answered as asked (the message says why)."""


def method_name(method) -> str:
    """Kernel Tuner's spelling of a neighbour method (any letter case accepted), or an error."""
    if isinstance(method, str):
        for name in METHODS:
            if method.lower() == name.lower():
                return name
    raise NeighborError(f"unknown neighbour method {method!r}",
                        hint=did_you_mean(str(method), METHODS) or f"methods: {', '.join(METHODS)}")


class Neighbors:
    """Neighbour queries on one plan. `projection()`, called once when `adjacent` first needs it,
    returns per parameter (definition order) the sorted indices that some valid configuration
    takes. `compiled`: the compiled engine (see the module docstring), or None for the reference's.

    `index` may hold the caller's lists rather than the value lists (`Moves.neighbors_in`): each
    parameter's values in another order, or with values no configuration takes; parameter indices,
    the definitions above and the order of the answers are then the caller's. `keep`: a further
    test of a valid configuration (a caller's own restrictions): the valid set is then the valid
    configurations it keeps (with the reference engine: a compiled walk cannot test it).
    `nearest_all(indices)`: every valid configuration at the smallest distance from a point that
    is not valid, in `index`'s indices (`Moves.nearest_all`, the repair search), or None where it
    cannot say; `closest-param-indices` of such a point is then that, not a walk of the box."""

    def __init__(self, checker: ConfigChecker, index: ParamIndex,
                 projection: Callable[[], list[list[int]]] | None = None, compiled=None,
                 keep: Callable[[tuple], bool] | None = None,
                 nearest_all: Callable[[tuple], list[tuple] | None] | None = None):
        self.checker = checker
        self.nearest_all = nearest_all if keep is None else None
        self.compiled = compiled if keep is None else None
        self.index = index
        self.projection_source = projection
        self.occurring: list[list[int]] | None = None
        self.levels = checker.levels
        self.columns = checker.columns
        self.keep = keep

    # ------------------------------------------------------------------------------ answers
    def neighbors(self, values: tuple, method: str = "Hamming", *, valid_only: bool = True) -> list[tuple]:
        """The valid neighbours of the configuration `values` (definition order), sorted by
        parameter indices. `valid_only=False`: a configuration that is not valid (its values
        each in its list) has neighbours too, by the same definitions (the valid configurations
        around it); else it is an error."""
        method = method_name(method)
        values = tuple(values)
        indices, valid = self.start(values, valid_only)
        found = getattr(self, _ANSWER[method])(values, indices, valid)
        found.sort()
        return [self.index.values(point) for point in found]

    def count(self, values: tuple, method: str = "Hamming") -> int:
        return len(self.neighbors(values, method))

    def random(self, values: tuple, method: str = "Hamming", seed: int = 0) -> tuple | None:
        """One valid neighbour, uniform over them (`numpy.random.default_rng(seed)`), or None."""
        import numpy as np
        found = self.neighbors(values, method)
        if not found:
            return None
        return found[int(np.random.default_rng(seed).integers(len(found)))]

    def valid(self, values: tuple) -> bool:
        """Whether the configuration is in the valid set (the check, and `keep` where given)."""
        return self.checker.valid(values) and (self.keep is None or self.keep(values))

    def start(self, values: tuple, valid_only: bool = True) -> tuple[tuple[int, ...], bool]:
        """(the configuration's parameter indices, whether it is valid); with `valid_only`, one
        that is not valid is an error."""
        indices = self.index.indices(values)
        valid = self.valid(values)
        if not valid and valid_only:
            shown = ", ".join(f"{p}={v!r}" for p, v in zip(self.index.parameters, values))
            raise NeighborError(f"{shown} is not a valid configuration: neighbours are defined for a valid one",
                                hint="`solverspace check SPACE k=v ...` says which rules reject it")
        return indices, valid

    # ------------------------------------------------------------------------------ methods
    def hamming(self, values: tuple, indices: tuple, valid: bool = True) -> list[tuple]:
        if not valid or self.keep is not None:
            return [point for p in range(len(indices)) for point in self.changed(indices, p)]
        if self.compiled is not None:
            return [tuple(indices[:p]) + (j,) + tuple(indices[p + 1:])
                    for p, valid in enumerate(self.compiled_changes(indices)) for j in valid if j != indices[p]]
        envs = self.checker.prefix(values)
        found = []
        for k, level in enumerate(self.levels):
            p = self.columns[k]
            lookup = self.index.positions[p]
            current = values[p]
            moved = list(values)
            env = dict(envs[-1])
            for v in level.domain(envs[k]):
                if v == current or v not in lookup:
                    continue
                moved[p] = v
                if self.checker.valid_changed(env, k, moved, in_domain=True):
                    point = list(indices)
                    point[p] = lookup[v]
                    found.append(tuple(point))
        return found

    def changed(self, indices: tuple, p: int) -> list[tuple]:
        """The valid configurations that differ from `indices` in parameter p alone: a walk with
        every other parameter pinned (the configuration itself need not be valid)."""
        windows = [(i, i) for i in indices]
        windows[p] = (0, self.index.sizes[p] - 1)
        return self.walk(windows, indices)

    def hamming_adjacent(self, values: tuple, indices: tuple, valid: bool = True) -> list[tuple]:
        if not valid or self.keep is not None:
            found = []
            for p in range(len(indices)):
                moved = [point[p] for point in self.changed(indices, p)]
                below = [j for j in moved if j < indices[p]]
                above = [j for j in moved if j > indices[p]]
                for j in ([max(below)] if below else []) + ([min(above)] if above else []):
                    found.append(tuple(indices[:p]) + (j,) + tuple(indices[p + 1:]))
            return found
        if self.compiled is not None:
            found = []
            for p, valid in enumerate(self.compiled_changes(indices)):
                at = bisect.bisect_left(valid, indices[p])
                below, above = valid[:at], valid[bisect.bisect_right(valid, indices[p]):]
                for j in (below[-1:] + above[:1]):
                    found.append(tuple(indices[:p]) + (j,) + tuple(indices[p + 1:]))
            return found
        envs = self.checker.prefix(values)
        found = []
        for k, level in enumerate(self.levels):
            p = self.columns[k]
            listed = self.index.lists[p]
            domain = self.checker.domain(level, envs[k])
            moved = list(values)
            env = dict(envs[-1])
            for direction in (-1, 1):
                j = indices[p] + direction
                while 0 <= j < len(listed):
                    if contains(domain, listed[j]):
                        moved[p] = listed[j]
                        if self.checker.valid_changed(env, k, moved, in_domain=True):
                            point = list(indices)
                            point[p] = j
                            found.append(tuple(point))
                            break
                    j += direction
        return found

    def strictly_adjacent(self, values: tuple, indices: tuple, valid: bool = True) -> list[tuple]:
        windows = [(max(i - 1, 0), min(i + 1, size - 1)) for i, size in zip(indices, self.index.sizes)]
        return self.walk(windows, indices)

    def adjacent(self, values: tuple, indices: tuple, valid: bool = True) -> list[tuple]:
        occurring = self.projection()
        windows = []
        for p, (i, size) in enumerate(zip(indices, self.index.sizes)):
            taken = occurring[p]
            at = bisect.bisect_left(taken, i)
            below = taken[at - 1] if at > 0 else 0
            above = taken[bisect.bisect_right(taken, i)] if bisect.bisect_right(taken, i) < len(taken) else size - 1
            windows.append((below, above))
        return self.walk(windows, indices)

    def closest(self, values: tuple, indices: tuple, valid: bool = True) -> list[tuple]:
        """Branch and bound over the loops: the distance of the parameters bound so far bounds
        every completion from below; each loop tries indices outward from the configuration's.
        A configuration that is not valid, with `nearest_all` given: its answer (the repair search
        knows the smallest distance at once, where a walk of the box with no bound to start from
        can take minutes on a large space)."""
        if not valid and self.nearest_all is not None:
            found = self.nearest_all(indices)
            if found is not None:
                return found
        best = [min((sum(abs(a - b) for a, b in zip(point, indices))
                     for point in self.hamming_adjacent(values, indices, valid)), default=None)]
        if self.compiled is not None:
            box = [(0, size - 1) for size in self.index.sizes]
            return self.compiled.walk(box, indices, budget=best[0], closest=True)
        found: list[tuple] = []

        def outward(p: int, distance: int):
            """Parameter p's indices outward from the configuration's, while they can still tie."""
            centre, size, step = indices[p], len(self.index.lists[p]), 0
            while best[0] is None or distance + step <= best[0]:
                candidates = [centre] if step == 0 else [centre - step, centre + step]
                if all(not 0 <= j < size for j in candidates):
                    return
                yield from ((j, step) for j in candidates if 0 <= j < size)
                step += 1

        def leaf(point: list, distance: int) -> None:
            if distance == 0 or not self.kept(point):
                return
            if best[0] is None or distance < best[0]:
                best[0] = distance
                found.clear()
            if distance == best[0]:
                found.append(tuple(point))

        self.descend(indices, outward, leaf)
        return found

    # ------------------------------------------------------------------------------ walks
    def walk(self, windows: list[tuple[int, int]], indices: tuple) -> list[tuple]:
        """Every valid configuration whose parameter indices lie in `windows` (per parameter,
        definition order, inclusive), the configuration itself excluded: the plan's loops over
        the windows, each loop's constraints pruning."""
        if self.compiled is not None:
            return self.compiled.walk(windows, indices)
        found: list[tuple] = []

        def leaf(point: list, distance: int) -> None:
            if tuple(point) != indices and self.kept(point):
                found.append(tuple(point))

        self.descend(indices, lambda p, distance: ((j, 0) for j in range(windows[p][0], windows[p][1] + 1)), leaf)
        return found

    def descend(self, indices: tuple, options: Callable, leaf: Callable) -> None:
        """The plan's loops from the reference's start, each over the value-list indices
        `options(p, distance)` yields for its parameter p ((index, cost) pairs, given the distance
        of the parameters bound so far), each value in its loop's domain and admitted by its
        constraints; `leaf(point, distance)` at every valid configuration reached."""
        if self.checker.start is None:
            return
        levels, columns, lists = self.levels, self.columns, self.index.lists
        admit, domain_at = self.checker.enumerator.admit, self.checker.domain
        point = list(indices)
        depth = len(levels)

        def visit(k: int, env: dict, distance: int) -> None:
            if k == depth:
                leaf(point, distance)
                return
            level = levels[k]
            p = columns[k]
            listed = lists[p]
            domain = domain_at(level, env)
            for j, cost in options(p, distance):
                if contains(domain, listed[j]):
                    env[level.name] = listed[j]
                    if admit(level, env):
                        point[p] = j
                        visit(k + 1, env, distance + cost)
            point[p] = indices[p]

        visit(0, dict(self.checker.start), 0)

    def kept(self, point) -> bool:
        """Whether `keep` (if any) keeps the valid configuration at parameter indices `point`."""
        return self.keep is None or self.keep(self.index.values(point))

    def compiled_changes(self, indices: tuple) -> list[list[int]]:
        """Per parameter, the value-list indices where changing it alone keeps the (valid)
        configuration valid, from the compiled engine (the configuration's own index included)."""
        valid = self.compiled.changes(indices)
        if valid is None:   # start() said valid: the two engines disagree
            raise RuntimeError(f"internal error: the compiled check rejects {self.index.values(indices)}, "
                               "which the reference check accepts")
        return valid

    def projection(self) -> list[list[int]]:
        if self.occurring is None:
            if self.projection_source is None:
                raise NeighborError("the adjacent method needs each parameter's occurring values, "
                                    "and no way to compute them was given")
            self.occurring = [sorted(taken) for taken in self.projection_source()]
        return self.occurring


_ANSWER = {"Hamming": "hamming", "Hamming-adjacent": "hamming_adjacent", "strictly-adjacent": "strictly_adjacent",
           "adjacent": "adjacent", "closest-param-indices": "closest"}
