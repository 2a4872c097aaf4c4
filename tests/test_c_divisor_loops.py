"""Divisor loops in the generated C walks (`LoopNest.divisor_loop`, issue 28): a loop over `a`
whose next loop solves `a * b == e` visits only the values of `a` that divide `e`. Nothing may
change but the time: on spaces built for each case (steps of either sign, negative values and
`e`, `e` == 0, value lists, `break`s, every prefix depth of the work units) and on spaces where
the loop must stay plain (an undefined operation in the loop's body, the next loop's domain or
`e`; `e` reading `a`; a range holding 0), the compiled walks with divisor loops and the same
walks without them (`plain`) give the same count, undefined tally, work units, rows in the same
order, positions and indices, and the reference backend the same count and rows."""
from __future__ import annotations

import math
import re

import pytest
from hypothesis import HealthCheck, given, settings

from solverspace import Space
from solverspace.translators.c import backend as c_backend
from solverspace.translators.c.backend import CEnumerator, EnumeratorPositions
from solverspace.translators.c.nest import LoopNest
from solverspace.translators.c.optimize import Options
from solverspace.validation.generate import spaces

pytestmark = pytest.mark.needs_cc

# name -> (source, (divisor loops in the counting walk, in the listing walk))
SPACES = {
    "ascending range, e a parameter of both signs and 0": ("""
c = range(-13, 14)
a = range(1, 13)
b = range(-15, 16)
require(a * b == c)
""", (1, 1)),
    "descending negative range, e a derived value, c == b * a": ("""
x = range(0, 30)
c = x - 12
a = range(-1, -13, -1)
b = range(-15, 16)
require(c == b * a)
""", (1, 1)),
    "steps of 3 and -2, negative values": ("""
c = iterator([60, -36, 0, 7, 24, -1])
a = range(2, 40, 3)
w = range(-2, -30, -2)
b = range(-40, 41)
g = range(-61, 62, 3)
require(a * b == c)
reject_if(w * g != c)
""", (2, 0)),
    "descending positive and ascending negative ranges": ("""
c = iterator([36, -30, 0, 7, -1, 60])
a = range(31, 0, -3)
b = range(-70, 71)
w = range(-30, 0, 4)
g = range(-70, 71, 2)
require(a * b == c)
require(g * w == c)
""", (2, 2)),
    "short loops for one e: plain, then its divisors kept": ("""
x = range(0, 40)
a = range(1, 8 + x % 5)
b = range(-200, 201)
require(a * b == 144)
""", (1, 1)),
    "a value list (filtered)": ("""
c = range(-25, 26)
a = iterator([6, 4, 3, 1, 12, 2, 5, 6, 25])
b = range(-30, 31, 2)
reject_if(b * a != c)
""", (1, 1)),
    "a negative value list from an expression (filtered)": ("""
c = range(-25, 26)
x = range(1, 4)
a = iterator([-6, -x, -12, -5, -x * 2])
b = range(-30, 31)
require(a * b == c)
""", (1, 1)),
    "a break at the divisor loop": ("""
lim = range(0, 14)
c = iterator([12, 36, -24, 0])
a = range(1, 40)
b = range(-40, 41)
reject_if(a * 3 > lim * 2)
require(a * b == c)
""", (1, 1)),
    "shallow levels (work units at the divisor loop's depth)": ("""
a = range(1, 50)
b = range(-60, 61)
y = range(0, 3)
require(a * b == 48)
reject_if(a + y == 7)
""", (1, 1)),
    "e undefined where it is computed (a derived value before the loop)": ("""
x = range(-4, 8)
c = 24 // (x - 3)
a = range(1, 25)
b = range(-30, 31)
require(a * b == c)
""", (1, 1)),
    "undefined derived value at the loop: plain": ("""
c = range(-13, 14)
a = range(1, 13)
q = c // (a - 3)
b = range(-15, 16)
require(a * b == c)
""", (0, 0)),
    "undefined constraint at the loop: plain": ("""
c = range(-13, 14)
a = range(1, 13)
reject_if(c % (a - 2) == 1)
b = range(-15, 16)
require(a * b == c)
""", (0, 0)),
    "undefined next domain: plain": ("""
c = range(-13, 14)
a = range(1, 13)
b = range(-15, 16 + 12 // (a - 4))
require(a * b == c)
""", (0, 0)),
    "e undefined in the constraint: plain": ("""
c = range(-13, 14)
a = range(1, 13)
b = range(-30, 31)
require(a * b == 24 // (c - 3))
""", (0, 0)),
    "e reads a: plain": ("""
c = range(-13, 14)
a = range(1, 13)
b = range(-15, 16)
require(a * b == a + c)
""", (0, 0)),
    "a range holding 0 (nothing solved): plain": ("""
c = range(-13, 14)
a = range(-3, 4)
b = range(-15, 16)
require(a * b == c)
""", (0, 0)),
}


def divisor_loops(enumerator, walk: str = "") -> int:
    """How many loops of the module's walks (of the walk `walk`) are divisor loops."""
    source = enumerator.generated.source
    if walk:
        source = source.split(f"static void {walk}(")[1].split("\nstatic ")[0]
    return len(set(re.findall(r"int dz_(\d+)", source)))


