"""Lower bounds of an objective over the completions of a prefix, as expressions (for C).

`solverspace.analysis.lower_bound.PrefixBound` computes a prefix's bound in Python, with the values of
the prefix at hand. The compiled branch and bound (`translators.c.best`) needs the same bound as
*code*: for each loop level, an IR expression over the names known there (the parameters of
the loops bound so far and the derived values computed there) whose value is at most the
objective on every valid completion. `lower_bound_expr(model, expr, known)` builds it by
interval arithmetic on expressions instead of numbers:

- a subexpression whose names are all known is itself (its exact value);
- a parameter not yet bound ranges over its domain (a `range` with a constant step gives
  `[start.lo, stop.hi - 1]`, its ends bounded the same way; a value list the extremes of its
  items); a derived value not yet computed over its expression's interval; each met with its
  global interval (`Bounds`), which also gives every operand its sign;
- `+ - * /`, unary minus, `min`, `max`, `//` of non-negative by positive, `**` of a
  non-negative base, and conditionals follow the interval rules with the ends as expressions
  (`Min`/`Max` of the corner products where the signs are not known);
- anything else (`%`, `abs`, comparisons...) takes its global interval: constant, sound, loose.

`None` stands for an infinite end: a bound of `None` cannot prune. Soundness does not need the
ends to be ordered or the completions to exist: where a prefix has no valid completion any value
is a bound. An exact subexpression that is undefined for a prefix (a division by zero) makes the
bound undefined there; the C code then does not prune (sound; never an error).
"""
from __future__ import annotations

from fractions import Fraction

from solverspace.lang import ir
from solverspace.lang.bounds import INF

Pair = tuple  # (lo, hi): IR expressions or None (infinite)

#: A bound expression larger than this (in nodes) is replaced by the global interval: nested
#: corner rules multiply sizes, and a bound costs time at every visited prefix.
MAX_NODES = 400


def lower_bound_expr(model, expr: ir.Expr, known: frozenset[str]) -> ir.Expr | None:
    """An IR expression over `known` names, at most `expr` on every valid completion
    (None: no finite bound)."""
    return _Symbolic(model, known).visit(expr)[0]


def constant(value) -> ir.Expr | None:
    """An exact number as IR (a Fraction as `num / den`); an infinite end as None."""
    if value in (INF, -INF):
        return None
    if isinstance(value, Fraction) and value.denominator != 1:
        return ir.BinOp("/", ir.Const(value.numerator), ir.Const(value.denominator))
    return ir.Const(int(value))


def _fold(items, pick, op) -> ir.Expr | None:
    """`pick` (min or max) of IR expressions, constants folded; None if any item is None."""
    if any(i is None for i in items):
        return None
    numbers = [i.value for i in items if isinstance(i, ir.Const) and type(i.value) is int]
    rest = []
    for item in items:
        if not (isinstance(item, ir.Const) and type(item.value) is int) and item not in rest:
            rest.append(item)
    if numbers:
        rest.append(ir.Const(pick(numbers)))
    return rest[0] if len(rest) == 1 else op(tuple(rest))


def lowest(*items):
    return _fold(items, min, ir.Min)


def highest(*items):
    return _fold(items, max, ir.Max)


def _drop_none(items):
    return [i for i in items if i is not None]


def _binary(op, a, b):
    if a is None or b is None:
        return None
    if isinstance(a, ir.Const) and isinstance(b, ir.Const) and op in "+-*":
        x, y = a.value, b.value
        return ir.Const(x + y if op == "+" else x - y if op == "-" else x * y)
    return ir.BinOp(op, a, b)


def _size(node) -> int:
    return sum(1 for _ in ir.walk(node)) if node is not None else 0


