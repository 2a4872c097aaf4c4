"""The vocabulary of the CP-SAT lowering: `Val` (a lowered value), categorical `Codes`, the refusal
`CpSatRefusal`, CP-SAT's domain limits and the small helpers on linear expressions and constant
domains.

Layering (bottom to top; no module imports one above it): **cpsat.val** -> cpsat.literals ->
cpsat.expr -> cpsat.lower -> cpsat.solver -> cpsat.count -> cpsat.run / cpsat.best /
cpsat.explain / cpsat.sample / cpsat.hashing -> cpsat.backend (the backend facade). This module imports only
OR-Tools and `solverspace.core.errors`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from solverspace.core.errors import BackendUnavailableError

#: Largest magnitude of any CP-SAT variable bound we create: CP-SAT accepts |v| <= 2**62 - 1 and
#: checks that linear expressions cannot overflow int64, so keep headroom for sums of a few terms.
LIMIT = 2 ** 60

#: Constant domains with at most this many values become an explicit CP-SAT domain.
EXPLICIT_DOMAIN = 100_000


class CpSatRefusal(BackendUnavailableError):
    """A construct of the space that the CP-SAT backend cannot lower (the message names it)."""


class BeyondDomains(ArithmeticError):
    """A lowered value whose bounds (or a coefficient) leave CP-SAT's 64-bit range: OR-Tools would
    reject the comparison or turn the coefficient into a float, so the lowering refuses the
    expression that made it (`args[0]`: the magnitude reached)."""


@dataclass(frozen=True)
class Val:
    """A lowered value.

    kind "int": `expr` is an int or a CP-SAT linear expression within [lo, hi].
    kind "bool": `expr` is a Python bool or a CP-SAT literal (0/1 in arithmetic).
    kind "rat": the exact fraction `expr / den`, numerator in [lo, hi], denominator in [dlo, dhi]
        with dlo >= 1 wherever the value is defined (den is 0 only where the division that made
        it is undefined).
    kind "str": `expr` is the integer code of a categorical string, codes in [lo, hi].
    """

    kind: str
    expr: object
    lo: int
    hi: int
    den: object = 1
    dlo: int = 1
    dhi: int = 1

    def __post_init__(self):
        if not (isinstance(self.expr, int) and isinstance(self.den, int)):   # a CP-SAT expression
            top = max(abs(self.lo), abs(self.hi), abs(self.dlo), abs(self.dhi))
            if top > LIMIT:
                raise BeyondDomains(top)

    @property
    def constant(self) -> bool:
        return self.lo == self.hi and (self.kind != "rat" or self.dlo == self.dhi)

    @property
    def numerator(self) -> "Val":
        """The numerator of a fraction (the value itself for an integer) as an integer Val."""
        return Val("int", self.expr, self.lo, self.hi)

    @property
    def denominator(self) -> "Val":
        """The denominator of a fraction (1 for an integer) as an integer Val."""
        return Val("int", self.den, self.dlo, self.dhi)


def const_int(value: int) -> Val:
    return Val("int", value, value, value)


def const_bool(value: bool) -> Val:
    return Val("bool", bool(value), int(value), int(value))


def bool_val(lit) -> Val:
    return const_bool(lit) if isinstance(lit, bool) else Val("bool", lit, 0, 1)


def rat(num: Val, den: Val) -> Val:
    """The fraction num/den of two integer Vals."""
    return Val("rat", num.expr, num.lo, num.hi, den.expr, den.lo, den.hi)


class Codes:
    """Integer codes of categorical strings, in order of first use (deterministic per model)."""

    def __init__(self):
        self.code: dict[str, int] = {}
        self.text: list[str] = []

    def __call__(self, text: str) -> int:
        if text not in self.code:
            self.code[text] = len(self.text)
            self.text.append(text)
        return self.code[text]

    def decode(self, code: int) -> str:
        return self.text[code]


# -------------------------------------------------------------------------------- literals
def lit_key(lit) -> int | bool:
    """A literal's identity: its index (negative for a negation), or the bool itself."""
    return lit if isinstance(lit, bool) else lit.index


NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def decide(op, lo, hi):
    """Truth of `d op 0` for every d in [lo, hi], or None when it depends."""
    checks = {
        "<": (hi < 0, lo >= 0), "<=": (hi <= 0, lo > 0), ">": (lo > 0, hi <= 0),
        ">=": (lo >= 0, hi < 0), "==": (lo == hi == 0, lo > 0 or hi < 0), "!=": (lo > 0 or hi < 0, lo == hi == 0),
    }
    always, never = checks[op]
    if always:
        return True
    if never:
        return False
    return None


# -------------------------------------------------------------------------------- linear expressions
def as_linear(expr):
    return int(expr) if isinstance(expr, bool) else expr


def linear(a, op, b):
    """The CP-SAT relation `a op b` (at least one side a CP-SAT expression)."""
    a, b = as_linear(a), as_linear(b)
    if isinstance(a, int) and isinstance(b, int):
        raise AssertionError("constant relations are decided before posting")
    if isinstance(a, int):  # keep a CP-SAT expression on the left
        a, b, op = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
    return {"<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
            "==": lambda: a == b, "!=": lambda: a != b}[op]()


def add(a, b):
    a, b = as_linear(a), as_linear(b)
    if isinstance(b, int) and b == 0:
        return a
    if isinstance(a, int) and a == 0:
        return b
    return a + b


def sub(a, b):
    a, b = as_linear(a), as_linear(b)
    if isinstance(b, int) and b == 0:
        return a
    return a - b


def neg(a):
    a = as_linear(a)
    return -a


def add_vals(a: Val, b: Val) -> Val:
    """a + b of two integer Vals (no new variable)."""
    return Val("int", add(a.expr, b.expr), a.lo + b.lo, a.hi + b.hi)


def sub_vals(a: Val, b: Val) -> Val:
    """a - b of two integer Vals (no new variable)."""
    return Val("int", sub(a.expr, b.expr), a.lo - b.hi, a.hi - b.lo)


def scale(v: Val, c: int) -> Val:
    expr = as_linear(v.expr)
    if c == 0:
        return const_int(0)
    if c == 1:
        return Val("int", expr, v.lo, v.hi)
    if abs(c) > LIMIT and not isinstance(expr, int):
        raise BeyondDomains(abs(c))
    lo, hi = sorted((v.lo * c, v.hi * c))
    return Val("int", expr * c, lo, hi)


def clamp(v, lo, hi):
    return min(max(v, lo), hi)


# -------------------------------------------------------------------------------- constant domains
def coded_hull(values, codes: Codes) -> tuple[int, int]:
    """(smallest, largest) code of a constant domain; a range is read from its ends, never
    listed (`range(10**12)` is an interval, not a table)."""
    if isinstance(values, range):
        return (min(values[0], values[-1]), max(values[0], values[-1])) if values else (0, 0)
    coded = [codes(v) if type(v) is str else v for v in values]
    return (min(coded), max(coded)) if coded else (0, 0)


def cp_domain(values, codes: Codes) -> cp_model.Domain:
    """A CP-SAT domain of a constant value sequence: a step-1 range is one interval."""
    if isinstance(values, range) and abs(values.step) == 1:
        lo, hi = coded_hull(values, codes)
        return cp_model.Domain(lo, hi)
    return cp_model.Domain.from_values(sorted({codes(v) if type(v) is str else v for v in values}))
