"""`count` of the CP-SAT backend: the valid count plus what the reference reports beside it.

The valid count does not depend on the plan. The undefined tally does (DESIGN.md): the reference
counts a candidate as undefined at the first item of the plan whose evaluation divides by zero,
among the candidates that reached it. The same number is an exact count too: for each item that
may be undefined, count the assignments of the plan's prefix up to that item that pass everything
before it (in plan order) and make it undefined. Most such items are never undefined in practice
(bounds cannot prove it, propagation can), so each is first a quick feasibility question.

Strict mode turns the first reachable undefined operation into `UndefinedOperationError`, found
the same way, naming the expression and a configuration; an evaluation error the reference would
raise (a range step of 0) is searched for the same way and raised as `SpaceEvaluationError`.

Layering: cpsat.count (`Counter`) -> **cpsat.run** -> cpsat.backend (the facade, `CpSatBackend.count`);
`cpsat.explain` uses `failing_expression` from here.
"""
from __future__ import annotations

import time

from solverspace.lang import ir
from solverspace.core.errors import Location, SpaceEvaluationError, UndefinedOperationError
from solverspace.lang.evaluate import Undefined, compile_domain, compile_expr
from solverspace.lang.printing import to_source
from solverspace.core.results import Stats

from .count import Counter, Factor, Problem
from .solver import Options, invalid_model, new_solver


class LowerBound(int):
    """A count that a time limit stopped: the true count is at least this. Prints as such."""

    def __str__(self):
        return f"at least {int(self)} (lower bound: stopped by the time limit)"

    def __repr__(self):
        return f"LowerBound({int(self)})"


class CpSatStats(Stats):
    """`Stats` plus whether the count is exact (False: a time limit stopped it, and `count` is a
    `LowerBound`), whether the undefined tally is (False: it is a lower bound), the CP-SAT
    solutions enumerated, the seconds spent and the `strategy` per component ("joint" or
    "separated", see cpsat.count); `discarded`: solutions enumerated in sub-problems stopped at
    their cap and counted again in parts (work thrown away, not in `solutions`)."""

    __match_args__ = (*Stats.__match_args__, "exact", "undefined_exact", "solutions", "seconds", "strategy",
                      "discarded")

    def __init__(self, count: int = 0, undefined: int = 0, first_undefined: tuple[str, dict] | None = None,
                 undefined_by: dict[str, int] | None = None, exact: bool = True, undefined_exact: bool = True,
                 solutions: int = 0, seconds: float = 0.0, strategy: str = "", discarded: int = 0):
        super().__init__(count, undefined, first_undefined, undefined_by)
        self.exact, self.undefined_exact, self.solutions, self.seconds = exact, undefined_exact, solutions, seconds
        self.strategy, self.discarded = strategy, discarded


def count_plan(plan, *, strict: bool = False, progress=None, time_limit: float | None = None,
               workers: int | None = None, seed: int = 0, undefined: bool = True, sinks: bool = True) -> CpSatStats:
    """The valid count of `plan` and (unless `undefined` is False) the undefined tally; `strict`
    raises at the first reachable undefined operation instead."""
    start = time.perf_counter()
    options = Options(time_limit=time_limit, workers=workers, seed=seed, sinks=sinks)
    deadline = options.deadline(start)
    counter = Counter(plan.model, plan, options, progress)
    _raise_reachable_errors(counter, deadline)
    stats = CpSatStats()
    if strict:  # raises at the first reachable undefined operation, before any counting
        _undefined_tally(counter, stats, deadline, strict=True)
    result = counter.count(counter.full_problem(), deadline)
    stats.count = result.count if result.exact else LowerBound(result.count)
    stats.exact = result.exact
    stats.strategy = result.strategy
    stats.solutions += result.solutions
    if undefined and not strict:
        _undefined_tally(counter, stats, deadline, strict=False)
    stats.seconds = time.perf_counter() - start
    stats.discarded = counter.discarded
    return stats


# ------------------------------------------------------------------------------------ items
def plan_items(counter: Counter):
    """(kind, name, level index, factors before it, params bound) for every item of the plan, in
    the order the reference evaluates them; kind is "param", "derived" or "constraint"."""
    plan = counter.plan
    before: list[Factor] = []
    for d in plan.prelude_derived:
        yield "derived", d.name, -1, list(before), ()
        if counter.may_be_undefined("derived", d.name):
            before.append(Factor("defined", d.name, counter.scope(d.name)))
    for c in plan.prelude_constraints:
        yield "constraint", c.name, -1, list(before), ()
        before.append(Factor("accept", c.name, counter.scope(c.name)))
    for i, level in enumerate(plan.levels):
        p = level.parameter.name
        yield "param", p, i, list(before), plan.order[:i]
        before.append(Factor("domain", p, counter.scope(p)))
        for d in level.derived:
            yield "derived", d.name, i, list(before), plan.order[:i + 1]
            if counter.may_be_undefined("derived", d.name):
                before.append(Factor("defined", d.name, counter.scope(d.name)))
        for c in level.constraints:
            yield "constraint", c.name, i, list(before), plan.order[:i + 1]
            before.append(Factor("accept", c.name, counter.scope(c.name)))


