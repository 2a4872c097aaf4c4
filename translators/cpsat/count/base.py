"""The counter's template: the facts of a model, the structure of a problem (peeled parameters,
components, groups), weights, building CP-SAT models, and `count`, which tries the strategies in
order on each component.

The strategies are mixins over this base, one module each (`residues`, `separated`, `sinks`,
`conditioned`, `joint`); `translators.cpsat.count.Counter` joins them. `count` calls their steps:
`_count_residues`, `count_separated`, `sinks`, `_count_conditioned` and, when none of those
answers, `_count_joint`. The tuning limits they read stand in the facade (`self.limits`).
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from solverspace.lang.dag import connected_groups
from solverspace.core.errors import Location, SpaceEvaluationError
from solverspace.lang.evaluate import Undefined, compile_domain, compile_expr

from ..lower import Lowering
from ..solver import Options, feasibility
from ..wide import size as domain_size
from .problem import Component, CountResult, Factor, Group, Problem, Structure, Weight, peeled_params, post


class CounterBase:
    """Counts problems over one model (with a shared analysis lowering)."""

    def __init__(self, model, plan, options: Options, progress: Callable | None = None):
        self.model = model
        self.plan = plan
        self.options = options
        self.progress = progress
        self.discarded = 0   # solutions of sub-problems stopped at their cap (counted again in parts)
        self.dag = model.analysis.dag
        self.order = {p: i for i, p in enumerate(plan.order)}
        self.facts = Lowering(model)  # for facts: which items can be undefined
        self.closure_globals = dict(model.closure_globals)
        self._domains: dict[str, Callable] = {}
        self._derived_fns: dict[str, Callable] = {}
        self.group_memo: dict = {}
        self.sink_memo: dict = {}
        self._scratch = threading.local()   # per thread: a CpModel reused for sub-problems

    # ------------------------------------------------------------------------------ facts
    def scope(self, name: str) -> frozenset:
        inputs = self.dag.parameter_inputs[name]
        return frozenset(inputs | {name}) if name in self.model.parameter else frozenset(inputs)

    def may_be_undefined(self, kind: str, name: str) -> bool:
        if kind == "param":
            return self.facts.domain_defined(name) is not True
        if kind == "derived":
            return self.facts.derived(name)[1] is not True
        c = self.model.constraint[name]
        with self.facts.item("constraint", name, c.line):
            return self.facts.lower(c.expr)[1] is not True

    def full_problem(self) -> Problem:
        factors = [Factor("domain", p, self.scope(p)) for p in self.plan.order]
        factors += [Factor("defined", d.name, self.scope(d.name)) for d in self.model.derived
                    if self.may_be_undefined("derived", d.name)]
        factors += [Factor("accept", c.name, self.scope(c.name)) for c in self.model.constraints]
        return Problem(tuple(self.plan.order), factors)

    # ------------------------------------------------------------------------------ structure
    def structure(self, problem: Problem) -> Structure:
        """Peel free parameters, then split the rest into components (fixed parameters are
        constants: they link nothing)."""
        fixed = set(problem.fixed)
        factors = list(problem.factors)
        remaining = list(problem.params)
        weights: list[Weight] = []
        changed = True
        while changed:
            changed = False
            for p in sorted(remaining, key=self.order.__getitem__, reverse=True):
                touching = [f for f in factors if p in f.scope]
                if len(touching) != 1 or touching[0].kind != "domain" or touching[0].name != p:
                    continue
                children = [w for w in weights if p in w.scope]
                scope = set(self.dag.parameter_inputs[p])
                for w in children:
                    scope |= set(w.scope)
                scope.discard(p)
                weights = [w for w in weights if w not in children]
                weights.append(Weight(p, tuple(sorted(scope, key=self.order.__getitem__)), children))
                factors.remove(touching[0])
                remaining.remove(p)
                changed = True
        order = sorted(self.order, key=self.order.__getitem__)
        scopes = [f.scope for f in factors] + [w.scope for w in weights]
        components = []
        for params in connected_groups(remaining, scopes, order):
            members = set(params)
            comp_factors = [f for f in factors if (f.scope - fixed) and f.scope - fixed <= members]
            comp_weights = [w for w in weights if (set(w.scope) - fixed) and set(w.scope) - fixed <= members]
            component = Component(tuple(params), comp_factors, comp_weights)
            component.groups = self._groups(component, fixed)
            components.append(component)
        constant_factors = [f for f in factors if f.scope <= fixed]
        constant_weights = [w for w in weights if set(w.scope) <= fixed]
        return Structure(weights, components, constant_factors, constant_weights)

    def _groups(self, component: Component, fixed: set) -> list[Group]:
        """Sink parameters (no other parameter of the component depends on them) linked by shared
        factors, each group with its separator: the other parameters its factors read."""
        members = set(component.params)
        used_by_params = {q for p in component.params for q in self.dag.parameter_inputs[p] if q in members}
        sinks = [p for p in component.params if p not in used_by_params]
        order = sorted(self.order, key=self.order.__getitem__)
        result = []
        for group in connected_groups(sinks, [f.scope for f in component.factors], order):
            touching = [f for f in component.factors if set(group) & f.scope]
            separator = set().union(*(f.scope for f in touching)) - set(group) - fixed if touching else set()
            if separator and members - set(group) - separator:
                result.append(Group(tuple(group), tuple(sorted(separator, key=self.order.__getitem__)), touching))
        return result

    # ------------------------------------------------------------------------------ weights
    def _domain_fn(self, p):
        if p not in self._domains:
            param = self.model.parameter[p]
            self._domains[p] = compile_domain(param.domain, p, closure_globals=self.closure_globals,
                                              max_closure_values=self.model.max_closure_values)
        return self._domains[p]

    def _env(self, names: dict, needed: frozenset) -> dict:
        """Parameter values plus the derived values a domain needs (computed in Python)."""
        env = dict(names)
        for d in self.plan_derived:
            if d.name in needed:
                fn = self._derived_fns.get(d.name)
                if fn is None:
                    fn = self._derived_fns[d.name] = compile_expr(d.expr)
                env[d.name] = fn(env)
        return env

    @property
    def plan_derived(self):
        if not hasattr(self, "_plan_derived"):
            ordered = list(self.plan.prelude_derived)
            for level in self.plan.levels:
                ordered.extend(level.derived)
            self._plan_derived = ordered
        return self._plan_derived

    def _needed_derived(self, p) -> frozenset:
        needed, stack = set(), [n for n in self.dag.uses[p] if n in self.model.derived_value]
        while stack:
            d = stack.pop()
            if d not in needed:
                needed.add(d)
                stack.extend(n for n in self.dag.uses[d] if n in self.model.derived_value)
        return frozenset(needed)

    def domain_values(self, p: str, values: dict) -> list:
        """The values of parameter `p` for the values of its inputs (empty where its domain is
        undefined), in domain order: the reference's own evaluation."""
        param = self.model.parameter[p]
        try:
            env = self._env({s: values[s] for s in self.dag.parameter_inputs[p]}, self._needed_derived(p))
            values = self._domain_fn(p)(env)
            return values if isinstance(values, range) else list(values)  # a range is never listed
        except Undefined:
            return []
        except SpaceEvaluationError as exc:
            if exc.where is None:
                exc.where = Location(self.model.source, param.line)
                exc.args = (exc.render(),)
            raise

    def weight(self, w: Weight, values: dict) -> int:
        if w.sink is not None:
            return w.sink.count(values)
        key = tuple(values[s] for s in w.scope)
        found = w.memo.get(key)
        if found is not None:
            return found
        domain = self.domain_values(w.param, values)
        if not w.children:
            total = domain_size(domain)
        else:
            total = 0
            inner = dict(values)
            for v in domain:
                inner[w.param] = v
                product = 1
                for child in w.children:
                    product *= self.weight(child, inner)
                    if not product:
                        break
                total += product
        w.memo[key] = total
        return total

    # ------------------------------------------------------------------------------ building
    def build(self, params, factors, enforce=(), fixed: dict | None = None) -> Lowering:
        lowering = Lowering(self.model, codes=self.facts.codes, bounds=self.facts.bounds)
        for p, value in (fixed or {}).items():
            lowering.fix_param(p, value)
        for p in params:
            lowering.param(p)
        for f in factors:
            post(lowering, self.model, f, enforce)
        stray = set(lowering.params) - set(params) - set(fixed or ())
        if stray:  # a free variable would multiply the count: never let it through
            raise RuntimeError(f"internal error: the CP-SAT model of {sorted(params)} has variables for {sorted(stray)}")
        return lowering

    # ------------------------------------------------------------------------------ counting
    def count(self, problem: Problem, deadline: float | None, record: int = 0) -> CountResult:
        """Count `problem`. With `record` > 0, each component counted by joint enumeration with
        at most `record` solutions also returns them as a `Table` (`tables`, per component of
        `structure(problem)`; None for the others)."""
        start = time.perf_counter()
        s = self.structure(problem)
        total, exact, solutions = 1, True, 0
        for w in s.constant_weights:
            total *= self.weight(w, problem.fixed)
        if total and s.constant_factors:
            lowering = self.build((), s.constant_factors, fixed=problem.fixed)
            status = feasibility(lowering.cp, self.options, deadline)
            if status is None:
                return CountResult(0, False, 0, time.perf_counter() - start)
            if not status:
                total = 0
        strategies, tables = [], []
        for component in s.components:
            if not total:
                break
            result = self._count_residues(component, problem.fixed, deadline)
            if result is None and component.groups:
                result = self.count_separated(component, problem.fixed, deadline)
            summed = ()
            if result is None and not record and self.options.sinks:  # the sampler (record > 0) needs the joint table
                reduced = self.sinks(component, problem.fixed, deadline)
                summed = [p for p in component.params if p not in reduced.params]
                component = reduced
                result = self._count_conditioned(component, problem.fixed, deadline)
            if result is None:
                result = self._count_joint(component, problem.fixed, deadline, record)
            strategies.append(f"{result.strategy}, {', '.join(summed)} counted in Python" if summed
                              else result.strategy)
            tables.append(result.tables[0] if result.tables else None)
            total *= result.count
            exact = exact and result.exact
            solutions += result.solutions
        return CountResult(total, exact, solutions, time.perf_counter() - start, ", ".join(strategies),
                           tables if total else [])

    def restored(self, component: Component) -> tuple[set, list[Factor]]:
        """The parameters and factors of a component with its peeled parameters and its sinks
        put back: the component as a problem of its own."""
        params, factors = set(component.params), list(component.factors)
        for w in component.weights:
            if w.sink is not None:
                params.add(w.param)
                factors.extend(w.factors)
            else:
                peeled = peeled_params(w)
                params.update(peeled)
                factors.extend(Factor("domain", q, self.scope(q)) for q in peeled)
        return params, factors
