"""Kernel Tuner's form and the structured plan (`solverspace.analysis.structure`) answer alike.

Flat value lists with restriction strings are walked through ranges the restrictions bound; the
valid set, the rows in order, the undefined tally, samples and positions must be those of the
literal plan (every value tried), in the reference, in C and in CP-SAT; and a generated space and
its own `export-t1` list the same configurations (`validation/kt_form.py`)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from solverspace.analysis.plan import make_plan
from solverspace.lang.printing import to_source
from solverspace.space import Space
from solverspace.io.t1.read import load_t1_text
from validation.generate import spaces
from validation.kt_form import compare_forms, compare_structured, kt_spaces

pytestmark = [pytest.mark.needs_cc, pytest.mark.needs_cpsat]

_QUICK = settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
_SLOW = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def _t1(parameters: dict, conditions: list[str]) -> str:
    return json.dumps({"ConfigurationSpace": {
        "TuningParameters": [{"Name": n, "Type": "int", "Values": v} for n, v in parameters.items()],
        "Conditions": [{"Parameters": list(parameters), "Expression": c} for c in conditions]}})


def test_restrictions_become_ranges_strides_and_tables():
    text = _t1({"dim": "list(range(1, 65))", "blk": "list(range(1, 1025))", "vec": "[1, 2]", "mul": "[0, 1]"},
               ["dim <= blk and blk % dim == 0", "blk * vec <= 512", "mul == 0 if vec == 1 else True"])
    space = Space(load_t1_text(text, "kt.json"))
    domains = {level.parameter.name: to_source(level.parameter.domain) for level in space.plan.levels}
    assert domains["dim"] == "range(1, 65)"
    assert domains["blk"] == "range(dim, 1025, dim)"   # the stride and the lower bound: a dependent range
    assert domains["mul"] == "[0] if vec == 1 else [0, 1]"   # a short list filtered by an earlier one
    assert compare_structured(text) == []


def test_a_restriction_that_may_divide_by_zero_stays_a_filter():
    # blk % dim with dim = 0: undefined for every blk; dropping values there would change the tally
    text = _t1({"dim": "list(range(0, 20))", "blk": "list(range(0, 40))"}, ["blk % dim == 0 and blk >= 3"])
    space = Space(load_t1_text(text, "kt.json"))
    assert to_source(space.plan.levels[1].parameter.domain) == "range(0, 40)"
    literal = Space(space.model, make_plan(space.model, structured=False))
    assert space.stats("reference").undefined == literal.stats("reference").undefined == 40
    assert compare_structured(text) == []


def test_the_funnel_walks_the_literal_plan():
    # b's loop is planned as range(1, a + 1); the funnel still shows every listed b tried
    text = _t1({"a": "list(range(1, 33))", "b": "list(range(1, 33))"}, ["b <= a"])
    space = Space(load_t1_text(text, "kt.json"))
    assert to_source(space.plan.levels[1].parameter.domain) == "range(1, a + 1)"
    for backend in ("reference", "c"):
        funnel = space.funnel(backend)
        (rule,) = funnel.constraints
        assert (rule.reached, rule.rejected, funnel.count) == (32 * 32, 32 * 31 // 2, 32 * 33 // 2)


@given(kt_spaces())
@_QUICK
def test_kernel_tuner_form_spaces_structured_and_literal_agree(text):
    assert compare_structured(text) == []


@given(spaces())
@_QUICK
def test_generated_spaces_and_their_export_agree(source):
    assert compare_forms(source) == []


@pytest.mark.slow
@given(kt_spaces(max_parameters=5))
@_SLOW
def test_kernel_tuner_form_spaces_agree_many(text):
    assert compare_structured(text) == []


@pytest.mark.slow
@given(spaces())
@_SLOW
def test_generated_spaces_and_their_export_agree_many(source):
    assert compare_forms(source) == []


def test_check_names_the_rules_and_domains_as_written():
    text = _t1({"dim": "list(range(1, 65))", "blk": "list(range(1, 1025))", "vec": "[1, 2]", "mul": "[0, 1]"},
               ["dim <= blk and blk % dim == 0", "mul == 0 if vec == 1 else True"])
    space = Space(load_t1_text(text, "kt.json"))
    result = space.check({"dim": 2, "blk": 3, "vec": 1, "mul": 1})
    assert [r.rule for r in result.rejections] == ["condition_1", "condition_2"]
