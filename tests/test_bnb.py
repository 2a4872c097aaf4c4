"""Issue 14: bounds of an objective on partial configurations are sound, and branch and bound
returns exactly what exhaustive evaluation returns (ties included), on generated spaces with
generated performance models (every operator, exact fractions, min/max, categorical branches)."""
from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solverspace import Space
from solverspace.cli import main
from solverspace.core.errors import SolverspaceError, SpaceDefinitionError
from solverspace.lang.evaluate import compile_expr
from solverspace.analysis.lower_bound import PrefixBound, bottleneck
from solverspace.analysis.objective import model_or_declared
from solverspace.analysis.plan import make_plan
from solverspace.lang.printing import to_source
from solverspace.analysis.search import best
from solverspace.validation.generate import spaces
from tests.helpers import FAST, ROOFLINE, generated_with_cost, load_generated, ranked, space_file, walk_prefixes


def assert_bounds_contain_every_completion(plan, expr) -> int:
    """Walk every prefix of the loop nest; the bound's interval at each admitted prefix must
    contain the objective's value on each valid completion where it is defined. Returns the
    number of prefixes checked."""
    bound = PrefixBound(plan, expr)
    checked = 0

    def at_prefix(index, env):
        interval = bound.interval(env, index)      # before deeper loops change env
        prefix = {k: env[k] for k in plan.order[:index + 1]}

        def check(below):
            nonlocal checked
            checked += 1
            if below:
                assert not interval.empty and interval.lo <= min(below) and max(below) <= interval.hi, \
                    (to_source(expr), prefix, interval, min(below), max(below))
        return check

    walk_prefixes(plan, expr, at_prefix)
    return checked


@FAST
@given(spaces(cost=1.0, max_candidates=1500))
def test_the_bound_of_every_prefix_contains_every_completion(source):
    model = load_generated(source)
    if model.cost is None:
        return
    assert_bounds_contain_every_completion(make_plan(model), model.cost)


@FAST
@given(spaces(cost=1.0, max_candidates=1500), st.integers(1, 7), st.booleans())
def test_branch_and_bound_equals_exhaustive_evaluation(source, top, maximize):
    if (drawn := generated_with_cost(source)) is None:
        return
    _, plan, text = drawn
    exhaustive = best(plan, text, maximize=maximize, top=top, engine="exhaustive")
    bnb = best(plan, text, maximize=maximize, top=top, engine="bnb")
    assert ranked(bnb) == ranked(exhaustive)
    assert bnb.search.evaluated <= exhaustive.search.evaluated


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(spaces(cost=1.0, huge=1.0, max_candidates=1500), st.booleans())
def test_values_past_cpsat_domains_in_a_model_are_refused_or_ranked_alike(source, maximize):
    """A performance model over values past 2**60 (`spaces(huge=...)`): CP-SAT refuses by name
    (a `SolverspaceError`) or ranks as the exhaustive search does; never another exception."""
    pytest.importorskip("ortools")
    if (drawn := generated_with_cost(source)) is None:
        return
    space = Space.from_source(source)
    text = drawn[2]
    exhaustive = space.best(text, maximize=maximize, top=3, backend="exhaustive")
    try:
        answer = space.best(text, maximize=maximize, top=3, backend="cpsat")
    except SolverspaceError:
        return
    assert ranked(answer) == ranked(exhaustive)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(spaces(cost=1.0, orders=0.5, max_candidates=1500), st.integers(1, 5))
def test_branch_and_bound_equals_exhaustive_with_orders(source, top):
    if (drawn := generated_with_cost(source)) is None:
        return
    model, plan, text = drawn
    assert_bounds_contain_every_completion(plan, model.cost)
    assert ranked(best(plan, text, maximize=False, top=top, engine="bnb")) == \
        ranked(best(plan, text, maximize=False, top=top, engine="exhaustive"))


def test_bounds_are_exact_once_everything_is_known_and_name_the_bottleneck(tmp_path):
    space = Space.load(space_file(tmp_path, ROOFLINE))
    plan = space.plan
    bound = PrefixBound(plan, space.model.cost)
    env = {"tile": 16, "unroll": 8, "kind": "tex", "loads": 256}
    interval = bound.interval(env, len(plan.order) - 1)
    assert interval.lo == interval.hi == max(Fraction(64 ** 3, 1024), Fraction(256, 3)) + 2 == 258
    terms = bound.terms({"tile": 1}, 0)
    assert bottleneck(terms) == "max(262144 / (tile * unroll * 8), loads / 3)"
    assert_bounds_contain_every_completion(plan, space.model.cost)


