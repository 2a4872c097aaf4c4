"""Exact `/` without fractions: an expression that may be a fraction rewritten as a pair of
integer IR expressions (numerator, denominator > 0), undefined exactly where the expression is.

The C printer (`translators.c.expr`) uses the pair to compare fractions by cross-multiplying and
to floor-divide them; the rewrite itself is IR to IR and knows nothing of C.

    rational_pair(node, model, rational) -> (numerator, denominator)

`rational`: the derived values that may hold fractions (`model.analysis.rational`); a reference
to one of them is replaced by its definition's pair.
"""
from __future__ import annotations

from solverspace.lang import ir
from solverspace.lang.rational import may_be_fraction

ONE = ir.Const(1)


def mul(x, y):
    """x * y, leaving out a factor 1."""
    if x == ONE:
        return y
    if y == ONE:
        return x
    return ir.BinOp("*", x, y)


def rational_pair(node, model, rational) -> tuple:
    """(numerator, denominator) integer IR expressions with denominator > 0 and value
    numerator / denominator, undefined exactly where `node` is."""
    return RationalPair(model, rational).pair(node)


class RationalPair(ir.Visitor):
    """One method per node and operator that can carry a fraction (`may_be_fraction`)."""

    def __init__(self, model, rational):
        self.model = model
        self.rational = rational

    def pair(self, node) -> tuple:
        if not may_be_fraction(node, self.rational):
            return node, ONE
        return self.visit(node)

    def unsupported(self, node):
        raise ValueError(f"no rational form for {type(node).__name__} {getattr(node, 'op', '')}")

    def _visit_Ref(self, node):
        return self.pair(self.model.derived_value[node.name].expr)

    def _visit_Neg(self, node):
        n, d = self.pair(node.operand)
        return ir.Neg(n), d

    def _visit_Abs(self, node):
        n, d = self.pair(node.operand)
        return ir.Abs(n), d

    def _visit_IfExp(self, node):
        (xn, xd), (yn, yd) = self.pair(node.then), self.pair(node.orelse)
        return ir.IfExp(node.cond, xn, yn), (xd if xd == yd else ir.IfExp(node.cond, xd, yd))

    def _extreme(self, node, keep: str):
        """min (`keep` "<=") or max (">=") of fractions: the first operand kept while it compares
        `keep` with the next one (cross-multiplied)."""
        result = self.pair(node.operands[0])
        for operand in node.operands[1:]:
            (xn, xd), (yn, yd) = result, self.pair(operand)
            first = ir.Compare(keep, mul(xn, yd), mul(yn, xd))
            result = ir.IfExp(first, xn, yn), (xd if xd == yd else ir.IfExp(first, xd, yd))
        return result

    def _visit_Min(self, node):
        return self._extreme(node, "<=")

    def _visit_Max(self, node):
        return self._extreme(node, ">=")

    def _additive(self, node):
        (an, ad), (bn, bd) = self.pair(node.left), self.pair(node.right)
        return ir.BinOp(node.op, mul(an, bd), mul(bn, ad)), mul(ad, bd)

    _visit_Add = _visit_Sub = _additive

    def _visit_Mul(self, node):
        (an, ad), (bn, bd) = self.pair(node.left), self.pair(node.right)
        return mul(an, bn), mul(ad, bd)

    def _visit_Pow(self, node):
        an, ad = self.pair(node.left)  # the exponent is an integer constant
        return ir.BinOp("**", an, node.right), ir.BinOp("**", ad, node.right)

    def _visit_Div(self, node):
        (an, ad), (bn, bd) = self.pair(node.left), self.pair(node.right)
        # b // b is 1 for b != 0 and undefined for b == 0: the division keeps its undefinedness
        signed = ir.IfExp(ir.Compare("<", bn, ir.Const(0)), ir.Neg(mul(an, bd)), mul(an, bd))
        return ir.BinOp("//", signed, ir.BinOp("//", bn, bn)), mul(ad, ir.Abs(bn))

    def _visit_Mod(self, node):  # a % b = a - b * floor(a / b), the sign following b
        (an, ad), (bn, bd) = self.pair(node.left), self.pair(node.right)
        q = ir.BinOp("//", mul(an, bd), mul(ad, bn))
        return ir.BinOp("-", mul(an, bd), mul(q, mul(bn, ad))), mul(ad, bd)
