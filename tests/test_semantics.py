"""DESIGN.md's "Fixed semantics", checked through the reference enumerator (and `check`).

Expected results are computed with plain Python in the tests: Python's `range`, floor `//` and
`%`, `fractions.Fraction` for `/`, and ZeroDivisionError for the undefined operations.
"""
from __future__ import annotations

import ast

import itertools
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from solverspace import Space, UndefinedOperationError
from solverspace.core.errors import SpaceDefinitionError
from solverspace.analysis.plan import make_plan
from tests.helpers import space


def column(s: Space, name: str) -> list:
    index = s.parameters.index(name)
    return [row[index] for row in s.rows("reference")]


# ------------------------------------------------------------------------------- ranges
@pytest.mark.parametrize("args", [(5, -6, -3), (10, 0, -1), (0, 10, 3), (-4, 4), (7,), (3, -3, -2), (-1, -10, -4)])
def test_constant_ranges_follow_python(args):
    s = space(f"x = range({', '.join(map(str, args))})")
    assert column(s, "x") == list(range(*args))
    assert s.count("reference") == len(range(*args))


def test_dependent_ranges_with_negative_steps_follow_python_over_a_grid():
    s = space("""
        a = range(-3, 4)
        b = range(-3, 4)
        c = iterator([-2, -1, 1, 3])
        x = range(a, b, c)
        """)
    expected = [(a, b, c, x) for a in range(-3, 4) for b in range(-3, 4) for c in (-2, -1, 1, 3)
                for x in range(a, b, c)]
    assert list(s.rows("reference")) == expected
    assert s.count("reference") == len(expected)


def test_paper_fig5_style_countdown():
    s = space("k = range(1, 4)\nn = range(k, 0, -1)")
    assert list(s.rows("reference")) == [(1, 1), (2, 2), (2, 1), (3, 3), (3, 2), (3, 1)]


@pytest.mark.parametrize("source", ["x = range(3, 3)", "x = range(5, 0)", "x = range(0, 5, -1)",
                                    "x = range(0)", "x = iterator([1, 2]) - range(0, 3)",
                                    "x = range(0, 5) & iterator([7, 8])"])
def test_empty_domains_yield_nothing(source):
    s = space(source)
    assert list(s.rows("reference")) == []
    assert s.count("reference") == 0
    assert s.stats("reference").undefined == 0


def test_dependent_range_empty_for_some_values_only():
    s = space("x = range(0, 5)\ny = range(x, 2)\nz = range(1, 3)")
    expected = [(x, y, z) for x in range(5) for y in range(x, 2) for z in range(1, 3)]
    assert list(s.rows("reference")) == expected
    assert s.count("reference") == 6


# ---------------------------------------------------------------------- floor // and %
GRID_A = range(-7, 8)
GRID_B = [b for b in range(-4, 5) if b != 0]


