"""Exact counting with CP-SAT, using the structure of the model instead of listing everything.

A counting *problem* is a set of parameters and a list of *factors*, each a condition over the
parameters in its scope: a parameter's domain (it lies in its domain, which is defined), a
derived value being defined, a constraint accepting. The count is the number of assignments of
the parameters that satisfy every factor. Five steps, read from the model's DAG (the fifth with
proofs by CP-SAT):

1. **Free parameters are summed out in Python, not enumerated.** A parameter whose only factor is
   its own domain (no constraint, no derived value, no other domain uses it) contributes the size
   of its domain, evaluated for the values of its inputs. Peeling repeats, so a parameter whose
   only users were peeled becomes free too: its weight sums its children's weights over its
   values (variable elimination). Weights are memoised per assignment of their scope: in GEMM,
   `vec_mul` is a weight of `dim_vec` (1 or 2) and the four switches are a constant factor 16.
2. **Independent components multiply.** What remains splits into connected components of the
   factor graph; each is counted separately.
3. **Each component is enumerated by CP-SAT** (a fixed search over its parameters in plan order,
   no LP, no inprocessing: thousands of solutions per second where the default search gives
   hundreds), with the weights of its peeled parameters multiplied in the solution callback.
4. **Groups that become independent given their separator are counted once per separator
   assignment** when that pays. A group is a set of sink parameters of a component (no other
   parameter depends on them) linked by shared conditions; its separator is the other parameters
   those conditions read (GEMM's A-reader pair `dim_m_a, dim_n_a` given `dim_m, dim_n, blk_m,
   blk_k, dim_vec`). The component's outer part (without its groups) is enumerated, aggregated by
   separator assignment, and each group is counted (recursively, by this same procedure) once per
   distinct assignment, memoised. CP-SAT cannot project an enumeration onto some variables, so
   the outer part loses the groups' pruning: on the README's tour that costs nothing (25 thousand
   solutions instead of 344 thousand), but the K40c GEMM space's outer part has 1.18 million
   solutions (6.1 million in single precision) where the joint enumeration has 59,166 (324,036).
   So the outer part is tried with a cap (`SEPARATE_SOLUTIONS`, and `SEPARATE_KEYS` separator
   assignments per group); then the most frequent assignments are counted and the time the rest
   would take is compared with the joint enumeration's, estimated from the mean group count. The
   component falls back to the joint enumeration when that is cheaper (GEMM on every device: the
   outer solutions barely share separator assignments and most have no reader pair at all).
5. **Sinks with a default are counted in Python** (`Counter.sinks`, `translators.cpsat.sinks`):
   a parameter with a small constant domain, read by constraints only (no other parameter or
   weight), one of whose values CP-SAT proves accepted whatever the others are, leaves the
   enumeration; each solution of the rest is weighed by the number of its accepted values,
   memoised on the values of the sub-expressions of its conditions that do not read it. The
   enumeration then lists the projection of the solutions onto the rest, never more: T1
   Hotspot's `blocks_per_sm` (default 0) and `loop_unroll_factor_t` (default 1) take its
   141,271 CP-SAT solutions to 33,216. Not while sampling (its tables list every parameter).

Layering: cpsat.lower (`Lowering`) -> cpsat.solver (`Options`, `new_solver`), cpsat.sinks -> **cpsat.count** ->
cpsat.run / cpsat.best / cpsat.explain / cpsat.sample / cpsat.hashing -> cpsat.backend (the facade).

CP-SAT's enumeration slows down as the solutions of one solve accumulate (quadratically: 40,000
solutions of a single free variable take 40 times as long as 5,000), so a component with more
than `PROBE_SOLUTIONS` solutions is counted as many small sub-problems: the first parameter's
values one at a time, and a sub-problem that turns out to have more than `CHUNK_SOLUTIONS`
solutions is split on the next parameter and counted again. With several workers the sub-problems run in parallel (each its own solver, so no
solution is reported twice).

A time limit stops the search; the count found so far is then a lower bound and `exact` is False.
"""
from __future__ import annotations

import math
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable

from ortools.sat.python import cp_model

from solverspace.lang.dag import connected_groups
from solverspace.core.errors import Location, SpaceEvaluationError
from solverspace.lang.evaluate import Undefined, compile_domain, compile_expr

