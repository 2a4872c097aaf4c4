"""Issue 25, moves (second half): conditional samples (`sample(given=...)`, `sample --given`):
exact and uniform over the valid configurations that agree with `given` (chi-square against the
exact conditional distribution), refusals that say why (the bad-input table of every move:
tests/test_moves_bad_input.py)."""
from __future__ import annotations

from collections import Counter

import pytest
from scipy import stats

from solverspace.cli import main
from solverspace.moves.designs import NoCompletionError
from tests.helpers import MOVES_SPACE, space

pytestmark = pytest.mark.needs_cc

HAND = MOVES_SPACE


@pytest.mark.parametrize("given", [{"x": 1}, {"k": "a"}, {"y": 3, "h": 2}, {"h": 1}, {"x": 2, "y": 2, "k": "b"}])
def test_conditional_sample_is_uniform_on_the_agreeing_configurations(given):
    s = space(HAND)
    names = s.parameters
    agree = [r for r in s.rows("reference") if all(r[names.index(k)] == v for k, v in given.items())]
    drawn = [tuple(r) for r in s.sample(40 * len(agree), seed=7, given=given, replace=True).tolist()]
    assert set(drawn) <= set(agree)
    observed = Counter(drawn)
    if len(agree) > 1:
        assert stats.chisquare([observed[r] for r in agree]).pvalue > 1e-3
    distinct = s.sample(len(agree), seed=1, given=given)
    assert sorted(map(tuple, distinct.tolist())) == sorted(agree)          # without replacement: all of them
    assert s.sample(3, seed=2, given=given).tolist() == s.sample(3, seed=2, given=given).tolist()


def test_conditional_sample_with_the_reference_method():
    s = space(HAND)
    drawn = s.sample(5, seed=0, given={"x": 1}, method="reference")
    assert all(r[0] == 1 for r in drawn.tolist())


def test_no_completion_says_why():
    s = space(HAND)
    with pytest.raises(NoCompletionError, match="no valid configuration has x=4 y=4"):
        s.sample(2, given={"x": 4, "y": 4})


def test_sample_given_command(tmp_path, capsys):
    path = tmp_path / "s.py"
    path.write_text("x = range(1, 5)\ny = range(x, 5)\nk = iterator(['b', 'a'])\nrequire(x + y < 6)\n")
    assert main(["sample", str(path), "-n", "4", "--given", "x=1", "k=a"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "x,y,k" and len(lines) == 5
    assert all(line.startswith("1,") and line.endswith(",a") for line in lines[1:])
    assert main(["sample", str(path), "-n", "2"]) == 0           # without --given: as before
    assert len(capsys.readouterr().out.splitlines()) == 3
