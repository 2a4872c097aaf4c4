"""Issue 25, moves (second half): repair, the valid configuration nearest to a point of the index
box, exactly against brute force (`validation.moves_b.repair_by_list`); the `repair` command."""
from __future__ import annotations

import itertools
import os
import random
import zlib

import pytest
from hypothesis import HealthCheck, assume, given, settings

from solverspace import Space, SolverspaceError
from solverspace.cli import main
from solverspace.moves.designs import EmptySpaceError, Quantiles
from solverspace.moves.repair import PROBE_POINTS, Repairer
from solverspace.translators.c import nearest
from solverspace.translators.c.backend import CBackend
from solverspace.validation.generate import spaces
from solverspace.validation.moves_b import repair_by_list, repair_targets
from tests.helpers import load_generated, MOVES_SPACE, space, tiny_gemm

pytestmark = pytest.mark.needs_cc

HAND = MOVES_SPACE


def test_repair_by_hand_and_tie_order():
    s = space("x = range(1, 5)\ny = range(x, 5)\nk = iterator(['b', 'a'])\nrequire(x + y < 6)")
    # (4, 4, 'b') is invalid; (2, 3, 'b') and (1, 4, 'b') are both at distance 3: the tie goes to the
    # smaller (|i - t|, i) of x, the first loop: |1 - 3| = 2 beats |0 - 3| = 3
    assert s.repair((4, 4, "b")) == (2, 3, "b")
    assert s.repair_distance({"x": 4, "y": 4, "k": "b"}) == 3
    assert s.repair(indices=(3, 3, 0)) == (2, 3, "b")
    assert s.repair((1, 2, "a")) == (1, 2, "a") and s.repair_distance((1, 2, "a")) == 0


@pytest.mark.parametrize("probe", [PROBE_POINTS, 0], ids=["near-first", "search-alone"])
def test_repair_of_every_point_of_the_box_is_the_brute_force_minimum(monkeypatch, probe):
    monkeypatch.setattr(Repairer, "probe_points", probe)
    s = space(HAND)
    rows = list(s.rows("reference"))
    sizes = [len(v) for v in s.value_lists().values()]
    for target in itertools.product(*(range(n) for n in sizes)):
        want, distance = repair_by_list(s, rows, target)
        assert (s.repair(indices=target), s.repair_distance(indices=target)) == (want, distance), target


def test_large_units_are_searched_by_subtree_counts(monkeypatch):
    """The reference search (engine `python`) with every unit descended by subtree counts."""
    listed = space(HAND)
    rows = list(listed.rows("reference"))
    monkeypatch.setattr(Quantiles, "list_rows", 0)
    monkeypatch.setattr(Repairer, "engine", "python")
    monkeypatch.setattr(Repairer, "probe_points", 0)   # the search itself, even for near targets
    counted = space(HAND)
    sizes = [len(v) for v in counted.value_lists().values()]
    for target in itertools.product(*(range(n) for n in sizes)):
        assert (counted.repair(indices=target), counted.repair_distance(indices=target)) == \
            repair_by_list(counted, rows, target)


def test_repair_bad_input_and_empty_space():
    s = space(HAND)
    with pytest.raises(SolverspaceError, match="not in parameter 'y'"):
        s.repair((1, 9, "a", 1))
    with pytest.raises(SolverspaceError, match="out of range"):
        s.repair(indices=(0, 4, 0, 0))
    with pytest.raises(SolverspaceError, match="exactly one"):
        s.repair()
    with pytest.raises(EmptySpaceError, match="no valid configuration"):
        space("x = range(3)\nrequire(x > 5)").repair(indices=(0,))