from .lower import CpSatRefusal, Lowering
from .sinks import SINK_VALUES, SinkCount
from .solver import Options, feasibility, invalid_model, new_solver
from .wide import residue_classes, size as domain_size, wide_parameter


@dataclass(frozen=True)
class Factor:
    """A condition of a counting problem.

    kind: "domain" (parameter `name` lies in its defined domain), "defined" (derived value `name`
    is defined), "accept" (constraint `name` is defined and accepts), "domain_undefined",
    "undefined" (derived value or constraint `name` is undefined), "rejected" (constraint `name`
    is defined and rejects)."""

    kind: str
    name: str
    scope: frozenset


@dataclass
class Problem:
    params: tuple[str, ...]     # the parameters whose assignments are counted, in plan order
    factors: list[Factor]
    fixed: dict = field(default_factory=dict)  # parameters held at one value (a separator's)


@dataclass
class Weight:
    """A peeled parameter: the number of its (and its peeled descendants') assignments."""

    param: str
    scope: tuple[str, ...]      # the parameters it depends on (fixed ones included), plan order
    children: list["Weight"]
    memo: dict = field(default_factory=dict)
    sink: SinkCount | None = None   # a sink counted through its conditions (`Counter.sinks`)
    factors: list = field(default_factory=list)  # a sink's factors: its domain and conditions


@dataclass
class Group:
    """Sink parameters that are independent of the rest of their component given `separator`."""

    params: tuple[str, ...]
    separator: tuple[str, ...]
    factors: list[Factor]


@dataclass
class Component:
    params: tuple[str, ...]
    factors: list[Factor]
    weights: list[Weight]
    groups: list[Group] = field(default_factory=list)


@dataclass
class Structure:
    """How a problem is counted."""

    weights: list[Weight]                  # peeled parameters (roots of peeled trees)
    components: list[Component]
    constant_factors: list[Factor]         # factors over no counted parameter
    constant_weights: list[Weight]

    @property
    def groups(self) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        return [(g.params, g.separator) for c in self.components for g in c.groups]


@dataclass
class Table:
    """A component's solutions listed while counting it (for sampling): each row assigns
    `params`, in plan order, and weighs the number of completions of its peeled parameters."""

    params: tuple[str, ...]
    rows: list[tuple]
    weights: list[int]


@dataclass
class CountResult:
    count: int
    exact: bool
    solutions: int = 0          # CP-SAT solutions enumerated
    seconds: float = 0.0
    strategy: str = ""
    tables: list = field(default_factory=list)  # per component: a Table, or None (see `record`)


#: Separated counting of a component's groups is tried when its outer part has at most this many
#: solutions, and each group at most `SEPARATE_KEYS` distinct separator assignments.
SEPARATE_SOLUTIONS = 5_000
SEPARATE_KEYS = 2_000

#: Separator assignments counted first to decide whether separated counting pays, and the cost
#: of one solution of a joint enumeration assumed in that decision (measured: 60-150 us).
SAMPLE_KEYS = 16
JOINT_SECONDS_PER_SOLUTION = 60e-6

#: Conditioning on an articulation parameter (`Counter._count_conditioned`): at most this many
#: values, and only for a component whose constant domains span at least this many candidates.
CONDITION_MAX_VALUES = 64
CONDITION_MIN_SPACE = 100_000

#: Sinks (`Counter.sinks`): the search for them in a component ends after this many candidates
#: without a default value.
SINK_FAILURES = 3


