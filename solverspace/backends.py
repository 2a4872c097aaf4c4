"""The one registry of backends: what each can do, and how to make one with its options.

Every answer goes CLI -> `Space` -> `get_backend(name, capability, **options)` -> backend, and
validation uses the same registry. Each entry declares its capabilities as data (so asking
"which backends can sample?" imports no compiler or solver) and the options its factory takes;
asking a backend for something it cannot do is an error that names the backends that can.

Capabilities and the methods a backend object has for them:

| capability  | method(s)                                                   |
|-------------|-------------------------------------------------------------|
| count       | `count(plan, *, strict, progress) -> Stats`                 |
| list        | `rows(plan, *, strict, with_derived, progress)`, `array(...)` |
| write       | `write(plan, path, fmt, *, strict, with_derived, progress, sep) -> int` |
| positions   | `positions(plan)`: size, rows_at(positions), index(values)  |
| sample      | `sampler(plan, method, *, seed, progress)`: size, draw(n, seed, replace) |
| funnel      | `funnel(plan, *, progress) -> Funnel`                       |
| check       | `check(plan, assignment)` (full), `complete(plan, assignment)` (partial) |
| best        | `best(plan, objective, *, maximize, top, progress)`         |
| approximate | `approximate_count(plan, epsilon, delta, *, seed)`          |
| emit        | `emit(plan, with_derived) -> str` (the generated program)   |
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

from solverspace.core.errors import BackendUnavailableError, OptionError, SpaceDefinitionError
from solverspace.core.draws import Positions
from solverspace.core.options import check_threads
from solverspace.lang.order_domains import has_orders
from solverspace.analysis.reference import WALK_LIMIT, ReferenceEnumerator, WorkBudgetExceeded
from solverspace.core.formats import write_rows
from solverspace.core.results import Stats, rows_to_array

CAPABILITIES = {
    "count": "count configurations",
    "list": "list configurations",
    "write": "write configurations to a file",
    "positions": "find the configuration at a position (space[i], index, get)",
    "sample": "draw samples",
    "funnel": "compute the pruning funnel",
    "check": "check configurations and complete partial ones",
    "best": "find the best configurations by an objective",
    "approximate": "estimate counts by hashing",
    "emit": "print a generated program",
}


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend: what it does and how to make one (imports stay lazy)."""

    name: str
    summary: str
    capabilities: frozenset[str]
    options: tuple[str, ...]                  # keyword options its factory accepts
    factory: Callable[..., object]
    sampling_methods: tuple[str, ...] = ()   # `solverspace sample --method` values it provides
    threads_option: str | None = None        # the option that sets its parallelism


# ------------------------------------------------------------------------------ reference
class ReferenceBackend:
    """Pure Python over the literal plan: exact, slow, the ground truth."""

    name = "reference"

    def count(self, plan, *, strict=False, progress=None) -> Stats:
        enumerator = ReferenceEnumerator(plan, strict=strict, progress=progress)
        enumerator.count()
        return enumerator.stats

    def enumerator(self, plan, *, strict=False, progress=None) -> ReferenceEnumerator:
        """The enumerator itself: its `rows()` and then its `stats` (validation reads both)."""
        return ReferenceEnumerator(plan, strict=strict, progress=progress)

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        return self.enumerator(plan, strict=strict, progress=progress).rows(with_derived)

    def array(self, plan, *, strict=False, with_derived=(), progress=None):
        rows = list(self.rows(plan, strict=strict, with_derived=with_derived, progress=progress))
        return rows_to_array(rows, plan.model.parameter_names + tuple(with_derived))

    def write(self, plan, path, fmt="csv", *, strict=False, with_derived=(), progress=None, sep=",") -> int:
        if fmt not in ("csv", "jsonl"):
            raise SpaceDefinitionError("the reference backend writes CSV and JSON Lines only",
                                       hint="use --backend c for .npy and .parquet output")
        rows = self.rows(plan, strict=strict, with_derived=with_derived, progress=progress)
        return write_rows(path, plan.model.parameter_names + tuple(with_derived), rows, fmt, sep)

    def positions(self, plan) -> "ListedPositions":
        return ListedPositions(plan)

    def sampler(self, plan, method="reference", *, seed=0, progress=None) -> "ListedPositions":
        return self.positions(plan)   # samples are drawn positions

    def funnel(self, plan, *, progress=None):
        from solverspace.analysis.funnel import reference_funnel
        return reference_funnel(plan)

    def check(self, plan, assignment: dict):
        from solverspace.analysis.check import check
        return check(plan, assignment)

    complete = check  # a partial assignment: the reference looks for a completion by listing


