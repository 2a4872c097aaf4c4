"""Exact counting with CP-SAT, using the structure of the model instead of listing everything.

A counting *problem* is a set of parameters and a list of *factors*, each a condition over the
parameters in its scope: a parameter's domain (it lies in its domain, which is defined), a
derived value being defined, a constraint accepting. The count is the number of assignments of
the parameters that satisfy every factor. Three steps, all read from the model's DAG:

1. **Free parameters are summed out in Python, not enumerated.** A parameter whose only factor is
   its own domain (no constraint, no derived value, no other domain uses it) contributes the size
   of its domain, evaluated for the values of its inputs. Peeling repeats, so a parameter whose
   only users were peeled becomes free too: its weight sums its children's weights over its
   values (variable elimination). Weights are memoised per assignment of their scope: in GEMM,
   `vec_mul` is a weight of `dim_vec` (1 or 2) and the four switches are a constant factor 16.
2. **Independent components multiply.** What remains splits into connected components of the
   factor graph; each is counted separately.
3. **Each component is enumerated by CP-SAT** (a fixed search over its parameters in plan order,
   no LP: thousands of solutions per second where the default search gives hundreds), with the
   weights of its peeled parameters multiplied in the solution callback. With several workers the
   first parameter's values are split into many small sub-problems, one solver each, so no
   solution is reported twice.

Groups of parameters that become independent given their ancestors (GEMM's A-reader pair
`dim_m_a, dim_n_a` given `threads_per_block, blk_m, blk_k, dim_vec`) are found as well
(`Structure.groups`), but a group that has constraints stays in its component: CP-SAT cannot
project an enumeration, so counting such a group per separator assignment would either enumerate
every separator assignment without the group's pruning (1.18 million outer assignments for the
K40c space instead of 59 thousand joint solutions) or keep the group's variables for their
pruning and enumerate them anyway. `explain()` prints the structure and the choice.

A time limit stops the search; the count found so far is then a lower bound and `exact` is False.
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from ortools.sat.python import cp_model

from solverspace import ir
from solverspace.dag import DAG
from solverspace.errors import Location, SpaceEvaluationError
from solverspace.evaluate import Undefined, compile_domain, compile_expr

from .cpsat import CpSatRefusal, Lowering


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


@dataclass
class Weight:
    """A peeled parameter: the number of its (and its peeled descendants') assignments."""

    param: str
    scope: tuple[str, ...]      # the parameters it depends on, sorted
    children: list["Weight"]
    memo: dict = field(default_factory=dict)


@dataclass
class Structure:
    """How a problem is counted."""

    weights: list[Weight]                  # peeled parameters (roots of peeled trees)
    components: list[tuple[tuple[str, ...], list[Factor], list[Weight]]]
    constant_factors: list[Factor]         # factors over no parameter
    constant_weights: list[Weight]
    groups: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)  # (group, separator)


@dataclass
class Options:
    time_limit: float | None = None
    workers: int | None = None
    seed: int = 0

    @property
    def worker_count(self) -> int:
        return max(1, self.workers or os.cpu_count() or 1)


@dataclass
class CountResult:
    count: int
    exact: bool
    solutions: int = 0          # CP-SAT solutions enumerated
    seconds: float = 0.0


