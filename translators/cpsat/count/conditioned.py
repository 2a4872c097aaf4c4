"""Counting conditioned on an articulation parameter: held at each of its values, the rest of the
component splits into parts that are counted separately and multiply.
"""
from __future__ import annotations

import math

from solverspace.lang.dag import connected_groups

from ..wide import size as domain_size
from .base import CounterBase
from .problem import Component, CountResult, Problem


class Conditioned(CounterBase):
    """The conditioning strategy of `Counter`."""

    def articulation(self, component: Component, fixed: dict):
        """(parameter, its values, the component as a problem) for a parameter whose values do not
        depend on others (a constant domain) and whose removal disconnects the component: held at
        each of its values, the rest splits into parts counted separately. Of those, the one
        leaving the smallest largest part; None when none qualifies or the component is small
        (its domains' product below `CONDITION_MIN_SPACE`: a joint enumeration is cheap). A sink
        counted in Python (`sinks`) links the parameters its weight reads, as one condition: the
        sub-problems put it back (with its conditions) and find it again."""
        params, factors = self.restored(component)
        sinks = [w for w in component.weights if w.sink is not None]
        absorbed = {f for w in sinks for f in w.factors}
        nodes = params - {w.param for w in sinks}
        scopes = [f.scope for f in factors if f not in absorbed] + [frozenset(w.scope) for w in sinks]
        order = sorted(self.order, key=self.order.__getitem__)
        domains = {q: self.domain_values(q, {}) for q in component.params if self.scope(q) == {q}}
        if math.prod(domain_size(v) for v in domains.values()) < self.limits.CONDITION_MIN_SPACE:
            return None
        best = None
        for q, values in domains.items():
            if not 2 <= domain_size(values) <= self.limits.CONDITION_MAX_VALUES:
                continue
            parts = connected_groups(nodes - {q}, [scope - {q} for scope in scopes], order)
            if len(parts) > 1:
                largest = max(len(part) for part in parts)
                if best is None or largest < best[0]:
                    best = (largest, q, list(values))
        if best is None:
            return None
        x = best[1]
        rest = tuple(q for q in self.plan.order if q in params and q != x)
        return x, best[2], Problem(rest, factors, dict(fixed))

    def _count_conditioned(self, component: Component, fixed: dict, deadline) -> CountResult | None:
        """Sum, over the values of an articulation parameter (`articulation`), the count with it
        held there, where the rest splits into independent parts that multiply. This never lists
        more CP-SAT solutions than the joint enumeration (the parts' solutions are each at most
        the joint one's, and multiply instead of combining); T1 Hotspot: the unroll factor, read
        only by `temporal_tiling_factor % loop_unroll_factor_t == 0`, is split off per tiling
        factor. None when no parameter qualifies. Counting only: the exact sampler asks for the
        joint table of solutions (`record`), which a conditioned count does not make, and
        without it descends by counts (K40c: 1,000 draws took 12x longer)."""
        found = self.articulation(component, fixed)
        if found is None:
            return None
        x, values, problem = found
        total, exact, solutions = 0, True, 0
        for value in values:
            result = self.count(Problem(problem.params, problem.factors, {**problem.fixed, x: value}), deadline)
            total += result.count
            exact = exact and result.exact
            solutions += result.solutions
        return CountResult(total, exact, solutions, strategy=f"conditioned on {x}", tables=[None])
