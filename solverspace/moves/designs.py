"""Conditional quantiles, space-filling designs and conditional samples over the valid set.

**Conditional quantiles** (`Quantiles.from_unit`): a point u of [0, 1)^D (coordinate j for the
j-th parameter in column order, `space.parameters`) maps to one valid configuration, parameter by
parameter in the plan's loop order (`plan.order`, as `explain` shows it). At each loop the
admitted values are taken in value-list order (`solverspace.moves.value_lists`: numbers
ascending, strings in `best`'s tie order), each with its count of valid completions under the
values already chosen (`translators.c.subtree`: compiled subtree counts); the coordinate u_j
picks the value whose cumulative count covers floor(u_j * total), total being the count under
the values chosen so far. floor(u_j * total) is computed exactly from the double u_j (its
binary fraction), never rounded.

So the configuration's probability under a uniform random point is the product, over the loops,
of count(child) / count(parent): 1 / size, exactly uniform (up to the doubles' resolution: a
coordinate is a multiple of 2**-53, so with a total count past 2**53 some values are one step of
2**-53 more likely than others). Values with no valid completion are never chosen: every point
gives a valid configuration, and nothing is snapped to the valid set after the fact.

**Designs** (`unit_design`, `Space.design`): n points of the unit cube from SciPy's
`scipy.stats.qmc` (`lhs`: `LatinHypercube`, `sobol`: scrambled `Sobol`) or NumPy's generator
(`random`), seeded, then mapped by conditional quantiles. Exactly:

- each design point alone is exactly uniform over the valid set (each point of a scrambled LHS
  or Sobol design, and of course a random one, is uniform on the cube);
- for the first parameter of the plan order, an LHS design puts exactly one point in each of the
  n strata [k/n, (k+1)/n) of its cumulative count: the value chosen for the point of stratum k
  has a cumulative-count interval that meets [k * size / n, (k+1) * size / n); so a value whose
  completions are a fraction f of the space is chosen between floor(f * n) - 1 and ceil(f * n) + 1
  times (exactly f * n times when its interval is a union of whole strata);
- for every later parameter the stratification holds for its *conditional* quantile (the
  coordinate is stratified, and it picks among the completions of the values chosen before),
  not for its marginal over the valid set; scrambled Sobol with n a power of two balances every
  coordinate's dyadic intervals the same way.

**Conditional samples** (`sample_given`): uniform over the valid configurations that agree with a
partial assignment `given`. The space with one more constraint per given parameter
(`require(p == v)`) is planned once per distinct `given` (cached on the space, its compiled module
shared by shape with every other value of the same parameters: `translators.c.shapes`), and
sampled by positions like any space: exact, seeded, any given parameters (not only a prefix of
the loop order), categoricals and orders elsewhere in the space included. An assignment with no
valid completion is an error that says so, and why when CP-SAT can tell (the rules that together
rule it out, as `check` prints them).
"""
from __future__ import annotations

import numbers
import warnings
import weakref
from collections.abc import Mapping

from solverspace.core.errors import OptionError, SolverspaceError, SpaceDefinitionError, did_you_mean
from solverspace.core.options import check_seed, check_whole
from solverspace.lang import ir
from solverspace.lang.model import Constraint, ConstraintKind, one_spelling
from solverspace.translators.c.subtree import LIST_ROWS

__all__ = ["METHODS", "EmptySpaceError", "NoCompletionError", "Quantiles", "unit_design", "check_given",
           "given_space", "sample_given"]

METHODS = ("lhs", "sobol", "random")
GIVEN_SPACES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # space -> {given: derived space}


class EmptySpaceError(SolverspaceError, ValueError):
    """A move that needs a valid configuration, on a space that has none."""


class NoCompletionError(SolverspaceError, ValueError):
    """A partial assignment that no valid configuration extends."""


