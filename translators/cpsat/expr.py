"""Lower IR expressions to CP-SAT: one `_visit_<Node>` (or `_visit_<Operator>`) method per IR node
and operator (`ir.Visitor` dispatch), and `require`, which posts a condition directly instead of
reifying it where the semantics allow.

Lowering an expression gives a `Val` and a definedness literal `ok` (see `translators.cpsat.lower`
for the rules). Names (`Ref`) are resolved by the item layer above (`param`, `derived`).

Layering: cpsat.val -> cpsat.literals -> **cpsat.expr** -> cpsat.lower -> ... (see
`translators.cpsat.val`).
"""
from __future__ import annotations

import math

from ortools.sat.python import cp_model

from solverspace.lang import ir
from solverspace.lang.bounds import Interval, division_interval, point, short_number

from .literals import LoweringBase
from .val import (
    NEGATE, BeyondDomains, Val, add_vals, as_linear, bool_val, clamp, const_bool, const_int, neg, rat, scale, sub,
    sub_vals)


class ExpressionLowering(LoweringBase):
    """Expressions and assertions over the parameters' variables (`param`) and the derived
    values (`derived`), both provided by the item layer (`cpsat.lower.Lowering`)."""

    def param(self, name: str) -> Val:
        raise NotImplementedError

    def derived(self, name: str) -> tuple[Val, object]:
        raise NotImplementedError

    # ---------------------------------------------------------------------------- arithmetic helpers
    def mul(self, a: Val, b: Val, node) -> Val:
        """Product of two integer Vals."""
        if a.constant:
            return scale(b, a.lo)
        if b.constant:
            return scale(a, b.lo)
        corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
        target = self.new_int(min(corners), max(corners), "mul", node)
        self.cp.add_multiplication_equality(target, [a.expr, b.expr])
        return Val("int", target, min(corners), max(corners))

    def floordiv(self, a: Val, b: Val, node, want: str = "//") -> tuple[Val, object]:
        """Python's `a // b` (want="//") or `a % b` (want="%") for integer Vals, and the literal
        b != 0 (where it is false the result is pinned: the operation is undefined there).

        The intervals are `solverspace.lang.bounds.division_interval`'s (where b != 0), widened to
        hold the pinned value 0: bounds must be sound where the operation is undefined too."""
        nonzero = self.relation(b, "!=", const_int(0), "nonzero")
        a_range, b_range = Interval(a.lo, a.hi), Interval(b.lo, b.hi)
        quotient = division_interval("//", a_range, b_range)
        if quotient.empty:  # the divisor is always 0: always undefined
            return const_int(0), False
        qlo, qhi = quotient.lo, quotient.hi
        remainder = division_interval("%", a_range, b_range).hull(point(0))
        rlo, rhi = remainder.lo, remainder.hi
        if nonzero is not True:
            qlo, qhi = min(qlo, 0), max(qhi, 0)
        if a.constant and b.constant:
            return const_int(a.lo // b.lo if want == "//" else a.lo % b.lo), True
        if b.lo >= 1 and self.is_var(a.expr) and self.is_var(b.expr):
            multiple = self.multiples.get((a.expr.index, b.expr.index))
            if multiple is not None:  # a == b * j exactly (a range stepping by b)
                return (multiple if want == "//" else const_int(0)), True
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
            return Val("int", sub(a.expr, c * q), rlo, rhi), True
        # general signs: a == q*b + r with the remainder's sign following the divisor
        q = self.new_int(qlo, qhi, "floordiv", node)
        product = self.mul(Val("int", q, qlo, qhi), b, node)
        r = self.new_int(rlo, rhi, "mod", node)
        signs = ((self.relation(b, ">", const_int(0), "positive"), True),
                 (self.relation(b, "<", const_int(0), "negative"), False))
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
            self.cp.add(q == clamp(0, qlo, qhi)).only_enforce_if(zero)
            self.cp.add(r == clamp(0, rlo, rhi)).only_enforce_if(zero)
        return (Val("int", q, qlo, qhi) if want == "//" else Val("int", r, rlo, rhi)), nonzero

    @staticmethod
    def is_var(expr) -> bool:
        """Whether a Val's expression is a plain CP-SAT variable (not a constant or a sum)."""
        return isinstance(expr, cp_model.IntVar)

    def select(self, cond, then: Val, orelse: Val, node) -> Val:
        """`then if cond else orelse` for Vals of compatible kinds."""
        if cond is True:
            return then
        if cond is False:
            return orelse
        kinds = {then.kind, orelse.kind}
        if "str" in kinds and kinds != {"str"}:  # reachable: T1 conditions are not kind-checked at load
            self.refuse(node, "its branches mix categorical strings and numbers")
        if kinds == {"bool"}:
            lit = self.new_bool("select")
            for branch, guard in ((then, cond), (orelse, self.lit_not(cond))):
                self.cp.add(lit == as_linear(branch.expr)).only_enforce_if(guard)
            return Val("bool", lit, 0, 1)
        if "rat" in kinds:
            t, e = self.as_rat(then, node), self.as_rat(orelse, node)
            num = self.select(cond, t.numerator, e.numerator, node)
            den = self.select(cond, t.denominator, e.denominator, node)
            return rat(num, den)
        kind = "str" if kinds == {"str"} else "int"
        t = then if kind == "str" else self.as_int(then, node)
        e = orelse if kind == "str" else self.as_int(orelse, node)
        lo, hi = min(t.lo, e.lo), max(t.hi, e.hi)
        target = self.new_int(lo, hi, "select", node)
        self.cp.add(target == as_linear(t.expr)).only_enforce_if(cond)
        self.cp.add(target == as_linear(e.expr)).only_enforce_if(self.lit_not(cond))
        return Val(kind, target, lo, hi)

    # ---------------------------------------------------------------------------- expressions
    def lower(self, node: ir.Expr) -> tuple[Val, object]:
        """(value, definedness literal) of an expression."""
        found = self.memo.get(node)
        if found is None:
            try:
                found = self.memo[node] = self.visit(node)
            except BeyondDomains as beyond:
                self.refuse(node, f"its values or coefficients may reach {short_number(beyond.args[0])}, beyond "
                                  f"CP-SAT's 64-bit domains",
                            hint="use the reference backend (or, for best, --engine bnb or exhaustive), which "
                                 "computes with exact Python numbers")
        return found

    def _visit_Const(self, n):
        v = n.value
        if type(v) is str:
            code = self.codes(v)
            return Val("str", code, code, code), True
        if type(v) is bool:
            return const_bool(v), True
        return const_int(v), True

    def _visit_Ref(self, n):
        if n.name in self.model.parameter:
            return self.param(n.name), True
        if n.name in self.model.derived_value:
            return self.derived(n.name)
        self.refuse(n, f"unknown name {n.name!r}")

    # ------------------------------------------------ arithmetic: one method per operator
    def _operands(self, n):
        """(left, right, both defined) of a binary operator; a categorical operand is refused."""
        (a, oka), (b, okb) = self.lower(n.left), self.lower(n.right)
        ok = self.lit_and([oka, okb])
        if "str" in (a.kind, b.kind):
            self.as_int(a if a.kind == "str" else b, n)
        return a, b, ok

    def _arithmetic(self, n, on_ints, on_fractions):
        """A binary operator: `on_ints(a, b, n)` for integer operands, `on_fractions(a, b, n)`
        when either is a fraction; each gives (value, definedness of the operation)."""
        a, b, ok = self._operands(n)
        if "rat" in (a.kind, b.kind):
            value, defined = on_fractions(self.as_rat(a, n), self.as_rat(b, n), n)
        else:
            value, defined = on_ints(self.as_int(a, n), self.as_int(b, n), n)
        return value, self.lit_and([ok, defined])

    def _visit_Add(self, n):
        return self._arithmetic(n, lambda a, b, _: (add_vals(a, b), True), self._fraction_sum)

    def _visit_Sub(self, n):
        return self._arithmetic(n, lambda a, b, _: (sub_vals(a, b), True), self._fraction_sum)

    def _visit_Mul(self, n):
        return self._arithmetic(n, lambda a, b, node: (self.mul(a, b, node), True), self._fraction_product)

    def _visit_FloorDiv(self, n):
        return self._arithmetic(n, self.floordiv, self._fraction_floordiv)

    def _visit_Mod(self, n):
        return self._arithmetic(n, lambda a, b, node: self.floordiv(a, b, node, "%"), self._fraction_mod)

    def _visit_Div(self, n):
        a, b, ok = self._operands(n)
        value, defined = self._fraction_quotient(self.as_rat(a, n), self.as_rat(b, n), n)
        return value, self.lit_and([ok, defined])

    def _visit_Pow(self, n):
        a, _, ok = self._operands(n)
        return self._power(a, n.right, n), ok

    def _power(self, base: Val, exponent: ir.Expr, node):
        k = exponent.value if isinstance(exponent, ir.Const) else None
        if type(k) is not int or k < 0:
            self.refuse(node, "`**` takes only a non-negative integer constant exponent")
        if base.kind == "rat":
            num = self._int_power(base.numerator, k, node)
            den = self._int_power(base.denominator, k, node)
            return rat(num, den)
        return self._int_power(self.as_int(base, node), k, node)

    def _int_power(self, base: Val, k: int, node) -> Val:
        """base ** k by squaring (log k products); refused before any huge number is computed
        when |base| ** k may leave CP-SAT's domains (every intermediate power is smaller)."""
        if k == 0:
            return const_int(1)
        if k == 1:
            return base
        top = max(abs(base.lo), abs(base.hi))
        if top > 1 and k * math.log2(top) > 64:  # the exact limit is new_int's
            self.refuse(node, f"its values may reach about 2**{int(k * math.log2(top))}, beyond CP-SAT's "
                              f"64-bit domains", hint="use the reference backend, which computes with Python integers")
        if base.constant:
            return const_int(base.lo ** k)
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

    # ------------------------------------------------ exact fractions (`/`): num/den Vals
    def _fraction_sum(self, a: Val, b: Val, node) -> tuple[Val, object]:
        """a + b or a - b (`node.op`) of fractions."""
        combine = add_vals if node.op == "+" else sub_vals
        pa, da, pb, db = a.numerator, a.denominator, b.numerator, b.denominator
        if da.constant and db.constant and da.lo == db.lo:
            return rat(combine(pa, pb), da), True
        left, right = self.mul(pa, db, node), self.mul(pb, da, node)
        return rat(combine(left, right), self.mul(da, db, node)), True

    def _fraction_product(self, a: Val, b: Val, node) -> tuple[Val, object]:
        return rat(self.mul(a.numerator, b.numerator, node), self.mul(a.denominator, b.denominator, node)), True

    def _fraction_quotient(self, a: Val, b: Val, node) -> tuple[Val, object]:
        """a / b, exact: (pa*db) / (da*pb) with the sign moved to the numerator."""
        pa, da, pb, db = a.numerator, a.denominator, b.numerator, b.denominator
        nonzero = self.relation(pb, "!=", const_int(0), "nonzero")
        num, den = self.mul(pa, db, node), self.mul(da, pb, node)
        if den.lo >= 0:
            return rat(num, den), nonzero
        if den.hi <= 0:
            return rat(scale(num, -1), scale(den, -1)), nonzero
        positive = self.relation(den, ">=", const_int(0), "sign")
        num = self.select(positive, num, scale(num, -1), node)
        den = self.select(positive, den, scale(den, -1), node)
        return rat(num, den), nonzero

    def _fraction_floordiv(self, a: Val, b: Val, node) -> tuple[Val, object]:
        """floor(a / b) = (pa*db) // (da*pb), with its definedness."""
        pa, da, pb, db = a.numerator, a.denominator, b.numerator, b.denominator
        self.relation(pb, "!=", const_int(0), "nonzero")  # unused, but it keeps the CP-SAT model as it was
        return self.floordiv(self.mul(pa, db, node), self.mul(da, pb, node), node)

    def _fraction_mod(self, a: Val, b: Val, node) -> tuple[Val, object]:
        """a - b*floor(a/b) = (pa*db - pb*q*da) / (da*db)."""
        q, defined = self._fraction_floordiv(a, b, node)
        pa, da, pb, db = a.numerator, a.denominator, b.numerator, b.denominator
        left = self.mul(pa, db, node)
        right = self.mul(self.mul(pb, q, node), da, node)
        return rat(sub_vals(left, right), self.mul(da, db, node)), defined

    # ------------------------------------------------ other nodes
    def _visit_Neg(self, n):
        a, ok = self.lower(n.operand)
        if a.kind == "rat":
            return Val("rat", neg(a.expr), -a.hi, -a.lo, a.den, a.dlo, a.dhi), ok
        a = self.as_int(a, n)
        return Val("int", neg(a.expr), -a.hi, -a.lo), ok

    def _abs(self, a: Val, node) -> Val:
        if a.lo >= 0:
            return a
        if a.hi <= 0:
            return scale(a, -1)
        hi = max(-a.lo, a.hi)
        target = self.new_int(0, hi, "abs", node)
        self.cp.add_abs_equality(target, a.expr)
        return Val("int", target, 0, hi)

    def _visit_Abs(self, n):
        a, ok = self.lower(n.operand)
        if a.kind == "rat":
            num = self._abs(a.numerator, n)
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
                better = self._compare_fractions(v, "<" if smallest else ">", best, n)
                best = self.select(better, v, best, n)
            return best, ok
        ints = [self.as_int(v, n) for v in vals]
        if len(ints) == 1:
            return ints[0], ok
        lo = (min if smallest else max)(v.lo for v in ints)
        hi = (min if smallest else max)(v.hi for v in ints)
        if all(v.constant for v in ints):
            return const_int(lo), ok
        target = self.new_int(lo, hi, "min" if smallest else "max", n)
        (self.cp.add_min_equality if smallest else self.cp.add_max_equality)(target, [v.expr for v in ints])
        return Val("int", target, lo, hi), ok

    def _visit_Min(self, n):
        return self._extremum(n, True)

    def _visit_Max(self, n):
        return self._extremum(n, False)

    def _cross(self, a: Val, b: Val, node) -> tuple[Val, Val]:
        """(a.num * b.den, b.num * a.den): fractions with positive denominators compare as these."""
        left = self.mul(a.numerator, b.denominator, node)
        right = self.mul(b.numerator, a.denominator, node)
        return left, right

    def _compare_fractions(self, a: Val, op: str, b: Val, node):
        """Literal for a op b on fractions with positive denominators: cross-multiply."""
        left, right = self._cross(a, b, node)
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
            return self._compare_fractions(self.as_rat(a, node), op, self.as_rat(b, node), node)
        return self.relation(self.as_int(a, node), op, self.as_int(b, node))

    def _visit_Compare(self, n):
        (a, oka), (b, okb) = self.lower(n.left), self.lower(n.right)
        return bool_val(self.compare(n.op, a, b, n)), self.lit_and([oka, okb])

    def _visit_Not(self, n):
        a, ok = self.lower(n.operand)
        return bool_val(self.lit_not(self.truth(a))), ok

    def _short_circuit(self, n, conjunction: bool):
        oks, truths = [], []
        for operand in n.operands:
            value, ok = self.lower(operand)
            # operand i is evaluated only if the ones before it did not decide the result
            decided_before = self.lit_or([t if not conjunction else self.lit_not(t) for t in truths])
            oks.append(self.lit_or([decided_before, ok]))
            truths.append(self.truth(value))
        value = self.lit_and(truths) if conjunction else self.lit_or(truths)
        return bool_val(value), self.lit_and(oks)

    def _visit_And(self, n):
        return self._short_circuit(n, True)

    def _visit_Or(self, n):
        return self._short_circuit(n, False)

    def _visit_IfExp(self, n):
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
            op = node.op if truth else NEGATE[node.op]
            if op == "==" and self._require_divisible(node, enforce):
                return
            (a, oka), (b, okb) = self.lower(node.left), self.lower(node.right)
            self.assert_lit(oka, enforce)
            self.assert_lit(okb, enforce)
            if {a.kind, b.kind} <= {"int", "bool"}:
                self.post_relation(self.as_int(a, node), op, self.as_int(b, node), enforce)
                return
            if "rat" in (a.kind, b.kind) and "str" not in (a.kind, b.kind):
                left, right = self._cross(self.as_rat(a, node), self.as_rat(b, node), node)
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
        nonzero = self.relation(y, "!=", const_int(0), "nonzero")
        self.assert_lit(self.lit_and([okx, oky, nonzero]), enforce)
        if nonzero is False:
            return True
        # an exact quotient is an integer between the real quotients at the corners
        quotient = division_interval("//", Interval(x.lo, x.hi), Interval(y.lo, y.hi)).hull(point(0))
        klo, khi = quotient.lo, quotient.hi
        if x.lo >= 0 and y.lo >= 1:
            klo, khi = 0, x.hi // y.lo
        k = Val("int", self.new_int(klo, khi, "quotient", mod[0]), klo, khi)
        product = self.mul(y, k, mod[0])
        self.enforce(self.cp.add(as_linear(x.expr) == product.expr), enforce)
        active = self.lit_and(list(enforce) + [nonzero])
        if active is not True:  # keep k determined where the equation is not enforced
            self.cp.add(k.expr == clamp(0, klo, khi)).only_enforce_if(self.lit_not(active))
        return True
