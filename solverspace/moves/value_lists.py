"""Each parameter's *value list* and parameter indices.

A parameter's value list is the superset domain `export-t1` writes (`superset_values`, shared with
`solverspace.io.t1.write`): every value its domain takes for some values of its inputs, the inputs
themselves taken from their own value lists, in loop order, with derived values inlined. It holds
every value the parameter takes in a valid configuration (and may hold more: constraints are not
applied). It is sorted in one documented order (`value_key`):

- numbers ascending;
- categorical strings in the one tie order of `best` (`objective.string_order`: first appearance in
  the space file); a string the file never spells (computed) comes after those, by its text;
- orders (tuples) by their items, item by item in the same order.

A configuration's *parameter indices* are the positions of its values in these lists; the index
box is the product of `range(len(list))`. Kernel Tuner calls a parameter's value list its values
(`tune_params`) and the positions its parameter indices.

Refused, with a message naming the parameter: a domain of more than `MAX_LIST_VALUES` values, or a
dependent domain whose inputs' value lists have more than `MAX_INPUT_COMBINATIONS` combinations
(each combination is evaluated once).
"""
from __future__ import annotations

import graphlib
import itertools
import operator
from typing import Callable

from solverspace.core.errors import Location, SpaceDefinitionError, SpaceEvaluationError
from solverspace.core.orders import domain_size
from solverspace.lang import ir
from solverspace.analysis.objective import string_order
from solverspace.analysis.plan import loop_order
from solverspace.lang.evaluate import Undefined, compile_domain, compile_expr

__all__ = ["ValueListError", "MAX_LIST_VALUES", "MAX_INPUT_COMBINATIONS", "inline_derived", "superset_values",
           "value_key", "value_lists", "ParamIndex"]

MAX_LIST_VALUES = 1_000_000          # the longest value list
MAX_INPUT_COMBINATIONS = 1_000_000   # input combinations evaluated to build one dependent parameter's list


class ValueListError(SpaceDefinitionError):
    """A parameter's value list cannot be built (the message says which and why)."""


def inline_derived(model) -> dict[str, ir.Expr]:
    """Every derived value as an expression of parameters only."""
    graph = {d.name: {r for r in d.depends_on if r in model.derived_value} for d in model.derived}
    result: dict[str, ir.Expr] = {}
    for name in graphlib.TopologicalSorter(graph).static_order():
        result[name] = ir.substitute(model.derived_value[name].expr, result)
    return result


def superset_values(model, p, domain: ir.Domain, supersets: dict, refuse: Callable, *,
                    max_values: int, max_combinations: int, inputs: list[str] | None = None,
                    complete: Callable[[dict], None] | None = None) -> list:
    """The values `domain` (parameter `p`'s domain with derived values inlined, or, with
    `complete`, as written) takes for every combination of its inputs' values in `supersets`, in
    order of first appearance (an input combination where the domain is undefined contributes
    nothing). `inputs`: the parameters it reads (default: those its tree refers to);
    `complete(env)` adds the derived values the domain reads to an environment of input values
    (raising `Undefined` where one is undefined). `refuse(message, line)` builds the exception
    raised past `max_values` values or `max_combinations` combinations, or when evaluating the
    domain fails."""
    if inputs is None:
        inputs = [q for q in model.parameter_names if q in ir.refs(domain)]
    evaluate = compile_domain(domain, p.name, closure_globals=dict(model.closure_globals),
                              max_closure_values=model.max_closure_values)
    if not inputs:
        try:
            env: dict = {}
            if complete is not None:
                complete(env)
            values = evaluate(env)
        except Undefined:
            values = []
        size = domain_size(values)
        if size > max_values:
            raise refuse(f"parameter {p.name!r} has {size} values (limit {max_values})", p.line)
        return list(values)
    combinations = 1
    for q in inputs:
        combinations *= max(len(supersets[q]), 1)
    if combinations > max_combinations:
        raise refuse(f"parameter {p.name!r} depends on {', '.join(inputs)}: {combinations} combinations of "
                     f"their values to evaluate (limit {max_combinations})", p.line)
    seen: dict = {}
    for combo in itertools.product(*(supersets[q] for q in inputs)):
        try:
            env = dict(zip(inputs, combo))
            if complete is not None:
                complete(env)
            values = evaluate(env)
        except Undefined:
            continue
        except SpaceEvaluationError as exc:
            raise refuse(f"parameter {p.name!r}: {exc.message} for "
                         + ", ".join(f"{k}={v}" for k, v in zip(inputs, combo)), p.line) from None
        if domain_size(values) > max_values:
            raise refuse(f"parameter {p.name!r} takes more than {max_values} values", p.line)
        for v in values:
            seen.setdefault(v, None)
        if len(seen) > max_values:
            raise refuse(f"parameter {p.name!r} takes more than {max_values} values", p.line)
    return list(seen)