LISTED_LIMIT = 2_000_000   # rows `ListedPositions` holds in memory (4 columns: 340 MB measured)


class ListedPositions(Positions):
    """Positions of the canonical order over a space listed in Python (small spaces only)."""

    name = "reference"
    guarantee = "exactly uniform over the valid configurations (the whole space is listed)"

    def __init__(self, plan):
        self.model = plan.model
        self.columns = plan.model.parameter_names
        self.rows = list(itertools.islice(ReferenceEnumerator(plan).rows(()), LISTED_LIMIT + 1))
        if len(self.rows) > LISTED_LIMIT:
            self.rows = []
            raise BackendUnavailableError(
                f"the reference lists the whole space to draw positions, and it has more than {LISTED_LIMIT:,} "
                f"valid configurations", hint="use the compiled positions (sample --method exact, space[i]) "
                                              "or CP-SAT (sample --method cpsat)")
        self.position = {row: i for i, row in enumerate(self.rows)}

    def size(self) -> int:
        return len(self.rows)

    def rows_at(self, positions):
        return rows_to_array([self.rows[int(i)] for i in positions], self.columns)

    def index(self, values: dict) -> int | None:
        if has_orders(self.model):  # an order given as written in files (i>j>k) or as a list
            from solverspace.analysis.check import orders_as_tuples
            values = orders_as_tuples(self.model, values)
        return self.position.get(tuple(values[c] for c in self.columns))


# ------------------------------------------------------------------------------ auto
class BeyondBudgetError(BackendUnavailableError):
    """`auto` has no backend for a space: one of its domains is larger than the reference's
    budget and the C backend (and, for counts, CP-SAT) refuses the space."""


def _unsupported():
    """The translators' refusal class (imported late: asking `auto` imports no translator)."""
    from solverspace.translators.errors import UnsupportedConstruct
    return UnsupportedConstruct


AUTO_REFERENCE_BUDGET = 40_000  # candidate values: about 0.05-0.3 s of the reference (0.14-0.9 M/s, T1 spaces)
AUTO_REFERENCE_LIMIT = 700_000  # ... and at most this many when the walk so far says the whole fits:
                                # 0.6-1.2 s of the reference, about what generating and compiling cost
AUTO_BUILD_WORK = 40_000        # a reference answer past this many candidate values leaves the module
                                # to be built in the background (solverspace/background.py): below it,
                                # the reference is about as fast as a warm compiled call
AUTO_QUICK_WORK = 20_000_000    # a space compiled cold whose reference walk is estimated at most this
                                # many candidate values gets the quick (-O0) build now and the -O2 one
                                # in the background: on the T1 files (0.005-1.8 M values) -O0 compiles
                                # in 0.2 CPU-s against 0.5-0.75 and counts in 0.005-0.03 s as -O2 does;
                                # the GEMM space (estimated 1.4 G) is compiled -O2 directly
AUTO_QUICK_LIMIT = 200_000      # AUTO_REFERENCE_LIMIT where a quick build is the alternative: it costs
                                # about 0.25-0.3 CPU-s, 200,000-400,000 values of the reference