def test_floor_division_and_modulo_match_python_over_a_grid():
    s = space("""
        a = range(-7, 8)
        b = range(-4, 5) - iterator([0])
        q = a // b
        r = a % b
        """)
    rows = list(s.rows("reference", with_derived=("q", "r")))
    assert rows == [(a, b, a // b, a % b) for a in GRID_A for b in GRID_B]
    assert any(q < 0 and r != 0 for _, _, q, r in rows)  # the grid really has negative operands


def test_floor_division_and_modulo_in_function_bodies_match_python():
    s = space("""
        a = range(-7, 8)
        b = range(-4, 5) - iterator([0])

        @iterator
        def q(a, b):
            return a // b

        @iterator
        def r(a, b):
            m = a % b
            return m
        """)
    assert list(s.rows("reference")) == [(a, b, a // b, a % b) for a in GRID_A for b in GRID_B]


def test_constant_folding_uses_the_same_semantics():
    s = space("""
        @iterator
        def folded():
            return iterator([-7 // 2, -7 % 2, 7 % -2, 7 // -2, (-7 / 2) * 2, 2 ** 3])
        """)
    assert column(s, "folded") == list(dict.fromkeys([-7 // 2, -7 % 2, 7 % -2, 7 // -2, -7, 8]))
    assert column(s, "folded") == [-4, 1, -1, -7, 8]


# ------------------------------------------------------------------------- exact division
def test_true_division_is_exact_where_floats_are_not():
    s = space("x = range(1, 31)\nrequire(x / 10 * 3 == 3 * x / 10)")
    assert s.count("reference") == 30
    # with floating point some of these would be rejected: the test can tell the difference
    assert any(x / 10 * 3 != 3 * x / 10 for x in range(1, 31))


def test_division_comparison_beyond_float_precision():
    big = 2 ** 53 + 1
    s = space(f"""
        a = iterator([{big}, {big - 1}])
        b = iterator([1, 3])
        c = iterator([{big}])
        require(a / b < c)
        """)
    expected = [(a, b, c) for a in (big, big - 1) for b in (1, 3) for c in (big,)
                if Fraction(a, b) < c]
    assert list(s.rows("reference")) == expected
    assert (big, 1, big) not in expected
    assert float(big) / 1 < big  # what floating point would have (wrongly) said


def test_division_values_are_fractions_or_whole_ints():
    s = space("x = range(1, 5)\nhalf = x / 2\nthird = half / 3 * 6")
    rows = list(s.rows("reference", with_derived=("half", "third")))
    assert rows == [(x, Fraction(x, 2), x) for x in range(1, 5)]
    assert [type(h) for _, h, _ in rows] == [Fraction, int, Fraction, int]  # whole values are ints
    assert all(type(t) is int for _, _, t in rows)


def test_whole_quotients_can_bound_ranges():
    s = space("x = range(1, 5)\ny = range(0, (2 * x) / 2)")
    assert list(s.rows("reference")) == [(x, y) for x in range(1, 5) for y in range(x)]


# ------------------------------------------------------------- undefined and short-circuits
GUARDED = [
    "require((b == 0) | (a // b < 2))",
    "@require\ndef guard(a, b):\n    return b == 0 or a // b < 2",
    "@reject_if\ndef guard(a, b):\n    return b != 0 and a // b >= 2",
    "@reject_if\ndef guard(a, b):\n    if b == 0:\n        return False\n    return a // b >= 2",
    "require(if_then_else(b == 0, 0, a // b) < 2)",
]


@pytest.mark.parametrize("constraint", GUARDED)
def test_short_circuit_guards_are_defined_everywhere(constraint):
    s = space("a = range(-3, 4)\nb = range(-3, 4)\n" + constraint)
    expected = [(a, b) for a in range(-3, 4) for b in range(-3, 4) if b == 0 or a // b < 2]
    assert list(s.rows("reference")) == expected
    assert s.stats("reference").undefined == 0
    assert s.count("reference", strict=True) == len(expected)  # strict mode finds nothing undefined


def test_division_by_zero_is_counted_as_undefined_not_as_a_rejection():
    s = space("a = range(-3, 4)\nb = range(-3, 4)\nrequire(a % b == 0)")
    stats = s.stats("reference")
    assert stats.count == sum(1 for a in range(-3, 4) for b in range(-3, 4) if b != 0 and a % b == 0)
    assert stats.undefined == 7  # b == 0, once for each a
    assert stats.undefined_by == {"require_line3": 7}
    assert stats.first_undefined[1] == {"a": -3, "b": 0}
    assert s.count("reference") == stats.count == len(list(s.rows("reference")))


def test_undefined_derived_value_makes_the_configuration_invalid():
    s = space("a = range(0, 3)\nb = range(0, 3)\nq = a // b\nrequire(a >= 0)")
    stats = s.stats("reference")
    assert list(s.rows("reference", with_derived=("q",))) == [(a, b, a // b) for a in range(3) for b in (1, 2)]
    assert stats.undefined == 3 and stats.undefined_by == {"q": 3}


def test_undefined_domain_counts_too():
    s = space("x = range(0, 4)\ny = range(0, 12 // x)")
    stats = s.stats("reference")
    assert stats.count == sum(12 // x for x in range(1, 4))
    assert stats.undefined == 1 and stats.undefined_by == {"y": 1}


def test_strict_mode_raises_naming_expression_and_configuration():
    s = space("a = range(1, 3)\nb = range(0, 2)\nq = a // b")
    with pytest.raises(UndefinedOperationError) as info:
        s.count("reference", strict=True)
    message = str(info.value)
    assert "a // b" in message and "a=1 b=0" in message and "<space>:3" in message
    assert "hint:" in message
    assert isinstance(info.value, ArithmeticError)
    assert s.count("reference") == 2  # non-strict: (1, 1) and (2, 1)


def test_check_reports_undefined_operations():
    s = space("a = range(-3, 4)\nb = range(-3, 4)\nrequire(a % b == 0)")
    bad = s.check({"a": 1, "b": 0})
    assert not bad.valid
    assert [r.undefined for r in bad.rejections] == [True]
    assert "a % b" in bad.rejections[0].reason
    assert s.check({"a": 2, "b": -1}).valid
    assert not s.check({"a": 1, "b": 2}).valid


def test_check_follows_derived_values_into_domains_and_past_undefined_ones():
    s = space("a = range(0, 3)\nb = 4 // a\nc = b + 1\nx = range(0, c)\nrequire(c > 2)")
    assert s.count("reference") == sum(4 // a + 1 for a in (1, 2))
    ok = s.check({"a": 2, "x": 2})
    assert ok.valid and ok.derived == {"b": 2, "c": 3}
    outside = s.check({"a": 2, "x": 3})
    assert [r.rule for r in outside.rejections] == ["domain of x"]
    undefined = s.check({"a": 0, "x": 0})
    assert not undefined.valid
    assert [(r.rule, r.undefined) for r in undefined.rejections] == [("b", True)]


def test_check_of_a_partial_assignment_finds_the_first_completion_in_output_order():
    s = space("x = range(0, 5)\ny = range(x, 0, -1)\nrequire((x + y) % 3 == 0)")
    rows = list(s.rows("reference"))
    partial = s.check({"y": 2})
    assert partial.valid and not partial.complete
    assert partial.completion == dict(zip(s.parameters, next(r for r in rows if r[1] == 2)))
    assert partial.completion == {"x": 4, "y": 2}
    assert not s.check({"x": 0}).valid and s.check({"x": 0}).completion is None  # range(0, 0, -1) is empty


# --------------------------------------------------------------------------- categorical
def test_categorical_values_compare_with_equality():
    s = space("""
        layout = iterator(["row", "col", "tile", "row"])
        kind = setting("gemm", choices=["gemm", "gemv"])

        @iterator
        def width(layout):
            if layout == "row":
                return range(1, 3)
            elif layout == "col" and kind == "gemm":
                return 4
            else:
                return iterator([8, 16])

        reject_if(layout == "tile")
        """)
    assert list(s.rows("reference")) == [("row", 1), ("row", 2), ("col", 4)]
    gemv = space("""
        layout = iterator(["row", "col"])
        kind = setting("gemm", choices=["gemm", "gemv"])
        require((layout != "col") | (kind == "gemv"))
        """, {"kind": "gemv"})
    assert list(gemv.rows("reference")) == [("row",), ("col",)]


def test_categorical_values_refuse_ordering():
    with pytest.raises(SpaceDefinitionError, match="orders the categorical"):  # when loaded, in every backend
        space("layout = iterator(['a', 'b'])\nrequire(layout < 'b')")


# ------------------------------------------------------------------------------ value lists
@pytest.mark.parametrize("items, expected", [
    ([3, 1, 3, 2, 1], [3, 1, 2]),
    ([1, 1, 2, 3, 5, 8, 13], [1, 2, 3, 5, 8, 13]),
    (["b", "a", "b"], ["b", "a"]),
    ([True, 0, 1, False], [1, 0]),  # booleans count as 0/1
    ([-2, 5, -2], [-2, 5]),
])
def test_value_lists_keep_order_and_drop_duplicates(items, expected):
    assert column(space(f"x = iterator({items!r})"), "x") == expected


def test_dependent_value_lists_dedupe_per_configuration():
    s = space("x = range(0, 4)\ny = iterator([x, 2, x * 2, 2])")
    expected = [(x, y) for x in range(4) for y in dict.fromkeys([x, 2, x * 2, 2])]
    assert list(s.rows("reference")) == expected


# --------------------------------------------------------------------------- iterator algebra
def union(*parts):
    return list(dict.fromkeys(itertools.chain(*parts)))


@pytest.mark.parametrize("expression, expected", [
    ("range(0, 6) | iterator([10, 2, 7])", union(range(6), [10, 2, 7])),
    ("iterator([9, 3]) | range(0, 5)", union([9, 3], range(5))),
    ("iterator([5, 1, 4, 2]) & range(0, 5)", [1, 4, 2]),
    ("range(0, 5) & iterator([5, 1, 4, 2])", [1, 2, 4]),
    ("range(0, 6) - iterator([1, 3])", [0, 2, 4, 5]),
    ("iterator([4, 0, 3]) - range(0, 2)", [4, 3]),
    ("range(3) | [7, 1]", [0, 1, 2, 7]),
    ("union(range(2), [5], iterator([1, 9]))", [0, 1, 5, 9]),
    ("intersection(range(10), range(0, 10, 2), [8, 4, 3])", [4, 8]),
    ("difference(range(8), [1], iterator([2, 3]))", [0, 4, 5, 6, 7]),
    ("(range(0, 10, 3) | range(0, 10, 2)) - [6]", [0, 3, 9, 2, 4, 8]),
])
def test_iterator_algebra_keeps_left_order(expression, expected):
    assert column(space(f"x = {expression}"), "x") == expected


def test_iterator_algebra_with_dependencies_and_in_function_bodies():
    s = space("""
        n = range(1, 4)
        x = range(0, n) | iterator([n * 10, 0])

        @iterator
        def y(n):
            return difference(union(range(n, 0, -1), [7, 1]), [2])
        """)
    expected = [(n, x, y) for n in range(1, 4)
                for x in union(range(n), [n * 10, 0])
                for y in [v for v in union(range(n, 0, -1), [7, 1]) if v != 2]]
    assert list(s.rows("reference")) == expected


# ------------------------------------------------------------------------------ output order
def test_output_order_follows_the_plan_loop_order():
    s = space("""
        @iterator
        def inner():
            return range(outer)
        tag = iterator(["p", "q"])
        outer = range(1, 4)
        """)
    assert s.parameters == ("inner", "tag", "outer")       # columns: definition order
    assert s.plan.order == ("tag", "outer", "inner")       # loops: dependencies first
    expected = [(i, t, o) for t in "pq" for o in range(1, 4) for i in range(o)]
    assert list(s.rows("reference")) == expected


def test_another_legal_loop_order_changes_order_not_the_set():
    s = space("a = iterator([3, 1, 2])\nb = iterator(['x', 'y'])\nc = range(0, a)\nrequire(a + c != 3)")
    default = list(s.rows("reference"))
    assert s.plan.order == ("a", "b", "c")
    assert default == [(a, b, c) for a in (3, 1, 2) for b in "xy" for c in range(a) if a + c != 3]
    other = Space(s.model, make_plan(s.model, ["b", "a", "c"]))
    reordered = list(other.rows("reference"))
    assert reordered == [(a, b, c) for b in "xy" for a in (3, 1, 2) for c in range(a) if a + c != 3]
    assert reordered != default and sorted(reordered) == sorted(default)
    assert other.count("reference") == s.count("reference")


# --------------------------------------------------------------------------- derived / settings
def test_derived_reassignment_and_module_level_if_on_settings():
    source = """
        mode = setting("wide", choices=["wide", "narrow"])
        x = range(1, 5)
        t = x * 2
        t = t + 1
        if mode == "narrow":
            t = t - 10
        require(t % 3 == 0)
        """
    wide = space(source)
    assert list(wide.rows("reference", with_derived=("t",))) == [(x, 2 * x + 1) for x in range(1, 5) if (2 * x + 1) % 3 == 0]
    narrow = space(source, {"mode": "narrow"})
    assert list(narrow.rows("reference", with_derived=("t",))) == [(x, 2 * x - 9) for x in range(1, 5) if (2 * x - 9) % 3 == 0]


# ------------------------------------------------------------------------- rows == count()
COUNTED = [
    "x = range(0, 10)\ny = range(x, 10, 3)\nrequire((x + y) % 4 != 1)",
    "a = range(-3, 4)\nb = range(-3, 4)\nrequire(a % b == 0)",
    "x = range(5, 0, -1)\ny = iterator([x, 2 * x, 3])\nreject_if(y > 8)",
    "n = range(1, 6)\n@iterator\ndef d(n):\n    k = 1\n    while k <= n:\n        if n % k == 0:\n            yield k\n        k += 1",
    "x = range(3, 3)\ny = range(0, 4)",
]


@pytest.mark.parametrize("source", COUNTED)
def test_row_count_equals_count(source):
    s = space(source)
    rows = list(s.rows("reference"))
    assert len(rows) == s.count("reference") == s.stats("reference").count
    assert len(set(rows)) == len(rows)


# --------------------------------------------------------------- property: matches plain Python
CONSTANTS = range(-3, 4)
X_VALUES = [-3, -2, -1, 0, 1, 2, 5]
Y_VALUES = [-2, 0, 1, 3]

leaves = st.one_of(st.sampled_from(["x", "y"]), st.integers(min_value=-3, max_value=3))


def extend(children):
    binary = st.tuples(st.sampled_from(["+", "-", "*", "//", "%", "/"]), children, children)
    unary = st.tuples(st.sampled_from(["neg", "abs", "sq"]), children)
    nary = st.tuples(st.sampled_from(["min", "max"]), children, children)
    return st.one_of(binary, unary, nary)


expressions = st.recursive(leaves, extend, max_leaves=6)
comparisons = st.tuples(st.sampled_from(["<", "<=", "==", "!=", ">", ">="]), expressions, expressions)
conditions = st.recursive(comparisons, lambda c: st.tuples(st.sampled_from(["and", "or"]), c, c), max_leaves=3)


def render(node, literal) -> str:
    """Source text of an expression tree; `literal(k)` writes the integer constant k."""
    if isinstance(node, str):
        return node
    if isinstance(node, int):
        return literal(node)
    op, *args = node
    parts = [render(a, literal) for a in args]
    if op == "neg":
        return f"(-{parts[0]})"
    if op == "abs":
        return f"abs({parts[0]})"
    if op == "sq":
        return f"(({parts[0]}) ** 2)"
    if op in ("min", "max"):
        return f"{op}({parts[0]}, {parts[1]})"
    return f"({parts[0]} {op} {parts[1]})"


def const_name(k: int) -> str:
    return f"k_{k}" if k >= 0 else f"k_m{-k}"


class _FloorKeepsFractions(ast.NodeTransformer):
    """`a // b` on Fractions gives a Python int, and `int / int` a float: wrap it back in F()."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.FloorDiv):
            return ast.Call(ast.Name("F", ast.Load()), [node], [])
        return node


def plain(text: str, x: int, y: int):
    """Plain Python with the fixed semantics: Fractions make `/` exact and keep // and % floor."""
    env = {"x": Fraction(x), "y": Fraction(y), "F": Fraction,
           **{const_name(k): Fraction(k) for k in CONSTANTS}}
    tree = _FloorKeepsFractions().visit(ast.parse(text, mode="eval"))
    try:
        return eval(compile(ast.fix_missing_locations(tree), "<plain>", "eval"),
                    {"__builtins__": {"abs": abs, "min": min, "max": max}}, env)
    except ZeroDivisionError:
        return "undefined"


HEADER = "x = iterator({})\ny = iterator({})\n".format(X_VALUES, Y_VALUES) + "".join(
    f"{const_name(k)} = iterator({k})\n" for k in CONSTANTS)
PROPERTY_SETTINGS = hypothesis_settings(max_examples=120, deadline=None, database=None,
                                        suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(expressions)
def test_derived_value_matches_plain_python(tree):
    """A module-level derived value (every leaf a symbol, so the library evaluates all of it)."""
    text = render(tree, const_name)
    s = Space.from_source(HEADER + f"d = x + 0 * y + {text}\n")
    got = {(row[0], row[1]): row[-1] for row in s.rows("reference", with_derived=("d",))}
    expected, undefined = {}, 0
    for x, y in itertools.product(X_VALUES, Y_VALUES):
        value = plain(f"x + 0 * y + {text}", x, y)
        if value == "undefined":
            undefined += 1
        else:
            expected[(x, y)] = value
    assert got == expected
    assert s.stats("reference").undefined == undefined
    for value in got.values():
        assert type(value) is int or (type(value) is Fraction and value.denominator != 1)


@PROPERTY_SETTINGS
@given(conditions)
def test_require_function_matches_plain_python(tree):
    """The same in a lowered @require body, with literal constants (folded at load time) and
    short-circuit `and`/`or`."""
    def render_condition(node):
        op, left, right = node
        if op in ("and", "or"):
            return f"({render_condition(left)} {op} {render_condition(right)})"
        return f"({render(left, str)} {op} {render(right, str)})"
    body = render_condition(tree)
    s = Space.from_source(f"x = iterator({X_VALUES})\ny = iterator({Y_VALUES})\n"
                          f"@require\ndef c(x, y):\n    return {body}\n")
    reference = render_condition_for_python(tree)
    kept = []
    for x, y in itertools.product(X_VALUES, Y_VALUES):
        value = plain(reference, x, y)
        if value != "undefined" and value:
            kept.append((x, y))
        # per configuration: `check` agrees, and says when the rejection is an undefined operation
        result = s.check({"x": x, "y": y})
        assert result.valid == (value != "undefined" and bool(value))
        assert any(r.undefined for r in result.rejections) == (value == "undefined")
    assert list(s.rows("reference")) == kept
    assert (s.stats("reference").undefined > 0) == any(plain(reference, x, y) == "undefined"
                                            for x, y in itertools.product(X_VALUES, Y_VALUES))


def render_condition_for_python(node) -> str:
    op, left, right = node
    if op in ("and", "or"):
        return f"({render_condition_for_python(left)} {op} {render_condition_for_python(right)})"
    literal = lambda k: f"F({k})"  # noqa: E731  (constants as Fractions: `/` stays exact)
    return f"({render(left, literal)} {op} {render(right, literal)})"
