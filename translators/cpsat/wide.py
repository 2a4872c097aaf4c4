"""Wide ranges in CP-SAT counting: a parameter whose values matter only modulo a constant.

CP-SAT counts by enumerating solutions, so a parameter with a wide step-1 range (`range(10**12)`)
that a constraint touches cannot be enumerated. A parameter that is used *only* as `x % c`
(constants `c`) is periodic: whether a configuration is valid depends on `x` only through
`x mod M`, `M` the least common multiple of the moduli. Its count is then

    sum over residue classes r of  (values of x's domain with x = r mod M)
                                    * (count of the rest with x held at one such value)

which needs `M` sub-counts instead of `len(range)` solutions (`require(p % 7 == q)`: 7). The
classes come from the range's arithmetic, never from listing it. A parameter used any other way
(`x < 10**9`, `x // 7`) is left to the enumeration.

Layering: imports only `solverspace.lang.ir`; used by cpsat.lower (`size`) and cpsat.count.
"""
from __future__ import annotations

import math

from solverspace.lang import ir

#: A constant range domain with more values than this is worth splitting into residue classes.
WIDE_VALUES = 65_536

#: At most this many residue classes (sub-counts) per wide parameter.
MAX_RESIDUES = 4_096


def residue_modulus(model, x: str, nodes) -> int | None:
    """The least common multiple M of the constants c of every `x % c` in `nodes` (expressions
    and domains, derived values followed), or None when `x` is used another way there."""
    moduli: set[int] = set()
    seen: set[str] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ir.BinOp) and node.op == "%" and node.left == ir.Ref(x):
            c = node.right.value if isinstance(node.right, ir.Const) else None
            if type(c) is not int or c == 0:
                return None
            moduli.add(abs(c))
            continue
        if isinstance(node, ir.Ref):
            if node.name == x:
                return None
            if node.name in model.derived_value and node.name not in seen:
                seen.add(node.name)
                stack.append(model.derived_value[node.name].expr)
            continue
        if isinstance(node, ir.Closure) and x in node.deps:
            return None
        stack.extend(node.children())
    return math.lcm(*moduli) if moduli else 1


def size(values) -> int:
    """The number of values of a domain; a range's from its arithmetic (`len` stops at 2**63)."""
    if isinstance(values, range):
        return max(0, (values.stop - values.start + values.step - (1 if values.step > 0 else -1)) // values.step)
    return len(values)


def residue_classes(values: range, modulus: int) -> list[tuple[int, int]]:
    """(the first value, how many values share its residue mod `modulus`) for each residue class
    of a range, from its arithmetic: the residue of `values[i]` is periodic in `i` with period
    modulus / gcd(step, modulus)."""
    period = modulus // math.gcd(values.step, modulus)
    n = size(values)
    return [(values[i], (n - 1 - i) // period + 1) for i in range(min(n, period))]


def factor_nodes(model, factor) -> list:
    """The IR a counting factor reads (see `cpsat.count.Factor`)."""
    if factor.name in model.parameter and factor.kind in ("domain", "domain_undefined"):
        return [model.parameter[factor.name].domain]
    if factor.name in model.derived_value and factor.kind in ("defined", "undefined"):
        return [model.derived_value[factor.name].expr]
    return [model.constraint[factor.name].expr]


def wide_parameter(model, dag, params, factors) -> tuple[str, range, int] | None:
    """A parameter of `params` with a constant wide range domain whose other factors use it only
    as `x % c`: (name, its values, the modulus M), or None."""
    for x in params:
        p = model.parameter[x]
        if dag.parameter_inputs[x] or not isinstance(p.domain, ir.Range):
            continue
        if not all(isinstance(e, ir.Const) and type(e.value) is int for e in p.domain.children()):
            continue
        if p.domain.step.value == 0:
            continue  # an error the domain's evaluation reports
        values = range(p.domain.start.value, p.domain.stop.value, p.domain.step.value)
        if size(values) <= WIDE_VALUES:
            continue
        nodes = [n for f in factors if x in f.scope and not (f.kind == "domain" and f.name == x)
                 for n in factor_nodes(model, f)]
        modulus = residue_modulus(model, x, nodes)
        if modulus is not None and modulus <= MAX_RESIDUES:
            return x, values, modulus
    return None
