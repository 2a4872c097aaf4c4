"""Counts, positions and sample sizes are exact at any size (DESIGN.md, fixed semantics).

A space's count passes 64 bits as soon as a few parameters nothing depends on are multiplied in;
the C backend counts it in wider integers, positions are Python ints, and the row at a position
inside a work unit too large to list is found by descending subtree counts (translators.c_rank).
"""
import json
import os
import shutil

import numpy as np
import pytest

from solverspace import Space
from solverspace.cli import main
from solverspace.core.draws import SampleSizeError, draw_positions
from solverspace.translators.errors import UnsupportedConstruct
from tests.helpers import space_file

needs_cc = pytest.mark.needs_cc        # (tests/conftest.py)
needs_cpsat = pytest.mark.needs_cpsat

INDEPENDENT = "".join(f"p{i} = range(1 << 16)\n" for i in range(4))                # 2**64 exactly
WIDE = "".join(f"p{i} = range(1 << 15)\n" for i in range(10))                      # 2**150: three words
DECIMAL = "a = range(10**7)\nb = range(10**7)\nc = range(10**7)\n"                # 10**21
DEPENDENT = ("x = range(7)\nrequire(x != 3)\n" + "".join(f"p{i} = range(x + 1)\n" for i in range(30)))
SPLIT = ("x = range(2)\nh = range(3)\na = range(1 << 22)\nrequire(a % 3 != 1)\n"
         "b = range(1 << 22)\nrequire(b % 3 != 1)\nc = range(1 << 22)\nrequire(c % 3 != x)\n")
# hoisted parameters between constrained ones: units of 2**64 rows each
MIXED = ("x = range(3)\nrequire(x != 1)\n" + "".join(f"p{i} = range(2)\n" for i in range(64))
         + "y = range(x, 4)\nrequire(x + y != 3)\n")


def _split_expected():
    n = sum(1 for a in range(1 << 22) if a % 3 != 1)
    return sum(3 * n * n * sum(1 for c in range(1 << 22) if c % 3 != x) for x in range(2))


EXPECTED = {
    "independent": (INDEPENDENT, lambda: 2 ** 64),
    "wide": (WIDE, lambda: 2 ** 150),
    "decimal": (DECIMAL, lambda: 10 ** 21),
    "dependent": (DEPENDENT, lambda: sum((x + 1) ** 30 for x in range(7) if x != 3)),
    "split": (SPLIT, _split_expected),
}


@needs_cc
@pytest.mark.parametrize("name", ["independent", "wide", "decimal", "dependent", "split"])
def test_c_count_is_exact_past_64_bits(name):
    source, expected = EXPECTED[name]
    space = Space.from_source(source)
    stats = space.stats("c")
    assert stats.count == expected()
    assert type(stats.count) is int


@needs_cc
def test_c_unit_offsets_are_python_ints_past_64_bits():
    from solverspace.translators.c.backend import CBackend
    space = Space.from_source(MIXED)
    enumerator = CBackend(threads=2).enumerator(space.plan)
    offsets = enumerator.offsets()
    assert offsets[-1] == 2 ** 64 * 5 == space.count("c")  # x=0: y in {0,1,2}; x=2: y in {2,3}
    assert all(type(v) is int for v in offsets)


@needs_cc
def test_gemm_counts_stay_int64():
    """The common case pays (almost) nothing: int64 counts where the bound proves 63 bits (tiny),
    int64 checked for overflow where it does not (K40c's bound is 2**97), wide only after one."""
    from solverspace.translators.c.codegen import CGenerator
    from solverspace.translators.c.optimize import Options
    tiny = CGenerator(Space.load("gemm", {"device": "tiny"}).plan, Options()).generate()
    assert tiny.count_words == 1 and "ss_cadd" not in tiny.source and "_overflow" not in tiny.source
    k40c = CGenerator(Space.load("gemm", {"device": "k40c"}).plan, Options()).generate()
    assert k40c.count_words == 1 and "ss_cadd" not in k40c.source and "__builtin_add_overflow" in k40c.source


@needs_cc
@needs_cpsat
@pytest.mark.parametrize("name", ["independent", "dependent"])
def test_cpsat_agrees_past_64_bits(name):
    source, expected = EXPECTED[name]
    space = Space.from_source(source)
    assert space.count("cpsat", workers=1) == space.count("c") == expected()