class AutoBackend:
    """The default: no compiler wait for small spaces. The compiled enumerator when its module is
    already built (nothing to generate or compile); otherwise the reference, stopped after
    `budget` candidate values (`WorkBudgetExceeded`), and the compiled enumerator when the space
    needs more. At the budget, the share of the walk done so far estimates the whole walk: when
    that is within `limit` candidate values, the reference goes on (up to `limit`: an estimate
    can be wrong), since finishing costs less than compiling. Both give the same rows in the same
    order, so the answer does not depend on the choice; `answered_by` names the backend that gave
    the last answer.

    After a reference answer that tried more than `build_work` candidate values, the module is
    left to be built in a detached background process (`solverspace.background`), so that the
    next call of the same space runs compiled; the answer now is not delayed or changed by it.
    `build_behind`: None follows `$SOLVERSPACE_BACKGROUND_BUILD` (on unless 0), False is off.
    `scheduled` counts the builds this object left behind.

    Quick builds: when the reference stopped and the walk is estimated at most `quick_work`
    candidate values (`ReferenceEnumerator.estimated_work`), and builds behind the answer are on,
    the module is compiled quickly (-O0, `c_build.flags`: a quarter of the compile time, C that
    runs a few times slower, which a small space does not notice) to answer now (and with the
    default budget the reference goes on only up to `quick_limit`, since the quick build costs
    less than the -O2 one), and the
    optimized module is left to the background builder; later calls run the optimized module
    once it is built, the quick one until then. Same source, so the same answers; `quick` says
    whether the last compiled answer came from a quick build. A big space, a space with orders,
    an estimate that says nothing, or builds behind turned off: the optimized module, as
    `--backend c` builds it."""

    name = "auto"

    def __init__(self, budget: int = AUTO_REFERENCE_BUDGET, limit: int | None = None, *,
                 build_behind: bool | None = None, build_work: int = AUTO_BUILD_WORK,
                 quick_work: int = AUTO_QUICK_WORK, **c_options):
        defaults = limit is None and budget == AUTO_REFERENCE_BUDGET
        if limit is None:   # the default budget goes on to the default limit; a budget given alone is firm
            limit = AUTO_REFERENCE_LIMIT if budget == AUTO_REFERENCE_BUDGET else budget
        self.budget, self.limit = budget, max(limit, budget)
        # with the defaults, the reference goes on less far when a quick build would follow it
        self.quick_limit = max(AUTO_QUICK_LIMIT, budget) if defaults else self.limit
        self._limit = self.limit
        self.build_behind, self.build_work, self.quick_work = build_behind, build_work, quick_work
        self.c_options = c_options
        self.answered_by: str | None = None
        self.quick = False
        self.scheduled = 0

    def _answer(self, plan, with_derived, by_reference, by_c, by_cpsat=None):
        """`by_reference(enumerator)` within the budget when nothing is compiled, else `by_c(backend)`
        (the quick build of a small space, see the class); `by_cpsat(backend)` where C refuses a
        space with a domain larger than the budget (`_beyond_budget`)."""
        compiled = _c(**self.c_options)
        self.quick = False
        self.stopped = None
        if not compiled.is_built(plan, with_derived):
            quick = self._quick_backend(compiled, plan)
            if quick is not None and quick.is_built(plan, with_derived):   # built by an earlier cold call
                self.answered_by, self.quick = "c", True
                return by_c(quick)
            self._limit = self.limit if quick is None else self.quick_limit
            enumerator = ReferenceEnumerator(plan, budget=self.budget, on_budget=self._go_on)
            try:
                answer = by_reference(enumerator)
                self.answered_by = "reference"
            except WorkBudgetExceeded:
                self.stopped = enumerator.stopped_domain
                estimate = enumerator.estimated_work()
                if quick is not None and estimate is not None and estimate <= self.quick_work:
                    self.answered_by, self.quick = "c", True
                    answer = by_c(quick)
                    self._leave_build(plan, with_derived)    # the optimized module, for the next calls
                    return answer
            else:
                if enumerator.work > self.build_work and not has_orders(plan.model):
                    self._leave_build(plan, with_derived)
                return answer
        self.answered_by = "c"
        try:
            return by_c(compiled)
        except _unsupported() as refusal:
            return self._beyond_budget(refusal, by_cpsat)

    def _beyond_budget(self, refusal, by_cpsat):
        """C refused after the reference stopped at its budget. Where one domain alone holds more
        values than the budget (an order of 13 items, `range(10**20)` under a constraint): CP-SAT
        when it can answer (`by_cpsat`: counts only), else a refusal naming the parameter, its
        size and what to do; otherwise C's own refusal (it points to the reference)."""
        if self.stopped is None or self.stopped[1] <= self.budget:
            raise refusal
        name, size = self.stopped
        why = [f"the C backend refuses the space ({str(refusal).splitlines()[0]})"]
        if by_cpsat is not None:
            try:
                backend = _cpsat()
                answer = by_cpsat(backend)
                self.answered_by = "cpsat"
                return answer
            except (_unsupported(), BackendUnavailableError) as exc:
                why.append(f"so does CP-SAT ({str(exc).splitlines()[0]})")
        if size > WALK_LIMIT:
            hint = (f"narrow the domain of {name!r}: no backend walks more than 2**63 values of one domain "
                    f"(a parameter that nothing reads or tests is counted by a multiply at any size)")
        else:
            hint = (f"--backend reference walks it in Python ({size:,} values in this loop alone: exact "
                    f"and slow), or narrow the domain of {name!r}")
        raise BeyondBudgetError(f"auto: parameter {name!r} has {size:,} values, more than the reference's "
                                f"budget of {self.budget:,} candidate values, and {'; '.join(why)}", hint=hint)

    def _refused_lazily(self, rows):
        """C's rows, a generator that raises its refusal only when iterated (see `_beyond_budget`)."""
        try:
            yield from rows
        except _unsupported() as refusal:
            self._beyond_budget(refusal, None)

    def _builds_behind(self) -> bool:
        from solverspace import background
        return self.build_behind is not False and (self.build_behind is not None or background.enabled())

    def _quick_backend(self, compiled, plan):
        """The quick-build twin of `compiled`, or None where quick builds are not taken (builds
        behind the answer off, or orders)."""
        if self.quick_work <= 0 or has_orders(plan.model) or not self._builds_behind():
            return None
        return type(compiled)(threads=compiled.threads, options=compiled.options, quick=True)

    def _leave_build(self, plan, with_derived) -> None:
        """The module of this plan, built behind the answer (never raises, never waits)."""
        if not self._builds_behind():
            return
        from solverspace import background
        self.scheduled += background.schedule(plan, self.c_options, with_derived)

    def _go_on(self, work: int, fraction: float) -> int | None:
        """At the budget: the limit when `work / fraction` (the whole walk, estimated) is within it."""
        return self._limit if fraction > 0 and work / fraction <= self._limit else None

    def count(self, plan, *, strict=False, progress=None) -> Stats:
        def by_reference(enumerator):
            enumerator.strict = strict
            enumerator.count()
            return enumerator.stats
        return self._answer(plan, (), by_reference, lambda c: c.count(plan, strict=strict, progress=progress),
                            lambda cpsat: cpsat.count(plan, strict=strict, progress=progress))

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        def by_reference(enumerator):
            enumerator.strict = strict
            return list(enumerator.rows(with_derived))   # whole within the budget, then handed out
        return iter(self._answer(plan, with_derived, by_reference, lambda c: self._refused_lazily(
            c.rows(plan, strict=strict, with_derived=with_derived, progress=progress))))

    def array(self, plan, *, strict=False, with_derived=(), progress=None):
        def by_reference(enumerator):
            enumerator.strict = strict
            rows = list(enumerator.rows(with_derived))
            return rows_to_array(rows, plan.model.parameter_names + tuple(with_derived))
        return self._answer(plan, with_derived, by_reference,
                            lambda c: c.array(plan, strict=strict, with_derived=with_derived, progress=progress))

    def write(self, plan, path, fmt="csv", *, strict=False, with_derived=(), progress=None, sep=",") -> int:
        def by_reference(enumerator):
            if fmt not in ("csv", "jsonl"):  # the reference writes these two; the others go to C
                raise WorkBudgetExceeded(0)
            enumerator.strict = strict
            columns = plan.model.parameter_names + tuple(with_derived)
            return write_rows(path, columns, enumerator.rows(with_derived), fmt, sep)  # no file if stopped
        return self._answer(plan, with_derived, by_reference,
                            lambda c: c.write(plan, path, fmt, strict=strict, with_derived=with_derived,
                                              progress=progress, sep=sep))


