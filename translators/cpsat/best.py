"""The K best configurations by an objective, found by CP-SAT without listing the space.

The objective is an expression of the space language over parameters, derived values and
settings (`fmas_per_block - loads_per_block`), parsed with Python's `ast` and lowered to IR by
the same `FunctionLowerer` that lowers `@require` bodies (nothing is evaluated). Configurations
where the objective is undefined (a division by zero) are not candidates.

Search: optimise; then take the configurations with the optimal value in a deterministic order
(the parameters in definition order, smaller values first; categorical values in order of first
appearance in the space file); then require a strictly worse value and repeat until K are found.
A tie class of at most `TIE_ENUMERATION` configurations is enumerated and sorted; a larger one is
walked one configuration at a time by lexicographic minimisation. A fractional objective
(`fmas_per_block / loads_per_block`) is optimised exactly by Dinkelbach's iteration: maximise
`q*p - r*d` for the current ratio r/q until no configuration improves on it.

Layering: cpsat.lower (`Val`, `LIMIT`), cpsat.solver, cpsat.count (`Counter`) -> **cpsat.best** ->
cpsat.backend (the facade's `best`). The objective is parsed by `solverspace.analysis.objective.parse_objective`.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from fractions import Fraction

from ortools.sat.python import cp_model

from solverspace.lang import ir
from solverspace.core.errors import SpaceDefinitionError
from solverspace.lang.evaluate import Undefined, compile_expr
from solverspace.analysis.objective import BestResult, Ranked, parse_objective, string_order, tie_key
from solverspace.lang.printing import to_source

from .count import Counter, Factor
from .lower import LIMIT, CpSatRefusal, Val
from .solver import Options, new_solver

#: Tie classes up to this size are enumerated and sorted instead of walked one by one.
TIE_ENUMERATION = 2000


def best(plan, objective: str, *, maximize: bool = True, top: int = 10, time_limit: float | None = None,
         workers: int | None = None, seed: int = 0, expr: ir.Expr | None = None, progress=None) -> BestResult:
    """The `top` best distinct configurations of `plan` by `objective` (see the module docstring);
    `expr`: the objective already lowered (orders: translated to the slot model's names);
    `progress(done, top)`: told as configurations are ranked."""
    start = time.perf_counter()
    if top < 1:
        raise SpaceDefinitionError(f"top={top!r}: expected a positive number of configurations")
    options = Options(time_limit=time_limit, workers=workers, seed=seed)
    model = plan.model
    expr = parse_objective(model, objective) if expr is None else expr
    search = _Search(plan, expr, maximize, options, options.deadline(start))
    result = BestResult(objective, maximize)
    values = search.run(top, progress)
    result.exact = search.exact
    evaluate = compile_expr(expr)
    for rank, config in enumerate(values, 1):
        result.ranked.append(Ranked(rank, _evaluate(plan, evaluate, config), config))
    result.seconds = time.perf_counter() - start
    return result


def _evaluate(plan, fn, config: dict):
    env = dict(config)
    for d in plan.prelude_derived:
        env[d.name] = compile_expr(d.expr)(env)
    for level in plan.levels:
        for d in level.derived:
            env[d.name] = compile_expr(d.expr)(env)
    try:
        return fn(env)
    except Undefined:
        return None


class _Search:
    def __init__(self, plan, expr, maximize, options: Options, deadline):
        self.plan, self.expr, self.maximize = plan, expr, maximize
        self.options, self.deadline = options, deadline
        self.model = plan.model
        self.exact = True
        counter = Counter(self.model, plan, options)
        self.factors = ([Factor("domain", p, counter.scope(p)) for p in plan.order]
                        + [Factor("defined", d.name, counter.scope(d.name)) for d in self.model.derived
                           if counter.may_be_undefined("derived", d.name)]
                        + [Factor("accept", c.name, counter.scope(c.name)) for c in self.model.constraints])
        self.counter = counter
        self.names = self.model.parameter_names
        self.string_rank = string_order(self.model)
        self.tie = tie_key(self.model, order=self.string_rank)   # the one tie order of every engine

    # a fresh model per question: CP-SAT models cannot drop constraints
    def _build(self):
        lowering = self.counter.build(self.plan.order, self.factors)
        with lowering.item("objective", to_source(self.expr), None), _best_hint():
            value, ok = lowering.lower(self.expr)
            lowering.assert_lit(ok)
            if value.kind == "str":
                lowering.refuse(self.expr, "an objective must be a number, not a categorical value")
            if value.kind == "bool":
                value = lowering.as_int(value, self.expr)
        return lowering, value

    def _solver(self, workers=None):
        return new_solver(self.options, self.deadline, workers=workers or min(self.options.worker_count, 8))

    def _config(self, lowering, solver) -> dict:
        return lowering.assignment(solver, self.names)

    def _coded(self, lowering, config) -> dict:
        return {p: lowering.codes.code[v] if type(v) is str else v for p, v in config.items()}

    def _exclude(self, lowering, configs):
        for config in configs:
            coded = self._coded(lowering, config)
            lowering.cp.add_bool_or([_differs(lowering, lowering.param_vars[p], v) for p, v in coded.items()])

    # ---------------------------------------------------------------------------- objective forms
    def _terms(self, value: Val):
        """(numerator, denominator) of the objective as linear expressions (denominator 1 for ints)."""
        if value.kind == "rat":
            return value.expr, value.den
        return value.expr, 1

    def _restrict(self, lowering, value: Val, op: str, target: Fraction):
        """Post objective `op` target exactly (cross-multiplied)."""
        num, den = self._terms(value)
        lo, hi = (value.lo, value.hi)
        dlo, dhi = (value.dlo, value.dhi) if value.kind == "rat" else (1, 1)
        bound = abs(target.denominator) * max(abs(lo), abs(hi)) + abs(target.numerator) * max(abs(dlo), abs(dhi))
        if bound > LIMIT:
            lowering.refuse(self.expr, f"comparing the objective with {target} needs values up to {bound}, "
                                       "beyond CP-SAT's 64-bit domains")
        left = target.denominator * num
        right = target.numerator * den
        if isinstance(left, int) and isinstance(right, int):
            lowering.assert_lit({"==": left == right, ">": left > right, "<": left < right}[op])
            return
        lowering.cp.add({"==": left == right, ">": left > right, "<": left < right}[op])

    def _optimum(self, worse_than, excluded) -> tuple[Fraction, dict] | None:
        """The best objective value among configurations strictly worse than `worse_than` (None:
        any) that are not `excluded`, with one configuration reaching it."""
        lowering, value = self._build()
        if worse_than is not None:
            self._restrict(lowering, value, "<" if self.maximize else ">", worse_than)
        self._exclude(lowering, excluded)
        if value.kind != "rat":
            if value.constant:
                pass
            elif self.maximize:
                lowering.cp.maximize(value.expr)
            else:
                lowering.cp.minimize(value.expr)
            solver = self._solver()
            status = solver.status_name(solver.solve(lowering.cp))
            self._refuse_invalid(lowering, status)
            if status == "FEASIBLE":
                self.exact = False
            if status not in ("OPTIMAL", "FEASIBLE"):
                if status == "UNKNOWN":
                    self.exact = False
                return None
            return Fraction(lowering.value_of(value, solver)), self._config(lowering, solver)
        return self._dinkelbach(worse_than, excluded)

    def _refuse_invalid(self, lowering, status: str) -> None:
        """CP-SAT rejects a model whose coefficients or products leave its 64-bit range: that is a
        refusal naming the objective, never "stopped by the time limit"."""
        if status == "MODEL_INVALID":
            reason = (lowering.cp.validate() or "the model is invalid").strip().splitlines()[0].rstrip(":")
            lowering.refuse(self.expr, f"CP-SAT rejects the model of this objective ({reason}): its "
                                       "coefficients or products leave CP-SAT's 64-bit range",
                            hint="--engine bnb or --engine exhaustive compute with exact fractions in Python; "
                                 "or scale the objective's constants down")

    def _dinkelbach(self, worse_than, excluded):
        """Exact optimum of a fraction p/d (d > 0): with r the best ratio so far, optimise
        d_r*p - n_r*d (r = n_r/d_r); a configuration improves on r exactly when that is positive
        (negative when minimising), and each step jumps to the best such one's ratio."""
        ratio, config = None, None
        while True:
            lowering, value = self._build()
            if worse_than is not None:
                self._restrict(lowering, value, "<" if self.maximize else ">", worse_than)
            self._exclude(lowering, excluded)
            num, den = self._terms(value)
            if ratio is not None:
                bound = ratio.denominator * max(abs(value.lo), abs(value.hi)) + \
                    abs(ratio.numerator) * max(abs(value.dlo), abs(value.dhi))
                if bound > LIMIT:
                    lowering.refuse(self.expr, f"optimising the fraction near {ratio} needs values up to {bound}, "
                                               "beyond CP-SAT's 64-bit domains")
                surrogate = ratio.denominator * num - ratio.numerator * den
                (lowering.cp.maximize if self.maximize else lowering.cp.minimize)(surrogate)
            solver = self._solver()
            status = solver.status_name(solver.solve(lowering.cp))
            self._refuse_invalid(lowering, status)
            if status == "INFEASIBLE":
                return None
            if status not in ("OPTIMAL", "FEASIBLE"):
                self.exact = False
                return (ratio, config) if ratio is not None else None
            found = Fraction(lowering.value_of(value, solver))
            if ratio is not None:
                if status != "OPTIMAL":
                    self.exact = False
                if (found <= ratio) if self.maximize else (found >= ratio):
                    return ratio, config
            ratio, config = found, self._config(lowering, solver)

    def _ties(self, target: Fraction, excluded, wanted: int) -> list[dict]:
        """Configurations with objective == target (not excluded), the first `wanted` of them in
        the deterministic order."""
        lowering, value = self._build()
        self._restrict(lowering, value, "==", target)
        self._exclude(lowering, excluded)
        variables = [lowering.param_vars[p] for p in self.names]
        lowering.cp.add_decision_strategy(variables, cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE)
        collector = _Collector(lowering, self.names, TIE_ENUMERATION)
        solver = self._solver(1)
        solver.parameters.enumerate_all_solutions = True
        solver.parameters.search_branching = cp_model.FIXED_SEARCH
        solver.parameters.linearization_level = 0
        status = solver.status_name(solver.solve(lowering.cp, collector))
        if status in ("OPTIMAL", "INFEASIBLE") and not collector.overflow:
            ordered = sorted(collector.found, key=self.tie)
            return ordered[:wanted]
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.exact = False
            return []
        return self._lexicographic(target, excluded, wanted)

    def _lexicographic(self, target, excluded, wanted) -> list[dict]:
        found = []
        while len(found) < wanted:
            fixed: dict = {}
            for name in self.names:
                lowering, value = self._build()
                self._restrict(lowering, value, "==", target)
                self._exclude(lowering, list(excluded) + found)
                for p, v in fixed.items():
                    lowering.cp.add(lowering.param_vars[p] == v)
                lowering.cp.minimize(self._rank(lowering, name))
                solver = self._solver()
                status = solver.status_name(solver.solve(lowering.cp))
                if status != "OPTIMAL":
                    if status != "INFEASIBLE":
                        self.exact = False
                    return found
                fixed[name] = solver.value(lowering.param_vars[name])
            found.append({p: lowering.decode(p, v) for p, v in fixed.items()})
        return found

    def _rank(self, lowering, name):
        """What to minimise to take `name`'s smallest value in the tie order: the variable itself,
        or for a categorical parameter its string's place in `string_order` (its CP-SAT code is
        in order of first use in the lowering, another order)."""
        var = lowering.param_vars[name]
        if lowering.params[name].kind != "str":
            return var
        texts = lowering.codes.text
        table = [self.string_rank.get(text, len(self.string_rank) + i) for i, text in enumerate(texts)]
        rank = lowering.cp.new_int_var(0, max(table, default=0), f"{name}_tie_rank")
        lowering.cp.add_element(var, table, rank)
        return rank

    def run(self, top: int, progress=None) -> list[dict]:
        results: list[dict] = []
        worse_than = None
        while len(results) < top:
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                self.exact = False
                break
            found = self._optimum(worse_than, results if worse_than is None else [])
            if found is None:
                break
            target, _ = found
            ties = self._ties(target, results, top - len(results))
            if not ties:
                break
            results.extend(ties)
            worse_than = target
            if progress is not None:
                progress(len(results), top)
        return results


@contextmanager
def _best_hint():
    """A refusal while lowering an objective points to the engines of `best` that compute it
    exactly in Python (the lowering's own hint names the reference backend, which has no `best`)."""
    try:
        yield
    except CpSatRefusal as exc:
        exc.hint = ("--engine bnb or --engine exhaustive walk the space with the reference backend, "
                    "whose Python integers compute the objective exactly")
        exc.args = (exc.render(),)
        raise


class _Collector(cp_model.CpSolverSolutionCallback):
    def __init__(self, lowering, names, limit):
        super().__init__()
        self.lowering, self.names, self.limit = lowering, names, limit
        self.found: list[dict] = []
        self.overflow = False

    def on_solution_callback(self):
        if len(self.found) >= self.limit:
            self.overflow = True
            self.stop_search()
            return
        self.found.append({p: self.lowering.decode(p, self.value(self.lowering.param_vars[p])) for p in self.names})


def _differs(lowering, var, value):
    lit = lowering.cp.new_bool_var("differs")
    lowering.cp.add(var != value).only_enforce_if(lit)
    lowering.cp.add(var == value).only_enforce_if(~lit)
    return lit