def test_the_engines_agree_with_cpsat_on_a_roofline_with_fractions_and_categories(tmp_path):
    pytest.importorskip("ortools")
    space = Space.load(space_file(tmp_path, ROOFLINE))
    text = to_source(space.model.cost)
    answers = {engine: ranked(space.best(text, maximize=False, top=6, backend=engine))
               for engine in ("bnb", "exhaustive", "cpsat")}
    assert answers["bnb"] == answers["exhaustive"] == answers["cpsat"]
    assert len(answers["bnb"]) == 6


def test_gemm_tiny_top_ten_equal_in_every_engine():
    pytest.importorskip("ortools")
    space = Space.load("gemm", {"device": "tiny"})
    objective = "fmas_per_block - loads_per_block"
    results = {e: space.best(objective, top=10, backend=e) for e in ("bnb", "exhaustive", "cpsat")}
    rankings = {e: ranked(result) for e, result in results.items()}
    assert rankings["bnb"] == rankings["exhaustive"] == rankings["cpsat"]
    assert results["bnb"].search.evaluated < results["exhaustive"].search.evaluated
    assert sum(results["bnb"].search.pruned) > 0


# ------------------------------------------------------------------------------ cost(...)


def test_cost_in_both_forms_and_never_a_constraint(tmp_path):
    plain = "a = range(1, 9)\nb = range(1, 9)\nrequire(a * b <= 32)\n"
    expression = Space.load(space_file(tmp_path, plain + "cost(a * b // 2 + (a * b) / 3)\n", "e.py"))
    function = Space.load(space_file(tmp_path, plain + "@cost\ndef runtime(a, b):\n    t = a * b\n"
                                 "    if t > 10:\n        return t // 2 + t / 3\n    return 100 - t\n", "f.py"))
    undefined = Space.load(space_file(tmp_path, plain + "cost(a / (b - 3))\n", "u.py"))
    without = Space.load(space_file(tmp_path, plain, "n.py"))
    assert to_source(expression.model.cost) == "a * b // 2 + a * b / 3"
    assert to_source(function.model.cost) == "a * b // 2 + a * b / 3 if a * b > 10 else 100 - a * b"
    counts = {s.count("reference") for s in (expression, function, undefined, without)}
    assert counts == {without.count("reference")}     # a model divides by zero at b == 3: still valid
    assert without.model.cost is None


@pytest.mark.parametrize("text, message", [
    ("a = range(3)\ncost(a)\ncost(a + 1)\n", "declared more than once"),
    ("a = range(3)\nk = iterator(['x'])\ncost(k)\n", "must be a number"),
    ("a = range(3)\n@cost\ndef m(a):\n    return range(a)\n", "returns an iterator"),
    ("a = range(3)\ncost(a + nope)\n", "unknown name"),
])
def test_bad_cost_declarations_are_refused_with_the_line(tmp_path, text, message):
    with pytest.raises(SpaceDefinitionError, match=message) as info:
        Space.load(space_file(tmp_path, text))
    assert "space.py:" in str(info.value)


def test_no_model_anywhere_is_a_clear_error(tmp_path):
    space = Space.load(space_file(tmp_path, "a = range(3)\n"))
    with pytest.raises(SolverspaceError, match="no performance model"):
        model_or_declared(space.model, None)


