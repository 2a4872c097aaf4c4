"""Issue 23 item 9: every restriction form Kernel Tuner accepts in a T1 `Expression` is read with
Python's meaning or refused naming the form.

Kernel Tuner evaluates a restriction as Python (`kernel_tuner.util.compile_restrictions` compiles
`def r(<params>): return <expression>`), so the oracle here is Python itself: `eval` of the
expression over every configuration of a small space, IN THE TESTS ONLY (solverspace never runs a
T1 string). A `ZeroDivisionError` counts as invalid, our fixed semantics (Kernel Tuner's
brute-force checker ignores such a restriction; python-constraint stops with it).
"""
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solverspace.cli import main
from solverspace.core.errors import SolverspaceError, SpaceDefinitionError
from solverspace.space import Space
from solverspace.io.t1 import load_t1_text

# Small domains that meet every corner: negatives and zero, a bool, strings including the empty one.
PARAMS = {"x": list(range(-3, 7)), "y": [0, 1, 2, 3, 4], "f": [False, True], "k": ["a", "b", "ab", ""]}
TYPES = {int: "int", bool: "bool", str: "string"}

# Every form Kernel Tuner's Python evaluation gives a meaning to and we read (id: the form).
FORMS = [
    ("x in [0, 1]", "in-list"),
    ("x not in (0, 1, 5)", "not-in-tuple"),
    ("x in {1, 2, -3}", "in-set"),
    ("x in []", "in-empty-list"),
    ("x in [y, y + 1]", "in-list-of-expressions"),
    ("k in ['a', 'b']", "string-in-list"),
    ("k not in ('ab', '')", "string-not-in"),
    ("x in range(0, 6, 2)", "in-range"),
    ("x not in range(y)", "not-in-range-of-parameter"),
    ("x in range(6, -3, -3)", "in-negative-step-range"),
    ("x < y in [1, 2]", "chain-ending-in-in"),
    ("0 < x < y", "chained-comparison"),
    ("x != y != 2", "chained-not-equal"),
    ("-2 <= x * y <= 6 != y", "long-chain"),
    ("x == y and not f or k == 'a'", "and-or-not"),
    ("k == 'ab'", "string-equal"),
    ("k != 'b'", "string-not-equal"),
    ("k == 0", "string-never-equals-int"),
    ("x + y * 2 - 1 > 3", "arithmetic"),
    ("x // 2 == y - 2", "floor-division"),
    ("x % 3 == y % 3", "modulo"),
    ("(x - 1) % -3 == -1", "modulo-negative-divisor"),
    ("x ** 2 + y ** 3 < 30", "constant-power"),
    ("x / 2 < y", "true-division-comparison"),
    ("x / 4 + y / 4 >= 1", "true-division-sum"),
    ("x // y > 0", "divides-by-zero-when-y-is-0"),
    ("y == 0 or x // y > 0", "guarded-division"),
    ("-x > y", "unary-minus"),
    ("+x >= 2", "unary-plus"),
    ("min(x, y) == 0", "min"),
    ("max([x, y, 2]) == 4", "max-of-list"),
    ("abs(x) > 1", "abs"),
    ("(x if y > 1 else -x) > 0", "ternary-value"),
    ("x if y else f", "ternary-condition"),
    ("x * 2 ** 10 <= 4096 * y", "constant-folding"),
    ("x", "int-as-condition"),
    ("x % 2", "expression-as-condition"),
    ("k", "string-as-condition"),
    ("not k", "not-string"),
    ("f", "bool-as-condition"),
    ("f == 1 and x == True", "bool-equals-int"),
    ("k and x > 1", "string-operand-of-and"),
    ("(k if x > 0 else '') and y", "string-ternary-as-condition"),
    ("(x or 4) == 4", "or-as-value"),
    ("(x and y) == 2", "and-as-value"),
    ("(k or 'b') == 'b'", "string-or-as-value"),
    ("(x > 1) + (y > 1) == 1", "comparisons-as-numbers"),
    ("(not x) + f == 1", "not-as-number"),
    ("x * 0.5 <= y", "float-literal-half"),
    ("x * 1.5 == 3 * y", "float-literal"),
    ("x // 0.5 == 2 * x", "floor-division-by-float"),
    ("x < 2.0", "integral-float"),
    ("2 ** y <= x", "power-by-parameter"),
    ("x ** y > 3", "parameter-power-parameter"),
    ("x ** -1 < 1", "negative-constant-exponent"),
    ("pow(x, 2) <= 9", "pow"),
    ("x << 2 < 9", "left-shift"),
    ("x >> 1 == y - 1", "right-shift"),
    ("1 << y == 8", "shift-by-parameter"),
    ("~x == y", "invert"),
    ("sum([x, y]) == 3", "sum-of-list"),
    ("sum((x, y), 1) == 3", "sum-with-start"),
    ("int(x / 2) == y - 2", "int-truncates"),
    ("float(x) == 2", "float-call"),
    ("bool(x) == (y > 1)", "bool-call"),
    ("k < 'b'", "string-ordering-with-constant"),
    ("'aa' <= k", "string-ordering-mirrored"),
    ("  x > 1", "leading-blanks"),
    ("(x >\n 1)", "newline-in-parentheses"),
]
# Forms a backend refuses with a typed error (never a wrong count): the compiled enumerator
# handles an exact fraction only inside a comparison's operands.
C_REFUSES = {"true-division-comparison", "true-division-sum", "int-truncates", "float-literal-half",
             "float-literal", "floor-division-by-float", "negative-constant-exponent"}
