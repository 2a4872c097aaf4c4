"""CP-SAT feasibility with explanations (`check` with a partial assignment) and best-by-objective."""
from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("ortools")

from solverspace import Space  # noqa: E402
from solverspace.cli import main  # noqa: E402
from solverspace.core.errors import SpaceDefinitionError  # noqa: E402
from solverspace.lang.evaluate import compile_expr  # noqa: E402
from solverspace.translators.cpsat.backend import CpSatRefusal, best, complete  # noqa: E402
from solverspace.analysis.objective import parse_objective  # noqa: E402
from solverspace.translators.cpsat.explain import feasible_with  # noqa: E402

TINY = ["--set", "device=tiny"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------ check
def test_check_gemm_dim_m_17_names_a_minimal_set_of_constraints(capsys):
    code, out, _ = run(capsys, "check", "gemm", "dim_m=17")
    assert code == 1 and out.startswith("no valid configuration has dim_m=17")
    assert "(minimal: without any one of them a valid configuration exists)" in out
    named = [line.split(":")[0].strip() for line in out.splitlines()[2:]]
    space = Space.load("gemm")
    assert named and set(named) <= set(space.model.constraint)
    assert all(f"gemm/space.py:{space.model.constraint[n].line}" in out for n in named)
    # together they rule dim_m=17 out; without any one of them some configuration has it
    assert feasible_with(space.plan, {"dim_m": 17}, named) is False
    for name in named:
        assert feasible_with(space.plan, {"dim_m": 17}, [n for n in named if n != name]) is True


def test_check_gemm_dim_m_3_shows_a_valid_completion(capsys):
    code, out, _ = run(capsys, "check", "gemm", "dim_m=3")
    assert code == 0 and out.startswith("valid completion: dim_m=3 ")
    completion = dict(pair.split("=") for pair in out.split(":", 1)[1].split())
    space = Space.load("gemm")
    assert set(completion) == set(space.parameters)
    assert space.check({k: int(v) for k, v in completion.items()}).valid  # the reference agrees


def test_partial_check_on_the_scaled_down_device(capsys):
    code, out, _ = run(capsys, "check", "gemm", *TINY, "dim_m=3")
    assert code == 1 and "no valid configuration has dim_m=3" in out and "constraint(s) together" in out
    code, out, _ = run(capsys, "check", "gemm", *TINY, "dim_m=40")
    assert code == 1 and "domains alone" in out  # dim_m is at most 32 on this device
    code, out, _ = run(capsys, "check", "gemm", *TINY, "dimm=3")
    assert code == 2 and "did you mean 'dim_m'" in out + _


def test_complete_agrees_with_the_reference_on_every_single_value():
    s = Space.load("gemm", {"device": "tiny", "precision": "single"})
    rows = list(s.rows("reference"))
    for name in ("dim_m", "blk_k", "dim_vec", "dim_m_a"):
        column = s.parameters.index(name)
        present = {r[column] for r in rows}
        for value in range(0, 34):
            result = complete(s, {name: value})
            assert result.feasible == (value in present), (name, value)
            if result.feasible:
                assert s.check(result.completion).valid


def test_complete_with_categorical_values_and_a_conflict():
    s = Space.from_source(textwrap.dedent("""
        kind = iterator(["tex", "ldg"])
        x = range(0, 6)
        @require
        def tex_needs_big(kind, x):
            return kind != "tex" or x >= 4
        reject_if(x > 4)
        require(x % 2 == 0)
        """))
    assert complete(s, {"kind": "tex"}).completion == {"kind": "tex", "x": 4}
    no = complete(s, {"kind": "tex", "x": 5})
    assert no.feasible is False and no.conflict in (["reject_if_line7"], ["require_line8"])  # either alone
    both = complete(s, {"kind": "tex", "x": 3})
    assert both.feasible is False and len(both.conflict) == 1  # x=3: tex_needs_big or x % 2 == 0
    assert complete(s, {"kind": "gpu"}).feasible is False and complete(s, {"kind": "gpu"}).conflict == []


# ------------------------------------------------------------------------------------ best
def brute_force(space: Space, objective: str, maximize: bool, top: int):
    names = space.parameters + tuple(d.name for d in space.model.derived)
    fn = compile_expr(parse_objective(space.model, objective))
    scored = [(fn(dict(zip(names, row))), row[:len(space.parameters)])
              for row in space.rows("reference", with_derived=tuple(d.name for d in space.model.derived))]
    scored.sort(key=lambda t: (-t[0] if maximize else t[0], t[1]))
    return scored[:top]


@pytest.mark.parametrize("objective, maximize", [
    ("max_threads_by_regs", True), ("fmas_per_block - loads_per_block", True),
    ("fmas_per_block / loads_per_block", True), ("fmas_per_block / loads_per_block", False),
    ("threads_per_block * 3 - blk_k", False), ("min(thr_m, thr_n) + (blk_k > 4)", True),
])
def test_best_matches_brute_force_on_the_scaled_down_device(objective, maximize):
    s = Space.load("gemm", {"device": "tiny", "precision": "single"})
    result = best(s, objective, maximize=maximize, top=7)
    assert result.exact
    got = [(r.objective, tuple(r.configuration.values())) for r in result.ranked]
    assert got == brute_force(s, objective, maximize, 7)


def test_best_walks_large_tie_classes_in_order(monkeypatch):
    from solverspace.translators.cpsat import best as cpsat_best
    monkeypatch.setattr(cpsat_best, "TIE_ENUMERATION", 3)  # force the one-by-one walk
    s = Space.load("gemm", {"device": "tiny", "precision": "double"})
    got = [(r.objective, tuple(r.configuration.values())) for r in best(s, "dim_vec", top=6).ranked]
    assert got == brute_force(s, "dim_vec", True, 6)


def test_best_returns_fewer_when_the_space_is_small():
    s = Space.from_source("x = range(0, 4)\ny = iterator(['a', 'b'])\nrequire(x != 2)")
    result = best(s, "x * 2", maximize=False, top=10)
    assert [(r.objective, r.configuration) for r in result.ranked] == [
        (0, {"x": 0, "y": "a"}), (0, {"x": 0, "y": "b"}), (2, {"x": 1, "y": "a"}), (2, {"x": 1, "y": "b"}),
        (6, {"x": 3, "y": "a"}), (6, {"x": 3, "y": "b"})]


@pytest.mark.parametrize("objective, message", [
    ("thread_per_block", "did you mean 'threads_per_block'"),
    ("blk_m +", "not an expression"),
    ("__import__('os')", "not part of the language"),
])
def test_bad_objectives_are_refused_by_name(objective, message):
    s = Space.load("gemm", {"device": "tiny"})
    with pytest.raises(SpaceDefinitionError, match=message):
        best(s, objective)


def test_categorical_objective_is_refused():
    s = Space.from_source("y = iterator(['a', 'b'])")
    with pytest.raises(CpSatRefusal, match="categorical"):
        best(s, "y")


def test_best_command(capsys):
    code, out, _ = run(capsys, "best", "gemm", *TINY, "--maximize", "fmas_per_block - loads_per_block", "--top", "3")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("best 3 configuration(s) by maximize fmas_per_block - loads_per_block")
    assert lines[1].startswith("  1. 3072  dim_m=8 ") and len(lines) == 4
    code, out, _ = run(capsys, "best", "gemm", *TINY, "--minimize", "threads_per_block", "--top", "1")
    assert code == 0 and out.splitlines()[1].startswith("  1. 32  ")


def test_count_options_reach_the_backend_and_do_not_leak(capsys):
    code, out, _ = run(capsys, "count", "gemm", "--backend", "cpsat", "--time-limit", "0.2", "--workers", "1")
    assert code == 0 and out.startswith("at least ") and "lower bound" in out
    # the options are arguments of this run's backend, not module state: the next run is exact
    code, out, _ = run(capsys, "count", "gemm", *TINY, "--backend", "cpsat")
    assert code == 0 and out.startswith("336 valid configurations (cpsat backend")
