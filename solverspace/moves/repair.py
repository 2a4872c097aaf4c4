"""Repair: the valid configuration nearest to a point of the index box.

A point of the index box is one parameter index per parameter (positions in the value lists,
`solverspace.moves.value_lists`); it need not be valid. Its repair is the valid configuration
at the smallest L1 distance sum_p |i_p - t_p| in parameter indices, found exactly by branch and
bound over the plan's loop order:

- the loops are bound in plan order (`plan.order`, as `explain` shows it); at each loop the
  admitted values that have at least one valid completion (compiled subtree counts,
  `translators.c.subtree`, cached) are tried by increasing distance |i_p - t_p| from the target
  index, the smaller index first at equal distance;
- a partial configuration's lower bound is the distance of the parameters bound so far; a subtree
  with no valid completion is never entered, so the first descent reaches a valid configuration
  (the incumbent) and the search then only enters subtrees whose bound is below it.

**Tie order**: among the configurations at the minimum distance, the one returned is the first in
that search order, i.e. the smallest by the key (|i_p - t_p|, i_p) for p in plan order, compared
lexicographically. (An incumbent is replaced only by a strictly nearer configuration, and the
search visits configurations in that key's order.)

**Near points first** (`nearby`): a point that is valid is its own repair (distance 0), and one
whose repair is within a few steps has it among the few points of the index box at that distance.
So the target itself, then the points at distance 1, 2, ... are checked for validity one by one
(`Space.is_valid`, the reference's compiled levels: no count, no walk of the space), until one
distance holds a valid point or `PROBE_POINTS` points have been checked: every point at that
distance was checked, so the smallest of the valid ones by the tie key is the repair. Only a
point farther than that goes to the search below, which first counts the space's work units and
finds their boxes (on a space of 2**64 configurations that count alone can take minutes).

Two engines find it, with the same answer:

- `compiled` (the default): the branch and bound in C (`translators.c.nearest`), the listing nest
  with each loop's values in that key's order and the partial distance as the bound; one module
  per plan, the target's indices as its runtime input, so a query costs one call;
- `python`: the reference search here, over the work units' index boxes and compiled subtree
  counts (`Repairer.repair_by_units`); the tests compare the two.

**Every nearest one** (`Repairer.nearest_all`): given the repair's distance, the same reference
search with that distance as the incumbent's from the start keeps every valid configuration at it
(a subtree is pruned only when its bound is above it). This is Kernel Tuner's
`closest-param-indices` of a configuration that is not valid (`moves.neighbors`).
"""
from __future__ import annotations

__all__ = ["ENGINES", "PROBE_POINTS", "Repairer", "nearby"]

ENGINES = ("compiled", "python")
PROBE_POINTS = 2048   # points of the index box checked around the target before the search proper


def sphere(target: tuple[int, ...], sizes: tuple[int, ...], radius: int):
    """The points of the index box (parameter j takes 0 .. sizes[j] - 1) at L1 distance exactly
    `radius` from `target`."""
    n = len(target)
    reach = [0] * (n + 1)      # reach[j]: the largest distance parameters j.. can add
    for j in range(n - 1, -1, -1):
        reach[j] = reach[j + 1] + max(target[j], sizes[j] - 1 - target[j])
    point = list(target)

    def place(j: int, left: int):
        if left == 0:
            yield tuple(point)
            return
        if j == n or reach[j] < left:
            return
        for step in range(0, left + 1):
            for index in ((target[j],) if step == 0 else (target[j] - step, target[j] + step)):
                if 0 <= index < sizes[j]:
                    point[j] = index
                    yield from place(j + 1, left - step)
            point[j] = target[j]
    yield from place(0, radius)


def nearby(target: tuple[int, ...], sizes: tuple[int, ...], loop_columns: list[int], valid,
           limit: int = PROBE_POINTS) -> tuple[tuple[int, ...], int] | None:
    """(indices, distance) of the repair of `target` when it lies within the first `limit` points
    checked by increasing distance (the target itself first), else None. `valid(indices)` says
    whether a point is a valid configuration; `loop_columns`: the columns in plan order (the
    tie key: (|i_p - t_p|, i_p) per loop in plan order, the smallest wins)."""
    checked, radius = 0, 0
    most = sum(max(t, n - 1 - t) for t, n in zip(target, sizes))
    while radius <= most:
        found = []
        for point in sphere(target, sizes, radius):
            checked += 1
            if checked > limit:
                return None
            if valid(point):
                found.append(point)
        if found:
            best = min(found, key=lambda p: [(abs(p[c] - target[c]), p[c]) for c in loop_columns])
            return best, radius
        radius += 1
    return None     # no valid point in the whole box: the search proper says the space is empty


