"""Optimizations the C enumerator applies, each proven from the model and each switchable.

- `break`: a constraint whose rejection can only switch from false to true as the loop advances
  (monotone in the loop variable, proven by a sign/monotonicity analysis that uses the interval
  bounds) ends the loop instead of skipping one value.
- `solve`: a parameter fixed by an equality of the constraint (`k * v == e`, `v == e`, with `k`
  proven non-zero) is computed, checked for divisibility and domain membership, instead of looped over.
- `hoist`: when only counting, parameters nothing depends on are not looped over: the product
  of their domain sizes is added instead of 1.
- `split`: when only counting, loops that fall into independent groups once the outer loops are
  bound (GEMM's A-reader and B-reader pairs) are counted group by group and multiplied.

- `tighten`: a constraint that bounds a multiple of the loop variable from above
  (`k * v <= e` or `k * v < e` once derived values are inlined, `k > 0` proven, `k` and `e`
  known before the loop) lowers the stop of an ascending range: `threads_per_block > 1024`
  with `threads_per_block = dim_m * dim_n` makes the `dim_n` loop stop at `1024 // dim_m`.

None of these changes the valid set; they change how many candidates are visited (and so the
undefined-operation tally, which the literal mode reports exactly as the reference does).
"""
from __future__ import annotations


from typing import TYPE_CHECKING

from solverspace.core.records import MutableRecord, Record
from solverspace.lang import ir
from solverspace.analysis.plan import Plan
from solverspace.core.errors import SolverspaceError

if TYPE_CHECKING:
    from solverspace.lang.bounds import Bounds
    from solverspace.lang.dag import DAG

ALL_OPTIMIZATIONS = ("break", "tighten", "solve", "hoist", "split")


class Options(Record):
    __match_args__ = ("enabled",)

    def __init__(self, enabled: frozenset[str] = frozenset(ALL_OPTIMIZATIONS)):
        object.__setattr__(self, "enabled", enabled)

    @classmethod
    def literal(cls) -> "Options":
        return cls(frozenset())

    @classmethod
    def parse(cls, literal: bool = False, disable=(), only=None) -> "Options":
        for name in (*disable, *(only or ())):
            if name not in ALL_OPTIMIZATIONS:
                raise SolverspaceError(f"unknown optimization {name!r}", hint=f"known: {', '.join(ALL_OPTIMIZATIONS)}")
        if literal:
            return cls.literal()
        chosen = set(only) if only is not None else set(ALL_OPTIMIZATIONS)
        return cls(frozenset(chosen - set(disable)))

    def __contains__(self, name):
        return name in self.enabled


class LevelPlan(MutableRecord):
    """What the C code does at one loop level: `breaks` (constraints that end the loop when they
    reject), `tighten` ((coefficient, bound, strict, constraint): k*v <= bound), `solve`
    ((coefficient expr or None, value expr, constraint))."""

    __match_args__ = ("index", "breaks", "tighten", "solve")

    def __init__(self, index: int, breaks: list | None = None, tighten: list | None = None, solve: tuple | None = None):
        self.index = index
        self.breaks = [] if breaks is None else breaks
        self.tighten = [] if tighten is None else tighten
        self.solve = solve


