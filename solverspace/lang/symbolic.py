"""The SymPy bridge: IR to SymPy and back, and simplification that keeps our semantics.

SymPy's `floor(a/b)` and `Mod(a, b)` follow Python's floor division and modulo, and its rational
arithmetic is exact, so `//`, `%` and `/` map one to one. Parameters are integer symbols;
derived values are integer symbols unless their definition involves exact `/`.

Simplification can remove a division (`(a*b)//b` becomes `a`), which would make an undefined
configuration look defined; `divisors(expr)` lists what must be non-zero for the original to be
defined, and callers that replace an expression by its simplification keep those guards.
"""
from __future__ import annotations

import sympy
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from solverspace.lang import ir
from solverspace.lang.printing import to_source

_STR_PREFIX = "str:"
_RELATIONS = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "==": sympy.Eq, "!=": sympy.Ne}


class ToSympy(ir.Visitor):
    backend_name = "the SymPy bridge"

    def __init__(self, rational_names: frozenset[str] = frozenset()):
        self.rational_names = rational_names

    def _visit_Const(self, n):
        if type(n.value) is bool:
            return sympy.true if n.value else sympy.false
        if type(n.value) is str:
            return sympy.Symbol(_STR_PREFIX + n.value)
        return sympy.Integer(n.value)

    def _visit_Ref(self, n):
        if n.name in self.rational_names:
            return sympy.Symbol(n.name, rational=True)
        return sympy.Symbol(n.name, integer=True)

    def _visit_BinOp(self, n):
        a, b = self.visit(n.left), self.visit(n.right)
        if n.op in ("//", "%", "/") and b.is_zero:
            raise ValueError(f"`{to_source(n)}` divides by zero for every value: it has no SymPy form")
        if n.op == "+":
            return a + b
        if n.op == "-":
            return a - b
        if n.op == "*":
            return a * b
        if n.op == "//":
            return sympy.floor(a / b)
        if n.op == "%":
            return sympy.Mod(a, b)
        if n.op == "/":
            return a / b
        return a ** b

    def _visit_Neg(self, n):
        return -self.visit(n.operand)

    def _visit_Abs(self, n):
        return sympy.Abs(self.visit(n.operand))

    def _visit_Min(self, n):
        return sympy.Min(*(self.visit(o) for o in n.operands))

    def _visit_Max(self, n):
        return sympy.Max(*(self.visit(o) for o in n.operands))

    def _visit_Compare(self, n):
        return _RELATIONS[n.op](self.visit(n.left), self.visit(n.right))

    def _visit_And(self, n):
        return sympy.And(*(self._truth(o) for o in n.operands))

    def _visit_Or(self, n):
        return sympy.Or(*(self._truth(o) for o in n.operands))

    def _visit_Not(self, n):
        return sympy.Not(self._truth(n.operand))

    def _truth(self, node):
        value = self.visit(node)
        if isinstance(value, sympy.logic.boolalg.Boolean):
            return value
        return sympy.Ne(value, 0)

    def _visit_IfExp(self, n):
        return sympy.Piecewise((self.visit(n.then), self._truth(n.cond)), (self.visit(n.orelse), True))


def to_sympy(expr: ir.Expr, rational_names: frozenset[str] = frozenset()):
    """SymPy expression for an IR expression (names in `rational_names` are rational, others integer)."""
    return ToSympy(rational_names).visit(expr)


