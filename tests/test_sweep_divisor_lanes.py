"""Divisor loops in the sweep's one-pass lane walk (`LaneWalk.divisor`, issue 28): a loop over
`a` whose next loop solves `a * b == e` visits only the divisors of `e` where that is sound for
every lane (the loop's domain the same for all lanes, `e` the same and reading no lane-varying
value, no undefined operation possible in the loop's body). On spaces with the setting in the
loop's body, in its range, in `e`, beside undefined operations and in independent groups, the
one-pass counts and undefined tallies equal the per-point ones, and the lane program holds the
divisor loops exactly where they apply."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, strategies as st

from solverspace import Space
from solverspace.registry.backends import get_backend
from solverspace.scale.sweep import sweep
from solverspace.translators.c.lanes import LaneWalk, NotLaneable
from solverspace.validation.generate import spaces
from tests.helpers import generated

pytestmark = pytest.mark.needs_cc


def swept(source, values, one_pass, **options):
    """[(settings, count, undefined)] and the methods of a sweep over S, or the error's type."""
    try:
        found = list(sweep(lambda s: Space.from_source(source, s), {"S": [str(v) for v in values]}, "c",
                           one_pass=one_pass, threads=1, **options))
    except Exception as exc:   # the same error either way (the one-pass sweep falls back to per-point)
        return type(exc).__name__, set()
    return [(p.settings, p.count, p.undefined) for p in found], {p.method for p in found}


def same_answers(source, values, **options) -> set[str]:
    """One pass and one by one agree (counts and tallies); the methods the one-pass sweep used."""
    (shared, methods), (alone, _) = swept(source, values, True, **options), swept(source, values, False, **options)
    assert shared == alone
    return methods


def lane_source(source, values) -> str | None:
    """The lane program's C for these values of S, or None where they cannot share a walk."""
    plans = [Space.from_source(source, {"S": str(v)}).plan for v in values]
    try:
        return LaneWalk(plans, get_backend("c").options).generate().source
    except NotLaneable:
        return None


def divisor_loops(source: str) -> list[int]:
    """The levels written as divisor loops (over a range or a value list) in a lane program."""
    return sorted(int(i) for i in re.findall(r"ss_dscan_init\(&ds_(\d+), &dl_\1,|ss_dfilter\(buf_(\d+), 0,", source)
                  for i in i if i)


VALUES = [-2, 0, 1, 3, 5]

# name -> (source, whether the lane walk has a divisor loop[, the values of S: one shape of program])
SPACES = {
    "the setting in a constraint of the loop's body": ("""
S = 0
c = range(-13, 14)
a = range(1, 13)
b = range(-15, 16)
require(a + S != 6)
require(a * b == c)
""", True),
    "negative descending range, the setting in a derived value read by a constraint": ("""
S = 0
x = range(0, 30)
c = x - 12
a = range(-1, -13, -1)
b = range(-15, 16)
d = a * S
require(d + x != 4)
require(c == b * a)
""", True),
    "a value list, the setting in a constraint of the loop's body": ("""
S = 0
c = range(-25, 26)
a = iterator([6, 4, 3, 1, 12, 2, 5, 6, 25])
b = range(-30, 31, 2)
require(a != S)
reject_if(b * a != c)
""", True),
    "a stop tightened at the divisor loop, the same for all lanes": ("""
S = 0
lim = range(0, 14)
c = iterator([12, 36, -24, 0])
a = range(1, 40)
b = range(-40, 41)
reject_if(a * 3 > lim * 2)
require(a * b == c)
require(lim != S)
""", True),
    "the setting in an outer loop's range": ("""
S = 0
x = range(0, 25 + S)
c = x - 12
a = range(2, 40, 3)
b = range(-40, 41)
require(a * b == c)
""", True),
    "the setting in the loop's range: plain loop": ("""
S = 0
c = range(-13, 14)
a = range(1, 13 + S)
b = range(-15, 16)
require(a * b == c)
""", False),
    "the setting in the loop's stop, tightened by a constraint: plain loop": ("""
S = 0
c = range(-13, 14)
a = range(1, 20)
b = range(-15, 16)
require(a <= S + 10)
require(a * b == c)
""", False),
    "an undefined operation in the loop's body, the setting in it: plain loop": ("""
S = 0
c = range(-13, 14)
a = range(1, 13)
q = 24 // (a - S)
b = range(-15, 16)
require(a * b == c)
require(q != 5)
""", False, [1, 3, 5, 20]),
    "an undefined operation in the loop's body, the same for all lanes: plain loop": ("""
S = 0
c = range(-13, 14)
a = range(1, 13)
b = range(-15, 16)
reject_if(c % (a - 3) == 1)
require(a * b == c)
require(c != S)
""", False),
    "the next loop's domain may be undefined: plain loop": ("""
S = 0
c = range(-13, 14)
a = range(1, 13)
b = range(-15, 16 + 10 // c)
require(a * b == c)
require(c != S)
""", False),
}


