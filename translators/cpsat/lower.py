"""Lower a solverspace model to OR-Tools CP-SAT, with DESIGN.md's fixed semantics exactly: the
model's items (parameters, their domains and closure tables, derived values) on top of the
expression lowering.

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
with `==` and `!=`. Closure iterators become table constraints, tabulated in Python for every
combination of their inputs' values. A construct that cannot be lowered raises `CpSatRefusal`,
which names the expression, the item that contains it and its line.

Layering: cpsat.val (Val, Codes, CpSatRefusal) -> cpsat.literals (variables, literals) ->
cpsat.expr (expressions) -> **cpsat.lower** (items, domains: `Lowering`) -> cpsat.solver ->
cpsat.count -> cpsat.run / cpsat.best / cpsat.explain / cpsat.sample / cpsat.hashing -> cpsat.backend (the
backend facade). Nothing here imports a module above it.
"""
from __future__ import annotations

import math

from solverspace.lang import ir
from solverspace.lang.bounds import short_number
from solverspace.core.errors import ClosureTableError
from solverspace.lang.evaluate import Undefined, compile_domain
from solverspace.lang.printing import to_source

from .expr import ExpressionLowering
from .val import (
    EXPLICIT_DOMAIN, LIMIT, Codes, CpSatRefusal, Val, add, coded_hull, const_int, cp_domain, sub)
from .wide import size as domain_size

__all__ = ["Codes", "CpSatRefusal", "EXPLICIT_DOMAIN", "LIMIT", "Lowering", "Val"]


