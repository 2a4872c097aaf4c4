"""Partial `check` with CP-SAT names an undefined derived value or constraint (division or modulo
by zero) instead of blaming the domains alone (issue 11)."""
from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("ortools")

from solverspace.cli import main  # noqa: E402
from solverspace.translators.cpsat.backend import complete  # noqa: E402
from tests.helpers import space  # noqa: E402

DERIVED = """
a = range(0, 5)
b = range(0, 3)
q = a // b
require(q >= 0)
"""

MODULO = """
a = range(0, 5)
b = range(0, 3)
c = range(3)
q = a // b
r = a % (c - 1)
require(q + r < 3)
require(a > 3)
"""

CONSTRAINT = """
a = range(0, 5)
b = range(0, 3)
require(a % b == 1)
"""


@pytest.mark.parametrize("source, assignment, name, failing", [
    (DERIVED, {"b": 0}, "q", "a // b"),
    (MODULO, {"b": 0, "c": 1}, "q", "a // b"),
    (MODULO, {"b": 1, "c": 1}, "r", "a % (c - 1)"),
    (CONSTRAINT, {"b": 0}, "require_line4", "a % b"),
])
def test_the_undefined_value_is_named(source, assignment, name, failing):
    result = complete(space(source), assignment, workers=1)
    assert result.feasible is False
    assert (result.undefined, result.conflict) == ([name], [])
    operation, config = result.failing[name]
    assert operation == failing and all(config[k] == v for k, v in assignment.items())


def test_a_constraint_and_an_undefined_value_together():
    s = space("a = range(0, 5)\nb = range(0, 3)\nq = 6 // (a - b)\n"
              "@require\ndef big(a, b, q):\n    return a == b or q > 9\n")
    result = complete(s, {"a": 1}, workers=1)  # b=1: q undefined; b=0 or 2: q too small
    assert result.feasible is False
    assert result.undefined == ["q"] and result.conflict == ["big"]


def test_a_plain_conflict_has_no_undefined_value():
    result = complete(space(MODULO), {"b": 1, "a": 1}, workers=1)
    assert result.feasible is False and result.undefined == [] and result.conflict == ["require_line8"]
    assert complete(space(MODULO), {"b": 2, "c": 0}, workers=1).feasible is True


def test_the_command_line_names_the_derived_value_and_its_line(tmp_path, capsys):
    path = tmp_path / "div.py"
    path.write_text(textwrap.dedent(DERIVED))
    assert main(["check", str(path), "b=0"]) == 1
    out = capsys.readouterr().out
    assert "domains alone" not in out
    assert "derived value q = a // b is undefined: division or modulo by zero in `a // b`" in out
    assert f"{path}:4" in out