def plain(space, monkeypatch, quick=True) -> CEnumerator:
    """The same space's enumerator with no divisor loop (and no remembered generated code)."""
    with monkeypatch.context() as patch:
        patch.setattr(LoopNest, "divisor_loop", lambda self, *args: None)
        patch.setattr(c_backend, "generation_key", lambda *args: None)
        return CEnumerator(space.plan, Options(), threads=2, quick=quick)


def rows(enumerator) -> list:
    return enumerator.decode(enumerator.array()).tolist()


def assert_walks_agree(fast: CEnumerator, slow: CEnumerator) -> list:
    """Count, tally, work units at every prefix depth (their prefixes, counts, tallies and rows),
    positions and indices: the same in both. The rows."""
    listed = rows(fast)
    assert listed == rows(slow)
    a, b = fast.stats(), slow.stats()
    assert (a.count, a.undefined) == (b.count, b.undefined) == (len(listed), a.undefined)
    for depth in range(fast.generated.max_prefix_depth + 1):
        units = [e.prefix_units(1, depth=depth) for e in (fast, slow)]
        assert [u.n for u in units] and units[0].n == units[1].n
        assert units[0].prefixes.tolist() == units[1].prefixes.tolist()
        assert units[0].prefix_stats.undefined == units[1].prefix_stats.undefined
        views = [e.with_units(u) for e, u in zip((fast, slow), units)]
        counted = [v.count_units() for v in views]
        assert counted[0].unit_counts == counted[1].unit_counts
        assert counted[0].prefix_stats.undefined == counted[1].prefix_stats.undefined == b.undefined
        assert rows(views[0]) == listed
    positions = EnumeratorPositions(fast)
    assert positions.size() == len(listed)
    if listed:
        assert positions.rows_at(list(range(len(listed)))).tolist() == listed
        names = fast.plan.model.parameter_names
        for index in sorted({0, len(listed) // 3, len(listed) - 1}):
            assert positions.index(dict(zip(names, listed[index]))) == index
    return listed


@pytest.mark.parametrize("name", list(SPACES))
def test_divisor_loops_change_nothing(name, monkeypatch):
    source, loops = SPACES[name]
    space = Space.from_source(source)
    fast, slow = CEnumerator(space.plan, Options(), threads=2, quick=True), plain(space, monkeypatch)
    assert (divisor_loops(fast, "walk_count"), divisor_loops(fast, "walk_list")) == loops
    assert not divisor_loops(slow)
    listed = assert_walks_agree(fast, slow)
    assert listed == [tuple(r) for r in space.rows("reference")]
    assert fast.stats().count == space.stats("reference").count


def divisors(m: int) -> list[int]:
    small = [q for q in range(1, math.isqrt(m) + 1) if m % q == 0]
    return sorted({*small, *(m // q for q in small)})


@pytest.mark.parametrize("e", [-(2 ** 35) * 5, 3 * 2 ** 40, 963761198400])
def test_divisors_past_32_bits(e, monkeypatch):
    """|e| past 2**32: its divisors kept (the 64-bit trial division); sqrt|e| past the loop's
    2**20 values (the plain loop); 6,720 divisors, more than a loop keeps (the plain loop, after
    trying). Counted against the divisors."""
    source = f"a = range(1, 2 ** 20)\nb = range(-(2 ** 42), 2 ** 42)\nrequire(a * b == {e})\n"
    space = Space.from_source(source)
    expected = len([d for d in divisors(abs(e)) if d < 2 ** 20])
    fast, slow = CEnumerator(space.plan, Options(), threads=2), plain(space, monkeypatch, quick=False)
    assert divisor_loops(fast) == 1
    assert fast.stats().count == slow.stats().count == expected
    assert rows(fast) == rows(slow)


def test_gemm_k40c_count_unchanged():
    """The built-in GEMM space (K40c): both reader groups' `dim_m_*` loops are divisor loops."""
    enumerator = CEnumerator.get(Space.load("gemm").plan, Options(), threads=2)
    assert divisor_loops(enumerator)
    assert enumerator.stats().count == 1_207_600


def test_gemm_h100_opt_in_count_unchanged():
    """The H100 single-real opt-in space (README): about 0.8 CPU-s to count, 1.5 to compile."""
    space = Space.load("gemm", {"device": "h100", "precision": "single", "shared_memory": "opt-in"})
    assert CEnumerator.get(space.plan, Options(), threads=2).stats().count == 78_298_704


def check_generated(source: str, monkeypatch) -> None:
    space = Space.from_source(source)
    fast, slow = CEnumerator(space.plan, Options(), threads=2, quick=True), plain(space, monkeypatch)
    listed = assert_walks_agree(fast, slow)
    reference = [tuple(r) for r in space.rows("reference")]
    assert listed == reference


@settings(max_examples=8, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(source=spaces(products=1.0, c_compatible=True, max_parameters=2, max_candidates=600))
def test_generated_product_equalities(source):
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_generated(source, monkeypatch)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(source=spaces(products=1.0, c_compatible=True, max_parameters=4, max_candidates=3000))
def test_many_generated_product_equalities(source):
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_generated(source, monkeypatch)