# Conditions this long a chain of `and` in the combined space would be fine; forms C/CP-SAT refuse
# for mixing strings and numbers in one value are kept out of it.
MIXED = {"ternary-condition", "string-or-as-value"}


def _t1(params: dict, conditions: list[str]) -> str:
    """A T1 document with these parameters (Python values) and conditions."""
    return json.dumps({"ConfigurationSpace": {
        "TuningParameters": [{"Name": name, "Type": TYPES[type(values[0])], "Values": values}
                             for name, values in params.items()],
        "Conditions": [{"Parameters": list(params), "Expression": c} for c in conditions]}})


def _python_valid(params: dict, conditions: list[str]) -> set:
    """The configurations Python's evaluation accepts (Kernel Tuner's meaning of the strings)."""
    valid = set()
    compiled = [compile(c.strip(), "<restriction>", "eval") for c in conditions]   # test oracle only
    for combo in itertools.product(*params.values()):
        env = dict(zip(params, combo))
        try:
            ok = all(eval(code, {"__builtins__": __builtins__}, env) for code in compiled)
        except ZeroDivisionError:
            ok = False
        if ok:
            valid.add(combo)
    return valid


def _space(params: dict, conditions: list[str]) -> Space:
    return Space(load_t1_text(_t1(params, conditions), "forms.json"))


@pytest.mark.parametrize("expression", [pytest.param(e, id=i) for e, i in FORMS])
def test_form_means_what_python_means(expression):
    """Reference backend: the valid set is exactly Python's, configuration by configuration."""
    rows = set(_space(PARAMS, [expression]).rows("reference"))
    assert rows == _python_valid(PARAMS, [expression])


def test_the_issue_example_is_read():
    params = {"loop_unroll": [0, 1, 2, 4], "block": [32, 64]}
    space = _space(params, ["loop_unroll in [0, 1]"])
    assert space.count("reference") == 4 == len(_python_valid(params, ["loop_unroll in [0, 1]"]))


def _combined(ids) -> tuple[dict, list[str]]:
    """All forms in one space: a selector `s` picks the form that must hold (`s != i or (form)`),
    so one compiled module checks every form row by row."""
    chosen = [(e, i) for e, i in FORMS if i in ids]
    params = {**PARAMS, "s": list(range(len(chosen)))}
    return params, [f"s != {n} or ({e.strip()})" for n, (e, _) in enumerate(chosen)]


@pytest.mark.parametrize("backend", ["c", "cpsat"])
def test_every_form_in_the_other_backends(backend):
    ids = {i for _, i in FORMS} - MIXED - (C_REFUSES if backend == "c" else set())
    params, conditions = _combined(ids)
    space = _space(params, conditions)
    want = _python_valid(params, conditions)
    try:
        if backend == "c":
            assert set(space.rows("c")) == want
        else:
            assert space.count("cpsat") == len(want)
    except SolverspaceError as exc:
        if "needs OR-Tools" in str(exc) or "compiler" in str(exc):
            pytest.skip(str(exc))
        raise