def _auto(*, threads: int | None = None, optimizations=None, literal: bool = False, disable=(),
          budget: int = AUTO_REFERENCE_BUDGET, limit: int | None = None, build_behind: bool | None = None,
          build_work: int = AUTO_BUILD_WORK, quick_work: int = AUTO_QUICK_WORK) -> AutoBackend:
    return AutoBackend(budget, limit, build_behind=build_behind, build_work=build_work, quick_work=quick_work,
                       threads=threads, optimizations=optimizations, literal=literal, disable=disable)


# ------------------------------------------------------------------------------ search engines
class SearchBackend:
    """`best` by walking the plan's loop nest: `bnb` cuts subtrees by sound bounds of the
    objective, `exhaustive` evaluates every valid configuration. Compiled in C
    (`translators.c_best`), or in Python over the reference's walk (`solverspace.analysis.search`) for
    the `-reference` engines. Where the C translation refuses the space or the objective (orders,
    values past its integers), `bnb` and `exhaustive` run their Python walk and say so in the
    result (`engine`, `note`): the same exact answer, slower. So do they where the search
    cannot be compiled (no C compiler)."""

    def __init__(self, engine: str, time_limit: float | None = None, threads: int | None = None):
        self.name, self.time_limit, self.threads = engine, time_limit, threads

    def best(self, plan, objective: str, *, maximize: bool = True, top: int = 10, progress=None):
        from solverspace.analysis.search import best
        walk = self.name.removesuffix("-reference")
        if walk == self.name:
            from solverspace.translators.c.best import best_compiled
            from solverspace.translators.c.build import CompilerError
            from solverspace.translators.errors import UnsupportedConstruct
            try:
                return best_compiled(plan, objective, maximize=maximize, top=top, prune=walk == "bnb",
                                     time_limit=self.time_limit, threads=self.threads, progress=progress)
            except (UnsupportedConstruct, CompilerError) as exc:
                result = best(plan, objective, maximize=maximize, top=top, engine=walk, time_limit=self.time_limit,
                              progress=progress)
                result.engine = f"{walk}-reference"
                result.note = (f"the C search refused this space or objective, or could not be built "
                               f"({str(exc).splitlines()[0]}): searched in Python")
                return result
        result = best(plan, objective, maximize=maximize, top=top, engine=walk, time_limit=self.time_limit,
                      progress=progress)
        result.engine = self.name
        return result


