"""Strings and integers are never confused, in every backend alike (DESIGN.md, fixed semantics):
`"a" == 0` is False, ordering a string is refused, a value list mixing kinds is refused at load,
and a closure iterator receives values (strings as strings), tabulated once over its inputs'
actual values (`solverspace.lang.kinds`, `solverspace.lang.closures`)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from solverspace import Space
from solverspace.cli import main
from solverspace.core.errors import SpaceDefinitionError
from solverspace.lang.kinds import INT, STR, KindError
from tests.helpers import space as _space

needs_c = pytest.mark.skipif(shutil.which(os.environ.get("CC", "gcc")) is None, reason="no C compiler")


def space(text: str) -> Space:
    """A space named k.py (the refusal tests read the file name in messages)."""
    return _space(text, filename="k.py")


def reference_rows(s: Space) -> list:
    return sorted(s.rows("reference"), key=repr)


def c_rows(s: Space) -> list:
    from solverspace.translators.c.backend import CBackend
    return sorted(CBackend(threads=2).rows(s.plan), key=repr)


def cpsat_count(s: Space) -> int:
    pytest.importorskip("ortools")
    return int(s.count(backend="cpsat", workers=1))


CORPUS = Path(__file__).parent / "corpus"
# the two spaces on which C once disagreed (their stories are in the files)
CLOSURE_OVER_CATEGORICAL = (CORPUS / "disagree-c-closure-over-categorical-input.py").read_text(encoding="utf-8")
CLOSURE_OVER_STRING_CLOSURE = (CORPUS / "disagree-c-closure-over-string-closure.py").read_text(encoding="utf-8")

CATEGORICAL_AGAINST_INTEGER = """\
k = iterator(["a", "b"])
x = range(0, 3)
d = 1 // x
require(k != 0)
require((k != x) & (k != d))
require(k != (2 // x))
"""

SPARSE_CLOSURE_INPUT = """\
a = iterator([1, 1000000])
@iterator
def k(a):
    yield a
    yield a + 1
"""


# ------------------------------------------------------------------------------ closures
@needs_c
def test_c_closure_receives_the_strings_of_a_categorical_input():
    s = space(CLOSURE_OVER_CATEGORICAL)
    assert reference_rows(s) == [("one", 1), ("one", 2), ("two", 3)]
    assert c_rows(s) == reference_rows(s)


@needs_c
def test_c_closure_over_a_closure_that_yields_strings():
    s = space(CLOSURE_OVER_STRING_CLOSURE)
    assert reference_rows(s) == [("x", 1), ("y", 2), ("y", 3)]
    assert c_rows(s) == reference_rows(s)


def test_cpsat_counts_closures_over_strings():
    assert cpsat_count(space(CLOSURE_OVER_CATEGORICAL)) == 3
    assert cpsat_count(space(CLOSURE_OVER_STRING_CLOSURE)) == 3


def test_closure_table_is_tabulated_over_values_not_codes():
    s = space(CLOSURE_OVER_CATEGORICAL)
    table = s.model.closures.table(s.model.parameter["k"].domain)
    assert table.inputs == (("one", "two"),)
    assert table.rows == {("one",): (1, 2), ("two",): (3,)}


@needs_c
def test_closure_over_a_sparse_input_is_tabulated_over_its_values():
    s = space(SPARSE_CLOSURE_INPUT)
    table = s.model.closures.table(s.model.parameter["k"].domain)
    assert table.inputs == ((1, 1000000),)
    assert c_rows(s) == reference_rows(s) == [(1, 1), (1, 2), (1000000, 1000000), (1000000, 1000001)]
    assert cpsat_count(s) == 4


def test_a_closure_that_cannot_be_tabulated_is_refused_by_name():
    from solverspace.translators.errors import UnsupportedConstruct
    from solverspace.translators.c.backend import CBackend
    s = space("a = range(0, 10 ** 6)\n@iterator\ndef k(a):\n    yield a % 3\n")
    with pytest.raises(UnsupportedConstruct, match="input 'a' takes too many values to tabulate"):
        CBackend(threads=1).count(s.plan)


def test_partial_check_with_a_closure_over_a_categorical_input(capsys):
    pytest.importorskip("ortools")
    from solverspace.translators.cpsat.explain import complete
    s = space(CLOSURE_OVER_CATEGORICAL)
    result = complete(s.plan, {"alg": "one"})
    assert result.feasible is True and result.completion["alg"] == "one"
    assert result.completion["k"] in (1, 2)
    assert complete(s.plan, {"alg": "two", "k": 1}).feasible is False


# ------------------------------------------------------------------------------ comparisons
@needs_c
def test_a_string_never_equals_an_integer_in_any_backend():
    s = space(CATEGORICAL_AGAINST_INTEGER)
    expected = [("a", 1), ("a", 2), ("b", 1), ("b", 2)]  # x == 0 divides by zero
    assert reference_rows(s) == expected
    assert c_rows(s) == expected
    assert cpsat_count(s) == 4
    from solverspace.translators.c.backend import CBackend
    from solverspace.translators.c.optimize import Options
    stats = CBackend(threads=1, options=Options.literal()).count(s.plan)
    assert (stats.count, stats.undefined) == (4, s.stats("reference").undefined)  # the decided != keeps 1 // x


def test_kinds_are_decided_statically():
    s = space(CATEGORICAL_AGAINST_INTEGER)
    kinds = s.model.kinds
    assert kinds.of("k") == STR and kinds.of("x") == INT and kinds.of("d") == INT
    c = s.model.constraints[0].expr
    assert kinds.decided(c) is True


ORDERINGS = [
    ('k = iterator(["a", "b"])\nx = range(3)\nrequire(k < x)\n', "orders the categorical"),
    ('k = iterator(["a", "b"])\nrequire(k >= "a")\n', "orders the categorical"),
    ('k = iterator(["a", "b"])\nx = range(3)\n@require\ndef c(k, x):\n    return x <= k\n', "orders the categorical"),
    ('k = iterator(["a", "b"])\nd = k + 1\n', "in arithmetic"),
    ('k = iterator(["a", "b"])\nx = range(k, 3)\n', "range bound"),
]


@pytest.mark.parametrize("source, message", ORDERINGS)
def test_ordering_a_string_is_refused_at_load_with_the_line(source, message):
    with pytest.raises(KindError, match=message) as info:
        Space.from_source(source, filename="k.py")
    assert "k.py:" in str(info.value) and "== and !=" in str(info.value) or "range bounds" in str(info.value)


# ------------------------------------------------------------------------------ mixed kinds
MIXED = [
    ('t = iterator(["auto", 1, 2])\n', "parameter 't'", 1),
    ('x = range(2)\nd = if_then_else(x > 0, "big", 0)\n', "derived value 'd'", 2),
    ('x = range(2)\n@iterator\ndef t(x):\n    if x > 0:\n        return ["a", "b"]\n    return range(3)\n',
     "parameter 't'", 3),
    ('t = iterator(["a"]) | iterator([1])\n', "parameter 't'", 1),
]


@pytest.mark.parametrize("source, who, line", MIXED)
def test_mixed_strings_and_integers_are_refused_at_load(source, who, line):
    with pytest.raises(KindError, match="mixes strings and integers") as info:
        Space.from_source(source, filename="k.py")
    text = str(info.value)
    assert who in text and f"k.py:{line}:" in text
    assert "sentinel such as 0" in text


def test_a_closure_yielding_both_kinds_is_refused_naming_one_of_each():
    source = "@iterator\ndef t():\n    yield 'auto'\n    yield 4\n"
    with pytest.raises(KindError, match=r"closure iterator 't' yields both strings and integers \(e.g. 'auto' and 4\)"):
        Space.from_source(source, filename="k.py")


def test_a_closure_too_big_to_tabulate_is_checked_per_call_by_the_reference():
    s = space("a = range(0, 200000)\n@iterator\ndef t(a):\n    yield 'x' if a == 5 else 1\n    yield 2\n")
    # the kind of t is unknown at load (no table), so the reference refuses the first mixed call
    with pytest.raises(KindError, match="yields both strings and integers"):
        s.count("reference")


def test_mixed_kinds_are_a_usage_error_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "mixed.py"
    path.write_text('t = iterator(["auto", 1, 2])\n')
    for command in ("count", "validate"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        assert "mixed.py:1: parameter 't'" in err and "Traceback" not in err


def test_load_error_is_a_space_definition_error():
    assert issubclass(KindError, SpaceDefinitionError)


# ------------------------------------------------------------------------------ generated
def test_generated_kind_mixing_spaces_are_refused_by_every_backend_alike():
    """`validation.generate.refused_spaces`: every one is refused when loaded (so by the reference,
    C and CP-SAT alike, with one message), never accepted by one backend and refused by another."""
    from hypothesis import HealthCheck, given, settings

    from solverspace.validation.generate import refused_spaces
    from solverspace.validation.validate import validate_source

    forms = set()

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(refused_spaces(c_compatible=True))
    def check(source):
        with pytest.raises(KindError) as info:
            Space.from_source(source, filename="g.py")
        with pytest.raises(KindError) as again:
            validate_source(source, label="g.py", backends=("reference", "cpsat"))
        assert str(again.value) == str(info.value)
        assert "g.py:" in str(info.value) and "hint:" in str(info.value)
        forms.add(str(info.value).split(": ", 2)[-1].split("(")[0][:30])

    check()
    assert len(forms) >= 3  # several kinds of refusal were drawn
