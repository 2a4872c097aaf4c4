"""Feasibility of a partial assignment with CP-SAT, and a minimal explanation when there is none.

The given parameters are fixed; domains are hard (they are what the space *is*). Each rule is
switched on by an assumption literal: a constraint accepting (where it is defined), and, for every
derived value or constraint that may divide by zero, its being defined. If the solver finds a
solution it is a valid completion. Otherwise `sufficient_assumptions_for_infeasibility` names
rules that together leave nothing, and a deletion pass makes that set minimal: dropping any one
of them admits a configuration. An undefined derived value (`q = a // b` with `b=0`) is thus
named, with the operation that fails, instead of being blamed on the domains. If no rule is
needed, the domains alone rule the values out.

Layering: cpsat.count (`Counter`), cpsat.run (`failing_expression`) -> **cpsat.explain** -> cpsat.backend
(the facade's `complete`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from solverspace.analysis.check import check_parameter_names
from solverspace.lang import ir
from solverspace.core.orders import format_value
from solverspace.lang.printing import to_source

from .count import Counter, Factor
from .run import failing_expression
from .solver import Options, new_solver


@dataclass
class Completion:
    """The answer for a partial assignment.

    feasible: True (a valid completion exists: `completion`), False (none: `conflict` lists a
    minimal set of constraints and `undefined` the derived values or constraints whose being
    undefined (division or modulo by zero) together rule the assignment out; both empty when the
    domains alone do), or None (the time limit stopped the search). `minimal` is False when the
    time limit stopped the minimisation (the set still rules the assignment out). `failing` maps
    each name of `undefined` to (the operation that fails, a configuration where it does)."""

    assignment: dict
    feasible: bool | None
    completion: dict | None = None
    conflict: list[str] = field(default_factory=list)
    minimal: bool = True
    seconds: float = 0.0
    undefined: list[str] = field(default_factory=list)
    failing: dict = field(default_factory=dict)

    def describe(self, model) -> list[str]:
        """Lines for people: each rule of the conflict with its text and line."""
        lines = []
        for name in self.undefined:
            item = model.derived_value.get(name) or model.constraint[name]
            where = f"{model.source}:{item.line}" if item.line else model.source
            what = f"derived value {name} = {to_source(item.expr)}" if name in model.derived_value \
                else f"{name}: {item.polarity} {to_source(item.expr)}"
            failing, config = self.failing.get(name, (None, None))
            reason = ("an item absent from the order" if any(isinstance(n, ir.OrderFn) for n in ir.walk(item.expr))
                      else "division or modulo by zero")   # orders: translators/cpsat/orders.py
            detail = (f": {reason} in `{failing}`"
                      + (f" (e.g. at {' '.join(f'{k}={format_value(v) if type(v) is tuple else repr(v)}' for k, v in config.items())})" if config else "")
                      if failing else f": {reason}")
            lines.append(f"{what} is undefined{detail}  ({where})")
        for name in self.conflict:
            c = model.constraint[name]
            where = f"{model.source}:{c.line}" if c.line else model.source
            lines.append(f"{name}: {c.polarity} {to_source(c.expr)}  ({where})")
        return lines


class AssumptionModel:
    """The whole space with some parameters fixed and each rule behind a switch: the keys of
    `switch` are ("accept", constraint) and ("defined", derived value or constraint)."""

    def __init__(self, plan, assignment: dict, options: Options, deadline: float | None = None):
        model = plan.model
        check_parameter_names(model, assignment)
        self.model, self.options, self.deadline = model, options, deadline
        self.counter = counter = Counter(model, plan, options)
        self.lowering = lowering = counter.build(
            plan.order, [Factor("domain", p, counter.scope(p)) for p in plan.order])
        for name, value in assignment.items():
            kind = lowering.params[name].kind
            code = lowering.codes.code.get(value) if type(value) is str else value
            if (kind == "str") != (type(value) is str) or code is None:
                lowering.assert_lit(False)  # no such value: the domain rules it out
                continue
            lowering.cp.add(lowering.param_vars[name] == code)
        self.switch: dict[tuple[str, str], object] = {}
        self.ok: dict[str, object] = {}  # definedness literal of each item that may be undefined
        for d in model.derived:
            if counter.may_be_undefined("derived", d.name):
                self._definedness(d.name, lowering.derived(d.name)[1])
        for c in model.constraints:
            with lowering.item("constraint", c.name, c.line):
                _, ok = lowering.lower(c.expr)
                switch = lowering.cp.new_bool_var(f"use {c.name}")
                if ok is not False:  # accepts wherever it is defined
                    lowering.require(c.expr, not c.rejects, [switch] if ok is True else [switch, ok])
                self.switch[("accept", c.name)] = switch
                if ok is not True:
                    self._definedness(c.name, ok)
        self.by_index = {s.index: key for key, s in self.switch.items()}

    def _definedness(self, name: str, ok):
        switch = self.lowering.cp.new_bool_var(f"defined {name}")
        self.lowering.assert_lit(ok, [switch])
        self.switch[("defined", name)] = switch
        self.ok[name] = ok

    def solve(self, rules, extra=()) -> tuple[str, object]:
        """(status name, solver) with only `rules` (keys of `switch`) switched on, and the
        literals `extra` assumed."""
        cp = self.lowering.cp
        cp.clear_assumptions()
        cp.add_assumptions([self.switch[r] for r in rules] + list(extra))
        solver = new_solver(self.options, self.deadline)
        return solver.status_name(solver.solve(cp)), solver

    def core(self, solver) -> list[tuple[str, str]]:
        found = set(solver.sufficient_assumptions_for_infeasibility())
        return [key for key, s in self.switch.items() if s.index in found]

    def configuration(self, solver) -> dict:
        return self.lowering.assignment(solver, self.model.parameter_names)

    def failing(self, name: str, rules) -> tuple[str, dict] | None:
        """(the operation that divides by zero, a configuration) for an item of the conflict:
        a configuration satisfying the other rules where `name` is undefined, evaluated in Python."""
        ok = self.ok[name]
        others = [r for r in rules if r != ("defined", name)]
        status, solver = self.solve(others, [] if ok is False else [self.lowering.lit_not(ok)])
        if status not in ("OPTIMAL", "FEASIBLE"):
            return None
        config = self.configuration(solver)
        kind = "derived" if name in self.model.derived_value else "constraint"
        return failing_expression(self.counter, kind, name, config), config


def feasible_with(plan, assignment: dict, constraints, *, time_limit: float | None = None,
                  workers: int | None = None, seed: int = 0) -> bool | None:
    """Whether some configuration with `assignment` satisfies the domains, the derived values and
    just the named `constraints` (None: stopped by the time limit)."""
    problem = AssumptionModel(plan, assignment, Options(time_limit=time_limit, workers=workers, seed=seed))
    named = set(constraints)
    rules = [key for key in problem.switch
             if key[1] in named or (key[0] == "defined" and key[1] in plan.model.derived_value)]
    status, _ = problem.solve(rules)
    return True if status in ("OPTIMAL", "FEASIBLE") else False if status == "INFEASIBLE" else None


def complete(plan, assignment: dict, *, time_limit: float | None = None, workers: int | None = None,
             seed: int = 0) -> Completion:
    """Feasibility of a partial `assignment` of `plan`'s parameters: a valid completion, or a
    minimal set of rules that together rule it out (see the module docstring)."""
    start = time.perf_counter()
    options = Options(time_limit=time_limit, workers=workers, seed=seed)
    problem = AssumptionModel(plan, assignment, options, options.deadline(start))
    everything = list(problem.switch)
    status, solver = problem.solve(everything)
    result = Completion(dict(assignment), None)
    if status in ("OPTIMAL", "FEASIBLE"):
        result.feasible = True
        result.completion = problem.configuration(solver)
    elif status == "INFEASIBLE":
        result.feasible = False
        kept, result.minimal = _minimise(problem.core(solver), problem)
        kept = sorted(kept, key=everything.index)
        result.conflict = [name for kind, name in kept if kind == "accept"]
        result.undefined = [name for kind, name in kept if kind == "defined"]
        for name in result.undefined:
            found = problem.failing(name, kept)
            if found is not None:
                result.failing[name] = found
    result.seconds = time.perf_counter() - start
    return result


def _minimise(core: list, problem: AssumptionModel) -> tuple[list, bool]:
    """Deletion-based minimisation: drop each rule that is not needed."""
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
