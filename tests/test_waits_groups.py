"""Issue 28: independent parameter groups multiply in C, above the prefix depth too.

`translators/c/nest.py` `early_split`: where the loops from some position on fall into groups
that share no parameter, derived value or constraint (a hoisted parameter reading a group's loops
belongs to that group), the count walk counts each group on its own and multiplies, memoised
under the prefix values that fix a group's loops. Counts, positions and exact samples equal the
reference's (and the closed forms); a space where an operation may be undefined keeps the whole
nest, so the undefined tally is the reference's too."""
from __future__ import annotations

import math

import pytest

from solverspace import Space

pytestmark = [pytest.mark.needs_cc, pytest.mark.usefixtures("cache")]


def pairs(n: int, top: int) -> str:
    """Issue 28's pairs: `x_i, y_i = range(1, top)` with `y_i % x_i == 0`, n times."""
    return "".join(f"x{i} = range(1, {top})\ny{i} = range(1, {top})\nrequire(y{i} % x{i} == 0)\n"
                   for i in range(1, n + 1))


def stages(n: int, tiles: str, top: int) -> str:
    """Issue 28's pipeline: `t_i = range(...)`, `w_i = range(t_i, top, t_i)` (w_i hoisted), n times."""
    return "".join(f"t{i} = range({tiles})\nw{i} = range(t{i}, {top}, t{i})\n" for i in range(1, n + 1))


def divisor_pairs(top: int) -> int:
    return sum((top - 1) // x for x in range(1, top))


def _listing(space) -> list[tuple]:
    return [tuple(row) for row in space.rows("reference")]


@pytest.mark.parametrize("text, groups", [
    (pairs(3, 9), True),
    (stages(3, "32, 129, 32", 300), True),
    # an outer loop read by one group only through a hoisted parameter's domain (its memo key holds it)
    ("o = range(1, 4)\nx = range(1, 5)\nwx = range(x, 10 + o, x)\ny = range(1, 5)\nwy = range(y, 12, y)\n"
     "require(y >= o)\n", True),
    # groups after a shared outer loop, one reading it, with a categorical value
    ("n = range(1, 5)\na = range(1, 7)\nb = ['p', 'q']\nrequire((a % n == 0) | (b == 'q'))\nc = range(2, 9)\n"
     "d = range(c, 20, c)\nrequire(d != 6)\n", True),
    # a modulo by a value that may be 0: the whole nest, so the undefined tally is the reference's
    ("x = range(0, 5)\ny = range(1, 9)\nrequire(y % x == 0)\nu = range(0, 4)\nv = range(1, 9)\n"
     "require(v % u == 1)\n", False),
])
def test_counts_positions_and_samples_equal_the_reference(text, groups):
    space = Space.from_source(text)
    assert ("if (stop < 0) {" in space.emit("c")) == groups
    rows = _listing(space)
    stats, reference = space.stats("c"), space.stats("reference")
    assert stats.count == reference.count == len(rows) and stats.undefined == reference.undefined
    listed = [tuple(row) for row in space.to_array("c").tolist()]   # the canonical order
    assert sorted(listed) == sorted(rows)
    for i in sorted({0, len(rows) - 1, *range(0, len(rows), max(1, len(rows) // 12))}):
        assert space[i] == listed[i] and space.index(listed[i]) == i
    drawn = space.sample(min(7, len(rows)), seed=3)
    assert all(tuple(row) in set(rows) for row in drawn.tolist())


def test_four_pairs_and_ten_stages_count_by_products():
    four = Space.from_source(pairs(4, 65))
    assert four.count("c") == divisor_pairs(65) ** 4 == 6_146_560_000
    ten = Space.from_source(stages(10, "32, 1025, 32", 65537))
    per_stage = sum(65536 // t for t in range(32, 1025, 32))
    assert ten.count("c") == per_stage ** 10
    assert ten[0] == (32, 32) * 10 and ten[-1] == (1024, 65536) * 10
    middle = per_stage ** 10 // 2
    assert ten.index(ten[middle]) == middle


@pytest.mark.needs_cpsat
def test_cpsat_agrees_on_the_pairs():
    space = Space.from_source(pairs(3, 17))
    assert space.count("c") == space.count("cpsat") == divisor_pairs(17) ** 3


def test_a_group_count_past_63_bits_keeps_the_whole_nest():
    """A hoisted parameter is multiplied in at its group's leaf in int64, so a group whose size
    bound passes 2**63 is not split there (the count is still exact: wide counts)."""
    text = "a = range(1, 3)\nb = range(0, 2**62, a)\nc = range(1, 3)\nd = range(0, 2**62, c)\n"
    space = Space.from_source(text)
    assert "if (stop < 0) {" not in space.emit("c")
    assert space.count("c") == (2 ** 62 + 2 ** 61) ** 2 == math.prod([2 ** 62 + 2 ** 61] * 2)
