"""The CP-SAT lowering against solverspace.lang.evaluate, operator by operator.

Each check lowers an expression of two parameters `x` and `y` (value lists with negative values
and zeros), enumerates every solution of the CP-SAT model and compares, for every (x, y), the
lowered value and definedness with Python's (`solverspace.lang.evaluate`). Counting the solutions also
checks that the lowering's auxiliary variables are functions of the parameters: exactly one
solution per (x, y).
"""
from __future__ import annotations

import itertools
import textwrap
from fractions import Fraction

import pytest

pytest.importorskip("ortools")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from ortools.sat.python import cp_model  # noqa: E402

from solverspace import Space  # noqa: E402
from solverspace.core.errors import BackendUnavailableError, SpaceEvaluationError  # noqa: E402
from solverspace.lang.evaluate import Undefined, evaluate  # noqa: E402
from solverspace.translators.cpsat.backend import CpSatRefusal, Lowering, count  # noqa: E402

XS = [-7, -3, -2, -1, 0, 1, 2, 3, 5]
YS = [-4, -2, -1, 0, 1, 3, 4]
PROPERTY = settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def body_space(body: str, xs=XS, ys=YS) -> Space:
    """A space whose constraint `c` has `body` as its (lowered) expression."""
    return Space.from_source(f"x = iterator({xs})\ny = iterator({ys})\n"
                             f"@require\ndef c(x, y):\n    return {body}\n")


class _Table(cp_model.CpSolverSolutionCallback):
    def __init__(self, lowering, val, ok):
        super().__init__()
        self.lowering, self.val, self.ok = lowering, val, ok
        self.rows: dict = {}
        self.solutions = 0

    def on_solution_callback(self):
        self.solutions += 1
        x = self.value(self.lowering.param_vars["x"])
        y = self.value(self.lowering.param_vars["y"])
        defined = self.ok if isinstance(self.ok, bool) else self.boolean_value(self.ok)
        self.rows[(x, y)] = self.lowering.value_of(self.val, self) if defined else "undefined"


def lowered_table(body: str, xs=XS, ys=YS) -> dict:
    s = body_space(body, xs, ys)
    lowering = Lowering(s.model)
    lowering.require_domain("x")
    lowering.require_domain("y")
    val, ok = lowering.lower(s.model.constraint["c"].expr)
    table = _Table(lowering, val, ok)
    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.num_workers = 1
    status = solver.solve(lowering.cp, table)
    assert solver.status_name(status) == "OPTIMAL"
    assert table.solutions == len(xs) * len(ys), "auxiliary variables must be functions of the parameters"
    return table.rows


def python_table(body: str, xs=XS, ys=YS) -> dict:
    expr = body_space(body, xs, ys).model.constraint["c"].expr
    rows = {}
    for x, y in itertools.product(xs, ys):
        try:
            rows[(x, y)] = evaluate(expr, {"x": x, "y": y})
        except Undefined:
            rows[(x, y)] = "undefined"
    return rows


def assert_same(body: str, xs=XS, ys=YS):
    got, expected = lowered_table(body, xs, ys), python_table(body, xs, ys)
    for key in expected:
        assert got[key] == expected[key], f"{body} at x, y = {key}: CP-SAT {got[key]!r}, Python {expected[key]!r}"
        if isinstance(expected[key], Fraction):
            assert isinstance(got[key], Fraction)


# ----------------------------------------------------------------------------- one operator each
@pytest.mark.parametrize("body", [
    "x // y", "x % y", "x / y", "x / y < 1", "x / y >= -1", "x / y == y / x", "(x + 1) / (y - 1) > x / 3",
    "x * y", "x - y", "-x + 2 * y", "x ** 2", "y ** 3", "x ** 0", "abs(x)", "abs(x - y)", "min(x, y)",
    "max(x, y, 0)", "min(x / 2, y)", "max(x / y, y / 3)", "abs(x / y)", "x // y // 2", "(x % y) % 3",
    "x // 3", "x % -3", "x // -2", "7 // x", "-7 % x", "x / 2 + y / 3", "(x / y) // 1", "(x / 3) % (y / 2)",
    "x if y > 0 else -x", "x // y if y != 0 else 0", "x / y if y else x", "y == 0 or x // y < 2",
    "y != 0 and x % y == 0", "x and y", "x or y", "not x", "not (x // y)", "x > 0 and y > 0 or x < y",
    "(x // y) if x > y else (y // x)", "min(x // y, 3) if y else max(x, y)", "x == y", "x != 2 * y",
    "x < y <= 3", "(x / y) * (y / x)", "x / y - y / x", "(x * y) // (x - y)",
])
def test_operator_matches_python(body):
    assert_same(body)


# ----------------------------------------------------------------------------- property tests
def operand_lists():
    return st.lists(st.integers(-9, 9), min_size=1, max_size=6, unique=True)


@PROPERTY
@given(xs=operand_lists(), ys=operand_lists(), op=st.sampled_from(["//", "%", "/"]))
def test_division_operators_on_any_signs(xs, ys, op):
    assert_same(f"x {op} y", xs, ys)
    assert_same(f"y {op} x", xs, ys)


