"""Separated counting: a component's outer part is enumerated once, aggregated by the assignments of
its groups' separators, and each group is counted once per assignment (when that pays against the
joint enumeration).
"""
from __future__ import annotations

import time

from ortools.sat.python import cp_model

from ..lower import Lowering
from ..solver import new_solver
from .base import CounterBase
from .problem import Component, CountResult, Group, Problem


class Separated(CounterBase):
    """The separated strategy of `Counter`."""

    def count_separated(self, component: Component, fixed: dict, deadline) -> CountResult | None:
        """Count the outer part of a component once per solution, and each group once per
        assignment of its separator (memoised); None when that would not pay (too many outer
        solutions or separator assignments: the joint enumeration is used instead)."""
        grouped = {p for g in component.groups for p in g.params}
        if any(set(w.scope) & grouped for w in component.weights):
            return None  # a peeled parameter reads a group: keep it simple, count jointly
        outer = tuple(p for p in component.params if p not in grouped)
        group_factors = {id(f) for g in component.groups for f in g.factors}
        outer_factors = [f for f in component.factors if id(f) not in group_factors]
        lowering = self.build(outer, outer_factors, fixed=fixed)
        variables = [lowering.param_vars[p] for p in outer]
        lowering.cp.add_decision_strategy(variables, cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE)
        keys = [(g, [lowering.param_vars[p] for p in g.separator]) for g in component.groups]
        collector = _OuterCollector(self, lowering, component.weights, fixed, keys, self.limits.SEPARATE_SOLUTIONS)
        solver = new_solver(self.options, deadline, enumerate_all=True)
        status = solver.status_name(solver.solve(lowering.cp, collector))
        if collector.capped or any(len(seen) > self.limits.SEPARATE_KEYS for seen in collector.keys_seen):
            return None
        if status not in ("OPTIMAL", "INFEASIBLE"):
            return CountResult(0, False, collector.solutions, strategy="separated")
        exact, solutions = True, collector.solutions
        counts: list[dict] = [{} for _ in keys]

        def count_keys(index, wanted):
            nonlocal exact, solutions
            group = keys[index][0]
            for key in wanted:
                if key not in counts[index]:
                    result = self._count_group(group, dict(zip(group.separator, key)), fixed, deadline)
                    counts[index][key] = result.count
                    exact = exact and result.exact
                    solutions += result.solutions

        # Does it pay? Count the most frequent separator assignments of each group first, then
        # compare the time the other assignments would take with the joint enumeration's
        # (estimated from the mean group count: the joint enumeration lists every combination).
        started = time.perf_counter()
        sampled = 0
        for index in range(len(keys)):
            frequent = sorted(collector.frequency[index], key=collector.frequency[index].get, reverse=True)
            count_keys(index, frequent[:self.limits.SAMPLE_KEYS])
            sampled += min(self.limits.SAMPLE_KEYS, len(frequent))
        per_key = (time.perf_counter() - started) / max(1, sampled)
        remaining = sum(len(seen) for seen in collector.keys_seen) - sampled
        means = [sum(c[k] * collector.frequency[i][k] for k in c) / max(1, sum(collector.frequency[i][k] for k in c))
                 for i, c in enumerate(counts)]
        joint = 0.0
        for key_tuple, (_, occurrences) in collector.outer.items():
            product = float(occurrences)
            for index, key in enumerate(key_tuple):
                product *= counts[index].get(key, means[index])
            joint += product
        if remaining * per_key > joint * self.limits.JOINT_SECONDS_PER_SOLUTION:
            return None
        for index, seen in enumerate(collector.keys_seen):
            count_keys(index, seen)
        total = 0
        for key_tuple, (weight, _) in collector.outer.items():
            product = weight
            for per_key_counts, key in zip(counts, key_tuple):
                product *= per_key_counts[key]
                if not product:
                    break
            total += product
        return CountResult(total, exact, solutions, strategy="separated")

    def _count_group(self, group: Group, separator: dict, fixed: dict, deadline) -> CountResult:
        """A group's count for one assignment of the parameters its conditions read (memoised on
        the group's parameters, its conditions and that assignment: the same group occurs in the
        valid count and, with an "undefined" condition instead of "defined", in the tally)."""
        values = {**fixed, **separator}
        needed = {p: v for p, v in values.items() if any(p in f.scope for f in group.factors)}
        key = (group.params, frozenset(group.factors), tuple(sorted(needed.items())))
        found = self.group_memo.get(key)
        if found is None:
            found = self.count(Problem(group.params, list(group.factors), needed), deadline)
            if found.exact:
                self.group_memo[key] = found
        return found


class _OuterCollector(cp_model.CpSolverSolutionCallback):
    """Solutions of a component's outer part, aggregated by the separator assignments of its
    groups (with the peeled weights); stops beyond `cap` solutions."""

    def __init__(self, counter: CounterBase, lowering: Lowering, weights, fixed: dict, keys, cap: int):
        super().__init__()
        self.counter, self.lowering, self.weights, self.fixed = counter, lowering, weights, fixed
        self.keys, self.cap = keys, cap
        self.outer: dict[tuple, list[int]] = {}   # separator assignments -> [weight, solutions]
        self.keys_seen = [set() for _ in keys]
        self.frequency: list[dict] = [{} for _ in keys]
        self.solutions = 0
        self.capped = False
        self.weight_vars = [(w, [(s, lowering.param_vars[s]) for s in w.scope if s not in fixed]) for w in weights]

    def on_solution_callback(self):
        self.solutions += 1
        if self.solutions > self.cap:
            self.capped = True
            self.stop_search()
            return
        decode = self.lowering.decode
        product = 1
        for w, variables in self.weight_vars:
            values = dict(self.fixed)
            values.update((name, decode(name, self.value(var))) for name, var in variables)
            product *= self.counter.weight(w, values)
        if not product:
            return
        key = []
        for (group, variables), seen, frequency in zip(self.keys, self.keys_seen, self.frequency):
            k = tuple(decode(name, self.value(var)) for name, var in zip(group.separator, variables))
            seen.add(k)
            frequency[k] = frequency.get(k, 0) + 1
            key.append(k)
        entry = self.outer.setdefault(tuple(key), [0, 0])
        entry[0] += product
        entry[1] += 1
