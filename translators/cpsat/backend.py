"""The CP-SAT backend: the facade over the CP-SAT modules, and what `solverspace.registry.backends`
registers as ``"cpsat"`` (`CpSatBackend`).

Every entry point takes its options as arguments (`time_limit` in seconds, `workers` solver
threads, `seed` CP-SAT's random seed) and passes them down; nothing reads a mutable global.

The modules, bottom to top (none imports a module above it):

- `cpsat.val`: `Val`, `Codes`, `CpSatRefusal`, CP-SAT's limits, linear-expression helpers;
- `cpsat.literals`: one lowering's CP model, variables, literals, relations, conversions;
- `cpsat.expr`: expressions and assertions (one method per IR node and operator);
- `cpsat.lower`: `Lowering`, the model's items: parameters, domains, closures, derived values;
- `cpsat.solver`: `Options` and `new_solver`, the one place a CpSolver is configured;
- `cpsat.count` (with `cpsat.wide`): exact counting by structure (`Counter`);
- `cpsat.run` (count + undefined tally), `cpsat.explain` (completion and minimal conflicts),
  `cpsat.best` (best by objective), `cpsat.sample` (exact uniform sampling), `cpsat.hashing`
  (ApproxMC2 counts and UniGen2 samples), `cpsat.samplers` (the two as samplers);
- `cpsat` (this module): the backend and the public functions, re-exporting the names other
  code imports from here (`Lowering`, `CpSatRefusal`, `LowerBound`, ...).
"""
from __future__ import annotations

from solverspace.core.errors import BackendUnavailableError

from solverspace.analysis.objective import BestResult, Ranked
from .best import best as best_of_plan
from .explain import Completion
from .explain import complete as complete_plan
from .hashing import ApproximateCount, NearUniformSampler
from .hashing import approximate_count as approximate_count_of_plan
from .lower import EXPLICIT_DOMAIN, LIMIT, Codes, CpSatRefusal, Lowering, Val
from .run import CpSatStats, LowerBound, count_plan
from .sample import SelfReducibleSampler
from .samplers import CpSatSampler, XorSampler
from .solver import Options
from . import orders as cpsat_orders
from ..order_slots import SlotJoins, with_order_slots

__all__ = ["ApproximateCount", "BestResult", "Codes", "Completion", "CpSatBackend", "CpSatRefusal", "CpSatSampler",
           "CpSatStats", "EXPLICIT_DOMAIN", "LIMIT", "LowerBound", "Lowering", "NearUniformSampler", "Options",
           "Ranked", "SelfReducibleSampler", "Val", "XorSampler", "approximate_count", "best", "complete", "count"]


