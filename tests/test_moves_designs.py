"""Issue 25, moves (second half): conditional quantiles and space-filling designs (`from_unit`,
`from_unit_many`, `design`), exactly against the listed space; the `design` command."""
from __future__ import annotations

import itertools
import json
import math
import os
import warnings
import zlib
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

from solverspace import Space, SolverspaceError
from solverspace.cli import main
from solverspace.moves.designs import EmptySpaceError, Quantiles, unit_design
from solverspace.validation.generate import spaces
from solverspace.validation.moves_b import check_moves_b, quantile_by_list
from tests.helpers import CORPUS, load_generated, MOVES_SPACE, space, tiny_gemm, TINY_VARIANTS

CORPUS_FILES = sorted(CORPUS.glob("*.py"))
# generated spaces with at least one valid configuration, per run: through the moves' code over
# counts from the list (nothing compiled: validation.moves_listed), and a seeded subset through
# the compiled counts (a C module each); `slow` runs the compiled counts on many more
GENERATED = int(os.environ.get("SOLVERSPACE_MOVES_B_EXAMPLES", "300"))
GENERATED_C = int(os.environ.get("SOLVERSPACE_MOVES_B_C_EXAMPLES", "30"))
GENERATED_SLOW = int(os.environ.get("SOLVERSPACE_MOVES_B_SLOW_EXAMPLES", "300"))
GENERATED_SLOW_LISTED = int(os.environ.get("SOLVERSPACE_MOVES_B_SLOW_LISTED_EXAMPLES", "2000"))

HAND = MOVES_SPACE


def exact_distribution(s) -> tuple[Counter, int]:
    """(how many points of a grid map to each configuration, the number of points). Coordinate j
    gets the midpoints of `g_j` equal cells, `g_j` the lcm of the counts under every prefix of the
    loops before parameter j (from the listed space): every cell then lies inside one interval
    of every conditional quantile, so the tally is the exact distribution of a uniform point."""
    rows = list(s.rows("reference"))
    grids = [1] * len(s.parameters)
    for k, name in enumerate(s.plan.order):
        columns = [s.parameters.index(n) for n in s.plan.order[:k]]
        parents = Counter(tuple(r[c] for c in columns) for r in rows)
        grids[s.parameters.index(name)] = math.lcm(*parents.values())
    axes = [[(i + 0.5) / g for i in range(g)] for g in grids]
    return Counter(s.from_unit(point) for point in itertools.product(*axes)), math.prod(grids)