# ---------------------------------------------------------------------------------- quantiles
class Quantiles:
    """Conditional quantiles of one space (module docstring), over the compiled subtree counts.

    The loops down to the work units' depth are chosen from the unit counts (`UnitRows.structure`);
    a unit of at most `LIST_ROWS` configurations is then listed once (cached) and the rest of the
    chain runs over its rows in NumPy (the rows of a unit are exactly the valid configurations
    with its prefix, so the counts are the same); a larger unit is descended loop by loop with
    compiled subtree counts."""

    list_rows = LIST_ROWS   # units listed to finish a move in NumPy (tests lower it to cover the other path)

    def __init__(self, space, counter, key, unit_rows, param_index):
        self.space = space
        self.param_index = param_index         # analysis.value_lists.ParamIndex
        self.counter = counter                 # translators.c.subtree.SubtreeCounter
        self.key = key                         # value-list order (analysis.value_lists.value_key)
        self.rows = unit_rows                  # translators.c.subtree.UnitRows
        self.columns = {name: j for j, name in enumerate(space.parameters)}
        self.loop_columns = [self.columns[level.name] for level in counter.levels]
        self.kids: dict[tuple, list] = {}      # bound values (plan order) -> sorted children with completions

    def children(self, path: tuple, node) -> list:
        """(value, child node) with at least one valid completion, in value-list order (cached)."""
        found = self.kids.get(path)
        if found is None:
            if len(self.kids) >= (1 << 18):
                self.kids.clear()
            found = sorted(((v, c) for v, c in self.counter.expand(node) if c.count), key=lambda vc: self.key(vc[0]))
            self.kids[path] = found
        return found

    def root(self):
        node = self.counter.root()
        if node.count == 0:
            raise EmptySpaceError("the space has no valid configuration: there is nothing to map a point to",
                                  hint="`solverspace check SPACE k=v ...` or `funnel` show which rules reject "
                                       "everything")
        return node

    def unit_node(self, u: int):
        """The subtree-count node of unit `u`'s prefix, and the path of its values."""
        node = self.root()
        path: tuple = ()
        for index in range(self.rows.units.depth):
            name = self.counter.levels[index].name
            value = self.counter.value(name, self.rows.units.prefixes[u][index])
            node = self.counter.bind(node, value)
            path += (value,)
        return node, path

    def from_unit(self, point) -> tuple:
        """The valid configuration at `point` (D coordinates in [0, 1), column order)."""
        import numpy as np
        coordinates = check_point(point, len(self.space.parameters))
        self.root()
        live, prefixes, starts, sums = self.rows.structure()
        depth = self.rows.units.depth
        a, b = 0, len(live)           # the live units under the values chosen so far
        total = int(sums[0][0])
        for d in range(depth):
            column = self.loop_columns[d]
            lo, hi = np.searchsorted(starts[d + 1], [a, b])
            first = starts[d + 1][lo:hi]
            counts = sums[d + 1][lo:hi]
            order = np.argsort(self.rows.column_indices(column, prefixes[first, d]), kind="stable")  # value-list order
            target = target_of(coordinates[column], total)
            for k in order.tolist():
                if target < counts[k]:
                    break
                target -= counts[k]
            else:
                raise AssertionError("unit counts do not sum to their prefix's count")
            a = int(first[k])
            b = int(starts[d + 1][lo + k + 1]) if lo + k + 1 < len(starts[d + 1]) else len(live)
            total = int(counts[k])
        unit = int(live[a])
        if total <= self.list_rows:
            rows, _ = self.rows.unit(unit, indices=False)
            names = self.space.parameters
            for d in range(depth, len(self.loop_columns)):
                column = self.loop_columns[d]
                index = self.rows.column_indices(column, rows[names[column]])
                counts = np.bincount(index)      # per parameter index: value-list order
                target = target_of(coordinates[column], len(rows))
                k = int(np.searchsorted(np.cumsum(counts), target, side="right"))
                rows = rows[index == k]
            if len(rows) != 1:   # an internal invariant, kept under python -O
                raise RuntimeError(f"conditional quantile: {len(rows)} rows left in unit {unit}, expected one "
                                   f"(a unit's rows are distinct configurations)")
            return tuple(self.counter.value(name, rows[name][0]) for name in names)
        node, path = self.unit_node(unit)
        for column in self.loop_columns[depth:]:
            target = target_of(coordinates[column], node.count)
            for value, child in self.children(path, node):
                if target < child.count:
                    break
                target -= child.count
            else:
                raise AssertionError(f"subtree counts below {path} do not sum to {node.count}")
            path += (value,)
            node = child
        return tuple(node.env[name] for name in self.space.parameters)

    def from_unit_many(self, points):
        """A structured array (the dtype of `space.sample`) of the configurations at `points`."""
        import numpy as np
        array = np.asarray(points, dtype=float)
        d = len(self.space.parameters)
        if array.ndim != 2 or array.shape[1] != d:
            raise OptionError(f"points of shape {array.shape}: expected (n, {d}), one coordinate per parameter "
                              f"({', '.join(self.space.parameters)})",
                              hint=f"e.g. numpy.random.default_rng(0).random((10, {d}))")
        configs = [self.from_unit(row) for row in array.tolist()]
        return self.structured(configs)

    def structured(self, configs):
        """Configurations (tuples in column order) as the structured array `space.sample` returns."""
        import numpy as np
        e = self.counter.enumerator
        counter = self.counter
        rows = [tuple(counter.code(name, value) for name, value in zip(self.space.parameters, config))
                for config in configs]
        return e.decode(np.array(rows, dtype=e.generated.dtype))


