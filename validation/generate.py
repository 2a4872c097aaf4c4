"""Random space files for cross-validation: Hypothesis strategies that produce SOURCE TEXT.

`spaces()` draws a whole space file, as a user would write it, covering the language:

- parameters forming a random DAG: `range`s whose bounds and steps depend on earlier parameters
  and derived values (negative steps, empty ranges), value lists with duplicates and with
  expressions, categorical value lists, iterator algebra (`|`, `&`, `-`), deferred `@iterator`
  functions with `if/elif/else` and local variables (sometimes defined before their inputs, or
  reading an input that is not in the argument list), and closure iterators (generators);
- derived values using every operator of DESIGN.md's fixed semantics: `+ - * // % **`, exact
  `/` (as an operand of comparisons, or as a fraction-valued derived value that is compared),
  `min`, `max`, `abs`, `if_then_else`, comparisons as 0/1 values, reassignment, module-level
  `if` on a setting; `//` and `%` get negative operands and divisors that can be 0;
- strings and integers together: closures reading a categorical parameter, closures
  that yield strings (read by other closures), closures over sparse inputs (values far apart),
  and `==`/`!=` between a categorical and an integer (`refused_spaces()` draws what every backend
  must refuse alike: mixed string/integer value lists and branches, ordering a string);
- constraints of both polarities: `require(...)`, `reject_if(...)` combined with `&`, `|`, `~`,
  and `@require` / `@reject_if` functions with `if/elif/else`, local variables, chained
  comparisons and `and`/`or`/`not` guards that short-circuit a division by zero (or do not);
- Python forms lowered to the IR: `in` / `not in` over tuples, lists, sets and ranges (integer and
  categorical, in bodies and at module level), iterator algebra inside `@iterator` bodies, and a
  plain helper `def` (with `if`) called from bodies, ranges and derived values (inlined).

- order parameters (`orders` of the spaces): permutations, interleavings and
  sequences with a derived position or length that later ranges and expressions use, and a
  constraint with before/first/last/contains/position (undefined where a sequence lacks the item);

- a *wide block* (`wide` of the spaces): parameters nothing depends on, with ranges of hundreds
  to thousands of values (some starting at an earlier parameter), multiplied into a count past
  2**64: C and CP-SAT count it exactly, the sampler draws positions past 64 bits.

- settings that switch rules and parameters (`switches` of the spaces): a setting `T` and
  module-level `if`s on it (or on `S`), with an `else` at times, around parameters, derived
  values and rules, so that the settings decide which exist; swept over `S` and `T` in every
  sweep engine (`tests/test_sweep_switched.py`).

`independent_spaces()` draws T1-style spaces: constant value lists, constraints over chains and
stars of parameters (CP-SAT conditions on the articulations of such constraint graphs).

`wide_spaces()` draws spaces too big for the reference: a small narrow part beside parameters of
10**6 .. 10**12 values (stepped ranges too), untouched (hoisted) or used only as `w % c`;
validated by comparing CP-SAT's count with C's (`tests/test_cpsat_wide.py`).

Every space of `spaces()` stays small for the reference enumerator: each parameter's domain size is bounded
through interval arithmetic on the generated expressions, so the number of candidates (the
product of the domain sizes) is at most `max_candidates` (except a wide block's, which the
validator does not list: it compares counts, samples and positions).

With `c_compatible=False`, a few spaces use `/` where the C backend refuses it (outside a
comparison); validation treats that refusal as "declined", not as a disagreement.

Use it as any strategy (`tests/test_validation_generated.py` does)::

    @given(spaces())
    def test_backends_agree(source):
        assert validate_source(source).status != 1

A space a user wants to keep is its text: write it to a file and run `solverspace validate FILE`.
"""
from __future__ import annotations

import operator
import re

import math
from dataclasses import dataclass, field

from hypothesis import strategies as st

CATEGORIES = ("a", "bb", "tex", "ldg", "ü", "x_1")
# strings every writer must write with the same bytes: a separator, a quote, line
# breaks, the empty string, blanks and control characters, non-ASCII (`spaces(odd=...)`)
ODD_CATEGORIES = ('q,"x"', "new\nline", "cr\rx", "", " sp", "tab\tx", "\x1f", "\x7f", "é;t", "back\\slash")
NUL_CATEGORY = "nul\0byte"   # refused wherever a value is read (`nul_spaces`)
# spellings Python reads as the letters and digits of the generated names (NFKC): fullwidth and
# mathematical forms (`spaces(names=...)`, `colliding_spaces`)
SPELLINGS = {"p": ("\uff50", "\U0001d45d"), "q": ("\uff51",), "0": ("\uff10", "\U0001d7ce"),
             "1": ("\uff11",), "2": ("\uff12",), "3": ("\uff13",), "4": ("\uff14",), "5": ("\uff15",)}
_CMP = ("<", "<=", ">", ">=", "==", "!=")
#: factors whose products pass CP-SAT's 2**60 (the first two fit C's 64-bit types, the others do not)
HUGE = (2 ** 61 + 1, 3 * 2 ** 61, 10 ** 19, 2 ** 70 - 3)
_MAX_CAP = 8          # largest domain size of one parameter


# ------------------------------------------------------------------------------ intervals
@dataclass(frozen=True)
class E:
    """A generated expression: its text and a sound interval of its values (where defined)."""

    text: str
    lo: int
    hi: int
    atom: bool = False
    static: bool = False   # known when the file is loaded (constants and settings only)

    def paren(self) -> str:
        return self.text if self.atom else f"({self.text})"


def _const(v: int) -> E:
    return E(str(v), v, v, atom=v >= 0, static=True)


def _hull(*es: E) -> tuple[int, int]:
    return min(e.lo for e in es), max(e.hi for e in es)


def _nonzero_parts(lo: int, hi: int) -> list[tuple[int, int]]:
    parts = []
    if lo <= -1:
        parts.append((lo, min(hi, -1)))
    if hi >= 1:
        parts.append((max(lo, 1), hi))
    return parts


