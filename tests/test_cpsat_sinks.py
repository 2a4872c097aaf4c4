"""CP-SAT counting with sinks counted in Python (issue 13, the Hotspot T1 files): a parameter
whose conditions accept some value of it whatever the others are (Hotspot's `blocks_per_sm`,
default 0) is left out of the CP-SAT enumeration; each solution of the rest is weighed by the
number of its accepted values, memoised on the values of the sub-expressions that do not read it
(`translators/cpsat/sinks.py`). Counts must equal the reference's."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings

from solverspace import Space
from solverspace.validation.generate import independent_spaces, spaces
from tests.helpers import HOTSPOT_LIKE as CONDITIONED_HOTSPOT, assert_cpsat_matches_reference

pytestmark = pytest.mark.needs_cpsat

# Hotspot's shape (tests/test_cpsat_conditioned.py's, with `blocks_per_sm`): `bps` (default 0)
# is read only through the shared-memory product, `u` (default 1) only by `t % u == 0`; the rest
# is one component with no articulation once they are summed.
HOTSPOT_LIKE = CONDITIONED_HOTSPOT + """bps = iterator([0, 1, 2, 3, 4])
require((bps == 0) | ((bx * tx + 2 * t) * (by * ty + 2 * t) * (2 + sh) * bps <= 4000))
"""


def _counter(space):
    from solverspace.translators.cpsat.count import Counter
    from solverspace.translators.cpsat.solver import Options
    return Counter(space.model, space.plan, Options(workers=1))


def test_hotspot_shape_sums_its_sinks_in_python():
    space = Space.from_source(HOTSPOT_LIKE)
    counter = _counter(space)
    result = counter.count(counter.full_problem(), None)
    assert result.strategy == "joint, u, bps counted in Python"
    assert result.exact and result.count == space.count("reference")
    # CP-SAT lists the solutions of the other six parameters only, each once
    shared = {}
    for bx, by, tx, ty, t, sh in itertools.product([1, 2, 4, 8, 16, 32, 64], [1, 2, 4, 8, 16], range(1, 9),
                                                   range(1, 9), range(1, 11), [0, 1]):
        product = (bx * tx + 2 * t) * (by * ty + 2 * t) * (2 + sh)
        if bx * by >= 8 and product <= 2000:
            shared[bx, by, tx, ty, t, sh] = product
    assert result.solutions == len(shared) < result.count
    # bps's weight is memoised on the product (its only key), u's on t
    sinks = {w.param: w.sink for found in counter.sink_memo.values() for w, _ in found}
    assert set(sinks) == {"u", "bps"}
    assert len(sinks["bps"].memo) == len(set(shared.values()))
    assert len(sinks["u"].memo) == 10


def test_a_sink_without_a_default_is_enumerated():
    """`s` must exceed `a`: no value of `s` is accepted whatever `a` is, so CP-SAT enumerates it
    (`b` has one: 0)."""
    space = Space.from_source("a = range(0, 8)\nb = range(0, 8)\ns = range(0, 8)\n"
                              "require(a + b < 9)\nrequire(s > a)\n")
    result = _counter(space).count(_counter(space).full_problem(), None)
    assert result.strategy == "joint, b counted in Python"
    assert result.count == space.count("reference")


def test_undefined_keys_are_undefined_only_where_read():
    """The key `a // d` is evaluated eagerly; it is undefined at d == 0, where the condition reads
    it only when `s` is not 0 (and `d == 0 or ...` never reads it). The derived value reads the
    sink and may be undefined (its definedness is one of the sink's conditions)."""
    source = ("a = range(0, 6)\nd = range(0, 3)\ns = iterator([0, 1, 2, 3])\n"
              "require(a + d < 7)\n"
              "require((s == 0) | (a // d >= s))\n"
              "require((s == 0) | (d == 0) | (a % d + s < 4))\n"
              "r = 6 // (s - 3)\n"
              "require(r + a > -9)\n")
    space = Space.from_source(source)
    counter = _counter(space)
    result = counter.count(counter.full_problem(), None)
    assert "s counted in Python" in result.strategy
    expected = space.stats("reference")  # the reference
    assert result.count == expected.count
    from solverspace.translators.cpsat.backend import count
    got = count(space)
    assert (got.count, got.undefined, got.undefined_by) == (expected.count, expected.undefined, expected.undefined_by)


def test_the_sampler_still_draws_every_parameter():
    """The exact sampler lists its tables over every parameter: no sink is summed there."""
    import numpy as np
    from solverspace.translators.cpsat.sample import SelfReducibleSampler
    space = Space.from_source(HOTSPOT_LIKE)
    sampler = SelfReducibleSampler(space.plan)
    assert sampler.size() == space.count("reference")
    draws = sampler.draw(20, np.random.default_rng(3))
    assert len(draws) == 20 and all(set(d) == set(space.plan.order) for d in draws)


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(source=independent_spaces() | spaces())
def test_generated_spaces_with_every_candidate_summed_agree_with_the_reference(source):
    """With the default proof skipped, every parameter that qualifies as a sink is counted in
    Python (the proof only decides whether that pays; the count is exact either way)."""
    from solverspace.translators.cpsat import count as cpsat_count
    saved = cpsat_count.Counter.has_default
    cpsat_count.Counter.has_default = lambda self, *args: True
    try:
        assert_cpsat_matches_reference(source)
    finally:
        cpsat_count.Counter.has_default = saved


def test_native_keys_mean_what_the_evaluator_means():
    """Key sub-expressions over integer parameters run as native Python; division or modulo by
    zero raises ZeroDivisionError exactly where the evaluator raises Undefined, and values (and
    their types) agree; anything else (`/`, strings, orders) keeps the evaluator."""
    from solverspace.lang import ir
    from solverspace.lang.evaluate import Undefined, compile_expr
    from solverspace.translators.cpsat.sinks import key_function, native_function
    a, b, c = ir.Ref("a"), ir.Ref("b"), ir.Ref("c")
    nodes = [
        ir.BinOp("*", ir.BinOp("+", a, ir.Const(2)), ir.BinOp("-", b, c)),
        ir.BinOp("//", a, b), ir.BinOp("%", ir.Neg(a), b),
        ir.IfExp(ir.Compare("==", b, ir.Const(0)), a, ir.BinOp("//", a, b)),
        ir.Min((a, ir.Abs(b), ir.BinOp("%", c, ir.Const(3)))), ir.Max((a, b)),
        ir.Compare("<=", ir.BinOp("*", a, b), c), ir.BinOp("+", ir.Compare("<", a, b), ir.Const(True)),
    ]
    ints = frozenset("abc")
    for node in nodes:
        assert native_function(node, ints) is not None
        native, reference = key_function(node, ints), compile_expr(node)
        for env in ({"a": x, "b": y, "c": z} for x in range(-3, 4) for y in range(-2, 3) for z in (-1, 0, 5)):
            try:
                expected = reference(env)
            except Undefined:
                with pytest.raises(ZeroDivisionError):
                    native(env)
                continue
            got = native(env)
            assert (got, type(got)) == (expected, type(expected)), (node, env)
    assert native_function(ir.BinOp("/", a, b), ints) is None
    assert native_function(ir.BinOp("+", a, b), frozenset("a")) is None   # b may be a string