class Monotonicity(ir.Visitor):
    """Direction in which an expression moves when one parameter grows: +1, -1, 0, or None."""

    def __init__(self, model, bounds: Bounds, variable: str, dag: DAG):
        self.model = model
        self.bounds = bounds
        self.variable = variable
        self.dag = dag

    def depends(self, node) -> bool:
        for name in ir.refs(node):
            if name == self.variable or self.variable in self.dag.parameter_inputs.get(name, ()):
                return True
        return False

    def sign(self, node):
        i = self.bounds.expr(node)
        if i.empty:
            return None
        if i.lo >= 0:
            return 1
        if i.hi <= 0:
            return -1
        return None

    def of(self, node):
        if not self.depends(node):
            return 0
        return self.visit(node)

    def unsupported(self, node):
        return None  # no direction known

    def _visit_Ref(self, n):
        if n.name == self.variable:
            return 1
        if n.name in self.model.derived_value:
            return self.of(self.model.derived_value[n.name].expr)
        return None

    def operands(self, n):
        """The directions of both operands, or None when either is unknown."""
        a, b = self.of(n.left), self.of(n.right)
        return None if a is None or b is None else (a, b)

    def _visit_Add(self, n):
        both = self.operands(n)
        return None if both is None else _combine(*both)

    def _visit_Sub(self, n):
        both = self.operands(n)
        return None if both is None else _combine(both[0], -both[1])

    def _visit_Mul(self, n):
        both = self.operands(n)
        if both is None:
            return None
        a, b = both
        if a == 0:
            s = self.sign(n.left)
            return None if s is None else s * b
        if b == 0:
            s = self.sign(n.right)
            return None if s is None else s * a
        if a == b == 1 and self.sign(n.left) == 1 and self.sign(n.right) == 1:
            return 1
        return None

    def _division(self, n):
        both = self.operands(n)
        if both is None:
            return None
        a, b = both
        divisor = self.bounds.expr(n.right)
        if b == 0 and (divisor.lo > 0 or divisor.hi < 0):
            return a if divisor.lo > 0 else -a
        if a == 0 and self.sign(n.left) == 1 and divisor.lo > 0:
            return -b
        return None

    _visit_FloorDiv = _visit_Div = _division

    def _visit_BinOp(self, n):  # % and **: no direction known
        self.operands(n)
        return None

    def _visit_Neg(self, n):
        a = self.of(n.operand)
        return None if a is None else -a

    def _visit_Abs(self, n):
        s, a = self.sign(n.operand), self.of(n.operand)
        return None if s is None or a is None else s * a

    def _minmax(self, n):
        result = 0
        for o in n.operands:
            result = _combine(result, self.of(o))
            if result is None:
                return None
        return result

    _visit_Min = _visit_Max = _visit_And = _visit_Or = _minmax

    def difference(self, n):
        """The direction of left - right of a comparison."""
        return _combine(self.of(n.left), _negate(self.of(n.right)))

    def _visit_Gt(self, n):
        return self.difference(n)

    def _visit_Lt(self, n):
        return _negate(self.difference(n))

    _visit_GtE, _visit_LtE = _visit_Gt, _visit_Lt

    def _visit_Eq(self, n):
        return 0 if self.difference(n) == 0 else None  # moves (or unknown): no direction

    _visit_NotEq = _visit_Eq

    def _visit_Not(self, n):
        return _negate(self.of(n.operand))


def _negate(x):
    return None if x is None else -x


def _combine(a, b):
    if a is None or b is None:
        return None
    if a == 0:
        return b
    if b == 0 or a == b:
        return a
    return None


def range_direction(bounds: Bounds, domain) -> int:
    """+1 for a range whose step is proven positive, -1 negative, 0 otherwise."""
    if not isinstance(domain, ir.Range):
        return 0
    step = bounds.expr(domain.step)
    if step.lo >= 1:
        return 1
    if step.hi <= -1:
        return -1
    return 0


def analyse(plan: Plan, options: Options) -> list[LevelPlan]:
    """Per level: which constraints break the loop, which tighten its stop, and whether the
    variable is solved (from the plan's shared analysis: bounds and DAG)."""
    bounds, dag = plan.analysis.bounds, plan.analysis.dag
    result = []
    for index, level in enumerate(plan.levels):
        lp = LevelPlan(index)
        variable = level.parameter.name
        if "break" in options:
            direction = range_direction(bounds, level.parameter.domain)
            if direction:
                mono = Monotonicity(plan.model, bounds, variable, dag)
                for c in level.constraints:
                    rejection = c.expr if c.rejects else ir.Not(c.expr)
                    if mono.of(rejection) == direction:
                        lp.breaks.append(c)
        if "tighten" in options and range_direction(bounds, level.parameter.domain) == 1:
            mono = Monotonicity(plan.model, bounds, variable, dag)
            earlier = set(plan.order[:index])
            for c in level.constraints:
                for found in _upper_bounds(c, variable, mono, bounds, plan.model, dag, earlier):
                    lp.tighten.append((*found, c))
        if "solve" in options and isinstance(level.parameter.domain, (ir.Range, ir.Values)):
            mono = Monotonicity(plan.model, bounds, variable, dag)
            for c in level.constraints:
                found = _equality(c, variable, mono, bounds)
                if found:
                    lp.solve = (*found, c)
                    break
        result.append(lp)
    return result


