"""Feasibility of a partial assignment with CP-SAT, and a minimal explanation when there is none.

The given parameters are fixed; domains and the definedness of derived values are hard (they are
what the space *is*); each constraint is switched on by an assumption literal. If the solver finds
a solution it is a valid completion. Otherwise `sufficient_assumptions_for_infeasibility` names
constraints that together leave nothing, and a deletion pass makes that set minimal: dropping any
one of them admits a configuration. If no constraint is needed, the domains alone rule the
values out.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from solverspace.check import check_parameter_names
from solverspace.printing import to_source

from .cpsat_count import Counter, Factor, Options, post


@dataclass
class Completion:
    """The answer for a partial assignment.

    feasible: True (a valid completion exists: `completion`), False (none: `conflict` lists a
    minimal set of constraints that together rule the assignment out, empty when the domains
    alone do), or None (the time limit stopped the search). `minimal` is False when the time
    limit stopped the minimisation (the set still rules the assignment out)."""

    assignment: dict
    feasible: bool | None
    completion: dict | None = None
    conflict: list[str] = field(default_factory=list)
    minimal: bool = True
    seconds: float = 0.0

    def describe(self, model) -> list[str]:
        """Lines for people: the constraints of the conflict with their text and line."""
        lines = []
        for name in self.conflict:
            c = model.constraint[name]
            where = f"{model.source}:{c.line}" if c.line else model.source
            lines.append(f"{name}: {c.polarity} {to_source(c.expr)}  ({where})")
        return lines


class AssumptionModel:
    """The whole space with some parameters fixed and each constraint behind a switch."""

    def __init__(self, plan, assignment: dict, options: Options, deadline: float | None = None):
        model = plan.model
        check_parameter_names(model, assignment)
        self.model, self.options, self.deadline = model, options, deadline
        counter = Counter(model, plan, options)
        self.lowering = lowering = counter.build(
            plan.order, [Factor("domain", p, counter.scope(p)) for p in plan.order]
            + [Factor("defined", d.name, counter.scope(d.name)) for d in model.derived
               if counter.may_be_undefined("derived", d.name)])
        for name, value in assignment.items():
            kind = lowering.params[name].kind
            code = lowering.codes.code.get(value) if type(value) is str else value
            if (kind == "str") != (type(value) is str) or code is None:
                lowering.assert_lit(False)  # no such value: the domain rules it out
                continue
            lowering.cp.add(lowering.param_vars[name] == code)
        self.switch: dict[str, object] = {}
        for c in model.constraints:
            switch = lowering.cp.new_bool_var(f"use {c.name}")
            post(lowering, model, Factor("accept", c.name, counter.scope(c.name)), [switch])
            self.switch[c.name] = switch
        self.by_index = {s.index: name for name, s in self.switch.items()}

    def solve(self, constraints) -> tuple[str, object]:
        """(status name, solver) with only `constraints` switched on."""
        cp = self.lowering.cp
        cp.clear_assumptions()
        cp.add_assumptions([self.switch[c] for c in constraints])
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = self.options.seed
        if self.deadline is not None:
            solver.parameters.max_time_in_seconds = max(0.001, self.deadline - time.perf_counter())
        return solver.status_name(solver.solve(cp)), solver

    def core(self, solver) -> list[str]:
        found = set(solver.sufficient_assumptions_for_infeasibility())
        return [c for c in self.switch if self.switch[c].index in found]

    def configuration(self, solver) -> dict:
        low = self.lowering
        return {p: low.decode(p, solver.value(low.param_vars[p])) for p in self.model.parameter_names}


def feasible_with(plan, assignment: dict, constraints, **options) -> bool | None:
    """Whether some configuration with `assignment` satisfies the domains, the derived values and
    just the named `constraints` (None: stopped by the time limit)."""
    status, _ = AssumptionModel(plan, assignment, Options(**options)).solve(list(constraints))
    return True if status in ("OPTIMAL", "FEASIBLE") else False if status == "INFEASIBLE" else None


def complete(plan, assignment: dict, *, time_limit: float | None = None, workers: int | None = None,
             seed: int = 0) -> Completion:
    start = time.perf_counter()
    deadline = start + time_limit if time_limit is not None else None
    problem = AssumptionModel(plan, assignment, Options(time_limit=time_limit, workers=workers, seed=seed), deadline)
    everything = list(problem.switch)
    status, solver = problem.solve(everything)
    result = Completion(dict(assignment), None)
    if status in ("OPTIMAL", "FEASIBLE"):
        result.feasible = True
        result.completion = problem.configuration(solver)
    elif status == "INFEASIBLE":
        result.feasible = False
        kept, result.minimal = _minimise(problem.core(solver), problem)
        result.conflict = sorted(kept, key=everything.index)
    result.seconds = time.perf_counter() - start
    return result


def _minimise(core: list[str], problem: AssumptionModel) -> tuple[list[str], bool]:
    """Deletion-based minimisation: drop each constraint that is not needed."""
    kept = list(core)
    minimal = True
    for candidate in list(core):
        if candidate not in kept:
            continue
        trial = [c for c in kept if c != candidate]
        status, solver = problem.solve(trial)
        if status == "INFEASIBLE":
            smaller = set(problem.core(solver))
            kept = [c for c in trial if c in smaller]
        elif status not in ("OPTIMAL", "FEASIBLE"):
            minimal = False
    return kept, minimal