@pytest.mark.parametrize("name", list(SPACES))
def test_one_pass_equals_per_point_and_divisor_loops_where_sound(name):
    source, expected, *values = SPACES[name]
    values = values[0] if values else VALUES
    assert same_answers(source, values) == {"one-pass"}
    assert same_answers(source, values, literal=True) == {"one-pass"}
    found, _ = swept(source, values, True)   # and the reference's counts (it has no divisor loops)
    assert [count for _, count, _ in found] == [Space.from_source(source, {"S": str(v)}).count("reference")
                                                for v in values]
    text = lane_source(source, values)
    assert text is not None
    assert bool(divisor_loops(text)) == expected, text


def test_undefined_tallies_beside_the_divisor_loop_differ_by_lane():
    source, _, values = SPACES["an undefined operation in the loop's body, the setting in it: plain loop"]
    (found, methods), (alone, _) = swept(source, values, True), swept(source, values, False)
    assert methods == {"one-pass"} and found == alone
    assert len({undefined for _, _, undefined in found}) > 1 and all(count > 0 for _, count, _ in found)


def test_the_setting_in_e_cannot_share_the_divisor_loop():
    # e = c + S differs by lane: the solved level varies by lane, so the points go one by one
    source = """
S = 0
c = range(-13, 14)
a = range(1, 13)
b = range(-15, 16)
require(a * b == c + S)
"""
    assert same_answers(source, VALUES) == {"per-point"}
    assert lane_source(source, VALUES) is None


def test_units_at_the_divisor_loops_depth_keep_the_plain_loop():
    # the loop over a (level 1) lies above the work units' deepest prefix: its divisor loop is
    # guarded by `stop`, so that the prefixes made there are the plain loop's
    source = SPACES["the setting in a constraint of the loop's body"][0]
    text = lane_source(source, VALUES)
    depth = int(re.search(r"return (\d+); \}", text[text.index("ss_lane_max_prefix_depth"):]).group(1))
    assert divisor_loops(text) == [1] and depth > 1
    assert "if (plen <= 1 && stop != 2) { dz_1 = ss_dscan_init(&ds_1, &dl_1," in text
    assert "ss_divs dl_1; dl_1.m = dl_1.pm = 0; dl_1.nd = 0;" in text
    assert "dz_1 || e_ % k_ == 0" in text   # the solved level takes the quotient from the scan


GROUPS = """
S = 0
x = range(0, 6)
c = x * 6 - 12
a = range(1, 40)
b = range(-40, 41)
require(a * b == c)
g = range(0, 5)
h = range(0, 5)
require(g + h <= x)
require(x != S)
"""


def test_divisor_loops_in_independent_groups():
    # the groups {a, b} and {g, h} under x are walked shared by all lanes, each memoised
    assert same_answers(GROUPS, VALUES) == {"one-pass"}
    found, _ = swept(GROUPS, VALUES, True)
    assert [count for _, count, _ in found] == [Space.from_source(GROUPS, {"S": str(v)}).count("reference")
                                                for v in VALUES]
    text = lane_source(GROUPS, VALUES)
    assert "ss_memo_find" in text and len(divisor_loops(text)) == 1


def test_k40c_gemm_sweep_walks_divisor_loops():
    values = ["384", "416", "992"]
    found = list(sweep(lambda s: Space.load("gemm", s), {"max_threads_per_block": values}, "c", threads=1))
    assert {p.method for p in found} == {"one-pass"}
    assert [p.count for p in found] == [Space.load("gemm", {"max_threads_per_block": v}).count("c") for v in values]
    plans = [Space.load("gemm", {"max_threads_per_block": v}).plan for v in values]
    assert divisor_loops(LaneWalk(plans, get_backend("c").options).generate().source)


@generated(12)
@given(source=spaces(c_compatible=True, swept=True, products=1.0),
       values=st.lists(st.integers(-3, 5), min_size=2, max_size=4, unique=True))
def test_generated_product_spaces_one_pass_equals_per_point(source, values):
    same_answers(source, values)
