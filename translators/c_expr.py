"""Print IR expressions as C99 with solverspace's exact semantics.

- Every value is an `int64_t` (booleans 0/1, categorical strings as integer codes).
- `//` and `%` are Python's floor operations (`ss_fdiv`, `ss_fmod`), plain C `/` and `%` only
  where bounds prove both operands non-negative; a divisor that may be 0 sets the undefined flag
  `*u` (C's `&&`, `||` and `?:` short-circuit exactly like Python, so guards work).
- Exact `/` is supported where its value is compared (`p / q < r`, `a / b == c / d`): the
  comparison is done by cross-multiplication with the denominators' signs normalised.
  Elsewhere it is refused.
- Every arithmetic node's interval (from `solverspace.bounds`) must fit in 64 bits, otherwise the
  translation is refused naming the expression: no silent overflow.
"""
from __future__ import annotations

from solverspace import ir
from solverspace.bounds import Bounds, Interval

from .errors import UnsupportedConstruct

C_HELPERS = r"""
static inline int64_t ss_fdiv(int64_t a, int64_t b, int *u) {
    if (b == 0) { *u = 1; return 0; }
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t ss_fmod(int64_t a, int64_t b, int *u) {
    if (b == 0) { *u = 1; return 0; }
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline int64_t ss_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t ss_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t ss_abs(int64_t a) { return a < 0 ? -a : a; }
/* sign of a/b - c/d, exact; *u set when a denominator is 0 */
static inline int ss_cmp_rat(int64_t a, int64_t b, int64_t c, int64_t d, int *u) {
    if (b == 0 || d == 0) { *u = 1; return 0; }
    if (b < 0) { a = -a; b = -b; }
    if (d < 0) { c = -c; d = -d; }
    int64_t left = a * d, right = c * b;
    return (left > right) - (left < right);
}
"""

_C_COMPARE = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}


def c_name(name: str) -> str:
    return "v_" + name


class CExpressionPrinter(ir.Visitor):
    """IR -> C expression text. `owner` (a parameter, derived value or constraint) is named in
    refusals together with its line in the space file."""

    backend_name = "C"

    def __init__(self, model, bounds: Bounds, codes: dict[str, int], rational: frozenset[str]):
        self.model = model
        self.bounds = bounds
        self.codes = codes
        self.rational = rational
        self.owner = None

    def refuse(self, node, message, hint=None):
        raise UnsupportedConstruct("C", node, message, owner=self.owner, model=self.model, hint=hint)

    def unsupported(self, node):
        self.refuse(node, f"{type(node).__name__} is not supported here")

    def print(self, node: ir.Expr, owner=None) -> str:
        self.owner = owner
        return self.visit(node)

    # ---------------------------------------------------------------------------- checks
    def interval(self, node) -> Interval:
        return self.bounds.expr(node)

    def fits(self, node, *extra: Interval):
        for interval in (self.interval(node), *extra):
            if not interval.fits_int64():
                self.refuse(node, f"its values {interval} may not fit in 64-bit integers",
                            hint="tighten the parameters' ranges, or use the reference backend")

    def nonnegative(self, node) -> bool:
        i = self.interval(node)
        return i.empty or i.lo >= 0

    def nonzero(self, node) -> bool:
        i = self.interval(node)
        return i.empty or i.lo > 0 or i.hi < 0

    # ---------------------------------------------------------------------------- nodes
    def _visit_Const(self, n):
        if type(n.value) is str:
            return f"INT64_C({self.codes[n.value]})"
        return f"INT64_C({int(n.value)})"

    def _visit_Ref(self, n):
        if n.name in self.rational:
            self.refuse(n, f"{n.name!r} is an exact fraction (it uses `/`)",
                        hint="the C backend supports `/` only where its value is compared, e.g. `a / b < c`")
        return c_name(n.name)

    def _visit_BinOp(self, n):
        if n.op == "/":
            self.refuse(n, "exact `/` is only supported as an operand of a comparison",
                        hint="compare the quotient directly (`a / b < c`) or use `//` for integer division")
        self.fits(n)
        a, b = self.visit(n.left), self.visit(n.right)
        if n.op in ("+", "-", "*"):
            return f"({a} {n.op} {b})"
        if n.op == "**":
            k = n.right.value
            for power in range(2, k + 1):
                self.fits(ir.BinOp("**", n.left, ir.Const(power)))
            return "INT64_C(1)" if k == 0 else "(" + " * ".join([a] * k) + ")"
        if self.nonnegative(n.left) and self.nonnegative(n.right) and self.nonzero(n.right):
            return f"({a} {'/' if n.op == '//' else '%'} {b})"
        helper = "ss_fdiv" if n.op == "//" else "ss_fmod"
        return f"{helper}({a}, {b}, u)"

    def _visit_Neg(self, n):
        self.fits(n)
        return f"(-{self.visit(n.operand)})"

    def _visit_Abs(self, n):
        self.fits(n)
        return f"ss_abs({self.visit(n.operand)})"

    def _minmax(self, n, helper):
        parts = [self.visit(o) for o in n.operands]
        text = parts[0]
        for p in parts[1:]:
            text = f"{helper}({text}, {p})"
        return text

    def _visit_Min(self, n):
        return self._minmax(n, "ss_min")

    def _visit_Max(self, n):
        return self._minmax(n, "ss_max")

    def _visit_Not(self, n):
        return f"(!{self.visit(n.operand)})"

    def _visit_And(self, n):
        return "(" + " && ".join(f"({self.visit(o)} != 0)" for o in n.operands) + ")"

    def _visit_Or(self, n):
        return "(" + " || ".join(f"({self.visit(o)} != 0)" for o in n.operands) + ")"

    def _visit_IfExp(self, n):
        return f"(({self.visit(n.cond)}) ? ({self.visit(n.then)}) : ({self.visit(n.orelse)}))"

    def _visit_Compare(self, n):
        left, right = self._quotient(n.left), self._quotient(n.right)
        if left is None and right is None:
            if n.op not in ("==", "!=") and (_is_string(n.left) or _is_string(n.right)):
                self.refuse(n, "categorical values can only be compared with == and !=")
            return f"({self.visit(n.left)} {_C_COMPARE[n.op]} {self.visit(n.right)})"
        (a, b), (c, d) = left or (n.left, ir.Const(1)), right or (n.right, ir.Const(1))
        self.fits(n, self.interval(ir.BinOp("*", a, d)), self.interval(ir.BinOp("*", c, b)))
        for part in (a, b, c, d):
            self.fits(part)
        sign = f"ss_cmp_rat({self.visit(a)}, {self.visit(b)}, {self.visit(c)}, {self.visit(d)}, u)"
        return f"({sign} {_C_COMPARE[n.op]} 0)"

    def _quotient(self, node):
        """(numerator, denominator) if `node` is an exact quotient, else None."""
        if isinstance(node, ir.Ref) and node.name in self.rational:
            node = self.model.derived_value[node.name].expr
            if not (isinstance(node, ir.BinOp) and node.op == "/"):
                self.refuse(node, "a fraction-valued derived value must be a single quotient `p / q` for C")
        if isinstance(node, ir.BinOp) and node.op == "/":
            for side in (node.left, node.right):
                if any(isinstance(m, ir.BinOp) and m.op == "/" for m in ir.walk(side)):
                    self.refuse(node, "nested exact `/`", hint="write a single quotient `p / q`")
            return node.left, node.right
        return None


def _is_string(node) -> bool:
    return isinstance(node, ir.Const) and type(node.value) is str
