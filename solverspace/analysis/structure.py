"""Restrictions become loop structure: a flat value list narrowed by the constraints at its loop.

A space written the Kernel Tuner way gives every parameter a flat value list and states every
dependency as a restriction (`dim_m <= blk_m and blk_m % dim_m == 0`); the literal plan walks the
whole list and filters. When the list is an arithmetic progression (`range(1, 1025)`, written out
or as a list), the constraints tested at its loop often say which of its values can pass for the
values bound before it. `structure(model, order)` rewrites such a parameter's domain into a range
with bounds, a start and a step that are expressions of the earlier parameters, the same domain
node a space written the BEAST way has (`range(dim_m, 1025, dim_m)`), so every walking backend
(the reference, the C enumerator and what builds on them) walks it without logic of its own:

- bounds: `e <= x`, `x < e`, `k * x <= e` (`k` proven positive), `x == e`, `k * x == e`, and
  their negations (`not (x > e)`), from the conjuncts (`and`, `not (a or b)`) of a constraint;
- a stride: `(x + c) % e == 0` or `(x - c) % e == 0` with `e` proven positive (a list with step 1).

The narrowed domain holds every value of the list that the constraints can accept, in the list's
order (ascending), and nothing else of the list: the values it drops are the ones where one of
those conjuncts is false. Every constraint stays as a filter, so the valid set and the rows are
those of the literal plan. The undefined-operation tally does not change either: a conjunct is
used only if its constraint, every constraint tested before it at the same loop and every derived
value computed there are proven never to divide by zero (interval bounds of the divisors), so the
literal plan rejects each dropped value at that loop without meeting an undefined operation.
Expressions that may be fractions (exact `/`), strings or orders are not used. What cannot be
solved stays a filter, as before.

Only value lists of at least `MIN_VALUES` integers that form a strictly ascending arithmetic
progression are rewritten (short lists cost little to filter, and the emitted C of spaces written
with them stays as it was); other domains are kept as written.
"""
from __future__ import annotations

import itertools

from solverspace.core.errors import SolverspaceError
from solverspace.lang import ir
from solverspace.lang.evaluate import Undefined, compile_expr
from solverspace.lang.kinds import INT
from solverspace.lang.lowering import binop
from solverspace.lang.model import Model

__all__ = ["MIN_VALUES", "structure", "progression"]

MIN_VALUES = 16
MAX_TABLE = 64   # the longest value list tabulated, and a quarter of the most (input, value) pairs
_INTEGER_OPS = ("+", "-", "*", "//", "%")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def progression(domain: ir.Domain) -> tuple[int, int, int] | None:
    """(first, last, step) of a value list of at least `MIN_VALUES` integer constants that is a
    strictly ascending arithmetic progression; None for anything else."""
    if not isinstance(domain, ir.Values) or len(domain.items) < MIN_VALUES:
        return None
    values = []
    for item in domain.items:
        if not (isinstance(item, ir.Const) and type(item.value) is int):
            return None
        values.append(item.value)
    step = values[1] - values[0]
    if step <= 0 or any(b - a != step for a, b in zip(values, values[1:])):
        return None
    return values[0], values[-1], step


def structure(model: Model, order: list[str]) -> Model:
    """`model` with each long arithmetic value list narrowed by the constraints tested at its loop
    in the loop order `order` (see the module docstring); `model` itself when nothing changes."""
    if not any(progression(p.domain) for p in model.parameters):
        return model   # short lists are tabulated only in a space that also has a long one
    narrowing = _Narrowing(model, order)
    parameters = tuple(narrowing.parameter(p) for p in model.parameters)
    if all(a is b for a, b in zip(parameters, model.parameters)):
        return model
    constraints = tuple(c for c in model.constraints if c.name not in narrowing.absorbed)
    return model.replace(parameters=parameters, constraints=constraints)


