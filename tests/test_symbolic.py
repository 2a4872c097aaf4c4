"""The SymPy bridge and the interval bounds agree with the Python semantics (property tests)."""
import itertools

import pytest
from hypothesis import assume, given, settings, strategies as st

from solverspace import Space
from solverspace.lang import ir
from solverspace.lang.bounds import Bounds
from solverspace.lang.evaluate import Undefined, evaluate
from solverspace.lang.printing import to_source
from solverspace.lang.symbolic import divisors, from_sympy, simplify, to_sympy

NAMES = ("x", "y", "z")
DOMAINS = {"x": range(-4, 5), "y": range(-3, 4), "z": range(0, 6)}

leaves = st.one_of(st.sampled_from([ir.Ref(n) for n in NAMES]), st.integers(-5, 5).map(ir.Const))


def _extend(children):
    binary = st.tuples(st.sampled_from(["+", "-", "*", "//", "%", "/"]), children, children).map(
        lambda t: ir.BinOp(*t))
    return st.one_of(
        binary,
        children.map(ir.Neg), children.map(ir.Abs),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: ir.Min(tuple(xs))),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: ir.Max(tuple(xs))),
        st.tuples(st.sampled_from(["<", "<=", "==", "!="]), children, children, children, children).map(
            lambda t: ir.IfExp(ir.Compare(t[0], t[1], t[2]), t[3], t[4])),
        children.map(lambda c: ir.BinOp("**", c, ir.Const(2))),
    )


expressions = st.recursive(leaves, _extend, max_leaves=6)


def _value(expr, env):
    try:
        return evaluate(expr, env)
    except Undefined:
        return Undefined


def _points():
    for values in itertools.product(*(DOMAINS[n] for n in NAMES)):
        yield dict(zip(NAMES, values))


POINTS = list(_points())[::7]  # a spread-out sample of the grid


@settings(max_examples=150, deadline=None)
@given(expressions)
def test_round_trip_through_sympy_keeps_values(expr):
    try:
        sym = to_sympy(expr)
    except ValueError:  # a divisor that is zero everywhere: refused, see below
        assume(False)
    back = from_sympy(sym)
    for env in POINTS:
        expected = _value(expr, env)
        if expected is Undefined:
            continue
        assert _value(back, env) == expected, (to_source(expr), to_source(back), env)


@settings(max_examples=60, deadline=None)
@given(expressions)
def test_simplify_keeps_values_where_defined(expr):
    simpler = simplify(expr)
    for env in POINTS:
        expected = _value(expr, env)
        if expected is Undefined:
            assert any(_value(d, env) == 0 for d in divisors(expr))
            continue
        assert _value(simpler, env) == expected, (to_source(expr), to_source(simpler), env)


@settings(max_examples=150, deadline=None)
@given(expressions)
def test_bounds_contain_every_value(expr):
    source = "x = range(-4, 5)\ny = range(-3, 4)\nz = range(0, 6)\n"
    space = Space.from_source(source)
    model = space.model
    from solverspace.lang.model import Derived, Model
    model = Model(model.source, model.parameters, (Derived("d", expr),), (), ())
    interval = Bounds(model).of("d")
    for env in _points():
        value = _value(expr, env)
        if value is not Undefined:
            assert value in interval, (to_source(expr), env, value, str(interval))


def test_gemm_bounds_are_tight_where_it_matters():
    space = Space.load("gemm")
    bounds = Bounds(space.model)
    assert (bounds.of("dim_vec").lo, bounds.of("dim_vec").hi) == (1, 2)
    assert (bounds.of("threads_per_block").lo, bounds.of("threads_per_block").hi) == (1, 1024 * 1024)
    assert bounds.of("max_blocks_by_regs").hi == 16
    assert all(bounds.of(d.name).fits_int64() for d in space.model.derived)


def test_simplify_folds_what_sympy_can():
    expr = ir.BinOp("-", ir.BinOp("*", ir.Ref("x"), ir.Const(2)), ir.Ref("x"))
    assert simplify(expr) == ir.Ref("x")


def test_a_divisor_that_is_always_zero_is_refused_not_converted():
    with pytest.raises(ValueError, match="divides by zero"):
        to_sympy(ir.BinOp("%", ir.Ref("x"), ir.BinOp("-", ir.Ref("y"), ir.Ref("y"))))
    expr = ir.BinOp("//", ir.Ref("x"), ir.Const(0))
    assert simplify(expr) is expr


def test_floor_of_a_fraction_valued_term_keeps_its_floor():
    """Regression (found by the property test): SymPy writes x // (x if x < y else y) as
    floor(x * Piecewise(1/x, 1/y)); `together` leaves that over 1, and the floor must stay."""
    x, y = ir.Ref("x"), ir.Ref("y")
    expr = ir.Abs(ir.BinOp("//", x, ir.IfExp(ir.Compare("<", x, y), x, y)))
    back = from_sympy(to_sympy(expr))
    for env in ({"x": -2, "y": -3}, {"x": 5, "y": 3}, {"x": -7, "y": 2}):
        assert evaluate(back, env) == evaluate(expr, env)


def test_a_conditional_is_not_simplified_by_sympy():
    """Found by the property test above: SymPy simplified `abs(x if abs(x) <= 0 else y)` to
    `abs(y)`, wrong at x = 0, y = -3 (the interval bounds would then have been too narrow)."""
    expr = ir.Abs(ir.IfExp(ir.Compare("<=", ir.Abs(ir.Ref("x")), ir.Const(0)), ir.Ref("x"), ir.Ref("y")))
    simpler = simplify(expr)
    assert _value(simpler, {"x": 0, "y": -3, "z": 0}) == _value(expr, {"x": 0, "y": -3, "z": 0}) == 0