class Repairer:
    """Exact repair of one space (`designs.Quantiles` gives the units and subtree counts).

    Down to the work units' depth the search runs over the units' prefixes, each with the box of
    parameter indices its configurations take (`UnitRows.boxes`): a prefix's lower bound is the
    L1 distance from the target to its box, which is the distance of the bound parameters plus a
    bound on the others (so it is never looser than the distance of the parameters bound so far).
    A unit of at most `LIST_ROWS` configurations is listed and its nearest row found in NumPy; a
    larger one is searched loop by loop with compiled subtree counts."""

    engine = "compiled"   # ENGINES; the tests set "python" to run the reference search
    probe_points = PROBE_POINTS   # `nearby`'s limit for `Space.repair` (the tests set 0 to run the search alone)

    def __init__(self, quantiles, nearest=None):
        self.quantiles = quantiles
        self.nearest = nearest                  # () -> the compiled search (`translators.c.nearest`), for `compiled`
        self.rows = quantiles.rows
        self.loop_columns = quantiles.loop_columns
        self.units_searched = 0                 # units whose rows were compared (tests read the work)

    def repair(self, target: tuple[int, ...]) -> tuple[tuple, int]:
        """(the nearest valid configuration in column order, its L1 distance) to `target`
        (parameter indices in column order, each within its value list), by `engine`."""
        self.check_engine()
        if self.engine == "python":
            return self.repair_by_units(target)
        self.quantiles.root()                    # an empty space: EmptySpaceError
        if not self.loop_columns:
            return (), 0
        found = self.nearest().nearest(target)
        if found is None:   # an internal invariant, kept under python -O: the space is not empty
            raise RuntimeError(f"the compiled nearest search found no valid configuration for {target}, "
                               f"in a space of {self.quantiles.root().count} configurations")
        return found

    @classmethod
    def check_engine(cls) -> None:
        if cls.engine not in ENGINES:
            raise ValueError(f"Repairer.engine={cls.engine!r}: expected one of {', '.join(ENGINES)}")

    def repair_by_units(self, target: tuple[int, ...]) -> tuple[tuple, int]:
        """`repair` by the reference search: the units' index boxes, then listed units or
        compiled subtree counts (the class docstring)."""
        self.quantiles.root()                    # an empty space: EmptySpaceError
        if not self.loop_columns:
            return (), 0
        self.best, self.ties = None, None        # best: (distance, key, configuration)
        self.search(target)
        return self.best[2], self.best[0]

    def nearest_all(self, target: tuple[int, ...], distance: int) -> list[tuple]:
        """Every valid configuration (column order) at L1 distance `distance` from `target`, where
        `distance` is that of its repair (none is nearer; `repair` found it): the same search with
        `distance` as the incumbent's from the start, a subtree pruned only when its bound is above
        it, and every configuration reached at it kept. In the search's order (sort to compare)."""
        self.quantiles.root()                    # an empty space: EmptySpaceError
        if not self.loop_columns:
            return []
        self.best, self.ties = (distance, None, None), []
        self.search(target)
        if self.best[0] != distance:             # an internal invariant: `distance` was not the nearest
            raise RuntimeError(f"a valid configuration at distance {self.best[0]} from {target}, nearer than "
                               f"its repair's {distance}")
        return self.ties

    def beyond(self, bound) -> bool:
        """Whether a subtree (or row) whose distance is at least `bound` can be skipped: at or past
        the incumbent's distance, or past it when every configuration at it is kept (`ties`)."""
        if self.best is None:
            return False
        return bound > self.best[0] if self.ties is not None else bound >= self.best[0]

    def search(self, target: tuple[int, ...]) -> None:
        """The branch and bound over the units' prefixes and boxes (the class docstring), offering
        what it reaches to `offer`."""
        import numpy as np
        live, prefixes, starts, sums = self.rows.structure()
        boxes = self.rows.boxes()
        depth = self.rows.units.depth
        t = np.array(target, dtype=np.int64)
        self.units_searched = 0

        def bound(level, lo_g, hi_g):
            lo, hi = boxes[level][0][lo_g:hi_g], boxes[level][1][lo_g:hi_g]
            return (np.maximum(lo - t, 0) + np.maximum(t - hi, 0)).sum(axis=1)

        def visit(d: int, a: int, b: int):
            if d == depth:
                self.search_unit(int(live[a]), int(sums[d][np.searchsorted(starts[d], a)]), t)
                return
            column = self.loop_columns[d]
            g0, g1 = np.searchsorted(starts[d + 1], [a, b])
            lbs = bound(d + 1, g0, g1)
            index = boxes[d + 1][0][g0:g1, column]            # the bound parameter: lo == hi
            order = np.lexsort((index, np.abs(index - t[column])))
            for k in order.tolist():
                if self.beyond(lbs[k]):
                    continue
                g = g0 + k
                visit(d + 1, int(starts[d + 1][g]), int(starts[d + 1][g + 1]) if g + 1 < len(starts[d + 1])
                      else len(live))
        visit(0, 0, len(live))

    def key(self, indices, t):
        """The tie key of configurations (rows of parameter indices): per loop in plan order,
        (|i - t|, i); returns the argsort keys for numpy.lexsort (last = primary)."""
        keys = []
        for column in reversed(self.loop_columns):
            keys.append(indices[:, column])
            keys.append(abs(indices[:, column] - t[column]))
        return keys

    def offer(self, distance: int, config: tuple) -> None:
        if self.best is None or distance < self.best[0]:
            self.best = (distance, None, config)
        elif self.ties is not None and distance == self.best[0]:
            self.ties.append(config)

    def search_unit(self, unit: int, count: int, t) -> None:
        import numpy as np
        self.units_searched += 1
        if count <= self.quantiles.list_rows:
            _, index = self.rows.unit(unit)
            distance = np.abs(index - t).sum(axis=1)
            m = int(distance.min())
            if self.beyond(m):
                return
            near = index[distance == m]
            if self.ties is not None:
                space = self.quantiles.space
                for row in near.tolist():
                    self.offer(m, space.from_param_indices(tuple(row)))
                return
            first = near[np.lexsort(self.key(near, t))[0]] if len(near) > 1 else near[0]
            self.offer(m, self.quantiles.space.from_param_indices(tuple(int(i) for i in first)))
            return
        self.search_counts(unit, t)

    def search_counts(self, unit: int, t) -> None:
        """Branch and bound below a large unit: loops in plan order, values by increasing distance
        from the target index (the smaller index first), bound: the distance of the bound
        parameters; subtrees with no valid completion are never entered (subtree counts)."""
        quantiles = self.quantiles
        columns = self.loop_columns
        positions = quantiles.param_index.positions
        node, path = quantiles.unit_node(unit)
        start = len(path)
        distance0 = sum(abs(positions[columns[d]][v] - int(t[columns[d]])) for d, v in enumerate(path))

        def ordered(path, node, depth):
            column = columns[depth]
            target = int(t[column])
            lookup = positions[column]
            kids = [(abs(lookup[value] - target), lookup[value], value, child)
                    for value, child in quantiles.children(path, node)]
            kids.sort(key=lambda k: (k[0], k[1]))
            return kids

        if start == len(columns):
            self.offer(distance0, tuple(node.env[name] for name in quantiles.space.parameters))
            return
        stack = [(path, distance0, ordered(path, node, start), 0)]
        while stack:
            path, distance, kids, k = stack[-1]
            if k >= len(kids):
                stack.pop()
                continue
            step, _, value, child = kids[k]
            stack[-1] = (path, distance, kids, k + 1)
            reached = distance + step
            if self.beyond(reached):
                stack.pop()     # the rest are no nearer: children are sorted by distance
                continue
            if len(path) + 1 == len(columns):
                self.offer(reached, tuple(child.env[name] for name in quantiles.space.parameters))
                continue
            stack.append((path + (value,), reached, ordered(path + (value,), child, len(path) + 1), 0))
