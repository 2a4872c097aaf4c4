"""Sound bounds of an objective over every valid completion of a partial configuration.

Telamon (seed 003, Section 5) prunes a search tree with a lower bound on the run time of every
configuration below a partially specified one; its authors wrote the bounds by hand. Here they
come from the model: along the plan's loop nest, the parameters of the outer loops (and the
derived values computed there) are known, and every other name ranges over an interval:

- a parameter of an inner loop over its domain's interval, evaluated with what is known (so
  `range(1, 1024 // dim_m + 1)` shrinks once `dim_m` is bound), met with its global bound;
- a derived value over the interval of its expression, met with its global bound.

A subexpression whose names are all known is evaluated exactly (with `/` as an exact
fraction), so a `max` branch, a conditional or a categorical choice is decided as soon as its
inputs are. Interval arithmetic (`solverspace.lang.bounds`) is sound, so the result contains the
objective's value on every valid completion where it is defined: its `lo` is never above the
true minimum (the contract the branch and bound relies on). It is not always tight: `x - x`
over [0, 9] gives [-9, 9].

`PrefixBound(plan, expr).interval(env, depth)`: `env` holds the values of the parameters of
loops 0..depth and of the derived values computed up to there (the reference walk's env);
names of deeper loops that `env` may still hold from an earlier branch are ignored.
`terms(...)` splits the objective at its top (`max` branches, summands) and bounds each part:
the part that sets the bound is the bottleneck (`tune --explain`).
"""
from __future__ import annotations

from solverspace.lang import ir
from solverspace.lang.bounds import EMPTY, EVERYTHING, INF, Bounds, Interval, IntervalAnalysis, point
from solverspace.lang.evaluate import Undefined, compile_expr
from solverspace.lang.printing import to_source


class _Known(IntervalAnalysis):
    """Interval analysis where the names in `known` have exact values (taken from `env`)."""

    def __init__(self, owner: "PrefixBound"):
        super().__init__(owner.lookup, owner.rational)
        self.owner = owner

    def visit(self, node):
        owner = self.owner
        if owner.free(node) <= owner.known:
            try:
                value = owner.compiled(node)(owner.env)
            except Undefined:
                return EMPTY            # evaluated on every completion: none has a defined value
            if type(value) in (str, tuple):
                return EVERYTHING       # a categorical or order value: never used as a number
            return point(int(value) if type(value) is bool else value)
        return super().visit(node)

    def _visit_IfExp(self, n):
        test = self.visit(n.cond)
        if test.empty:
            return EMPTY
        if 0 not in test:
            return self.visit(n.then)
        if test.lo == test.hi == 0:
            return self.visit(n.orelse)
        return self.visit(n.then).hull(self.visit(n.orelse))

    def _extremes(self, n, pick):
        parts = [self.visit(o) for o in n.operands]
        if any(p.empty for p in parts):
            return EMPTY                # every operand is evaluated: one undefined, all undefined
        return Interval(pick(p.lo for p in parts), pick(p.hi for p in parts))

    def _visit_Min(self, n):
        return self._extremes(n, min)

    def _visit_Max(self, n):
        return self._extremes(n, max)


