"""What Python users write in a space file: it works with one meaning in every backend, or it is
refused with a message that names the line and the working form (issue 11).

Supported forms are checked against a brute-force Python count and cross-validated (reference, C,
CP-SAT); refusals name `<space>:N` and a hint.
"""
from __future__ import annotations

import itertools
import textwrap
import warnings

import pytest

from solverspace import Space, SpaceDefinitionError
from solverspace.cli import main
from solverspace.core.errors import SolverspaceWarning
from solverspace.validation import validate_source

FAST = {"cpsat_options": {"workers": 1}, "threads": 2}


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def brute(domains: dict, keep) -> int:
    """The number of value combinations of independent `domains` for which `keep(**values)` holds."""
    names = list(domains)
    return sum(1 for combo in itertools.product(*domains.values()) if keep(**dict(zip(names, combo))))


def agree(source: str, expected: int, settings: dict | None = None):
    """Reference, C and CP-SAT all count `expected` (and list the same rows)."""
    assert Space.from_source(source, settings).count("reference") == expected
    report = validate_source(source, settings=settings, **FAST)
    assert report.status == 0, report.render()
    ran = {o.backend for o in report.outcomes if o.ran}
    assert {"reference", "c", "cpsat"} <= ran, report.render()
    assert {o.count for o in report.outcomes if o.ran and o.backend != "sample"} == {expected}


def refused(source: str, line: int, *fragments: str) -> str:
    with pytest.raises(SpaceDefinitionError) as info:
        Space.from_source(source).count("reference")
    message = str(info.value)
    assert f"<space>:{line}:" in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


# ------------------------------------------------------------------------ 1. `in` and `not in`
IN_BODIES = src("""
    SIZES = [3, 5, 7]
    x = range(1, 9)
    alg = iterator(["a", "b", "c"])

    @require
    def picked(x, alg):
        return x in (1, 2, 4, 5) and alg in ("a", "b")

    @reject_if
    def excluded(x):
        return x not in [1, 2, 5, 6] or x in {6}

    @iterator
    def y(x):
        if x in SIZES:
            return range(x)
        return iterator([1, 2])

    @require
    def stepped(y):
        return y not in range(1, 9, 3)
    """)


def test_in_and_not_in_in_function_bodies():
    def keep(x, alg):
        return x in (1, 2, 4, 5) and alg in ("a", "b") and not (x not in [1, 2, 5, 6] or x in {6})
    expected = sum(len([y for y in (range(x) if x in (3, 5, 7) else [1, 2]) if y not in range(1, 9, 3)])
                   for x in range(1, 9) for alg in "abc" if keep(x, alg))
    agree(IN_BODIES, expected)


IN_MODULE = src("""
    x = range(1, 9)
    alg = iterator(["a", "b", "c"])
    y = range(0, 4)
    require(x in (1, 2, 4, 8))
    require(alg not in ["c"])
    z = if_then_else(y in range(0, 4, 2), x, 0)
    reject_if(z in {2, 8})
    """)


def test_in_and_not_in_at_module_level():
    def keep(x, alg, y):
        z = x if y in range(0, 4, 2) else 0
        return x in (1, 2, 4, 8) and alg not in ["c"] and z not in {2, 8}
    agree(IN_MODULE, brute({"x": range(1, 9), "alg": "abc", "y": range(0, 4)}, keep))


