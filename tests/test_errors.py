"""Invalid spaces and the messages they produce: one table.

Each case gives a space source (or a path for `Space.load`), when the error appears (loading, or
evaluating the space: count / strict count), the error class, fragments the message must contain,
and the `<space>:N` line the message must name where the error belongs to a line of the source.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import pytest

from solverspace import (
    SettingError, SolverspaceError, Space, SpaceDefinitionError, SpaceEvaluationError,
    UndefinedOperationError)


@dataclass
class Case:
    id: str
    source: str | None               # None: load `path` instead
    error: type
    fragments: tuple[str, ...]
    line: int | None                 # the `<space>:N` the message must name (None: not source-level)
    when: str = "load"               # "load", "count" or "strict"
    settings: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    path: str | None = None


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


RUNAWAY = src("""
    @iterator
    def naturals():
        n = 0
        while True:
            yield n
            n += 1
    """)

CASES = [
    # ------------------------------------------------------------------------ unknown names
    Case("unknown-name-module-level", "x = range(1, 4)\ny = range(1, xx)\n", SpaceDefinitionError,
         ("unknown name", "'xx'", "did you mean 'x'?"), 2),
    Case("unknown-name-deferred-body", src("""
         block = range(1, 4)
         @iterator
         def tile():
             return range(1, blok)
         """), SpaceDefinitionError, ("unknown name 'blok'", "did you mean 'block'?"), 4),
    Case("unknown-name-constraint-defined-later", src("""
         x = range(1, 4)
         @require
         def small(x):
             return x < limt
         limit = 3
         """), SpaceDefinitionError, ("unknown name 'limt'", "did you mean 'limit'?"), 4),
    Case("unknown-name-in-argument-list", src("""
         blk_m = range(1, 4)
         @iterator
         def blk_n(blk_mm):
             return range(blk_mm)
         """), SpaceDefinitionError, ("unknown name 'blk_mm'", "did you mean 'blk_m'"), 3),
    Case("unknown-name-without-close-match", "x = range(1, 4)\nrequire(x < zzzzzz)\n", SpaceDefinitionError,
         ("unknown name", "zzzzzz", "hint:"), 2),
    # ------------------------------------------------------------------------------- cycles
    Case("cycle-of-two-deferred-iterators", src("""
         @iterator
         def a():
             return range(b)
         @iterator
         def b():
             return range(1, a + 1)
         """), SpaceDefinitionError, ("dependency cycle", "a -> b", "b -> a", "hint:"), None),
    Case("cycle-through-a-derived-value", src("""
         @iterator
         def a():
             return range(c)
         @iterator
         def b():
             return range(a)
         c = b + 1
         """), SpaceDefinitionError, ("dependency cycle", "a", "b", "c"), None),
    Case("self-dependency", "@iterator\ndef a():\n    return range(a)\n", SpaceDefinitionError,
         ("dependency cycle", "a -> a"), None),
    # --------------------------------------------------------------------------- range step 0
    Case("range-step-0-literal", "x = range(1, 10, 0)\n", SpaceDefinitionError,
         ("range step is 0", "non-zero"), 1),
    Case("range-step-0-in-function", "@iterator\ndef x():\n    return range(1, 10, 0)\n", SpaceDefinitionError,
         ("range step is 0", "'x'"), 3),
    Case("range-step-0-computed", "s = range(0, 2)\nx = range(1, 10, s)\n", SpaceEvaluationError,
         ("range step is 0", "parameter 'x'", "s=0", "non-zero"), 2, when="count"),
    Case("range-step-0-computed-in-function", src("""
         s = range(-1, 2)
         @iterator
         def x(s):
             step = s * 2
             return range(0, 4, step)
         """), SpaceEvaluationError, ("range step is 0", "'x'", "s=0"), 3, when="count"),
    # ------------------------------------------------------------------------- not integers
    Case("float-in-range", "x = range(1, 2.5)\n", SpaceDefinitionError,
         ("floating-point value 2.5", "integers"), 1),
    Case("float-in-value-list", "x = iterator([1, 2.5])\n", SpaceDefinitionError,
         ("floating-point value 2.5",), 1),
    Case("float-through-derived-value", "x = range(1, 4)\ny = x * 0.5\nrequire(y < 1)\n", SpaceDefinitionError,
         ("derived value 'y'", "floating-point value 0.5"), 3),
    Case("float-in-function-body", "x = range(1, 4)\n@iterator\ndef z(x):\n    return range(0, x * 1.5)\n",
         SpaceDefinitionError, ("iterator 'z'", "floating-point value 1.5", "exact"), 3),
    Case("fraction-as-range-bound", "x = range(1, 4)\nhalf = x / 2\nz = range(0, half)\n",
         SpaceEvaluationError, ("parameter 'z'", "1/2", "not an integer", "use //", "x=1"), 3, when="count"),
    Case("fraction-as-value", "x = range(1, 4)\n@iterator\ndef z(x):\n    return x / 2\n",
         SpaceEvaluationError, ("parameter 'z'", "not an integer", "use //"), 3, when="count"),
    # ------------------------------------------------------------------------------ settings
    Case("setting-outside-its-choices", "mode = setting('a', choices=['a', 'b'])\nx = range(1, 3)\n",
         SettingError, ("mode='c'", "not one of", "['a', 'b']"), 1, settings={"mode": "c"}),
    Case("setting-not-an-integer", "MAX = setting(8)\nx = range(1, MAX)\n", SettingError,
         ("MAX='lots'", "expected an integer"), 1, settings={"MAX": "lots"}),
    Case("unknown-setting-override", "mode = setting('a', choices=['a', 'b'])\nx = range(1, 3)\n",
         SettingError, ("unknown setting 'mdoe'", "did you mean 'mode'?"), None, settings={"mdoe": "b"}),
    Case("setting-default-outside-choices", "mode = setting('z', choices=['a', 'b'])\nx = range(1, 3)\n",
         SpaceDefinitionError, ("'z'", "not one of its choices"), 1),
    # ---------------------------------------------------------------------------- files
    Case("missing-file", None, SpaceDefinitionError, ("no/such/file.py", "does not exist", "hint:"), None,
         path="no/such/file.py"),
    # ------------------------------------------------------------------------ refused syntax
    Case("condition-is-refused", "x = range(1, 4)\n@condition\ndef big(x):\n    return x > 2\n",
         SpaceDefinitionError, ("@condition", "polarity", "@reject_if", "@require"), 2),
    Case("module-level-if-on-a-symbol", "x = range(1, 4)\nif x > 2:\n    y = range(1, 3)\n",
         SpaceDefinitionError, ("`x > 2`", "symbolic", "if_then_else", "@iterator"), 2),
    Case("module-level-and-on-symbols", "x = range(1, 4)\nrequire(x > 1 and x < 3)\n",
         SpaceDefinitionError, ("`x > 1`", "symbolic", "hint:"), 2),
    Case("for-loop-in-deferred-body", src("""
         x = range(1, 4)
         @iterator
         def y(x):
             total = 0
             for i in range(3):
                 total = total + i
             return range(total)
         """), SpaceDefinitionError, ("in function 'y'", "`For` statements are not allowed", "yield"), 5),
    Case("while-loop-in-constraint-body", src("""
         x = range(1, 4)
         @require
         def c(x):
             while x > 0:
                 x = x - 1
             return True
         """), SpaceDefinitionError, ("in function 'c'", "`While` statements are not allowed"), 4),
    Case("deferred-body-without-return-on-a-path", src("""
         architecture = iterator(["fermi", "kepler"])
         @iterator
         def outer():
             if architecture == "fermi": return range(32)
             elif architecture == "kepler": return range(192)
         """), SpaceDefinitionError, ("in function 'outer'", "without returning", "every path"), 3),
    Case("power-with-parameter-exponent", "x = range(1, 4)\ny = 2 ** x\n", SpaceDefinitionError,
         ("`**`", "constant exponent"), 2),
    Case("redefined-parameter", "x = range(1, 4)\nx = range(1, 5)\n", SpaceDefinitionError,
         ("'x' is already a parameter", "another name"), 2),
    Case("no-parameters", "N = 4\nM = N * 2\n", SpaceDefinitionError, ("defines no parameters",), None),
    Case("syntax-error", "x = range(1, 4\ny = 2\n", SpaceDefinitionError, ("syntax error",), 1),
    # ----------------------------------------------------------------- run-time problems
    Case("runaway-closure", RUNAWAY, SpaceEvaluationError,
         ("closure iterator 'naturals'", "more than 50 values", "max_closure_values"), 2,
         when="count", options={"max_closure_values": 50}),
    Case("runaway-closure-with-dependency", "x = range(1, 3)\n" + RUNAWAY.replace("n = 0", "n = x"),
         SpaceEvaluationError, ("closure iterator 'naturals'", "more than 20 values", "{'x': 1}"), 3,
         when="count", options={"max_closure_values": 20}),
    Case("closure-raises", "x = range(0, 2)\n@iterator\ndef inv(x):\n    yield 10 // x\n",
         SpaceEvaluationError, ("closure iterator 'inv' raised ZeroDivisionError", "x=0"), 3, when="count"),
    Case("categorical-ordering", "layout = iterator(['row', 'col'])\nrequire(layout < 'tile')\n",
         SpaceDefinitionError, ("`layout < 'tile'` orders the categorical", "== and !="), 2),
    Case("mixed-strings-and-integers", "tile = iterator(['auto', 1, 2])\n", SpaceDefinitionError,
         ("parameter 'tile'", "mixes strings and integers", "sentinel such as 0"), 1),
    Case("strict-undefined", "a = range(1, 3)\nb = range(0, 2)\nq = a // b\n", UndefinedOperationError,
         ("undefined operation in 'q'", "`a // b`", "a=1 b=0", "guard"), 3, when="strict"),
]


def provoke(case: Case):
    if case.source is None:
        space = Space.load(case.path, case.settings, **case.options)
    else:
        space = Space.from_source(case.source, case.settings, **case.options)
    if case.when == "count":
        space.count("reference")
    elif case.when == "strict":
        space.count("reference", strict=True)
    return space


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_error_messages(case):
    if case.when != "load":  # the problem only shows when the space is evaluated
        Space.from_source(case.source, case.settings, **case.options)
    with pytest.raises(case.error) as info:
        provoke(case)
    message = str(info.value)
    for fragment in case.fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    if case.line is not None:
        assert message.startswith(f"<space>:{case.line}: "), message
    assert isinstance(info.value, SolverspaceError)
    assert isinstance(info.value, (ValueError, ArithmeticError))  # catchable without our hierarchy
    assert message.count("\n") <= 1 and ("hint:" in message) == bool(info.value.hint)


def test_every_error_in_the_table_has_a_hint_or_names_its_line():
    """The table itself: each case is located or explains how to fix it (no bare messages)."""
    for case in CASES:
        try:
            provoke(case)
        except SolverspaceError as exc:
            assert exc.where is not None or exc.hint, case.id
        else:
            pytest.fail(f"{case.id}: no error")


def test_file_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "bad_space.py"
    path.write_text("x = range(1, 4)\n\ny = range(1, xx)\n")
    with pytest.raises(SpaceDefinitionError) as info:
        Space.load(str(path))
    assert str(info.value).startswith(f"{path}:3: unknown name")
    directory = tmp_path / "a_directory"
    directory.mkdir()
    with pytest.raises(SpaceDefinitionError, match="is not a file"):
        Space.load(str(directory))
