"""Sinks with a default counted in Python: a sink parameter one of whose values CP-SAT proves accepted
whatever the others are leaves the enumeration, and each solution of the rest is weighed by the
number of its accepted values (`translators.cpsat.sinks`).
"""
from __future__ import annotations

from ortools.sat.python import cp_model

from solverspace.core.errors import Location

from ..lower import CpSatRefusal, Lowering
from ..sinks import SinkCount
from ..solver import invalid_model, new_solver
from ..wide import size as domain_size
from .base import CounterBase
from .problem import Component, Factor, Weight, post


class Sinks(CounterBase):
    """The sink strategy of `Counter`."""

    def sinks(self, component: Component, fixed: dict, deadline) -> Component:
        """The component with its sinks (`translators.cpsat.sinks`) summed out in Python: a
        parameter with a constant domain of at most `SINK_VALUES` values, whose conditions (other
        than its domain) are constraints and derived values' definedness that no other sink's
        conditions share and no weight reads, and *with a default*: a value that CP-SAT proves
        accepted by those conditions for every assignment of the others that satisfies the rest
        of the component (`has_default`). The default makes the enumeration without the sink a
        projection of the one with it: never more solutions, here as many fewer as the sink has
        accepted values on average (Hotspot's `blocks_per_sm`, default 0: 4.25x). Sinks are
        taken last parameter first, each proven with the previous ones already gone, so every
        solution of the rest extends to all of them; after `SINK_FAILURES` candidates without a
        default the search ends (a proof costs milliseconds, and every parameter of GEMM's T1
        files looks like a sink). The same component when it has none; memoised on the
        component's shape (parameters, factors, weights, names of the fixed parameters)."""
        key = (component.params, frozenset(component.factors), tuple((w.param, w.scope) for w in component.weights),
               frozenset(fixed))
        found = self.sink_memo.get(key)
        if found is None:
            found = self.sink_memo[key] = self._find_sinks(component, fixed, deadline)
        if not found:
            return component
        gone = {w.param for w, _ in found}
        absorbed = {f for _, touching in found for f in touching}
        return Component(tuple(p for p in component.params if p not in gone),
                         [f for f in component.factors if f not in absorbed],
                         component.weights + [w for w, _ in found])

    def _find_sinks(self, component: Component, fixed: dict, deadline) -> list:
        params, factors, found, failed = list(component.params), list(component.factors), [], 0
        for p in reversed(component.params):
            touching = [f for f in factors if p in f.scope]
            conditions = [f for f in touching if f.kind != "domain"]
            if (any(p in w.scope for w in component.weights + [w for w, _ in found]) or self.scope(p) != {p}
                    or not conditions or len(touching) != len(conditions) + 1
                    or Factor("domain", p, self.scope(p)) not in touching
                    or any(f.kind not in ("accept", "defined") for f in conditions)):
                continue
            values = self.domain_values(p, {})
            if not 2 <= domain_size(values) <= self.limits.SINK_VALUES:
                continue
            sink = SinkCount.build(self.model, p, list(values), conditions)
            if sink is None:
                continue
            rest = [q for q in params if q != p]
            others = [f for f in factors if p not in f.scope]
            if not self.has_default(sink, conditions, rest, others, deadline):
                failed += 1
                if failed == self.limits.SINK_FAILURES:
                    break
                continue
            scope = set().union(*(f.scope for f in conditions)) - {p}
            found.append((Weight(p, tuple(sorted(scope, key=self.order.__getitem__)), [], sink=sink,
                                 factors=touching), touching))
            params, factors = rest, others
        return found

    def has_default(self, sink: SinkCount, conditions, params, factors, deadline) -> bool:
        """Whether the sink held at its first or its last value satisfies `conditions` for every
        assignment of `params` that satisfies `factors` (CP-SAT finds no assignment where one
        of the conditions rejects or is undefined; an assignment it finds for the first value is
        tried on the last in Python). Parameters held fixed in the problem are left free here,
        so that the answer holds for every value they are held at."""
        candidates = list(dict.fromkeys((sink.values[0], sink.values[-1])))
        while candidates:
            default = candidates.pop(0)
            lowering = Lowering(self.model, codes=self.facts.codes, bounds=self.facts.bounds)
            try:
                lowering.fix_param(sink.param, default)
                for q in params:
                    lowering.param(q)
                for f in factors:
                    post(lowering, self.model, f)
                failures = []
                for f in conditions:
                    for kind in ("rejected", "undefined") if f.kind == "accept" else ("undefined",):
                        failure = lowering.cp.new_bool_var(f"{kind} {f.name}")
                        post(lowering, self.model, Factor(kind, f.name, f.scope), (failure,))
                        failures.append(failure)
            except CpSatRefusal:
                return False
            lowering.cp.add_bool_or(failures)
            solver = new_solver(self.options, deadline)
            status = solver.solve(lowering.cp)
            if status == cp_model.INFEASIBLE:
                return True
            if status == cp_model.MODEL_INVALID:
                raise invalid_model(lowering.cp, Location(self.model.source))
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                return False  # the time limit: no proof
            found = lowering.assignment(solver, [q for q in lowering.param_vars if q != sink.param])
            candidates = [v for v in candidates if sink.accepts(found, v)]
        return False