def test_repair_command(tmp_path, capsys):
    path = tmp_path / "s.py"
    path.write_text("x = range(1, 5)\ny = range(x, 5)\nk = iterator(['b', 'a'])\nrequire(x + y < 6)\n")
    assert main(["repair", str(path), "x=4", "y=4", "k=b"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == "x=2 y=3 k=b" and "distance 3" in captured.err
    assert main(["repair", str(path), "--indices", "3,3,0"]) == 0
    assert capsys.readouterr().out.strip() == "x=2 y=3 k=b"


@pytest.mark.parametrize("argv, message", [
    (["x=9", "y=1", "k=a"], "not in parameter 'x'"),
    (["--indices", "0,a,0"], "whole numbers"),
    (["--indices", "0,0,5"], "out of range"),
    ([], "exactly one"),
])
def test_repair_command_bad_input(tmp_path, capsys, argv, message):
    path = tmp_path / "s.py"
    path.write_text("x = range(1, 5)\ny = range(x, 5)\nk = iterator(['b', 'a'])\nrequire(x + y < 6)\n")
    assert main(["repair", str(path), *argv]) == 2
    assert message in capsys.readouterr().err


# ------------------------------------------------------------------------ the compiled search
# (translators/c/nearest.py) against brute force and against the reference search (`python`)
NEAREST_GENERATED = int(os.environ.get("SOLVERSPACE_NEAREST_EXAMPLES", "12"))
NEAREST_SLOW = int(os.environ.get("SOLVERSPACE_NEAREST_SLOW_EXAMPLES", "150"))

PATHS_SPACE = """
N = setting(6)
a = range(N, 0, -1)                       # a descending range
@iterator
def b(a):                                 # buffers in no order, or ascending
    if a % 2:
        return [5, 1, 3]
    return [2, 4]
k = iterator(["z", "x", "y"])             # codes in another order than the value list
@iterator
def c(a, b):
    for v in range(a + b, 0, -2):         # a closure: a buffer in descending order
        yield v
d = range(1, a + 2)                       # a range known once a is bound: the domain cut
q = 12 // (a - 3)                         # undefined at a = 3: those configurations are not valid
require((q + b) % 3 != 0)
require((k != "x") | (c > 2))
require(d * b <= 9 + c)
"""


def nearest_matches_brute_force(s, rows, targets) -> None:
    """Each target's repair, found near the target first (the default) and by the search alone."""
    for target in targets:
        want = repair_by_list(s, rows, target)
        assert (s.repair(indices=target), s.repair_distance(indices=target)) == want, target
        kept, Repairer.probe_points = Repairer.probe_points, 0
        try:
            assert (s.repair(indices=target), s.repair_distance(indices=target)) == want, target
        finally:
            Repairer.probe_points = kept


def test_compiled_search_paths_against_brute_force():
    s = space(PATHS_SPACE)
    rows = list(s.rows("reference"))
    sizes = [len(v) for v in s.value_lists().values()]
    assert rows and 3 not in {r[0] for r in rows}   # q is undefined there
    targets = list(itertools.product(*(range(n) for n in sizes)))
    nearest_matches_brute_force(s, rows, random.Random(3).sample(targets, 300))


@pytest.mark.parametrize("span, tree, rows", [(0, 0, 1 << 29), (0, 1, 1 << 29), (1 << 20, 3, 1 << 29), (0, 2, 0)])
def test_sorted_lookups_and_tree_depths(monkeypatch, span, tree, rows):
    """The value lists looked up by binary search (LOOKUP_SPAN 0), box trees of 0, 1 and 3
    levels below the units, and no tree at all (a space past TREE_ROWS: the whole value lists
    as boxes): the same answers as brute force."""
    monkeypatch.setattr(nearest, "LOOKUP_SPAN", span)
    monkeypatch.setattr(nearest, "TREE_LEVELS", tree)
    monkeypatch.setattr(nearest, "TREE_ROWS", rows)
    s = space(PATHS_SPACE)
    rows = list(s.rows("reference"))
    sizes = [len(v) for v in s.value_lists().values()]
    targets = list(itertools.product(*(range(n) for n in sizes)))
    nearest_matches_brute_force(s, rows, random.Random(tree).sample(targets, 120))


def compiled_nearest(s) -> nearest.CompiledNearest:
    """The compiled search of a space, built as `Space.repair` builds it."""
    units = CBackend().enumerator(s.plan).count_units()
    return nearest.CompiledNearest(s.plan, list(s.value_lists().values()), units)


def test_bound_and_work():
    s = space(PATHS_SPACE)
    compiled = compiled_nearest(s)
    rows = list(s.rows("reference"))
    valid = s.param_indices(rows[len(rows) // 2])
    assert compiled.nearest(valid) == (tuple(rows[len(rows) // 2]), 0)
    assert sum(compiled.visited) <= 2 * len(s.parameters)     # straight down: the target itself is valid
    far = tuple(len(v) - 1 for v in s.value_lists().values())
    config, distance = compiled.nearest(far)
    assert compiled.nearest(far, bound=distance) is None      # nothing strictly nearer
    assert compiled.nearest(far, bound=distance + 1) == (config, distance)


@pytest.mark.parametrize("variant", [("double", "real", 0, 0), ("single", "complex", 1, 0)],
                         ids=lambda v: "-".join(map(str, v)))
def test_compiled_equals_reference_search_on_tiny_gemm(monkeypatch, variant):
    monkeypatch.setattr(Repairer, "probe_points", 0)   # the two searches, even for near targets
    s = tiny_gemm(variant)
    rng = random.Random(7)
    sizes = [len(v) for v in s.value_lists().values()]
    targets = [tuple(rng.randrange(n) for n in sizes) for _ in range(25)]
    compiled = [(s.repair(indices=t), s.repair_distance(indices=t)) for t in targets]
    monkeypatch.setattr(Repairer, "engine", "python")
    assert [(s.repair(indices=t), s.repair_distance(indices=t)) for t in targets] == compiled


def test_unknown_engine_is_refused(monkeypatch):
    monkeypatch.setattr(Repairer, "engine", "fast")
    with pytest.raises(ValueError, match="compiled, python"):
        space(HAND).repair(indices=(0, 0, 0, 0))


def generated_nearest(source: str, targets: int) -> None:
    s = Space(load_generated(source))
    try:
        rows = list(itertools.islice(s.rows("reference"), 2001))
        s.value_lists()
        if rows:
            s.count("c")
    except SolverspaceError:
        assume(False)
    assume(0 < len(rows) <= 2000 and s.parameters)
    rng = random.Random(zlib.crc32(source.encode()))
    nearest_matches_brute_force(s, rows, repair_targets(s, rows, targets, rng))


@settings(max_examples=NEAREST_GENERATED, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(source=spaces(c_compatible=True))
def test_generated_spaces_compiled_nearest(source):
    generated_nearest(source, 10)


@pytest.mark.slow
@settings(max_examples=NEAREST_SLOW, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(source=spaces(c_compatible=True, max_parameters=5, max_candidates=4000))
def test_many_generated_spaces_compiled_nearest(source):
    generated_nearest(source, 20)


# 2**64 configurations, every parameter in the one rule: the count walks all of them (never ends)
SUM_RULE = "".join(f"p{i} = range(1 << 16)\n" for i in range(4)) + "require(p0 + p1 + p2 + p3 != 7)\n"


def test_a_valid_or_near_point_is_repaired_without_counting(monkeypatch):
    """A valid point is its own repair and a near one is found among the points around it: neither
    counts the space (here the count of 2**64 configurations would not end)."""
    from solverspace.translators.c.backend import CEnumerator

    def no_count(*args, **kwargs):
        raise AssertionError("the space was counted")
    monkeypatch.setattr(CEnumerator, "count_units", no_count)
    s = space(SUM_RULE)
    assert s.repair((5, 7, 9, 11)) == (5, 7, 9, 11) and s.repair_distance((5, 7, 9, 11)) == 0
    # (1, 2, 3, 1) sums to 7: eight points at distance 1 are valid; the tie goes to the last loop, p3,
    # at the smaller index
    assert s.repair((1, 2, 3, 1)) == (1, 2, 3, 0) and s.repair_distance((1, 2, 3, 1)) == 1
    assert s.repair(indices=(0, 0, 0, 7)) == (0, 0, 0, 6)


def test_nearby_checks_the_target_first_and_stops_at_its_limit():
    from solverspace.moves.repair import nearby, sphere
    checked = []

    def valid(point):
        checked.append(point)
        return sum(point) >= 4
    assert nearby((3, 4), (10, 10), [0, 1], valid) == ((3, 4), 0) and checked == [(3, 4)]
    checked.clear()
    # distance 2 from (1, 1): (3, 1), (2, 2), (1, 3) are valid; the tie key (|i - t|, i) per loop
    # takes the smallest change of the first loop, then of the second: (1, 3)
    assert nearby((1, 1), (10, 10), [0, 1], valid) == ((1, 3), 2)
    assert len(checked) == 1 + 4 + 6     # the points of the box at distance 0, 1, 2 from (1, 1)
    assert nearby((0, 0), (10, 10), [0, 1], valid, limit=5) is None
    assert sorted(sphere((0, 1), (3, 3), 1)) == [(0, 0), (0, 2), (1, 1)]
    assert nearby((0, 0), (2, 2), [0, 1], lambda point: False) is None   # the whole box checked
