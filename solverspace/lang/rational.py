"""Which values may be fractions (exact `/`): a walk over the IR, kept apart from the SymPy
bridge (`solverspace.lang.symbolic`) so that the translators and the analysis can ask it without
importing SymPy, which costs a third of a second per process."""
from __future__ import annotations

from solverspace.lang import ir


def rational_names(model) -> frozenset[str]:
    """Derived values whose value may be a fraction (exact `/` reaching the value, not only a
    comparison inside it)."""
    rational: set[str] = set()
    for d in model.derived:  # definition order: inputs come first
        if may_be_fraction(d.expr, rational):
            rational.add(d.name)
    return frozenset(rational)


def may_be_fraction(expr: ir.Expr, rational=frozenset()) -> bool:
    """Whether an expression's value can be a non-integer fraction."""
    if isinstance(expr, ir.Ref):
        return expr.name in rational
    if isinstance(expr, ir.BinOp):
        if expr.op == "/":
            return True
        if expr.op == "//":
            return False  # floor of anything is an integer
        return may_be_fraction(expr.left, rational) or may_be_fraction(expr.right, rational)
    if isinstance(expr, (ir.Neg, ir.Abs)):
        return may_be_fraction(expr.operand, rational)
    if isinstance(expr, (ir.Min, ir.Max)):
        return any(may_be_fraction(o, rational) for o in expr.operands)
    if isinstance(expr, ir.IfExp):
        return may_be_fraction(expr.then, rational) or may_be_fraction(expr.orelse, rational)
    return False  # constants, comparisons, and/or/not
