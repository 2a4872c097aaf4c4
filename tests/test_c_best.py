"""Issue 14: the compiled search (`translators.c_best`). Its bounds, as expressions over the names
known at each loop (`solverspace.analysis.bound_expr`), are never above the objective on any valid
completion; its branch and bound and its exhaustive evaluation return exactly what Python's
exhaustive evaluation returns (ties included), for any number of threads."""
from __future__ import annotations

import shutil

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solverspace import Space
from solverspace.analysis.bound_expr import lower_bound_expr
from solverspace.lang.evaluate import Undefined, compile_expr
from solverspace.analysis.plan import make_plan
from solverspace.lang.printing import to_source
from solverspace.analysis.search import best
from solverspace.translators.c.best import best_compiled
from solverspace.translators.errors import UnsupportedConstruct
from solverspace.validation.generate import spaces
from tests.helpers import FAST, ROOFLINE, generated_with_cost, load_generated, ranked, walk_prefixes

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler")
COMPILING = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))


def assert_bound_expressions_are_below_every_completion(plan, expr) -> int:
    """At every admitted prefix, the bound expression of its depth, evaluated there, is at most
    the objective on each valid completion (where both are defined). Returns prefixes checked."""
    model = plan.model
    known = {d.name for d in plan.prelude_derived}
    bounds = []
    for level in plan.levels:
        known |= {level.parameter.name} | {d.name for d in level.derived}
        lower = lower_bound_expr(model, expr, frozenset(known))
        bounds.append(None if lower is None else compile_expr(lower))
    checked = 0

    def at_prefix(index, env):
        try:
            lower = None if index < 0 or bounds[index] is None else bounds[index](env)
        except Undefined:
            lower = None
        prefix = {k: env[k] for k in plan.order[:index + 1]}

        def check(below):
            nonlocal checked
            if below and lower is not None:
                checked += 1
                assert lower <= min(below), (to_source(expr), prefix, lower, min(below))
        return check

    walk_prefixes(plan, expr, at_prefix)
    return checked


@FAST
@given(spaces(cost=1.0, max_candidates=1500), st.booleans())
def test_the_bound_expression_of_every_prefix_is_below_every_completion(source, maximize):
    model = load_generated(source)
    if model.cost is None:
        return
    from solverspace.lang import ir
    expr = ir.Neg(model.cost) if maximize else model.cost
    assert_bound_expressions_are_below_every_completion(make_plan(model), expr)


@COMPILING
@given(spaces(cost=1.0, max_candidates=1500, c_compatible=True), st.integers(1, 7), st.booleans())
def test_compiled_search_equals_python_exhaustive_evaluation(source, top, maximize):
    if (drawn := generated_with_cost(source)) is None:
        return
    _, plan, text = drawn
    truth = ranked(best(plan, text, maximize=maximize, top=top, engine="exhaustive"))
    try:
        bnb = best_compiled(plan, text, maximize=maximize, top=top, prune=True, threads=2)
    except UnsupportedConstruct:
        return      # refused with a message (Space.best then searches in Python, and says so)
    assert ranked(bnb) == truth
    assert ranked(best_compiled(plan, text, maximize=maximize, top=top, prune=False, threads=1)) == truth
    assert bnb.exact


@pytest.mark.parametrize("top", [1, 3, 40])
@pytest.mark.parametrize("threads", [1, 2])
def test_fractions_categories_and_threads(tmp_path, top, threads):
    path = tmp_path / "roofline.py"
    path.write_text(ROOFLINE)
    space = Space.load(str(path))
    text = to_source(space.model.cost)
    truth = ranked(space.best(text, maximize=False, top=top, backend="exhaustive-reference"))
    for engine in ("bnb", "exhaustive"):
        result = space.best(text, maximize=False, top=top, backend=engine, threads=threads)
        assert result.engine == engine and not result.note
        assert ranked(result) == truth, engine


def test_gemm_k40c_cuts_and_agrees():
    space = Space.load("gemm", {"device": "k40c"})
    objective = "max(137438953472 / 1430, 549755813888 * (blk_m + blk_n) / (blk_m * blk_n * 288))"
    bnb = space.best(objective, maximize=False, top=10, backend="bnb")
    exhaustive = space.best(objective, maximize=False, top=10, backend="exhaustive")
    assert ranked(bnb) == ranked(exhaustive)
    assert sum(bnb.search.pruned) > 0 and bnb.search.evaluated < exhaustive.search.evaluated / 100
    assert exhaustive.search.evaluated == space.count("c")


@pytest.mark.parametrize("top", [1, 12, 200])
def test_maximising_with_ties_and_the_python_walk_agree(top):
    space = Space.load("gemm", {"device": "tiny"})
    bnb = space.best("fmas_per_block - loads_per_block", top=top, backend="bnb")
    python = space.best("fmas_per_block - loads_per_block", top=top, backend="exhaustive-reference")
    assert ranked(bnb) == ranked(python)


def test_a_time_limit_stops_the_search_and_says_so():
    space = Space.load("gemm", {"device": "k40c"})
    result = space.best("blk_k * dim_m", top=3, backend="exhaustive", time_limit=0.001)
    assert not result.exact


def test_a_space_c_refuses_is_searched_in_python_and_said(tmp_path):
    path = tmp_path / "orders.py"
    path.write_text('loops = permutation(["i", "j", "k"])\ntile = range(1, 5)\n')
    space = Space.load(str(path))
    result = space.best('position(loops, "k") + tile', maximize=False, top=2, backend="bnb")
    assert result.engine == "bnb-reference" and "C search refused" in result.note
    assert [r.configuration for r in result.ranked] == [{"loops": ("k", "i", "j"), "tile": 1},
                                                        {"loops": ("k", "j", "i"), "tile": 1}]


def test_a_string_only_the_objective_names_compares_as_in_python(tmp_path):
    """"zz" is no value of the space: C has no code for it; `kind == "zz"` is False everywhere
    and `kind != "zz"` True, as in Python."""
    path = tmp_path / "roofline.py"
    path.write_text(ROOFLINE)
    space = Space.load(str(path))
    for objective in ('tile + if_then_else(kind == "zz", 100, 0)', 'tile + if_then_else(kind != "zz", 100, 0)'):
        truth = ranked(space.best(objective, maximize=True, top=5, backend="exhaustive-reference"))
        result = space.best(objective, maximize=True, top=5, backend="bnb")
        assert result.engine == "bnb" and ranked(result) == truth, objective


def test_the_command_line_names_the_engine_that_ran_and_why_nothingranked(tmp_path, capsys):
    from solverspace.cli import main
    assert main(["best", "gemm", "--set", "device=tiny", "--minimize", "blk_m", "--engine", "exhaustive-reference",
                 "-q", "--top", "1"]) == 0
    assert "(exhaustive-reference engine" in capsys.readouterr().out
    assert main(["best", "gemm", "--set", "device=tiny", "--minimize", "dim_m / (dim_m - dim_m)", "-q"]) == 1
    assert "objective is undefined (a division or modulo by zero) on every one" in capsys.readouterr().err


def test_without_a_compiler_the_search_runs_in_python_and_says_so(tmp_path, monkeypatch):
    path = tmp_path / "roofline.py"
    path.write_text(ROOFLINE)
    space = Space.load(str(path))
    truth = ranked(space.best("tile", maximize=False, top=3, backend="bnb-reference"))
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    result = space.best("tile * 3", maximize=False, top=3, backend="bnb")
    assert result.engine == "bnb-reference" and "could not be built" in result.note
    assert [c for _, c in ranked(result)] == [c for _, c in truth]