class _Narrowing:
    def __init__(self, model: Model, order: list[str]):
        self.model = model
        self.position = {p: i for i, p in enumerate(order)}
        dag = model.analysis.dag
        self.inputs = dag.parameter_inputs
        self.bounds = model.analysis.bounds
        self.rational = model.analysis.rational
        self.absorbed: set[str] = set()   # constraints a tabulated domain now states

    def slot(self, name: str) -> int:
        return max((self.position[q] for q in self.inputs[name]), default=-1)

    def usable(self, p) -> list:
        """The constraints at `p`'s loop whose rejections may drop values from its domain: those
        tested before the first one that may be undefined (none if a derived value there may be)."""
        here = self.position[p.name]
        if any(not self.defined(d.expr) for d in self.model.derived if self.slot(d.name) == here):
            return []
        found = []
        for c in self.model.constraints:
            if self.slot(c.name) != here:
                continue
            if not self.defined(c.expr):
                break   # it, or one tested after it, may be undefined where a value would be dropped
            found.append(c)
        return found

    def parameter(self, p):
        found = progression(p.domain)
        if found is None:
            return self.tabulated(p)
        first, last, step = found
        lowers, uppers, strides = [], [], []
        for c in self.usable(p):
            for conjunct in _conjuncts(c.accept_expr):
                self.solve(conjunct, p.name, lowers, uppers, strides)
        low = self.tightest(lowers, first, ir.Max, lambda i: i.lo >= first)
        high = self.tightest(uppers, last, ir.Min, lambda i: i.hi <= last)
        if strides and step == 1:
            modulus, residue = strides[0]
        else:
            modulus, residue = ir.Const(step), ir.Const(first)
        if low == residue or modulus == ir.Const(1) or (residue == ir.Const(0) and low == modulus):
            start = low   # already on the stride
        else:
            # the first value >= low that is residue modulo m: residue + ceil((low - residue) / m) * m
            offset = low if residue == ir.Const(0) else binop("-", low, residue)
            start = binop("*", _ceil_div(offset, modulus), modulus)
            start = start if residue == ir.Const(0) else binop("+", start, residue)
        return p.replace(domain=ir.Range(start, binop("+", high, ir.Const(1)), modulus))

    def tabulated(self, p):
        """A short value list filtered by the constraints at its loop that read only it and
        parameters with short constant value lists (`vec_mul == 0 if dim_vec == 1 else ...`): the
        domain lists, for each value of those inputs, the values the constraints accept (`[0] if
        dim_vec == 1 else [0, 1]`), and the constraints leave the plan (nothing is tested at the
        loop any more, so a backend may hoist it, as it hoists such a domain written the BEAST way)."""
        own = _constant_values(p.domain)
        if own is None or not 0 < len(own) <= MAX_TABLE:
            return p
        absorbed, inputs = [], set()
        for c in self.usable(p):
            if any(isinstance(n, ir.OrderFn) for n in ir.walk(c.expr)):
                continue
            reads = set(ir.refs(c.expr)) - {p.name}
            if reads <= set(self.model.parameter) and all(
                    _constant_values(self.model.parameter[q].domain) is not None for q in reads):
                absorbed.append(c)
                inputs |= reads
        if not absorbed:
            return p
        names = sorted(inputs, key=self.position.__getitem__)
        lists = [_constant_values(self.model.parameter[q].domain) for q in names]
        combinations = 1
        for values in lists:
            combinations *= len(values)
        if combinations * len(own) > MAX_TABLE * 4:
            return p
        tests = [(compile_expr(c.expr), c.rejects) for c in absorbed]
        rows = []
        for combination in itertools.product(*lists):
            env = dict(zip(names, combination))
            kept = []
            for value in own:
                env[p.name] = value
                try:
                    if all(bool(test(env)) != rejects for test, rejects in tests):
                        kept.append(value)
                except (Undefined, SolverspaceError):
                    return p   # evaluation errors stay where the literal plan meets them
            rows.append((combination, ir.Values(tuple(ir.Const(v) for v in kept))))
        domain = rows[-1][1]
        for combination, values in reversed(rows[:-1]):
            if values == domain:
                continue
            condition = _all(tuple(ir.Compare("==", ir.Ref(q), ir.Const(v)) for q, v in zip(names, combination)))
            domain = ir.IfDomain(condition, values, domain)
        self.absorbed.update(c.name for c in absorbed)
        return p.replace(domain=domain)

    def tightest(self, bounds: list, constant: int, combine, implied) -> ir.Expr:
        """The list's own end `constant` combined (`Max` for lower bounds, `Min` for upper) with
        the solved `bounds`; the constant is left out where one bound's interval implies it."""
        bounds = list(dict.fromkeys(bounds))
        if not any(implied(self.bounds.expr(b)) for b in bounds):
            bounds.insert(0, ir.Const(constant))
        return bounds[0] if len(bounds) == 1 else combine(tuple(bounds))

    # ------------------------------------------------------------------ facts
    def defined(self, expr: ir.Expr) -> bool:
        """Proven never to divide by zero (and no order function, whose `position` may be undefined)."""
        for n in ir.walk(expr):
            if isinstance(n, ir.OrderFn):
                return False
            if isinstance(n, ir.BinOp) and n.op in ("//", "%", "/"):
                if isinstance(n.right, ir.Const) and type(n.right.value) is not str and n.right.value != 0:
                    continue
                divisor = self.bounds.expr(n.right)
                if divisor.empty or divisor.lo <= 0 <= divisor.hi:
                    return False
        return True

    def earlier(self, expr: ir.Expr, name: str) -> bool:
        """An integer expression of parameters bound before `name` (and constants)."""
        here = self.position[name]
        for n in ir.walk(expr):
            if isinstance(n, ir.Ref):
                if n.name not in self.position or self.position[n.name] >= here:
                    return False
                if self.model.kinds.of(n.name) != INT:
                    return False
            elif isinstance(n, ir.Const):
                if type(n.value) is not int:
                    return False
            elif isinstance(n, ir.BinOp):
                if n.op not in _INTEGER_OPS:
                    return False
            elif not isinstance(n, (ir.Neg, ir.Min, ir.Max, ir.Abs)):
                return False
        return True

    def positive(self, expr: ir.Expr) -> bool:
        i = self.bounds.expr(expr)
        return not i.empty and i.lo >= 1

    # ------------------------------------------------------------------ solving
    def solve(self, conjunct: ir.Expr, name: str, lowers: list, uppers: list, strides: list) -> None:
        if not isinstance(conjunct, ir.Compare):
            return
        op, left, right = conjunct.op, conjunct.left, conjunct.right
        if op == "==" and isinstance(right, ir.Const) and right.value == 0 and type(right.value) is int \
                and isinstance(left, ir.BinOp) and left.op == "%":
            self.stride(left, name, strides)
            return
        if op == "!=":
            return
        if _mentions(right, name) and not _mentions(left, name):
            op, left, right = _FLIP[op], right, left
        if _mentions(right, name) or not self.earlier(right, name):
            return
        coefficient = self.coefficient(left, name)
        if coefficient is None:
            return
        one = coefficient == ir.Const(1)
        e = right
        if op in ("<=", "<", "=="):
            bound = e if op != "<" else binop("-", e, ir.Const(1))
            uppers.append(bound if one else binop("//", bound, coefficient))
        if op in (">=", ">", "=="):
            bound = e if op != ">" else binop("+", e, ir.Const(1))
            lowers.append(bound if one else _ceil_div(bound, coefficient))

    def coefficient(self, node: ir.Expr, name: str) -> ir.Expr | None:
        """`k` when `node` is `x` or a product of `x` once and other factors whose product `k` is an
        earlier expression proven positive (`x * a * 4`: `a * 4`)."""
        factors = _factors(node)
        if factors.count(ir.Ref(name)) != 1:
            return None
        rest = [f for f in factors if f != ir.Ref(name)]
        if not rest:
            return ir.Const(1)
        k = rest[0]
        for f in rest[1:]:
            k = ir.BinOp("*", k, f)
        return k if self.earlier(k, name) and self.positive(k) else None

    def stride(self, node: ir.BinOp, name: str, strides: list) -> None:
        """`(x + c) % e == 0` or `(x - c) % e == 0` or `x % e == 0`: x = -c, c or 0 modulo e."""
        modulus, value = node.right, node.left
        if not (self.earlier(modulus, name) and self.positive(modulus)):
            return
        if value == ir.Ref(name):
            residue = ir.Const(0)
        elif isinstance(value, ir.BinOp) and value.op in ("+", "-"):
            if value.left == ir.Ref(name) and self.earlier(value.right, name):
                residue = value.right if value.op == "-" else ir.Neg(value.right)
            elif value.op == "+" and value.right == ir.Ref(name) and self.earlier(value.left, name):
                residue = ir.Neg(value.left)
            else:
                return
        else:
            return
        strides.append((modulus, residue))