@PROPERTY
@given(xs=operand_lists(), ys=operand_lists(), k=st.integers(-5, 5),
       cmp=st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
def test_fraction_comparisons_are_exact(xs, ys, k, cmp):
    assert_same(f"x / y {cmp} {k}", xs, ys)
    assert_same(f"(x + {k}) / (y - 1) {cmp} y / (x + 20)", xs, ys)


@PROPERTY
@given(xs=operand_lists(), ys=operand_lists(), guard=st.sampled_from(["y == 0 or", "y != 0 and", "x > y and"]))
def test_short_circuit_guards(xs, ys, guard):
    assert_same(f"{guard} x // y < 2", xs, ys)
    assert_same(f"{guard} x % y == 1", xs, ys)


leaves = st.one_of(st.sampled_from(["x", "y"]), st.integers(-4, 4).map(str))


def extend(children):
    binary = st.tuples(st.sampled_from(["+", "-", "*", "//", "%", "/"]), children, children).map(
        lambda t: f"({t[1]} {t[0]} {t[2]})")
    unary = st.tuples(st.sampled_from(["-", "abs"]), children).map(
        lambda t: f"(-{t[1]})" if t[0] == "-" else f"abs({t[1]})")
    nary = st.tuples(st.sampled_from(["min", "max"]), children, children).map(lambda t: f"{t[0]}({t[1]}, {t[2]})")
    conditional = st.tuples(children, st.sampled_from(["<", "==", "!="]), children, children, children).map(
        lambda t: f"({t[3]} if {t[0]} {t[1]} {t[2]} else {t[4]})")
    return st.one_of(binary, unary, nary, conditional)


expressions = st.recursive(leaves, extend, max_leaves=5)
conditions = st.recursive(
    st.tuples(expressions, st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), expressions).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"),
    lambda c: st.tuples(c, st.sampled_from(["and", "or"]), c).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
    | c.map(lambda t: f"(not {t})"),
    max_leaves=3)


@PROPERTY
@given(expressions)
def test_random_expressions_match_python(body):
    assert_same(body, XS[::2], YS[::2])


@PROPERTY
@given(conditions)
def test_random_conditions_match_python(body):
    assert_same(body, XS[::2], YS[::2])


# ----------------------------------------------------------------------------- categorical values
def test_categorical_values_are_codes_compared_for_equality():
    s = Space.from_source(textwrap.dedent("""
        kind = iterator(["tex", "ldg", ""])
        x = range(0, 4)
        @require
        def c(kind, x):
            if kind == "tex":
                return x > 1
            return kind != "ldg" or x == 0
        label = if_then_else(x > 2, "big", "small")
        require((label != "big") | (kind == ""))
        """))
    assert count(s, workers=1).count == s.count("reference")


def test_ordering_categorical_values_is_refused_with_the_line():
    from solverspace.lang.kinds import KindError
    with pytest.raises(KindError, match=r"cat\.py:3: .*`kind < 'b'` orders the categorical"):  # at load
        Space.from_source('kind = iterator(["a", "b"])\nx = range(3)\nrequire(kind < "b")\n', filename="cat.py")


def test_bounds_beyond_64_bits_are_refused_with_the_expression_and_line():
    s = Space.from_source("x = range(2, 1000)\ny = range(1, 3)\nbig = x ** 9 * y ** 9\nrequire(big > 5)\n",
                          filename="big.py")
    with pytest.raises(CpSatRefusal, match=r"big\.py:3: .*derived value 'big'.*64-bit"):
        count(s)
    assert isinstance(CpSatRefusal("x"), BackendUnavailableError)


def test_a_reachable_range_step_of_zero_is_an_error_like_the_reference():
    s = Space.from_source("a = range(-1, 2)\nx = range(0, 5, a)\n")
    with pytest.raises(SpaceEvaluationError, match="range step is 0"):
        s.count("reference")
    with pytest.raises(SpaceEvaluationError, match=r"range step is 0.*a=0"):
        count(s)
    guarded = Space.from_source("a = range(-1, 2)\nrequire(a != 0)\nx = range(0, 5, a)\n")
    assert count(guarded).count == guarded.count("reference") == 5


def test_fraction_in_a_domain_is_refused():
    s = Space.from_source("a = range(1, 4)\nx = range(0, a / 2)\n", filename="frac.py")
    with pytest.raises(CpSatRefusal, match=r"(?s)frac\.py:2: .*fraction.*use //"):
        count(s)


def test_doctests_and_listing_is_refused():
    import doctest

    import solverspace.translators.cpsat.backend as cpsat_module
    assert doctest.testmod(cpsat_module).failed == 0
    s = Space.from_source("x = range(3)")
    with pytest.raises(BackendUnavailableError, match="cpsat backend cannot list configurations") as refused:
        list(s.rows("cpsat"))
    assert refused.value.hint == "backends that can: auto, c, reference"
