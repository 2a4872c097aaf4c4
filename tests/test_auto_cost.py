"""Issue 28: `auto` chooses by estimated cost, and builds behind an answer only where it pays.

Small versions of the issue's four large or wide models (`bench/auto_cost_models.py` writes them
at any size; `bench/auto_cost.py` times the large ones): `auto` estimates from the model what C
(generating and compiling), CP-SAT and the reference would cost, runs the cheapest where C's
cold cost is large, says which and why on stderr, and answers what every backend answers."""
from __future__ import annotations

import importlib.util
import json

import pytest

from solverspace import Space
from solverspace.registry import auto, background
from solverspace.registry.auto import AutoBackend, Costs, Shape, domain_size
from solverspace.cli import main
from solverspace.lang import ir

from tests.helpers import PROJECT_ROOT, SMALL, space_file

pytestmark = pytest.mark.usefixtures("cache")


def _models():
    """bench/auto_cost_models.py, loaded from its file (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("auto_cost_models", PROJECT_ROOT / "bench" / "auto_cost_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODELS = _models()


MEDIUM = "a = range(1, 300)\nb = range(1, 300)\nrequire((a * b) % 7 == 1)\n"


@pytest.fixture
def choose_always(monkeypatch):
    """The cost choice for every space (the small models compile in well under COST_CHOICE_AFTER)."""
    monkeypatch.setattr(auto, "COST_CHOICE_AFTER", 0.0)


# ------------------------------------------------------------------------------ the estimates
def test_the_shape_reads_sizes_groups_and_the_walk():
    shape = Shape.of(Space.from_source(MODELS.wide_binary(6)).plan)
    assert (shape.loops, shape.tests, shape.values) == (6, 3, 0)
    assert shape.groups == ((4.0, 1),) * 3                   # three tied pairs, each 2 x 2 candidates
    assert shape.walk == 2 + 4 + 8 + 16 + 32 + 64 and shape.evaluations == 4 + 16 + 64
    free = Shape.of(Space.from_source("a = range(5)\nb = iterator([1, 2, 3])\nc = range(a, 9)\n"
                                      "require(c % 2 == 0)\n").plan)
    assert free.groups == ((None, 1),) and free.walk is None   # c's domain depends on a; b is free
    assert free.values == 3 and free.squares == 9
    assert domain_size(ir.Range(ir.Const(1), ir.Const(10), ir.Const(3))) == 3
    assert domain_size(ir.Range(ir.Const(1), ir.Ref("a"), ir.Const(1))) is None


def test_the_costs_rank_the_issues_models_as_measured():
    wide = Costs.of(Space.from_source(MODELS.wide_binary(300)).plan)      # the issue's size: cheap to estimate
    assert wide.ranked(counting=True)[0][0] == "cpsat" and wide.c > 3600 and wide.reference > 1e80
    assert wide.ranked(counting=False)[0][0] == "c"                        # CP-SAT does not list rows
    listed = Costs.of(Space.from_source(MODELS.long_list(20_000, 4)).plan)
    assert listed.ranked(counting=True)[0][0] == "reference" and listed.c > 600
    gemm = Costs.of(Space.load("gemm").plan)                               # a compiled space as before
    assert gemm.c < auto.COST_CHOICE_AFTER and gemm.reference is None
    reason = wide.why("cpsat", True)
    assert reason.startswith("estimated CP-SAT 0.") and "150 independent groups" in reason
    assert "C " in reason and "MB of C" in reason and "the reference more than a year" in reason


# ------------------------------------------------------------------------------ the choice
@pytest.mark.needs_cpsat
def test_wide_binary_goes_to_cpsat_and_says_why(tmp_path, capsys):
    path = space_file(tmp_path, MODELS.wide_binary(40))
    assert main(["count", path]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{MODELS.wide_binary_count(40)} valid configurations (auto: cpsat backend")
    (line,) = [line for line in err.splitlines() if line.startswith("solverspace: auto: ")]
    assert f"{path} goes to CP-SAT: estimated CP-SAT" in line and "20 independent groups" in line
    assert main(["count", path, "--json", "-q"]) == 0
    out, err = capsys.readouterr()
    answer = json.loads(out)
    assert answer["backend"] == "cpsat" and answer["count"] == 3 ** 20 and err == ""
    assert answer["reason"].startswith("estimated CP-SAT")   # the line's reason, in the JSON too


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_the_choice_gives_every_backends_answer(choose_always):
    wide = Space.from_source(MODELS.wide_binary(20))
    chosen = AutoBackend()
    assert wide.count(chosen) == 3 ** 10 == MODELS.wide_binary_count(20) == wide.count("cpsat")
    assert chosen.answered_by == "cpsat" and chosen.reason.startswith("estimated CP-SAT")
    space = Space.from_source(MODELS.wide_binary(12))
    assert space.count(AutoBackend()) == 3 ** 6 == space.count("reference")   # a walk of 8,190: the reference
    rows = AutoBackend()
    assert list(space.rows(rows)) == list(space.rows("c")) and rows.answered_by == "reference"
    constrained = Space.from_source(MODELS.many_constraints(300, 8))
    by_cost = AutoBackend()
    assert constrained.count(by_cost) == MODELS.many_constraints_count(300, 8) == constrained.count("cpsat") \
        == constrained.count("c")
    assert by_cost.answered_by == "reference" and by_cost.reason.startswith("estimated the reference")


@pytest.mark.needs_cpsat
def test_lists_and_t1_files_go_to_the_reference(tmp_path, capsys):
    listed = Space.from_source(MODELS.long_list(3_000, 4))
    chosen = AutoBackend()
    assert listed.count(chosen) == MODELS.long_list_count(3_000, 4) == listed.count("cpsat")
    assert chosen.answered_by == "reference" and chosen.costs.c > 60
    path = tmp_path / "big_t1.json"
    path.write_text(MODELS.big_t1(5_000))
    assert main(["count", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{MODELS.big_t1_count(5_000)} valid configurations (auto: reference backend")
    assert f"auto: {path} goes to the reference: estimated the reference" in err
    assert main(["count", str(path), "--backend", "cpsat"]) == 0        # --backend still forces
    out, err = capsys.readouterr()
    assert out.startswith(f"{MODELS.big_t1_count(5_000)} valid configurations (cpsat backend") and "auto:" not in err


@pytest.mark.needs_cc
def test_an_unknown_walk_is_probed_first(choose_always):
    small = Space.from_source("a = range(1, 30)\nb = range(a, 30)\nrequire((a * b) % 7 == 1)\n")
    probed = AutoBackend()
    assert small.count(probed) == small.count("c") and probed.answered_by == "reference"
    assert "walked the whole space" in probed.reason
    big = Space.from_source("a = range(1, 1500)\nb = range(a, 1500)\nrequire((a * b) % 7 == 1)\n")
    stopped = AutoBackend(budget=2_000)
    assert big.count(stopped) == big.count("c") and stopped.answered_by == "c"
    assert "the reference stopped after" in stopped.reason


def test_small_spaces_are_answered_as_before(tmp_path, capsys):
    path = space_file(tmp_path, SMALL)
    assert main(["count", path]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("42 valid configurations (auto: reference backend") and "auto:" not in err
    off = AutoBackend(by_cost=False)
    assert Space.from_source(MODELS.long_list(300, 4)).count(off) == MODELS.long_list_count(300, 4)
    assert off.costs is None and off.reason is None


# ------------------------------------------------------------------------------ builds behind
def test_builds_behind_an_answer_only_where_they_pay(monkeypatch):
    assert not background.pays(0.1) and background.pays(background.BUILD_COST / background.PAYBACK_CALLS)
    assert not background.pays(1_800_000 * background.O0_SAVING)   # the largest T1 walk, behind a quick answer
    spawned = []
    monkeypatch.setattr(background, "spawn_builder", spawned.append)
    monkeypatch.setenv(background.ENV, "1")
    space = Space.from_source(SMALL + "require(a < 1000 + 28)\n")
    quick = AutoBackend(budget=40)                          # past the budget, estimated small: a quick build
    assert space.count(quick) == space.count("reference") and quick.quick
    assert quick.scheduled == 0 and spawned == []           # a small walk: nothing built behind it
    medium = Space.from_source(MEDIUM)
    walked = AutoBackend(quick_work=0)                      # a reference answer of 89,700 values (0.1 s)
    expected = medium.count("reference")
    assert medium.count(walked) == expected and walked.answered_by == "reference"
    assert walked.scheduled == 0 and spawned == []
    monkeypatch.setenv(background.ENV, "always")            # paying or not: as before
    from solverspace.translators.c.backend import CEnumerator
    CEnumerator.clear_cache()
    forced = AutoBackend(budget=40)
    assert Space.from_source(SMALL + "require(a < 1000 + 29)\n").count(forced) == space.count("reference")
    assert forced.quick and forced.scheduled == 1 and len(spawned) == 1
    again = AutoBackend(quick_work=0)
    assert Space.from_source(MEDIUM).count(again) == expected
    assert again.answered_by == "reference" and again.scheduled == 1


def test_a_module_estimated_at_hours_is_not_looked_for(monkeypatch):
    from solverspace.translators.c.backend import CBackend

    def refuse(*args, **kwargs):
        raise AssertionError("looked for a module whose build was estimated at hours")

    listed = Space.from_source(MODELS.long_list(3_000, 4))
    monkeypatch.setattr(auto, "WARM_CHECK_VALUES", 1_000)    # stand-ins for 100,000 values and an hour
    monkeypatch.setattr(auto, "COST_NEVER_BUILT", 60.0)
    monkeypatch.setattr(CBackend, "is_built", refuse)
    chosen = AutoBackend()
    assert listed.count(chosen) == MODELS.long_list_count(3_000, 4) and chosen.answered_by == "reference"
    monkeypatch.setattr(auto, "COST_NEVER_BUILT", 1e9)       # below it the cache is asked first, as before
    with pytest.raises(AssertionError, match="looked for a module"):
        listed.count(AutoBackend())
