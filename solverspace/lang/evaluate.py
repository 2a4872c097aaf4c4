"""The Python meaning of the IR: DESIGN.md's fixed semantics, in one place.

`compile_expr` and `compile_domain` turn IR into closures over an environment (a dict from
parameter/derived names to values). The reference enumerator, `check`, constant folding and the
tests' property checks all evaluate through here, so Python has exactly one meaning.

- `//` and `%` are Python's floor operations; `/` is exact (`Fraction`, normalised to `int` when
  whole); division or modulo by zero raises `Undefined`, which callers count or turn into an error.
- `and`/`or`/`if-else` evaluate only what Python would, and give what Python gives (an operand).
"""
from __future__ import annotations

import builtins
import operator
import sys
import types
from fractions import Fraction
from typing import Callable

from solverspace.lang import ir
from solverspace.core import orders
from solverspace.core.errors import SpaceEvaluationError, check_text
from solverspace.lang.printing import to_source
from solverspace.lang.kinds import MIX_HINT, KindError

Env = dict
Value = int | Fraction | str | bool


class Undefined(Exception):
    """An undefined operation (division or modulo by zero, or an order function asked about an
    item the order lacks) in `expr`."""

    def __init__(self, expr: ir.Node):
        self.expr = expr
        self.reason = ("an item absent from the order" if isinstance(expr, ir.OrderFn)
                       else "division or modulo by zero")
        super().__init__(f"{self.reason} in `{to_source(expr)}`")


def allow_integers_of_any_length() -> None:
    """Values are integers of any size, and counts are exact at any size (DESIGN.md), but Python
    (3.11 and the security releases before it) refuses to convert an int of more than 4,300
    digits to or from text (`ValueError: Exceeds the limit`), which would stop a load, a count or
    a written row. The entry points (the command line, `Space.load`/`from_source`) lift it once
    for the process; their inputs are the user's own files."""
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)


def normalise(value):
    """Whole fractions become ints so that every backend sees the same value."""
    if type(value) is Fraction and value.denominator == 1:
        return int(value.numerator)
    return value


def _numeric(value, node):
    if type(value) is tuple:
        raise SpaceEvaluationError(f"order value {value!r} used in arithmetic or ordering in `{to_source(node)}`",
                                   hint="orders compare only with == and !=; use position(), first(), ...")
    if isinstance(value, str):
        raise SpaceEvaluationError(
            f"categorical value {value!r} used in arithmetic or ordering in `{to_source(node)}`",
            hint="categorical values can only be compared with == and !=")
    return value


def _floordiv(a, b):
    return normalise(a // b)


def _mod(a, b):
    return normalise(a % b)


def _truediv(a, b):
    if type(a) is int and type(b) is int:   # the common case, without building two Fractions
        quotient, remainder = divmod(a, b)
        return quotient if remainder == 0 else Fraction(a, b)
    return normalise(Fraction(a) / Fraction(b))


_ARITH = {
    "+": lambda a, b: normalise(a + b),
    "-": lambda a, b: normalise(a - b),
    "*": lambda a, b: normalise(a * b),
    "//": _floordiv,
    "%": _mod,
    "/": _truediv,
    "**": lambda a, b: normalise(a ** b),
}
_DIVIDING = ("//", "%", "/")
# The same operators on two ints, where the result needs no normalising (`**` is left out: a
# negative exponent gives a float, which `normalise` and the checks after it must see).
_ON_INTS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
            "%": operator.mod, "/": _truediv}

_COMPARE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