def _equality(constraint, variable, mono: Monotonicity, bounds):
    """(coefficient or None, value) when the constraint requires `coefficient * v == value`."""
    accept = constraint.accept_expr
    conjuncts = _conjuncts(accept)
    for part in conjuncts:
        if not (isinstance(part, ir.Compare) and part.op == "=="):
            continue
        if mono.model.kinds.decided(part) is not None:  # a string never equals an integer: nothing to solve
            continue
        for side, other in ((part.left, part.right), (part.right, part.left)):
            if mono.depends(other):
                continue
            if side == ir.Ref(variable):
                return None, other
            if isinstance(side, ir.BinOp) and side.op == "*":
                for v_side, k_side in ((side.left, side.right), (side.right, side.left)):
                    if v_side == ir.Ref(variable) and not mono.depends(k_side):
                        k = bounds.expr(k_side)
                        if k.lo > 0 or k.hi < 0:
                            return k_side, other
    return None


_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _upper_bounds(constraint, variable, mono: Monotonicity, bounds, model, dag, earlier):
    """(k or None, e, strict) for each conjunct of the acceptance condition that reads
    `k * v <= e` (strict: `<`), with k > 0 proven and k, e computable before v's loop and free
    of division (so evaluating them early cannot add an undefined operation)."""
    inline = {d.name: d.expr for d in model.derived if variable in dag.parameter_inputs[d.name]}

    def expand(node):
        previous = None
        while previous != node:
            previous, node = node, ir.substitute(node, inline)
        return node

    def known_early(node):
        if any(isinstance(n, ir.BinOp) and n.op in ("//", "%", "/") for n in ir.walk(node)):
            return False
        return all((name in earlier) or (name in model.derived_value and dag.parameter_inputs[name] <= earlier)
                   for name in ir.refs(node))

    found = []
    for part in _conjuncts(constraint.accept_expr):
        if not isinstance(part, ir.Compare) or part.op not in ("<", "<=", ">", ">="):
            continue
        left, right, op = expand(part.left), part.right, part.op
        if op in (">", ">="):
            left, right, op = expand(part.right), part.left, {">": "<", ">=": "<="}[op]
        if mono.depends(right) or not known_early(right):
            continue
        v = ir.Ref(variable)
        if left == v:
            found.append((None, right, op == "<"))
            continue
        factors = _factors(left)
        if factors.count(v) == 1 and len(factors) > 1:
            rest = [f for f in factors if f != v]
            k_side = rest[0]
            for f in rest[1:]:
                k_side = ir.BinOp("*", k_side, f)
            if not mono.depends(k_side) and known_early(k_side) and bounds.expr(k_side).lo >= 1:
                found.append((k_side, right, op == "<"))
    return found


def _factors(node) -> list:
    """The factors of a product `a * b * c` (a non-product is its own single factor)."""
    if isinstance(node, ir.BinOp) and node.op == "*":
        return _factors(node.left) + _factors(node.right)
    return [node]


def _conjuncts(expr):
    """Top-level conjuncts of an acceptance condition (`not (a != b)` reads as `a == b`)."""
    if isinstance(expr, ir.Not):
        inner = expr.operand
        if isinstance(inner, ir.Compare):
            return [ir.Compare(_NEGATED[inner.op], inner.left, inner.right)]
        if isinstance(inner, ir.Or):
            parts = []
            for o in inner.operands:
                parts += _conjuncts(ir.Not(o))
            return parts
        return [expr]
    if isinstance(expr, ir.And):
        parts = []
        for o in expr.operands:
            parts += _conjuncts(o)
        return parts
    return [expr]


def hoistable(plan: Plan, options: Options) -> list[str]:
    """Parameters nothing depends on (their values only multiply the count)."""
    if "hoist" not in options:
        return []
    dag = plan.analysis.dag
    used = set()
    for name, deps in dag.uses.items():
        used |= deps
    return [p.name for p in plan.model.parameters if p.name not in used]
