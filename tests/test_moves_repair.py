"""Issue 25, moves (second half): repair, the valid configuration nearest to a point of the index
box, exactly against brute force (`validation.moves_b.repair_by_list`); the `repair` command."""
from __future__ import annotations

import itertools

import pytest

from solverspace import SolverspaceError
from solverspace.cli import main
from solverspace.designs import EmptySpaceError, Quantiles
from solverspace.validation.moves_b import repair_by_list
from tests.helpers import MOVES_SPACE, space

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


def test_repair_of_every_point_of_the_box_is_the_brute_force_minimum():
    s = space(HAND)
    rows = list(s.rows("reference"))
    sizes = [len(v) for v in s.value_lists().values()]
    for target in itertools.product(*(range(n) for n in sizes)):
        want, distance = repair_by_list(s, rows, target)
        assert (s.repair(indices=target), s.repair_distance(indices=target)) == (want, distance), target


def test_large_units_are_searched_by_subtree_counts(monkeypatch):
    listed = space(HAND)
    rows = list(listed.rows("reference"))
    monkeypatch.setattr(Quantiles, "list_rows", 0)
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
