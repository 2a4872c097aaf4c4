"""The joint enumeration: a component's solutions listed by CP-SAT with a fixed search, the weights of
its peeled parameters multiplied in the solution callback; a large component is counted as many
small sub-problems (the first parameter's values, split further when one has too many solutions),
in parallel with several workers.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from ortools.sat.python import cp_model

from solverspace.core.errors import Location

from ..lower import CpSatRefusal, Lowering
from ..solver import invalid_model, new_solver
from .base import CounterBase
from .problem import Component, CountResult, Table


class Joint(CounterBase):
    """The joint strategy of `Counter`: the one every component can fall back to."""

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

        def run(chunk, cap=self.limits.CHUNK_SOLUTIONS):
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
        probe = run((), self.limits.PROBE_SOLUTIONS) if splittable else run(())
        if probe is not None:  # a small problem: one solve was enough
            finish(probe)
            return self._joint_result(params, state)
        pending = [(chunk, self.limits.CHUNK_SOLUTIONS) for chunk in _initial_chunks(splittable)]
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

    def __init__(self, counter: CounterBase, lowering: Lowering, weights, fixed: dict, cap: int | None = None,
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
