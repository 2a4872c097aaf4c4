"""CP-SAT solver setup: the options every CP-SAT entry point takes (`Options`: time limit, workers,
seed) and the one place a `cp_model.CpSolver` is built from them (`new_solver`).

Layering: cpsat.val -> cpsat.literals -> cpsat.expr -> cpsat.lower -> **cpsat.solver** ->
cpsat.count -> cpsat.run / cpsat.best / cpsat.explain / cpsat.sample / cpsat.hashing -> cpsat.backend (see
`translators.cpsat.val`). Imports only OR-Tools and `cpsat.val`.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

from ortools.sat.python import cp_model

from .val import CpSatRefusal


@dataclass
class Options:
    """`time_limit` (seconds per call; None: none), `workers` (solver threads; None: every core)
    and `seed` (CP-SAT's random seed), passed down from the entry points."""

    time_limit: float | None = None
    workers: int | None = None
    seed: int = 0
    sinks: bool = True      # count sinks in Python (cpsat.count.Counter.sinks); validation turns it off

    @property
    def worker_count(self) -> int:
        return max(1, self.workers or os.cpu_count() or 1)

    def deadline(self, start: float) -> float | None:
        """The `time.perf_counter()` value at which a call started at `start` must stop."""
        return start + self.time_limit if self.time_limit is not None else None


def new_solver(options: Options, deadline: float | None, *, enumerate_all: bool = False,
               workers: int = 1) -> cp_model.CpSolver:
    """A CpSolver with `workers` threads, the options' seed and the time left until `deadline`.
    `enumerate_all`: every solution, by a fixed search with no LP, probing, symmetry or
    inprocessing (thousands of solutions per second where the default search gives hundreds)."""
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
        params.use_sat_inprocessing = False
    if deadline is not None:
        params.max_time_in_seconds = max(0.001, deadline - time.perf_counter())
    return solver


def invalid_model(cp: cp_model.CpModel, where=None) -> CpSatRefusal:
    """The refusal for a CP-SAT model that CP-SAT itself rejects (a bug of the lowering)."""
    return CpSatRefusal(f"the CP-SAT model of this space is invalid: {cp.validate()}", where=where)


def feasibility(cp: cp_model.CpModel, options: Options, deadline) -> bool | None:
    """Feasibility of a model: True, False, or None when the time limit stopped it first."""
    solver = new_solver(options, deadline)
    status = solver.solve(cp)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    if status == cp_model.INFEASIBLE:
        return False
    if status == cp_model.MODEL_INVALID:
        raise invalid_model(cp)
    return None
