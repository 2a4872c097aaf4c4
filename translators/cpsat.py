"""The CP-SAT backend: the facade over the CP-SAT modules, and what `solverspace.backends`
registers as ``"cpsat"`` (`CpSatBackend`).

Every entry point takes its options as arguments (`time_limit` in seconds, `workers` solver
threads, `seed` CP-SAT's random seed) and passes them down; nothing reads a mutable global,
except the transitional `DEFAULTS` below (see there).

The modules, bottom to top (none imports a module above it):

- `cpsat_val`: `Val`, `Codes`, `CpSatRefusal`, CP-SAT's limits, linear-expression helpers;
- `cpsat_literals`: one lowering's CP model, variables, literals, relations, conversions;
- `cpsat_expr`: expressions and assertions (one method per IR node and operator);
- `cpsat_lower`: `Lowering`, the model's items: parameters, domains, closures, derived values;
- `cpsat_solver`: `Options` and `new_solver`, the one place a CpSolver is configured;
- `cpsat_count` (with `cpsat_wide`): exact counting by structure (`Counter`);
- `cpsat_run` (count + undefined tally), `cpsat_explain` (completion and minimal conflicts),
  `cpsat_best` (best by objective), `cpsat_sample` (exact uniform sampling), `cpsat_hash`
  (ApproxMC2 counts and UniGen2 samples);
- `cpsat` (this module): the backend and the public functions, re-exporting the names other
  code imports from here (`Lowering`, `CpSatRefusal`, `LowerBound`, ...).
"""
from __future__ import annotations

from dataclasses import dataclass

from solverspace.errors import BackendUnavailableError

from .cpsat_best import BestResult, Ranked
from .cpsat_best import best as best_of_plan
from .cpsat_explain import Completion
from .cpsat_explain import complete as complete_plan
from .cpsat_hash import ApproximateCount, NearUniformSampler
from .cpsat_hash import approximate_count as approximate_count_of_plan
from .cpsat_lower import EXPLICIT_DOMAIN, LIMIT, Codes, CpSatRefusal, Lowering, Val
from .cpsat_run import CpSatStats, LowerBound, count_plan
from .cpsat_sample import SelfReducibleSampler
from .cpsat_solver import Options

__all__ = ["ApproximateCount", "BestResult", "Codes", "Completion", "CpSatBackend", "CpSatRefusal", "CpSatStats",
           "DEFAULTS", "EXPLICIT_DOMAIN", "LIMIT", "LowerBound", "Lowering", "NearUniformSampler", "Options",
           "Ranked", "SelfReducibleSampler", "Val", "approximate_count", "best", "complete", "count",
           "exact_sampler", "near_uniform_sampler"]


@dataclass
class CpSatDefaults:
    """TRANSITIONAL: the options that today's command line sets for the registered backend
    (`--time-limit`, `--workers`, through `cli._CpSatOption`). Read only by `CpSatBackend.options`
    for an option passed as None. Once the command line passes the options as arguments
    (`get_backend("cpsat", time_limit=..., workers=...)`), delete this class, `DEFAULTS` and the
    fallback in `CpSatBackend.options`."""

    time_limit: float | None = None
    workers: int | None = None
    seed: int = 0


DEFAULTS = CpSatDefaults()