class Lowering(ExpressionLowering, ir.DomainVisitor):
    """Lower the items of one model into one `cp_model.CpModel`, creating parameter variables on
    demand. Lowering is memoised per IR node, so shared subexpressions share variables.

    `codes` (categorical codes) and `bounds` (interval bounds, default `model.analysis.bounds`)
    may be shared between lowerings of one model."""

    #: the walks over domains: an interval, the definedness literal, membership
    domain_walks = ("_bounds_", "_defined_", "_member_")

    # ---------------------------------------------------------------------------- items
    def derived(self, name: str) -> tuple[Val, object]:
        if name not in self.derived_memo:
            d = self.model.derived_value[name]
            with self.item("derived value", name, d.line):
                self.derived_memo[name] = self.lower(d.expr)
        return self.derived_memo[name]

    def param(self, name: str) -> Val:
        """The variable of a parameter, created with the bounds of its domain."""
        if name not in self.params:
            p = self.model.parameter[name]
            with self.item("parameter", name, p.line):
                lo, hi, values = self._domain_shape(p.domain, p)
                kind = self.model.kinds.of(name) or "int"  # one kind analysis for every backend
                if values is not None:
                    var = self._var_from_values(values, name, p.domain)
                    lo, hi = coded_hull(values, self.codes)
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
        code = self.code(value)
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
        for v in coded_hull(values, self.codes):
            if abs(v) > LIMIT:
                self.refuse(node, f"value {short_number(v)} is beyond CP-SAT's 64-bit domains",
                            hint="use the reference backend, which computes with Python integers")
        return self.cp.new_int_var_from_domain(cp_domain(values, self.codes), f"{name}#{next(self.counter)}")

    def _domain_shape(self, node: ir.Domain, p):
        """(lo, hi, constant values or None) of a parameter's domain. (Kinds are
        `model.kinds`': a domain that mixes strings and numbers is refused at load.)"""
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
                return 0, 0, values
        lo, hi = self._domain_bounds(node)
        return lo, hi, None

    def _domain_bounds(self, node) -> tuple[int, int]:
        """A sound interval of the values of a domain node, for any inputs (lo > hi: empty)."""
        return self.dispatch("_bounds_", node)

    def _bounds_Range(self, node):
        start, stop, step = (self._range_part(e, node) for e in (node.start, node.stop, node.step))
        lo, hi = math.inf, -math.inf
        if step.hi >= 1:
            lo, hi = min(lo, start.lo), max(hi, stop.hi - 1)
        if step.lo <= -1:
            lo, hi = min(lo, stop.lo + 1), max(hi, start.hi)
        return (1, 0) if lo > hi else (lo, hi)

    def _bounds_Values(self, node):
        lo, hi = math.inf, -math.inf
        for item in node.items:
            v, _ = self.lower(item)
            if v.kind == "rat":
                self.refuse(item, "a parameter value may be a fraction", hint="use // for integer division")
            lo, hi = min(lo, v.lo), max(hi, v.hi)
        return (1, 0) if lo > hi else (lo, hi)

    def _bounds_SetOp(self, node):
        ll, hl = self._domain_bounds(node.left)
        lr, hr = self._domain_bounds(node.right)
        if node.op == "union":
            return min(ll, lr), max(hl, hr)
        if node.op == "intersection":
            return max(ll, lr), min(hl, hr)
        return ll, hl

    def _bounds_IfDomain(self, node):
        lt, ht = self._domain_bounds(node.then)
        le, he = self._domain_bounds(node.orelse)
        return min(lt, le), max(ht, he)

    def _bounds_Closure(self, node):
        values = [row[-1] for row in self.closure_rows(node)]
        return (min(values) if values else 1), (max(values) if values else 0)

    def _no_lowering(self, node, *args):
        self.refuse(node, f"{type(node).__name__} domains have no CP-SAT lowering")
    # order domains reach CP-SAT as their slots (translators/order_slots.py)
    _bounds_Permutation = _bounds_Interleave = _bounds_Sequence = _no_lowering

    def _range_part(self, expr, node) -> Val:
        v, _ = self.lower(expr)
        if v.kind == "str":
            self.refuse(node, "range bounds must be integers, not categorical values")
        if v.kind == "rat":
            self.refuse(node, "a range bound may be a fraction", hint="use // for integer division")
        return self.as_int(v, node)

    def closure_rows(self, node: ir.Closure) -> list[tuple]:
        """Rows of allowed (inputs..., value) codes of a closure iterator, from its shared table
        (`solverspace.lang.closures`: values as the user sees them)."""
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
        rows = [(*map(self.code, combo), self.code(v)) for combo, values in table.rows.items() for v in values]
        self.domain_memo[("closure", node.name)] = rows
        return rows

    # ---------------------------------------------------------------------------- domains
    def membership(self, name: str):
        """(membership literal, definedness literal) of parameter `name`'s domain (errors that
        its evaluation may raise, a range step of 0, are recorded in `errors`)."""
        if name not in self.domain_memo:
            p = self.model.parameter[name]
            with self.item("parameter", name, p.line):
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
            with self.item("parameter", name, p.line):
                self.domain_memo[key] = self._defined(p.domain)
        return self.domain_memo[key]

    def _defined(self, node: ir.Domain):
        return self.dispatch("_defined_", node)

    def _defined_Range(self, node):
        return self.lit_and([self.lower(e)[1] for e in (node.start, node.stop, node.step)])

    def _defined_Values(self, node):
        return self.lit_and([self.lower(e)[1] for e in node.items])

    def _defined_SetOp(self, node):
        return self.lit_and([self._defined(node.left), self._defined(node.right)])

    def _defined_IfDomain(self, node):
        c, okc = self.lower(node.cond)
        cond = self.truth(c)
        return self.lit_and([okc, self.lit_implies(cond, self._defined(node.then)),
                             self.lit_implies(self.lit_not(cond), self._defined(node.orelse))])

    def _defined_Closure(self, node):   # a closure that cannot be tabulated is refused (closure_rows)
        return True

    def _defined_order(self, node):     # order domains reach CP-SAT as their slots (order_slots.py)
        return True
    _defined_Permutation = _defined_Interleave = _defined_Sequence = _defined_order

    def require_domain(self, name: str, enforce=()):
        """Post: parameter `name` lies in its domain, which is defined."""
        p = self.model.parameter[name]
        with self.item("parameter", name, p.line):
            x = self.param(name)
            if not p.depends_on and not isinstance(p.domain, ir.Closure):
                _, _, values = self._domain_shape(p.domain, p)
                if values is not None:
                    if isinstance(values, range) and values.step != 1 and domain_size(values) > EXPLICIT_DOMAIN:
                        pass
                    else:
                        if not values:
                            self.assert_lit(False, enforce)
                        elif enforce:
                            self.enforce(self.cp.add_linear_expression_in_domain(
                                x.expr, cp_domain(values, self.codes)), enforce)
                        return  # the variable's domain is the parameter's domain
            if isinstance(p.domain, ir.Range) and not enforce:
                self._require_range(p.domain, x, p)
                return
            if isinstance(p.domain, ir.Closure):
                rows = self.closure_rows(p.domain)
                deps = [self.lower(ir.Ref(d))[0].expr for d in p.domain.deps]
                self.enforce(self.cp.add_allowed_assignments([*deps, x.expr], rows), enforce)
                return
            member, ok = self.membership(name)
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
            if first is not None and self.is_var(x.expr) and self.is_var(step.expr):
                # x = step * j: remember it, so that `x // step` is j (see floordiv)
                j = Val("int", self.new_int(first, kmax + first, f"{p.name}_multiple", node), first, kmax + first)
                self.cp.add_multiplication_equality(x.expr, [step.expr, j.expr])
                self.multiples[(x.expr.index, step.expr.index)] = j
                return
            k = Val("int", self.new_int(0, kmax, f"{p.name}_index", node), 0, kmax)
            offset = self.mul(step, k, node)
            self.cp.add(x.expr == add(start.expr, offset.expr))
            return
        member, ok = self._member(node, x, True, p)
        self.assert_lit(ok)
        self.assert_lit(member)

    def _record_step_error(self, step: Val, reach, node, p):
        zero = self.relation(step, "==", const_int(0), "zero_step")
        lit = self.lit_and([reach, zero])
        if lit is not False:
            self.errors.append((lit, p.name, f"parameter {p.name!r}: range step is 0 in `{to_source(node)}`"))

    def _member(self, node: ir.Domain, x: Val, reach, p) -> tuple[object, object]:
        """(literal: x is in the domain, literal: the domain is defined), for domains reached under
        the literal `reach` (only the chosen branch of a conditional domain is evaluated)."""
        return self.dispatch("_member_", node, x, reach, p)

    def _member_Range(self, node, x, reach, p):
        lowered = [self.lower(e) for e in (node.start, node.stop, node.step)]
        ok = self.lit_and([k for _, k in lowered])
        start, stop, step = (self._range_part(e, node) for e in (node.start, node.stop, node.step))
        if x.kind == "str":
            return False, ok
        self._record_step_error(step, self.lit_and([reach, ok]), node, p)
        positive = self.relation(step, ">", const_int(0), "step_positive")
        negative = self.relation(step, "<", const_int(0), "step_negative")
        up = self.lit_and([positive, self.relation(x, ">=", start), self.relation(x, "<", stop)])
        down = self.lit_and([negative, self.relation(x, "<=", start), self.relation(x, ">", stop)])
        inside = self.lit_or([up, down])
        if step.constant and abs(step.lo) == 1:
            return inside, ok
        offset = Val("int", sub(x.expr, start.expr), x.lo - start.hi, x.hi - start.lo)
        remainder, _ = self.floordiv(offset, step, node, "%")
        divisible = self.relation(remainder, "==", const_int(0), "divisible")
        return self.lit_and([inside, divisible]), ok

    def _member_Values(self, node, x, reach, p):
        lowered = [self.lower(item) for item in node.items]
        ok = self.lit_and([k for _, k in lowered])
        hits = []
        for v, _ in lowered:
            if v.kind == "rat":
                self.refuse(node, "a parameter value may be a fraction", hint="use // for integer division")
            hits.append(self.compare("==", x, v, node))
        return self.lit_or(hits), ok

    def _member_SetOp(self, node, x, reach, p):
        ml, okl = self._member(node.left, x, reach, p)
        mr, okr = self._member(node.right, x, reach, p)
        ok = self.lit_and([okl, okr])
        if node.op == "union":
            return self.lit_or([ml, mr]), ok
        if node.op == "intersection":
            return self.lit_and([ml, mr]), ok
        return self.lit_and([ml, self.lit_not(mr)]), ok

    def _member_IfDomain(self, node, x, reach, p):
        c, okc = self.lower(node.cond)
        cond = self.truth(c)
        mt, okt = self._member(node.then, x, self.lit_and([reach, okc, cond]), p)
        me, oke = self._member(node.orelse, x, self.lit_and([reach, okc, self.lit_not(cond)]), p)
        member = self.lit_or([self.lit_and([cond, mt]), self.lit_and([self.lit_not(cond), me])])
        ok = self.lit_and([okc, self.lit_implies(cond, okt), self.lit_implies(self.lit_not(cond), oke)])
        return member, ok

    def _member_Closure(self, node, x, reach, p):
        rows = self.closure_rows(node)
        deps = [self.lower(ir.Ref(d))[0].expr for d in node.deps]
        member = self.new_bool("closure_member")
        self.cp.add_allowed_assignments([*deps, x.expr], rows).only_enforce_if(member)
        self.cp.add_forbidden_assignments([*deps, x.expr], rows).only_enforce_if(self.lit_not(member))
        return member, True
    _member_Permutation = _member_Interleave = _member_Sequence = _no_lowering
