"""Neighbours in a caller's parameter indices (`Moves.neighbors_in`: each parameter's values in
the caller's order, with values no configuration takes, a caller's further test `keep`) and of
configurations that are not valid (`valid_only=False`), against brute force over the listed
space in the caller's indices (`validation.moves.brute_neighbors`), on both engines; the closest
neighbours of a configuration that is not valid by the repair search (`Moves.nearest_all`), on
points with no Hamming neighbour among them."""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from solverspace.moves.designs import Quantiles
from solverspace.moves.engine import Moves
from solverspace.moves.neighbors import METHODS, NeighborError, Neighbors
from solverspace.moves.repair import Repairer
from solverspace.validation.moves import brute_neighbors, index_array
from tests.helpers import COMPILED_MOVES_SPACE, space

SMALL = """
    x = range(1, 7)
    y = range(x, 7)
    k = iterator(["b", "a", "c"])
    require(x + y < 9)
    require((k == "a") | (x < 4))
    reject_if((k == "c") & (y == 5))
"""

FAR = """
    x = range(0, 12)
    y = range(0, 12)
    k = iterator(["b", "a", "c"])
    require(x + y < 5)
    require((x * y) % 3 == 0)
    reject_if((k == "c") & (x == 2))
"""


def caller_lists(s, seed: int, extra: dict) -> dict:
    """The space's value lists shuffled, each with the values of `extra` mixed in."""
    rng = random.Random(seed)
    lists = {}
    for name, values in s.value_lists().items():
        values = list(values) + list(extra.get(name, ()))
        rng.shuffle(values)
        lists[name] = tuple(values)
    return lists


def assert_brute(s, lists: dict, points: list, rows: list, keep=None) -> int:
    """Each point's neighbours by every method equal brute force over `rows` (kept by `keep`) in
    the caller's indices; the number of points that are not valid."""
    lookups = [{v: i for i, v in enumerate(values)} for values in lists.values()]
    rows = [row for row in rows if keep is None or keep(tuple(row))]
    indices = np.array([[lookup[v] for lookup, v in zip(lookups, row)] for row in rows], dtype=np.int64)
    neighbors = Moves(s).neighbors_in(lists, keep=keep, occurring=lambda: [sorted(set(column)) for column in
                                                                            indices.T.tolist()])
    listed = {tuple(row) for row in rows}
    invalid = 0
    for point in points:
        invalid += point not in listed
        target = np.array([lookup[v] for lookup, v in zip(lookups, point)], dtype=np.int64)
        for method in METHODS:
            found = neighbors.neighbors(point, method, valid_only=False)
            expected = [tuple(values[i] for values, i in zip(lists.values(), row))
                        for row in brute_neighbors(indices, target, method)]
            assert found == expected, (point, method)
    return invalid


def box_points(lists: dict, n: int, seed: int) -> list:
    rng = random.Random(seed)
    return [tuple(rng.choice(values) for values in lists.values()) for _ in range(n)]


def test_reference_engine_in_shuffled_lists_with_values_more_and_invalid_points():
    s = space(SMALL)
    lists = caller_lists(s, 1, {"x": [0, 9], "k": ["z"]})
    rows = [tuple(r) for r in s.rows("reference")]
    points = box_points(lists, 150, 2)
    assert assert_brute(s, lists, points, rows) >= 50


def test_a_further_test_keep_filters_the_valid_set():
    s = space(SMALL)
    lists = caller_lists(s, 3, {})
    rows = [tuple(r) for r in s.rows("reference")]

    def keep(config):
        return (config[0] * config[1]) % 3 != 0
    assert assert_brute(s, lists, box_points(lists, 120, 4), rows, keep) >= 40


def test_compiled_engine_in_shuffled_lists_and_invalid_points():
    s = space(COMPILED_MOVES_SPACE)
    lists = caller_lists(s, 5, {"x": [1000]})
    moves = Moves(s)
    assert moves.compiled_check() is not None and moves.neighbors_in(lists).compiled is not None
    rows = [tuple(r) for r in s.rows("reference")]
    near = [(x, y, k) for x in range(0, 45, 3) for y in (0, 1, 6, 20, 38) for k in ("p", "q")]
    assert assert_brute(s, lists, near, rows) >= 50