class _ExprCompiler(ir.Visitor):
    backend_name = "the Python evaluator"

    def _visit_Const(self, n):
        value = n.value
        return lambda env: value

    def _visit_Ref(self, n):
        name = n.name
        return lambda env: env[name]

    def _visit_BinOp(self, n):
        left, right, fn = self.visit(n.left), self.visit(n.right), _ARITH[n.op]
        on_ints = _ON_INTS.get(n.op, fn)   # two ints give an int (or `/`'s Fraction): nothing to check
        if n.op in _DIVIDING:
            def divide(env):
                a, b = left(env), right(env)
                if type(a) is not int or type(b) is not int:
                    a, b = _numeric(a, n), _numeric(b, n)
                    on = fn
                else:
                    on = on_ints
                if b == 0:
                    raise Undefined(n)
                return on(a, b)
            return divide

        def arith(env):
            a, b = left(env), right(env)
            if type(a) is int and type(b) is int:
                return on_ints(a, b)
            return fn(_numeric(a, n), _numeric(b, n))
        return arith

    def _visit_Neg(self, n):
        operand = self.visit(n.operand)
        return lambda env: -_numeric(operand(env), n)

    def _visit_Not(self, n):
        operand = self.visit(n.operand)
        return lambda env: not operand(env)

    def _visit_Compare(self, n):
        left, right, fn = self.visit(n.left), self.visit(n.right), _COMPARE[n.op]
        if n.op in ("==", "!="):
            return lambda env: fn(left(env), right(env))

        def ordered(env):
            a, b = left(env), right(env)
            if type(a) is int and type(b) is int:
                return fn(a, b)
            return fn(_numeric(a, n), _numeric(b, n))
        return ordered

    def _visit_And(self, n):
        """Python's `and`: the first false operand, else the last (left to right, short-circuit)."""
        parts = [self.visit(o) for o in n.operands]

        def conj(env):
            value = True
            for p in parts:
                value = p(env)
                if not value:
                    return value
            return value
        return conj

    def _visit_Or(self, n):
        """Python's `or`: the first true operand, else the last."""
        parts = [self.visit(o) for o in n.operands]

        def disj(env):
            value = False
            for p in parts:
                value = p(env)
                if value:
                    return value
            return value
        return disj

    def _visit_IfExp(self, n):
        cond, then, orelse = self.visit(n.cond), self.visit(n.then), self.visit(n.orelse)
        return lambda env: then(env) if cond(env) else orelse(env)

    def _visit_Min(self, n):
        parts = [self.visit(o) for o in n.operands]
        return lambda env: min(_numeric(p(env), n) for p in parts)

    def _visit_Max(self, n):
        parts = [self.visit(o) for o in n.operands]
        return lambda env: max(_numeric(p(env), n) for p in parts)

    def _visit_Abs(self, n):
        operand = self.visit(n.operand)
        return lambda env: abs(_numeric(operand(env), n))

    def _visit_OrderFn(self, n):
        args, fn = [self.visit(a) for a in n.args], orders.FUNCTIONS[n.fn]

        def order_function(env):
            values = [a(env) for a in args]   # every argument evaluated, as in a Python call
            if type(values[0]) is not tuple:
                raise SpaceEvaluationError(f"`{to_source(n)}`: {values[0]!r} is not an order")
            try:
                return fn(*values)
            except orders.AbsentItem:
                raise Undefined(n) from None
        return order_function


def compile_expr(expr: ir.Expr) -> Callable[[Env], Value]:
    """A function env -> value for an expression (may raise `Undefined`)."""
    return _ExprCompiler().visit(expr)


def evaluate(expr: ir.Expr, env: Env | None = None) -> Value:
    return compile_expr(expr)(env or {})


def _dedupe(values) -> list:
    return list(dict.fromkeys(values))


def _domain_value(value, owner: str, node):
    if type(value) is bool:
        return int(value)
    if type(value) is int or type(value) is str:
        return value
    raise SpaceEvaluationError(
        f"parameter {owner!r}: value {value} of `{to_source(node)}` is not an integer or a string",
        hint="use // for integer division; parameter values are integers or categorical strings")


