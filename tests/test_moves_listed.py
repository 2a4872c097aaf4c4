"""Issue 25, moves (second half): the brute-force checks themselves (`validation.moves_b`), and the
moves' code over counts from a listed space (`validation.moves_listed`), which lets those checks
run on hundreds of generated spaces without compiling. Each kind of wrong answer the checks exist
for is planted here (a conditional quantile off by one, the repair tie order reversed, a biased or
stray conditional sample, a design that is not stratified or not valid) and must be reported."""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import solverspace.moves.designs as designs
import solverspace.moves.repair as repair
from solverspace.moves.designs import EmptySpaceError
from solverspace.validation.moves_b import (EVERY_UNIT, ListedMoves, check_moves_b, quantile_by_list, repair_by_list,
                                            repair_targets)
from solverspace.validation.moves_listed import listed_quantiles
from tests.helpers import MOVES_SPACE, space

#: many configurations at the same distance from a point of the index box (ties for repair)
TIES = """
    x = range(1, 7)
    y = range(1, 6)
    k = iterator(["q", "p", "r"])
    require((x + y) % 2 == 0)
    reject_if((k == "r") & (x > 4))
"""
#: the first descent from (x=4, y=0) finds y=2 at distance 2; the nearest, x=5 y=0, is at 1
DECEPTIVE = """
    x = range(10)
    y = range(10)
    k = iterator(["u", "v"])
    require((x >= 5) | (y >= 2))
    reject_if((k == "v") & (x + y > 12))
"""
PATHS = [(depth, list_rows) for depth in range(5) for list_rows in (0, 1, 4, EVERY_UNIT)]


def listed(source):
    s = space(source)
    return s, list(s.rows("reference"))


@pytest.mark.parametrize("source", [MOVES_SPACE, TIES], ids=["hand", "ties"])
@pytest.mark.parametrize("depth, list_rows", PATHS)
def test_listed_moves_agree_with_brute_force_on_every_path(source, depth, list_rows):
    """Units at every depth, each listed or descended by counts: the same answers as the list's."""
    s, rows = listed(source)
    assert not check_moves_b(s, rows=rows, counts="listed", depth=depth, list_rows=list_rows,
                             sample_method="reference", givens=1, seed=depth)


@pytest.mark.parametrize("source", [MOVES_SPACE, TIES, DECEPTIVE], ids=["hand", "ties", "deceptive"])
@pytest.mark.parametrize("depth, list_rows", [(0, EVERY_UNIT), (1, 0), (1, 4), (2, 0), (2, EVERY_UNIT)])
def test_listed_repair_of_every_point_of_the_box(source, depth, list_rows):
    """Repair (the search over units and counts) of every point of the index box: the brute-force
    nearest configuration, with the documented tie."""
    s, rows = listed(source)
    moves = ListedMoves(s, rows, depth, list_rows)
    for target in itertools.product(*(range(len(v)) for v in s.value_lists().values())):
        assert moves.repair(target) == repair_by_list(s, rows, target), target


@pytest.mark.parametrize("depth, list_rows", [(0, None), (2, 0), (3, 1), (1, EVERY_UNIT)])
def test_listed_quantiles_are_the_lists_quantiles(depth, list_rows):
    s, rows = listed(MOVES_SPACE)
    quantiles = listed_quantiles(s, rows, depth, list_rows)
    points = np.random.default_rng(depth).random((40, 4))
    assert [quantiles.from_unit(p) for p in points.tolist()] == [quantile_by_list(s, rows, tuple(p))
                                                                 for p in points.tolist()]
    drawn = quantiles.from_unit_many(points).tolist()
    assert [tuple(r) for r in drawn] == [quantiles.from_unit(p) for p in points.tolist()]
    assert {type(r[2]) for r in drawn} == {str} and {type(r[0]) for r in drawn} == {int}


def test_listed_checks_compile_nothing(cache):
    """What lets them run on hundreds of generated spaces: no C module is built (the module cache
    stays empty), whichever paths run."""
    s, rows = listed(TIES)
    for depth, list_rows in [(0, EVERY_UNIT), (1, 0), (2, 4)]:
        assert not check_moves_b(s, rows=rows, counts="listed", depth=depth, list_rows=list_rows,
                                 sample_method="reference", givens=1)
    assert sorted(cache.rglob("*.so")) == []


@pytest.mark.needs_cc
def test_compiled_checks_build_modules(cache):
    """The other side of the test above: the compiled counts' check builds its modules there."""
    s, rows = listed(TIES)
    assert not check_moves_b(s, rows=rows, counts="c", sample_method="reference", givens=0, points=2, targets=2)
    assert sorted(cache.rglob("*.so"))