# ------------------------------------------------------------------------------ positions
@needs_cc
def test_positions_in_a_space_past_64_bits():
    space = Space.from_source(MIXED)
    n = 2 ** 64 * 5
    first, last = space[0], space[n - 1]
    assert first == (0,) * 65 + (0,)
    assert last == (2,) + (1,) * 64 + (3,)
    assert space[-1] == last
    for position in (0, 1, 2 ** 63, 3 * 2 ** 64 - 1, 3 * 2 ** 64, n // 3, n - 2):
        row = space[position]
        assert space.index(row) == position
        assert space.check(dict(zip(space.parameters, row))).valid
    # position 3 * 2**64 is the first row with x = 2 (x = 0 has y in {0, 1, 2})
    assert space[3 * 2 ** 64][0] == 2 and space[3 * 2 ** 64 - 1][0] == 0
    with pytest.raises(IndexError):
        space[n]
    with pytest.raises(OverflowError, match="count"):
        len(space)


@needs_cc
@pytest.mark.parametrize("source", [
    "x = range(3)\nrequire(x != 1)\n" + "".join(f"p{i} = range(2)\n" for i in range(3))
    + "y = range(x, 4)\nrequire(x + y != 3)\nq = range(y)\n",
    "a = ['u', 'v', 'w']\nh = range(3)\nb = range(4)\nrequire(a != 'v' or b > 1)\nk = range(b)\nd = b * 2\n"
    "require(d != 2)\n",
    SPLIT.replace("1 << 22", "5"),
], ids=["hoisted-between", "categorical-derived", "split"])
def test_descending_to_a_position_agrees_with_listing(monkeypatch, source):
    """With every unit 'too large to list', each position is found by descending subtree counts;
    it must give exactly the listing order (the reference's), and index() must invert it."""
    import solverspace.translators.c.backend as c_backend
    monkeypatch.setattr(c_backend, "MAX_FILL_ROWS", 0)
    space = Space.from_source(source)
    rows = list(space.rows("reference"))
    assert [space[i] for i in range(len(rows))] == rows
    assert [space.index(r) for r in rows] == list(range(len(rows)))


# ------------------------------------------------------------------------------ sampling
def test_small_spaces_draw_the_same_positions_as_before():
    """Seeded samples of spaces below 2**63 are unchanged (NumPy's choice / integers)."""
    for size, n, seed in [(10, 4, 0), (2 ** 62, 5, 3), (2 ** 63 - 1, 3, 1)]:
        rng = np.random.Generator(np.random.PCG64(seed))
        assert draw_positions(size, n, seed, False).tolist() == rng.choice(size, size=n, replace=False).tolist()
        rng = np.random.Generator(np.random.PCG64(seed))
        assert draw_positions(size, n, seed, True).tolist() == rng.integers(0, size, size=n).tolist()


@pytest.mark.parametrize("size", [2 ** 63, 2 ** 64, 2 ** 64 + 1, 5 * 2 ** 64, 2 ** 200])
def test_big_positions_are_exact_distinct_and_reproducible(size):
    drawn = draw_positions(size, 200, 7, False)
    assert all(type(v) is int and 0 <= v < size for v in drawn)
    assert len(set(drawn)) == 200
    assert drawn.tolist() == draw_positions(size, 200, 7, False).tolist()
    assert draw_positions(size, 50, 7, False).tolist() == drawn[:50].tolist()  # a prefix is a sample
    assert draw_positions(size, 5, 8, True).tolist() != drawn[:5].tolist()
    if size >= 2 ** 65:  # positions beyond 64 bits do occur
        assert max(drawn) >= 2 ** 64


def test_big_positions_are_uniform_over_the_top_bits():
    size = 3 * 2 ** 64  # not a power of two: rejection must not bias the low part
    drawn = draw_positions(size, 3000, 1, True)
    thirds = np.bincount([v // 2 ** 64 for v in drawn], minlength=3)
    assert all(850 < t < 1150 for t in thirds), thirds


@needs_cc
def test_sample_of_a_space_past_64_bits_is_valid_and_identical_for_any_thread_count():
    space = Space.from_source(MIXED)
    one = space.sample(20, seed=11, threads=1)
    two = Space.from_source(MIXED).sample(20, seed=11, threads=2)
    assert one.tolist() == two.tolist()
    rows = [tuple(r) for r in one.tolist()]
    assert len(set(rows)) == 20
    assert all(space.check(dict(zip(space.parameters, r))).valid for r in rows)


def test_sample_size_beyond_memory_is_refused():
    with pytest.raises(SampleSizeError, match="2\\*\\*30"):
        draw_positions(2 ** 64, 10 ** 11, 0, True)


# ------------------------------------------------------------------------------ values past 64 bits
@pytest.mark.parametrize("source", ["p = iterator([1, 2**70])\nq = range(3)\n",
                                    "p = range(2**70, 2**70 + 3)\nq = range(3)\n"])
def test_values_past_64_bits(source):
    space = Space.from_source(source, filename="big.py")
    rows = list(space.rows("reference"))
    assert space.count("reference") == len(rows) in (6, 9)
    sample = space.sample(4, seed=1, method="reference")
    assert {int(v) for v in sample["p"]} <= {p for p, _ in rows}
    if shutil.which(os.environ.get("CC", "gcc")):
        with pytest.raises(UnsupportedConstruct, match=r"big.py:1.*'p'.*64 bits") as info:
            space.count("c")
        assert "reference" in info.value.hint


@needs_cc
def test_a_constant_past_64_bits_is_refused_by_c_not_truncated():
    """`p < 2**70` was compiled to a truncated constant: 0 configurations instead of 3."""
    space = Space.from_source("p = range(3)\nrequire(p < 2**70)\n", filename="big.py")
    assert space.count("reference") == 3
    with pytest.raises(UnsupportedConstruct, match="1180591620717411303424"):
        space.count("c")


# ------------------------------------------------------------------------------ CLI


@needs_cc
def test_cli_count_get_sample_past_64_bits(tmp_path, capsys):
    path = space_file(tmp_path, INDEPENDENT)
    assert main(["count", path, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["count"] == 2 ** 64 and result["exact"] is True
    assert main(["get", path, str(2 ** 64 - 1), "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["p0=65535 p1=65535 p2=65535 p3=65535", "p0=0 p1=0 p2=0 p3=0"]
    assert main(["sample", path, "-n", "3", "--seed", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "p0,p1,p2,p3" and len(set(lines[1:])) == 3
    assert main(["enumerate", path, "-o", str(tmp_path / "all.csv")]) == 2
    assert "too many to list" in capsys.readouterr().err


@needs_cc
@pytest.mark.parametrize("n, message", [("1e11", "not an integer.*-n 100000000000"), ("2.5", "not an integer"),
                                        ("100000000000", "more than 1073741824")])
def test_cli_sample_size_is_checked(tmp_path, capsys, n, message):
    path = space_file(tmp_path, "x = range(3)\n")
    try:
        status = main(["sample", path, "-n", n, "--with-replacement"])
    except SystemExit as exc:  # argparse's own exit for a bad argument
        status = exc.code
    assert status == 2
    import re
    assert re.search(message, capsys.readouterr().err)
