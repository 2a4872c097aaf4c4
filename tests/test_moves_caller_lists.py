"""Neighbours in a caller's parameter indices (`Moves.neighbors_in`: each parameter's values in
the caller's order, with values no configuration takes, a caller's further test `keep`) and of
configurations that are not valid (`valid_only=False`), against brute force over the listed
space in the caller's indices (`validation.moves.brute_neighbors`), on both engines."""
from __future__ import annotations

import random

import numpy as np
import pytest

from solverspace.moves.engine import Moves
from solverspace.moves.neighbors import METHODS, NeighborError
from solverspace.validation.moves import brute_neighbors
from tests.helpers import COMPILED_MOVES_SPACE, space

SMALL = """
    x = range(1, 7)
    y = range(x, 7)
    k = iterator(["b", "a", "c"])
    require(x + y < 9)
    require((k == "a") | (x < 4))
    reject_if((k == "c") & (y == 5))
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