def from_sympy(expr) -> ir.Expr:
    """IR for a SymPy expression built from `to_sympy` output (and its simplifications)."""
    if isinstance(expr, BooleanTrue):
        return ir.Const(True)
    if isinstance(expr, BooleanFalse):
        return ir.Const(False)
    if isinstance(expr, sympy.Integer):
        return ir.Const(int(expr))
    if isinstance(expr, sympy.Rational):
        return ir.BinOp("/", ir.Const(int(expr.p)), ir.Const(int(expr.q)))
    if isinstance(expr, sympy.Symbol):
        if expr.name.startswith(_STR_PREFIX):
            return ir.Const(expr.name[len(_STR_PREFIX):])
        return ir.Ref(expr.name)
    if isinstance(expr, sympy.Add):
        return _sum(expr.as_ordered_terms())
    if isinstance(expr, sympy.Mul):
        return _product(expr)
    if isinstance(expr, sympy.Pow):
        base, exponent = expr.as_base_exp()
        if exponent.is_Integer and exponent > 0:
            return ir.BinOp("**", from_sympy(base), ir.Const(int(exponent)))
        if exponent.is_Integer and exponent < 0:
            return ir.BinOp("/", ir.Const(1), from_sympy(base ** -exponent))
        raise ValueError(f"cannot express {expr} in the language (non-integer exponent)")
    if isinstance(expr, sympy.floor):
        numerator, denominator = sympy.fraction(sympy.together(expr.args[0]))
        if denominator == 1:
            if numerator.is_integer:
                return from_sympy(numerator)
            return ir.BinOp("//", from_sympy(numerator), ir.Const(1))  # floor of a fraction-valued term
        return ir.BinOp("//", from_sympy(numerator), from_sympy(denominator))
    if isinstance(expr, sympy.ceiling):
        numerator, denominator = sympy.fraction(sympy.together(expr.args[0]))
        return ir.Neg(ir.BinOp("//", from_sympy(-numerator), from_sympy(denominator)))
    if isinstance(expr, sympy.Mod):
        return ir.BinOp("%", from_sympy(expr.args[0]), from_sympy(expr.args[1]))
    if isinstance(expr, sympy.Abs):
        return ir.Abs(from_sympy(expr.args[0]))
    if isinstance(expr, sympy.Min):
        return ir.Min(tuple(from_sympy(a) for a in expr.args))
    if isinstance(expr, sympy.Max):
        return ir.Max(tuple(from_sympy(a) for a in expr.args))
    if isinstance(expr, sympy.core.relational.Relational):
        op = {sympy.StrictLessThan: "<", sympy.LessThan: "<=", sympy.StrictGreaterThan: ">",
              sympy.GreaterThan: ">=", sympy.Equality: "==", sympy.Unequality: "!="}[type(expr)]
        return ir.Compare(op, from_sympy(expr.lhs), from_sympy(expr.rhs))
    if isinstance(expr, sympy.And):
        return ir.And(tuple(from_sympy(a) for a in expr.args))
    if isinstance(expr, sympy.Or):
        return ir.Or(tuple(from_sympy(a) for a in expr.args))
    if isinstance(expr, sympy.Not):
        return ir.Not(from_sympy(expr.args[0]))
    if isinstance(expr, sympy.Piecewise):
        (value, cond), *rest = expr.args
        if cond == sympy.true or not rest:
            return from_sympy(value)
        return ir.IfExp(from_sympy(cond), from_sympy(value), from_sympy(sympy.Piecewise(*rest)))
    raise ValueError(f"cannot express SymPy {type(expr).__name__} `{expr}` in the language")


def _sum(terms) -> ir.Expr:
    signed = []
    for term in terms:
        negative = bool(term.as_coeff_Mul()[0].is_negative)
        signed.append((negative, from_sympy(-term if negative else term)))
    if signed[0][0]:
        signed[0] = (False, ir.Neg(signed[0][1]))
    return ir.chain("+", signed)


def _product(expr) -> ir.Expr:
    coefficient, rest = expr.as_coeff_Mul()
    if coefficient.is_negative:
        return ir.Neg(from_sympy(-expr))
    numerator, denominator = sympy.fraction(expr)
    if denominator != 1:
        return ir.BinOp("/", from_sympy(numerator), from_sympy(denominator))
    return ir.chain("*", [(False, from_sympy(f)) for f in sympy.Mul.make_args(expr)])


def simplify(expr: ir.Expr, rational: frozenset[str] = frozenset()) -> ir.Expr:
    """An expression equal to `expr` wherever `expr` is defined, simplified by SymPy; the
    original is kept when SymPy's form is not shorter or cannot be expressed in the language."""
    if isinstance(expr, (ir.Const, ir.Ref)) or _huge_power(expr) or _conditional(expr):
        return expr
    try:
        original = to_sympy(expr, rational)
        simplified = sympy.simplify(original)
        if simplified.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            return expr  # a literal division by zero: leave the undefined operation visible
        result = from_sympy(simplified)
    except (ValueError, TypeError, ZeroDivisionError):
        return expr
    if _size(result) >= _size(expr):
        return expr
    return result


#: Simplification is skipped for a power with a larger exponent: SymPy would expand
#: `(x + 1) ** 10000` term by term (bounded work, not a hang).
MAX_SIMPLIFY_EXPONENT = 64


def _conditional(expr: ir.Node) -> bool:
    """A conditional inside: SymPy's Piecewise simplification is not sound for us
    (`abs(x if abs(x) <= 0 else y)` became `abs(y)`, wrong at x=0, y=-3), so it is not asked."""
    return any(isinstance(n, ir.IfExp) for n in ir.walk(expr))


def _huge_power(expr: ir.Node) -> bool:
    return any(isinstance(n, ir.BinOp) and n.op == "**" and isinstance(n.right, ir.Const)
               and type(n.right.value) is int and n.right.value > MAX_SIMPLIFY_EXPONENT for n in ir.walk(expr))


def _size(node: ir.Node) -> int:
    return sum(1 for _ in ir.walk(node))


def divisors(expr: ir.Node) -> list[ir.Expr]:
    """The divisors in `expr` (right operands of `//`, `%`, `/`): where one is zero, `expr` is
    undefined, a fact that simplification may erase."""
    return [n.right for n in ir.walk(expr) if isinstance(n, ir.BinOp) and n.op in ("//", "%", "/")]