class _Symbolic(ir.DomainVisitor):
    backend_name = "the bound"
    domain_walks = ("_domain_",)   # a domain's symbolic (low, high)

    def __init__(self, model, known: frozenset[str]):
        self.model = model
        self.bounds = model.analysis.bounds
        self.known = known
        self.memo: dict[str, Pair] = {}

    def visit(self, node) -> Pair:
        if ir.refs(node) <= self.known and not isinstance(node, ir.Domain):
            return node, node
        lo, hi = super().visit(node)
        if _size(lo) + _size(hi) > MAX_NODES:
            return self.globally(node)
        return lo, hi

    def globally(self, node) -> Pair:
        interval = self.bounds.expr(node)
        if interval.empty:
            return None, None      # never defined: nothing to bound (sound: never prunes)
        return constant(interval.lo), constant(interval.hi)

    unsupported = globally

    def met(self, node) -> Pair:
        """`node`'s pair met with its global interval (so its ends carry the global signs)."""
        lo, hi = self.visit(node)
        if lo is node:
            return lo, hi          # exact: its value lies in its global interval already
        g = self.bounds.expr(node)
        if g.empty:
            return None, None
        glo, ghi = constant(g.lo), constant(g.hi)
        lo = glo if lo is None else lo if glo is None else highest(lo, glo)
        hi = ghi if hi is None else hi if ghi is None else lowest(hi, ghi)
        return lo, hi

    def signs(self, node):
        g = self.bounds.expr(node)
        return (not g.empty and g.lo >= 0), (not g.empty and g.lo > 0), (not g.empty and g.hi < 0)

    # ---------------------------------------------------------------------------- names
    def _visit_Ref(self, n) -> Pair:
        name = n.name
        if name in self.memo:
            return self.memo[name]
        self.memo[name] = self.globally(n)     # a cycle guard; replaced below
        if name in self.model.parameter:
            pair = self.domain(self.model.parameter[name].domain)
        else:
            pair = self.visit(self.model.derived_value[name].expr)
        g = self.bounds.of(name)
        if not g.empty:
            glo, ghi = constant(g.lo), constant(g.hi)
            pair = (glo if pair[0] is None else pair[0] if glo is None else highest(pair[0], glo),
                    ghi if pair[1] is None else pair[1] if ghi is None else lowest(pair[1], ghi))
        self.memo[name] = pair
        return pair

    def domain(self, node) -> Pair:
        return self.dispatch("_domain_", node)

    def _domain_Range(self, node) -> Pair:
        if isinstance(node.step, ir.Const) and type(node.step.value) is int:
            step = node.step.value
            if step >= 1:
                return self.visit(node.start)[0], _binary("-", self.visit(node.stop)[1], ir.Const(1))
            if step <= -1:
                return _binary("+", self.visit(node.stop)[0], ir.Const(1)), self.visit(node.start)[1]
        return None, None

    def _domain_Values(self, node) -> Pair:
        if node.items and not any(isinstance(i, ir.Const) and type(i.value) is str for i in node.items):
            pairs = [self.visit(i) for i in node.items]
            return lowest(*(p[0] for p in pairs)), highest(*(p[1] for p in pairs))
        return None, None

    def _domain_other(self, node) -> Pair:
        return None, None          # other domains: the global interval (met by the caller)
    _domain_SetOp = _domain_IfDomain = _domain_Closure = _domain_other
    _domain_Permutation = _domain_Interleave = _domain_Sequence = _domain_other

    # ---------------------------------------------------------------------------- arithmetic
    def _visit_Const(self, n) -> Pair:
        return n, n

    def _visit_Add(self, n) -> Pair:
        (alo, ahi), (blo, bhi) = self.visit(n.left), self.visit(n.right)
        return _binary("+", alo, blo), _binary("+", ahi, bhi)

    def _visit_Sub(self, n) -> Pair:
        (alo, ahi), (blo, bhi) = self.visit(n.left), self.visit(n.right)
        return _binary("-", alo, bhi), _binary("-", ahi, blo)

    def _visit_Neg(self, n) -> Pair:
        lo, hi = self.visit(n.operand)
        return (None if hi is None else ir.Neg(hi)), (None if lo is None else ir.Neg(lo))

    def _visit_Mul(self, n) -> Pair:
        (alo, ahi), (blo, bhi) = self.met(n.left), self.met(n.right)
        a_nonneg, _, _ = self.signs(n.left)
        b_nonneg, _, _ = self.signs(n.right)
        if a_nonneg and b_nonneg:
            return _binary("*", alo, blo), _binary("*", ahi, bhi)
        return self.corners("*", n, (alo, ahi), (blo, bhi))

    def corners(self, op: str, n, a: tuple, b: tuple) -> Pair:
        """The lowest and highest of `op` at the four corners of the bounds `a` and `b` (those of a
        product or a quotient whose operands may be negative); `globally` where one is unknown."""
        corners = [_binary(op, x, y) for x in a for y in b]
        if any(c is None for c in corners):
            return self.globally(n)
        return lowest(*corners), highest(*corners)

    def _visit_Div(self, n) -> Pair:
        _, b_positive, b_negative = self.signs(n.right)
        if b_negative:       # a / b = -(a / -b)
            return self.visit(ir.Neg(ir.BinOp("/", n.left, ir.Neg(n.right))))
        if not b_positive:
            return self.globally(n)
        (alo, ahi), (blo, bhi) = self.met(n.left), self.met(n.right)
        a_nonneg, _, _ = self.signs(n.left)
        if a_nonneg:
            return (_binary("/", alo, bhi) if bhi is not None else ir.Const(0)), _binary("/", ahi, blo)
        return self.corners("/", n, (alo, ahi), (blo, bhi))

    def _visit_FloorDiv(self, n) -> Pair:
        a_nonneg, _, _ = self.signs(n.left)
        _, b_positive, _ = self.signs(n.right)
        if not (a_nonneg and b_positive):
            return self.globally(n)
        (alo, ahi), (blo, bhi) = self.met(n.left), self.met(n.right)
        lo = _binary("//", alo, bhi) if bhi is not None else ir.Const(0)
        return lo, _binary("//", ahi, blo)

    def _visit_Pow(self, n) -> Pair:
        base_nonneg, _, _ = self.signs(n.left)
        if not base_nonneg:
            return self.globally(n)
        lo, hi = self.met(n.left)
        return _binary("**", lo, n.right), _binary("**", hi, n.right)

    def _visit_Min(self, n) -> Pair:
        pairs = [self.visit(o) for o in n.operands]
        his = _drop_none([p[1] for p in pairs])
        return lowest(*(p[0] for p in pairs)), (lowest(*his) if his else None)

    def _visit_Max(self, n) -> Pair:
        pairs = [self.visit(o) for o in n.operands]
        los = _drop_none([p[0] for p in pairs])
        return (highest(*los) if los else None), highest(*(p[1] for p in pairs))

    def _visit_IfExp(self, n) -> Pair:
        (tlo, thi), (elo, ehi) = self.visit(n.then), self.visit(n.orelse)
        if ir.refs(n.cond) <= self.known:
            return (None if tlo is None or elo is None else ir.IfExp(n.cond, tlo, elo),
                    None if thi is None or ehi is None else ir.IfExp(n.cond, thi, ehi))
        return lowest(tlo, elo), highest(thi, ehi)


__all__ = ["MAX_NODES", "constant", "lower_bound_expr"]
