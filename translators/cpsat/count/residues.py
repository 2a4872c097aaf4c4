"""Counting by residue classes: a component with a wide parameter used only modulo a constant
(see `translators.cpsat.wide`) is counted once per residue class, weighed by the class size.
"""
from __future__ import annotations

import math

from ..wide import residue_classes, wide_parameter
from .base import CounterBase
from .problem import Component, CountResult, Problem, rest_at


class Residues(CounterBase):
    """The residue-class strategy of `Counter`."""

    def residue_split(self, component: Component, fixed: dict):
        """(wide parameter, [(representative, class size)], the sub-problem over the rest, stride)
        when a parameter of the component has a wide constant range used only modulo a constant
        (see `translators.cpsat.wide`), else None. The sub-problem, with the parameter held at a
        representative, counts each configuration of its class once; the class's values are
        `representative + stride * j`, j below its size."""
        params, factors = self.restored(component)
        found = wide_parameter(self.model, self.dag, component.params, factors)
        if found is None:
            return None
        x, values, modulus = found
        rest = params - {x}
        params = tuple(q for q in self.plan.order if q in rest)
        factors = [f for f in factors if not (f.kind == "domain" and f.name == x)]
        stride = values.step * (modulus // math.gcd(values.step, modulus))
        return x, residue_classes(values, modulus), Problem(params, factors, dict(fixed)), stride

    def _count_residues(self, component: Component, fixed: dict, deadline) -> CountResult | None:
        """Count a component with a wide parameter used only modulo M: one sub-count per residue
        class, weighed by the class size (None when no parameter qualifies)."""
        split = self.residue_split(component, fixed)
        if split is None:
            return None
        x, classes, rest, stride = split
        modulus = abs(stride)  # the class's values are `stride` apart: any integer in it will do
        total, exact, solutions = 0, True, 0
        for value, size in classes:
            result = self.count(rest_at(rest, x, value, modulus), deadline)
            total += size * result.count
            exact = exact and result.exact
            solutions += result.solutions
        return CountResult(total, exact, solutions, strategy=f"residues of {x} mod {len(classes)}",
                           tables=[None])