class _DomainCompiler(ir.DomainVisitor):
    backend_name = "the Python evaluator"

    def __init__(self, owner: str, closure_globals: dict, max_closure_values: int):
        self.owner = owner
        self.closure_globals = closure_globals
        self.max_closure_values = max_closure_values

    def _visit_Range(self, n):
        start, stop, step = (compile_expr(e) for e in (n.start, n.stop, n.step))
        owner = self.owner

        def values(env):
            bounds = [_domain_value(f(env), owner, n) for f in (start, stop, step)]
            if any(isinstance(b, str) for b in bounds):
                raise SpaceEvaluationError(f"parameter {owner!r}: range bounds must be integers in `{to_source(n)}`")
            if bounds[2] == 0:
                raise SpaceEvaluationError(
                    f"parameter {owner!r}: range step is 0 in `{to_source(n)}`",
                    hint="a range step must be a non-zero integer")
            return range(*bounds)
        return values

    def _visit_Values(self, n):
        owner = self.owner
        if all(type(i) is ir.Const for i in n.items):   # a list of constants (a T1 file's): no function each
            constants = [i.value for i in n.items]
            return lambda env: _dedupe(_domain_value(v, owner, n) for v in constants)
        items = [compile_expr(i) for i in n.items]
        return lambda env: _dedupe(_domain_value(f(env), owner, n) for f in items)

    def _visit_SetOp(self, n):
        left, right = self.visit(n.left), self.visit(n.right)
        if n.op == "union":
            def union(env):
                return _dedupe([*left(env), *right(env)])
            return union
        keep = n.op == "intersection"

        def filtered(env):
            other = set(right(env))
            return _dedupe(v for v in left(env) if (v in other) == keep)
        return filtered

    def _visit_IfDomain(self, n):
        cond, then, orelse = compile_expr(n.cond), self.visit(n.then), self.visit(n.orelse)
        return lambda env: then(env) if cond(env) else orelse(env)

    def _visit_Closure(self, n):
        return ClosureTable(n, self.closure_globals, self.max_closure_values)

    def _items(self, nodes):
        items = [compile_expr(i) for i in nodes]
        return lambda env: tuple(f(env) for f in items)

    def _visit_Permutation(self, n):
        items = self._items(n.items)
        return lambda env: orders.permutations(items(env))

    def _visit_Interleave(self, n):
        parts = [self._items(p.items) for p in n.parts]
        return lambda env: orders.interleavings(tuple(p(env) for p in parts))

    def _visit_Sequence(self, n):
        items, low, high = self._items(n.items), compile_expr(n.min_len), compile_expr(n.max_len)
        owner = self.owner

        def selections(env):
            bounds = [_domain_value(f(env), owner, n) for f in (low, high)]
            if any(isinstance(b, str) for b in bounds):
                raise SpaceEvaluationError(f"parameter {owner!r}: sequence lengths must be integers in `{to_source(n)}`")
            return orders.sequences(items(env), *bounds)
        return selections


class ClosureTable:
    """A generator iterator evaluated in Python, memoised per combination of its dependencies."""

    def __init__(self, node: ir.Closure, closure_globals: dict, max_values: int):
        self.node = node
        self.max_values = max_values
        self.cache: dict[tuple, list] = {}
        self.globals = {"__builtins__": builtins, **closure_globals}
        self.argnames = node.func.__code__.co_varnames[: node.func.__code__.co_argcount]

    def __call__(self, env):
        key = tuple(env[d] for d in self.node.deps)
        values = self.cache.get(key)
        if values is None:
            values = self.cache[key] = self._run(env)
        return values

    def _run(self, env) -> list:
        func = self.node.func
        scope = dict(self.globals)
        scope.update((d, env[d]) for d in self.node.deps)
        fresh = types.FunctionType(func.__code__, scope, func.__name__, None, func.__closure__)
        values = []
        try:
            args = [env[a] if a in self.node.deps else scope[a] for a in self.argnames]
            for value in fresh(*args):
                if len(values) >= self.max_values:
                    raise SpaceEvaluationError(
                        f"closure iterator {self.node.name!r} yielded more than {self.max_values} values"
                        + (f" for {dict(zip(self.node.deps, (env[d] for d in self.node.deps)))}" if self.node.deps else ""),
                        hint="check that the generator terminates, or raise the limit "
                             "(--max-closure-values / max_closure_values=)")
                values.append(_domain_value(value, self.node.name, self.node))
        except SpaceEvaluationError:
            raise
        except Exception as exc:  # the user's generator raised: report it with the inputs
            raise SpaceEvaluationError(
                f"closure iterator {self.node.name!r} raised {type(exc).__name__}: {exc}") from exc
        _check_one_kind(values, self.node)
        for text in (v for v in values if type(v) is str):   # a NUL would not survive output
            check_text(text, f"closure iterator {self.node.name!r}", error=SpaceEvaluationError)
        return _dedupe(values)


def _check_one_kind(values: list, node: ir.Closure) -> None:
    """A closure that could not be tabulated at load (`solverspace.lang.kinds`) is checked per call."""
    text = next((v for v in values if type(v) is str), None)
    number = next((v for v in values if type(v) is not str), None)
    if text is not None and number is not None:
        raise KindError(f"closure iterator {node.name!r} yields both strings and integers "
                                   f"(e.g. {text!r} and {number!r})", hint=MIX_HINT)


def compile_domain(domain: ir.Domain, owner: str, *, closure_globals: dict | None = None,
                   max_closure_values: int = 100_000) -> Callable[[Env], list]:
    """A function env -> ordered, duplicate-free list (or range) of a parameter's values."""
    return _DomainCompiler(owner, closure_globals or {}, max_closure_values).visit(domain)
