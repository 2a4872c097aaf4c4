"""The moves past neighbours, against brute force over the listed space: conditional
quantiles and designs, repair, conditional samples.

`check_moves_b(space, rows=None, ...)` returns a list of problems (empty: all agree):

- `from_unit` of random points equals the conditional quantile computed from the list (loops in
  plan order, values in value-list order, floor(u * count) located in the cumulative counts of
  the rows that agree with the values chosen so far);
- every point of an `lhs`, `sobol` and `random` design is a valid configuration; the LHS design
  puts exactly one point in each of its n strata of the first loop's coordinate, and that point's
  value of the first loop's parameter is the one whose cumulative count covers it;
- `repair` of points of the index box is at the brute-force minimum L1 distance, and is the
  configuration with the smallest tie key (|i - t|, i) per loop in plan order among those; the
  points are drawn so that ties come first (`repair_targets`);
- conditional samples (`sample(given=...)`) agree with `given`, are valid, and pass a chi-square
  test against the uniform distribution on the valid configurations that agree with `given`
  (p above `P_MIN`); a `given` no valid configuration extends is refused with `NoCompletionError`.

A space with order-valued parameters must refuse the quantile moves with a message
(`UnsupportedConstruct`); a space the C backend refuses is skipped (returns no problem).

`counts` says whose counts the quantiles and repair run over: `"c"` (the space's own moves, over
the compiled subtree counts: a C module per space) or `"listed"` (the same moves' code,
`designs.Quantiles` and `repair.Repairer`, over counts from the listed rows,
`validation.moves_listed`: nothing compiled, so the tests run it on hundreds of generated spaces);
with `"listed"`, `depth` (the loops that are work units) and `list_rows` (units of at most that
many configurations are listed, larger ones descended by counts; `EVERY_UNIT`: all listed) are
drawn from the seed unless given, so the moves' different paths all run.
"""
from __future__ import annotations

import random
from collections import Counter

from solverspace.core.errors import SolverspaceError
from solverspace.translators.order_slots import OrderSlots
from solverspace.moves import designs, repair   # read at each call: a test may replace what they hold
from solverspace.translators.errors import UnsupportedConstruct
from solverspace.validation.moves_listed import listed_quantiles

__all__ = ["P_MIN", "COUNTS", "EVERY_UNIT", "check_moves_b", "quantile_by_list", "repair_by_list",
           "repair_targets"]

P_MIN = 1e-4
COUNTS = ("c", "listed")   # whose counts the quantiles and repair run over (module docstring)
EVERY_UNIT = 1 << 62        # `list_rows` that lists every unit (none is descended by counts)


class SpaceMoves:
    """The space's own moves (its compiled subtree counts)."""

    def __init__(self, space):
        self.space = space

    def from_unit(self, point):
        return self.space.from_unit(point)

    def from_unit_many(self, points):
        return self.space.from_unit_many(points)

    def design(self, n: int, method: str, seed: int):
        return self.space.design(n, method, seed)

    def repair(self, target: tuple) -> tuple[tuple, int]:
        return self.space.repair(indices=target), self.space.repair_distance(indices=target)


class ListedMoves(SpaceMoves):
    """The same moves' code over counts from the listed rows (`validation.moves_listed`)."""

    def __init__(self, space, rows, depth: int, list_rows: int | None):
        super().__init__(space)
        self.quantiles = listed_quantiles(space, rows, depth, list_rows)

    def from_unit(self, point):
        return self.quantiles.from_unit(point)

    def from_unit_many(self, points):
        return self.quantiles.from_unit_many(points)

    def design(self, n: int, method: str, seed: int):
        return self.quantiles.from_unit_many(designs.unit_design(n, len(self.space.parameters), method, seed))

    def repair(self, target: tuple) -> tuple[tuple, int]:
        repairer = repair.Repairer(self.quantiles)
        repairer.engine = "python"   # the search over units and counts, not a compiled one (nothing is compiled)
        return repairer.repair(target)


def quantile_by_list(space, rows, point) -> tuple:
    """The conditional quantile of `point` computed from the listed valid configurations."""
    index = space.param_indices
    columns = {name: j for j, name in enumerate(space.parameters)}
    left = [tuple(r) for r in rows]
    for name in space.plan.order:
        j = columns[name]
        counts = Counter(index(r)[j] for r in left)
        target = point[j].as_integer_ratio()
        target = target[0] * len(left) // target[1]
        for i in sorted(counts):
            if target < counts[i]:
                break
            target -= counts[i]
        left = [r for r in left if index(r)[j] == i]
    if len(left) != 1:   # the listed rows are distinct configurations
        raise RuntimeError(f"brute-force quantile: {len(left)} rows left, expected one")
    return left[0]


def repair_by_list(space, rows, target) -> tuple[tuple, int]:
    """(the nearest configuration with the documented tie, its distance) by brute force."""
    columns = [space.parameters.index(name) for name in space.plan.order]
    best = None
    for r in rows:
        i = space.param_indices(r)
        distance = sum(abs(a - b) for a, b in zip(i, target))
        key = (distance, tuple(x for j in columns for x in (abs(i[j] - target[j]), i[j])))
        if best is None or key < best[0]:
            best = (key, tuple(r))
    return best[1], best[0][0]


