"""Objectives of `best` and `tune`: parsing, the ranked result, and the one tie order.

Every engine of `best` (CP-SAT, branch and bound, exhaustive evaluation) parses an objective
here, returns a `BestResult`, and ranks configurations with equal objective values by
`tie_key`: the parameters in definition order, smaller values first, categorical strings in
order of first appearance in the space file (`string_order`: a closure's strings where the
closure is defined), orders by their items in that order.
Configurations where the objective is undefined (a division by zero) are not candidates.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from solverspace.lang import ir
from solverspace.core.errors import SpaceDefinitionError, SolverspaceNote, did_you_mean, ClosureTableError
from solverspace.lang.decimals import exact_tree, floats_in, note as decimal_note
from solverspace.lang.lowering import fold_tree, lower_expression, normalise_expression
from solverspace.lang.printing import to_source


@dataclass
class Ranked:
    rank: int
    objective: object          # the exact value (int or Fraction)
    configuration: dict        # parameter values in definition order


@dataclass
class BestResult:
    objective: str
    maximize: bool
    ranked: list[Ranked] = field(default_factory=list)
    exact: bool = True         # False: the time limit stopped the search (the list may be short or not optimal)
    seconds: float = 0.0
    engine: str = "cpsat"
    search: object = None      # engine statistics (nodes visited and pruned per loop level), where it keeps them
    note: str = ""             # what the engine wants said (e.g. that it searched in Python where C refused)


def parse_objective(model, text: str, what: str = "objective",
                    example: str = "--maximize 'fmas_per_block - loads_per_block'") -> ir.Expr:
    """The IR of an objective expression over the model's names (never `eval`); `what` and
    `example` word the messages (`tune`'s bound is not an objective to the user)."""
    settings = {s.name: s.value for s in model.settings}
    known = [*model.parameter, *model.derived_value, *settings]

    def resolve(name, line):
        if name in model.parameter or name in model.derived_value:
            return ir.Ref(name)
        if name in settings:
            return ir.Const(settings[name])
        raise SpaceDefinitionError(f"{what} {text!r}: unknown name {name!r}",
                                   hint=did_you_mean(name, known) or f"{what}s use parameters, derived values "
                                                                      "and settings of the space")

    lowered = lower_expression(text, resolve, filename=f"<{what}>", what=what, hint=f"e.g. {example}")
    if not isinstance(lowered, ir.Expr):
        raise SpaceDefinitionError(f"{what} {text!r} is an iterator, not a value")
    read = decimal_note(floats_in(lowered), f"{what} {text!r}")
    if read:   # `x * y / 1e3`: the floats of a model are exact decimals, as in cost(...)
        warnings.warn(read, SolverspaceNote, stacklevel=2)
        lowered = fold_tree(exact_tree(lowered))
    return normalise_expression(lowered, model)   # `x or 4` is x or 4, not a bool


def nearest_float(value) -> float | None:
    """The float nearest an exact objective value, or None where it passes a float's range (about
    1.8e308; `x ** 400 / 3`): JSON has no infinity, and the exact value is written beside it."""
    try:
        return float(value)
    except OverflowError:
        return None


def string_order(model) -> dict[str, int]:
    """Every categorical string of the space, numbered in order of first appearance in the file:
    the parameters, derived values and constraints by their line (then definition order), each
    tree in reading order, a closure's strings where it is defined. The one order of ties, for
    every engine (backends' own codes are an implementation detail)."""
    items = [(p.line or 0, 0, i, p.domain) for i, p in enumerate(model.parameters)]
    items += [(d.line or 0, 1, i, d.expr) for i, d in enumerate(model.derived)]
    items += [(c.line or 0, 2, i, c.expr) for i, c in enumerate(model.constraints)]
    order: dict[str, int] = {}
    for *_, tree in sorted(items, key=lambda item: item[:3]):
        for node in ir.walk(tree):
            if isinstance(node, ir.Const) and type(node.value) is str:
                order.setdefault(node.value, len(order))
            elif isinstance(node, ir.Closure):
                try:
                    values = model.closures.table(node).values
                except ClosureTableError:
                    continue
                for value in values:
                    if type(value) is str:
                        order.setdefault(value, len(order))
    return order


def tie_key(model, names: tuple[str, ...] | None = None, order: dict[str, int] | None = None):
    """A function: configuration (dict or env) -> the tuple that orders equal objectives
    (`names`: only a leading part of the parameters in definition order; `order`: the model's
    `string_order`, when the caller has it already)."""
    codes = string_order(model) if order is None else order
    names = model.parameter_names if names is None else names

    def coded(value):
        if type(value) is str:
            return codes[value]
        if type(value) is tuple:
            return tuple(coded(v) for v in value)
        return value

    return lambda config: tuple(coded(config[n]) for n in names)


def tie_prefix_lengths(names, order) -> list[int]:
    """Per loop of `order`: how many parameters lead the tie order (`names`, definition order)
    with all of them bound by then (the part of the tie key a prefix already decides)."""
    lengths, bound = [], set()
    for name in order:
        bound.add(name)
        count = lengths[-1] if lengths else 0
        while count < len(names) and names[count] in bound:
            count += 1
        lengths.append(count)
    return lengths


def model_or_declared(model, text: str | None, what: str = "--bound") -> tuple[ir.Expr, str]:
    """The expression of a performance model: `text` when given, else the space's declared
    `cost(...)` (an `ir.Expr` on `model.cost`); (IR, its text for messages)."""
    if text is not None:
        return parse_objective(model, text, "bound", f"{what} 'max(flops / peak, bytes / bandwidth)'"), text
    declared = getattr(model, "cost", None)
    if declared is None:
        raise SpaceDefinitionError(f"no performance model: the space declares no cost(...) and {what} is not given",
                                   hint="declare one in the space file, e.g. cost(max(flops // peak, bytes // bandwidth)), "
                                        f"or give {what} 'EXPR'")
    return declared, to_source(declared)
