"""Print IR expressions as C99 with solverspace's exact semantics.

- Every value is an `int64_t` (booleans 0/1, categorical strings as integer codes).
- `//` and `%` are Python's floor operations (`ss_fdiv`, `ss_fmod`), plain C `/` and `%` only
  where bounds prove both operands non-negative; a divisor that may be 0 sets the undefined flag
  `*u` (C's `&&`, `||` and `?:` short-circuit exactly like Python, so guards work).
- Exact `/`: a fraction-valued expression is lowered to an integer pair (numerator,
  denominator > 0) of IR expressions (`rational_pair`, `translators.c.rational`); comparisons cross-multiply and `//` of
  fractions is an integer floor division of the pair, so fractions may appear anywhere inside a
  comparison or a floor division (`(a / b) % m == 0`, `x <= y + 1 / z`). A fraction that would
  itself become a value (a loop bound, an output column) is refused.
- Every arithmetic node's interval (from `solverspace.lang.bounds`) must fit in 64 bits, otherwise the
  translation is refused naming the expression: no silent overflow.
"""
from __future__ import annotations

import math

from solverspace.lang import ir
from solverspace.lang.bounds import Bounds, Interval
from solverspace.lang.rational import may_be_fraction

from .rational import mul, rational_pair
from ..errors import UnsupportedConstruct

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
static inline int64_t ss_pow(int64_t b, int64_t k) {
    int64_t r = 1;
    for (;;) { if (k & 1) r *= b; k >>= 1; if (!k) return r; b *= b; }
}
"""

def c_name(name: str) -> str:
    return "v_" + name


class CExpressionPrinter(ir.Visitor):
    """IR -> C expression text. `owner` (a parameter, derived value or constraint) is named in
    refusals together with its line in the space file."""

    backend_name = "C"
    bits = 63          # every intermediate lies in [-2**bits, 2**bits - 1]
    suffix = ""        # of the helpers (`ss_fdiv`...): the wide printer's take `__int128`

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
            if not (interval.empty or (-(2 ** self.bits) <= interval.lo and interval.hi < 2 ** self.bits)):
                self.refuse(node, f"its values {interval} may not fit in {self.bits + 1}-bit integers",
                            hint="tighten the parameters' ranges, or use the reference backend")

    def nonnegative(self, node) -> bool:
        i = self.interval(node)
        return i.empty or i.lo >= 0

    def nonzero(self, node) -> bool:
        """Proven never 0. Not for an empty interval: that is also the bounds of a value that is
        always undefined (`x // 0`), whose helper flags it and returns 0, and C's own `/` or `%`
        by that 0 would stop the process (SIGFPE) before the flag is looked at."""
        i = self.interval(node)
        return not i.empty and (i.lo > 0 or i.hi < 0)

    # ---------------------------------------------------------------------------- nodes
    def _visit_Const(self, n):
        if type(n.value) is str:
            return self.literal(self.codes[n.value])
        self.fits(n)  # a constant beyond 64 bits would be truncated by the C compiler
        if not -(2 ** 63) <= n.value < 2 ** 63:
            self.refuse(n, "a constant beyond 64 bits", hint="scale the expression's constants down")
        return self.literal(int(n.value))

    def literal(self, value: int) -> str:
        return f"INT64_C({value})"

    def _visit_Ref(self, n):
        if n.name in self.rational:
            self.refuse(n, f"{n.name!r} is an exact fraction (it uses `/`)",
                        hint="the C backend supports `/` only where its value is compared, e.g. `a / b < c`")
        return c_name(n.name)

    # ---------------------------------------------------------------------------- arithmetic
    def integer_operands(self, n) -> tuple[str, str]:
        """Both operands of an integer operator, as C; refused where its value may be a fraction
        or may not fit 64 bits."""
        if self.fraction(n):
            self.refuse_fraction(n)
        self.fits(n)
        return self.visit(n.left), self.visit(n.right)

    def refuse_fraction(self, n):
        self.refuse(n, "its value is a fraction (exact `/`), which the C backend handles only inside "
                       "comparisons and floor divisions",
                    hint="compare the fraction (`a / b < c`), floor it (`a // b`), or use --backend cpsat")

    def _infix(self, n):
        a, b = self.integer_operands(n)
        return f"({a} {n.op} {b})"

    _visit_Add = _visit_Sub = _visit_Mul = _infix

    def _visit_Pow(self, n):
        a, _ = self.integer_operands(n)
        return self.power(n, a)

    def _visit_Div(self, n):  # a fraction's value: refused (comparisons and `//` take the pair apart)
        self.refuse_fraction(n)

    def _visit_FloorDiv(self, n):
        if self.fraction(n.left) or self.fraction(n.right):
            (a, b), (c, d) = self.pair(n.left), self.pair(n.right)
            return self.visit(ir.BinOp("//", mul(a, d), mul(b, c)))  # floor((a/b) / (c/d))
        return self.division(n, "/", "ss_fdiv" + self.suffix)

    def _visit_Mod(self, n):
        return self.division(n, "%", "ss_fmod" + self.suffix)

    def division(self, n, c_operator: str, helper: str) -> str:
        """Floor division or modulo: C's operator where both operands are proven non-negative
        and the divisor non-zero, else the helper (Python's rounding, undefined for 0)."""
        a, b = self.integer_operands(n)
        if self.nonnegative(n.left) and self.nonnegative(n.right) and self.nonzero(n.right):
            return f"({a} {c_operator} {b})"
        return f"{helper}({a}, {b}, u)"

    def power(self, n, base: str) -> str:
        """`base ** k` by squaring (`ss_pow`); every intermediate power of an integer is at most
        max|base| ** k in magnitude, which must fit 64 bits (decided without computing it)."""
        k = n.right.value
        b = self.interval(n.left)
        top = max(abs(b.lo), abs(b.hi)) if not b.empty else 0
        if top > 1 and (top == float("inf") or k * math.log2(top) >= self.bits):
            bits = "unbounded" if top == float("inf") else f"about 2**{int(k * math.log2(top))}"
            self.refuse(n, f"its intermediate powers may reach {bits}, beyond 64-bit integers",
                        hint="tighten the ranges of the base, or use the reference backend, which computes "
                             "with Python integers")
        if k == 0:
            return self.literal(1)
        return f"({' * '.join([base] * k)})" if k <= 4 else f"ss_pow{self.suffix}({base}, {k})"

    def _visit_Neg(self, n):
        self.fits(n)
        return f"(-{self.visit(n.operand)})"

    def _visit_Abs(self, n):
        self.fits(n)
        return f"ss_abs{self.suffix}({self.visit(n.operand)})"

    def _minmax(self, n, helper):
        parts = [self.visit(o) for o in n.operands]
        text = parts[0]
        for p in parts[1:]:
            text = f"{helper}({text}, {p})"
        return text

    def _visit_Min(self, n):
        return self._minmax(n, "ss_min" + self.suffix)

    def _visit_Max(self, n):
        return self._minmax(n, "ss_max" + self.suffix)

    def _visit_Not(self, n):
        return f"(!{self.visit(n.operand)})"

    def _visit_And(self, n):
        return "(" + " && ".join(f"({self.visit(o)} != 0)" for o in n.operands) + ")"

    def _visit_Or(self, n):
        return "(" + " || ".join(f"({self.visit(o)} != 0)" for o in n.operands) + ")"

    def _visit_IfExp(self, n):
        return f"(({self.visit(n.cond)}) ? ({self.visit(n.then)}) : ({self.visit(n.orelse)}))"

    def _visit_Compare(self, n):
        decided = self.model.kinds.decided(n)
        if decided is not None:  # a string never equals an integer (solverspace.lang.kinds)
            value = self.literal(int(decided))
            if any(isinstance(x, ir.BinOp) and x.op in ("//", "%", "/") for x in ir.walk(n)):
                return f"((void)({self.visit(n.left)}), (void)({self.visit(n.right)}), {value})"  # keeps *u
            return value
        if self.fraction(n.left) or self.fraction(n.right):
            (a, b), (c, d) = self.pair(n.left), self.pair(n.right)
            return self.visit(ir.Compare(n.op, mul(a, d), mul(c, b)))  # denominators are > 0
        if n.op not in ("==", "!=") and (_is_string(n.left) or _is_string(n.right)):
            self.refuse(n, "categorical values can only be compared with == and !=")
        return f"({self.visit(n.left)} {n.op} {self.visit(n.right)})"

    def fraction(self, node) -> bool:
        return may_be_fraction(node, self.rational)

    def pair(self, node):
        return rational_pair(node, self.model, self.rational)


WIDE_HELPERS = C_HELPERS.replace("int64_t", "__int128").replace("ss_fdiv(", "ss_fdiv_w(").replace(
    "ss_fmod(", "ss_fmod_w(").replace("ss_min(", "ss_min_w(").replace("ss_max(", "ss_max_w(").replace(
    "ss_abs(", "ss_abs_w(").replace("ss_pow(", "ss_pow_w(")


class CWidePrinter(CExpressionPrinter):
    """The printer for objectives and their bounds (`translators.c.best`): every value and
    intermediate a `__int128` (names and literals cast), proven to fit 127 bits, so that a
    roofline model's products of FLOP counts and rates, cross-multiplied to compare fractions,
    do not overflow where 64 bits would."""

    bits = 126
    suffix = "_w"

    def literal(self, value: int) -> str:
        return f"((__int128)INT64_C({value}))"

    def _visit_Ref(self, n):
        return f"((__int128){super()._visit_Ref(n)})"


def _is_string(node) -> bool:
    return isinstance(node, ir.Const) and type(node.value) is str