class Counter:
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
        if math.prod(domain_size(v) for v in domains.values()) < CONDITION_MIN_SPACE:
            return None
        best = None
        for q, values in domains.items():
            if not 2 <= domain_size(values) <= CONDITION_MAX_VALUES:
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
        collector = _OuterCollector(self, lowering, component.weights, fixed, keys, SEPARATE_SOLUTIONS)
        solver = new_solver(self.options, deadline, enumerate_all=True)
        status = solver.status_name(solver.solve(lowering.cp, collector))
        if collector.capped or any(len(seen) > SEPARATE_KEYS for seen in collector.keys_seen):
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
            count_keys(index, frequent[:SAMPLE_KEYS])
            sampled += min(SAMPLE_KEYS, len(frequent))
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
        if remaining * per_key > joint * JOINT_SECONDS_PER_SOLUTION:
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
            if not 2 <= domain_size(values) <= SINK_VALUES:
                continue
            sink = SinkCount.build(self.model, p, list(values), conditions)
            if sink is None:
                continue
            rest = [q for q in params if q != p]
            others = [f for f in factors if p not in f.scope]
            if not self.has_default(sink, conditions, rest, others, deadline):
                failed += 1
                if failed == SINK_FAILURES:
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

    def _count_joint(self, component: Component, fixed: dict, deadline, record: int = 0) -> CountResult:
        params, factors, weights = component.params, component.factors, component.weights
        lowering = self.build(params, factors, fixed=fixed)
        error = lowering.cp.validate()
        if error:
            raise CpSatRefusal(f"the CP-SAT model of this space is invalid: {error}",
                               where=Location(self.model.source))
        variables = [lowering.param_vars[p] for p in params]
        lowering.cp.add_decision_strategy(variables, cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE)
        splittable = [v for v in variables if _size(v) >= 2]
        lock = threading.Lock()
        state = {"done": 0, "total": 0, "solutions": 0, "exact": True, "chunks": 0,
                 "rows": [] if record else None}

        def run(chunk, cap=CHUNK_SOLUTIONS):
            """Count one sub-problem; None when it has more than `cap` solutions."""
            if deadline is not None and time.perf_counter() >= deadline:
                return 0, False, 0, None
            model = self._chunk_model(lowering.cp, chunk)
            cap = cap if _refinable(chunk, splittable) else None
            rows = [] if state["rows"] is not None else None
            counter = _Enumerator(self, lowering, weights, fixed, cap, params, rows)
            solver = new_solver(self.options, deadline, enumerate_all=True)
            status = solver.solve(model, counter)
            if status == cp_model.MODEL_INVALID:
                raise invalid_model(model, Location(self.model.source))
            if counter.capped:
                with lock:
                    self.discarded += counter.solutions
                return None
            return counter.total, status in (cp_model.OPTIMAL, cp_model.INFEASIBLE), counter.solutions, rows

        def finish(result):
            with lock:
                count, complete, solutions, rows = result
                state["total"] += count
                state["exact"] = state["exact"] and complete
                state["solutions"] += solutions
                if state["rows"] is not None:
                    if rows is None or state["solutions"] > record:
                        state["rows"] = None  # too many to keep: counted, not listed
                    else:
                        state["rows"].extend(rows)
                state["done"] += 1
                if self.progress is not None and not fixed:
                    self.progress(state["done"], state["chunks"])

        state["chunks"] = 1
        probe = run((), PROBE_SOLUTIONS) if splittable else run(())
        if probe is not None:  # a small problem: one solve was enough
            finish(probe)
            return self._joint_result(params, state)
        pending = [(chunk, CHUNK_SOLUTIONS) for chunk in _initial_chunks(splittable)]
        state["chunks"] = len(pending)
        workers = self.options.worker_count if not fixed else 1
        if workers == 1 or len(pending) == 1:
            while pending:
                chunk, cap = pending.pop(0)
                result = run(chunk, cap)
                if result is None:
                    refined = _refine(chunk, splittable)
                    state["chunks"] += len(refined) - 1
                    pending[:0] = [(c, 2 * cap) for c in refined]
                else:
                    finish(result)
        else:
            with ThreadPoolExecutor(workers) as pool:
                futures = {pool.submit(run, chunk, cap): (chunk, cap) for chunk, cap in pending}
                while futures:
                    done, _ = wait(futures, return_when=FIRST_COMPLETED)
                    for future in done:
                        chunk, cap = futures.pop(future)
                        result = future.result()
                        if result is None:
                            refined = _refine(chunk, splittable)
                            with lock:
                                state["chunks"] += len(refined) - 1
                            futures.update({pool.submit(run, c, 2 * cap): (c, 2 * cap) for c in refined})
                        else:
                            finish(result)
        return self._joint_result(params, state)

    def _chunk_model(self, cp: cp_model.CpModel, chunk: tuple) -> cp_model.CpModel:
        """`cp` restricted to a sub-problem, in this thread's scratch model (a `CpModel` costs
        about half a millisecond to make, where copying its proto costs microseconds)."""
        if not chunk:
            return cp
        model = getattr(self._scratch, "model", None)
        if model is None:
            model = self._scratch.model = cp_model.CpModel()
        model.proto.copy_from(cp.proto)
        for var_index, domain in chunk:
            model.add_linear_expression_in_domain(model.get_int_var_from_proto_index(var_index), domain)
        return model

    @staticmethod
    def _joint_result(params, state) -> CountResult:
        table = None
        if state["rows"] is not None and state["exact"]:
            # chunks finish in any order: sort for one order (strings after numbers in a column)
            state["rows"].sort(key=lambda item: tuple((isinstance(v, str), v) for v in item[0]))
            table = Table(params, [r for r, _ in state["rows"]], [w for _, w in state["rows"]])
        return CountResult(state["total"], state["exact"], state["solutions"], strategy="joint", tables=[table])


