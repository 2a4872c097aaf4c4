"""Which of the constructs that once hid wrong answers a generated space contains.

The generated-space test tallies these over its run and asserts that each appears, so the
generator (`validation.generate`) cannot silently stop producing a construct that found a bug
(closures over categorical, string-yielding and sparse inputs, string-vs-integer
equalities, counts past 64 bits; the Python forms `in` and helper functions).

    >>> from solverspace import Space
    >>> source = "k = iterator(['a', 'b'])\\nx = range(3)\\nrequire(k != 0)\\n"
    >>> sorted(constructs(Space.from_source(source).model))
    ['== / != between a string and an integer']
"""
from __future__ import annotations

import ast

from solverspace.lang import ir
from solverspace.lang.kinds import STR
from solverspace.lang.model import Model

SPARSE_SPAN = 1000   # an input is sparse when its values span 1000x more integers than it has values
PAST_64_BITS = 2 ** 64

CLOSURE_OVER_CATEGORICAL = "closure over a categorical input"
CLOSURE_OVER_STRING_CLOSURE = "closure over a closure yielding strings"
CLOSURE_OVER_SPARSE = "closure over a sparse input"
STRING_VS_INT = "== / != between a string and an integer"
COUNT_PAST_64_BITS = "count past 2**64"
MEMBERSHIP = "`in` / `not in`"
HELPER = "helper function"
PAST_CPSAT_DOMAINS = "a value past 2**60"   # past CP-SAT's domains: a refusal by name, not a crash
CPSAT_LIMIT = 2 ** 60

EVERY = (CLOSURE_OVER_CATEGORICAL, CLOSURE_OVER_STRING_CLOSURE, CLOSURE_OVER_SPARSE, STRING_VS_INT,
         COUNT_PAST_64_BITS, MEMBERSHIP, HELPER)


def constructs(model: Model, source: str = "", count: int | None = None) -> set[str]:
    """The constructs of `EVERY` in a loaded space (its source text for the Python forms, which
    lowering removes; its exact count, when known, for the size)."""
    found = _closure_inputs(model)
    nodes = [d.expr for d in model.derived] + [c.expr for c in model.constraints] + [p.domain for p in model.parameters]
    if any(isinstance(n, ir.Compare) and model.kinds.decided(n) is not None for e in nodes for n in ir.walk(e)):
        found.add(STRING_VS_INT)
    if any(isinstance(n, ir.Const) and type(n.value) is int and abs(n.value) > CPSAT_LIMIT
           for e in nodes for n in ir.walk(e)):
        found.add(PAST_CPSAT_DOMAINS)
    if count is not None and count > PAST_64_BITS:
        found.add(COUNT_PAST_64_BITS)
    tree = ast.parse(source)
    if any(isinstance(n, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops)
           for n in ast.walk(tree)):
        found.add(MEMBERSHIP)
    if any(isinstance(n, ast.FunctionDef) and not n.decorator_list for n in tree.body):
        found.add(HELPER)   # a plain (undecorated) module-level def
    return found


def _closure_inputs(model: Model) -> set[str]:
    found = set()
    for p in model.parameters:
        if not isinstance(p.domain, ir.Closure):
            continue
        for name in p.domain.deps:
            if model.kinds.of(name) == STR:
                found.add(CLOSURE_OVER_CATEGORICAL)
                if name in model.parameter and isinstance(model.parameter[name].domain, ir.Closure):
                    found.add(CLOSURE_OVER_STRING_CLOSURE)
            values = model.closures.of(name)
            if values and all(type(v) is int for v in values) and \
                    max(values) - min(values) + 1 > SPARSE_SPAN * len(values):
                found.add(CLOSURE_OVER_SPARSE)
    return found
