"""Integer bounds of every parameter, derived value and expression, from the domains.

Interval arithmetic on the IR with exact ints and Fractions (infinite ends are floats ±inf):
the C translator uses it to prove that 64-bit arithmetic cannot overflow and to pick column
dtypes; CP-SAT uses it for variable domains. Each derived value's interval is intersected with
the interval of its SymPy-simplified form (`symbolic.simplify`, remembered by
`remembered_simplify`), which is tighter when simplification cancels terms (`x - x`). Bounds
are sound, not always tight: every value an expression takes on a candidate configuration lies
inside them (where it is defined).
"""
from __future__ import annotations

import math
from fractions import Fraction

from solverspace.core.records import Record
from solverspace.lang import ir
from solverspace.lang.rational import rational_names
from solverspace.core.errors import ClosureTableError

INF = math.inf


class Interval(Record):
    __match_args__ = ("lo", "hi")

    def __init__(self, lo: int | Fraction | float, hi: int | Fraction | float):
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @property
    def empty(self) -> bool:
        return self.lo > self.hi

    @property
    def finite(self) -> bool:
        return not self.empty and self.lo != -INF and self.hi != INF

    def __contains__(self, value) -> bool:
        return self.lo <= value <= self.hi

    def hull(self, other: "Interval") -> "Interval":
        if self.empty:
            return other
        if other.empty:
            return self
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    def meet(self, other: "Interval") -> "Interval":
        return Interval(max(self.lo, other.lo), min(self.hi, other.hi))

    def fits_int64(self) -> bool:
        return self.empty or (-(2 ** 63) <= self.lo and self.hi <= 2 ** 63 - 1)

    def __str__(self):
        return "empty" if self.empty else f"[{short_number(self.lo)}, {short_number(self.hi)}]"


def short_number(value) -> str:
    """A bound for a message: a huge integer (`3 ** 10000`) by its size, not its 4,772 digits."""
    if isinstance(value, int) and abs(value) >= 10 ** 30:
        return f"{'-' if value < 0 else ''}about 2**{abs(value).bit_length() - 1}"
    return str(value)


#: A power bound with more bits than this is taken as infinite (sound, and bounded work:
#: `x ** 10**9` is never computed to bound it).
MAX_POWER_BITS = 4096


def _power(x, k: int):
    """x ** k for an interval end (±inf or an exact number), huge results as ±inf."""
    if x in (INF, -INF) or (abs(x) > 1 and k * math.log2(abs(x)) > MAX_POWER_BITS):
        return INF if k % 2 == 0 or x > 0 else -INF
    return x ** k


EMPTY = Interval(1, 0)
BOOL = Interval(0, 1)
EVERYTHING = Interval(-INF, INF)


def point(v) -> Interval:
    return Interval(v, v)


def _mul(a, b):
    if a == 0 or b == 0:
        return 0
    return a * b