def _constant_values(domain: ir.Domain) -> list | None:
    """The values of a value list of constants (in its order, without repeats), else None."""
    if not isinstance(domain, ir.Values) or not all(isinstance(i, ir.Const) for i in domain.items):
        return None
    return list(dict.fromkeys(i.value for i in domain.items))


def _all(tests: tuple) -> ir.Expr:
    return tests[0] if len(tests) == 1 else ir.And(tests)


def _ceil_div(a: ir.Expr, k: ir.Expr) -> ir.Expr:
    """ceil(a / k) for k > 0, as `(a + k - 1) // k` (non-negative operands where `a` is, so the C
    printer writes C's own division, with no undefined flag)."""
    return binop("//", binop("-", binop("+", a, k), ir.Const(1)), k)


def _factors(node: ir.Expr) -> list:
    """The factors of a product (`a * (b * c)`: a, b, c); a non-product is its own one factor."""
    if isinstance(node, ir.BinOp) and node.op == "*":
        return _factors(node.left) + _factors(node.right)
    return [node]


def _mentions(node: ir.Node, name: str) -> bool:
    return name in ir.refs(node)


def _conjuncts(expr: ir.Expr):
    """The parts that must all be true for `expr` to be true (`and`, `not (a or b)`, `not (a < b)`)."""
    if isinstance(expr, ir.And):
        for operand in expr.operands:
            yield from _conjuncts(operand)
    elif isinstance(expr, ir.Not):
        inner = expr.operand
        if isinstance(inner, ir.Or):
            for operand in inner.operands:
                yield from _conjuncts(ir.Not(operand))
        elif isinstance(inner, ir.Not):
            yield from _conjuncts(inner.operand)
        elif isinstance(inner, ir.Compare):
            yield ir.Compare(_NEGATE[inner.op], inner.left, inner.right)
    else:
        yield expr