def target_of(u: float, total: int) -> int:
    """floor(u * total), exactly, for a double u in [0, 1)."""
    numerator, denominator = u.as_integer_ratio()
    return numerator * int(total) // denominator


def check_point(point, d: int) -> list[float]:
    """A point of [0, 1)^d as a list of floats; anything else is refused, naming the coordinate."""
    try:
        coordinates = [float(x) for x in point]
    except (TypeError, ValueError):
        raise OptionError(f"point={point!r}: expected {d} numbers in [0, 1), one per parameter",
                          hint=f"e.g. point={(0.5,) * d!r}") from None
    if len(coordinates) != d:
        raise OptionError(f"point has {len(coordinates)} coordinates; the space has {d} parameters",
                          hint=f"e.g. point={(0.5,) * d!r}")
    for j, x in enumerate(coordinates):
        if not (0.0 <= x < 1.0):
            raise OptionError(f"coordinate {j} of the point is {x!r}: coordinates lie in [0, 1)",
                              hint="scale the point into the half-open unit cube")
    return coordinates


# ---------------------------------------------------------------------------------- designs
#: A design holds at most this many coordinates (n x parameters): 400 MB of unit-cube points, and
#: as much again for the configurations they map to, built whole in memory.
DESIGN_VALUES_LIMIT = 50_000_000


def unit_design(n: int, d: int, method: str = "lhs", seed: int = 0):
    """n points of [0, 1)^d: `lhs` (scipy.stats.qmc.LatinHypercube), `sobol` (scrambled Sobol;
    n a power of two keeps its balance) or `random` (NumPy's PCG64), seeded."""
    import numpy as np
    check_method(method)
    n = check_whole(n, "n", "a whole number of design points")
    if n < 1:
        raise OptionError(f"n={n}: a design needs at least one point", hint="e.g. n=100")
    check_seed(seed)
    if d < 1:
        raise OptionError("a space without parameters has no design", hint="add a parameter")
    if n * d > DESIGN_VALUES_LIMIT:
        raise OptionError(f"n={n:,}: a design of {n:,} points of {d} parameters is {n * d:,} coordinates "
                          f"({n * d * 16 / 2 ** 30:,.1f} GiB with the configurations), more than the "
                          f"{DESIGN_VALUES_LIMIT:,} (n x parameters) a design is made of",
                          hint=f"n={DESIGN_VALUES_LIMIT // d:,} at most; for more configurations, "
                               f"space.sample(n, seed) draws them uniformly without a design")
    if method == "random":
        return np.random.default_rng(seed).random((n, d))
    from scipy.stats import qmc
    make = qmc.LatinHypercube if method == "lhs" else qmc.Sobol
    options = {"scramble": True}
    try:
        engine = make(d, rng=np.random.default_rng(seed), **options)
    except TypeError:   # SciPy before 1.15 names it `seed`
        engine = make(d, seed=np.random.default_rng(seed), **options)
    with warnings.catch_warnings():   # Sobol's note that n is not a power of two: documented instead
        warnings.simplefilter("ignore", UserWarning)
        points = engine.random(n)
    return np.minimum(points, np.nextafter(1.0, 0.0))   # [0, 1): a coordinate of exactly 1.0 cannot occur


def check_method(method) -> str:
    if not isinstance(method, str) or method not in METHODS:
        raise OptionError(f"method={method!r}: unknown design method",
                          hint=f"methods: {', '.join(METHODS)}")
    return method