class CpSatBackend:
    """Counts with CP-SAT (see `translators.cpsat_count`); does not list configurations.

    `time_limit` (seconds, per call) turns a count that does not finish into a `LowerBound`;
    `workers` is the number of solver threads (default: every core); `seed` CP-SAT's random seed
    (default 0)."""

    name = "cpsat"

    def __init__(self, *, time_limit: float | None = None, workers: int | None = None, seed: int | None = None):
        self.time_limit = time_limit
        self.workers = workers
        self.seed = seed

    def options(self) -> dict:
        """The options of this backend's calls: `time_limit`, `workers`, `seed` (an option given
        as None falls back to the transitional `DEFAULTS`)."""
        return {"time_limit": DEFAULTS.time_limit if self.time_limit is None else self.time_limit,
                "workers": DEFAULTS.workers if self.workers is None else self.workers,
                "seed": DEFAULTS.seed if self.seed is None else self.seed}

    def count(self, plan, *, strict: bool = False, progress=None, undefined: bool = True) -> CpSatStats:
        """Stats with the exact count (or a `LowerBound` with `exact=False` when the time limit
        stopped it) and the undefined-operation tally the reference enumerator reports for `plan`."""
        return count_plan(plan, strict=strict, progress=progress, undefined=undefined, **self.options())

    def sampler(self, plan, method: str = "cpsat", *, seed: int = 0, progress=None):
        """`cpsat`: exact self-reducibility; `cpsat-xor`: near-uniform XOR cells (one worker by default)."""
        from .cpsat_samplers import CpSatSampler, XorSampler
        if method == "cpsat-xor":
            return XorSampler(plan, self.workers, seed=seed, progress=progress)
        return CpSatSampler(plan, seed=seed, progress=progress, settings=self.options())

    def complete(self, plan, assignment: dict):
        """A valid completion of a partial assignment, or a minimal set of rules against it."""
        from .cpsat_explain import complete as _complete
        options = self.options()
        return _complete(plan, assignment, time_limit=options["time_limit"], workers=options["workers"])

    def best(self, plan, objective: str, *, maximize: bool = True, top: int = 10):
        from .cpsat_best import best as _best
        return _best(plan, objective, maximize=maximize, top=top, **self.options())

    def approximate_count(self, plan, epsilon: float = 0.8, delta: float = 0.2, *, seed: int = 0):
        """ApproxMC2 over random XOR cells (one worker unless `workers` says otherwise)."""
        from .cpsat_count import Options
        from .cpsat_hash import approximate_count
        return approximate_count(plan, epsilon, delta, seed=seed, options=Options(workers=self.workers or 1))

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        raise BackendUnavailableError(
            "the CP-SAT backend counts, checks and optimises but does not list configurations",
            hint="list them with the reference backend (or the compiled C enumerator when it is installed); "
                 "`solverspace best SPACE --maximize EXPR --top K` lists the K best")


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
    backend = CpSatBackend(time_limit=time_limit, workers=workers, seed=seed)
    return backend.count(_plan(space), strict=strict, progress=progress, undefined=undefined)


def complete(space, assignment: dict, *, time_limit: float | None = None, workers: int | None = None,
             seed: int = 0) -> Completion:
    """Feasibility of a partial assignment: a valid completion, or a minimal set of constraints
    that together rule it out (see `translators.cpsat_explain`)."""
    return complete_plan(_plan(space), assignment, time_limit=time_limit, workers=workers, seed=seed)


def best(space, objective: str, *, maximize: bool = True, top: int = 10, time_limit: float | None = None,
         workers: int | None = None, seed: int = 0) -> BestResult:
    """The `top` best distinct configurations by `objective` (see `translators.cpsat_best`)."""
    return best_of_plan(_plan(space), objective, maximize=maximize, top=top, time_limit=time_limit,
                        workers=workers, seed=seed)


def approximate_count(space, epsilon: float = 0.8, delta: float = 0.2, *, seed: int = 0,
                      workers: int | None = None) -> ApproximateCount:
    """ApproxMC2: a count within a factor (1 + epsilon) with probability >= 1 - delta (see
    `translators.cpsat_hash`); `seed` draws the hashes. (No time limit: a cell is enumerated
    to its end.)"""
    return approximate_count_of_plan(_plan(space), epsilon, delta, seed=seed, options=Options(workers=workers or 1))


def exact_sampler(space, *, workers: int | None = None, table_limit: int | None = None,
                  progress=None) -> SelfReducibleSampler:
    """Exactly uniform configurations through exact CP-SAT counts (see `translators.cpsat_sample`);
    no time limit: a count that stopped could not give uniform draws."""
    extra = {} if table_limit is None else {"table_limit": table_limit}
    return SelfReducibleSampler(_plan(space), Options(workers=workers), progress=progress, **extra)


def near_uniform_sampler(space, *, seed: int = 0, workers: int | None = None) -> NearUniformSampler:
    """UniGen2 near-uniform configurations through random XOR cells (see `translators.cpsat_hash`)."""
    return NearUniformSampler(_plan(space), Options(workers=workers or 1), seed)