# ------------------------------------------------------------------------------ factories
def _search(engine: str):
    def factory(*, time_limit: float | None = None, threads: int | None = None) -> SearchBackend:
        return SearchBackend(engine, time_limit, check_threads(threads))
    return factory


def _reference() -> ReferenceBackend:
    return ReferenceBackend()


def _c(*, threads: int | None = None, optimizations=None, literal: bool = False, disable=()):
    """`optimizations`: a `c_optimize.Options`; or `literal` (all off) / `disable` (names)."""
    from solverspace.translators.c.backend import CBackend
    return CBackend.configured(threads=threads, optimizations=optimizations, literal=literal, disable=disable)


def _cpsat(*, time_limit: float | None = None, workers: int | None = None, seed: int | None = None,
           sinks: bool | None = None):
    """`sinks=False`: every parameter through CP-SAT (validation: no constraint counted by the
    reference's evaluator)."""
    try:
        from solverspace.translators.cpsat.backend import CpSatBackend
    except ImportError as exc:
        raise BackendUnavailableError(f"the CP-SAT backend needs OR-Tools ({exc})",
                                      hint="pip install 'ortools>=9.10'") from None
    return CpSatBackend(time_limit=time_limit, workers=check_threads(workers, "workers"), seed=seed,
                        sinks=True if sinks is None else sinks)


