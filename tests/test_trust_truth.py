"""Python's truth in space files (issue 23, wrong answers found while on item 9).

In Python `x or 4` is x or 4 (an operand, not a bool), `x and y` is y or x, and a value used as a
condition is true when it is not 0 (an integer) or not '' (a string). At 5b00030 every backend gave
and/or a bool (`(x or 4) == 4` counted 0) and C took a string's integer code for its truth
(`k if x > 0 else ''`). `lowering.normalise_truth` makes both explicit once for every backend.

The oracle is Python itself: each `@require` body is evaluated by `eval` on every configuration
(a division by zero rejects it, as the language's undefined does), and the reference's rows, C's
rows and CP-SAT's count must be exactly that set.
"""
from __future__ import annotations

import ast
import itertools

import pytest
from hypothesis import HealthCheck, given, settings

from solverspace import Space
from solverspace.core.errors import SolverspaceError

X, Y = list(range(-2, 3)), list(range(-1, 3))
CATEGORIES = {  # the first value gets code 0 in C: with '' first or last, or absent
    "empty_last": ["a", "bb", ""],
    "empty_first": ["", "a", "bb"],
    "no_empty": ["x", "y"],
}
INT_FORMS = [
    ("(x or 4) == 4", "or_value"),
    ("(x and y) == 2", "and_value"),
    ("(x or y or 7) == 7", "or_chain_value"),
    ("(x and y and 2) == 2", "and_chain_last_constant"),
    ("(x > 0 and y) == 2", "and_bool_then_int"),
    ("(x > 0 or y) == 2", "or_bool_then_int"),
    ("(x or 0) + (y and 3) == 3", "and_or_in_arithmetic"),
    ("min(x or 9, y or 9) == 9", "or_in_min"),
    ("(2 if x else 5) == (x and 2 or 5)", "and_or_idiom"),
    ("(y and x // y) == 1", "and_guards_division"),
    ("y == 0 or x // y < 1", "or_guards_division"),
    ("(x or 1) // (y or 1) == 0", "or_avoids_zero_divisor"),
    ("not x", "not_int"),
    ("not (x or y)", "not_or_of_ints"),
    ("x % 3", "int_as_condition"),
    ("x - y if y else x", "int_result_of_conditional"),
    ("if_then_else(x, y, 0)", "int_test_of_if_then_else"),
    ("(x if y else 2) == 0", "int_test_of_ifexp"),
]
STRING_FORMS = [
    ("k", "string_as_condition"),
    ("not k", "not_string"),
    ("k if x > 0 else ''", "string_result_of_conditional"),
    ("k and x > 0", "string_in_and"),
    ("x > 0 or k", "string_in_or"),
    ("if_then_else(k, x > 0, x < 0)", "string_test_of_if_then_else"),
    ("x if k else 0", "string_test_of_ifexp"),
    ("(k or 'a') == 'a'", "string_or_value"),
    ("(k and 'bb') == 'bb'", "string_and_value"),
    ("(k or '') != ''", "string_or_empty"),
    ("((k or 'x') if x else '') == 'x'", "string_or_inside_conditional"),
]


def _source(body: str, categories: list | None) -> str:
    lines = ["x = iterator(range(-2, 3))", "y = iterator(range(-1, 3))"]
    names = "x, y"
    if categories is not None:
        lines.append(f"k = iterator({categories!r})")
        names += ", k"
    return "\n".join(lines + ["@require", f"def c({names}):", f"    return {body}", ""])


def _python_valid(body: str, categories: list | None) -> set:
    """Python's own evaluation of the body on every configuration (test oracle only)."""
    code = compile(body, "<body>", "eval")
    helpers = {"if_then_else": lambda c, a, b: a if c else b, "min": min}
    domains = [X, Y] + ([categories] if categories is not None else [])
    valid = set()
    for combo in itertools.product(*domains):
        env = dict(zip(["x", "y", "k"], combo))
        try:
            ok = eval(code, helpers, env)
        except ZeroDivisionError:
            ok = False
        if ok:
            valid.add(combo)
    return valid


def _check_every_backend(space: Space, want: set):
    assert set(space.rows("reference")) == want
    assert space.count("cpsat", workers=1) == len(want)
    assert set(space.rows("c")) == want
    assert space.count("c") == len(want)