def _floordiv_interval(a: E, b: E) -> tuple[int, int]:
    values = [x // y for lo, hi in _nonzero_parts(b.lo, b.hi) for x in (a.lo, a.hi) for y in (lo, hi)]
    return (min(values), max(values)) if values else (0, 0)


def _mod_interval(a: E, b: E) -> tuple[int, int]:
    lo, hi = 0, 0
    for plo, phi in _nonzero_parts(b.lo, b.hi):
        if plo > 0:
            hi = max(hi, phi - 1)
        else:
            lo = min(lo, plo + 1)
    return lo, hi


def _pow_interval(a: E, k: int) -> tuple[int, int]:
    values = [a.lo ** k, a.hi ** k]
    if a.lo <= 0 <= a.hi:
        values.append(0)
    return min(values), max(values)


# ------------------------------------------------------------------------------ the space under construction
@dataclass
class _Block:
    text: str
    movable: bool = False      # a function form: it may appear before its inputs
    limit: int | None = None   # a movable block must stay at or before this block index


@dataclass
class _State:
    ints: dict = field(default_factory=dict)        # int-valued name -> (lo, hi)
    cats: dict = field(default_factory=dict)        # categorical parameter -> values
    rationals: list = field(default_factory=list)   # fraction-valued derived values (only compared)
    bools: list = field(default_factory=list)       # boolean derived values
    params: list = field(default_factory=list)
    blocks: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    static: set = field(default_factory=set)         # derived names computed at load time
    helper: tuple | None = None                      # (name, arity, lo, hi) of the helper `def`
    helper_arity: int | None = None
    candidates: int = 1
    derived_count: int = 0
    constraint_count: int = 0


class _Gen:
    """Draws pieces of one space; `draw` is Hypothesis's draw function."""

    def __init__(self, draw, state: _State, max_candidates: int, c_compatible: bool):
        self.draw = draw
        self.s = state
        self.max_candidates = max_candidates
        self.c_compatible = c_compatible
        self.defining_helper = False
        self.setting_leaves = 0.15   # how often a leaf is the setting (spaces(swept=True): more often)
        self.categories = CATEGORIES  # categorical values drawn (spaces(odd=...): ODD_CATEGORIES too)
        self.closures = True         # closure parameters drawn (spaces(swept=True): none, see there)

    # ---------------------------------------------------------------- small helpers
    def boolean(self, p_true: float = 0.5) -> bool:
        return self.draw(st.integers(0, 99)) < p_true * 100

    def pick(self, items):
        return self.draw(st.sampled_from(list(items)))

    def small(self, lo=-4, hi=6) -> int:
        return self.draw(st.integers(lo, hi))

    def nonzero(self, lo=-3, hi=3) -> int:
        return self.draw(st.integers(lo, hi).filter(lambda v: v != 0))

    # ---------------------------------------------------------------- integer expressions
    def leaf(self) -> E:
        if self.s.ints and self.boolean(0.7):
            name = self.pick(self.s.ints)
            lo, hi = self.s.ints[name]
            return E(name, lo, hi, atom=True, static=name in self.s.static)
        if self.s.settings and self.boolean(self.setting_leaves):
            name = self.pick(self.s.settings)
            v = self.s.settings[name]
            return E(name, v, v, atom=True, static=True)
        return _const(self.small())

    def name_leaf(self) -> E | None:
        """A leaf that is not known at load time (a parameter or derived value), if any."""
        names = [n for n in self.s.ints if n not in self.s.static]
        if not names:
            return None
        name = self.pick(names)
        return E(name, *self.s.ints[name], atom=True)

    def dynamic(self, e: E) -> E:
        """`e`, or a parameter instead when `e` would be computed when the file is loaded
        (module-level Python would then divide constants, or negate a bool with `~`)."""
        if e.static:
            return self.name_leaf() or e
        return e

    def int_expr(self, depth: int = 2, py: bool = False) -> E:
        """An integer expression; `py`: inside a function body (Python `x if c else y`)."""
        if depth <= 0 or self.boolean(0.3):
            return self.leaf()
        op = self.pick(["+", "-", "*", "//", "%", "neg", "abs", "min", "max", "**", "ite", "cmp", "helper"]
                       + (["andor"] if py else []))
        sub = lambda: self.int_expr(depth - 1, py)  # noqa: E731
        if op == "helper":
            return self.helper_call(depth - 1, py)
        if op == "andor":  # Python's `a or b` / `a and b` as a value: one of the operands, not a bool
            parts = [sub() for _ in range(self.draw(st.integers(2, 3)))]
            word = self.pick(["and", "or"])
            return E("(" + f" {word} ".join(p.paren() for p in parts) + ")", *_hull(*parts), atom=True)
        if op in ("+", "-", "*"):
            a, b = sub(), sub()
            apply = {"+": operator.add, "-": operator.sub, "*": operator.mul}[op]
            corners = [apply(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
            return E(f"{a.paren()} {op} {b.paren()}", min(corners), max(corners), static=a.static and b.static)
        if op in ("//", "%"):
            a, b = sub(), self.divisor(depth - 1, py)
            lo, hi = _floordiv_interval(a, b) if op == "//" else _mod_interval(a, b)
            text = f"{a.paren()} {op} {b.paren()}"
            if b.lo <= 0 <= b.hi and b.lo != b.hi and self.boolean(0.3):  # guarded: never undefined
                alt = self.small()
                cond = f"{b.paren()} == 0"
                text = f"{alt} if {cond} else {text}" if py else f"if_then_else({cond}, {alt}, {text})"
                lo, hi = min(lo, alt), max(hi, alt)
            return E(text, lo, hi, static=a.static and b.static)
        if op == "neg":
            a = sub()
            return E(f"-{a.paren()}", -a.hi, -a.lo, static=a.static)
        if op == "abs":
            a = sub()
            lo = 0 if a.lo <= 0 <= a.hi else min(abs(a.lo), abs(a.hi))
            return E(f"abs({a.text})", lo, max(abs(a.lo), abs(a.hi)), atom=True, static=a.static)
        if op in ("min", "max"):
            args = [sub() for _ in range(self.draw(st.integers(2, 3)))]
            fn = min if op == "min" else max
            return E(f"{op}({', '.join(a.text for a in args)})", fn(a.lo for a in args),
                     fn(a.hi for a in args), atom=True, static=all(a.static for a in args))
        if op == "**":
            a = self.leaf()
            k = self.draw(st.integers(0, 3))
            return E(f"{a.paren()} ** {k}", *_pow_interval(a, k), static=a.static)
        if op == "ite":
            cond = self.condition(depth - 1, py=py)
            a, b = sub(), sub()
            if py and self.boolean(0.5):
                return E(f"{a.paren()} if {cond} else {b.paren()}", *_hull(a, b))
            return E(f"if_then_else({cond}, {a.text}, {b.text})", *_hull(a, b), atom=True)
        a, b = sub(), sub()  # a comparison used as the value 0/1
        c = self.draw(st.integers(0, 3))
        return E(f"({a.paren()} {self.pick(_CMP)} {b.paren()}) + {c}", c, c + 1, static=a.static and b.static)

    def divisor(self, depth: int, py: bool) -> E:
        """A divisor: a non-zero constant (often negative), or an expression that can be 0, now and
        then one that is always 0 without showing it (`min(x, lo) - lo`, x >= lo): the bounds of
        the division are then empty, those of an always-undefined value, and a division by that
        value must still be flagged, not run (the C printer took an empty divisor for a proven
        non-zero one and wrote C's `/`: SIGFPE at -O0)."""
        if self.boolean(0.4):
            return _const(self.nonzero(-4, 4))
        x = self.name_leaf()
        if x is not None and not x.static and self.boolean(0.05):
            return E(f"min({x.text}, {x.lo}) - {x.lo}" if x.lo >= 0 else f"min({x.text}, {x.lo}) + {-x.lo}", 0, 0)
        if x is not None and self.boolean(0.7):
            c = self.draw(st.integers(x.lo, x.hi)) if x.lo <= x.hi else 0
            return E(f"{x.text} - {c}" if c >= 0 else f"{x.text} + {-c}", x.lo - c, x.hi - c)
        e = self.int_expr(depth, py)
        if e.static and e.lo <= 0 <= e.hi:  # a constant 0 would divide at load time
            return _const(self.nonzero(-4, 4))
        return e

    # ---------------------------------------------------------------- conditions
    def condition(self, depth: int = 2, py: bool = False) -> str:
        """A boolean expression over parameters. Module level: `&`, `|`, `~` on parenthesised
        conditions; in a function body (`py`): `and`, `or`, `not`, chained comparisons."""
        dynamic_ints = any(n not in self.s.static for n in self.s.ints)
        kinds = []
        if dynamic_ints or py:
            kinds += ["cmp", "cmp", "cmp", "exact"]
        if self.s.cats:
            kinds += ["cat", "cat"] if not kinds else ["cat"]
        if self.s.rationals:
            kinds.append("rat")
        if self.s.bools:
            kinds.append("bool")
        if py and dynamic_ints:
            kinds.append("chain")
        if dynamic_ints or py or self.s.cats:
            kinds.append("in")
        if self.s.cats and dynamic_ints:
            kinds += ["string_vs_int", "string_vs_int"]
        if not kinds:  # nothing to compare yet (the first parameter's domain)
            return "True"
        if depth > 0:
            kinds += ["and", "or", "not"] + (["guard"] if dynamic_ints else [])
        if py and depth > 0 and (dynamic_ints or self.s.cats):
            kinds += ["truth", "truth"] if self.s.cats else ["truth"]
        kind = self.pick(kinds)
        if kind == "truth":
            return self.truth_test()
        sub = lambda: self.condition(depth - 1, py)  # noqa: E731
        if kind == "cmp":
            a, b = self.int_expr(1 if depth else 0, py), self.int_expr(1 if depth else 0, py)
            if not py:
                a = self.dynamic(a)
            if a.text == b.text:  # `x < x` is decided at once: compare with a constant instead
                b = _const(self.draw(st.integers(a.lo, a.hi)) if a.lo <= a.hi and a.hi - a.lo < 100 else 0)
            return f"{a.paren()} {self.pick(_CMP)} {b.paren()}"
        if kind == "cat":
            name = self.pick(self.s.cats)
            value = self.pick(sorted(set(self.s.cats[name]) | {"a", "ldg"}))
            return f"{name} {self.pick(['==', '!='])} {value!r}"
        if kind == "rat":
            r = self.pick(self.s.rationals)
            other = self.int_expr(1, py)
            if self.boolean(0.3):
                other = E(self.pick(self.s.rationals), 0, 0, atom=True)
            if self.boolean(0.5):
                return f"{r} {self.pick(_CMP)} {other.paren()}"
            return f"{other.paren()} {self.pick(_CMP)} {r}"
        if kind == "bool":
            return f"{self.pick(self.s.bools)} {self.pick(['==', '!='])} {self.pick([0, 1])}"
        if kind == "string_vs_int":
            return self.string_vs_int(py)
        if kind == "exact":
            return self.exact_comparison(py)
        if kind == "in":
            return self.membership_test(py)
        if kind == "chain":
            a, b, c = (self.int_expr(0, py) for _ in range(3))
            return f"{a.paren()} {self.pick(['<', '<='])} {b.paren()} {self.pick(['<', '<=', '!='])} {c.paren()}"
        if kind == "guard":  # a short-circuit guard around a division that may be undefined
            x = self.name_leaf()
            c = self.draw(st.integers(x.lo, x.hi)) if x.lo <= x.hi else 0
            a = self.int_expr(1, py)
            body = f"{a.paren()} {self.pick(['//', '%', '/'])} ({x.text} - {c}) {self.pick(_CMP)} {self.small(-2, 3)}"
            if self.boolean(0.5):
                return f"{x.text} == {c} or {body}" if py else f"({x.text} == {c}) | ({body})"
            return f"{x.text} != {c} and {body}" if py else f"({x.text} != {c}) & ({body})"
        if kind == "not":
            return f"not ({sub()})" if py else f"~({sub()})"
        word = ("and" if kind == "and" else "or") if py else ("&" if kind == "and" else "|")
        parts = [sub() for _ in range(self.draw(st.integers(2, 3)))]
        return f" {word} ".join(f"({p})" for p in parts)

    def truth_test(self) -> str:
        """A value used as a condition in a function body (Python's truth: an integer is true when
        not 0, a string when not ''), or a string `or`/`and` compared as a value."""
        dynamic = [n for n in self.s.ints if n not in self.s.static]
        if self.s.cats and (not dynamic or self.boolean(0.6)):
            name = self.pick(self.s.cats)
            other = self.pick(sorted(set(self.s.cats[name]) | {"", "a"}))
            return self.pick([name, f"not {name}", f"({name} if {self.condition(0, py=True)} else '')",
                              f"({name} or {other!r}) == {other!r}", f"({name} and {other!r}) != {other!r}"])
        value = self.int_expr(1, py=True)
        return self.pick([value.paren(), f"not {value.paren()}"])

    def lenient(self, polarity: str, depth: int, py: bool = False) -> str:
        """A constraint's condition, biased so that it keeps most candidates (random conditions
        would leave most spaces empty): `require` prefers `or`, `reject_if` prefers `and`."""
        if depth == 0 or self.boolean(0.4):
            return self.condition(depth, py)
        word = ("or" if polarity == "require" else "and") if py else ("|" if polarity == "require" else "&")
        parts = [self.condition(depth - 1, py) for _ in range(2)]
        return f" {word} ".join(f"({p})" for p in parts)

    def exact_comparison(self, py: bool) -> str:
        """`p / q OP r` or `p / q OP r / s`: exact rational comparison (divisors may be 0)."""
        a = self.int_expr(1, py)
        if not py:
            a = self.dynamic(a)  # a constant quotient would be a Python float at load time
        b = self.divisor(0, py)
        left = f"{a.paren()} / {b.paren()}"
        if self.boolean(0.5):
            c = self.int_expr(1, py)
            if not py:
                c = self.dynamic(c)
            right = f"{c.paren()} / {self.divisor(0, py).paren()}"
        else:
            right = self.int_expr(1, py).paren()
        return f"{left} {self.pick(_CMP)} {right}"

    # ---------------------------------------------------------------- Python forms lowered to IR
    def membership_test(self, py: bool) -> str:
        """`x in (..)`, `x not in [..]`, `x in {..}`, `x in range(a, b, k)`, or a categorical
        parameter in a tuple of strings; list items may be undefined (Python evaluates them all)."""
        op = self.pick(["in", "not in"])
        # module level without a parameter to test, `0 in ()` would be a plain bool (and `~` of it -1)
        only_categorical = not py and all(n in self.s.static for n in self.s.ints)
        if self.s.cats and (only_categorical or self.boolean(0.3)):
            name = self.pick(self.s.cats)
            values = self.draw(st.lists(st.sampled_from(sorted(set(self.s.cats[name]) | {"a", "ldg"})),
                                        min_size=1, max_size=3))
            return f"{name} {op} {self._container([repr(v) for v in values], hashable=True)}"
        x = self.int_expr(1, py)
        if not py:
            x = self.dynamic(x)
        if self.boolean(0.25):
            start = self.small()
            return f"{x.paren()} {op} range({start}, {start + self.small(-6, 8)}, {self.nonzero(-3, 3)})"
        items = [_const(self.small()) if self.boolean(0.6) else self.int_expr(0, py)
                 for _ in range(self.draw(st.integers(0, 4)))]
        if items and self.boolean(0.2):
            items.append(E(f"{self.leaf().paren()} // {self.divisor(0, py).paren()}", 0, 0))
        # a set literal at module level must hold plain values (a parameter is not hashable)
        return f"{x.paren()} {op} {self._container([i.text for i in items], hashable=py or all(i.static for i in items))}"

    def _container(self, items: list[str], hashable: bool) -> str:
        """A tuple, list or (when every item is a plain constant) set literal of `items`."""
        kinds = ["tuple", "list"] + (["set"] if hashable and items else [])
        kind = self.pick(kinds)
        if kind == "set":
            return "{" + ", ".join(items) + "}"
        if kind == "list":
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def body_algebra(self, cap: int):
        """Iterator algebra inside an `@iterator` body: a range and a value list (bare or in
        `iterator(...)`) joined by `|`, `&` or `-`: (text, lo, hi, size)."""
        t1, lo1, hi1, s1 = self.range_domain(max(1, cap // 2))
        t2, lo2, hi2, s2 = self.values_domain(max(1, cap // 2))
        t2 = t2 if self.boolean(0.5) else f"iterator({t2})"
        op = self.pick(["|", "&", "-"])
        text = f"{t1} {op} {t2}" if self.boolean(0.5) else f"{t2} {op} {t1}"
        return text, min(lo1, lo2), max(hi1, hi2), s1 + s2

    def helper_call(self, depth: int, py: bool) -> E:
        """A call of the space's helper function (a plain `def`, defined at its first call)."""
        if self.defining_helper:
            return self.leaf()
        if self.s.helper_arity is None:
            self.s.helper_arity = self.draw(st.integers(1, 2))
        arity = self.s.helper_arity
        args = [self.int_expr(max(0, depth), py) for _ in range(arity)]
        if not py:  # at module level a call with plain values would run as Python, not be inlined
            args[0] = self.dynamic(args[0])
            if all(a.static for a in args):
                return self.leaf()
        if self.s.helper is None:
            self.s.helper = self.define_helper(arity)
        name, arity, lo, hi = self.s.helper
        return E(f"{name}({', '.join(a.text for a in args)})", lo, hi, atom=True)

    def define_helper(self, arity: int) -> tuple:
        """`def h(a[, b])`: clamps its arguments (so the result's interval is known), may branch
        with `if`, and returns an integer expression of them."""
        saved = (self.s.ints, self.s.static, self.s.cats, self.s.rationals, self.s.bools)
        names = ["a", "b"][:arity]
        bounds = {n: tuple(sorted((self.small(), self.small()))) for n in names}
        self.s.ints, self.s.static, self.s.cats, self.s.rationals, self.s.bools = dict(bounds), set(), {}, [], []
        self.defining_helper = True
        try:
            lines = [f"def h({', '.join(names)}):"]
            lines += [f"    {n} = min(max({n}, {lo}), {hi})" for n, (lo, hi) in bounds.items()]
            results = []
            if self.boolean(0.6):
                e = self.int_expr(1, py=True)
                lines += [f"    if {self.condition(1, py=True)}:", f"        return {e.text}"]
                results.append(e)
            e = self.int_expr(self.draw(st.integers(1, 2)), py=True)
            lines.append(f"    return {e.text}")
            results.append(e)
        finally:
            self.s.ints, self.s.static, self.s.cats, self.s.rationals, self.s.bools = saved
            self.defining_helper = False
        self.s.blocks.append(_Block("\n".join(lines)))
        return ("h", arity, *_hull(*results))

    # ---------------------------------------------------------------- parameters
    def cap(self) -> int:
        return max(1, min(_MAX_CAP, self.max_candidates // self.s.candidates))

    def add_param(self, index: int) -> None:
        name = f"p{index}"
        cap = self.cap()
        kinds = ["range", "range", "values", "deferred", "closure", "algebra"]
        if index > 0 or self.boolean(0.5):
            kinds.append("categorical")
        kinds += self.kind_mixing_params()
        if not self.closures:
            kinds = [k for k in kinds if "closure" not in k]
        kind = self.pick(kinds)
        movable = False
        if kind in ("string_closure", "categorical_closure", "sparse_closure"):
            getattr(self, kind)(name, cap)
            return
        if kind == "categorical":
            values = self.draw(st.lists(st.sampled_from(self.categories), min_size=1, max_size=min(cap, 4)))
            text = f"{name} = iterator({values!r})"
            self.s.cats[name] = list(dict.fromkeys(values))
            self.s.candidates *= len(self.s.cats[name])
            self.s.blocks.append(_Block(text))
            self.s.params.append(name)
            return
        if kind == "range":
            text, lo, hi, size = self.range_domain(cap)
            text = f"{name} = {text}"
        elif kind == "values":
            text, lo, hi, size = self.values_domain(cap)
            text = f"{name} = iterator({text})"
        elif kind == "algebra":
            t1, lo1, hi1, s1 = self.range_domain(max(1, cap // 2))
            t2, lo2, hi2, s2 = self.values_domain(max(1, cap // 2))
            op = self.pick(["|", "&", "-", "|"])
            t2 = f"iterator({t2})"
            text = f"{name} = {t1} {op} {t2}" if self.boolean(0.5) else f"{name} = {t2} {op} {t1}"
            lo, hi, size = (min(lo1, lo2), max(hi1, hi2), s1 + s2)
        elif kind == "deferred":
            text, lo, hi, size = self.deferred(name, cap)
            movable = True
        else:
            text, lo, hi, size = self.closure(name, cap)
            movable = True
        self.s.ints[name] = (lo, hi) if lo <= hi else (0, 0)
        self.s.candidates *= max(1, size)
        self.s.params.append(name)
        self.s.blocks.append(_Block(text, movable=movable))

    def bound_expr(self) -> E:
        return self.int_expr(self.draw(st.integers(0, 1)))

    def step(self) -> E:
        if self.boolean(0.75) or not self.s.ints:
            return _const(self.nonzero(-3, 3))
        # a step that depends on a parameter but is never 0
        x = self.pick(self.s.ints)
        k = self.draw(st.integers(2, 3))
        if self.boolean(0.5):
            return E(f"abs({x}) % {k} + 1", 1, k)
        return E(f"-(abs({x}) % {k} + 1)", -k, -1)

    def range_domain(self, cap: int):
        """`range(start, stop[, step])` with at most `cap` values: (text, lo, hi, size)."""
        start = self.bound_expr() if self.boolean(0.85) else None
        step = self.step() if start is not None and self.boolean(0.5) else _const(1)
        start_e = start or _const(0)
        if start is None and self.boolean(0.7):
            stop = _const(self.draw(st.integers(0, cap)))
        elif start is not None and self.boolean(0.7):  # stop relative to start: rarely empty
            k = (self.draw(st.integers(1, cap)) if self.boolean(0.9) else 0) * (1 if step.lo > 0 else -1)
            stop = E(f"{start.paren()} + {k}" if k >= 0 else f"{start.paren()} - {-k}",
                     start.lo + k, start.hi + k, static=start.static)
        else:
            stop = self.bound_expr()
        if step.lo > 0:
            size = max(0, math.ceil((stop.hi - start_e.lo) / step.lo))
            if size > cap:
                reach = cap * step.lo
                stop = E(f"min({stop.text}, {start_e.paren()} + {reach})", min(stop.lo, start_e.lo + reach),
                         min(stop.hi, start_e.hi + reach), atom=True)
                size = cap
            lo, hi = start_e.lo, stop.hi - 1
        else:
            size = max(0, math.ceil((start_e.hi - stop.lo) / -step.hi))
            if size > cap:
                reach = cap * -step.hi
                stop = E(f"max({stop.text}, {start_e.paren()} - {reach})", max(stop.lo, start_e.lo - reach),
                         max(stop.hi, start_e.hi - reach), atom=True)
                size = cap
            lo, hi = stop.lo + 1, start_e.hi
        if start is None:
            text = f"range({stop.text})"
        elif step.text == "1" and self.boolean(0.7):
            text = f"range({start.text}, {stop.text})"
        else:
            text = f"range({start_e.text}, {stop.text}, {step.text})"
        return text, lo, hi, size

    def values_domain(self, cap: int):
        n = self.draw(st.integers(1, max(1, min(cap, 5))))
        items = [self.int_expr(self.draw(st.integers(0, 1))) if self.boolean(0.3) else _const(self.small())
                 for _ in range(n)]
        if self.boolean(0.3):  # a duplicate, dropped keeping the first
            items.append(self.pick(items))
        lo, hi = _hull(*items)
        return "[" + ", ".join(i.text for i in items) + "]", lo, hi, n

    def deferred(self, name: str, cap: int):
        """An `@iterator` function with if/elif/else over earlier parameters."""
        ints = list(self.s.ints)
        args = self.draw(st.lists(st.sampled_from(ints), unique=True, max_size=3)) if ints else []
        lines = ["@iterator", f"def {name}({', '.join(args)}):"]
        local = None
        if ints and self.boolean(0.3):
            a = self.int_expr(1)
            local = ("t", a)
            lines.append(f"    t = {a.text}")
            self.s.ints["t"] = (a.lo, a.hi)
        branches = self.draw(st.integers(1, 3))
        lo, hi, size = None, None, 0
        try:
            for i in range(branches):
                text, blo, bhi, bsize = self.branch_domain(cap)
                lo = blo if lo is None else min(lo, blo)
                hi = bhi if hi is None else max(hi, bhi)
                size = max(size, bsize)
                if i == branches - 1:
                    lines.append(f"    return {text}")
                else:
                    word = "if" if i == 0 else "elif"
                    lines.append(f"    {word} {self.condition(1, py=True)}:")
                    lines.append(f"        return {text}")
        finally:
            if local:
                del self.s.ints["t"]
        return "\n".join(lines), lo, hi, size

    def branch_domain(self, cap: int):
        kind = self.pick(["range", "values", "single", "algebra"])
        if kind == "algebra":
            return self.body_algebra(cap)
        if kind == "range":
            return self.range_domain(cap)
        if kind == "values":
            text, lo, hi, n = self.values_domain(cap)
            return f"iterator({text})", lo, hi, n
        e = self.int_expr(1)
        return e.text, e.lo, e.hi, 1

    def closure(self, name: str, cap: int):
        """A generator function (closure iterator), run in Python for each combination of its inputs."""
        ints = list(self.s.ints)
        args = self.draw(st.lists(st.sampled_from(ints), unique=True, max_size=2)) if ints else []
        free = [x for x in ints if x not in args]
        reads = args + ([self.pick(free)] if free and self.boolean(0.3) else [])  # free names are inputs too
        start = self.small(-4, 3)
        stop = start + self.draw(st.integers(1, cap))
        lines = ["@iterator", f"def {name}({', '.join(args)}):"]
        form = self.pick(["for", "while", "fixed"])
        if form == "for" or not reads and form == "while":
            lines.append(f"    for v in range({start}, {stop}):")
            if reads:
                x = self.pick(reads)
                m = self.draw(st.integers(2, 3))
                lines.append(f"        if (v * {x} + {self.small(-2, 2)}) % {m} != {self.draw(st.integers(0, m - 1))}:")
                lines.append("            yield v")
            else:
                lines.append("        yield v")
            lo, hi, size = start, max(start, stop - 1), stop - start
        elif form == "while":
            x = self.pick(reads)
            lines += [f"    v = {start}", f"    while v < {stop}:", "        yield v",
                      f"        v += abs({x}) % 3 + 1"]
            lo, hi, size = start, max(start, stop - 1), stop - start
        else:
            values = [self.small() for _ in range(self.draw(st.integers(0 if self.boolean(0.1) else 1, min(cap, 4))))]
            if reads:
                x = self.pick(reads)
                lines.append(f"    if {x} > {self.small(-2, 3)}:")
                lines.append(f"        yield {x}")
                lo, hi = self.s.ints[x]
            else:
                lo, hi = 0, 0
            lines += [f"    yield {v}" for v in values] or ["    return", "    yield 0"]
            lo = min([lo, *values])
            hi = max([hi, *values])
            size = len(values) + (1 if reads else 0)
        return "\n".join(lines), lo, hi, size

    # ---------------------------------------------------------------- strings and integers together
    def kind_mixing_params(self) -> list[str]:
        """Parameter kinds that put strings and integers side by side (closures over strings,
        closures yielding strings, closures over values far apart)."""
        kinds = ["string_closure", "string_closure", "sparse_closure"]
        if self.s.cats:
            kinds += ["categorical_closure", "categorical_closure", "categorical_closure"]
        return kinds

    def string_vs_int(self, py: bool) -> str:
        """`==`/`!=` between a categorical value and an integer: never equal, as in Python."""
        cat = self.pick(self.s.cats)
        other = self.dynamic(self.int_expr(1, py)) if self.boolean(0.7) else _const(self.small(0, 2))
        op = self.pick(["==", "!="])
        return f"{cat} {op} {other.paren()}" if self.boolean(0.5) else f"{other.paren()} {op} {cat}"

    def _add_closure_param(self, name: str, lines: list[str], lo: int, hi: int, size: int) -> None:
        self.s.ints[name] = (lo, hi) if lo <= hi else (0, 0)
        self.s.candidates *= max(1, size)
        self.s.params.append(name)
        self.s.blocks.append(_Block("\n".join(lines), movable=True))

    def categorical_closure(self, name: str, cap: int) -> None:
        """A closure whose input is a categorical parameter: it must receive the strings."""
        cat = self.pick(self.s.cats)
        ints = list(self.s.ints)
        x = self.pick(ints) if ints and self.boolean(0.4) else None
        value = self.pick(sorted(set(self.s.cats[cat]) | {"a"}))
        lines = ["@iterator", f"def {name}({cat}{', ' + x if x else ''}):"]
        lo, hi, size = 10 ** 9, -10 ** 9, 0
        for word in (f"if {cat} == {value!r}:", "else:"):
            lines.append(f"    {word}")
            values = [self.small() for _ in range(self.draw(st.integers(1, min(cap, 3))))]
            lines += [f"        yield {v}" for v in values]
            if self.boolean(0.4):  # a value computed from the string itself
                lines.append(f"        yield len({cat})")
                values.append(1)
                hi = max(hi, max(len(c) for c in self.s.cats[cat]))
            if x is not None and self.boolean(0.5):
                lines.append(f"        yield {x}")
                lo, hi = min(lo, self.s.ints[x][0]), max(hi, self.s.ints[x][1])
                values.append(0)
            lo, hi, size = min(lo, *values), max(hi, *values), max(size, len(values))
        self._add_closure_param(name, lines, lo, hi, size)

    def string_closure(self, name: str, cap: int) -> None:
        """A closure that yields strings: a categorical parameter (other closures may read it)."""
        first = self.draw(st.lists(st.sampled_from(self.categories), min_size=1, max_size=min(cap, 3), unique=True))
        lines = ["@iterator"]
        reads = list(self.s.cats) + list(self.s.ints)
        x = self.pick(reads) if reads and self.boolean(0.6) else None
        if x is None:
            lines += [f"def {name}():"] + [f"    yield {v!r}" for v in first]
            values = first
        else:
            second = self.draw(st.lists(st.sampled_from(self.categories), min_size=0, max_size=min(cap, 3), unique=True))
            test = f"{x} != 'a'" if x in self.s.cats else f"{x} > {self.small(-2, 3)}"
            lines += [f"def {name}({x}):", f"    if {test}:"] + [f"        yield {v!r}" for v in first]
            lines += ["    else:"] + ([f"        yield {v!r}" for v in second] or ["        return"])
            values = list(dict.fromkeys(first + second))
        self.s.cats[name] = values
        self.s.candidates *= len(values)
        self.s.params.append(name)
        self.s.blocks.append(_Block("\n".join(lines), movable=True))

    def sparse_closure(self, name: str, cap: int) -> None:
        """A value list whose values are far apart (only its closure reads it), and that closure:
        tabulated over the values, not over the interval between them."""
        sparse = f"q{name[1:]}"
        values = self.draw(st.lists(st.sampled_from([-1_000_000, -65_537, 0, 7, 100_003, 1_000_000, 2 ** 40]),
                                    min_size=1, max_size=min(3, cap), unique=True))
        self.s.blocks.append(_Block(f"{sparse} = iterator({values!r})"))
        self.s.params.append(sparse)
        self.s.candidates *= len(values)
        m = self.draw(st.integers(2, 5))
        lines = ["@iterator", f"def {name}({sparse}):", f"    yield {sparse} % {m}"]
        if self.boolean(0.5):
            lines += [f"    if {sparse} > {self.small(-2, 10)}:", "        yield -1"]
        self._add_closure_param(name, lines, -1, m - 1, 2)

    # ---------------------------------------------------------------- orders
    def order_param(self, name: str, cap: int) -> None:
        """An order parameter (permutation, interleaving or sequence of 2-3 items, at most `cap`
        orders), an integer derived from it that later expressions may use (its length, or the
        position of an item, -1 when a sequence lacks it), and a constraint on it."""
        a, b, c = (f"{name}{x}" for x in "abc")
        options = [(f"permutation([{a!r}, {b!r}])", 2, (a, b), False),
                   (f"permutation([{a!r}, {b!r}, {c!r}])", 6, (a, b, c), False),
                   (f"interleave([{a!r}, {b!r}], [{c!r}])", 3, (a, b, c), False),
                   (f"interleave([{a!r}], [{b!r}, {c!r}])", 3, (a, b, c), False),
                   (f"sequence([{a!r}, {b!r}], 0, 2)", 5, (a, b), True),
                   (f"sequence([{a!r}, {b!r}, {c!r}], 1, 1)", 3, (a, b, c), True),
                   (f"sequence([{a!r}, {b!r}, {c!r}], 0, 1)", 4, (a, b, c), True),
                   (f"sequence([{a!r}, {b!r}], 1, 2)", 4, (a, b), True)]
        text, size, items, optional = self.pick([o for o in options if o[1] <= max(cap, 2)])
        self.s.blocks.append(_Block(f"{name} = {text}"))
        self.s.params.append(name)
        self.s.candidates *= size
        x = self.pick(items)
        y = self.pick([i for i in items if i != x])
        derived = f"{name}_i"
        if self.boolean(0.4):
            self.s.blocks.append(_Block(f"{derived} = len({name})"))
            self.s.ints[derived] = (0, len(items))
        elif optional:
            self.s.blocks.append(_Block(f"{derived} = if_then_else(contains({name}, {x!r}), "
                                        f"position({name}, {x!r}), -1)"))
            self.s.ints[derived] = (-1, len(items) - 1)
        else:
            self.s.blocks.append(_Block(f"{derived} = position({name}, {x!r})"))
            self.s.ints[derived] = (0, len(items) - 1)
        rule = self.pick(["before", "first", "last", "contains", "position"])
        if rule == "before":
            self.s.blocks.append(_Block(f"{self.pick(['require', 'reject_if'])}(before({name}, {x!r}, {y!r}))"))
        elif rule == "first":  # undefined on an empty sequence
            self.s.blocks.append(_Block(f"reject_if(contains({name}, {x!r}) & (first({name}) != {x!r}))"))
        elif rule == "last":
            self.s.blocks.append(_Block(f"require(last({name}) != {x!r})"))
        elif rule == "contains":
            self.s.blocks.append(_Block(f"require(contains({name}, {x!r}) | ({derived} > 0))"))
        else:  # position of an item a sequence may lack: undefined there
            bound = self.leaf()
            self.s.blocks.append(_Block(f"@require\ndef {name}_rule({name}):\n"
                                        f"    return position({name}, {x!r}) <= {bound.text}"))

    # ---------------------------------------------------------------- derived values
    def add_derived(self) -> None:
        i = self.s.derived_count
        self.s.derived_count += 1
        kind = self.pick(["int", "int", "int", "bool", "rational"] + (["cat"] if self.s.cats else []))
        if kind == "bool":
            name = f"b{i}"
            text = self.condition(1)
            self.s.bools.append(name)
            self.s.blocks.append(_Block(f"{name} = {text}"))
            return
        if kind == "rational":
            name = f"r{i}"
            a = self.dynamic(self.int_expr(1))
            if a.static:  # no parameter to divide: a constant quotient would be a Python float
                kind = "int"
            else:
                b = self.divisor(1, False)
                if not self.c_compatible and self.boolean(0.3):  # `/` outside a comparison: C declines
                    text = f"{a.paren()} / {b.paren()} + {self.small(0, 2)}"
                else:
                    text = f"{a.paren()} / {b.paren()}"
                self.s.rationals.append(name)
                self.s.blocks.append(_Block(f"{name} = {text}"))
                return
        name = f"d{i}"
        if kind == "cat":
            cat = self.pick(self.s.cats)
            a, b = self.int_expr(1), self.int_expr(1)
            e = E(f"if_then_else({cat} == {self.pick(self.s.cats[cat])!r}, {a.text}, {b.text})", *_hull(a, b))
        else:
            e = self.int_expr(self.draw(st.integers(1, 3)))
        self.s.blocks.append(_Block(f"{name} = {e.text}"))
        lo, hi, static = e.lo, e.hi, e.static
        if self.boolean(0.15):  # reassignment: the name now means the new expression
            f = self.int_expr(1)
            self.s.blocks.append(_Block(f"{name} = {name} + {f.paren()}"))
            lo, hi, static = lo + f.lo, hi + f.hi, static and f.static
        if self.s.settings and self.boolean(0.2):  # module-level `if` on a setting
            setting = self.pick(self.s.settings)
            k = self.draw(st.integers(-2, 2))
            self.s.blocks.append(_Block(f"if {setting} > {self.small(0, 3)}:\n    {name} = {name} * {k}"))
            lo, hi = min(lo, lo * k, hi * k, 0), max(hi, lo * k, hi * k, 0)
        self.s.ints[name] = (lo, hi)
        if static:
            self.s.static.add(name)

    def add_huge(self) -> None:
        """A derived value and a constraint whose values pass 2**60 (`HUGE`): the reference
        computes with exact Python integers; CP-SAT (past 2**60) and C (past its 64-bit types)
        must refuse the expression by name, never overflow or approximate (a `min` over such a
        value in a performance model once crashed OR-Tools; a `cost` drawn after may read it).
        No parameter is added: the candidates stay as they were."""
        x = self.name_leaf()
        if x is None:
            return
        big, e = self.pick(HUGE), self.int_expr(1)
        name = f"h{self.s.derived_count}"
        self.s.derived_count += 1
        self.s.blocks.append(_Block(f"{name} = min({x.paren()} * {big}, {e.paren()} + {big})"))
        self.s.blocks.append(_Block(f"require({name} {self.pick(_CMP)} {x.paren()} * {big} - {self.small()})"))
        products = sorted((x.lo * big, x.hi * big))
        self.s.ints[name] = (min(products[0], e.lo + big), min(products[1], e.hi + big))   # a cost may read it

    # ---------------------------------------------------------------- wide block
    def cost_expr(self, depth: int = 3) -> str:
        """A performance model for `cost(...)`: integer expressions with every
        operator, exact fractions (`a / b`, possibly undefined where b is 0), `min`/`max` of
        terms (a roofline's shape), and branches on a categorical parameter."""
        if depth <= 0 or self.boolean(0.2):
            return self.int_expr(2).text
        kind = self.pick(["int", "frac", "frac", "max", "min", "sum", "cat" if self.s.cats else "ite"])
        sub = lambda: self.cost_expr(depth - 1)  # noqa: E731
        if kind == "int":
            return self.int_expr(3).text
        if kind == "frac":  # module-level Python would divide two constants into a float
            numerator = self.dynamic(self.int_expr(2))
            if numerator.static:
                return numerator.text
            return f"({numerator.paren()} / {self.divisor(1, False).paren()})"
        if kind in ("max", "min"):
            return f"{kind}({', '.join(sub() for _ in range(self.draw(st.integers(2, 3))))})"
        if kind == "sum":
            return f"({sub()} + {sub()})"
        if kind == "cat":
            name = self.pick(self.s.cats)
            return f"if_then_else({name} == {self.pick(self.s.cats[name])!r}, {sub()}, {sub()})"
        return f"if_then_else({self.condition(1)}, {sub()}, {sub()})"

    def add_wide_block(self) -> None:
        """Parameters nothing depends on (the C counting nest multiplies their domain sizes in),
        last in the file so that their loops are innermost: at least 150**9 > 2**64 rows for
        every valid assignment of the others. Not registered as names: nothing may use them."""
        starts = [name for name, (lo, hi) in self.s.ints.items() if name in self.s.params]
        n = self.draw(st.integers(9, 11))
        lines = []
        for k in range(n):
            width, step = self.draw(st.integers(150, 2000)), self.draw(st.sampled_from([1, 1, 1, 3, -2]))
            start = self.pick(starts) if starts and self.boolean(0.4) else str(self.small(-5, 5))
            stop = f"{start} + {width * step}" if start[0].isalpha() else str(int(start) + width * step)
            lines.append(f"wide{k} = range({start}, {stop}" + (f", {step})" if step != 1 else ")"))
        self.s.blocks.append(_Block("\n".join(lines)))

    # ---------------------------------------------------------------- product equalities
    def product_domain(self, name: str, cap: int, nonzero: bool):
        """A domain for a factor of a product equality: a range over negatives and positives with
        a step of either sign, or a value list (duplicates, expressions); without 0 where
        `nonzero` (so that the C plan solves the other factor). (text, lo, hi, size)."""
        size = self.draw(st.integers(1, max(1, cap)))
        if self.boolean(0.3):
            pool = range(-12, 13) if not nonzero else self.pick([range(1, 13), range(-12, 0)])
            items = [_const(v) for v in self.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=size))]
            x = self.name_leaf()
            if x is not None and self.boolean(0.3) and (not nonzero or x.lo > 0 and pool[0] > 0 or x.hi < 0 and pool[0] < 0):
                items.append(x)
            lo, hi = _hull(*items)
            return f"iterator([{', '.join(i.text for i in items)}])", lo, hi, len(items)
        step = self.pick([1, 1, 1, 2, 3, -1, -2])
        start = self.draw(st.integers(-9, 9))
        last = start + (size - 1) * step
        if nonzero and min(start, last) <= 0 <= max(start, last):   # all on one side of 0
            shift = (1 - min(start, last)) if self.boolean(0.5) else (-1 - max(start, last))
            start, last = start + shift, last + shift
        stop = start + size * step
        text = f"range({start}, {stop})" if step == 1 else f"range({start}, {stop}, {step})"
        if self.boolean(0.2) and step > 0 and self.s.ints:   # a stop read from an earlier name
            x = self.name_leaf()
            if x is not None:
                text = f"range({start}, min(max({x.text}, {start}), {last}) + 1)" if step == 1 else text
        return text, min(start, last), max(start, last), size

    def add_product(self, index: int) -> None:
        """Two parameters `a`, `b` (`p{index}`, `p{index + 1}`, defined one after the other)
        tied by `a * b == c`, `c == a * b` or `reject_if(a * b != c)`: the C plan solves `b`
        where `a` cannot be 0, and its counting and listing walks then loop `a` over the
        divisors of `c` only (`LoopNest.divisor_loop`). `c` is a constant, an earlier parameter
        or derived value (0 and negative values included), an expression that reads `a` (no
        divisor loop), or one that may be undefined; an undefined operation may also sit next to
        the solved level: a derived value or a constraint over `a`, or `b`'s domain, dividing
        by a value that can be 0 (the divisor loop must then keep the plain loop's tally)."""
        a, b = f"p{index}", f"p{index + 1}"
        cap = self.cap()
        text, lo, hi, size = self.product_domain(a, min(cap, 8), nonzero=self.boolean(0.85))
        lines = [f"{a} = {text}"]
        self.s.candidates *= max(1, size)
        self.s.params.append(a)
        x = self.name_leaf()
        kind = self.pick(["const", "name", "name", "expr", "reads_a", "undefined"] if x else ["const", "reads_a"])
        if kind == "const":
            c = _const(self.pick([0, 1, -1, 6, 12, -12, 24, 36, 60, self.small(-30, 30)]))
        elif kind == "name":
            c = x
        elif kind == "expr":
            k = self.draw(st.integers(1, 4))
            c = E(f"{x.paren()} * {k}", min(x.lo * k, x.hi * k), max(x.lo * k, x.hi * k))
        elif kind == "reads_a":
            k = self.small(-3, 6)
            c = E(f"{a} * {k} + {self.small()}", -100, 100)
        else:
            m = self.draw(st.integers(x.lo, x.hi)) if x.lo <= x.hi and x.hi - x.lo < 50 else 0
            c = E(f"24 // ({x.text} - {m})", -24, 24)
        self.s.ints[a] = (lo, hi)
        near = self.pick(["none", "none", "derived", "constraint", "domain"])
        k = self.draw(st.integers(lo, hi)) if lo <= hi else 0
        if near == "derived":
            lines.append(f"q{index} = {self.leaf().paren()} // ({a} - {k})")
        elif near == "constraint":
            lines.append(f"reject_if({self.leaf().paren()} % ({a} - {k}) == 1)")
        span = self.draw(st.integers(4, min(14, 4 + 2 * cap)))
        b_lo = self.draw(st.integers(-span, 1))
        step = self.pick([1, 1, 1, 2, -1])
        if step > 0:
            b_text = f"range({b_lo}, {b_lo + span}" + (f", {step})" if step != 1 else ")")
            b_range = (b_lo, b_lo + span - 1)
        else:
            b_text = f"range({b_lo + span}, {b_lo}, -1)"
            b_range = (b_lo + 1, b_lo + span)
        if near == "domain":
            b_text = f"range({b_lo}, {b_lo + span} + 6 // ({a} - {k}))"
            b_range = (b_lo - 6, b_lo + span + 5)
        elif self.boolean(0.2):
            b_text = f"iterator([{', '.join(str(v) for v in self.draw(st.lists(st.integers(-12, 12), min_size=1, max_size=6)))}])"
            b_range = (-12, 12)
        lines.append(f"{b} = {b_text}")
        self.s.candidates *= span
        self.s.params.append(b)
        self.s.ints[b] = b_range
        product = f"{a} * {b}" if self.boolean(0.7) else f"{b} * {a}"
        lines.append(self.pick([f"require({product} == {c.paren()})", f"require({c.paren()} == {product})",
                                f"reject_if({product} != {c.paren()})",
                                f"require(({product} == {c.paren()}) & ({b} != {self.small()}))"]))
        self.s.blocks.append(_Block("\n".join(lines)))

    # ---------------------------------------------------------------- constraints
    def add_constraint(self) -> None:
        i = self.s.constraint_count
        self.s.constraint_count += 1
        form = self.pick(["require", "reject_if", "require", "reject_if", "function", "function"])
        if form != "function":
            cond = self.lenient(form, self.draw(st.integers(0, 2)))
            x = self.name_leaf()
            if not self.c_compatible and x is not None and self.boolean(0.05):
                cond = f"{x.text} / 2 * 2 <= {self.int_expr(0).paren()}"  # `/` outside a comparison: C declines
            if self.boolean(0.3):
                self.s.blocks.append(_Block(f"c{i} = {form}({cond})"))
            else:
                self.s.blocks.append(_Block(f"{form}({cond})"))
            return
        word = self.pick(["require", "reject_if"])
        names = list(self.s.ints) + list(self.s.cats)
        args = self.draw(st.lists(st.sampled_from(names), unique=True, max_size=3)) if names else []
        lines = [f"@{word}", f"def c{i}({', '.join(args)}):"]
        local = False
        if self.s.ints and self.boolean(0.4):
            e = self.int_expr(1, py=True)
            lines.append(f"    t = {e.text}")
            self.s.ints["t"] = (e.lo, e.hi)
            local = True
        try:
            branches = self.draw(st.integers(1, 3))
            for b in range(branches):
                cond = self.lenient(word, self.draw(st.integers(0, 2)), py=True)
                if b == branches - 1:
                    lines.append(f"    return {cond}")
                else:
                    lines.append(f"    {'if' if b == 0 else 'elif'} {self.condition(1, py=True)}:")
                    lines.append(f"        return {cond}")
        finally:
            if local:
                del self.s.ints["t"]
        self.s.blocks.append(_Block("\n".join(lines), movable=True))

    # ---------------------------------------------------------------- switched rules
    def add_switched(self, index: int, switch: str) -> int:
        """A module-level `if` on a setting (the switch `switch`, or `S` against a constant) around
        parameters (named from `p{index}`), derived values and rules, sometimes with an `else`
        that adds others (or the same parameter names, defined otherwise): the settings then
        decide which rules and parameters the space has, which a sweep over them must follow
        point by point (another structure) and never mix into another point's walk. What the
        branches define is read only inside them; the number of parameter names used is returned."""
        s = self.s
        saved = (dict(s.ints), set(s.static), {k: list(v) for k, v in s.cats.items()}, list(s.rationals),
                 list(s.bools), list(s.params), s.candidates, s.blocks, s.helper, s.helper_arity)
        tests = [switch, f"{switch} == 1", f"not {switch}"]
        if "S" in s.settings:
            tests.append(f"S {self.pick(['>', '<=', '=='])} {self.small(-2, 3)}")
        lines = [f"if {self.pick(tests)}:"]
        used, candidates = 0, s.candidates
        for branch in range(1 + self.boolean(0.4)):
            if branch:
                lines.append("else:")
            s.ints, s.static, s.cats = dict(saved[0]), set(saved[1]), {k: list(v) for k, v in saved[2].items()}
            s.rationals, s.bools, s.params, s.candidates, s.blocks = list(saved[3]), list(saved[4]), list(saved[5]), \
                saved[6], []
            s.helper, s.helper_arity = saved[8], saved[9]   # a helper `def` in a branch exists only there
            kinds = self.draw(st.lists(st.sampled_from(["param", "derived", "constraint", "constraint"]),
                                       min_size=1, max_size=3))
            if "derived" in kinds and "constraint" not in kinds:   # a derived value alone changes no count
                kinds.append("constraint")
            added = 0
            for kind in kinds:
                if kind == "param":
                    self.add_param(index + added)
                    added += 1
                elif kind == "derived":
                    self.add_derived()
                else:
                    self.add_constraint()
            used, candidates = max(used, added), max(candidates, s.candidates)
            lines += ["    " + line for block in s.blocks for line in block.text.split("\n")]
        s.ints, s.static, s.cats, s.rationals, s.bools, s.params = saved[:6]
        s.candidates, s.blocks, s.helper, s.helper_arity = candidates, saved[7], saved[8], saved[9]
        s.blocks.append(_Block("\n".join(lines)))
        return used


@st.composite
def spaces(draw, *, max_parameters: int = 4, max_derived: int = 3, max_constraints: int = 3,
           max_candidates: int = 3000, c_compatible: bool = False, wide: float = 0.0,
           orders: float = 0.0, cost: float = 0.0, swept: bool = False, odd: float = 0.0,
           names: float = 0.0, products: float = 0.0, switches: float = 0.0, huge: float = 0.0) -> str:
    """A random space file (source text), small enough for the reference enumerator unless it
    ends in a wide block (probability `wide`; 0 by default, since a caller that lists or counts
    with the reference cannot take one: `validate` can, and the generated-space test asks for it).
    `orders`: the probability that a parameter is an order (`_Gen.order_param`; 0 by default,
    so the spaces drawn for other tests stay as they were).
    `cost`: the probability that the space declares a performance model, `cost(...)` (last line).
    `swept`: the space always has the setting `S`, and leaves read it more often (in ranges,
    derived values and constraints), for sweeps over its values (`tests/test_sweep_one_pass.py`);
    it has no closure parameters (Python functions, which a sweep counts point by point).
    `odd`: the probability that categorical values are also drawn from `ODD_CATEGORIES` (strings
    that test how values are written). `names`: the probability that a parameter's name is
    spelled, at its definition, its uses or both, in characters Python reads as the plain name
    (`respell`): the space means what it means with the plain spelling.
    `products`: the probability that two more parameters follow, tied by a product equality
    (`_Gen.add_product`: the C walks' divisor loops).
    `switches`: the probability that the space has a switch setting `T` (0 or 1) and one or two
    module-level `if`s on `T` or `S` around rules, derived values and parameters
    (`_Gen.add_switched`): settings that add or remove rules and parameters, for sweeps over
    `S` and `T` in every engine (`tests/test_sweep_switched.py`). 0 by default, so the spaces
    drawn for other tests stay as they were (the draws come after theirs).
    `huge`: the probability that the space ends in a derived value and a constraint whose values
    pass 2**60 (`_Gen.add_huge`); 0 by default (nothing drawn: other tests' spaces stay as they were)."""
    state = _State()
    gen = _Gen(draw, state, max_candidates, c_compatible)
    if odd and draw(st.integers(0, 99)) < odd * 100:
        gen.categories = CATEGORIES + ODD_CATEGORIES
    if swept:
        gen.setting_leaves, gen.closures = 0.4, False
    header = []
    if swept or draw(st.booleans()):
        value = draw(st.integers(-2, 4))
        state.settings["S"] = value
        header.append(f"S = {value}")
    n_params = draw(st.integers(1, max_parameters))
    if max_parameters > 1 and draw(st.booleans()):  # most spaces have a DAG to speak of
        n_params = max(n_params, 2)
    n_derived = draw(st.integers(0, max_derived))
    n_constraints = draw(st.integers(0, max_constraints))
    # interleave: parameters in order, derived values and constraints after their inputs
    plan = ["p"] * n_params + ["d"] * n_derived + ["c"] * n_constraints
    order = ["p"] + draw(st.permutations(plan[1:]))
    params = 0
    for item in order:
        if item == "p":
            if orders and draw(st.integers(0, 99)) < orders * 100:
                gen.order_param(f"p{params}", gen.cap())
            else:
                gen.add_param(params)
            params += 1
        elif item == "d":
            gen.add_derived()
        else:
            gen.add_constraint()
    if products and draw(st.integers(0, 99)) < products * 100:
        gen.add_product(params)
        params += 2
    if switches and draw(st.integers(0, 99)) < switches * 100:
        value = draw(st.integers(0, 1))
        header.append(f"T = setting({value}, choices=[0, 1])")
        state.settings["T"] = value
        for _ in range(draw(st.integers(1, 2))):
            params += gen.add_switched(params, "T")
    if huge and draw(st.integers(0, 99)) < huge * 100:
        gen.add_huge()
    if state.settings and draw(st.integers(0, 9)) == 0:  # a constraint decided at load time
        state.blocks.append(_Block(f"require(S {draw(st.sampled_from(['>', '!=']))} {draw(st.integers(-4, -2))})"))
    if wide and draw(st.integers(0, 99)) < wide * 100:
        gen.add_wide_block()
    if cost and draw(st.integers(0, 99)) < cost * 100:
        state.blocks.append(_Block(f"cost({gen.cost_expr()})"))
    blocks = state.blocks
    # function forms may come before their inputs (they are lowered after the file has run), but
    # a function-form parameter must stay before the module-level code that uses its name
    result: list[_Block] = []
    for block in blocks:
        if block.movable and result and draw(st.integers(0, 3)) == 0:
            name = block.text.split("def ", 1)[1].split("(", 1)[0]
            first_use = next((i for i, b in enumerate(result) if _mentions(b.text, name)), len(result))
            position = draw(st.integers(0, first_use))
            result.insert(position, block)
        else:
            result.append(block)
    text = "\n".join(header + [b.text for b in result]) + "\n"
    for name in state.params if names else ():
        if draw(st.integers(0, 99)) < names * 100:
            text = respell(text, name, draw(_spelling(name)), draw(st.sampled_from(["definition", "uses", "all"])))
    return text


def _spelling(name: str):
    """Another spelling of `name` that Python reads as `name` (at least one character changed)."""
    choices = [st.sampled_from([ch, *SPELLINGS.get(ch, ())]) for ch in name]
    return st.tuples(*choices).map("".join).filter(lambda spelled: spelled != name)


def respell(text: str, name: str, spelled: str, where: str = "all") -> str:
    """`text` with the name `name` written `spelled` at its definition (`name = ...` or
    `def name(` at the start of a line), at its other occurrences, or everywhere.

    >>> respell("p0 = range(3)\\nrequire(p0 > 1)\\n", "p0", "\uff500", "definition")
    'ｐ0 = range(3)\\nrequire(p0 > 1)\\n'
    """
    definition = re.compile(rf"^(def )?{re.escape(name)}\b(?= *[=(])", re.MULTILINE)
    found = definition.search(text)
    start, end = (found.start(), found.end()) if found else (len(text), len(text))
    head, middle, tail = text[:start], text[start:end], text[end:]
    if where != "uses":
        middle = middle.replace(name, spelled)
    if where != "definition":
        use = re.compile(rf"(?<![\w.'\"]){re.escape(name)}\b")
        head, tail = use.sub(spelled, head), use.sub(spelled, tail)
    return head + middle + tail


@st.composite
def colliding_spaces(draw, **options) -> str:
    """A generated space plus a binding of one of its names in another spelling that Python reads
    as the same name (`ｐ0 = range(2)` after `p0 = ...`): loading must refuse it, naming both
    spellings, as it refuses two T1 `Name`s or `check` arguments that are one name."""
    base = draw(spaces(**options))
    taken = re.findall(r"^(?:def )?(p\d+)\b(?= *[=(])", base, re.MULTILINE)
    name = draw(st.sampled_from(taken))
    spelled = draw(_spelling(name))
    return base + draw(st.sampled_from([f"{spelled} = range(2)", f"{spelled} = {name} + 1",
                                        f"@iterator\ndef {spelled}():\n    yield 1"])) + "\n"


@st.composite
def nul_spaces(draw, **options) -> str:
    """A generated space plus a categorical value holding a NUL (`NUL_CATEGORY`): in a value list,
    a closure's yield or a derived value's branch. No output keeps a NUL, so it is refused
    (when loaded; a closure's values when it runs) by every backend alike."""
    base = draw(spaces(**options))
    strings = draw(st.permutations([NUL_CATEGORY, *draw(st.lists(st.sampled_from(CATEGORIES), max_size=2,
                                                                unique=True))]))
    form = draw(st.sampled_from(["list", "closure", "derived"]))
    if form == "list":
        extra = f"zz = iterator({strings!r})"
    elif form == "closure":
        extra = "@iterator\ndef zz():\n" + "".join(f"    yield {v!r}\n" for v in strings).rstrip("\n")
    else:
        extra = f"zx = range(3)\nzd = if_then_else(zx > 0, {NUL_CATEGORY!r}, 'a')"
    return base + extra + "\n"


@st.composite
def refused_spaces(draw, **options) -> str:
    """A generated space plus one construct that every backend must refuse alike, when the file
    is loaded (`solverspace.lang.kinds`): strings and integers mixed in a value list, in iterator
    algebra, in the branches of a deferred iterator or a derived value, in what a closure yields;
    or a string in an ordering comparison. (Returned as source text, like `spaces()`.)"""
    base = draw(spaces(**options))
    strings = draw(st.lists(st.sampled_from(CATEGORIES), min_size=1, max_size=3, unique=True))
    numbers = draw(st.lists(st.integers(-3, 5), min_size=1, max_size=3, unique=True))
    mixed = draw(st.permutations(strings + numbers))
    form = draw(st.sampled_from(["list", "algebra", "deferred", "derived", "closure", "order", "order_function"]))
    if form == "list":
        extra = f"zz = iterator({mixed!r})"
    elif form == "algebra":
        extra = f"zz = iterator({strings!r}) {draw(st.sampled_from(['|', '&', '-']))} range({len(numbers)})"
    elif form == "deferred":
        extra = (f"zx = range(3)\n@iterator\ndef zz(zx):\n    if zx > {draw(st.integers(-1, 3))}:\n"
                 f"        return iterator({strings!r})\n    return range({len(numbers)})")
    elif form == "derived":
        extra = f"zx = range(3)\nzd = if_then_else(zx > 0, {strings[0]!r}, {numbers[0]})"
    elif form == "closure":
        extra = "@iterator\ndef zz():\n" + "".join(f"    yield {v!r}\n" for v in mixed).rstrip("\n")
    else:
        op = draw(st.sampled_from(["<", "<=", ">", ">="]))
        other = draw(st.sampled_from([repr(strings[0]), str(numbers[0]), "zx"]))
        extra = f"zx = range(3)\nzk = iterator({strings!r})"
        if form == "order":
            extra += f"\nrequire(zk {op} {other})"
        else:
            extra += f"\n@reject_if\ndef zc(zk, zx):\n    return {other} {op} zk"
    return base + extra + "\n"


def _mentions(text: str, name: str) -> bool:
    import re
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


# ------------------------------------------------------------------------------ wide ranges
@st.composite
def wide_spaces(draw, *, max_narrow: int = 2, max_candidates: int = 12) -> str:
    """A space with one or two parameters of 10**6 .. 10**12 values beside a small narrow part
    (`add_param`, `add_constraint`). A wide parameter is untouched (C hoists it; CP-SAT sums it
    out) or, for at most one of them, used only as `w % c` in constraints, derived values and a
    narrow domain (CP-SAT counts it by residue classes) and then kept near 10**6 values so that
    C's enumeration stays fast. Too big for the reference: compare CP-SAT's count with C's."""
    state = _State()
    gen = _Gen(draw, state, max_candidates, c_compatible=True)
    for index in range(draw(st.integers(1, max_narrow))):
        gen.add_param(index)
    if draw(st.booleans()):
        gen.add_constraint()
    lines = [b.text for b in state.blocks]
    narrow = [n for n in state.ints if n not in state.static]
    touched_one, product = False, 1
    for w in range(draw(st.integers(1, 2))):
        name = f"w{w}"
        sizes = [n for n in (10**6, 10**9, 10**12) if product * n <= 10**15]  # counts stay below 2**63
        if not sizes:
            break
        touched = bool(narrow) and not touched_one and draw(st.integers(0, 3)) > 0
        touched_one = touched_one or touched
        size = (draw(st.integers(10**6, 2 * 10**6)) if touched
                else draw(st.sampled_from(sizes)) + draw(st.integers(0, 99)))
        product *= size
        start, step = draw(st.integers(-10**6, 10**6)), draw(st.sampled_from([1, 1, 1, 2, 3, -1, -7]))
        stop = start + step * size
        lines.append(f"{name} = range({start}, {stop})" if step == 1 else f"{name} = range({start}, {stop}, {step})")
        if touched:
            lines.extend(_wide_uses(draw, name, narrow, w))
    return "\n".join(lines) + "\n"


def _wide_uses(draw, name: str, narrow: list[str], w: int) -> list[str]:
    """One to three uses of a wide parameter, each only through `name % c`."""
    lines = []
    for k in range(draw(st.integers(1, 3))):
        c = draw(st.integers(2, 9)) * draw(st.sampled_from([1, 1, -1]))
        other = draw(st.sampled_from(narrow))
        op = draw(st.sampled_from(_CMP))
        form = draw(st.sampled_from(["require", "reject_if", "derived", "domain"]))
        if form == "derived":
            lines.append(f"m{w}_{k} = {name} % {c} * {draw(st.integers(-2, 3))} + {other}")
            lines.append(f"require(m{w}_{k} {op} {draw(st.integers(-3, 6))})")
        elif form == "domain":
            lines.append(f"q{w}_{k} = range({name} % {c}, {draw(st.integers(0, 5))} + {other} % 3)")
        else:
            lines.append(f"{form}({name} % {c} {op} {other})")
    return lines


@st.composite
def independent_spaces(draw, *, max_parameters: int = 6) -> str:
    """A T1-style space: every parameter a constant value list (the shape of Kernel
    Tuner's and the T1 files' spaces), constraints over chains and stars of two or three
    parameters (products, sums, `%`, comparisons), so that some parameters are articulations of
    the constraint graph, which CP-SAT's counting conditions on (`cpsat_count._count_conditioned`).
    Small enough for the reference: at most 8 values a parameter."""
    count = draw(st.integers(3, max_parameters))
    names = [f"q{i}" for i in range(count)]
    lines = []
    for name in names:
        values = sorted(set(draw(st.lists(st.integers(-4, 12), min_size=2, max_size=8))))
        lines.append(f"{name} = iterator({values})" if draw(st.booleans())
                     else f"{name} = range({values[0]}, {values[0] + len(values)})")
    order = draw(st.permutations(names))   # a chain through all parameters: inner ones are articulations
    scopes = [[order[i], order[i + 1]] for i in range(count - 1)]
    scopes += draw(st.lists(st.lists(st.sampled_from(names), min_size=2, max_size=3, unique=True), max_size=2))
    for scope in scopes:
        left = draw(st.sampled_from([" * ", " + ", " - "])).join(scope[:-1])
        if draw(st.integers(0, 3)) == 0:
            condition = f"({left}) % {draw(st.integers(2, 4))} == {scope[-1]} % 2"
        else:
            condition = f"({left}) {draw(st.sampled_from(_CMP))} {scope[-1]} * {draw(st.integers(1, 3))}"
        lines.append(f"{draw(st.sampled_from(['require', 'reject_if']))}({condition})")
    return "\n".join(lines) + "\n"