class CpSatBackend:
    """Counts, checks, optimises and samples with CP-SAT; does not list configurations.

    `time_limit` (seconds, per call) turns a count that does not finish into a `LowerBound`;
    `workers` is the number of solver threads (default: every core); `seed` CP-SAT's random seed
    (default 0). Its methods take plans without orders: the registry wraps it in
    `order_slots.OrderSlots`, which gives it the slot plan of a space with orders and joins what it
    answers (`translators/cpsat/orders.py`)."""

    name = "cpsat"
    order_slots = SlotJoins("CP-SAT", sampler=cpsat_orders.OrderSampler, complete=cpsat_orders.complete,
                            best=cpsat_orders.best)

    def __init__(self, *, time_limit: float | None = None, workers: int | None = None, seed: int | None = None,
                 sinks: bool = True):
        self.time_limit = time_limit
        self.workers = workers
        self.seed = seed
        self.sinks = sinks   # counts: sinks summed in Python (fast); `validate` turns it off (independent)

    def options(self) -> dict:
        """The options of this backend's calls: `time_limit`, `workers`, `seed`."""
        return {"time_limit": self.time_limit, "workers": self.workers, "seed": 0 if self.seed is None else self.seed}

    def count(self, plan, *, strict: bool = False, progress=None, undefined: bool = True) -> CpSatStats:
        """Stats with the exact count (or a `LowerBound` with `exact=False` when the time limit
        stopped it) and the undefined-operation tally the reference enumerator reports for `plan`."""
        return count_plan(plan, strict=strict, progress=progress, undefined=undefined, sinks=self.sinks,
                          **self.options())

    def sampler(self, plan, method: str = "cpsat", *, seed: int = 0, progress=None):
        """`cpsat`: exact self-reducibility (no time limit: a stopped count cannot give uniform
        draws); `cpsat-xor`: near-uniform XOR cells (one worker unless `workers` says more)."""
        if method == "cpsat-xor":
            return XorSampler(plan, self.workers, seed=seed, progress=progress)
        return CpSatSampler(plan, seed=seed, progress=progress, settings=self.options())

    def complete(self, plan, assignment: dict) -> Completion:
        """A valid completion of a partial assignment, or a minimal set of rules against it."""
        return complete_plan(plan, assignment, **self.options())

    def best(self, plan, objective: str, *, maximize: bool = True, top: int = 10, progress=None,
             expr=None) -> BestResult:
        """The `top` best distinct configurations by `objective` (see `translators.cpsat.best`);
        `expr`: the objective already lowered (a slot plan's: `order_slots.OrderSlots`)."""
        return best_of_plan(plan, objective, maximize=maximize, top=top, progress=progress, expr=expr,
                            **self.options())

    def approximate_count(self, plan, epsilon: float = 0.8, delta: float = 0.2, *, seed: int = 0) -> ApproximateCount:
        """ApproxMC2: a count within a factor (1 + epsilon) with probability >= 1 - delta (see
        `translators.cpsat.hashing`); `seed` draws the hashes. No time limit: a cell is enumerated
        to its end."""
        return approximate_count_of_plan(plan, epsilon, delta, seed=seed, options=Options(workers=self.workers or 1))

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        raise BackendUnavailableError(
            "the CP-SAT backend counts, checks and optimises but does not list configurations",
            hint="list them with the reference backend (or the compiled C enumerator when it is installed); "
                 "`solverspace best SPACE --maximize EXPR --top K` lists the K best")


# The same answers as functions of a `Space` (or a `Plan`), with the options as keywords.
def _plan(space_or_plan):
    return getattr(space_or_plan, "plan", space_or_plan)


def count(space, *, strict: bool = False, progress=None, undefined: bool = True, time_limit: float | None = None,
          workers: int | None = None, seed: int | None = None) -> CpSatStats:
    """Count a `Space` (or a `Plan`) with CP-SAT.

    >>> from solverspace import Space
    >>> s = Space.from_source("x = range(-3, 4)\\ny = range(-2, 3)\\nrequire(x // y >= 1)")
    >>> stats = count(s, workers=1)
    >>> stats.count, stats.undefined, stats.exact
    (10, 7, True)
    """
    backend = with_order_slots(CpSatBackend(time_limit=time_limit, workers=workers, seed=seed))
    return backend.count(_plan(space), strict=strict, progress=progress, undefined=undefined)


def complete(space, assignment: dict, *, time_limit: float | None = None, workers: int | None = None,
             seed: int = 0) -> Completion:
    """Feasibility of a partial assignment: a valid completion, or a minimal set of constraints
    that together rule it out (see `translators.cpsat.explain`)."""
    return with_order_slots(CpSatBackend(time_limit=time_limit, workers=workers, seed=seed)).complete(_plan(space),
                                                                                                      assignment)


def best(space, objective: str, *, maximize: bool = True, top: int = 10, time_limit: float | None = None,
         workers: int | None = None, seed: int = 0) -> BestResult:
    """The `top` best distinct configurations by `objective` (see `translators.cpsat.best`)."""
    backend = with_order_slots(CpSatBackend(time_limit=time_limit, workers=workers, seed=seed))
    return backend.best(_plan(space), objective, maximize=maximize, top=top)


def approximate_count(space, epsilon: float = 0.8, delta: float = 0.2, *, seed: int = 0,
                      workers: int | None = None) -> ApproximateCount:
    """ApproxMC2 (see `CpSatBackend.approximate_count`)."""
    return with_order_slots(CpSatBackend(workers=workers)).approximate_count(_plan(space), epsilon, delta, seed=seed)