@pytest.mark.parametrize("body", [pytest.param(b, id=i) for b, i in INT_FORMS])
def test_integer_forms_mean_what_python_means(body):
    """Reference rows, C rows and counts, CP-SAT count: exactly Python's valid set."""
    _check_every_backend(Space.from_source(_source(body, None)), _python_valid(body, None))


@pytest.mark.filterwarnings("ignore::solverspace.core.errors.SolverspaceWarning")
@pytest.mark.parametrize("categories", list(CATEGORIES.values()), ids=list(CATEGORIES))
@pytest.mark.parametrize("body", [pytest.param(b, id=i) for b, i in STRING_FORMS])
def test_string_forms_mean_what_python_means(body, categories):
    """A string's truth is `!= ''` whatever code C gives it; `k or 'a'` is a string."""
    _check_every_backend(Space.from_source(_source(body, categories)), _python_valid(body, categories))


def test_the_reported_examples():
    """The two spaces of the report, counted by C as Python counts them."""
    assert Space.from_source(_source("(x or 4) == 4", None)).count("c") == len(_python_valid("(x or 4) == 4", None))
    body, categories = "k if x > 0 else ''", ["a", "bb", ""]
    space = Space.from_source(_source(body, categories))
    assert space.count("c") == space.count("reference") == len(_python_valid(body, categories)) == 16


def test_guard_keeps_short_circuit_order():
    """`y and x // y` evaluates the division only where y is not 0: nothing is undefined."""
    space = Space.from_source(_source("(y and x // y) == 1", None))
    assert space.stats("reference").undefined == 0
    assert space.count("c") == len(_python_valid("(y and x // y) == 1", None))


def test_objective_keeps_the_operand():
    """An objective `x or 10` is x where x is not 0, else 10: the best is 10 (at x = 0)."""
    space = Space.from_source("x = iterator(range(-2, 3))\n")
    for backend in ("bnb", "bnb-reference"):
        ranked = space.best("x or 10", top=1, backend=backend).ranked
        assert (ranked[0].objective, ranked[0].configuration) == (10, {"x": 0})


@pytest.mark.filterwarnings("ignore::solverspace.core.errors.SolverspaceWarning")
def test_module_level_derived_values_as_conditions():
    """A derived bool (`b = x > 0`) and a derived string used as conditions in a body."""
    source = ("x = iterator(range(-2, 3))\nk = iterator(['a', ''])\nb = x > 0\ns = k\n"
              "@require\ndef c(b, s, x):\n    return (s or x) and not b\n")
    space = Space.from_source(source)
    want = {(x, k) for x in range(-2, 3) for k in ("a", "") if (k or x) and not x > 0}
    assert set(space.rows("reference")) == want
    assert set(space.rows("c")) == want
    assert space.count("cpsat", workers=1) == len(want)


def test_mixing_kinds_in_an_and_or_value_is_refused():
    """`(x and k) == 'a'` is a number or a string: refused at load, like `k if x else 0`."""
    with pytest.raises(SolverspaceError, match="mixes strings and integers"):
        Space.from_source(_source("(x and k) == 'a'", ["a", "b"]))


def _forms(source: str) -> set[str]:
    """Which of this file's forms a space's source uses: an and/or whose value is used (an operand
    of a comparison, arithmetic or a call), a value as a condition (`not` of a value, a
    string's truth against '')."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Compare, ast.BinOp, ast.Call)) and \
                any(isinstance(child, ast.BoolOp) for child in ast.iter_child_nodes(node)):
            found.add("and/or value")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and \
                not isinstance(node.operand, (ast.Compare, ast.BoolOp, ast.UnaryOp)):
            found.add("value as condition")
        if isinstance(node, ast.IfExp) and isinstance(node.orelse, ast.Constant) and node.orelse.value == "":
            found.add("string as condition")
    return found


def test_the_generator_draws_these_forms():
    """`validation.generate` writes and/or as values and values or strings as conditions in
    function bodies, so the cross-validation suite (tests/test_validation_generated.py) keeps
    comparing every backend on them."""
    from solverspace.validation.generate import spaces
    seen = set()

    @settings(max_examples=300, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(spaces(max_candidates=2000))
    def draw(source):
        seen.update(_forms(source))
    draw()
    assert {"and/or value", "value as condition"} <= seen, seen
