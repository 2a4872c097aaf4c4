"""The state of one CP-SAT lowering and its primitives: variables, literals, relations folded from
bounds, conversions between kinds of `Val`, refusal messages, and reading values back.

Layering: cpsat.val -> **cpsat.literals** -> cpsat.expr -> cpsat.lower -> ... (see
`translators.cpsat.val`). `LoweringBase` knows nothing of IR expressions beyond naming them in
refusals; `cpsat.expr` lowers expressions on top of it and `cpsat.lower` the model's items.
"""
from __future__ import annotations

import itertools
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

from ortools.sat.python import cp_model

from solverspace.lang import ir
from solverspace.lang.bounds import short_number
from solverspace.core.errors import Location
from solverspace.lang.printing import to_source

from .val import (
    LIMIT, NEGATE, Codes, CpSatRefusal, Val, const_int, decide, lit_key, linear)


@dataclass
class Where:
    """The item being lowered, for refusal messages."""

    kind: str  # "parameter", "derived value", "constraint", "objective"
    name: str
    line: int | None


class LoweringBase(ir.Visitor):
    """One `cp_model.CpModel` being built for one model, with the memos that let shared
    subexpressions share variables."""

    backend_name = "the CP-SAT backend"

    def __init__(self, model, cp: cp_model.CpModel | None = None, *, codes: Codes | None = None,
                 bounds=None):
        self.model = model
        self.cp = cp if cp is not None else cp_model.CpModel()
        self.codes = codes if codes is not None else Codes()
        self.bounds = bounds if bounds is not None else model.analysis.bounds
        self.params: dict[str, Val] = {}          # parameter name -> its variable
        self.param_vars: dict[str, cp_model.IntVar] = {}
        self.memo: dict[ir.Node, tuple[Val, object]] = {}
        self.domain_memo: dict[str, tuple[object, object]] = {}
        self.derived_memo: dict[str, tuple[Val, object]] = {}
        self.truth_memo: dict = {}
        self.multiples: dict[tuple[int, int], Val] = {}  # (x, step) -> j where x == step * j
        self.and_memo: dict = {}
        self.errors: list[tuple[object, str, str]] = []  # (literal, parameter, message)
        self.where: list[Where] = []
        self.counter = itertools.count()

    # ---------------------------------------------------------------------------- messages
    def refuse(self, node: ir.Node | None, why: str, hint: str | None = None):
        where = self.where[-1] if self.where else None
        text = f"`{to_source(node)}`" if node is not None else "this construct"
        if where is not None:
            text += f" in {where.kind} {where.name!r}"
        raise CpSatRefusal(f"the CP-SAT backend cannot lower {text}: {why}",
                           where=Location(self.model.source, where.line if where else None), hint=hint)

    @contextmanager
    def item(self, kind: str, name: str, line: int | None):
        """Within this block, refusals name the item `kind` `name` (at `line`) as their place."""
        self.where.append(Where(kind, name, line))
        try:
            yield
        finally:
            self.where.pop()

    def unsupported(self, node):
        self.refuse(node, f"{type(node).__name__} nodes have no CP-SAT lowering")

    # ---------------------------------------------------------------------------- variables
    def new_int(self, lo: int, hi: int, label: str, node: ir.Node | None = None) -> cp_model.IntVar:
        lo, hi = int(lo), int(hi)
        if lo < -LIMIT or hi > LIMIT:
            self.refuse(node, f"its values may reach [{short_number(lo)}, {short_number(hi)}], beyond CP-SAT's 64-bit domains "
                              f"(|value| <= 2**60 here)",
                        hint="tighten the ranges it depends on, reformulate the expression, or use the "
                             "reference backend, which computes with Python integers")
        if lo == hi:
            return self.cp.new_constant(lo)
        return self.cp.new_int_var(lo, hi, f"{label}#{next(self.counter)}")

    def new_bool(self, label: str):
        return self.cp.new_bool_var(f"{label}#{next(self.counter)}")

    # ---------------------------------------------------------------------------- literals
    def lit_not(self, lit):
        return (not lit) if isinstance(lit, bool) else ~lit

    def lit_and(self, lits, label="and"):
        kept, seen = [], set()
        for lit in lits:
            if lit is False:
                return False
            if lit is True:
                continue
            if lit_key(lit) in seen:
                continue
            if -lit_key(lit) - 1 in seen:
                return False
            seen.add(lit_key(lit))
            kept.append(lit)
        if not kept:
            return True
        if len(kept) == 1:
            return kept[0]
        key = frozenset(seen)
        if key in self.and_memo:
            return self.and_memo[key]
        result = self.new_bool(label)
        self.cp.add_bool_and(kept).only_enforce_if(result)
        self.cp.add_bool_or([self.lit_not(k) for k in kept]).only_enforce_if(self.lit_not(result))
        self.and_memo[key] = result
        return result

    def lit_or(self, lits, label="or"):
        return self.lit_not(self.lit_and([self.lit_not(l) for l in lits], label))

    def lit_implies(self, a, b):
        return self.lit_or([self.lit_not(a), b], "implies")

    def enforce(self, constraint, enforce):
        if enforce:
            constraint.only_enforce_if(list(enforce))
        return constraint

    def assert_lit(self, lit, enforce=()):
        """Post `lit` (under the conjunction `enforce`)."""
        if lit is True:
            return
        if lit is False:
            self.enforce(self.cp.add_bool_or([]), enforce)
            return
        self.enforce(self.cp.add_bool_or([lit]), enforce)

    def relation(self, a: Val, op: str, b: Val, label="cmp"):
        """Literal for `a op b` on integer-valued Vals (ints, bools, codes), folded from bounds."""
        lo, hi = a.lo - b.hi, a.hi - b.lo  # bounds of a - b
        decided = decide(op, lo, hi)
        if decided is not None:
            return decided
        lit = self.new_bool(label)
        self.cp.add(linear(a.expr, op, b.expr)).only_enforce_if(lit)
        self.cp.add(linear(a.expr, NEGATE[op], b.expr)).only_enforce_if(self.lit_not(lit))
        return lit

    def post_relation(self, a: Val, op: str, b: Val, enforce=()):
        """Post `a op b` (integer-valued Vals) as a constraint."""
        decided = decide(op, a.lo - b.hi, a.hi - b.lo)
        if decided is True:
            return
        if decided is False:
            self.assert_lit(False, enforce)
            return
        self.enforce(self.cp.add(linear(a.expr, op, b.expr)), enforce)

    # ---------------------------------------------------------------------------- conversions
    def as_int(self, val: Val, node) -> Val:
        if val.kind == "int":
            return val
        if val.kind == "bool":
            expr = int(val.expr) if isinstance(val.expr, bool) else val.expr
            return Val("int", expr, val.lo, val.hi)
        if val.kind == "str":
            self.refuse(node, "a categorical value is used in arithmetic or an ordering",
                        hint="categorical values can only be compared with == and !=")
        self.refuse(node, "an exact fraction (from `/`) is used where an integer is required",
                    hint="use // for integer division")

    def as_rat(self, val: Val, node) -> Val:
        if val.kind == "rat":
            return val
        v = self.as_int(val, node)
        return Val("rat", v.expr, v.lo, v.hi, 1, 1, 1)

    def truth(self, val: Val):
        """Literal: the value is truthy (Python's bool())."""
        if val.kind == "bool":
            return val.expr
        if val.kind == "str":
            empty = self.codes.code.get("")
            if empty is None or not val.lo <= empty <= val.hi:
                return True
            return self.relation(val, "!=", const_int(empty), "truth")
        if val.kind == "rat":
            val = Val("int", val.expr, val.lo, val.hi)
        key = val.expr.index if isinstance(val.expr, cp_model.IntVar) else None
        if key is not None and key in self.truth_memo:
            return self.truth_memo[key]
        lit = self.relation(val, "!=", const_int(0), "truth")
        if key is not None:
            self.truth_memo[key] = lit
        return lit

    # ---------------------------------------------------------------------------- values
    def decode(self, name: str, value: int):
        """A parameter's value as the user sees it (categorical codes decoded)."""
        if self.params[name].kind == "str":
            return self.codes.decode(value)
        return value

    def code(self, value) -> int:
        """The integer a parameter's value is in the CP-SAT model (a string's code)."""
        return self.codes(value) if type(value) is str else int(value)

    def value_of(self, val: Val, solver) -> object:
        """The Python value of a lowered Val in a solver's solution."""
        def get(expr):
            return expr if isinstance(expr, (int, bool)) else solver.value(expr)
        if val.kind == "rat":
            den = get(val.den)
            v = Fraction(get(val.expr), den) if den else None
            return int(v) if v is not None and v.denominator == 1 else v
        if val.kind == "bool":
            return bool(get(val.expr))
        if val.kind == "str":
            return self.codes.decode(get(val.expr))
        return get(val.expr)

    def assignment(self, solver, names) -> dict:
        """The values of parameters `names` in a solver's solution, decoded."""
        return {p: self.decode(p, solver.value(self.param_vars[p])) for p in names}
