"""Lower a solverspace model to OR-Tools CP-SAT, with DESIGN.md's fixed semantics exactly.

One `_lower_<Node>` method per IR node (dispatched on the node's type, like SymPy's printers).
Lowering an expression gives a `Val` (its value as a CP-SAT linear expression, literal, or an
exact fraction `num/den`) and a *definedness literal* `ok`: true exactly when Python's evaluation
of the expression does not divide by zero. Everything below follows from four rules:

- **Every auxiliary variable is a function of the parameters.** Division, modulo, products,
  selections and the rest are encoded so that, for any values of the parameter variables, the
  auxiliary variables have exactly one solution (where an operation is undefined its result is
  pinned to a constant). Counting solutions therefore counts parameter assignments.
- **Bounds are sound everywhere, not only where defined.** The interval of each `Val` is computed
  from its operands' intervals, so a pinned or unevaluated branch can never make the model
  infeasible; CP-SAT's 64-bit domains are checked on every new variable, and a bound that does not
  fit is refused with the expression and its line in the space file.
- **Python's integer meaning, lowered explicitly.** CP-SAT's division and modulo truncate toward
  zero: they are used only where the bounds prove the dividend and the divisor non-negative (a
  divisor that may be 0 is replaced by 1 there, where the operation is undefined anyway);
  otherwise floor division is `q*b + r == a` with `0 <= r < b` (or `b < r <= 0`). `/` is exact:
  a fraction `num/den` with `den > 0`, compared by cross-multiplication.
- **Short-circuit definedness.** `a and b` is defined when `a` is defined and (`a` is false or `b`
  is defined); `if_then_else` needs only the chosen branch; derived values are eager.

Asserted constraints are posted directly instead of reified where the semantics allow (a
conjunction that must hold, a comparison, `x % y == 0` as `x == y*k`), and a range stepping by a
parameter (`range(d, n, d)`) is `x == d*j`, so that `x // d` is `j`: CP-SAT propagates products
far better than reified modulo. Categorical strings are integer codes (`Codes`), compared only
with `==` and `!=`. Closure
iterators become table constraints, tabulated in Python for every combination of their inputs'
values. A construct that cannot be lowered raises `CpSatRefusal`, which names the expression,
the item that contains it and its line.

The counting engine (`translators.cpsat_count`), feasibility and explanations
(`translators.cpsat_explain`) and best-by-objective (`translators.cpsat_best`) build on
`Lowering`; `CpSatBackend` is what `solverspace.backends` registers as ``"cpsat"``.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

from ortools.sat.python import cp_model

from solverspace import ir
from solverspace.bounds import Bounds, short_number
from solverspace.closures import ClosureTableError
from solverspace.errors import BackendUnavailableError, Location
from solverspace.evaluate import Undefined, compile_domain
from solverspace.printing import to_source

from .cpsat_wide import size as domain_size

#: Largest magnitude of any CP-SAT variable bound we create: CP-SAT accepts |v| <= 2**62 - 1 and
#: checks that linear expressions cannot overflow int64, so keep headroom for sums of a few terms.
LIMIT = 2 ** 60

#: Constant domains with at most this many values become an explicit CP-SAT domain.
EXPLICIT_DOMAIN = 100_000


class CpSatRefusal(BackendUnavailableError):
    """A construct of the space that the CP-SAT backend cannot lower (the message names it)."""


@dataclass(frozen=True)
class Val:
    """A lowered value.

    kind "int": `expr` is an int or a CP-SAT linear expression within [lo, hi].
    kind "bool": `expr` is a Python bool or a CP-SAT literal (0/1 in arithmetic).
    kind "rat": the exact fraction `expr / den`, numerator in [lo, hi], denominator in [dlo, dhi]
        with dlo >= 1 wherever the value is defined (den is 0 only where the division that made
        it is undefined).
    kind "str": `expr` is the integer code of a categorical string, codes in [lo, hi].
    """

    kind: str
    expr: object
    lo: int
    hi: int
    den: object = 1
    dlo: int = 1
    dhi: int = 1

    @property
    def constant(self) -> bool:
        return self.lo == self.hi and (self.kind != "rat" or self.dlo == self.dhi)


def _const_int(value: int) -> Val:
    return Val("int", value, value, value)


def _const_bool(value: bool) -> Val:
    return Val("bool", bool(value), int(value), int(value))


def _bool_val(lit) -> Val:
    return _const_bool(lit) if isinstance(lit, bool) else Val("bool", lit, 0, 1)


TRUE, FALSE = True, False


def _key(lit) -> int | bool:
    return lit if isinstance(lit, bool) else lit.index


def _floor_div(a: int, b: int) -> int:
    return a // b


class Codes:
    """Integer codes of categorical strings, in order of first use (deterministic per model)."""

    def __init__(self):
        self.code: dict[str, int] = {}
        self.text: list[str] = []

    def __call__(self, text: str) -> int:
        if text not in self.code:
            self.code[text] = len(self.text)
            self.text.append(text)
        return self.code[text]

    def decode(self, code: int) -> str:
        return self.text[code]


@dataclass
class Where:
    """The item being lowered, for refusal messages."""

    kind: str  # "parameter", "derived value", "constraint", "objective"
    name: str
    line: int | None


class Lowering(ir.Visitor):
    """Lower the items of one model into one `cp_model.CpModel`, creating parameter variables on
    demand. Lowering is memoised per IR node, so shared subexpressions share variables."""

    backend_name = "the CP-SAT backend"

    def __init__(self, model, cp: cp_model.CpModel | None = None, *, codes: Codes | None = None,
                 bounds: Bounds | None = None):
        self.model = model
        self.cp = cp if cp is not None else cp_model.CpModel()
        self.codes = codes if codes is not None else Codes()
        self.bounds = bounds if bounds is not None else Bounds(model)
        self.params: dict[str, Val] = {}          # parameter name -> its variable
        self.param_vars: dict[str, cp_model.IntVar] = {}
        self.memo: dict[ir.Node, tuple[Val, object]] = {}
        self.domain_memo: dict[str, tuple[object, object]] = {}
        self.derived_memo: dict[str, tuple[Val, object]] = {}
        self.truth_memo: dict = {}
        self.multiples: dict[tuple[int, int], Val] = {}  # (x, step) -> j where x == step * j
        self.and_memo: dict = {}
        self.errors: list[tuple[object, str, str]] = []  # (literal, parameter, message)
        self.where: list[Where] = []
        self.counter = itertools.count()

    # ---------------------------------------------------------------------------- messages
    def refuse(self, node: ir.Node | None, why: str, hint: str | None = None):
        where = self.where[-1] if self.where else None
        text = f"`{to_source(node)}`" if node is not None else "this construct"
        if where is not None:
            text += f" in {where.kind} {where.name!r}"
        raise CpSatRefusal(f"the CP-SAT backend cannot lower {text}: {why}",
                           where=Location(self.model.source, where.line if where else None), hint=hint)

    def _item(self, kind, name, line):
        return _Context(self, Where(kind, name, line))

    def visit(self, node, *args):
        method = getattr(self, "_lower_" + type(node).__name__, None)
        if method is None:
            return self.unsupported(node)
        return method(node, *args)

    def unsupported(self, node):
        self.refuse(node, f"{type(node).__name__} nodes have no CP-SAT lowering")

    # ---------------------------------------------------------------------------- variables
    def new_int(self, lo: int, hi: int, label: str, node: ir.Node | None = None) -> cp_model.IntVar:
        lo, hi = int(lo), int(hi)
        if lo < -LIMIT or hi > LIMIT:
            self.refuse(node, f"its values may reach [{short_number(lo)}, {short_number(hi)}], beyond CP-SAT's 64-bit domains "
                              f"(|value| <= 2**60 here)",
                        hint="tighten the ranges it depends on, reformulate the expression, or use the "
                             "reference backend, which computes with Python integers")
        if lo == hi:
            return self.cp.new_constant(lo)
        return self.cp.new_int_var(lo, hi, f"{label}#{next(self.counter)}")

    def new_bool(self, label: str):
        return self.cp.new_bool_var(f"{label}#{next(self.counter)}")

    # ---------------------------------------------------------------------------- literals
    def lit_not(self, lit):
        return (not lit) if isinstance(lit, bool) else ~lit

    def lit_and(self, lits, label="and"):
        kept, seen = [], set()
        for lit in lits:
            if lit is False:
                return False
            if lit is True:
                continue
            if _key(lit) in seen:
                continue
            if -_key(lit) - 1 in seen:
                return False
            seen.add(_key(lit))
            kept.append(lit)
        if not kept:
            return True
        if len(kept) == 1:
            return kept[0]
        key = frozenset(seen)
        if key in self.and_memo:
            return self.and_memo[key]
        result = self.new_bool(label)
        self.cp.add_bool_and(kept).only_enforce_if(result)
        self.cp.add_bool_or([self.lit_not(k) for k in kept]).only_enforce_if(self.lit_not(result))
        self.and_memo[key] = result
        return result

    def lit_or(self, lits, label="or"):
        return self.lit_not(self.lit_and([self.lit_not(l) for l in lits], label))

    def lit_implies(self, a, b):
        return self.lit_or([self.lit_not(a), b], "implies")

    def enforce(self, constraint, enforce):
        if enforce:
            constraint.only_enforce_if(list(enforce))
        return constraint

    def assert_lit(self, lit, enforce=()):
        """Post `lit` (under the conjunction `enforce`)."""
        if lit is True:
            return
        if lit is False:
            self.enforce(self.cp.add_bool_or([]), enforce)
            return
        self.enforce(self.cp.add_bool_or([lit]), enforce)

    def relation(self, a: Val, op: str, b: Val, label="cmp"):
        """Literal for `a op b` on integer-valued Vals (ints, bools, codes), folded from bounds."""
        lo, hi = a.lo - b.hi, a.hi - b.lo  # bounds of a - b
        decided = _decide(op, lo, hi)
        if decided is not None:
            return decided
        lit = self.new_bool(label)
        self.cp.add(_linear(a.expr, op, b.expr)).only_enforce_if(lit)
        self.cp.add(_linear(a.expr, _NEGATE[op], b.expr)).only_enforce_if(self.lit_not(lit))
        return lit

    def post_relation(self, a: Val, op: str, b: Val, enforce=()):
        """Post `a op b` (integer-valued Vals) as a constraint."""
        decided = _decide(op, a.lo - b.hi, a.hi - b.lo)
        if decided is True:
            return
        if decided is False:
            self.assert_lit(False, enforce)
            return
        self.enforce(self.cp.add(_linear(a.expr, op, b.expr)), enforce)

    # ---------------------------------------------------------------------------- conversions
    def as_int(self, val: Val, node) -> Val:
        if val.kind == "int":
            return val
        if val.kind == "bool":
            expr = int(val.expr) if isinstance(val.expr, bool) else val.expr
            return Val("int", expr, val.lo, val.hi)
        if val.kind == "str":
            self.refuse(node, "a categorical value is used in arithmetic or an ordering",
                        hint="categorical values can only be compared with == and !=")
        self.refuse(node, "an exact fraction (from `/`) is used where an integer is required",
                    hint="use // for integer division")

    def as_rat(self, val: Val, node) -> Val:
        if val.kind == "rat":
            return val
        v = self.as_int(val, node)
        return Val("rat", v.expr, v.lo, v.hi, 1, 1, 1)

    def truth(self, val: Val):
        """Literal: the value is truthy (Python's bool())."""
        if val.kind == "bool":
            return val.expr
        if val.kind == "str":
            empty = self.codes.code.get("")
            if empty is None or not val.lo <= empty <= val.hi:
                return True
            return self.relation(val, "!=", _const_int(empty), "truth")
        if val.kind == "rat":
            val = Val("int", val.expr, val.lo, val.hi)
        key = val.expr.index if isinstance(val.expr, cp_model.IntVar) else None
        if key is not None and key in self.truth_memo:
            return self.truth_memo[key]
        lit = self.relation(val, "!=", _const_int(0), "truth")
        if key is not None:
            self.truth_memo[key] = lit
        return lit

    # ---------------------------------------------------------------------------- arithmetic helpers
    def mul(self, a: Val, b: Val, node) -> Val:
        """Product of two integer Vals."""
        if a.constant:
            return _scale(b, a.lo)
        if b.constant:
            return _scale(a, b.lo)
        corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
        target = self.new_int(min(corners), max(corners), "mul", node)
        self.cp.add_multiplication_equality(target, [a.expr, b.expr])
        return Val("int", target, min(corners), max(corners))

    def floordiv(self, a: Val, b: Val, node, want: str = "//") -> tuple[Val, object]:
        """Python's `a // b` (want="//") or `a % b` (want="%") for integer Vals, and the literal
        b != 0 (where it is false the result is pinned: the operation is undefined there)."""
        nonzero = self.relation(b, "!=", _const_int(0), "nonzero")
        parts = []
        if b.hi >= 1:
            parts.append((max(b.lo, 1), b.hi))
        if b.lo <= -1:
            parts.append((b.lo, min(b.hi, -1)))
        if not parts:  # the divisor is always 0: always undefined
            return _const_int(0), False
        qs = [_floor_div(x, y) for lo, hi in parts for x in (a.lo, a.hi) for y in (lo, hi)]
        qlo, qhi = min(qs), max(qs)
        rlo, rhi = 0, 0
        for lo, hi in parts:
            if lo > 0:
                top = hi - 1
                if a.lo >= 0:
                    top = min(top, a.hi)
                rhi = max(rhi, top)
            else:
                bottom = lo + 1
                if a.hi <= 0:
                    bottom = max(bottom, a.lo)
                rlo = min(rlo, bottom)
        if nonzero is not True:
            qlo, qhi = min(qlo, 0), max(qhi, 0)
        if a.constant and b.constant:
            return _const_int(a.lo // b.lo if want == "//" else a.lo % b.lo), True
        if b.lo >= 1 and isinstance(a.expr, cp_model.IntVar) and isinstance(b.expr, cp_model.IntVar):
            multiple = self.multiples.get((a.expr.index, b.expr.index))
            if multiple is not None:  # a == b * j exactly (a range stepping by b)
                return (multiple if want == "//" else _const_int(0)), True
        if a.lo >= 0 and b.lo >= 0 and (b.lo >= 1 or not b.constant):
            # CP-SAT's truncating division and modulo agree with Python's here
            divisor = b.expr
            if b.lo == 0:  # divide by 1 where b is 0 (undefined there): the result stays determined
                divisor = self.new_int(1, b.hi, "divisor", node)
                self.cp.add(divisor == b.expr).only_enforce_if(nonzero)
                self.cp.add(divisor == 1).only_enforce_if(self.lit_not(nonzero))
                qlo, qhi = min(qlo, a.lo), max(qhi, a.hi)
            if want == "//":
                q = self.new_int(qlo, qhi, "floordiv", node)
                self.cp.add_division_equality(q, a.expr, divisor)
                return Val("int", q, qlo, qhi), nonzero
            r = self.new_int(rlo, rhi, "mod", node)
            self.cp.add_modulo_equality(r, a.expr, divisor)
            return Val("int", r, rlo, rhi), nonzero
        if b.constant:
            c = b.lo
            q = self.new_int(qlo, qhi, "floordiv", node)
            if c > 0:
                self.cp.add(c * q <= a.expr)
                self.cp.add(a.expr <= c * q + c - 1)
            else:
                self.cp.add(c * q >= a.expr)
                self.cp.add(a.expr >= c * q + c + 1)
            if want == "//":
                return Val("int", q, qlo, qhi), True
            return Val("int", _sub(a.expr, c * q), rlo, rhi), True
        # general signs: a == q*b + r with the remainder's sign following the divisor
        q = self.new_int(qlo, qhi, "floordiv", node)
        product = self.mul(Val("int", q, qlo, qhi), b, node)
        r = self.new_int(rlo, rhi, "mod", node)
        signs = ((self.relation(b, ">", _const_int(0), "positive"), True),
                 (self.relation(b, "<", _const_int(0), "negative"), False))
        for sign, positive in signs:
            if sign is False:
                continue
            guard = [] if sign is True else [sign]
            self.enforce(self.cp.add(a.expr == product.expr + r), guard)
            if positive:
                self.enforce(self.cp.add(r <= b.expr - 1), guard)
                self.enforce(self.cp.add(r >= 0), guard)
            else:
                self.enforce(self.cp.add(r >= b.expr + 1), guard)
                self.enforce(self.cp.add(r <= 0), guard)
        if nonzero is not True:  # b == 0: undefined, pin both results
            zero = self.lit_not(nonzero)
            self.cp.add(q == _clamp(0, qlo, qhi)).only_enforce_if(zero)
            self.cp.add(r == _clamp(0, rlo, rhi)).only_enforce_if(zero)
        return (Val("int", q, qlo, qhi) if want == "//" else Val("int", r, rlo, rhi)), nonzero

    def select(self, cond, then: Val, orelse: Val, node) -> Val:
        """`then if cond else orelse` for Vals of compatible kinds."""
        if cond is True:
            return then
        if cond is False:
            return orelse
        kinds = {then.kind, orelse.kind}
        if "str" in kinds and kinds != {"str"}:
            self.refuse(node, "its branches mix categorical strings and numbers")
        if kinds == {"bool"}:
            lit = self.new_bool("select")
            for branch, guard in ((then, cond), (orelse, self.lit_not(cond))):
                self.cp.add(lit == _as_linear(branch.expr)).only_enforce_if(guard)
            return Val("bool", lit, 0, 1)
        if "rat" in kinds:
            t, e = self.as_rat(then, node), self.as_rat(orelse, node)
            num = self.select(cond, Val("int", t.expr, t.lo, t.hi), Val("int", e.expr, e.lo, e.hi), node)
            den = self.select(cond, Val("int", t.den, t.dlo, t.dhi), Val("int", e.den, e.dlo, e.dhi), node)
            return Val("rat", num.expr, num.lo, num.hi, den.expr, den.lo, den.hi)
        kind = "str" if kinds == {"str"} else "int"
        t = then if kind == "str" else self.as_int(then, node)
        e = orelse if kind == "str" else self.as_int(orelse, node)
        lo, hi = min(t.lo, e.lo), max(t.hi, e.hi)
        target = self.new_int(lo, hi, "select", node)
        self.cp.add(target == _as_linear(t.expr)).only_enforce_if(cond)
        self.cp.add(target == _as_linear(e.expr)).only_enforce_if(self.lit_not(cond))
        return Val(kind, target, lo, hi)

    # ---------------------------------------------------------------------------- expressions
    def lower(self, node: ir.Expr) -> tuple[Val, object]:
        """(value, definedness literal) of an expression."""
        found = self.memo.get(node)
        if found is None:
            found = self.memo[node] = self.visit(node)
        return found

    def _lower_Const(self, n):
        v = n.value
        if type(v) is str:
            code = self.codes(v)
            return Val("str", code, code, code), True
        if type(v) is bool:
            return _const_bool(v), True
        return _const_int(v), True

    def _lower_Ref(self, n):
        if n.name in self.model.parameter:
            return self.param(n.name), True
        if n.name in self.model.derived_value:
            return self.derived(n.name)
        self.refuse(n, f"unknown name {n.name!r}")

    def _lower_BinOp(self, n):
        (a, oka), (b, okb) = self.lower(n.left), self.lower(n.right)
        ok = self.lit_and([oka, okb])
        if "str" in (a.kind, b.kind):
            self.as_int(a if a.kind == "str" else b, n)
        if n.op == "**":
            return self._power(a, n.right, n), ok
        if n.op == "/" or "rat" in (a.kind, b.kind):
            value, defined = self._rational(n.op, self.as_rat(a, n), self.as_rat(b, n), n)
            return value, self.lit_and([ok, defined])
        a, b = self.as_int(a, n), self.as_int(b, n)
        if n.op == "+":
            return Val("int", _add(a.expr, b.expr), a.lo + b.lo, a.hi + b.hi), ok
        if n.op == "-":
            return Val("int", _sub(a.expr, b.expr), a.lo - b.hi, a.hi - b.lo), ok
        if n.op == "*":
            return self.mul(a, b, n), ok
        value, nonzero = self.floordiv(a, b, n, n.op)
        return value, self.lit_and([ok, nonzero])

    def _power(self, base: Val, exponent: ir.Expr, node):
        k = exponent.value if isinstance(exponent, ir.Const) else None
        if type(k) is not int or k < 0:
            self.refuse(node, "`**` takes only a non-negative integer constant exponent")
        if base.kind == "rat":
            num = self._int_power(Val("int", base.expr, base.lo, base.hi), k, node)
            den = self._int_power(Val("int", base.den, base.dlo, base.dhi), k, node)
            return Val("rat", num.expr, num.lo, num.hi, den.expr, den.lo, den.hi)
        return self._int_power(self.as_int(base, node), k, node)

    def _int_power(self, base: Val, k: int, node) -> Val:
        """base ** k by squaring (log k products); refused before any huge number is computed
        when |base| ** k may leave CP-SAT's domains (every intermediate power is smaller)."""
        if k == 0:
            return _const_int(1)
        if k == 1:
            return base
        top = max(abs(base.lo), abs(base.hi))
        if top > 1 and k * math.log2(top) > 64:  # the exact limit is new_int's
            self.refuse(node, f"its values may reach about 2**{int(k * math.log2(top))}, beyond CP-SAT's "
                              f"64-bit domains", hint="use the reference backend, which computes with Python integers")
        if base.constant:
            return _const_int(base.lo ** k)
        if base.lo >= 0 and base.hi <= 1:  # 0 or 1: every power is the base
            return base
        result, square = None, base
        while True:
            if k & 1:
                result = square if result is None else self.mul(result, square, node)
            k >>= 1
            if not k:
                return result
            square = self._square(square, node)

    def _square(self, v: Val, node) -> Val:
        lo = 0 if v.lo <= 0 <= v.hi else min(v.lo * v.lo, v.hi * v.hi)
        hi = max(v.lo * v.lo, v.hi * v.hi)
        target = self.new_int(lo, hi, "pow", node)
        self.cp.add_multiplication_equality(target, [v.expr, v.expr])
        return Val("int", target, lo, hi)

    def _rational(self, op, a: Val, b: Val, node) -> tuple[Val, object]:
        pa, da = Val("int", a.expr, a.lo, a.hi), Val("int", a.den, a.dlo, a.dhi)
        pb, db = Val("int", b.expr, b.lo, b.hi), Val("int", b.den, b.dlo, b.dhi)
        if op in ("+", "-"):
            if da.constant and db.constant and da.lo == db.lo:
                num = (Val("int", _add(pa.expr, pb.expr), pa.lo + pb.lo, pa.hi + pb.hi) if op == "+"
                       else Val("int", _sub(pa.expr, pb.expr), pa.lo - pb.hi, pa.hi - pb.lo))
                return _rat(num, da), True
            left, right = self.mul(pa, db, node), self.mul(pb, da, node)
            num = (Val("int", _add(left.expr, right.expr), left.lo + right.lo, left.hi + right.hi) if op == "+"
                   else Val("int", _sub(left.expr, right.expr), left.lo - right.hi, left.hi - right.lo))
            return _rat(num, self.mul(da, db, node)), True
        if op == "*":
            return _rat(self.mul(pa, pb, node), self.mul(da, db, node)), True
        nonzero = self.relation(pb, "!=", _const_int(0), "nonzero")
        if op == "/":
            num, den = self.mul(pa, db, node), self.mul(da, pb, node)
            if den.lo >= 0:
                return _rat(num, den), nonzero
            if den.hi <= 0:
                return _rat(_scale(num, -1), _scale(den, -1)), nonzero
            positive = self.relation(den, ">=", _const_int(0), "sign")
            num = self.select(positive, num, _scale(num, -1), node)
            den = self.select(positive, den, _scale(den, -1), node)
            return _rat(num, den), nonzero
        # floor division and modulo of fractions: q = floor((pa*db) / (da*pb))
        q, defined = self.floordiv(self.mul(pa, db, node), self.mul(da, pb, node), node)
        if op == "//":
            return q, defined
        # a - b*q = (pa*db - pb*q*da) / (da*db)
        left = self.mul(pa, db, node)
        right = self.mul(self.mul(pb, q, node), da, node)
        num = Val("int", _sub(left.expr, right.expr), left.lo - right.hi, left.hi - right.lo)
        return _rat(num, self.mul(da, db, node)), defined

    def _lower_Neg(self, n):
        a, ok = self.lower(n.operand)
        if a.kind == "rat":
            return Val("rat", _neg(a.expr), -a.hi, -a.lo, a.den, a.dlo, a.dhi), ok
        a = self.as_int(a, n)
        return Val("int", _neg(a.expr), -a.hi, -a.lo), ok

    def _abs(self, a: Val, node) -> Val:
        if a.lo >= 0:
            return a
        if a.hi <= 0:
            return _scale(a, -1)
        hi = max(-a.lo, a.hi)
        target = self.new_int(0, hi, "abs", node)
        self.cp.add_abs_equality(target, a.expr)
        return Val("int", target, 0, hi)

    def _lower_Abs(self, n):
        a, ok = self.lower(n.operand)
        if a.kind == "rat":
            num = self._abs(Val("int", a.expr, a.lo, a.hi), n)
            return Val("rat", num.expr, num.lo, num.hi, a.den, a.dlo, a.dhi), ok
        return self._abs(self.as_int(a, n), n), ok

    def _extremum(self, n, smallest: bool):
        lowered = [self.lower(o) for o in n.operands]
        ok = self.lit_and([k for _, k in lowered])
        vals = [v for v, _ in lowered]
        if any(v.kind == "rat" for v in vals):
            best = self.as_rat(vals[0], n)
            for v in vals[1:]:
                v = self.as_rat(v, n)
                better = self._compare_rat(v, "<" if smallest else ">", best, n)
                best = self.select(better, v, best, n)
            return best, ok
        ints = [self.as_int(v, n) for v in vals]
        if len(ints) == 1:
            return ints[0], ok
        lo = (min if smallest else max)(v.lo for v in ints)
        hi = (min if smallest else max)(v.hi for v in ints)
        if all(v.constant for v in ints):
            return _const_int(lo), ok
        target = self.new_int(lo, hi, "min" if smallest else "max", n)
        (self.cp.add_min_equality if smallest else self.cp.add_max_equality)(target, [v.expr for v in ints])
        return Val("int", target, lo, hi), ok

    def _lower_Min(self, n):
        return self._extremum(n, True)

    def _lower_Max(self, n):
        return self._extremum(n, False)

    def _compare_rat(self, a: Val, op: str, b: Val, node):
        """Literal for a op b on fractions with positive denominators: cross-multiply."""
        left = self.mul(Val("int", a.expr, a.lo, a.hi), Val("int", b.den, b.dlo, b.dhi), node)
        right = self.mul(Val("int", b.expr, b.lo, b.hi), Val("int", a.den, a.dlo, a.dhi), node)
        return self.relation(left, op, right)

    def compare(self, op: str, a: Val, b: Val, node):
        """Literal for `a op b` (both operands already evaluated)."""
        if "str" in (a.kind, b.kind):
            if op not in ("==", "!="):
                self.refuse(node, "categorical values cannot be ordered",
                            hint="categorical values can only be compared with == and !=")
            if a.kind != b.kind:  # a string never equals a number
                return op == "!="
            return self.relation(a, op, b)
        if "rat" in (a.kind, b.kind):
            return self._compare_rat(self.as_rat(a, node), op, self.as_rat(b, node), node)
        return self.relation(self.as_int(a, node), op, self.as_int(b, node))

    def _lower_Compare(self, n):
        (a, oka), (b, okb) = self.lower(n.left), self.lower(n.right)
        return _bool_val(self.compare(n.op, a, b, n)), self.lit_and([oka, okb])

    def _lower_Not(self, n):
        a, ok = self.lower(n.operand)
        return _bool_val(self.lit_not(self.truth(a))), ok

    def _short_circuit(self, n, conjunction: bool):
        oks, truths = [], []
        for operand in n.operands:
            value, ok = self.lower(operand)
            # operand i is evaluated only if the ones before it did not decide the result
            decided_before = self.lit_or([t if not conjunction else self.lit_not(t) for t in truths])
            oks.append(self.lit_or([decided_before, ok]))
            truths.append(self.truth(value))
        value = self.lit_and(truths) if conjunction else self.lit_or(truths)
        return _bool_val(value), self.lit_and(oks)

    def _lower_And(self, n):
        return self._short_circuit(n, True)

    def _lower_Or(self, n):
        return self._short_circuit(n, False)

    def _lower_IfExp(self, n):
        c, okc = self.lower(n.cond)
        cond = self.truth(c)
        (t, okt), (e, oke) = self.lower(n.then), self.lower(n.orelse)
        ok = self.lit_and([okc, self.lit_implies(cond, okt), self.lit_implies(self.lit_not(cond), oke)])
        return self.select(cond, t, e, n), ok

    # ---------------------------------------------------------------------------- assertions
    def require(self, node: ir.Expr, truth: bool, enforce=()):
        """Post: `node` is defined and its truth value is `truth` (under `enforce`)."""
        if isinstance(node, ir.Not):
            return self.require(node.operand, not truth, enforce)
        if (isinstance(node, ir.And) and truth) or (isinstance(node, ir.Or) and not truth):
            for operand in node.operands:  # every operand is evaluated and decides nothing
                self.require(operand, truth, enforce)
            return
        if isinstance(node, ir.IfExp):
            c, okc = self.lower(node.cond)
            self.assert_lit(okc, enforce)
            cond = self.truth(c)
            if cond is not False:
                self.require(node.then, truth, [*enforce, cond] if cond is not True else enforce)
            if cond is not True:
                self.require(node.orelse, truth, [*enforce, self.lit_not(cond)] if cond is not False else enforce)
            return
        if isinstance(node, ir.Compare):
            op = node.op if truth else _NEGATE[node.op]
            if op == "==" and self._require_divisible(node, enforce):
                return
            (a, oka), (b, okb) = self.lower(node.left), self.lower(node.right)
            self.assert_lit(oka, enforce)
            self.assert_lit(okb, enforce)
            if {a.kind, b.kind} <= {"int", "bool"}:
                self.post_relation(self.as_int(a, node), op, self.as_int(b, node), enforce)
                return
            if "rat" in (a.kind, b.kind) and "str" not in (a.kind, b.kind):
                a, b = self.as_rat(a, node), self.as_rat(b, node)
                left = self.mul(Val("int", a.expr, a.lo, a.hi), Val("int", b.den, b.dlo, b.dhi), node)
                right = self.mul(Val("int", b.expr, b.lo, b.hi), Val("int", a.den, a.dlo, a.dhi), node)
                self.post_relation(left, op, right, enforce)
                return
            self.assert_lit(self.compare(op, a, b, node), enforce)
            return
        value, ok = self.lower(node)
        self.assert_lit(ok, enforce)
        lit = self.truth(value)
        self.assert_lit(lit if truth else self.lit_not(lit), enforce)

    def _require_divisible(self, node: ir.Compare, enforce) -> bool:
        """Post `x % y == 0` as `x == y * k` (k a new variable): CP-SAT propagates a product
        better than a modulo. False when `node` is not of that form."""
        sides = (node.left, node.right)
        zero = [s for s in sides if isinstance(s, ir.Const) and s.value == 0 and type(s.value) is int]
        mod = [s for s in sides if isinstance(s, ir.BinOp) and s.op == "%"]
        if not zero or not mod:
            return False
        (x, okx), (y, oky) = self.lower(mod[0].left), self.lower(mod[0].right)
        if not {x.kind, y.kind} <= {"int", "bool"}:
            return False
        x, y = self.as_int(x, mod[0]), self.as_int(y, mod[0])
        nonzero = self.relation(y, "!=", _const_int(0), "nonzero")
        self.assert_lit(self.lit_and([okx, oky, nonzero]), enforce)
        if nonzero is False:
            return True
        parts = [(max(y.lo, 1), y.hi)] if y.hi >= 1 else []
        parts += [(y.lo, min(y.hi, -1))] if y.lo <= -1 else []
        # an exact quotient is an integer between the real quotients at the corners
        ks = [_floor_div(a, b) for lo, hi in parts for a in (x.lo, x.hi) for b in (lo, hi)]
        klo, khi = min(ks + [0]), max(ks + [0])
        if x.lo >= 0 and y.lo >= 1:
            klo, khi = 0, x.hi // y.lo
        k = Val("int", self.new_int(klo, khi, "quotient", mod[0]), klo, khi)
        product = self.mul(y, k, mod[0])
        self.enforce(self.cp.add(_as_linear(x.expr) == product.expr), enforce)
        active = self.lit_and(list(enforce) + [nonzero])
        if active is not True:  # keep k determined where the equation is not enforced
            self.cp.add(k.expr == _clamp(0, klo, khi)).only_enforce_if(self.lit_not(active))
        return True

    # ---------------------------------------------------------------------------- items
    def derived(self, name: str) -> tuple[Val, object]:
        if name not in self.derived_memo:
            d = self.model.derived_value[name]
            with self._item("derived value", name, d.line):
                self.derived_memo[name] = self.lower(d.expr)
        return self.derived_memo[name]

    def param(self, name: str) -> Val:
        """The variable of a parameter, created with the bounds of its domain."""
        if name not in self.params:
            p = self.model.parameter[name]
            with self._item("parameter", name, p.line):
                _, lo, hi, values = self._domain_shape(p.domain, p)
                kind = self.model.kinds.of(name) or "int"  # one kind analysis for every backend
                if values is not None:
                    var = self._var_from_values(values, name, p.domain)
                    lo, hi = _coded_hull(values, self.codes)
                else:
                    semantic = self._semantic_bounds(name) if kind == "int" else None  # codes are ours
                    if semantic is not None:
                        lo, hi = max(lo, semantic[0]), min(hi, semantic[1])
                    if lo > hi:
                        var = self.new_int(0, 0, name, p.domain)
                        self.assert_lit(False)
                        lo = hi = 0
                    else:
                        var = self.new_int(lo, hi, name, p.domain)
                self.param_vars[name] = var
                self.params[name] = Val(kind, var, lo, hi)
        return self.params[name]

    def fix_param(self, name: str, value) -> Val:
        """The variable of a parameter held at one value (its domain is not lowered, so nothing
        it depends on enters the model)."""
        if name in self.params:
            raise ValueError(f"parameter {name!r} already has a variable")
        code = self.codes(value) if type(value) is str else int(value)
        var = self.cp.new_constant(code)
        self.param_vars[name] = var
        self.params[name] = Val("str" if type(value) is str else "int", var, code, code)
        return self.params[name]

    def _semantic_bounds(self, name):
        try:
            b = self.bounds.of(name)
        except Exception:  # analysis limits (closures): our own bounds are sound on their own
            return None
        if b.empty:
            return (1, 0)
        lo = math.ceil(b.lo) if b.lo != -math.inf else -LIMIT
        hi = math.floor(b.hi) if b.hi != math.inf else LIMIT
        return lo, hi

    def _var_from_values(self, values, name, node):
        if not values:
            var = self.new_int(0, 0, name, node)
            self.assert_lit(False)
            return var
        for v in _coded_hull(values, self.codes):
            if abs(v) > LIMIT:
                self.refuse(node, f"value {short_number(v)} is beyond CP-SAT's 64-bit domains",
                            hint="use the reference backend, which computes with Python integers")
        return self.cp.new_int_var_from_domain(_cp_domain(values, self.codes), f"{name}#{next(self.counter)}")

    def _domain_shape(self, node: ir.Domain, p):
        """(kind, lo, hi, constant values or None) of a parameter's domain."""
        key = ("shape", p.name)
        if key not in self.domain_memo:
            self.domain_memo[key] = self._compute_shape(node, p)
        return self.domain_memo[key]

    def _compute_shape(self, node: ir.Domain, p):
        if not p.depends_on and not isinstance(node, ir.Closure):
            try:
                values = compile_domain(node, p.name, closure_globals=dict(self.model.closure_globals),
                                        max_closure_values=self.model.max_closure_values)({})
            except Undefined:
                values = []
            if not isinstance(values, range) or domain_size(values) <= EXPLICIT_DOMAIN or values.step == 1:
                kinds = {"int"} if isinstance(values, range) else {"str" if type(v) is str else "int" for v in values}
                if len(kinds) > 1:
                    self.refuse(node, "its values mix categorical strings and numbers")
                return (kinds.pop() if kinds else "int"), 0, 0, values
        kind, lo, hi = self._domain_bounds(node)
        return kind, lo, hi, None

    def _domain_bounds(self, node) -> tuple[str, int, int]:
        """Kind and a sound interval of the values of a domain node, for any inputs."""
        if isinstance(node, ir.Range):
            start, stop, step = (self._range_part(e, node) for e in (node.start, node.stop, node.step))
            lo, hi = math.inf, -math.inf
            if step.hi >= 1:
                lo, hi = min(lo, start.lo), max(hi, stop.hi - 1)
            if step.lo <= -1:
                lo, hi = min(lo, stop.lo + 1), max(hi, start.hi)
            return ("int", 1, 0) if lo > hi else ("int", lo, hi)
        if isinstance(node, ir.Values):
            kinds, lo, hi = set(), math.inf, -math.inf
            for item in node.items:
                v, _ = self.lower(item)
                if v.kind == "rat":
                    self.refuse(item, "a parameter value may be a fraction", hint="use // for integer division")
                kinds.add("str" if v.kind == "str" else "int")
                lo, hi = min(lo, v.lo), max(hi, v.hi)
            if len(kinds) > 1:
                self.refuse(node, "its values mix categorical strings and numbers")
            return kinds.pop(), lo, hi
        if isinstance(node, ir.SetOp):
            kl, ll, hl = self._domain_bounds(node.left)
            kr, lr, hr = self._domain_bounds(node.right)
            if node.op == "union":
                if kl != kr and ll <= hl and lr <= hr:
                    self.refuse(node, "its values mix categorical strings and numbers")
                return (kl if ll <= hl else kr), min(ll, lr), max(hl, hr)
            if node.op == "intersection":
                return kl, max(ll, lr), min(hl, hr)
            return kl, ll, hl
        if isinstance(node, ir.IfDomain):
            kt, lt, ht = self._domain_bounds(node.then)
            ke, le, he = self._domain_bounds(node.orelse)
            if kt != ke and lt <= ht and le <= he:
                self.refuse(node, "its values mix categorical strings and numbers")
            return (kt if lt <= ht else ke), min(lt, le), max(ht, he)
        if isinstance(node, ir.Closure):
            table, kind = self._closure_table(node)
            values = [row[-1] for row in table]
            return kind, (min(values) if values else 1), (max(values) if values else 0)
        self.refuse(node, f"{type(node).__name__} domains have no CP-SAT lowering")

    def _range_part(self, expr, node) -> Val:
        v, _ = self.lower(expr)
        if v.kind == "str":
            self.refuse(node, "range bounds must be integers, not categorical values")
        if v.kind == "rat":
            self.refuse(node, "a range bound may be a fraction", hint="use // for integer division")
        return self.as_int(v, node)

    def _closure_table(self, node: ir.Closure):
        """(rows of allowed (inputs..., value) codes, kind of the values), from the closure's
        shared table (`solverspace.closures`: values as the user sees them)."""
        cached = self.domain_memo.get(("closure", node.name))
        if cached is not None:
            return cached
        try:
            table = self.model.closures.table(node)
        except ClosureTableError as exc:
            self.refuse(node, exc.message, hint=exc.hint)
        for dep, values in zip(node.deps, table.inputs):
            if any(type(v) not in (int, bool, str) for v in values):
                self.refuse(node, f"its input {dep!r} may be a fraction")

        def code(v):
            return self.codes(v) if type(v) is str else int(v)
        rows = [(*map(code, combo), code(v)) for combo, values in table.rows.items() for v in values]
        result = (rows, self.model.kinds.of(node.name) or "int")
        self.domain_memo[("closure", node.name)] = result
        return result

    # ---------------------------------------------------------------------------- domains
    def _domain(self, name: str):
        """(membership literal, definedness literal) of parameter `name`'s domain."""
        if name not in self.domain_memo:
            p = self.model.parameter[name]
            with self._item("parameter", name, p.line):
                x = self.param(name)
                member, ok = self._member(p.domain, x, True, p)
                self.domain_memo[name] = (member, ok)
        return self.domain_memo[name]

    def domain_defined(self, name: str):
        """Literal: the domain of parameter `name` evaluates without an undefined operation
        (lowered without the parameter's own variable)."""
        key = ("defined", name)
        if key not in self.domain_memo:
            p = self.model.parameter[name]
            with self._item("parameter", name, p.line):
                self.domain_memo[key] = self._defined(p.domain)
        return self.domain_memo[key]

    def _defined(self, node: ir.Domain):
        if isinstance(node, ir.Range):
            return self.lit_and([self.lower(e)[1] for e in (node.start, node.stop, node.step)])
        if isinstance(node, ir.Values):
            return self.lit_and([self.lower(e)[1] for e in node.items])
        if isinstance(node, ir.SetOp):
            return self.lit_and([self._defined(node.left), self._defined(node.right)])
        if isinstance(node, ir.IfDomain):
            c, okc = self.lower(node.cond)
            cond = self.truth(c)
            return self.lit_and([okc, self.lit_implies(cond, self._defined(node.then)),
                                 self.lit_implies(self.lit_not(cond), self._defined(node.orelse))])
        return True

    def require_domain(self, name: str, enforce=()):
        """Post: parameter `name` lies in its domain, which is defined."""
        p = self.model.parameter[name]
        with self._item("parameter", name, p.line):
            x = self.param(name)
            if not p.depends_on and not isinstance(p.domain, ir.Closure):
                shape = self._domain_shape(p.domain, p)
                if shape[3] is not None:
                    values = shape[3]
                    if isinstance(values, range) and values.step != 1 and domain_size(values) > EXPLICIT_DOMAIN:
                        pass
                    else:
                        if not values:
                            self.assert_lit(False, enforce)
                        elif enforce:
                            self.enforce(self.cp.add_linear_expression_in_domain(
                                x.expr, _cp_domain(values, self.codes)), enforce)
                        return  # the variable's domain is the parameter's domain
            if isinstance(p.domain, ir.Range) and not enforce:
                self._require_range(p.domain, x, p)
                return
            if isinstance(p.domain, ir.Closure):
                rows, _ = self._closure_table(p.domain)
                deps = [self.lower(ir.Ref(d))[0].expr for d in p.domain.deps]
                self.enforce(self.cp.add_allowed_assignments([*deps, x.expr], rows), enforce)
                return
            member, ok = self._domain(name)
            self.assert_lit(ok, enforce)
            self.assert_lit(member, enforce)

    def _require_range(self, node: ir.Range, x: Val, p):
        """Membership in a range, posted directly: x = start + step*k with 0 <= k."""
        (start, oks), (stop, okt), (step, okp) = (self.lower(e) for e in (node.start, node.stop, node.step))
        for ok in (oks, okt, okp):
            self.assert_lit(ok)
        start, stop, step = (self._range_part(e, node) for e in (node.start, node.stop, node.step))
        if step.lo >= 1 or step.hi <= -1:
            positive = step.lo >= 1
            self._record_step_error(step, True, node, p)
            if positive:
                self.post_relation(x, ">=", start)
                self.post_relation(x, "<", stop)
            else:
                self.post_relation(x, "<=", start)
                self.post_relation(x, ">", stop)
            if step.constant and abs(step.lo) == 1:
                return
            span = (x.hi - start.lo) if positive else (start.hi - x.lo)
            kmax = max(0, span // min(abs(step.lo), abs(step.hi)))
            first = 1 if node.start == node.step else 0 if start.constant and start.lo == 0 else None
            if first is not None and isinstance(x.expr, cp_model.IntVar) and isinstance(step.expr, cp_model.IntVar):
                # x = step * j: remember it, so that `x // step` is j (see floordiv)
                j = Val("int", self.new_int(first, kmax + first, f"{p.name}_multiple", node), first, kmax + first)
                self.cp.add_multiplication_equality(x.expr, [step.expr, j.expr])
                self.multiples[(x.expr.index, step.expr.index)] = j
                return
            k = Val("int", self.new_int(0, kmax, f"{p.name}_index", node), 0, kmax)
            offset = self.mul(step, k, node)
            self.cp.add(x.expr == _add(start.expr, offset.expr))
            return
        member, ok = self._member(node, x, True, p)
        self.assert_lit(ok)
        self.assert_lit(member)

    def _record_step_error(self, step: Val, reach, node, p):
        zero = self.relation(step, "==", _const_int(0), "zero_step")
        lit = self.lit_and([reach, zero])
        if lit is not False:
            self.errors.append((lit, p.name, f"parameter {p.name!r}: range step is 0 in `{to_source(node)}`"))

    def _member(self, node: ir.Domain, x: Val, reach, p) -> tuple[object, object]:
        """(literal: x is in the domain, literal: the domain is defined), for domains reached under
        the literal `reach` (only the chosen branch of a conditional domain is evaluated)."""
        if isinstance(node, ir.Range):
            lowered = [self.lower(e) for e in (node.start, node.stop, node.step)]
            ok = self.lit_and([k for _, k in lowered])
            start, stop, step = (self._range_part(e, node) for e in (node.start, node.stop, node.step))
            if x.kind == "str":
                return False, ok
            self._record_step_error(step, self.lit_and([reach, ok]), node, p)
            positive = self.relation(step, ">", _const_int(0), "step_positive")
            negative = self.relation(step, "<", _const_int(0), "step_negative")
            up = self.lit_and([positive, self.relation(x, ">=", start), self.relation(x, "<", stop)])
            down = self.lit_and([negative, self.relation(x, "<=", start), self.relation(x, ">", stop)])
            inside = self.lit_or([up, down])
            if step.constant and abs(step.lo) == 1:
                return inside, ok
            offset = Val("int", _sub(x.expr, start.expr), x.lo - start.hi, x.hi - start.lo)
            remainder, _ = self.floordiv(offset, step, node, "%")
            divisible = self.relation(remainder, "==", _const_int(0), "divisible")
            return self.lit_and([inside, divisible]), ok
        if isinstance(node, ir.Values):
            lowered = [self.lower(item) for item in node.items]
            ok = self.lit_and([k for _, k in lowered])
            hits = []
            for v, _ in lowered:
                if v.kind == "rat":
                    self.refuse(node, "a parameter value may be a fraction", hint="use // for integer division")
                hits.append(self.compare("==", x, v, node))
            return self.lit_or(hits), ok
        if isinstance(node, ir.SetOp):
            ml, okl = self._member(node.left, x, reach, p)
            mr, okr = self._member(node.right, x, reach, p)
            ok = self.lit_and([okl, okr])
            if node.op == "union":
                return self.lit_or([ml, mr]), ok
            if node.op == "intersection":
                return self.lit_and([ml, mr]), ok
            return self.lit_and([ml, self.lit_not(mr)]), ok
        if isinstance(node, ir.IfDomain):
            c, okc = self.lower(node.cond)
            cond = self.truth(c)
            mt, okt = self._member(node.then, x, self.lit_and([reach, okc, cond]), p)
            me, oke = self._member(node.orelse, x, self.lit_and([reach, okc, self.lit_not(cond)]), p)
            member = self.lit_or([self.lit_and([cond, mt]), self.lit_and([self.lit_not(cond), me])])
            ok = self.lit_and([okc, self.lit_implies(cond, okt), self.lit_implies(self.lit_not(cond), oke)])
            return member, ok
        if isinstance(node, ir.Closure):
            rows, _ = self._closure_table(node)
            deps = [self.lower(ir.Ref(d))[0].expr for d in node.deps]
            member = self.new_bool("closure_member")
            self.cp.add_allowed_assignments([*deps, x.expr], rows).only_enforce_if(member)
            self.cp.add_forbidden_assignments([*deps, x.expr], rows).only_enforce_if(self.lit_not(member))
            return member, True
        self.refuse(node, f"{type(node).__name__} domains have no CP-SAT lowering")

    # ---------------------------------------------------------------------------- values
    def decode(self, name: str, value: int):
        """A parameter's value as the user sees it (categorical codes decoded)."""
        if self.params[name].kind == "str":
            return self.codes.decode(value)
        return value

    def value_of(self, val: Val, solver) -> object:
        """The Python value of a lowered Val in a solver's solution."""
        def get(expr):
            return expr if isinstance(expr, (int, bool)) else solver.value(expr)
        if val.kind == "rat":
            den = get(val.den)
            v = Fraction(get(val.expr), den) if den else None
            return int(v) if v is not None and v.denominator == 1 else v
        if val.kind == "bool":
            return bool(get(val.expr))
        if val.kind == "str":
            return self.codes.decode(get(val.expr))
        return get(val.expr)


class _Context:
    def __init__(self, lowering, where):
        self.lowering, self.where_ = lowering, where

    def __enter__(self):
        self.lowering.where.append(self.where_)

    def __exit__(self, *exc):
        self.lowering.where.pop()
        return False


# -------------------------------------------------------------------------------- small helpers
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _decide(op, lo, hi):
    """Truth of `d op 0` for every d in [lo, hi], or None when it depends."""
    checks = {
        "<": (hi < 0, lo >= 0), "<=": (hi <= 0, lo > 0), ">": (lo > 0, hi <= 0),
        ">=": (lo >= 0, hi < 0), "==": (lo == hi == 0, lo > 0 or hi < 0), "!=": (lo > 0 or hi < 0, lo == hi == 0),
    }
    always, never = checks[op]
    if always:
        return True
    if never:
        return False
    return None


def _as_linear(expr):
    return int(expr) if isinstance(expr, bool) else expr


def _linear(a, op, b):
    a, b = _as_linear(a), _as_linear(b)
    if isinstance(a, int) and isinstance(b, int):
        raise AssertionError("constant relations are decided before posting")
    if isinstance(a, int):  # keep a CP-SAT expression on the left
        a, b, op = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
    return {"<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
            "==": lambda: a == b, "!=": lambda: a != b}[op]()


def _add(a, b):
    a, b = _as_linear(a), _as_linear(b)
    if isinstance(b, int) and b == 0:
        return a
    if isinstance(a, int) and a == 0:
        return b
    return a + b


def _sub(a, b):
    a, b = _as_linear(a), _as_linear(b)
    if isinstance(b, int) and b == 0:
        return a
    return a - b


def _neg(a):
    a = _as_linear(a)
    return -a


def _scale(v: Val, c: int) -> Val:
    expr = _as_linear(v.expr)
    if c == 0:
        return _const_int(0)
    if c == 1:
        return Val("int", expr, v.lo, v.hi)
    lo, hi = sorted((v.lo * c, v.hi * c))
    return Val("int", expr * c, lo, hi)


def _rat(num: Val, den: Val) -> Val:
    return Val("rat", num.expr, num.lo, num.hi, den.expr, den.lo, den.hi)


def _clamp(v, lo, hi):
    return min(max(v, lo), hi)


def _coded_hull(values, codes: Codes) -> tuple[int, int]:
    """(smallest, largest) code of a constant domain; a range is read from its ends, never
    listed (`range(10**12)` is an interval, not a table)."""
    if isinstance(values, range):
        return (min(values[0], values[-1]), max(values[0], values[-1])) if values else (0, 0)
    coded = [codes(v) if type(v) is str else v for v in values]
    return (min(coded), max(coded)) if coded else (0, 0)


def _cp_domain(values, codes: Codes) -> cp_model.Domain:
    """A CP-SAT domain of a constant value sequence: a step-1 range is one interval."""
    if isinstance(values, range) and abs(values.step) == 1:
        lo, hi = _coded_hull(values, codes)
        return cp_model.Domain(lo, hi)
    return cp_model.Domain.from_values(sorted({codes(v) if type(v) is str else v for v in values}))


# ==================================================================================== backend
class LowerBound(int):
    """A count that a time limit stopped: the true count is at least this. Prints as such."""

    def __str__(self):
        return f"at least {int(self)} (lower bound: stopped by the time limit)"

    def __repr__(self):
        return f"LowerBound({int(self)})"


@dataclass
class CpSatDefaults:
    """Options of the registered backend that the command line may set (`--time-limit`,
    `--workers`); API calls pass them explicitly instead."""

    time_limit: float | None = None
    workers: int | None = None
    seed: int = 0


DEFAULTS = CpSatDefaults()


class CpSatBackend:
    """Counts with CP-SAT (see `translators.cpsat_count`); does not list configurations.

    `time_limit` (seconds, per call) turns a count that does not finish into a `LowerBound`;
    `workers` is the number of solver threads (default: every core)."""

    name = "cpsat"

    def __init__(self, *, time_limit: float | None = None, workers: int | None = None, seed: int | None = None):
        self.time_limit = time_limit
        self.workers = workers
        self.seed = seed

    def options(self) -> dict:
        """Explicit options, else the defaults the command line set."""
        return {"time_limit": DEFAULTS.time_limit if self.time_limit is None else self.time_limit,
                "workers": DEFAULTS.workers if self.workers is None else self.workers,
                "seed": DEFAULTS.seed if self.seed is None else self.seed}

    def count(self, plan, *, strict: bool = False, progress=None, undefined: bool = True):
        """Stats with the exact count (or a `LowerBound` with `exact=False` when the time limit
        stopped it) and the undefined-operation tally the reference enumerator reports for `plan`."""
        from .cpsat_run import count_plan
        return count_plan(plan, strict=strict, progress=progress, undefined=undefined, **self.options())

    def sampler(self, plan, method: str = "cpsat", *, seed: int = 0, progress=None):
        """`cpsat`: exact self-reducibility; `cpsat-xor`: near-uniform XOR cells (one worker by default)."""
        from .cpsat_samplers import CpSatSampler, XorSampler
        if method == "cpsat-xor":
            return XorSampler(plan, self.workers, seed=seed, progress=progress)
        return CpSatSampler(plan, seed=seed, progress=progress, settings=self.options())

    def complete(self, plan, assignment: dict):
        """A valid completion of a partial assignment, or a minimal set of rules against it."""
        from .cpsat_explain import complete as _complete
        options = self.options()
        return _complete(plan, assignment, time_limit=options["time_limit"], workers=options["workers"])

    def best(self, plan, objective: str, *, maximize: bool = True, top: int = 10):
        from .cpsat_best import best as _best
        return _best(plan, objective, maximize=maximize, top=top, **self.options())

    def approximate_count(self, plan, epsilon: float = 0.8, delta: float = 0.2, *, seed: int = 0):
        """ApproxMC2 over random XOR cells (one worker unless `workers` says otherwise)."""
        from .cpsat_count import Options
        from .cpsat_hash import approximate_count
        return approximate_count(plan, epsilon, delta, seed=seed, options=Options(workers=self.workers or 1))

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        raise BackendUnavailableError(
            "the CP-SAT backend counts, checks and optimises but does not list configurations",
            hint="list them with the reference backend (or the compiled C enumerator when it is installed); "
                 "`solverspace best SPACE --maximize EXPR --top K` lists the K best")


def count(space, *, strict: bool = False, progress=None, undefined: bool = True, **options):
    """Count a `Space` (or a `Plan`) with CP-SAT; `options` are `time_limit`, `workers`, `seed`.

    >>> from solverspace import Space
    >>> s = Space.from_source("x = range(-3, 4)\\ny = range(-2, 3)\\nrequire(x // y >= 1)")
    >>> stats = count(s, workers=1)
    >>> stats.count, stats.undefined, stats.exact
    (10, 7, True)
    """
    plan = getattr(space, "plan", space)
    return CpSatBackend(**options).count(plan, strict=strict, progress=progress, undefined=undefined)


def complete(space, assignment: dict, **options):
    """Feasibility of a partial assignment: a valid completion, or a minimal set of constraints
    that together rule it out (see `translators.cpsat_explain.complete`)."""
    from .cpsat_explain import complete as _complete
    return _complete(getattr(space, "plan", space), assignment, **options)


def best(space, objective: str, *, maximize: bool = True, top: int = 10, **options):
    """The `top` best distinct configurations by `objective` (see `translators.cpsat_best.best`)."""
    from .cpsat_best import best as _best
    return _best(getattr(space, "plan", space), objective, maximize=maximize, top=top, **options)