@pytest.mark.parametrize("backend", ["reference", "c"])
def test_forms_that_were_wrong_answers(backend):
    """At 5b00030 these were read and counted wrongly: `and`/`or` as values gave a bool (0
    configurations for `(x or 4) == 4`), and the compiled enumerator took a string's code for
    its truth (`k if x > 0 else ''` as a condition counted the empty string as true)."""
    forms = ["(x or 4) == 4", "(k or 'b') == 'b'", "k if x > 0 else ''"]
    params = {**PARAMS, "s": list(range(len(forms)))}
    conditions = [f"s != {n} or ({e})" for n, e in enumerate(forms)]
    assert set(_space(params, conditions).rows(backend)) == _python_valid(params, conditions)


@pytest.mark.parametrize("form", sorted(C_REFUSES))
def test_c_refuses_a_fraction_value_and_auto_answers(form):
    """Where the compiled enumerator cannot keep an exact fraction it refuses with a typed error,
    and `auto` answers correctly anyway."""
    expression = dict((i, e) for e, i in FORMS)[form]
    space = _space(PARAMS, [expression])
    want = len(_python_valid(PARAMS, [expression]))
    assert space.count("auto") == want
    try:
        got = space.count("c")
    except SolverspaceError as exc:
        assert "fraction" in str(exc) or "cannot" in str(exc)
    else:
        assert got == want


# Forms Python evaluates (or Kernel Tuner passes to Python) that are refused, with the words
# that name the form and the column where it starts.
REFUSED = [
    ("x is 1", "`is` compares object identity", 1),
    ("x is not y", "`is not` compares object identity", 1),
    ("x & 1 == 0", "bitwise `&`", 1),
    ("x | y", "bitwise `|`", 1),
    ("x ^ y > 1", "bitwise `^`", 1),
    ("x in 'abc'", "`in` a string (a substring test)", 6),
    ("x in y", "`in` takes a list, tuple or set of values, or range(...)", 6),
    ("x in {1: 2}", "`in` takes a list", 6),
    ("x in [[1], 2]", "a nested list", 7),
    ("x in [*range(3)]", "a nested list, tuple or unpacking", 7),
    ("(x, y) == (1, 2)", "a list, tuple or set compared as a value", 1),
    ("[x, y]", "a list outside `in [...]`", 1),
    ("k < x", "a string used in arithmetic or an ordering comparison", 1),
    ("k + 'a' == 'aa'", "a string used in arithmetic", 1),
    ("min(k, 'b') == 'a'", "a string used in arithmetic", 5),
    ("x ** (y + 1) > 2", "`**` with an exponent computed from parameters", 7),
    ("x ** 0.5 > 1", "a fractional exponent (a root)", 6),
    ("2 ** k == 2", "non-integer values", 6),
    ("x << -1 > 0", "a shift by a negative count", 6),
    ("x << (y + 1) > 0", "a shift by a count computed from parameters", 7),
    ("round(x / 2) == 1", "a call to round() is not part of the language", 1),
    ("len(k) == 1", "a call to len() is not part of the language", 1),
    ("np.prod([x, y]) <= 8", "attribute access (`a.b`, e.g. `np.prod`", 1),
    ("math.log2(x) == 2", "attribute access", 1),
    ("x[0] == 1", "indexing or slicing", 1),
    ("(lambda v: v)(x) > 1", "a lambda", 2),
    ("[v for v in [x]] == 1", "a comprehension", 1),
    ("any(v > 1 for v in (x, y))", "a call to any()", 1),
    ("f'{x}' == '1'", "an f-string", 1),
    ("(z := x) > 1", "an assignment expression (`:=`)", 2),
    ("x == None", "constant None", 6),
    ("x < 1e400", "not a finite number", 5),
    ("max(x, y, key=abs) > 1", "positional arguments only", 1),
    ("min(x) > 1", "min() of one value", 1),
    ("pow(x, 2, 3) == 1", "pow() takes 2 arguments", 1),
    ("int(k, 16) == 10", "int() takes 1 arguments", 1),
    ("x(1) > 0", "'x' is a tuning parameter, called like a function", 1),
    ("x > 1 and zz < 3", "unknown name 'zz'", 11),
]