def test_best_on_the_command_line(tmp_path, capsys):
    path = space_file(tmp_path, ROOFLINE)
    assert main(["best", path, "--top", "3", "--engine", "bnb", "--json"]) == 0
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert [sorted(r) for r in rows] == [sorted(["tile", "unroll", "kind", "objective"] +
                                                (["objective_exact"] if "objective_exact" in r else []))
                                         for r in rows]
    assert "bnb engine" in captured.err and "cut" in captured.err
    assert main(["best", path, "--top", "3", "--engine", "exhaustive", "--json", "-q"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == rows
    assert main(["best", space_file(tmp_path, "a = range(3)\n", "plain.py"), "--engine", "bnb"]) == 2
    assert "no performance model" in capsys.readouterr().err
    assert main(["best", path, "--engine", "bnb", "--minimize", "kind"]) == 2
    assert "not a number" in capsys.readouterr().err


def test_tune_uses_the_declared_cost(tmp_path):
    space = Space.load(space_file(tmp_path, ROOFLINE))
    model = compile_expr(space.model.cost)

    def measure(config):   # the model itself, plus a constant: the true optimum is the model's
        env = dict(config, loads=64 * 64 // config["tile"] + (0 if config["kind"] == "tex" else 64))
        return float(model(env)) + 0.25

    result = space.tune(measure, db=str(tmp_path / "t.sqlite"))
    top = space.best(to_source(space.model.cost), maximize=False, top=1, backend="exhaustive").ranked[0]
    assert result.proven and result.best == top.configuration
    assert result.measured < space.count("reference")


def test_cpsat_refuses_an_objective_it_cannot_represent_instead_of_a_time_limit_message(tmp_path):
    """Found by bench/bnb.py: CP-SAT answered 'stopped by the time limit: not proven best' with no
    configuration after 0.01 s, when its model was invalid (coefficients past 64 bits)."""
    pytest.importorskip("ortools")
    from solverspace.core.errors import BackendUnavailableError
    space = Space.load(space_file(tmp_path, "a = range(1, 1025)\nb = range(1, 1025)\n"))
    objective = "max(137438953472 / 1660, 549755813888 * (a + b) / (a * b * 288))"
    with pytest.raises(SolverspaceError, match="64-bit (range|domains)"):
        space.best(objective, maximize=False, top=3, backend="cpsat")
    # the compute term is the minimum; ties in (a, b) order: the first pairs whose memory term is below it
    first = [(a, b) for a in range(1, 1025) for b in range(1, 1025)
             if 549755813888 * (a + b) * 1660 <= 137438953472 * a * b * 288][:3]
    found = space.best(objective, maximize=False, top=3, backend="bnb").ranked
    assert [(r.configuration["a"], r.configuration["b"]) for r in found] == first
    assert {r.objective for r in found} == {Fraction(137438953472, 1660)}


@pytest.mark.parametrize("engine", ["bnb", "exhaustive", "bnb-reference", "exhaustive-reference"])
def test_every_walking_engine_reports_progress(tmp_path, engine):
    """The compiled engines over their work units, the Python walks over the outermost loop's
    16 values: increasing, ending done."""
    space = Space.load(space_file(tmp_path, ROOFLINE))
    seen = []
    space.best(to_source(space.model.cost), maximize=False, top=2, backend=engine,
               progress=lambda done, total: seen.append((done, total)))
    total = 16 if engine.endswith("-reference") else seen[-1][1]
    assert seen and seen[-1] == (total, total) and total > 1 and all(d <= t == total for d, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


TIES = """
@iterator
def kind():
    yield "z"
    yield "m"
other = iterator(["m", "z"])
x = range({n})
y = range({n})
"""


@pytest.mark.parametrize("n", [3, 60])   # 36 ties: CP-SAT sorts them; 14,400: it walks them one by one
def test_every_engine_breaks_ties_in_the_one_order(tmp_path, n):
    """Strings in order of first appearance in the file (`objective.string_order`): "z" first,
    as the closure yields it before the list names "m". CP-SAT's own codes are in order of first
    use in its lowering; its ties used to follow them and disagree with bnb."""
    pytest.importorskip("ortools")
    space = Space.load(space_file(tmp_path, TIES.format(n=n)))
    expected = [{"kind": "z", "other": "z", "x": 0, "y": y} for y in range(3)]
    for engine in ("bnb", "exhaustive", "cpsat"):
        assert [r.configuration for r in space.best("x // 100", maximize=False, top=3, backend=engine).ranked] \
            == expected, engine


BEFORE_USE = """
@reject_if
def never(k):
    return k == "q" and k == "p"
x = range({n})
k = iterator(["p", "q"])
y = range({n})
"""


@pytest.mark.parametrize("n", [3, 60])
def test_cpsat_ties_follow_the_file_not_its_lowering(tmp_path, n):
    """"q" appears first in the file (a function-form constraint may come before its inputs);
    CP-SAT meets "p" first (it lowers parameters before constraints) and used to put k=p first."""
    pytest.importorskip("ortools")
    space = Space.load(space_file(tmp_path, BEFORE_USE.format(n=n)))
    expected = [{"x": 0, "k": "q", "y": y} for y in range(2)]
    for engine in ("bnb", "exhaustive", "cpsat"):
        assert [r.configuration for r in space.best("x // 100", maximize=False, top=2, backend=engine).ranked] \
            == expected, engine


def test_ties_between_orders_are_broken_alike_in_every_engine(tmp_path):
    """Orders by their items in the one string order; CP-SAT ranks them through the slot model."""
    pytest.importorskip("ortools")
    space = Space.load(space_file(tmp_path, 's = sequence(["c", "a", "b"], 0, 2)\nt = permutation(["y", "x"])\n'
                                        'z = range(2)\n'))
    answers = {engine: [r.configuration for r in space.best("z // 5", maximize=False, top=8, backend=engine).ranked]
               for engine in ("bnb", "exhaustive", "cpsat")}
    assert answers["bnb"] == answers["exhaustive"] == answers["cpsat"]
    assert [(c["s"], c["t"]) for c in answers["bnb"][:6:2]] == [((), ("y", "x")), ((), ("x", "y")), (("c",), ("y", "x"))]


def test_cpsat_reports_progress_and_points_best_to_the_exact_engines(tmp_path):
    pytest.importorskip("ortools")
    space = Space.load(space_file(tmp_path, ROOFLINE))
    seen = []
    space.best("tile", top=3, backend="cpsat", progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (3, 3)
    with pytest.raises(SolverspaceError, match="engine bnb"):
        space.best("tile ** 100000", top=1, backend="cpsat")
