"""CP-SAT on spaces with order parameters: questions asked of the slot model, answers joined back.

CP-SAT counts, samples and completes the slot model (`order_slots`: one parameter per position
of each order), and the answers are translated back: a sample's and a completion's slots joined
into orders; the constraints of a conflict named as the user wrote them (`rule#2`, a part of a
split constraint, is `rule`; `seq#length`, a sequence's length range, belongs to the domains and
is dropped: the set still rules the assignment out with the domains, and stays minimal among the
user's constraints). The configuration is a bijection between the two models, so uniform
samples stay uniform and a completion of one is a completion of the other.
"""
from __future__ import annotations

from solverspace.lang import ir
from solverspace.core.results import rows_to_array

from ..order_slots import slots
from .explain import Completion
from solverspace.analysis.objective import parse_objective
from solverspace.lang.printing import to_source


def _join(layout, configuration: dict | None) -> dict | None:
    """A slot model configuration (dict) as one of the order model."""
    if configuration is None:
        return None
    out = {}
    for name in layout.columns:
        if name in layout.orders:
            names, end = layout.orders[name]
            if all(n in configuration for n in names):
                out[name] = tuple(configuration[n] for n in names if configuration[n] != end)
        elif name in configuration:
            out[name] = configuration[name]
    out.update((k, v) for k, v in configuration.items() if k not in out and "__" not in k)
    return out


def complete(plan, assignment: dict, complete_plan, **options):
    """`cpsat.explain.complete` through the slot model (see the module docstring)."""
    slot, layout = slots(plan, "CP-SAT")
    mapped = layout.slot_values(assignment)
    if mapped is None:   # an order longer than its iterator allows: no completion
        return Completion(dict(assignment), False)
    result = complete_plan(slot, mapped, **options)
    model = plan.model
    result.assignment = dict(assignment)
    result.completion = _join(layout, result.completion)

    def original(names):
        found = [n.split("#")[0] for n in names]
        return [n for n in dict.fromkeys(found) if n in model.constraint or n in model.derived_value]
    result.conflict = original(result.conflict)
    failing = {}
    for name, (text, config) in result.failing.items():
        key = name.split("#")[0]
        item = model.constraint.get(key) or model.derived_value.get(key)
        if item is not None and any(isinstance(n, ir.OrderFn) for n in ir.walk(item.expr)):
            text = to_source(item.expr)   # the slot model's text would name slots
        failing.setdefault(key, (text, _join(layout, config)))
    result.undefined = original(result.undefined)
    result.failing = {k: v for k, v in failing.items() if k in result.undefined}
    return result


class OrderSampler:
    """A sampler of the slot model whose draws are joined back into orders."""

    def __init__(self, inner, plan):
        self.inner = inner
        self.layout = slots(plan, "CP-SAT")[1]
        self.columns = plan.model.parameter_names

    @property
    def guarantee(self) -> str:
        return self.inner.guarantee

    @property
    def size_exact(self) -> bool:
        return getattr(self.inner, "size_exact", True)

    def size(self) -> int:
        return self.inner.size()

    def draw(self, n: int, seed: int, replace: bool):
        return rows_to_array(self.layout.rows(self.inner.draw(n, seed, replace)), self.columns)


def best(plan, objective: str, best_of_plan, **options):
    """`cpsat.best.best` through the slot model: the objective (which may use the order
    functions) lowered in the order model, translated to slots; configurations joined back."""
    slot, layout = slots(plan, "CP-SAT")
    expr = layout.rewrite(parse_objective(plan.model, objective), None)
    result = best_of_plan(slot, objective, expr=expr, **options)
    for ranked in result.ranked:
        ranked.configuration = _join(layout, ranked.configuration)
    return result
