"""The dependency DAG of a model (the BEAST paper, section X) and its level sets.

Vertices are parameters, derived values and constraints; an edge u -> v means v's definition
uses u. Level sets group the parameters that do not depend on each other: level 0 has the
parameters that depend on no other parameter, level k those whose deepest parameter dependency
is at level k-1. A derived value or constraint belongs to the level of its deepest parameter input.
"""
from __future__ import annotations

import graphlib
from functools import cached_property

from solverspace.core.errors import Location, SpaceDefinitionError, did_you_mean
from solverspace.core.records import Record


def _vertices(model):
    for p in model.parameters:
        yield p.name, p, p.depends_on
    for d in model.derived:
        yield d.name, d, d.depends_on
    for c in model.constraints:
        yield c.name, c, c.depends_on


def check_acyclic(model) -> None:
    """Every reference resolves, and no definition depends on itself (the cycle is named)."""
    known = {p.name for p in model.parameters} | {d.name for d in model.derived}
    sorter = graphlib.TopologicalSorter()
    for name, definition, deps in _vertices(model):
        for dep in deps:
            if dep not in known:
                raise SpaceDefinitionError(f"{name!r} uses unknown name {dep!r}",
                                           where=Location(model.source, definition.line),
                                           hint=did_you_mean(dep, known))
        sorter.add(name, *deps)
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1]
        first = model.definition(cycle[0]) if cycle[0] in known else None
        raise SpaceDefinitionError("dependency cycle: " + " -> ".join(reversed(cycle)),
                                   where=Location(model.source, getattr(first, "line", None)),
                                   hint="an iterator cannot depend (directly or through derived values) on itself"
                                   ) from None


class DAG(Record):
    """The dependency DAG of `model` (a record: a frozen dataclass written out)."""

    __match_args__ = ("model",)
    model: object

    def __init__(self, model: object):
        object.__setattr__(self, "model", model)

    @cached_property
    def uses(self) -> dict[str, frozenset[str]]:
        """Direct dependencies of every vertex."""
        return {name: frozenset(deps) for name, _, deps in _vertices(self.model)}

    @cached_property
    def parameter_inputs(self) -> dict[str, frozenset[str]]:
        """For every vertex, the parameters it depends on, looking through derived values."""
        params = set(self.model.parameter)
        memo: dict[str, frozenset[str]] = {}

        def inputs(name):
            if name not in memo:
                found = set()
                for dep in self.uses[name]:
                    found |= {dep} if dep in params else inputs(dep)
                memo[name] = frozenset(found)
            return memo[name]
        for name in self.uses:
            inputs(name)
        return memo

    @cached_property
    def level(self) -> dict[str, int]:
        """Level of every vertex (parameters: depth in the parameter DAG)."""
        levels: dict[str, int] = {}
        order = graphlib.TopologicalSorter({p: self.parameter_inputs[p] for p in self.model.parameter})
        for p in order.static_order():
            levels[p] = 1 + max((levels[q] for q in self.parameter_inputs[p]), default=-1)
        for name in self.uses:
            if name not in levels:
                levels[name] = max((levels[q] for q in self.parameter_inputs[name]), default=0)
        return levels

    @cached_property
    def level_sets(self) -> list[dict[str, list[str]]]:
        """Per level: its parameters, derived values and constraints, in definition order."""
        depth = 1 + max((self.level[p] for p in self.model.parameter), default=0)
        sets = [{"parameters": [], "derived": [], "constraints": []} for _ in range(depth)]
        for kind, items in (("parameters", self.model.parameters), ("derived", self.model.derived),
                            ("constraints", self.model.constraints)):
            for item in items:
                sets[self.level[item.name]][kind].append(item.name)
        return sets


def connected_groups(members, scopes, order) -> list[list[str]]:
    """Split `members` into groups linked by `scopes` (each an iterable of names; two members in
    one scope are linked). Groups come in the order of their first member in `order`, members
    in `order` too. Used by the backends to count independent parts of a space separately."""
    position = {name: i for i, name in enumerate(order)}
    parent = {m: m for m in members}

    def find(m):
        while parent[m] != m:
            parent[m] = parent[parent[m]]
            m = parent[m]
        return m
    for scope in scopes:
        linked = [m for m in scope if m in parent]
        for m in linked[1:]:
            parent[find(m)] = find(linked[0])
    groups: dict[str, list[str]] = {}
    for m in sorted(parent, key=position.__getitem__):
        groups.setdefault(find(m), []).append(m)
    return list(groups.values())