def test_listed_counts_on_an_empty_space_refuse():
    s, rows = listed("x = range(3)\ny = range(2)\nrequire(x > 5)")
    quantiles = listed_quantiles(s, rows, 1)
    with pytest.raises(EmptySpaceError):
        quantiles.from_unit((0.5, 0.5))
    assert not check_moves_b(s, rows=rows, counts="listed")


def test_repair_targets_put_ties_first():
    s, rows = listed(TIES)
    targets = repair_targets(s, rows, 6, random.Random(1))
    index = np.array([s.param_indices(r) for r in rows])
    for target in targets:
        distance = np.abs(index - np.array(target)).sum(axis=1)
        assert (distance == distance.min()).sum() > 1


def test_unknown_counts_are_refused():
    s, rows = listed(MOVES_SPACE)
    with pytest.raises(ValueError, match="counts="):
        check_moves_b(s, rows=rows, counts="cpsat")


# ------------------------------------------------------------------------ the checks can fail
def problems_with(source, counts="listed", **options):
    s, rows = listed(source)
    return check_moves_b(s, rows=rows, counts=counts, sample_method="reference", **options)


@pytest.mark.parametrize("counts", ["listed", pytest.param("c", marks=pytest.mark.needs_cc)])
def test_a_quantile_off_by_one_is_reported(monkeypatch, counts):
    target_of = designs.target_of
    monkeypatch.setattr(designs, "target_of", lambda u, total: min(target_of(u, total) + 1, total - 1))
    found = problems_with(MOVES_SPACE, counts, givens=0)
    assert any(p.startswith("from_unit(") and "conditional quantile" in p for p in found), found


class TiesReversed(repair.Repairer):
    """Repair with the larger index first at an equal |i - t| (the documented tie is the smaller)."""

    def key(self, indices, t):
        return [-k if j % 2 == 0 else k for j, k in enumerate(super().key(indices, t))]


def test_a_reversed_repair_tie_is_reported(monkeypatch):
    monkeypatch.setattr(repair, "Repairer", TiesReversed)
    found = problems_with(TIES, depth=0, list_rows=EVERY_UNIT, givens=0, points=0, targets=8)
    wrong = [p for p in found if p.startswith("repair(indices=")]
    assert wrong, found
    for p in wrong:   # the distance is still the least: only the tie is wrong
        distance = p.split(" at ")
        assert distance[1].split(";")[0] == distance[2]


def spoiled_sampler(sample_given, spoil):
    """A conditional sampler whose draw `spoil(array, given)` changes in place."""
    def sample(space, n, seed, given, **options):
        drawn = sample_given(space, n, seed, given, **options)
        spoil(drawn[0], given)
        return drawn
    return sample


def test_a_biased_conditional_sample_is_reported(monkeypatch):
    def half_the_first(array, given):   # still agreeing with `given`, but not uniform
        array[len(array) // 2:] = array[0]
    monkeypatch.setattr(designs, "sample_given", spoiled_sampler(designs.sample_given, half_the_first))
    found = problems_with(TIES, givens=3, points=0, targets=0)
    assert any("chi-square" in p for p in found), found


def test_a_stray_conditional_sample_is_reported(monkeypatch):
    s, rows = listed(TIES)

    def one_stray(array, given):   # a valid configuration that does not agree with `given`
        names = s.parameters
        array[-1] = next(r for r in rows if any(r[names.index(k)] != v for k, v in given.items()))
    monkeypatch.setattr(designs, "sample_given", spoiled_sampler(designs.sample_given, one_stray))
    found = problems_with(TIES, givens=3, points=0, targets=0)
    assert any("which does not agree or is not valid" in p for p in found), found


def test_an_unstratified_design_is_reported(monkeypatch):
    unit_design = designs.unit_design
    monkeypatch.setattr(designs, "unit_design", lambda n, d, method="lhs", seed=0: unit_design(n, d, "random", seed))
    found = problems_with(MOVES_SPACE, givens=0, targets=0, points=0, n_design=12)
    assert any("not one per stratum" in p for p in found), found


def test_an_invalid_design_point_is_reported(monkeypatch):
    s, rows = listed(MOVES_SPACE)
    invalid = next(c for c in itertools.product(*s.value_lists().values()) if c not in set(rows))
    from_unit_many = designs.Quantiles.from_unit_many

    def spoiled(self, points):
        array = from_unit_many(self, points)
        array[0] = invalid
        return array
    monkeypatch.setattr(designs.Quantiles, "from_unit_many", spoiled)
    found = problems_with(MOVES_SPACE, givens=0, targets=0, points=0)
    assert any("is not a valid configuration" in p for p in found), found