class PrefixBound:
    """Bounds of `expr` over the valid completions of the prefixes of `plan`'s loop nest."""

    def __init__(self, plan, expr: ir.Expr):
        self.plan, self.expr = plan, expr
        model = plan.model
        self.model = model
        self.global_bounds: Bounds = model.analysis.bounds
        self.rational = self.global_bounds.rational
        self.parameters = model.parameter
        self.derived = model.derived_value
        known = {d.name for d in plan.prelude_derived}
        self.known_at: list[frozenset[str]] = []     # names known after loop `depth` is bound
        for level in plan.levels:
            known |= {level.parameter.name} | {d.name for d in level.derived}
            self.known_at.append(frozenset(known))
        self.known_before = frozenset(d.name for d in plan.prelude_derived)
        self._free: dict[int, frozenset[str]] = {}
        self._compiled: dict[int, object] = {}
        reads = self.reads(expr)
        #: per loop: whether binding it can change the bound (it binds a name the objective reads,
        #: directly, through a derived value, or through the domain of a parameter it reads)
        self.moves: list[bool] = [level.parameter.name in reads or any(d.name in reads for d in level.derived)
                                  for level in plan.levels]
        self._partial = _PartialDomains(self)
        self.analysis = _Known(self)
        self.env: dict = {}
        self.known: frozenset[str] = frozenset()
        self.memo: dict[str, Interval] = {}

    # ------------------------------------------------------------------------------ answers
    def interval(self, env: dict, depth: int, expr: ir.Expr | None = None) -> Interval:
        """The interval of `expr` (default: the objective) over the completions of the prefix
        of loops 0..depth (-1: nothing bound). EMPTY: no completion has a defined value."""
        self.env, self.memo = env, {}
        self.known = self.known_at[depth] if depth >= 0 else self.known_before
        return self.analysis.visit(self.expr if expr is None else expr)

    def lower(self, env: dict, depth: int):
        """The objective's lower bound over the completions (INF when there is none)."""
        result = self.interval(env, depth)
        return INF if result.empty else result.lo

    def terms(self, env: dict, depth: int) -> list[tuple[str, Interval]]:
        """The objective's top-level parts (`max`/`min` operands, summands) with their bounds."""
        return [(to_source(part), self.interval(env, depth, part)) for part in top_terms(self.expr)]

    def reads(self, expr: ir.Expr) -> frozenset[str]:
        """Every name the bound of `expr` depends on: its names, the names of the derived values
        it reads, and the names in the domains of the parameters it reads, transitively."""
        seen: set[str] = set()
        todo = [n.name for n in ir.walk(expr) if isinstance(n, ir.Ref)]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            node = self.derived[name].expr if name in self.derived else \
                self.parameters[name].domain if name in self.parameters else None
            if node is not None:
                todo += [n.name for n in ir.walk(node) if isinstance(n, ir.Ref)]
        return frozenset(seen)

    # ------------------------------------------------------------------------------ the analysis's inputs
    def free(self, node) -> frozenset[str]:
        key = id(node)
        if key not in self._free:
            self._free[key] = frozenset(n.name for n in ir.walk(node) if isinstance(n, ir.Ref))
        return self._free[key]

    def compiled(self, node):
        key = id(node)
        if key not in self._compiled:
            self._compiled[key] = compile_expr(node)
        return self._compiled[key]

    def lookup(self, name: str) -> Interval:
        """The interval of a name not known exactly (known ones never reach here as a whole
        `Ref` is evaluated by `_Known.visit`)."""
        if name in self.memo:
            return self.memo[name]
        self.memo[name] = self.global_bounds.of(name)      # a cycle guard; replaced below
        if name in self.parameters:
            parameter = self.parameters[name]
            mine = self._partial.domain(parameter)
        else:
            mine = self.analysis.visit(self.derived[name].expr)
        result = mine.meet(self.global_bounds.of(name))
        self.memo[name] = EMPTY if result.empty else result
        return self.memo[name]


class _PartialDomains(Bounds):
    """`Bounds`' domain rules, with the expressions inside domains bounded by the prefix."""

    def __init__(self, owner: PrefixBound):
        self.model = owner.model
        self.rational = owner.rational
        self.memo = {}
        self.owner = owner

    def expr(self, expr: ir.Expr) -> Interval:
        return self.owner.analysis.visit(expr)


def top_terms(expr: ir.Expr) -> list[ir.Expr]:
    """The parts a bound is made of: the operands of a top-level `max`/`min`, else the
    summands of a top-level sum (through nested `+`), else the expression itself."""
    if isinstance(expr, (ir.Max, ir.Min)):
        return list(expr.operands)
    if isinstance(expr, ir.BinOp) and expr.op == "+":
        return top_terms_of_sum(expr)
    return [expr]


def top_terms_of_sum(expr: ir.Expr) -> list[ir.Expr]:
    if isinstance(expr, ir.BinOp) and expr.op == "+":
        return top_terms_of_sum(expr.left) + top_terms_of_sum(expr.right)
    return [expr]


def bottleneck(terms: list[tuple[str, Interval]], maximize: bool = False) -> str | None:
    """The part whose bound decides the whole: the largest lower bound (for a minimised
    objective; the smallest upper bound for a maximised one)."""
    live = [(text, i) for text, i in terms if not i.empty]
    if not live:
        return None
    if maximize:
        return min(live, key=lambda t: t[1].hi)[0]
    return max(live, key=lambda t: t[1].lo)[0]


__all__ = ["PrefixBound", "bottleneck", "top_terms"]
