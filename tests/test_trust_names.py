"""Issue 23, names and bytes: a name means what Python reads (NFKC), wherever it is given, and
a value is written with the same bytes by every backend (a NUL, which cannot be, is refused).

Every wrong-answer test here fails on 5b00030: there a T1 `Name` kept its spelling while the
condition's name was normalised (a condition constrained another parameter), and the C backend's
CSV ended a value at its NUL while `validate` compared only digests of rows.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from solverspace.check import parse_assignment
from solverspace.errors import OptionError, SettingError, SolverspaceError, SpaceDefinitionError, SpaceEvaluationError
from solverspace.loader import load, load_source
from solverspace.space import Space
from solverspace.t1_read import load_t1_text

LIGATURE = "\ufb01"   # 'ﬁ', which Python reads as 'fi'


def t1(parameters, conditions=()) -> str:
    return json.dumps({"ConfigurationSpace": {"TuningParameters": parameters, "Conditions": list(conditions)}})


def count(model) -> int:
    return Space(model).count("reference")


# ------------------------------------------------------------------------------ item 5: names
def test_t1_names_that_python_reads_as_one_are_refused_with_both_spellings():
    """5b00030 counted 3 (Name 'ﬁ' unconstrained, the condition `ﬁ > 2` on 'fi')."""
    text = t1([{"Name": LIGATURE, "Type": "int", "Values": "[1, 2, 3]"},
               {"Name": "fi", "Type": "int", "Values": "[1, 2, 3]"}],
              [{"Parameters": [LIGATURE], "Expression": f"{LIGATURE} > 2"}])
    with pytest.raises(SpaceDefinitionError) as err:
        load_t1_text(text, "fi.json")
    assert f"{LIGATURE!r}" in err.value.message and "'fi'" in err.value.message
    assert "one name" in err.value.message


def test_a_t1_name_is_normalised_as_its_condition_is():
    """5b00030 refused this file: the condition's `ﬁ` (read as 'fi') named no parameter."""
    text = t1([{"Name": LIGATURE, "Type": "int", "Values": "[1, 2, 3]"},
               {"Name": "y", "Type": "int", "Values": "[1, 2]"}],
              [{"Parameters": [LIGATURE, "y"], "Expression": f"{LIGATURE} > 2"}])
    model = load_t1_text(text, "fi.json")
    assert model.parameter_names == ("fi", "y")
    assert count(model) == 2


def test_a_t1_name_normalised_to_a_keyword_is_refused():
    with pytest.raises(SpaceDefinitionError, match="not a Python identifier"):
        load_t1_text(t1([{"Name": "\uff49\uff46", "Type": "int", "Values": "[1]"}]))   # fullwidth 'if'


def test_a_space_file_binding_one_name_under_two_spellings_is_refused():
    """Python would make the second a reassignment (a derived value) or a redefinition; both
    spellings are named instead."""
    for source in (f"{LIGATURE} = range(5)\nfi = range(3)\n",
                   f"x = range(5)\n{LIGATURE} = x + 1\nfi = x + 2\n",
                   f"x = range(3)\n@iterator\ndef {LIGATURE}(x):\n    return range(x)\nfi = x\n"):
        with pytest.raises(SpaceDefinitionError) as err:
            load_source(source, "s.py")
        assert f"{LIGATURE!r}" in err.value.message and "'fi'" in err.value.message, source


def test_a_use_spelled_differently_from_its_definition_is_pythons_reading():
    model = load_source(f"{LIGATURE} = range(5)\nrequire(fi > 1)\n@require\ndef small({LIGATURE}):\n"
                        f"    return {LIGATURE} < 4\n")
    assert model.parameter_names == ("fi",)
    assert count(model) == 2


def test_check_arguments_are_normalised():
    """5b00030: `check ﬁ=3` said "'ﬁ' is not a parameter" (did you mean 'fi'?)."""
    model = load_source("fi = range(5)\nrequire(fi > 1)\n")
    assert parse_assignment(model, [f"{LIGATURE}=3"]) == {"fi": 3}
    assert Space(model).check({LIGATURE: 3}).valid
    assert not Space(model).check({LIGATURE: 1}).valid
    with pytest.raises(OptionError, match="one name"):
        parse_assignment(model, [f"{LIGATURE}=3", "fi=2"])


def test_set_arguments_are_normalised():
    source = "x = range(5)\nfi = setting(2)\nrequire(x > fi)\n"
    assert count(load_source(source, settings={LIGATURE: 3})) == 1
    with pytest.raises(SettingError, match="one name"):
        load_source(source, settings={LIGATURE: 3, "fi": 1})


def test_did_you_mean_says_the_name_is_the_same_once_normalised():
    from solverspace.errors import did_you_mean
    hint = did_you_mean(LIGATURE, ["fi", "fo"])
    assert hint.startswith(f"{LIGATURE!r} is 'fi'") and "U+FB01" in hint and "did you mean" not in hint


# ------------------------------------------------------------------------------ item 4: NUL refused
@pytest.mark.parametrize("source, where", [
    ('k = iterator(["a", "nul\\0byte"])\n', "parameter 'k'"),
    ('x = range(3)\nd = if_then_else(x > 1, "a\\0", "b")\n', "derived value 'd'"),
    ('k = iterator(["a", "b"])\nrequire(k != "b\\0")\n', "constraint"),
    ('x = range(3)\n@iterator\ndef k(x):\n    return ["a", "b\\0"] if x else ["c"]\n', "parameter 'k'"),
])
def test_a_nul_in_a_space_file_string_is_refused_at_load(source, where):
    with pytest.raises(SpaceDefinitionError) as err:
        load_source(source, "s.py")
    assert where in err.value.message and "NUL" in err.value.message and "\\x00" in err.value.message


@pytest.mark.parametrize("backend", ["reference", "c"])
def test_a_nul_yielded_by_a_closure_is_refused(backend):
    """Its values exist only when it runs: refused there, by every backend (C tabulates it)."""
    source = 'x = range(3)\n@iterator\ndef k(x):\n    yield "a"\n    yield "b\\0" if x == 2 else "c"\n'
    with pytest.raises(SpaceEvaluationError, match="closure iterator 'k'.*NUL"):
        Space.from_source(source, filename="s.py").count(backend)


def test_a_nul_in_a_t1_value_is_refused_naming_the_parameter():
    for values in (["a", "nul\0byte"], '["a", "nul\\u0000byte"]'):
        with pytest.raises(SpaceDefinitionError, match="tuning parameter 'k'.*nul\\\\x00byte.*NUL"):
            load_t1_text(t1([{"Name": "k", "Type": "string", "Values": values}]), "nul.json")


def test_the_cli_refuses_a_nul_with_exit_2(tmp_path):
    path = tmp_path / "nul.json"
    path.write_text(t1([{"Name": "k", "Type": "string", "Values": ["a", "nul\0byte"]}]))
    run = subprocess.run([sys.executable, "-m", "solverspace", "count", str(path), "--backend", "reference"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "NUL" in run.stderr and "Traceback" not in run.stderr