def repair_targets(space, rows, n: int, rng: random.Random) -> list[tuple]:
    """n points of the index box to repair, ties first: from 8n candidates (random points of the
    box, and midpoints of two random valid configurations' indices, which are often equally near
    both), those with more than one valid configuration at the smallest distance come first, so
    the tie order is checked and not only the distance."""
    import numpy as np
    sizes = [len(v) for v in space.value_lists().values()]
    index = np.array([space.param_indices(r) for r in rows], dtype=np.int64).reshape(len(rows), len(sizes))
    candidates = [tuple(rng.randrange(s) for s in sizes) for _ in range(4 * n)]
    for _ in range(4 * n):
        a, b = rng.choice(index), rng.choice(index)
        candidates.append(tuple(int(x) for x in (a + b) // 2))

    def tied(target) -> bool:
        distance = np.abs(index - np.array(target, dtype=np.int64)).sum(axis=1)
        return int((distance == distance.min()).sum()) > 1
    return sorted(candidates, key=lambda target: not tied(target))[:n]   # stable: in drawing order otherwise


def check_moves_b(space, rows=None, *, points: int = 8, targets: int = 8, givens: int = 3, n_design: int = 7,
                  seed: int = 0, sample_method: str = "exact", counts: str = "c", depth: int | None = None,
                  list_rows: int | None = None) -> list[str]:
    """Problems found comparing the moves with brute force (module docstring)."""
    if counts not in COUNTS:
        raise ValueError(f"counts={counts!r}: expected one of {COUNTS}")
    problems: list[str] = []
    rows = [tuple(r) for r in (space.rows("reference") if rows is None else rows)]
    valid = set(rows)
    d = len(space.parameters)
    rng = random.Random(seed)
    if OrderSlots.through_slots(space.plan):   # orders: the moves refuse them (translators/c/subtree.py)
        try:
            space.from_unit((0.5,) * d)
            problems.append("from_unit accepted a space with orders")
        except UnsupportedConstruct:
            pass
        return problems
    if d == 0:
        return problems
    if counts == "listed":
        paths = random.Random(f"{seed} paths")   # its own stream: the points drawn below stay the same
        depth = paths.randint(0, d) if depth is None else depth
        list_rows = paths.choice([0, 1, 4, EVERY_UNIT]) if list_rows is None else list_rows
        moves = ListedMoves(space, rows, depth, list_rows)
    else:
        moves = SpaceMoves(space)
    if not rows:
        calls = [("from_unit", lambda: moves.from_unit((0.5,) * d))]
        if all(space.value_lists().values()):    # an empty value list: the index box has no point
            calls.append(("repair", lambda: moves.repair((0,) * d)))
        for what, call in calls:
            try:
                call()
                problems.append(f"{what} on an empty space gave an answer")
            except designs.EmptySpaceError:
                pass
        return problems
    # ---------------------------------------------------------------- quantiles and designs
    for _ in range(points):
        point = tuple(rng.random() for _ in range(d))
        got, want = moves.from_unit(point), quantile_by_list(space, rows, point)
        if got != want:
            problems.append(f"from_unit{point} = {got}, the list's conditional quantile is {want}")
    for method in ("lhs", "sobol", "random"):
        design = moves.design(n_design, method, seed)
        for row in design.tolist():
            if tuple(row) not in valid:
                problems.append(f"{method} design point {row} is not a valid configuration")
    first = space.plan.order[0]
    j = space.parameters.index(first)
    units = designs.unit_design(n_design, d, "lhs", seed)
    strata = sorted(int(u * n_design) for u in units[:, j])
    if strata != list(range(n_design)):
        problems.append(f"LHS strata of {first} are {strata}, not one per stratum")
    counts = Counter(space.param_indices(r)[j] for r in rows)
    cumulative, start = {}, 0
    for i in sorted(counts):
        cumulative[i] = (start, start + counts[i])
        start += counts[i]
    for point, row in zip(units, moves.from_unit_many(units).tolist()):
        target = float(point[j]).as_integer_ratio()
        target = target[0] * len(rows) // target[1]
        lo, hi = cumulative[space.param_indices(tuple(row))[j]]
        if not lo <= target < hi:
            problems.append(f"LHS point {point.tolist()}: {first}={row[j]} covers [{lo}, {hi}), not {target}")
    # ---------------------------------------------------------------- repair
    for target in repair_targets(space, rows, targets, rng):
        got, distance = moves.repair(target)
        want, want_distance = repair_by_list(space, rows, target)
        if (got, distance) != (want, want_distance):
            problems.append(f"repair(indices={target}) = {got} at {distance}; brute force: {want} at {want_distance}")
    # ---------------------------------------------------------------- conditional samples
    for _ in range(givens):
        base = rng.choice(rows)
        names = rng.sample(range(d), rng.randint(1, d))
        given = {space.parameters[k]: base[k] for k in names}
        agree = [r for r in rows if all(r[k] == base[k] for k in names)]
        n = max(60, 20 * len(agree))
        drawn = [tuple(r) for r in space.sample(n, seed, given=given, replace=True, method=sample_method).tolist()]
        strays = [r for r in drawn if r not in agree]
        if strays:
            problems.append(f"sample(given={given}) drew {strays[0]}, which does not agree or is not valid")
            continue
        if len(agree) > 1:
            from scipy import stats
            observed = Counter(drawn)
            p = stats.chisquare([observed.get(r, 0) for r in agree]).pvalue
            if p < P_MIN:
                problems.append(f"sample(given={given}): chi-square p = {p:.2g} against uniform on {len(agree)}")
    lists = space.value_lists()
    for _ in range(min(givens, 1)):
        given = {name: rng.choice(lists[name]) for name in rng.sample(space.parameters, min(2, d))}
        agree = any(all(r[space.parameters.index(k)] == v for k, v in given.items()) for r in rows)
        if agree:
            continue
        try:
            space.sample(1, seed, given=given, method=sample_method)
            problems.append(f"sample(given={given}) drew a configuration; none agrees with it")
        except designs.NoCompletionError:
            pass
        except SolverspaceError as exc:
            problems.append(f"sample(given={given}) refused with {type(exc).__name__}, not NoCompletionError: {exc}")
    return problems