def _corners(fn, a: Interval, b: Interval) -> Interval:
    values = [fn(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    return Interval(min(values), max(values))


def _nonzero_parts(b: Interval, integral: bool) -> list[Interval]:
    """Split a divisor interval around 0 (division by zero is undefined, not a value). An
    integer divisor is at least 1 away from 0; a fractional one may come arbitrarily close."""
    if not integral and (b.lo < 1 and b.hi > -1) and not (b.lo == b.hi):
        return [EVERYTHING]
    parts = []
    if b.lo <= -1 or (not integral and b.lo < 0):
        parts.append(Interval(b.lo, min(b.hi, -1) if integral else b.hi if b.hi < 0 else -1))
    if b.hi >= 1 or (not integral and b.hi > 0):
        parts.append(Interval(max(b.lo, 1) if integral else (b.lo if b.lo > 0 else 1), b.hi))
    return parts


def _div(x, y):
    if x in (INF, -INF) or y in (INF, -INF):
        if y in (INF, -INF) and x not in (INF, -INF):
            return 0
        return INF if (x > 0) == (y > 0) else -INF
    return Fraction(x) / Fraction(y)


def _floor(v):
    return v if v in (INF, -INF) else math.floor(v)


def division_interval(op: str, a: Interval, b: Interval, integral: bool = True) -> Interval:
    """The values of `a / b`, `a // b` or `a % b` (`op`) for a in `a` and b in `b` where b is not 0
    (division by zero is undefined, not a value: EMPTY when b can only be 0). `integral`: the
    divisor takes only integer values (then it is at least 1 away from 0). The one interval rule
    for division: the interval analysis and the CP-SAT lowering both use it.

    >>> division_interval("//", Interval(-7, 7), Interval(-2, 3))
    Interval(lo=-7, hi=7)
    >>> division_interval("%", Interval(0, 20), Interval(3, 5))
    Interval(lo=0, hi=4)
    >>> division_interval("%", Interval(1, 2), Interval(3, 5))
    Interval(lo=1, hi=2)
    """
    result = EMPTY
    for part in _nonzero_parts(b, integral):
        if part is EVERYTHING:
            return EVERYTHING
        if op == "/":
            piece = _corners(_div, a, part)
        elif op == "//":
            piece = _corners(lambda x, y: _floor(_div(x, y)), a, part)
        else:  # % : the sign follows the divisor
            if part.lo > 0:
                top = part.hi - 1 if part.hi != INF else INF
                piece = Interval(a.lo, a.hi) if a.lo >= 0 and a.hi < part.lo else Interval(0, min(top, a.hi) if a.lo >= 0 else top)
            else:
                bottom = part.lo + 1 if part.lo != -INF else -INF
                piece = Interval(a.lo, a.hi) if a.hi <= 0 and a.lo > part.hi else Interval(max(bottom, a.lo) if a.hi <= 0 else bottom, 0)
        result = result.hull(piece)
    return result


class IntervalAnalysis(ir.Visitor):
    backend_name = "interval analysis"

    def __init__(self, lookup, rational: frozenset[str] = frozenset()):
        self.lookup = lookup  # name -> Interval
        self.rational = rational  # names whose values may be fractions

    def integral(self, node) -> bool:
        """Whether an expression only takes integer values."""
        from solverspace.lang.rational import may_be_fraction
        return not may_be_fraction(node, self.rational)

    def _visit_Const(self, n):
        v = n.value
        return BOOL if type(v) is str else point(int(v))  # strings: codes are not ordered; any small int

    def _visit_Ref(self, n):
        return self.lookup(n.name)

    def _visit_BinOp(self, n):
        a, b = self.visit(n.left), self.visit(n.right)
        if a.empty or b.empty:
            return EMPTY
        if n.op == "+":
            return Interval(a.lo + b.lo, a.hi + b.hi)
        if n.op == "-":
            return Interval(a.lo - b.hi, a.hi - b.lo)
        if n.op == "*":
            return _corners(_mul, a, b)
        if n.op == "**":
            k = n.right.value
            values = [_power(x, k) for x in (a.lo, a.hi)]
            lo, hi = min(values), max(values)
            if k % 2 == 0 and a.lo <= 0 <= a.hi:
                lo = 0
            return Interval(1, 1) if k == 0 else Interval(lo, hi)
        return division_interval(n.op, a, b, self.integral(n.right))

    def _visit_Neg(self, n):
        a = self.visit(n.operand)
        return EMPTY if a.empty else Interval(-a.hi, -a.lo)

    def _visit_Abs(self, n):
        a = self.visit(n.operand)
        if a.empty:
            return EMPTY
        if a.lo >= 0:
            return a
        if a.hi <= 0:
            return Interval(-a.hi, -a.lo)
        return Interval(0, max(-a.lo, a.hi))

    def _visit_Min(self, n):
        parts = [self.visit(o) for o in n.operands]
        return Interval(min(p.lo for p in parts), min(p.hi for p in parts))

    def _visit_Max(self, n):
        parts = [self.visit(o) for o in n.operands]
        return Interval(max(p.lo for p in parts), max(p.hi for p in parts))

    def _boolean(self, n):
        return BOOL

    _visit_Compare = _visit_And = _visit_Or = _visit_Not = _boolean

    def _visit_OrderFn(self, n):
        """Orders (solverspace.core.orders): a position or length is >= 0, a test is a boolean, an
        item (first/last) anything (the backends bound the slots of an order themselves)."""
        if n.fn in ("before", "contains"):
            return BOOL
        return Interval(0, INF) if n.fn in ("position", "len") else EVERYTHING

    def _visit_IfExp(self, n):
        return self.visit(n.then).hull(self.visit(n.orelse))


#: SymPy's simplifications of derived values, by (the expression's text, the rational names),
#: for this process: the points of a sweep share most derived values, and SymPy is most of
#: the cost of generating a program. The value is the simpler expression, or None where SymPy
#: found none (at most `MAX_SIMPLIFIED` entries: a long run starts again past them).
SIMPLIFIED: dict[tuple[str, tuple[str, ...]], ir.Expr | None] = {}
MAX_SIMPLIFIED = 50_000
#: Stores that remember them across processes (`get(key)` -> a value, or `MISSING`;
#: `put(key, value)`, a no-op where known); `translators/c/plan_cache.py` adds one beside the
#: cached programs, so a process that generates a program from simplifications known there
#: imports no SymPy.
STORES: list = []
MISSING = object()


def remembered_simplify(expr: ir.Expr, rational: frozenset[str]) -> ir.Expr | None:
    """`symbolic.simplify(expr, rational)` where it differs from `expr`, else None; remembered
    (`SIMPLIFIED`, `STORES`) by the expression's text (so `1`, `1.0` and `True` stay apart),
    except for an expression holding an object known only by its address (a closure)."""
    key = (repr(expr), tuple(sorted(rational)))
    if " at 0x" in key[0]:
        return _simplified(expr, rational)
    value = SIMPLIFIED.get(key, MISSING)
    for store in STORES if value is MISSING else ():
        value = store.get(key)
        if value is not MISSING:
            break
    if value is MISSING:
        value = _simplified(expr, rational)
    if len(SIMPLIFIED) >= MAX_SIMPLIFIED:
        SIMPLIFIED.clear()
    SIMPLIFIED[key] = value
    for store in STORES:   # each store learns it (a no-op where it was known)
        store.put(key, value)
    return value


def _simplified(expr: ir.Expr, rational: frozenset[str]) -> ir.Expr | None:
    from solverspace.lang.symbolic import simplify  # SymPy: imported when a simplification is first needed
    simpler = simplify(expr, rational)
    return None if simpler is expr else simpler


class Bounds(ir.DomainVisitor):
    """Bounds of every named value of a model, computed on demand and memoised."""

    backend_name = "the bounds"
    domain_walks = ("_domain_",)   # the interval of a domain's values

    def __init__(self, model):
        self.model = model
        self.rational = rational_names(model)
        self.memo: dict[str, Interval] = {}
        self.analysis = IntervalAnalysis(self.of, self.rational)

    def of(self, name: str) -> Interval:
        if name not in self.memo:
            if name in self.model.parameter:
                self.memo[name] = self.domain(self.model.parameter[name])
            else:
                expr = self.model.derived_value[name].expr
                plain = self.expr(expr)
                if any(isinstance(n, ir.OrderFn) for n in ir.walk(expr)):  # SymPy knows no orders
                    self.memo[name] = plain
                    return plain
                simpler = remembered_simplify(expr, self.rational)
                self.memo[name] = plain if simpler is None else plain.meet(self.expr(simpler))
        return self.memo[name]

    def expr(self, expr: ir.Expr) -> Interval:
        return self.analysis.visit(expr)

    def domain(self, parameter) -> Interval:
        return self._domain(parameter.domain, parameter)

    def domain_node(self, node, parameter) -> Interval:
        """The interval of any domain node of `parameter`'s domain (the whole domain or a part)."""
        return self._domain(node, parameter)

    def _domain(self, node, parameter) -> Interval:
        return self.dispatch("_domain_", node, parameter)

    def _domain_Range(self, node, parameter) -> Interval:
        start, stop, step = (self.expr(e) for e in (node.start, node.stop, node.step))
        result = EMPTY
        if step.hi >= 1:
            result = result.hull(Interval(start.lo, stop.hi - 1).meet(Interval(start.lo, INF)))
        if step.lo <= -1:
            result = result.hull(Interval(stop.lo + 1, start.hi))
        return result

    def _domain_Values(self, node, parameter) -> Interval:
        result = EMPTY
        for item in node.items:
            if isinstance(item, ir.Const) and type(item.value) is str:
                continue  # categorical codes are bounded by the domain size below
            result = result.hull(self.expr(item))
        strings = sum(1 for i in node.items if isinstance(i, ir.Const) and type(i.value) is str)
        return result.hull(Interval(0, strings - 1)) if strings else result

    def _domain_SetOp(self, node, parameter) -> Interval:
        left, right = self._domain(node.left, parameter), self._domain(node.right, parameter)
        if node.op == "union":
            return left.hull(right)
        return left.meet(right) if node.op == "intersection" else left

    def _domain_IfDomain(self, node, parameter) -> Interval:
        return self._domain(node.then, parameter).hull(self._domain(node.orelse, parameter))

    def _domain_Closure(self, node, parameter) -> Interval:
        return self._closure(node, parameter)

    def _domain_order(self, node, parameter) -> Interval:
        return EVERYTHING  # an order is a tuple, not a number
    _domain_Permutation = _domain_Interleave = _domain_Sequence = _domain_order

    def _closure(self, node: ir.Closure, parameter) -> Interval:
        """The hull of the closure's integer values, from its shared table (`solverspace.lang.closures`);
        a closure of strings is bounded like a value list of strings (by its number of strings)."""
        try:
            values = self.model.closures.table(node).values
        except ClosureTableError:
            return EVERYTHING  # sound; the backends that need the table refuse it themselves
        numbers = [v for v in values if type(v) is not str]
        if numbers:
            return Interval(min(numbers), max(numbers))
        return Interval(0, len(values) - 1) if values else EMPTY