def value_key(model, order: dict[str, int] | None = None):
    """The sort key of the documented value order (module docstring): numbers ascending, strings
    in `best`'s tie order, orders by their items."""
    codes = string_order(model) if order is None else order
    unknown = len(codes)

    def key(value):
        if type(value) is str:
            code = codes.get(value)
            return (1, unknown, value) if code is None else (1, code, "")
        if type(value) is tuple:
            return (2, tuple(key(item) for item in value))
        return (0, value)
    return key


def value_lists(model) -> dict[str, tuple]:
    """Each parameter's value list (definition order of the parameters), sorted by `value_key`."""
    dag = model.analysis.dag

    def refuse(message, line=None):
        return ValueListError(f"cannot build value lists: {message}", where=Location(model.source, line),
                              hint="value lists (parameter indices, neighbours) need every parameter's values "
                                   "listed; narrow the domain or its inputs' domains")

    supersets: dict[str, list] = {}
    for name in loop_order(model, model.analysis.dag):
        p = model.parameter[name]
        inputs = [q for q in model.parameter_names if q in dag.parameter_inputs[name]]
        supersets[name] = superset_values(model, p, p.domain, supersets, refuse, max_values=MAX_LIST_VALUES,
                                          max_combinations=MAX_INPUT_COMBINATIONS, inputs=inputs,
                                          complete=derived_for(model, name))
    key = value_key(model)
    return {name: tuple(sorted(supersets[name], key=key)) for name in model.parameter_names}


def derived_for(model, name: str) -> Callable[[dict], None]:
    """A function that adds to an environment of parameter values every derived value that
    `name` reads, directly or through other derived values (closures' inputs included), in
    dependency order, with the evaluator every backend is checked against."""
    uses = model.analysis.dag.uses
    needed: set[str] = set()
    stack = [name]
    while stack:
        for dep in uses[stack.pop()]:
            if dep in model.derived_value and dep not in needed:
                needed.add(dep)
                stack.append(dep)
    graph = {d: {u for u in uses[d] if u in needed} for d in needed}
    steps = [(d, compile_expr(model.derived_value[d].expr)) for d in graphlib.TopologicalSorter(graph).static_order()]

    def complete(env: dict) -> None:
        for d, fn in steps:
            env[d] = fn(env)
    return complete


class ParamIndex:
    """Value lists with lookups both ways: configuration <-> parameter indices."""

    def __init__(self, parameters: tuple[str, ...], lists: dict[str, tuple]):
        self.parameters = parameters
        self.lists = [lists[p] for p in parameters]
        self.positions = [{value: i for i, value in enumerate(values)} for values in self.lists]
        self.sizes = tuple(len(values) for values in self.lists)

    def indices(self, values: tuple) -> tuple[int, ...]:
        """Parameter indices of a configuration (values in `parameters` order); a value that is
        in no value list: `ValueListError` naming it."""
        result = []
        for name, lookup, values_of, value in zip(self.parameters, self.positions, self.lists, values):
            try:
                result.append(lookup[value])
            except (KeyError, TypeError):
                shown = ", ".join(map(repr, values_of[:8])) + (", ..." if len(values_of) > 8 else "")
                raise ValueListError(f"{name}={value!r} is not in parameter {name!r}'s value list "
                                     f"({len(values_of)} values: {shown})",
                                     hint="give a value from the value list (space.value_lists())") from None
        return tuple(result)

    def values(self, indices) -> tuple:
        """The configuration of values at a point of the index box (not checked for validity)."""
        if len(indices) != len(self.parameters):
            raise ValueListError(f"{len(indices)} parameter indices given; the space has {len(self.parameters)} "
                                 f"parameters ({', '.join(self.parameters)})")
        result = []
        for name, values_of, i in zip(self.parameters, self.lists, indices):
            try:
                i = operator.index(i)
            except TypeError:
                raise ValueListError(f"parameter index {i!r} of {name!r} is not a whole number") from None
            if not 0 <= i < len(values_of):
                raise ValueListError(f"parameter index {i} of {name!r} is out of range: its value list has "
                                     f"{len(values_of)} values (indices 0 to {len(values_of) - 1})")
            result.append(values_of[i])
        return tuple(result)