#: A sub-problem with more solutions than this is split and counted again in parts: CP-SAT's
#: enumeration slows down as the solutions of one solve accumulate (40,000 solutions of one free
#: variable take 40 times as long as 5,000), so many small solves beat one large one.
CHUNK_SOLUTIONS = 10_000

#: A component is first solved whole, stopping at this many solutions; only a larger one is split.
PROBE_SOLUTIONS = 2_000


def _size(var) -> int:
    bounds = list(var.proto.domain)
    return sum(hi - lo + 1 for lo, hi in zip(bounds[::2], bounds[1::2]))


def _values(var) -> list[int] | None:
    if _size(var) > 1_000_000:
        return None
    bounds = list(var.proto.domain)
    return [v for lo, hi in zip(bounds[::2], bounds[1::2]) for v in range(lo, hi + 1)]


def _runs(values: list[int], singles: int) -> list[list[int]]:
    """Single values first (solutions crowd at the start of a loop), then doubling runs."""
    runs, position, length = [], 0, 1
    while position < len(values):
        if len(runs) >= singles:
            length *= 2
        runs.append(values[position: position + length])
        position += len(runs[-1])
    return runs


def _initial_chunks(splittable) -> list[tuple]:
    """Sub-problems: the first parameter's values, each alone when there are few, else in runs.
    A sub-problem is a tuple of (variable index, allowed values)."""
    if not splittable:
        return [()]
    values = _values(splittable[0])
    if values is None:
        return [()]
    runs = [[v] for v in values] if len(values) <= 2048 else _runs(values, 64)
    return [((splittable[0].index, cp_model.Domain.from_values(run)),) for run in runs]


def _refinable(chunk: tuple, splittable) -> bool:
    if chunk and chunk[-1][1].size() > 1:
        return True
    return len(chunk) < len(splittable) and _size(splittable[len(chunk)]) <= 1_000_000


def _refine(chunk: tuple, splittable) -> list[tuple]:
    """Split a sub-problem with too many solutions: its last restricted parameter's values one by
    one, or else the next parameter's values in runs."""
    if chunk:
        var_index, domain = chunk[-1]
        if domain.size() > 1:
            bounds = domain.flattened_intervals()
            values = [v for lo, hi in zip(bounds[::2], bounds[1::2]) for v in range(lo, hi + 1)]
            return [chunk[:-1] + ((var_index, cp_model.Domain.from_values([v])),) for v in values]
    position = len(chunk)
    values = _values(splittable[position])
    return [chunk + ((splittable[position].index, cp_model.Domain.from_values(run)),) for run in _runs(values, 16)]


class _Enumerator(cp_model.CpSolverSolutionCallback):
    """Counts solutions, multiplying each by the weights of the peeled parameters (the values
    their scopes read are decoded once per solution, into one environment)."""

    def __init__(self, counter: Counter, lowering: Lowering, weights, fixed: dict, cap: int | None = None,
                 params=(), rows: list | None = None):
        super().__init__()
        self.listed = [(p, lowering.param_vars[p]) for p in params] if rows is not None else None
        self.rows = rows
        self.counter = counter
        self.lowering = lowering
        self.weights = weights
        read = {s for w in weights for s in w.scope if s not in fixed}
        self.read = [(name, _index(lowering.param_vars[name]), lowering.param_vars[name],
                      lowering.params[name].kind == "str") for name in lowering.params if name in read]
        self.env = dict(fixed)
        self.cap = cap
        self.capped = False
        self.total = 0
        self.solutions = 0

    def on_solution_callback(self):
        self.solutions += 1
        if self.cap is not None and self.solutions > self.cap:
            self.capped = True
            self.stop_search()
            return
        env, get, decode = self.env, self.SolutionIntegerValue, self.lowering.codes.decode
        for name, index, var, coded in self.read:
            value = get(index) if index is not None else self.value(var)
            env[name] = decode(value) if coded else value
        product = 1
        for w in self.weights:
            product *= self.counter.weight(w, env)
            if not product:
                break
        self.total += product
        if product and self.listed is not None:
            decode = self.lowering.decode
            self.rows.append((tuple(decode(p, self.value(var)) for p, var in self.listed), product))