@pytest.mark.needs_cc
@pytest.mark.parametrize("source", [
    """
    x = range(1, 3)
    y = range(1, 4)
    z = iterator(["p", "q"])
    require(x + y < 5)
    """,
    """
    a = range(1, 4)
    b = range(a, 4)
    c = iterator(["u", "v"])
    require((a != 2) | (b == 2))
    """,
    """
    k = iterator(["w", "e"])
    n = range(1, 4)
    m = range(1, 3)
    require((k == "e") | (n * m < 4))
    """,
])
def test_uniform_point_gives_exactly_uniform_configuration(source):
    s = space(source)
    rows = set(s.rows("reference"))
    tally, points = exact_distribution(s)
    assert points <= 5000
    assert set(tally) == rows
    assert set(tally.values()) == {points // len(rows)} and points % len(rows) == 0   # each the same volume


@pytest.mark.needs_cc
def test_from_unit_is_the_conditional_quantile_of_the_list():
    s = space(HAND)
    rows = list(s.rows("reference"))
    rng = np.random.default_rng(3)
    for point in rng.random((50, 4)).tolist():
        assert s.from_unit(point) == quantile_by_list(s, rows, tuple(point))
    assert s.from_unit((0.0,) * 4) == quantile_by_list(s, rows, (0.0,) * 4)
    last = float(np.nextafter(1.0, 0.0))
    assert s.from_unit((last,) * 4) == quantile_by_list(s, rows, (last,) * 4)
    array = s.from_unit_many(rng.random((5, 4)))
    assert array.dtype == s.sample(1).dtype and len(array) == 5


@pytest.mark.needs_cc
def test_large_units_descend_by_subtree_counts(monkeypatch):
    """A unit above the listing limit is descended loop by loop with compiled counts: same answers."""
    points = np.random.default_rng(5).random((40, 4)).tolist()
    listed = space(HAND)
    rows = list(listed.rows("reference"))
    expected = [listed.from_unit(p) for p in points]
    monkeypatch.setattr(Quantiles, "list_rows", 0)
    counted = space(HAND)
    assert [counted.from_unit(p) for p in points] == expected == [quantile_by_list(counted, rows, tuple(p))
                                                                   for p in points]


@pytest.mark.needs_cc
@pytest.mark.parametrize("method", ["lhs", "sobol", "random"])
def test_designs_are_valid_and_seeded(method):
    s = space(HAND)
    valid = set(s.rows("reference"))
    design = s.design(16, method, seed=4)
    assert all(tuple(r) in valid for r in design.tolist())
    assert design.tolist() == s.design(16, method, seed=4).tolist()
    assert design.dtype == s.sample(1).dtype


@pytest.mark.needs_cc
def test_lhs_one_point_per_stratum_of_the_first_parameter():
    s = space(HAND)
    rows = list(s.rows("reference"))
    first = s.plan.order[0]
    j = s.parameters.index(first)
    n = 30
    points = unit_design(n, len(s.parameters), "lhs", seed=2)
    assert sorted(int(u * n) for u in points[:, j]) == list(range(n))
    chosen = Counter(r[j] for r in s.design(n, "lhs", seed=2).tolist())
    per_value = Counter(r[j] for r in rows)
    start = Fraction(0)
    for value in sorted(per_value):
        lo, hi = start, start + Fraction(per_value[value], len(rows))
        inside = sum(1 for k in range(n) if lo <= Fraction(k, n) and Fraction(k + 1, n) <= hi)
        touching = sum(1 for k in range(n) if Fraction(k, n) < hi and Fraction(k + 1, n) > lo)
        assert inside <= chosen[value] <= touching, (value, chosen[value], inside, touching)
        start = hi


def test_unit_design_methods_and_bad_input():
    for method in ("lhs", "sobol", "random"):
        points = unit_design(8, 3, method, seed=1)
        assert points.shape == (8, 3) and (points >= 0).all() and (points < 1).all()
    with pytest.raises(SolverspaceError, match="unknown design method"):
        unit_design(4, 2, "halton")
    with pytest.raises(SolverspaceError, match="at least one point"):
        unit_design(0, 2, "lhs")


@pytest.mark.needs_cc
def test_bad_points_and_empty_space():
    s = space(HAND)
    with pytest.raises(SolverspaceError, match="coordinates lie in"):
        s.from_unit((0.5, 1.0, 0.5, 0.5))
    with pytest.raises(SolverspaceError, match="4 parameters"):
        s.from_unit((0.5, 0.5))
    with pytest.raises(SolverspaceError, match="expected"):
        s.from_unit_many(np.zeros((3, 2)))
    empty = space("x = range(3)\nrequire(x > 5)")
    with pytest.raises(EmptySpaceError, match="no valid configuration"):
        empty.design(3)


def test_orders_are_refused_with_a_message():
    s = space("""
        loops = permutation(["i", "j", "k"])
        t = range(1, 3)
    """)
    with pytest.raises(SolverspaceError, match="order-valued parameter"):
        s.from_unit((0.5, 0.5))


# ------------------------------------------------------------------------ command line
@pytest.mark.needs_cc
def test_design_command(tmp_path, capsys):
    path = tmp_path / "s.py"
    path.write_text("x = range(1, 5)\ny = range(x, 5)\nrequire(x + y < 6)\n")
    assert main(["design", str(path), "-n", "4", "--method", "sobol", "--seed", "3", "-o", "-"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "x,y" and len(out) == 5
    s = Space.load(str(path))
    assert [tuple(map(int, line.split(","))) for line in out[1:]] == [tuple(r) for r in s.design(4, "sobol", 3).tolist()]
    target = tmp_path / "d.jsonl"
    assert main(["design", str(path), "-n", "3", "-o", str(target)]) == 0
    assert len([json.loads(line) for line in target.read_text().splitlines()]) == 3


# ------------------------------------------------------------------------ against brute force
def assert_moves_b(s, **options):
    problems = check_moves_b(s, **options)
    assert not problems, "\n".join(problems)


@pytest.mark.needs_cc
@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_corpus_moves_b(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = Space.from_source(path.read_text(), filename=path.name)
    try:
        rows = list(itertools.islice(s.rows("reference"), 5001))   # never the whole of a huge space
        s.value_lists()
        s.count("c")
    except SolverspaceError:
        pytest.skip("the reference, the value lists or the C backend refuse this space")
    if len(rows) > 5000:
        pytest.skip("too large to list for brute force")
    assert_moves_b(s, rows=rows, givens=1, sample_method="reference")


@pytest.mark.needs_cc
@pytest.mark.parametrize("variant", TINY_VARIANTS, ids=lambda v: "-".join(map(str, v)))
def test_tiny_gemm_moves_b(variant):
    s = tiny_gemm(variant)
    assert_moves_b(s, points=6, targets=6, givens=1)


def generated_check(source: str, counts: str, **options) -> None:
    """The moves of a generated space against brute force: over counts from the list
    (`counts="listed"`) or the compiled ones (`"c"`). A space refused with a message (checked
    elsewhere), too large to list, or empty is not counted as an example (`assume`): Hypothesis
    draws another, so each run checks its number of non-empty spaces. The empty ones are checked
    too (the moves refuse them) on the listed counts."""
    s = Space(load_generated(source))
    try:
        rows = list(itertools.islice(s.rows("reference"), 5001))   # never the whole of a huge space
        s.value_lists()
        if counts == "c" and rows:
            s.count("c")
    except SolverspaceError:
        assume(False)
    assume(len(rows) <= 2000 and (rows or counts == "listed"))
    assert_moves_b(s, rows=rows, sample_method="reference", counts=counts, seed=zlib.crc32(source.encode()),
                   **options)
    assume(rows)


@settings(max_examples=GENERATED, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(source=spaces())
def test_generated_spaces_moves_b(source):
    generated_check(source, "listed", points=4, targets=6, givens=1)


@pytest.mark.needs_cc
@settings(max_examples=GENERATED_C, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(source=spaces(c_compatible=True))
def test_generated_spaces_moves_b_compiled(source):
    generated_check(source, "c", points=4, targets=4, givens=1)


@pytest.mark.slow
@pytest.mark.needs_cc
@settings(max_examples=GENERATED_SLOW, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(source=spaces(max_parameters=5, max_candidates=4000))
def test_many_generated_spaces_moves_b(source):
    generated_check(source, "c")


@pytest.mark.slow
@settings(max_examples=GENERATED_SLOW_LISTED, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(source=spaces(max_parameters=5, max_candidates=4000))
def test_many_generated_spaces_moves_b_listed(source):
    generated_check(source, "listed", targets=12)