class Counter:
    """Counts problems over one model (with a shared analysis lowering)."""

    def __init__(self, model, plan, options: Options, progress: Callable | None = None):
        self.model = model
        self.plan = plan
        self.options = options
        self.progress = progress
        self.dag = DAG(model)
        self.order = {p: i for i, p in enumerate(plan.order)}
        self.analysis = Lowering(model)  # for facts: which items can be undefined
        self.closure_globals = dict(model.closure_globals)
        self._domains: dict[str, Callable] = {}
        self._derived_fns: dict[str, Callable] = {}

    # ------------------------------------------------------------------------------ facts
    def scope(self, name: str) -> frozenset:
        inputs = self.dag.parameter_inputs[name]
        return frozenset(inputs | {name}) if name in self.model.parameter else frozenset(inputs)

    def may_be_undefined(self, kind: str, name: str) -> bool:
        if kind == "param":
            return self.analysis.domain_defined(name) is not True
        if kind == "derived":
            return self.analysis.derived(name)[1] is not True
        c = self.model.constraint[name]
        with self.analysis._item("constraint", name, c.line):
            return self.analysis.lower(c.expr)[1] is not True

    def full_problem(self) -> Problem:
        factors = [Factor("domain", p, self.scope(p)) for p in self.plan.order]
        factors += [Factor("defined", d.name, self.scope(d.name)) for d in self.model.derived
                    if self.may_be_undefined("derived", d.name)]
        factors += [Factor("accept", c.name, self.scope(c.name)) for c in self.model.constraints]
        return Problem(tuple(self.plan.order), factors)

    # ------------------------------------------------------------------------------ structure
    def structure(self, problem: Problem) -> Structure:
        factors = list(problem.factors)
        remaining = [p for p in problem.params]
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
        # connected components of the rest
        parent = {p: p for p in remaining}

        def find(p):
            while parent[p] != p:
                parent[p] = parent[parent[p]]
                p = parent[p]
            return p

        for scope in [f.scope for f in factors] + [frozenset(w.scope) for w in weights]:
            members = [p for p in scope if p in parent]
            for p in members[1:]:
                parent[find(p)] = find(members[0])
        roots: dict[str, list[str]] = {}
        for p in sorted(remaining, key=self.order.__getitem__):
            roots.setdefault(find(p), []).append(p)
        components = []
        for params in roots.values():
            members = set(params)
            comp_factors = [f for f in factors if f.scope and f.scope <= members]
            comp_weights = [w for w in weights if w.scope and set(w.scope) <= members]
            components.append((tuple(params), comp_factors, comp_weights))
        constant_factors = [f for f in factors if not f.scope]
        constant_weights = [w for w in weights if not w.scope]
        return Structure(weights, components, constant_factors, constant_weights,
                         self._groups(components))

    def _groups(self, components) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """Groups of sink parameters linked by shared factors, with their separators: parameters
        that become independent of the rest once the separator is fixed (reported, see module)."""
        result = []
        for params, factors, _ in components:
            members = set(params)
            used_by_params = {q for p in params for q in self.dag.parameter_inputs[p] if q in members}
            sinks = [p for p in params if p not in used_by_params]
            parent = {p: p for p in sinks}

            def find(p):
                while parent[p] != p:
                    p = parent[p]
                return p

            for f in factors:
                inside = [p for p in f.scope if p in parent]
                for p in inside[1:]:
                    parent[find(p)] = find(inside[0])
            groups: dict[str, list[str]] = {}
            for p in sinks:
                groups.setdefault(find(p), []).append(p)
            for group in groups.values():
                touching = [f for f in factors if set(group) & f.scope]
                separator = set().union(*(f.scope for f in touching)) - set(group) if touching else set()
                if separator and len(members - set(group) - separator) > 0:
                    result.append((tuple(group), tuple(sorted(separator, key=self.order.__getitem__))))
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

    def weight(self, w: Weight, values: dict) -> int:
        key = tuple(values[s] for s in w.scope)
        found = w.memo.get(key)
        if found is not None:
            return found
        param = self.model.parameter[w.param]
        try:
            env = self._env({s: values[s] for s in w.scope}, self._needed_derived(w.param))
            domain = self._domain_fn(w.param)(env)
        except Undefined:
            domain = ()
        except SpaceEvaluationError as exc:
            if exc.where is None:
                exc.where = Location(self.model.source, param.line)
                exc.args = (exc.render(),)
            raise
        if not w.children:
            total = len(domain)
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
    def build(self, params, factors, enforce=()) -> Lowering:
        lowering = Lowering(self.model, codes=self.analysis.codes, bounds=self.analysis.bounds)
        for p in params:
            lowering.param(p)
        for f in factors:
            post(lowering, self.model, f, enforce)
        return lowering

    # ------------------------------------------------------------------------------ counting
    def count(self, problem: Problem, deadline: float | None) -> CountResult:
        start = time.perf_counter()
        s = self.structure(problem)
        total, exact, solutions = 1, True, 0
        for w in s.constant_weights:
            total *= self.weight(w, {})
        if total and s.constant_factors:
            lowering = self.build((), s.constant_factors)
            status = _solve_status(lowering, self.options, deadline)
            if status is None:
                return CountResult(0, False, 0, time.perf_counter() - start)
            if not status:
                total = 0
        for index, (params, factors, weights) in enumerate(s.components):
            if not total:
                break
            result = self._count_component(params, factors, weights, deadline, index, len(s.components))
            total *= result.count
            exact = exact and result.exact
            solutions += result.solutions
        if not total and not exact:
            total = 0
        return CountResult(total, exact, solutions, time.perf_counter() - start)

    def _count_component(self, params, factors, weights, deadline, index, n_components) -> CountResult:
        lowering = self.build(params, factors)
        error = lowering.cp.validate()
        if error:
            raise CpSatRefusal(f"the CP-SAT model of this space is invalid: {error}",
                               where=Location(self.model.source))
        variables = [lowering.param_vars[p] for p in params]
        lowering.cp.add_decision_strategy(variables, cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE)
        weight_vars = [(w, [lowering.param_vars[s] for s in w.scope]) for w in weights]
        chunks = self._chunks(lowering, params) if self.options.worker_count > 1 else [None]
        results: list[tuple[int, bool, int]] = []
        lock = threading.Lock()
        done = [0]

        def run(chunk):
            if deadline is not None and time.perf_counter() >= deadline:
                return 0, False, 0
            model = lowering.cp
            if chunk is not None:
                model = lowering.cp.clone()
                var = model.get_int_var_from_proto_index(chunk[0].index)
                model.add_linear_expression_in_domain(var, chunk[1])
            counter = _Enumerator(self, weight_vars)
            solver = _solver(self.options, deadline, enumerate_all=True)
            status = solver.solve(model, counter)
            if status == cp_model.MODEL_INVALID:
                raise CpSatRefusal(f"the CP-SAT model of this space is invalid: {model.validate()}",
                                   where=Location(self.model.source))
            complete = status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
            if self.progress is not None:
                with lock:
                    done[0] += 1
                    self.progress(done[0], len(chunks))
            return counter.total, complete, counter.solutions

        if len(chunks) == 1:
            results.append(run(chunks[0]))
        else:
            with ThreadPoolExecutor(self.options.worker_count) as pool:
                results = list(pool.map(run, chunks))
        return CountResult(sum(r[0] for r in results), all(r[1] for r in results), sum(r[2] for r in results))

    def _chunks(self, lowering, params):
        """Sub-problems: the values of the first parameter with several values, split into
        single values first and growing runs after (solutions tend to crowd at the start)."""
        for p in params:
            var = lowering.param_vars[p]
            bounds = list(var.proto.domain)
            size = sum(hi - lo + 1 for lo, hi in zip(bounds[::2], bounds[1::2]))
            if size >= 2:
                break
        else:
            return [None]
        if size > 1_000_000:
            return [None]
        values = [v for lo, hi in zip(bounds[::2], bounds[1::2]) for v in range(lo, hi + 1)]
        chunks, position, run_length = [], 0, 1
        singles = 4 * self.options.worker_count
        while position < len(values):
            if len(chunks) >= singles:
                run_length *= 2
            piece = values[position: position + run_length]
            chunks.append((var, cp_model.Domain.from_values(piece)))
            position += len(piece)
        return chunks