def _index(var) -> int | None:
    """A variable's proto index, read in a callback by `SolutionIntegerValue` (several times
    faster than `value`); None for anything but a plain variable."""
    return var.index if type(var) is cp_model.IntVar else None


class _OuterCollector(cp_model.CpSolverSolutionCallback):
    """Solutions of a component's outer part, aggregated by the separator assignments of its
    groups (with the peeled weights); stops beyond `cap` solutions."""

    def __init__(self, counter: Counter, lowering: Lowering, weights, fixed: dict, keys, cap: int):
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


def post(lowering: Lowering, model, factor: Factor, enforce=()):
    """Post one factor into a lowering's model."""
    kind, name = factor.kind, factor.name
    if kind == "domain":
        lowering.require_domain(name, enforce)
    elif kind == "domain_undefined":
        p = model.parameter[name]
        with lowering.item("parameter", name, p.line):
            lowering.assert_lit(lowering.lit_not(lowering.domain_defined(name)), enforce)
    elif kind in ("defined", "undefined") and name in model.derived_value:
        _, ok = lowering.derived(name)
        lowering.assert_lit(ok if kind == "defined" else lowering.lit_not(ok), enforce)
    else:
        c = model.constraint[name]
        with lowering.item("constraint", name, c.line):
            if kind == "accept":
                lowering.require(c.expr, not c.rejects, enforce)
            elif kind == "rejected":
                lowering.require(c.expr, c.rejects, enforce)
            elif kind == "undefined":
                _, ok = lowering.lower(c.expr)
                lowering.assert_lit(lowering.lit_not(ok), enforce)
            else:
                raise ValueError(f"unknown factor kind {kind!r}")


def rest_at(rest: Problem, x: str, value: int, modulus: int) -> Problem:
    """The sub-problem of a residue class: `x` held at the class's smallest non-negative member
    (the rest reads `x` only modulo divisors of `modulus`, so any member will do, and this one
    fits CP-SAT's domains however wide the range)."""
    return Problem(rest.params, rest.factors, {**rest.fixed, x: value % modulus})


def peeled_params(w: Weight) -> list[str]:
    """A peeled parameter and its peeled descendants."""
    return [w.param] + [q for child in w.children for q in peeled_params(child)]


def describe(plan) -> str:
    """How the CP-SAT backend counts a plan: peeled parameters, components, groups."""
    counter = Counter(plan.model, plan, Options(workers=1))
    s = counter.structure(counter.full_problem())
    lines = []
    for w in s.weights:
        inputs = f"per value of ({', '.join(w.scope)})" if w.scope else "a constant factor"
        inner = f" (with {', '.join(_peeled_names(w.children))})" if w.children else ""
        lines.append(f"summed out in Python: {w.param}{inner}, {inputs}")
    for c in s.components:
        split = counter.residue_split(c, {})
        if split is not None:
            lines.append(f"counted by residue classes: {split[0]} (a wide range read only modulo "
                         f"{abs(split[3]) // abs(counter.model.parameter[split[0]].domain.step.value)}): "
                         f"{len(split[1])} sub-counts of {', '.join(split[2].params) or 'nothing else'}")
            continue
        lines.append(f"enumerated by CP-SAT: {', '.join(c.params)} ({len(c.factors)} conditions"
                     + (f", weights of {', '.join(w.param for w in c.weights)}" if c.weights else "") + ")")
        for g in c.groups:
            lines.append(f"  group {', '.join(g.params)} is independent given {', '.join(g.separator)}: "
                         f"counted once per separator assignment when the rest has at most "
                         f"{SEPARATE_SOLUTIONS} solutions, else enumerated with the component")
    return "\n".join(lines)


def _peeled_names(weights) -> list[str]:
    names = []
    for w in weights:
        names.append(w.param)
        names.extend(_peeled_names(w.children))
    return names