REGISTRY: dict[str, BackendEntry] = {entry.name: entry for entry in (
    BackendEntry("auto", "the compiled enumerator when built or needed, the reference for small spaces",
                 frozenset({"count", "list", "write"}),
                 ("threads", "optimizations", "literal", "disable", "budget", "limit", "build_behind", "build_work",
                  "quick_work"),
                 _auto, (), "threads"),
    BackendEntry("c", "compiled C/OpenMP enumerator",
                 frozenset({"count", "list", "write", "positions", "sample", "funnel", "emit"}),
                 ("threads", "optimizations", "literal", "disable"), _c, ("exact",), "threads"),
    BackendEntry("reference", "pure Python over the literal plan (the ground truth, small spaces)",
                 frozenset({"count", "list", "write", "positions", "sample", "funnel", "check"}),
                 (), _reference, ("reference",)),
    BackendEntry("bnb", "branch and bound over the loop nest, cut by sound bounds of the objective (compiled C)",
                 frozenset({"best"}), ("time_limit", "threads"), _search("bnb"), (), "threads"),
    BackendEntry("exhaustive", "every valid configuration evaluated (compiled C)",
                 frozenset({"best"}), ("time_limit", "threads"), _search("exhaustive"), (), "threads"),
    BackendEntry("bnb-reference", "branch and bound over the reference's walk (Python: any space, slower)",
                 frozenset({"best"}), ("time_limit",), _search("bnb-reference")),
    BackendEntry("exhaustive-reference", "every valid configuration evaluated in Python (the ground truth of best)",
                 frozenset({"best"}), ("time_limit",), _search("exhaustive-reference")),
    BackendEntry("cpsat", "OR-Tools CP-SAT (counting, checking, optimising)",
                 frozenset({"count", "sample", "check", "best", "approximate"}),
                 ("time_limit", "workers", "seed", "sinks"), _cpsat, ("cpsat", "cpsat-xor"), "workers"),
)}
BACKENDS = REGISTRY   # the name the command line's choices read


def backends_with(capability: str) -> tuple[str, ...]:
    """Names of the registered backends that have `capability`."""
    return tuple(name for name, entry in REGISTRY.items() if capability in entry.capabilities)


def backend_for_method(method: str) -> str:
    """The backend that provides a sampling method (`exact`, `reference`, `cpsat`, `cpsat-xor`)."""
    for name, entry in REGISTRY.items():
        if method in entry.sampling_methods:
            return name
    methods = [m for entry in REGISTRY.values() for m in entry.sampling_methods]
    raise OptionError(f"unknown sampling method {method!r}", hint=f"methods: {', '.join(methods)}")


def require(name: str, capability: str) -> BackendEntry:
    """The entry of backend `name`, which must have `capability`."""
    entry = REGISTRY.get(name)
    if entry is None:
        raise BackendUnavailableError(f"unknown backend {name!r}", hint=f"available backends: {', '.join(REGISTRY)}")
    if capability not in entry.capabilities:
        able = backends_with(capability)
        raise BackendUnavailableError(f"the {name} backend cannot {CAPABILITIES[capability]}",
                                      hint=f"backends that can: {', '.join(able)}" if able else
                                      "no backend of this installation can")
    return entry


def get_backend(name: "str | object", capability: str | None = None, **options):
    """A backend by name, configured with `options` (those left None take the backend's
    defaults), or the backend object itself. With `capability`, a backend that lacks it is
    refused with a message naming the backends that have it."""
    if not isinstance(name, str):  # a backend object: a registered one must have the capability too
        if capability is not None and getattr(name, "name", None) in REGISTRY:
            require(name.name, capability)
        return name
    if capability is not None:
        entry = require(name, capability)
    else:
        entry = REGISTRY.get(name)
        if entry is None:
            raise BackendUnavailableError(f"unknown backend {name!r}", hint=f"available backends: {', '.join(REGISTRY)}")
    given = {key: value for key, value in options.items() if value is not None}
    unknown = sorted(set(given) - set(entry.options))
    if unknown:
        raise OptionError(f"the {name} backend takes no option {unknown[0]!r}",
                          hint=f"its options: {', '.join(entry.options)}" if entry.options else "it takes no options")
    return entry.factory(**given)


__all__ = ["BACKENDS", "REGISTRY", "CAPABILITIES", "BackendEntry", "ReferenceBackend", "ListedPositions", "SearchBackend",
           "backends_with", "backend_for_method", "get_backend", "require"]