def test_the_space_own_lists_are_the_space_own_queries_and_refuse_an_invalid_point_by_default():
    s = space(SMALL)
    moves = Moves(s)
    assert moves.neighbors_in(s.value_lists()) is moves.neighbors()
    with pytest.raises(NeighborError, match="not a valid configuration"):
        moves.neighbors().neighbors((6, 6, "b"), "Hamming")
    assert moves.neighbors().neighbors((6, 6, "b"), "Hamming", valid_only=False) == [(1, 6, "b"), (2, 6, "b")]
    found = moves.neighbors().neighbors((4, 4, "b"), "Hamming", valid_only=False)
    assert found == sorted([(1, 4, "b"), (2, 4, "b"), (3, 4, "b"), (4, 4, "a")], key=s.param_indices)
    assert moves.neighbors().neighbors((4, 4, "b"), "Hamming-adjacent", valid_only=False) == [(3, 4, "b"), (4, 4, "a")]


def brute_closest(s, indices: np.ndarray, point: tuple) -> list[tuple]:
    """Brute force's `closest-param-indices` of `point` among the listed `indices` (value lists)."""
    target = np.array(s.param_indices(point), dtype=np.int64)
    return [tuple(s.value_lists()[n][i] for n, i in zip(s.parameters, row))
            for row in brute_neighbors(indices, target, "closest-param-indices")]


@pytest.mark.needs_cc
@pytest.mark.parametrize("list_rows", [None, 0], ids=["listed-units", "subtree-counts"])
@pytest.mark.parametrize("probe", [None, 0], ids=["near-first", "search-alone"])
@pytest.mark.parametrize("source", [SMALL, FAR], ids=["small", "far"])
def test_closest_of_every_invalid_point_by_the_repair_search_is_brute_force(monkeypatch, source, probe, list_rows):
    """The reference engine given `Moves.nearest_all` (the compiled engine has it by default):
    every point of the box that is not valid has the brute-force closest neighbours, in order,
    whether its repair is found near it or by the search, units listed or descended by counts;
    among them points with no Hamming neighbour (no distance bound to start from)."""
    if probe is not None:
        monkeypatch.setattr(Repairer, "probe_points", probe)
    if list_rows is not None:
        monkeypatch.setattr(Quantiles, "list_rows", list_rows)
    s = space(source)
    moves = Moves(s)
    hooked = Neighbors(moves.checker(), moves.param_index(), moves.occurring_indices, nearest_all=moves.nearest_all)
    plain = Neighbors(moves.checker(), moves.param_index(), moves.occurring_indices)
    rows = [tuple(r) for r in s.rows("reference")]
    indices = index_array(s, rows)
    listed, alone = set(rows), 0
    for point in itertools.product(*s.value_lists().values()):
        if point in listed:
            continue
        expected = brute_closest(s, indices, point)
        assert hooked.neighbors(point, "closest-param-indices", valid_only=False) == expected, point
        assert plain.neighbors(point, "closest-param-indices", valid_only=False) == expected, point
        alone += not plain.neighbors(point, "Hamming", valid_only=False)
    assert alone >= 3


@pytest.mark.needs_cc
def test_compiled_engine_closest_of_invalid_points_without_hamming_neighbours():
    """On the compiled engine (the space's own lists) `closest-param-indices` of a point that is
    not valid goes through the repair search; far points have no Hamming neighbour, and the
    answers (one or many at the smallest distance) are brute force's."""
    s = space(COMPILED_MOVES_SPACE)
    moves = Moves(s)
    neighbors = moves.neighbors()
    assert neighbors.compiled is not None and neighbors.nearest_all is not None
    rows = [tuple(r) for r in s.rows("reference")]
    indices = index_array(s, rows)
    listed, alone, ties = set(rows), 0, 0
    for point in [(x, y, k) for x in (0, 3, 39, 40, 57, 200, 399) for y in (0, 38, 41, 120, 399) for k in ("p", "q")]:
        if point in listed:
            continue
        expected = brute_closest(s, indices, point)
        assert neighbors.neighbors(point, "closest-param-indices", valid_only=False) == expected, point
        alone += not neighbors.neighbors(point, "Hamming", valid_only=False)
        ties += len(expected) > 1
    assert alone >= 20 and ties >= 5