def _undefined_factor(counter, kind, name) -> Factor:
    if kind == "param":
        return Factor("domain_undefined", name, frozenset(counter.dag.parameter_inputs[name]))
    return Factor("undefined", name, counter.scope(name))


def _undefined_tally(counter: Counter, stats: CpSatStats, deadline, strict: bool):
    for kind, name, _, before, params in plan_items(counter):
        if not counter.may_be_undefined(kind, name):
            continue
        factors = before + [_undefined_factor(counter, kind, name)]
        witness = _witness(counter, params, factors, deadline)
        if witness is None:  # the time limit stopped the question: the tally is a lower bound
            stats.undefined_exact = False
            continue
        if witness is False:
            continue
        failing = failing_expression(counter, kind, name, witness)
        where = _location(counter.model, name)
        if strict:
            raise UndefinedOperationError(
                f"undefined operation in {name!r}: division or modulo by zero in `{failing}` at {_format(witness)}",
                where=where,
                hint="guard the expression (e.g. `b == 0 or a // b < 2`) or run without strict mode, "
                     "where such configurations are invalid and counted as undefined")
        result = counter.count(Problem(tuple(params), factors), deadline)
        stats.undefined_exact = stats.undefined_exact and result.exact
        stats.solutions += result.solutions
        if result.count:
            stats.undefined += result.count
            stats.undefined_by[name] = stats.undefined_by.get(name, 0) + result.count
            if stats.first_undefined is None:
                stats.first_undefined = (f"{name}: {failing}", witness)


def _raise_reachable_errors(counter: Counter, deadline):
    """Raise like the reference would when a range step of 0 is reachable."""
    for p in counter.plan.order:
        if counter.dag.parameter_inputs[p] or not _constant_range(counter.model.parameter[p].domain):
            counter.facts.membership(p)  # (a constant range has no variable step: nothing to lower)
    suspects = {name for _, name, _ in counter.facts.errors}
    if not suspects:
        return
    for kind, name, _, before, params in plan_items(counter):
        if kind != "param" or name not in suspects:
            continue
        lowering = counter.build(params, before)
        lowering.membership(name)
        errors = [lit for lit, p, _ in lowering.errors if p == name]
        lowering.assert_lit(lowering.lit_or(errors))
        solver = new_solver(counter.options, deadline)
        status = solver.solve(lowering.cp)
        if solver.status_name(status) in ("OPTIMAL", "FEASIBLE"):
            env = lowering.assignment(solver, params)
            message = next(m for _, p, m in lowering.errors if p == name)
            raise SpaceEvaluationError(f"{message} (at {_format(env)})", where=_location(counter.model, name),
                                       hint="a range step must be a non-zero integer")


def _constant_range(domain) -> bool:
    return isinstance(domain, ir.Range) and all(isinstance(e, ir.Const) for e in domain.children())


def _witness(counter: Counter, params, factors, deadline):
    """An assignment of `params` satisfying `factors` (dict), False if none, None if stopped."""
    lowering = counter.build(params, factors)
    solver = new_solver(counter.options, deadline)  # one worker: the same witness on every run
    status = solver.solve(lowering.cp)
    name = solver.status_name(status)
    if name in ("OPTIMAL", "FEASIBLE"):
        return lowering.assignment(solver, [p for p in counter.plan.order if p in params])
    if name == "INFEASIBLE":
        return False
    if name == "MODEL_INVALID":
        raise invalid_model(lowering.cp)
    return None


def failing_expression(counter: Counter, kind, name, assignment) -> str:
    """The subexpression that divides by zero, found by evaluating the item in Python."""
    model = counter.model
    env = dict(assignment)
    try:
        for d in counter.plan_derived:
            if counter.dag.parameter_inputs[d.name] <= set(env) and d.name != name:
                try:
                    env[d.name] = compile_expr(d.expr)(env)
                except Undefined:
                    pass
        if kind == "param":
            p = model.parameter[name]
            compile_domain(p.domain, name, closure_globals=dict(model.closure_globals),
                           max_closure_values=model.max_closure_values)(env)
        elif kind == "derived":
            compile_expr(model.derived_value[name].expr)(env)
        else:
            compile_expr(model.constraint[name].expr)(env)
    except Undefined as exc:
        return to_source(exc.expr)
    except (SpaceEvaluationError, KeyError):
        pass
    item = model.parameter.get(name) or model.derived_value.get(name) or model.constraint.get(name)
    return to_source(getattr(item, "domain", None) or item.expr)


def _location(model, name) -> Location:
    item = model.parameter.get(name) or model.derived_value.get(name) or model.constraint.get(name)
    return Location(model.source, getattr(item, "line", None))


def _format(values: dict) -> str:
    return " ".join(f"{k}={v!r}" for k, v in values.items()) or "(no parameters bound)"