class _Enumerator(cp_model.CpSolverSolutionCallback):
    """Counts solutions, multiplying each by the weights of the peeled parameters."""

    def __init__(self, counter: Counter, weight_vars):
        super().__init__()
        self.counter = counter
        self.weight_vars = weight_vars
        self.total = 0
        self.solutions = 0

    def on_solution_callback(self):
        self.solutions += 1
        product = 1
        for w, variables in self.weight_vars:
            values = dict(zip(w.scope, (self.value(v) for v in variables)))
            product *= self.counter.weight(w, values)
            if not product:
                break
        self.total += product


def _solver(options: Options, deadline: float | None, *, enumerate_all: bool = False, workers: int = 1):
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.num_workers = workers
    params.random_seed = options.seed
    if enumerate_all:
        params.enumerate_all_solutions = True
        params.search_branching = cp_model.FIXED_SEARCH
        params.linearization_level = 0
        params.cp_model_probing_level = 0
        params.symmetry_level = 0
    if deadline is not None:
        params.max_time_in_seconds = max(0.001, deadline - time.perf_counter())
    return solver


def _solve_status(lowering: Lowering, options: Options, deadline) -> bool | None:
    """Feasibility of a model: True, False, or None when the time limit stopped it first."""
    solver = _solver(options, deadline)
    status = solver.solve(lowering.cp)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    if status == cp_model.INFEASIBLE:
        return False
    if status == cp_model.MODEL_INVALID:
        raise CpSatRefusal(f"the CP-SAT model of this space is invalid: {lowering.cp.validate()}")
    return None


def post(lowering: Lowering, model, factor: Factor, enforce=()):
    """Post one factor into a lowering's model."""
    kind, name = factor.kind, factor.name
    if kind == "domain":
        lowering.require_domain(name, enforce)
    elif kind == "domain_undefined":
        p = model.parameter[name]
        with lowering._item("parameter", name, p.line):
            lowering.assert_lit(lowering.lit_not(lowering.domain_defined(name)), enforce)
    elif kind in ("defined", "undefined") and name in model.derived_value:
        _, ok = lowering.derived(name)
        lowering.assert_lit(ok if kind == "defined" else lowering.lit_not(ok), enforce)
    else:
        c = model.constraint[name]
        with lowering._item("constraint", name, c.line):
            if kind == "accept":
                lowering.require(c.expr, not c.rejects, enforce)
            elif kind == "rejected":
                lowering.require(c.expr, c.rejects, enforce)
            elif kind == "undefined":
                _, ok = lowering.lower(c.expr)
                lowering.assert_lit(lowering.lit_not(ok), enforce)
            else:
                raise ValueError(f"unknown factor kind {kind!r}")


def _noop(*_):
    return None


__all__ = ["Counter", "CountResult", "Factor", "Options", "Problem", "Structure", "post", "ir"]
