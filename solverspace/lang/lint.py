"""Warnings about legal spaces that are probably mistakes.

`categorical_typos`: a parameter with a statically known value set (value lists, constant ranges
and their algebra; closures and dependent iterators are not known before enumerating) compared
with `==` / `!=` (or `in`, which lowers to `==`) to a string it never takes. Comparing with an
impossible value is legal (always False / True), so this is a warning, not an error.
"""
from __future__ import annotations

from solverspace.lang import ir
from solverspace.core.errors import SpaceEvaluationError, did_you_mean
from solverspace.lang.kinds import STR
from solverspace.lang.model import Model, ParameterKind
from solverspace.lang.evaluate import compile_domain


def static_values(domain: ir.Domain) -> list | None:
    """The values of a domain that depends on nothing, or None."""
    if ir.refs(domain) or any(isinstance(n, ir.Closure) for n in ir.walk(domain)):
        return None
    try:
        return list(compile_domain(domain, "<lint>")({}))
    except (SpaceEvaluationError, ArithmeticError, TypeError, ValueError):
        return None


def categorical_typos(model: Model) -> list[str]:
    """One message per (place, parameter, string) compared but never taken, with a did-you-mean."""
    # only categorical parameters can take strings (and their value lists are short: a wide range is never listed)
    known = {p.name: values for p in model.parameters
             if model.kinds.of(p.name) == STR and (values := static_values(p.domain)) is not None}
    places = [(f"constraint {c.name!r}", c.line, c.expr) for c in model.constraints]
    places += [(f"derived value {d.name!r}", d.line, d.expr) for d in model.derived]
    places += [(f"iterator {p.name!r}", p.line, p.domain) for p in model.parameters if p.kind == ParameterKind.DEFERRED]
    messages, seen = [], set()
    for place, line, tree in places:
        for node in ir.walk(tree):
            if not (isinstance(node, ir.Compare) and node.op in ("==", "!=")):
                continue
            for ref, const in ((node.left, node.right), (node.right, node.left)):
                if not (isinstance(ref, ir.Ref) and ref.name in known and isinstance(const, ir.Const)
                        and type(const.value) is str and const.value not in known[ref.name]):
                    continue
                if (place, ref.name, const.value) in seen:
                    continue
                seen.add((place, ref.name, const.value))
                values = known[ref.name]
                strings = [v for v in values if isinstance(v, str)]
                guess = did_you_mean(const.value, strings) or f"its values are {values[:10]!r}"
                where = f"{model.source}:{line}: " if line else ""
                messages.append(f"{where}{place} compares {ref.name!r} with {const.value!r}, which "
                                f"{ref.name!r} never takes ({'==' if node.op == '==' else '!='} is always "
                                f"{node.op == '!='}); {guess}")
    return messages
