"""Print IR as the Python a user would have written (used by `explain`, `check` and errors).

One `_visit_<Node>` method per node type; parentheses only where precedence needs them.
"""
from __future__ import annotations

from solverspace.lang import ir

_PRECEDENCE = {
    "IfExp": 1, "Or": 2, "And": 3, "Not": 4, "Compare": 5,
    "+": 6, "-": 6, "*": 7, "/": 7, "//": 7, "%": 7, "Neg": 8, "**": 9, "atom": 10,
}


class PythonPrinter(ir.DomainVisitor):
    backend_name = "the Python printer"

    def doprint(self, node: ir.Node) -> str:
        return self.visit(node)[0]

    # Each method returns (text, precedence).
    def _sub(self, node, min_prec, strict=False):
        text, prec = self.visit(node)
        if prec < min_prec or (strict and prec == min_prec):
            return f"({text})"
        return text

    def _visit_Const(self, n):
        return repr(n.value), _PRECEDENCE["atom"]

    _visit_Float = _visit_Const   # (only in messages while loading: `decimals` replaces it)

    def _visit_Ref(self, n):
        return n.name, _PRECEDENCE["atom"]

    def _visit_BinOp(self, n):
        prec = _PRECEDENCE[n.op]
        if n.op == "**":  # right associative
            return f"{self._sub(n.left, prec, True)} ** {self._sub(n.right, prec)}", prec
        return f"{self._sub(n.left, prec)} {n.op} {self._sub(n.right, prec, True)}", prec

    def _visit_Neg(self, n):
        prec = _PRECEDENCE["Neg"]
        return f"-{self._sub(n.operand, prec)}", prec

    def _visit_Not(self, n):
        prec = _PRECEDENCE["Not"]
        return f"not {self._sub(n.operand, prec)}", prec

    def _visit_Compare(self, n):
        prec = _PRECEDENCE["Compare"]
        return f"{self._sub(n.left, prec, True)} {n.op} {self._sub(n.right, prec, True)}", prec

    def _boolop(self, n, word):
        prec = _PRECEDENCE[type(n).__name__]
        return f" {word} ".join(self._sub(o, prec, True) for o in n.operands), prec

    def _visit_And(self, n):
        return self._boolop(n, "and")

    def _visit_Or(self, n):
        return self._boolop(n, "or")

    def _visit_IfExp(self, n):
        prec = _PRECEDENCE["IfExp"]
        return (f"{self._sub(n.then, prec, True)} if {self._sub(n.cond, prec, True)} "
                f"else {self._sub(n.orelse, prec)}"), prec

    def _call(self, name, args):
        return f"{name}({', '.join(self.doprint(a) for a in args)})", _PRECEDENCE["atom"]

    def _visit_Min(self, n):
        return self._call("min", n.operands)

    def _visit_Max(self, n):
        return self._call("max", n.operands)

    def _visit_Abs(self, n):
        return self._call("abs", (n.operand,))

    def _visit_Range(self, n):
        plain_step = isinstance(n.step, ir.Const) and n.step.value == 1
        return self._call("range", (n.start, n.stop) if plain_step else (n.start, n.stop, n.step))

    def _visit_Values(self, n):
        return "[" + ", ".join(self.doprint(i) for i in n.items) + "]", _PRECEDENCE["atom"]

    def _visit_SetOp(self, n):
        return f"{n.op}({self.doprint(n.left)}, {self.doprint(n.right)})", _PRECEDENCE["atom"]

    def _visit_IfDomain(self, n):
        return (f"{self.doprint(n.then)} if {self.doprint(n.cond)} else {self.doprint(n.orelse)}",
                _PRECEDENCE["IfExp"])

    def _visit_Permutation(self, n):
        return self._call("permutation", (ir.Values(n.items),))

    def _visit_Interleave(self, n):
        return self._call("interleave", n.parts)

    def _visit_Sequence(self, n):
        return self._call("sequence", (ir.Values(n.items), n.min_len, n.max_len))

    def _visit_OrderFn(self, n):
        return self._call(n.fn, n.args)

    def _visit_Closure(self, n):
        return f"{n.name}({', '.join(n.deps)})  # generator", _PRECEDENCE["atom"]


def to_source(node: ir.Node) -> str:
    """Python source text for a node, e.g. `blk_m // dim_m`. A tree too deep to print (a sum of
    thousands of terms built by Python before the loader balances it: a message about it) is
    printed with its long chains balanced (`ir.regroup`), the same value."""
    try:
        return PythonPrinter().doprint(node)
    except RecursionError:
        return PythonPrinter().doprint(ir.regroup(node))