def test_in_evaluates_every_item_as_python_does():
    # Python builds the whole tuple before testing membership: `1 // y` is evaluated (and is
    # undefined for y == 0) even when x equals the first item
    source = src("""
        x = range(0, 3)
        y = range(0, 3)
        @require
        def member(x, y):
            return x in (1, 4 // y)
        """)
    space = Space.from_source(source)
    assert space.count("reference") == brute({"x": range(3), "y": range(1, 3)}, lambda x, y: x in (1, 4 // y))
    assert space.stats("reference").undefined == 3
    agree(source, space.count("reference"))


def test_in_with_a_parameter_on_the_right_is_refused():
    refused("x = range(1, 4)\ny = range(1, 4)\nrequire(x in y)\n", 3, "`in`", "hint:")
    refused(src("""
        x = range(1, 4)
        y = range(1, 4)
        @require
        def member(x, y):
            return x in y
        """), 5, "`in`", "hint:")


def test_python_if_on_a_membership_test_is_refused_with_the_function_form():
    refused("x = range(1, 4)\nif x in (1, 2):\n    pass\n", 2, "symbolic", "@require")


def test_a_module_constant_a_body_cannot_use_is_named():
    refused(src("""
        from fractions import Fraction
        HALF = Fraction(1, 2)
        x = range(1, 4)
        @require
        def r(x):
            return x in (1, 2) and x > HALF
        """), 6, "'HALF'", "Fraction", "hint:")


def test_in_on_plain_values_is_python():
    source = src("""
        ALL = [1, 2, 3, 4]
        ALLOWED = (2, 4)
        SIZES = [s for s in ALL if s in ALLOWED and s not in (3,)]
        x = iterator(SIZES)
        @iterator
        def y(x):
            for v in range(6):
                if v not in (1, 2) and x in [4]:
                    yield v
        """)
    assert list(Space.from_source(source).rows("reference")) == [(4, v) for v in (0, 3, 4, 5)]


# ------------------------------------------------------------- 2. iterator algebra in bodies
ALGEBRA = src("""
    n = range(1, 6)

    @iterator
    def t(n):
        return range(1, n) | iterator([64])

    @iterator
    def u(n):
        if n > 2:
            return range(0, 10, 2) & range(n, 9) - [6]
        return [7] | range(n)
    """)


def test_iterator_algebra_in_an_iterator_body():
    def t(n):
        return list(range(1, n)) + [64]

    def u(n):
        if n > 2:
            return [v for v in range(0, 10, 2) if v in range(n, 9) and v != 6]
        return [7] + [v for v in range(n) if v != 7]
    expected = sum(len(t(n)) * len(u(n)) for n in range(1, 6))
    space = Space.from_source(ALGEBRA)
    assert [r for r in space.rows("reference") if r[0] == 4] == [(4, a, b) for a in t(4) for b in u(4)]
    agree(ALGEBRA, expected)


def test_iterator_algebra_with_a_plain_value_is_refused():
    refused(src("""
        n = range(1, 6)
        @iterator
        def t(n):
            return range(1, n) | 64
        """), 4, "iterator([64])")


def test_bitwise_operators_on_conditions_in_bodies_name_and_or():
    refused(src("""
        n = range(1, 6)
        @require
        def r(n):
            return (n > 2) | (n < 1)
        """), 4, "`or`")


# --------------------------------------------------------------------- 3. helper functions
HELPERS = src("""
    LIMIT = 30

    def area(a, b):
        return a * b + 1

    def clamp(v, hi=LIMIT):
        if v > hi:
            return hi
        return v

    def choices(a):
        if a in (1, 2):
            return range(1, a + 2)
        return iterator([a, 2 * a])

    x = range(1, 7)
    y = range(1, 7)

    @iterator
    def z(x):
        return choices(x)

    cost = clamp(area(x, y) + z, 20)

    @require
    def fits(x, y):
        return clamp(area(x, y)) < 25

    reject_if(cost == 20)
    """)


def test_helper_functions_are_inlined_in_bodies_and_derived_values():
    def choices(a):
        return list(range(1, a + 2)) if a in (1, 2) else [a, 2 * a]
    expected = sum(1 for x in range(1, 7) for y in range(1, 7) for z in choices(x)
                   if min(x * y + 1, 30) < 25 and min(x * y + 1 + z, 20) != 20)
    agree(HELPERS, expected)


def test_helper_called_with_plain_values_runs_as_python():
    source = src("""
        def double(a):
            return 2 * a
        N = double(3)
        x = range(0, N)
        @iterator
        def y():
            for v in range(3):
                yield double(v)
        """)
    space = Space.from_source(source)
    assert {s.name: s.value for s in space.model.settings}["N"] == 6
    assert space.count("reference") == 6 * 3


@pytest.mark.parametrize("source, line, fragments", [
    (src("""
        def f(a):
            return f(a - 1)
        x = range(1, 4)
        require(f(x) > 0)
        """), 2, ("recursive", "'f'")),
    (src("""
        def f(a):
            return g(a)
        def g(a):
            return f(a)
        x = range(1, 4)
        @require
        def r(x):
            return f(x) > 0
        """), 4, ("recursive", "f -> g -> f")),
    (src("""
        def total(a):
            s = 0
            for i in range(a):
                s += i
            return s
        x = range(1, 4)
        @require
        def r(x):
            return total(x) > 0
        """), 3, ("'total'", "For", "hint:")),
    (src("""
        def f(a, b):
            return a + b
        x = range(1, 4)
        @require
        def r(x):
            return f(x) > 0
        """), 6, ("f()", "argument", "'b'")),
    (src("""
        f = lambda a: a + 1
        x = range(1, 4)
        @require
        def r(x):
            return f(x) > 0
        """), 5, ("'f'", "def")),
])
def test_helper_refusals(source, line, fragments):
    refused(source, line, *fragments)


# ------------------------------------------------------------- 4. derived value -> constant
REASSIGN = src("""
    precision = setting("double", choices=["single", "double"])
    dim = range(1, 9)
    threads = dim * 2
    require(threads < 12)
    if precision == "double":
        threads = 8
    reject_if(threads > dim * 3)
    """)


@pytest.mark.parametrize("precision", ["single", "double"])
def test_derived_value_reassigned_to_a_constant(precision):
    def keep(dim):
        first = dim * 2
        later = 8 if precision == "double" else first
        return first < 12 and not later > dim * 3
    agree(REASSIGN, brute({"dim": range(1, 9)}, keep), {"precision": precision})


def test_derived_value_reassigned_to_a_constant_twice():
    source = "dim = range(1, 9)\nt = dim * 2\nt = 64\nt = 5\nrequire(t > dim)\n"
    agree(source, 4)


# ---------------------------------------------------------------------------- 5. floats
# Validity is exact: a float in a constraint or an iterator (directly, through a module constant or
# a derived value) is refused where it is used; in a performance model it is an exact decimal
# (tests/test_floats_in_models.py).
@pytest.mark.parametrize("source, line, fragments", [
    ("MAX = 10 / 4\nx = range(1, 5)\n@require\ndef r(x):\n    return x < MAX\n", 3, ("constraint 'r'", "2.5")),
    ("x = range(0, 10 / 2)\n", 1, ("range", "5.0", "//")),
    ("x = iterator([1, 2.5])\n", 1, ("2.5", "value list")),
    ("x = range(1, 5)\ny = x * 0.5\nrequire(y < 2)\n", 3, ("derived value 'y'", "0.5", "x / 10")),
    ("x = range(1, 5)\nrequire(x < 7 / 2)\n", 2, ("3.5",)),
    ("MAX = setting(10 / 4)\nx = range(1, 5)\n", 1, ("2.5", "//")),
])
def test_floats_are_refused_where_they_appear(source, line, fragments):
    refused(source, line, "floating-point", *fragments)


@pytest.mark.parametrize("source", [
    "ratio = 1 / 2\nx = range(1, 5)\n",                 # a module constant no constraint uses
    "_hidden = 0.25\nx = range(1, 5)\n",
    "x = range(1, 5)\ny = x * 0.5\n",                  # a derived value no constraint uses
])
def test_floats_no_constraint_uses_are_legal(source):
    assert Space.from_source(source).count("reference") == 4


# ----------------------------------------------------------- 6. misspelled categorical values
MISSPELLED = src("""
    load = iterator(["tex", "ldg"])
    x = range(1, 3)
    require(load == "texture")
    @reject_if
    def no_ldg(load):
        return load != "ldgg" or load in ("tex", "lgd")
    """)


def test_misspelled_categorical_values_warn_with_did_you_mean():
    with pytest.warns(SolverspaceWarning) as record:
        Space.from_source(MISSPELLED)
    messages = [str(w.message) for w in record]
    assert len(messages) == 3, messages
    first, second, third = messages
    assert "<space>:3" in first and "'texture'" in first and "did you mean 'tex'" in first
    assert "no_ldg" in second and "'ldgg'" in second and "did you mean 'ldg'" in second
    assert "'lgd'" in third and "did you mean 'ldg'" in third


def test_correct_categorical_values_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SolverspaceWarning)
        Space.from_source(src("""
            load = iterator(["tex", "ldg"])
            require(load == "tex")
            @iterator
            def y(load):
                return range(3) if load in ("ldg",) else [1]
            """)).count("reference")


def test_cli_prints_the_warning_once(tmp_path, capsys):
    path = tmp_path / "space.py"
    path.write_text("load = iterator(['tex', 'ldg'])\nrequire(load != 'texture')\n")
    assert main(["count", str(path), "--backend", "reference"]) == 0
    err = capsys.readouterr().err
    assert err.count("'texture'") == 1, err
    assert "solverspace: warning:" in err and "did you mean 'tex'" in err


def test_module_level_try_except_as_works():
    # `except ... as err` deletes `err` at the end of its handler: a plain value may be deleted
    source = src("""
        try:
            TABLE = {}["missing"]
        except KeyError as err:
            TABLE = {1: 2, 3: 4}
        a = iterator(sorted(TABLE))
    """)
    assert Space.from_source(source).count("reference") == 2


@pytest.mark.parametrize("source, fragment", [
    ("a = iterator([1, 2])\ndel a\n", "'a' is a parameter, which cannot be deleted"),
    ("A = 3\na = iterator([1, A])\ndel A\n", "'A' is a setting, which cannot be deleted"),
])
def test_del_of_a_declaration_is_refused_by_name(source, fragment):
    with pytest.raises(SpaceDefinitionError) as info:
        Space.from_source(source)
    assert fragment in str(info.value) and "<space>:" in str(info.value)