@pytest.mark.parametrize("expression, words, column", REFUSED, ids=[r[0] for r in REFUSED])
def test_refusals_name_the_form(expression, words, column):
    with pytest.raises(SpaceDefinitionError) as info:
        _space(PARAMS, [expression])
    rendered = str(info.value)
    assert isinstance(info.value, ValueError)
    assert "forms.json" in rendered and "condition 1" in rendered and words in rendered
    assert f"(column {column})" in rendered


def test_refused_form_exits_2_from_the_cli(tmp_path, capsys):
    path = tmp_path / "t.json"
    path.write_text(_t1(PARAMS, ["x & 1 == 0"]))
    assert main(["count", str(path)]) == 2
    assert "bitwise `&`" in capsys.readouterr().err


def test_division_is_exact_where_python_rounds():
    """Documented choice: `/` and float literals are exact (a decimal literal is the decimal it
    spells), as everywhere in the language; Python's floats disagree only where they round."""
    params = {"x": list(range(0, 5)), "y": list(range(0, 5))}
    for expression in ("x / 10 + y / 10 == 3 / 10", "x * 0.1 + y * 0.1 == 0.3"):
        ours = set(_space(params, [expression]).rows("reference"))
        exact = {(x, y) for x in params["x"] for y in params["y"] if x + y == 3}
        assert ours == exact
        assert _python_valid(params, [expression]) != exact   # 0.1 + 0.2 != 0.3 in floating point


def test_division_by_zero_is_undefined_not_valid():
    stats = _space({"x": [1, 2], "y": [0, 1]}, ["x // y >= 1"]).stats("reference")
    assert (stats.count, stats.undefined) == (2, 2)


def test_rewrites_keep_a_single_parameter_power_small():
    """`2 ** p` is spelled out over p's values; a parameter with too many values is refused."""
    from solverspace.io.t1 import conditions as t1_conditions
    many = {"p": list(range(t1_conditions.MAX_EXPANSION + 1))}
    with pytest.raises(SpaceDefinitionError, match="more than the 256"):
        _space(many, ["2 ** p > 4"])


# A generator of random conditions from the forms above: every draw is compared with Python.
_NUMBER = st.sampled_from(["x", "y", "f", "0", "1", "2", "-3", "(x or 2)", "(y and x)"])


def _grow(inner):
    pair = st.tuples(inner, inner)
    return st.one_of(
        pair.map(lambda p: f"({p[0]} + {p[1]})"), pair.map(lambda p: f"({p[0]} - {p[1]})"),
        pair.map(lambda p: f"({p[0]} * {p[1]})"), pair.map(lambda p: f"({p[0]} // {p[1]})"),
        pair.map(lambda p: f"({p[0]} % {p[1]})"), pair.map(lambda p: f"min({p[0]}, {p[1]})"),
        inner.map(lambda a: f"abs({a})"), inner.map(lambda a: f"(-{a})"), inner.map(lambda a: f"({a} ** 2)"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        pair.map(lambda p: f"({p[0]} or {p[1]})"), pair.map(lambda p: f"({p[0]} and {p[1]})"),
    )


_VALUE = st.recursive(_NUMBER, _grow, max_leaves=6)
_COMPARISON = st.one_of(
    st.tuples(_VALUE, st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), _VALUE).map(" ".join),
    st.tuples(_VALUE, st.sampled_from(["in", "not in"]), st.lists(_VALUE, max_size=3))
    .map(lambda t: f"{t[0]} {t[1]} [{', '.join(t[2])}]"),
    st.tuples(_VALUE, _VALUE, _VALUE).map(lambda t: f"{t[0]} < {t[1]} <= {t[2]}"),
    st.sampled_from(["k in ['a', '']", "k < 'b'", "k", "not k", "k != 'ab'"]),
    _VALUE,
)
_CONDITION = st.recursive(_COMPARISON, lambda inner: st.one_of(
    st.tuples(inner, inner).map(lambda p: f"({p[0]} and {p[1]})"),
    st.tuples(inner, inner).map(lambda p: f"({p[0]} or {p[1]})"),
    inner.map(lambda a: f"not ({a})")), max_leaves=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CONDITION)
def test_random_conditions_mean_what_python_means(expression):
    params = {"x": list(range(-3, 5)), "y": [0, 1, 2], "f": [False, True], "k": ["a", "b", "ab", ""]}
    try:
        want = _python_valid(params, [expression])
    except OverflowError:
        return
    assert set(_space(params, [expression]).rows("reference")) == want, expression
