"""Sweeps on the base point's module (`lanes.top_program`, `lanes.run_top`, issue 28): where the
count of the base settings has built its module and the points differ from it only in their outer
loops, a sweep compiles only those loops, and the base module counts each prefix's subtree for
every point. The counts and undefined tallies equal counting each point on its own; what would
not be exact (a derived value that differs by point, a difference below the work units' depth, an
undefined operation inside a memoised group) is refused or handed to the whole lane walk."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from solverspace import Space
from solverspace.registry.backends import get_backend
from solverspace.scale.sweep import sweep
from solverspace.translators.c.build import cache_dir
from solverspace.translators.c.lanes import MEMO_LOOKUP, LaneError, LaneWalk, NotLaneable, run_top, top_program
from solverspace.validation.generate import spaces
from tests.helpers import generated

pytestmark = pytest.mark.needs_cc


def per_point(source, values) -> list[tuple[int, int]]:
    """(count, undefined) of each value of S counted on its own."""
    return [(p.count, p.undefined) for p in sweep(lambda s: Space.from_source(source, s), {"S": [str(v) for v in values]},
                                                  "c", one_pass=False, threads=1)]


def on_base(source, values):
    """The top program of these values of S over the base point (S at its default), and its
    answers [(count, undefined)] (None where `run_top` hands them on); NotLaneable propagates."""
    c = get_backend("c", threads=1)
    base = Space.from_source(source).plan
    program = top_program([Space.from_source(source, {"S": str(v)}).plan for v in values], base, c.options)
    result = run_top(program, c.enumerator(base))
    return program, None if result is None else list(zip(result.counts, result.undefined))


def top_entries(folder) -> list[int]:
    """The depths of the top programs remembered in the cache."""
    entries = [json.loads(p.read_text()) for p in folder.glob("lanes_*.json")]
    return [e["top"] for e in entries if e.get("top")]


TEST_ABOVE = """
S = 3
x = range(1, 20)
y = range(1, 30)
z = range(1, 10)
require(x + S < 15)
require((x * y * z) % 3 != 1)
"""

DOMAIN_AT_SECOND = """
S = 2
x = range(1, 12)
y = range(0, x + S)
z = range(0, 8)
require(y + z != x)
require(z * y < 40 + x)
"""

DERIVED = """
S = 2
x = range(1, 12)
y = range(0, 9)
d = x * S
require(d + y < 30)
require(y != x)
"""

UNDEFINED = """
S = 2
x = range(-3, 4)
y = range(0, x + 6)
z = range(0, 5)
require(10 % (x - S) != 1)
require(y // (z - 2) < 3 + x)
"""

MEMO_UNDEFINED = """
S = 2
x = range(-3, 4)
h = range(0, 3)
y = range(0, 6)
z = range(0, 5)
w = range(0, 5)
v = range(0, 4)
require(10 % (x - S) != 1)
require(y // (z - 2) < 3 + x)
require(w + x != v)
"""   # h, read by nothing, is multiplied in: the units stop above it, and (y, z) and (w, v) are memoised groups


@pytest.mark.parametrize("source, values, top", [
    (TEST_ABOVE, [-2, 0, 3, 7, 30], 1),
    (DOMAIN_AT_SECOND, [0, 1, 5, 9], 2),
    (UNDEFINED, [-3, 0, 1, 2, 3, 5], None),
])
def test_counts_and_tallies_on_the_base_module_equal_each_point_alone(source, values, top):
    program, answers = on_base(source, values)
    assert top is None or program.top == top
    assert answers == per_point(source, values)
    assert any(u for _, u in answers) == (source is UNDEFINED)   # tallied above and below the prefixes


def test_a_derived_value_that_differs_by_point_is_refused():
    with pytest.raises(NotLaneable, match="derived value varies"):
        on_base(DERIVED, [1, 4])


def test_a_rule_before_the_loops_that_differs_by_point_is_refused():
    # the base module tests it in every work unit: S = -2 would reject the others' prefixes (found by
    # the slow generated test: 0 counted instead of 1)
    source = "S = -2\np0 = range(0, 0 + 1)\nd0 = p0\nd0 = d0 + p0\nrequire(S > -2)\n"
    with pytest.raises(NotLaneable, match="before the loops"):
        on_base(source, [0, 1])
    Space.from_source(source).count("c", threads=1)
    found = sweep(lambda s: Space.from_source(source, s), {"S": ["0", "1"]}, "c", threads=1)
    assert [(p.count, p.undefined) for p in found] == per_point(source, [0, 1]) == [(1, 0), (1, 0)]


def test_a_difference_below_the_work_units_is_refused():
    # the work units' depth is where the counting order and the listing order part (here all four loops);
    # a walk whose points differed at a deeper level could not hand its prefixes to the base module
    source = "S = 1\nw = range(0, 4)\nx = range(0, w + 3)\ny = range(0, x + 3)\nz = range(0, y + 3)\nrequire(z != S + w)\n"
    plans = [Space.from_source(source, {"S": v}).plan for v in ("1", "2")]
    walk = LaneWalk([*plans, Space.from_source(source).plan], get_backend("c").options)
    walk.generate()
    assert walk.top_depth() == 4 == walk.gens[0].max_prefix_depth
    walk.gens[0].max_prefix_depth = 3
    with pytest.raises(NotLaneable, match="below the work units"):
        walk.top_depth()


def test_an_undefined_operation_in_a_memoised_group_goes_to_the_whole_walk(cache):
    program, answers = on_base(MEMO_UNDEFINED, [0, 1, 2, 5])
    assert MEMO_LOOKUP in get_backend("c", threads=1).enumerator(Space.from_source(MEMO_UNDEFINED).plan
                                                                      ).generated.source
    assert answers is None
    Space.from_source(MEMO_UNDEFINED).count("c", threads=1)
    found = list(sweep(lambda s: Space.from_source(MEMO_UNDEFINED, s), {"S": ["0", "1", "2", "5"]}, "c", threads=1))
    assert [(p.count, p.undefined) for p in found] == per_point(MEMO_UNDEFINED, [0, 1, 2, 5])
    assert {p.method for p in found} == {"one-pass"} and top_entries(cache) == [program.top]


def test_k40c_sweep_after_a_count_compiles_only_the_top_loops(cache):
    values = ["384", "512", "640", "1000"]
    Space.load("gemm").count("c", threads=1)
    found = list(Space.sweep("gemm", {"max_threads_per_block": values}, "c", threads=1))
    assert {p.method for p in found} == {"one-pass"}
    assert [(p.count, p.undefined) for p in found] == [
        (Space.load("gemm", {"max_threads_per_block": v}).count("c"), 0) for v in values]
    assert top_entries(cache) == [2]
    lane_modules = [p for p in cache.glob("_ss_*.so") if b"lane_walk" in p.read_bytes()]
    assert len(lane_modules) == 1 and lane_modules[0].stat().st_size < 40_000   # two loops, not the whole walk


def test_without_the_base_module_the_whole_lane_walk_counts(cache):
    values = ["384", "1000"]
    found = list(Space.sweep("gemm", {"max_threads_per_block": values}, "c", threads=1))
    assert {p.method for p in found} == {"one-pass"} and top_entries(cache) == []


def check_on_base(source, values):
    """The base module's answers (where `run_top` gives them) and the sweep after a base count equal
    counting each value of S on its own."""
    try:
        _, answers = on_base(source, values)
    except (NotLaneable, LaneError):   # refused while generating, or stopped while walking: the sweep goes on
        answers = None
    except Exception as exc:   # the C backend refuses the space: so do the per-point counts
        with pytest.raises(type(exc)):
            per_point(source, values)
        return
    alone = per_point(source, values)
    if answers is not None:
        assert answers == alone
    Space.from_source(source).count("c", threads=1)   # the base module, as a count before the sweep builds it
    shared = [(p.count, p.undefined) for p in sweep(lambda s: Space.from_source(source, s),
                                                    {"S": [str(v) for v in values]}, "c", threads=1)]
    assert shared == alone


@generated(12)
@given(source=spaces(c_compatible=True, swept=True),
       values=st.lists(st.integers(-3, 5), min_size=2, max_size=4, unique=True))
def test_generated_spaces_on_the_base_module_equal_per_point(source, values):
    check_on_base(source, values)


@pytest.mark.slow
@generated(300)
@given(source=spaces(c_compatible=True, swept=True, products=0.2),
       values=st.lists(st.integers(-3, 5), min_size=2, max_size=6, unique=True))
def test_many_generated_spaces_on_the_base_module_equal_per_point(source, values):
    check_on_base(source, values)
