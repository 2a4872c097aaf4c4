"""The loop plan: the order of the loops and where each derived value and constraint goes.

The loop order is a topological order of the parameters that keeps definition order wherever
dependencies allow (so a space's loops nest the way its author wrote them). Each derived value
is computed, and each constraint tested, right after the loop of its last-bound input: the
earliest point where it can be evaluated. This is the *literal* plan; optimizations (early
breaks, bound tightening, solved equalities) belong to backends and are switchable.
"""
from __future__ import annotations

import heapq

from solverspace.core.records import Record
from solverspace.lang.dag import DAG
from solverspace.lang.model import Constraint, Derived, Model, Parameter
from solverspace.analysis.structure import structure


class Level(Record):
    """One loop: bind `parameter`, then compute `derived`, then test `constraints` in order (a
    record, `solverspace.core.records`: a frozen dataclass written out)."""

    __match_args__ = ("parameter", "derived", "constraints")
    parameter: Parameter
    derived: tuple[Derived, ...]
    constraints: tuple[Constraint, ...]

    def __init__(self, parameter: Parameter, derived: tuple[Derived, ...], constraints: tuple[Constraint, ...]):
        object.__setattr__(self, "parameter", parameter)
        object.__setattr__(self, "derived", derived)
        object.__setattr__(self, "constraints", constraints)


class Plan(Record):
    """The loops in order, and what is computed and tested before them and in each (a record:
    a frozen dataclass written out)."""

    __match_args__ = ("model", "prelude_derived", "prelude_constraints", "levels")
    model: Model
    prelude_derived: tuple[Derived, ...]       # depend on no parameter
    prelude_constraints: tuple[Constraint, ...]
    levels: tuple[Level, ...]

    def __init__(self, model: Model, prelude_derived: tuple[Derived, ...], prelude_constraints: tuple[Constraint, ...],
                 levels: tuple[Level, ...]):
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "prelude_derived", prelude_derived)
        object.__setattr__(self, "prelude_constraints", prelude_constraints)
        object.__setattr__(self, "levels", levels)

    @property
    def analysis(self):
        """The model's shared analysis (`solverspace.lang.facts`): every backend reads this one."""
        return self.model.analysis

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(level.parameter.name for level in self.levels)

    def position(self, name: str) -> int:
        """Index of the loop after which a derived value or constraint is evaluated (-1: before all)."""
        for index, level in enumerate(self.levels):
            if name == level.parameter.name or any(d.name == name for d in level.derived) \
                    or any(c.name == name for c in level.constraints):
                return index
        return -1


def loop_order(model: Model, dag: DAG) -> list[str]:
    """Topological order of parameters, smallest definition index first among the ready ones."""
    index = {p.name: i for i, p in enumerate(model.parameters)}
    waiting = {p: set(dag.parameter_inputs[p]) for p in index}
    users: dict[str, list[str]] = {p: [] for p in index}
    for p, deps in waiting.items():
        for q in deps:
            users[q].append(p)
    ready = [(index[p], p) for p, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    order = []
    while ready:
        _, p = heapq.heappop(ready)
        order.append(p)
        for user in users[p]:
            waiting[user].discard(p)
            if not waiting[user]:
                heapq.heappush(ready, (index[user], user))
    return order


def make_plan(model: Model, order: list[str] | None = None, *, structured: bool = True) -> Plan:
    """The literal plan; `order` may give another legal loop order. With `structured` (the
    default), long arithmetic value lists are narrowed by the constraints at their loops
    (`solverspace.analysis.structure`: same valid set, rows and undefined tally), so the plan's
    model may differ from `model` in those domains."""
    order = order or loop_order(model, model.analysis.dag)
    if structured:
        model = structure(model, order)
    dag = model.analysis.dag
    position = {p: i for i, p in enumerate(order)}
    for p in order:
        late = [q for q in dag.parameter_inputs[p] if position[q] >= position[p]]
        if late:
            raise ValueError(f"loop order {order} binds {p!r} before its input {late[0]!r}")

    def slot(name):
        return max((position[q] for q in dag.parameter_inputs[name]), default=-1)

    derived_at: dict[int, list[Derived]] = {}
    for d in _derived_in_dependency_order(model, dag):
        derived_at.setdefault(slot(d.name), []).append(d)
    constraints_at: dict[int, list[Constraint]] = {}
    for c in model.constraints:
        constraints_at.setdefault(slot(c.name), []).append(c)
    levels = tuple(Level(model.parameter[p], tuple(derived_at.get(i, ())), tuple(constraints_at.get(i, ())))
                   for i, p in enumerate(order))
    return Plan(model, tuple(derived_at.get(-1, ())), tuple(constraints_at.get(-1, ())), levels)


def _derived_in_dependency_order(model: Model, dag: DAG) -> list[Derived]:
    import graphlib
    graph = {d.name: {u for u in dag.uses[d.name] if u in model.derived_value} for d in model.derived}
    sorter = graphlib.TopologicalSorter(graph)
    index = {d.name: i for i, d in enumerate(model.derived)}
    sorter.prepare()
    result = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=index.__getitem__)
        result.extend(model.derived_value[n] for n in ready)
        sorter.done(*ready)
    return result