# ---------------------------------------------------------------------------------- conditional samples
def check_given(space, given) -> dict:
    """`given` as {parameter: value}: names as Python reads them, each a parameter, each value in
    its value list (`space.value_lists()`), no order-valued parameter."""
    from solverspace.lang.kinds import ORDER
    if not isinstance(given, Mapping):
        raise OptionError(f"given={given!r}: expected a dict {{parameter: value}}",
                          hint=f"e.g. given={{{space.parameters[0]!r}: ...}}" if space.parameters else None)
    spelled: dict = {}
    result = {}
    lists = None
    for name, value in given.items():
        if not isinstance(name, str):
            raise OptionError(f"given has the key {name!r}: keys are parameter names")
        name = one_spelling(spelled, name, "parameter")
        if name not in space.model.parameter:
            raise SpaceDefinitionError(f"given: {name!r} is not a parameter of this space",
                                       hint=did_you_mean(name, space.parameters))
        if space.model.kinds.of(name) == ORDER:
            raise SpaceDefinitionError(f"given: {name!r} is an order-valued parameter; a conditional sample "
                                       f"pins integer or string parameters only",
                                       hint="leave the order free, or filter the samples")
        if lists is None:
            lists = space.value_lists()
        values = lists[name]
        if isinstance(value, bool) or not isinstance(value, (numbers.Integral, str)) or value not in values:
            shown = ", ".join(map(repr, values[:8])) + (", ..." if len(values) > 8 else "")
            raise SpaceDefinitionError(f"given: {name}={value!r} is not in parameter {name!r}'s value list "
                                       f"({len(values)} values: {shown})",
                                       hint="give a value the parameter can take (space.value_lists())")
        result[name] = int(value) if not isinstance(value, str) else value
    return result


def given_space(space, given: dict):
    """The space with `require(p == v)` for each given parameter (one constraint each, named
    `given_p`), planned once per distinct `given` and kept on `space`."""
    cache = GIVEN_SPACES.setdefault(space, {})
    key = tuple(sorted(given.items()))
    if key not in cache:
        model = space.model
        taken = set(model.constraint) | set(model.parameter) | set(model.derived_value)
        extra = []
        for name, value in given.items():
            label = f"given_{name}"
            while label in taken:
                label += "_"
            taken.add(label)
            extra.append(Constraint(label, ir.Compare("==", ir.Ref(name), ir.Const(value)), False,
                                    ConstraintKind.EXPRESSION))
        derived = type(space)(model.replace(constraints=model.constraints + tuple(extra)))
        if len(cache) >= 64:
            cache.pop(next(iter(cache)))
        cache[key] = derived
    return cache[key]


def sample_given(space, n: int, seed: int, given, *, replace: bool = False, method: str = "exact", threads=None):
    """(structured array, `sampling.SampleInfo`) of n configurations uniform over the valid ones
    that agree with `given`; no such configuration: `NoCompletionError` saying why."""
    given = check_given(space, given)
    derived = given_space(space, given)
    backend = {"exact": "c", "reference": "reference"}.get(method, "cpsat")
    if derived.count(backend, **({"threads": threads} if backend == "c" else {})) == 0:
        raise NoCompletionError(no_completion_message(space, given),
                                hint="`solverspace check SPACE k=v ...` finds a completion of a partial "
                                     "assignment, or the rules that rule it out")
    return derived.draw(n, seed, replace=replace, method=method, threads=threads)


def no_completion_message(space, given: dict) -> str:
    """'no valid configuration has ...' and, when CP-SAT can tell within 10 s, the rules that together
    rule the assignment out (as `solverspace check` prints them)."""
    from solverspace.core.orders import format_value
    shown = " ".join(f"{k}={format_value(v)}" for k, v in given.items())
    message = f"no valid configuration has {shown}"
    try:
        result = space.complete(dict(given), "cpsat", time_limit=10.0, workers=1)
    except SolverspaceError:   # no OR-Tools, or a construct CP-SAT cannot lower: no reason given
        return message
    if result.feasible is False:
        if not result.conflict and not result.undefined:
            return message + ": ruled out by the parameters' domains alone"
        rules = result.describe(space.model)
        return message + ": ruled out by these rules together: " + "; ".join(line.strip() for line in rules)
    return message
