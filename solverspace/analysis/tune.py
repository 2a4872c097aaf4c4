"""Measured search (Telamon, seed 003, Section 5, Algorithm 2): the fastest configuration with
the fewest measurements, and a proof that it is the fastest.

A performance model written in the space language (`--bound EXPR`, or the space's declared
cost) bounds from below the run time of every configuration; `PrefixBound` turns it into a
bound on every configuration below a prefix of the plan's loop nest. The search keeps a
priority queue of prefixes ordered by that bound (ties: deeper first, then the order they were
made in, so a run is deterministic), and repeatedly takes the smallest:

- if its bound is at or above the best measured time (the K-th best with `top=K`), everything
  left in the queue is no better: the search stops with a proof;
- a complete configuration is measured (a Python callable, or a shell command whose last number
  on stdout is the time), `repeat` times, aggregated by `min` or `median`;
- a prefix is expanded into its admitted children (the reference walk's domains and
  constraints), each with its bound; a child whose bound is undefined everywhere (no valid
  completion has a defined model) is dropped, one whose bound is at or above the best measured
  time is cut.

Until `top` configurations have run there is no time to cut against, and a loose bound would
rank thousands of shallow prefixes first: the search then dives depth first, in domain order, to
a complete configuration (every prefix it makes also waits in the queue, so the proof is the
same), and goes best-first from then on.

Budgets (`max_measurements`, `time_limit`) stop the search early; it then says how far from
proven it is: the smallest bound still in the queue against the best time (the gap). A
configuration whose command fails, times out or prints no number is recorded with that status
and skipped (the proof is then about the configurations that ran). A measurement below its own
bound shows the model is not a lower bound: it is reported (a `SolverspaceWarning`), recorded
(`below bound`), and the result is never `proven`.

Every measurement goes to a SQLite database (`solverspace.analysis.tune_db`), committed at once; a run
with the same identity (space, settings, bound, measurement, repeat, aggregate) reuses the stored
values instead of measuring again, so an interrupted run resumes where it stopped.

Records elsewhere (`sinks`): each sink is an object with `add(measurement)` and `close()` (`Sink`).
`add` is called with every `Measurement` as the search makes it (measured now, or reused from the
database: `measurement.reused`), in the order the search makes them, after the database has it;
`close()` is called once on every sink when `tune` ends, normally or by an exception (a budget, a
failing command, Ctrl-C). An exception from `add` stops the search (the database keeps what was
measured); one from `close` is raised after every sink was closed. The Kernel Tuner cache writer
(`solverspace.integrations.kernel_tuner.CacheWriter`) is one.

The measurement can also be an object of its own (`Measurer`): `describe` (its text in the run
identity), `identity` (a digest of what it measures, or None) and `once(configuration) -> seconds`,
raising `tune_measure.DidNotRun` for a configuration that did not run (`solverspace.integrations.kernel_tuner.
CacheMeasure` takes times from a Kernel Tuner cache file).

Why a subtree was cut: for the best configuration and for the largest pruned subtrees (fewest
loops bound), the top-level part of the model (`max` operand, summand) with the largest lower
bound, the bottleneck, is kept (`TuneResult.explain()`, the database's `pruned` table).
"""
from __future__ import annotations

import hashlib
import heapq
import json
import math
import statistics
import time
import warnings
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from itertools import count
from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

from solverspace.lang import ir
from solverspace.lang.bounds import INF
from solverspace.lang.evaluate import Undefined, compile_expr
from solverspace.core.errors import OptionError, SolverspaceError, SolverspaceWarning, SpaceDefinitionError
from solverspace.core.sources import read_bytes, space_kind
from solverspace.analysis.lower_bound import PrefixBound, bottleneck
from solverspace.analysis.objective import model_or_declared, tie_key
from solverspace.core.orders import format_value
from solverspace.lang.printing import to_source
from solverspace.analysis.reference import ReferenceEnumerator
from solverspace.analysis.search import admitted
from solverspace.analysis.tune_db import TuneDB, bound_text, canonical_key
from solverspace.analysis.tune_failures import SAME_FAILURE_LIMIT, FailureStreak, check_failure_limit
from solverspace.analysis.tune_measure import Command, DidNotRun, Function

AGGREGATES = {"min": min, "median": statistics.median}
STATUSES = ("ok", "failed", "timeout", "invalid output", "below bound")
KEEP_PRUNED = 10        # how many of the largest pruned subtrees are explained


# ---------------------------------------------------------------------------------- results
@runtime_checkable
class Sink(Protocol):
    """Where `tune` also records its measurements: `add` each as it is made, `close` at the end."""

    def add(self, measurement: "Measurement") -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class Measurer(Protocol):
    """A measurement object (instead of a callable or a command template)."""

    describe: str
    identity: str | None

    def once(self, configuration: dict) -> float: ...


@dataclass
class Measurement:
    configuration: dict
    times: list                 # seconds, one per repeat (fewer when one failed)
    time: float | None          # their aggregate; None when the configuration did not run
    status: str                 # one of STATUSES
    bound: object               # the model's value there (exact: int or Fraction)
    bottleneck: str | None      # the model's part that sets the bound there
    reused: bool = False        # taken from the database, not measured in this run
    error: str | None = None    # what went wrong (failed, timeout, invalid output)
    terms: list = field(default_factory=list, repr=False)   # (model part, its value there)

    @property
    def ran(self) -> bool:
        return self.status in ("ok", "below bound")


@dataclass
class Cut:
    """A subtree cut by its bound: the loop parameters bound at its root."""
    prefix: dict
    depth: int                  # how many loops are bound
    bound: object
    bottleneck: str | None
    terms: list                 # (model part, its lower bound)


@dataclass
class TuneResult:
    bound: str                              # the bound expression
    measure: str                            # the measurement (command template or callable name)
    top: list = field(default_factory=list)         # the best measured, fastest first (`Measurement`)
    proven: bool = False                    # nothing unmeasured can be faster, and the bound held
    status: str = ""                        # proven | max_measurements | time_limit | bound violated | nothing ran
    lower: object = None                    # the smallest bound left unexplored (None: none left)
    measured: int = 0                       # measurements made by this run
    reused: int = 0                         # configurations whose stored measurement was used
    failed: list = field(default_factory=list)      # configurations that did not run (`Measurement`)
    violations: list = field(default_factory=list)  # measurements below their bound (`Measurement`)
    nodes_expanded: int = 0                 # prefixes expanded into their children
    nodes_created: int = 0                  # prefixes and configurations given a bound
    cut: int = 0                            # subtrees cut by their bound (at creation or by the proof)
    undefined: int = 0                      # configurations where the model is undefined (no bound: measured)
    cut_by: dict = field(default_factory=dict)      # model part -> subtrees whose bound it set
    pruned: list = field(default_factory=list)      # the largest cut subtrees (`Cut`)
    best_terms: list = field(default_factory=list)  # the model's parts at the best configuration
    database: str = ":memory:"
    kept_apart: int = 0                     # rows of other runs in the database (not reused)
    seconds: float = 0.0
    run: str = ""                           # the run identity (the rows of the database it reads and writes)
    reusable: int = 0                       # rows of this run in the database when it started
    identity_note: str | None = None        # why the callable's measurements will never be reused

    @property
    def best(self) -> dict | None:
        return self.top[0].configuration if self.top else None

    @property
    def time(self) -> float | None:
        return self.top[0].time if self.top else None

    @property
    def gap(self):
        """How far from proven: the best (K-th best) time minus the smallest bound left (0 when
        proven; None when nothing ran or nothing is left)."""
        if self.proven:
            return 0
        if not self.top or self.lower is None:
            return None
        return max(0.0, self.top[-1].time - _float(self.lower))

    def summary(self) -> str:
        """One paragraph: the answer and how sure it is."""
        lines = []
        if self.top:
            best = self.top[0]
            lines.append(f"best: {best.time:.6g} s  {_config(best.configuration)}  (bound {_num(best.bound)})")
            for rank, m in enumerate(self.top[1:], 2):
                lines.append(f"{rank:>4}: {m.time:.6g} s  {_config(m.configuration)}  (bound {_num(m.bound)})")
        else:
            lines.append("no configuration ran successfully")
        reused = f"{self.reused} reused from run {self.run} of the database" if self.reused else "none reused"
        work = (f"{self.measured} measured now, {reused}, "
                f"{self.nodes_expanded} prefixes expanded, {self.cut} subtrees cut, {self.seconds:.2f} s")
        if self.violations:
            first = self.violations[0]
            lines.append(f"NOT PROVEN: the model is not a lower bound: {len(self.violations)} measurement(s) below "
                         f"their bound, first {first.time:.6g} s < bound {_num(first.bound)} at "
                         f"{_config(first.configuration)}; the proof no longer holds ({work})")
        elif self.proven:
            lines.append(f"proven: every configuration not measured has a bound at or above the "
                         f"{'best' if len(self.top) <= 1 else f'{len(self.top)}-th best'} time ({work})")
        elif self.status in ("max_measurements", "time_limit"):
            how = "--max-measurements" if self.status == "max_measurements" else "--time-limit"
            if self.top and self.lower == -INF:
                lines.append(f"not proven: stopped by {how}; configurations with no bound (the model is undefined "
                             f"there) are left unmeasured ({work})")
            elif self.top and self.lower is not None:
                ratio = f", {self.gap / self.top[-1].time:.1%} of it" if self.top[-1].time else ""
                lines.append(f"not proven: stopped by {how}; the smallest bound left is {_num(self.lower)} against "
                             f"{self.top[-1].time:.6g} s measured (gap {self.gap:.6g} s{ratio}) ({work})")
            else:
                lines.append(f"not proven: stopped by {how} before any configuration ran ({work})")
        else:
            lines.append(f"not proven: {self.status} ({work})")
        if self.undefined:
            lines.append(f"{self.undefined} configuration(s) have no bound (the model is undefined there: a division "
                         "by zero): each was measured")
        if self.identity_note:
            lines.append(f"these measurements will not be reused: the callable holds {self.identity_note}")
        if self.failed:
            counts: dict = {}
            for m in self.failed:
                counts[m.status] = counts.get(m.status, 0) + 1
            lines.append(f"{len(self.failed)} configuration(s) did not run ("
                         + ", ".join(f"{n} {s}" for s, n in counts.items())
                         + "): recorded and skipped; the proof covers the configurations that ran")
        return "\n".join(lines)

    def explain(self) -> str:
        """Which part of the model set the bound: at the best configuration, and for the largest
        subtrees the search cut (Telamon uses this to find missing optimizations)."""
        lines = []
        if self.top:
            best = self.top[0]
            lines.append(f"best configuration {_config(best.configuration)}: measured {best.time:.6g} s, bound "
                         f"{_num(best.bound)} set by `{best.bottleneck}`")
            lines.extend(f"    {term} >= {_num(lo)}" for term, lo in self.best_terms)
        if self.cut_by:
            lines.append(f"{self.cut} subtrees cut; the part of the model that set their bound:")
            lines.extend(f"    {n:>8}  `{term}`" for term, n in sorted(self.cut_by.items(), key=lambda t: -t[1]))
        if self.pruned:
            lines.append(f"the largest cut subtrees (fewest loops bound; then the highest bound):")
            for cut in self.pruned:
                lines.append(f"    {_config(cut.prefix) or '(nothing bound)'}: bound {_num(cut.bound)} set by "
                             f"`{cut.bottleneck}`  ("
                             + "; ".join(f"{term} >= {_num(lo)}" for term, lo in cut.terms) + ")")
        return "\n".join(lines) or "nothing measured and nothing cut"

    def as_dict(self) -> dict:
        def measurement(m: Measurement) -> dict:
            return {"configuration": _jsonable(m.configuration), "time": m.time, "times": m.times,
                    "status": m.status, **_exact("bound", m.bound), "bottleneck": m.bottleneck,
                    "reused": m.reused, **({"error": m.error} if m.error else {})}
        return {"best": _jsonable(self.best), "time": self.time, "proven": self.proven, "status": self.status,
                "gap": _number(self.gap), **_exact("lower_bound", self.lower), "top": [measurement(m) for m in self.top],
                "measured": self.measured, "reused": self.reused, "failed": [measurement(m) for m in self.failed],
                "violations": [measurement(m) for m in self.violations], "nodes_expanded": self.nodes_expanded,
                "nodes_created": self.nodes_created, "cut": self.cut, "undefined": self.undefined,
                "cut_by": self.cut_by, "best_terms": [[t, _number(lo)] for t, lo in self.best_terms],
                "pruned": [{"prefix": _jsonable(c.prefix), "depth": c.depth, **_exact("bound", c.bound),
                            "bottleneck": c.bottleneck, "terms": [[t, _number(lo)] for t, lo in c.terms]}
                           for c in self.pruned],
                "bound_expression": self.bound, "measure": self.measure, "database": self.database,
                "kept_apart": self.kept_apart, "seconds": round(self.seconds, 6), "run": self.run,
                "reusable": self.identity_note is None, "undefined_bound": self.undefined}


def _float(value) -> float:
    """A float for an exact bound; ±inf past the float range (`x ** 400`), never OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _num(value) -> str:
    """A bound as text: six significant digits of its exact value (`x ** 400` too)."""
    if value is None:
        return "none"
    if value == -INF:
        return "undefined"
    try:
        return f"{float(value):.6g}"
    except OverflowError:
        exact = Fraction(value)
        with localcontext() as context:
            context.prec = 6
            mantissa, _, exponent = f"{Decimal(exact.numerator) / Decimal(exact.denominator):e}".partition("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{exponent}"


def _number(value):
    """A number for JSON: a finite float or None."""
    if value is None:
        return None
    value = _float(value)
    return value if math.isfinite(value) else None


def _exact(key: str, value) -> dict:
    """An exact bound for JSON: `key` as a float (None past the float range or undefined) and,
    for an int or a fraction that the float does not hold exactly, `key_exact` as "n" or "n/d"
    (as `best` writes `objective_exact`)."""
    number = _number(value)
    out = {key: number}
    if isinstance(value, (int, Fraction)) and not isinstance(value, bool) and (number is None or number != value):
        out[f"{key}_exact"] = bound_text(value)
    return out


def _jsonable(config):
    if config is None:
        return None
    return {k: list(v) if type(v) is tuple else v for k, v in config.items()}


def _config(config: dict) -> str:
    return " ".join(f"{k}={format_value(v)}" for k, v in config.items())


# ---------------------------------------------------------------------------------- identity
def run_identity(model, bound_text: str, measure: str, repeat: int, aggregate: str,
                 measure_identity: str | None = None) -> tuple[str, dict]:
    """(a hash, what it hashes): the space as loaded (every domain, derived value, constraint and
    setting; with the file's text when it is a file), the bound, the measurement (a callable by
    its code and closure values: `measure_identity`), repeat and aggregate. Results of another
    identity are never reused."""
    printed = "\n".join(str(x) for x in (*model.parameters, *model.derived, *model.constraints))
    path = Path(model.source)
    try:
        text = read_bytes(path, space_kind(path)).decode("utf-8") if path.is_file() else ""
    except (SolverspaceError, UnicodeDecodeError):
        text = ""
    settings = {s.name: s.value for s in model.settings}
    description = {"space": model.source, "settings": settings, "bound": bound_text, "measure": measure,
                   "repeat": repeat, "aggregate": aggregate}
    digest = hashlib.sha256(json.dumps({**description, "space": [printed, text], "code": measure_identity},
                                       sort_keys=True,
                                       default=str).encode()).hexdigest()[:20]
    return digest, description


# ---------------------------------------------------------------------------------- the search
def check_options(top, max_measurements, time_limit, repeat, aggregate, timeout) -> None:
    def whole(name, value, least):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise OptionError(f"{name}={value!r}: expected a whole number of at least {least}")

    def seconds(name, value):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not 0 < value < math.inf):
            raise OptionError(f"{name}={value!r}: expected a number of seconds greater than 0")

    whole("top", top, 1)
    whole("repeat", repeat, 1)
    if max_measurements is not None:
        whole("max_measurements", max_measurements, 0)
    seconds("time_limit", time_limit)
    seconds("timeout", timeout)
    if aggregate not in AGGREGATES:
        raise OptionError(f"aggregate={aggregate!r}: expected one of {', '.join(AGGREGATES)}")


def tune(plan, measure, bound: str | None = None, *, top: int = 1, max_measurements: int | None = None,
         time_limit: float | None = None, repeat: int = 1, aggregate: str = "min", db: str = ":memory:",
         timeout: float | None = None, progress: Callable[[str], None] | None = None,
         keep_pruned: int = KEEP_PRUNED, sinks=(), stop_after_failures: int = SAME_FAILURE_LIMIT) -> TuneResult:
    """Measured search over `plan` (see the module's documentation). `measure`: a callable
    (configuration dict -> seconds) or a shell command template ("./bench {dim_m} {dim_n}");
    `bound`: the model's text (None: the space's declared cost); `db`: the SQLite file
    (":memory:": none kept); `timeout`: seconds a command may run; `progress(message)`: told
    each measurement and the bound violations; `sinks`: `Sink`s given every measurement as it is
    made, and closed on any exit (also when this call fails before the search starts);
    `stop_after_failures`: stop (`OptionError`) when the first this many new measurements all
    failed the same way (0: never; `analysis.tune_failures`)."""
    start = time.perf_counter()
    sinks = _check_sinks(sinks)
    try:
        result = _tune(plan, measure, bound, top=top, max_measurements=max_measurements, time_limit=time_limit,
                       repeat=repeat, aggregate=aggregate, db=db, timeout=timeout, progress=progress,
                       keep_pruned=keep_pruned, sinks=sinks, start=start, stop_after_failures=stop_after_failures)
    except BaseException as exc:
        _close_sinks(sinks, exc)
        raise
    _close_sinks(sinks)
    return result


def _check_sinks(sinks) -> list:
    if isinstance(sinks, Sink):
        sinks = [sinks]
    try:
        sinks = list(sinks)
    except TypeError:
        raise OptionError(f"sinks={sinks!r}: expected a list of sinks (objects with add(measurement) and close())",
                          hint="e.g. sinks=[solverspace.integrations.kernel_tuner.CacheWriter(space, 'run.json')]") from None
    for sink in sinks:
        if not isinstance(sink, Sink):
            raise OptionError(f"sinks: {sink!r} is not a sink: it needs the methods add(measurement) and close()",
                              hint="e.g. sinks=[solverspace.integrations.kernel_tuner.CacheWriter(space, 'run.json')]")
    return sinks


def _close_sinks(sinks: list, in_flight: BaseException | None = None) -> None:
    """Close every sink; the first failure is raised after all were closed, or, when `tune` is
    failing already (`in_flight`), added to that exception as a note (that one is raised)."""
    failure = None
    for sink in sinks:
        try:
            sink.close()
        except Exception as exc:     # every sink is closed, then the first failure raised
            if in_flight is not None:
                in_flight.add_note(f"and closing the sink {sink!r} failed: {type(exc).__name__}: {exc}")
            failure = failure or exc
    if failure is not None and in_flight is None:
        raise failure


def _tune(plan, measure, bound, *, top, max_measurements, time_limit, repeat, aggregate, db, timeout, progress,
          keep_pruned, sinks, start, stop_after_failures) -> TuneResult:
    check_options(top, max_measurements, time_limit, repeat, aggregate, timeout)
    check_failure_limit(stop_after_failures)
    model = plan.model
    expr, given = model_or_declared(model, bound)
    if model.kinds.is_string(expr):
        raise SpaceDefinitionError(f"the bound {given!r} is a categorical value or an order, not a number",
                                   hint="a bound is a time in seconds, e.g. --bound 'max(flops / peak, bytes / bw)'")
    measurer = _measurer(measure, model, timeout)
    bound_text = to_source(expr)
    run, description = run_identity(model, bound_text, measurer.describe, repeat, aggregate,
                                    getattr(measurer, "identity", None))
    store = TuneDB(db, run, description)
    try:
        result = TuneResult(bound_text, measurer.describe, database=str(db), kept_apart=store.others, run=run,
                            reusable=store.reusable, identity_note=getattr(measurer, "unstable", None))
        for note in _notes(result, store, db):
            (progress or (lambda message: None))(note)
        search = _Search(plan, expr, measurer, store, top=top, max_measurements=max_measurements,
                         deadline=None if time_limit is None else start + time_limit, repeat=repeat,
                         aggregate=aggregate, progress=progress, keep_pruned=keep_pruned, sinks=sinks,
                         stop_after_failures=stop_after_failures)
        search.run(result)
        result.seconds = time.perf_counter() - start
        _record_summary(store, result)
    finally:
        store.close()
    return result


def _record_summary(store: TuneDB, result: TuneResult) -> None:
    """The run's summary and largest cuts; a database failing now loses no measurement (each is
    committed already): a warning, and the result is still returned."""
    try:
        store.record_pruned(result.pruned)
        store.finish(result.status, result.proven, result.time, result.lower, result.gap)
    except Exception as exc:        # tune_db._WriteFailed: the database locked or read-only by now
        warnings.warn(f"tune database {store.path!r}: the run's summary was not recorded ({exc}); every "
                      f"measurement is in the database", SolverspaceWarning, stacklevel=3)


def _measurer(measure, model, timeout):
    """The measurement: a callable (`Function`) or a command template (`Command`, no shell)."""
    if isinstance(measure, Measurer) and not callable(measure):
        return measure
    if callable(measure):
        return Function(measure, model)
    if isinstance(measure, str):
        return Command(measure, model, timeout)
    raise OptionError(f"measure={measure!r}: expected a callable or a command template",
                      hint='e.g. measure="./bench {dim_m} {dim_n}" or measure=lambda config: seconds')


def _notes(result: "TuneResult", store: TuneDB, db) -> list[str]:
    """What a user must hear before measuring: reused measurements (how many, which run), a
    measurement that cannot be reused, other runs' rows kept apart."""
    notes = []
    if result.identity_note:
        notes.append(f"the measurement callable cannot be identified ({result.identity_note} has no stable text): "
                     "its measurements are stored but will never be reused (give the callable a `tune_identity` "
                     "string to name what it measures)")
    if store.reusable:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(store.created)) if store.created else "?"
        notes.append(f"reusing {store.reusable} stored measurement(s) of run {store.run} in {db} (started {when}): "
                     "they are not measured again")
    if store.others:
        notes.append(f"the database {db} also holds {store.others} measurement(s) of other runs (another space, "
                     "settings, bound or measurement): kept apart, not reused")
    return notes


def _may_be_undefined(expr: ir.Expr) -> list:
    """The parts of a model that can be undefined: a division or modulo by anything but a nonzero
    constant, an order function of an item that may be absent."""
    parts = []
    for node in ir.walk(expr):
        if isinstance(node, ir.BinOp) and node.op in ("/", "//", "%"):
            if not (isinstance(node.right, ir.Const) and node.right.value != 0):
                parts.append(node)
        elif isinstance(node, ir.OrderFn) and node.fn not in ("contains", "len"):
            parts.append(node)
    return parts


class _Search:
    def __init__(self, plan, expr, measurer, store: TuneDB, *, top, max_measurements, deadline, repeat,
                 aggregate, progress, keep_pruned, sinks=(), stop_after_failures=SAME_FAILURE_LIMIT):
        self.plan, self.measurer, self.store = plan, measurer, store
        self.sinks = list(sinks)
        self.top, self.max_measurements, self.deadline = top, max_measurements, deadline
        self.repeat, self.aggregate = repeat, AGGREGATES[aggregate]
        self.progress = progress or (lambda message: None)
        self.keep_pruned = keep_pruned
        self.enumerator = ReferenceEnumerator(plan)
        self.levels = self.enumerator.levels
        self.bound = PrefixBound(plan, expr)
        self.exact = compile_expr(expr)
        self.risky = _may_be_undefined(expr)
        self.last = len(self.levels) - 1
        self.streak = FailureStreak(measurer.describe, store.forget, stop_after_failures)
        self.names = plan.model.parameter_names
        self.tie = tie_key(plan.model)
        self.best: list = []          # sorted (time, tie key, Measurement), at most `top`
        self.largest: list = []       # a max-heap by size: (-depth, bound, -seq, env, depth)
        self.sequence = count()

    def threshold(self):
        """The time a subtree must beat to matter: the K-th best measured (INF before K ran)."""
        return self.best[-1][0] if len(self.best) == self.top else INF

    # ------------------------------------------------------------------------------ the loop
    def run(self, result: TuneResult) -> None:
        """Best-first by bound (Algorithm 2). Until `top` configurations have run there is no time
        to cut against, so the search dives: depth first from the prefix it expanded last, in
        domain order (best bound first can lead into large regions with no valid configuration;
        domain order finds one as fast as listing does), backtracking at dead ends, down to a
        complete configuration (every prefix it
        makes also waits in the queue, so the proof is unchanged); a weak bound then still yields
        measurements early."""
        self.result = result
        last = len(self.levels) - 1
        queue: list = []
        taken: set = set()            # queue entries already handled by a dive (removed lazily)
        env: dict = {}
        if self.enumerator.admit(self.enumerator.prelude, env):
            self.risky = [node for node in self.risky if self._undefined_somewhere(node, env, -1)]
            self._push(queue, env, -1)
        configurations = 0
        dive: list = []               # the dive's stack: per level, the children not yet taken (next last)
        result.status = "proven"
        while True:
            while dive and not dive[-1]:
                dive.pop()
            if dive and len(self.best) < self.top:
                entry = dive[-1].pop()
                taken.add(entry[2])
            else:
                dive.clear()
                while queue and queue[0][2] in taken:
                    heapq.heappop(queue)
                if not queue:
                    break
                entry = queue[0]
                if entry[0] >= self.threshold():
                    for left in queue:      # everything left is no better: cut by the proof
                        if left[2] not in taken:
                            self._cut(left[4], left[3], left[0])
                    queue.clear()
                    break
                heapq.heappop(queue)
            bound, _, _, depth, env = entry
            if self.deadline is not None and time.perf_counter() > self.deadline:
                self._put_back(queue, taken, entry)
                result.status = "time_limit"
                break
            if depth == last:
                configurations += 1
                config = {n: env[n] for n in self.names}
                key = canonical_key(_jsonable(config))
                stored = self.store.lookup(key)
                if stored is None and self.max_measurements is not None and result.measured >= self.max_measurements:
                    self._put_back(queue, taken, entry)
                    result.status = "max_measurements"
                    break
                measurement = self._measure(config, env, bound, key, stored)
                for sink in self.sinks:
                    sink.add(measurement)
                self._offer(measurement)
                continue
            result.nodes_expanded += 1
            children = [self._push(queue, dict(env), depth + 1, bound)
                        for _ in admitted(self.enumerator, self.levels[depth + 1], env)]
            children = [c for c in children if c is not None]
            if children and len(self.best) < self.top:
                dive.append(children[::-1])     # domain order: the way to a valid leaf the walk knows
        while queue and queue[0][2] in taken:
            heapq.heappop(queue)
        result.lower = queue[0][0] if queue else None
        if configurations == 0 and not queue:
            raise SpaceDefinitionError("nothing to measure: the space has no valid configuration",
                                       hint="check the space with `solverspace count`, and the bound expression")
        result.top = [m for _, _, m in self.best]
        if result.status == "proven" and not result.top:
            result.status = "nothing ran"
        if result.violations:
            result.status = "bound violated" if result.status == "proven" else result.status
        result.proven = result.status == "proven"
        self._explain(result)

    @staticmethod
    def _put_back(queue: list, taken: set, entry) -> None:
        """An entry taken but not handled (a budget stopped the search) is left again, so that
        the smallest bound left, the distance from a proof, counts it."""
        if entry[2] in taken:
            taken.discard(entry[2])     # a dive's entry: still in the heap
        else:
            heapq.heappush(queue, entry)

    def _push(self, queue: list, env: dict, depth: int, parent=None):
        """Queue a prefix; `parent`: its parent's bound, kept where this loop binds nothing the
        model reads (the same interval analysis would give the same bound; a configuration is
        always given its exact bound)."""
        self.result.nodes_created += 1
        keep = (parent is not None and depth >= 0 and not self.bound.moves[depth]
                and not (depth == self.last and parent == -INF))
        bound = parent if keep else self._lower(env, depth)
        if depth == self.last and bound == -INF:
            self.result.undefined += 1
        if bound == INF:
            pass                        # no valid completion
        elif bound >= self.threshold():
            self._cut(env, depth, bound)
        else:
            entry = (bound, -depth, next(self.sequence), depth, env)
            heapq.heappush(queue, entry)
            return entry
        return None

    def _lower(self, env: dict, depth: int):
        """The search's bound of a prefix: the model's lower bound over its valid completions, or
        -INF (no bound) where the model may be undefined on one of them: a configuration the model
        says nothing about must be measured like any other (it may be the fastest)."""
        if depth == self.last:
            try:
                value = self.exact(env)
            except Undefined:
                return -INF
            return int(value) if type(value) is bool else value
        if any(self._undefined_somewhere(node, env, depth) for node in self.risky):
            return -INF
        return self.bound.lower(env, depth)

    def _undefined_somewhere(self, node, env: dict, depth: int) -> bool:
        """Whether a part of the model that can be undefined (`_may_be_undefined`) may be so on a
        completion of the prefix (sound: a guard around it is not looked at)."""
        bound = self.bound
        known = bound.known_at[depth] if depth >= 0 else bound.known_before
        if bound.free(node) <= known:
            try:
                bound.compiled(node)(env)
            except Undefined:
                return True
            return False
        if isinstance(node, ir.OrderFn):
            return True
        divisor = bound.interval(env, depth, node.right)
        return not divisor.empty and 0 in divisor

    def _cut(self, env: dict, depth: int, bound) -> None:
        result = self.result
        result.cut += 1
        term = bottleneck(self.bound.terms(env, depth))
        result.cut_by[term] = result.cut_by.get(term, 0) + 1
        entry = (-depth, bound, -next(self.sequence), env, depth)   # larger: shallower, then higher bound, then earlier
        if len(self.largest) < self.keep_pruned:
            heapq.heappush(self.largest, entry)
        elif entry[:3] > self.largest[0][:3]:
            heapq.heapreplace(self.largest, entry)

    # ------------------------------------------------------------------------------ measuring
    def _measure(self, config: dict, env: dict, bound, key: str, stored: dict | None) -> Measurement:
        result = self.result
        depth = len(self.levels) - 1
        intervals = self.bound.terms(env, depth)
        term = bottleneck(intervals)
        terms = [(text, i.lo) for text, i in intervals]
        if stored is not None:
            result.reused += 1
            m = Measurement(config, stored["times"], stored["value"], stored["status"], bound, term, reused=True,
                            error=stored["error"], terms=terms)
            self._report(m)
            return m
        times, status, error, failed = [], "ok", None, None
        start = time.perf_counter()
        for _ in range(self.repeat):
            try:
                times.append(self.measurer.once(env))
            except DidNotRun as failure:
                status, error, failed = failure.status, failure.message, failure
                break
        value = self.aggregate(times) if status == "ok" else None
        if status == "ok" and value < bound:
            status = "below bound"
        self.store.record(key, _jsonable(config), times, value, bound, status, term, error,
                          time.perf_counter() - start)
        result.measured += 1
        m = Measurement(config, times, value, status, bound, term, error=error, terms=terms)
        self._report(m)
        self.streak.see(key, failed)
        return m

    def _report(self, m: Measurement) -> None:
        result = self.result
        where = "stored" if m.reused else f"#{result.measured}"
        if m.ran:
            self.progress(f"{where}: {m.time:.6g} s  {_config(m.configuration)}  (bound {_num(m.bound)}, "
                          f"{m.bottleneck})")
        else:
            self.progress(f"{where}: {m.status}  {_config(m.configuration)}: {m.error}")
        if m.status == "below bound":
            message = (f"the model is not a lower bound: measured {m.time:.6g} s, below its bound {_num(m.bound)}, "
                       f"at {_config(m.configuration)}; the search goes on, but the proof no longer holds")
            warnings.warn(message, SolverspaceWarning, stacklevel=4)

    def _offer(self, m: Measurement) -> None:
        result = self.result
        if m.status == "below bound":
            result.violations.append(m)
        if not m.ran:
            result.failed.append(m)
            return
        entry = (m.time, self.tie(m.configuration), m)
        if len(self.best) == self.top and entry[:2] >= self.best[-1][:2]:
            return
        self.best.append(entry)
        self.best.sort(key=lambda e: e[:2])
        del self.best[self.top:]

    # ------------------------------------------------------------------------------ why
    def _explain(self, result: TuneResult) -> None:
        if result.top:
            result.best_terms = result.top[0].terms
        order = self.plan.order
        for _, bound, _, env, depth in sorted(self.largest, key=lambda e: e[:3], reverse=True):
            terms = self.bound.terms(env, depth)
            result.pruned.append(Cut({n: env[n] for n in order[:depth + 1]}, depth + 1, bound, bottleneck(terms),
                                     [(term, i.lo) for term, i in terms]))


# ---------------------------------------------------------------------------------- for other searches
def measurer_for(measure, model, timeout):
    """The measurement object of `measure` (a callable, a command template or a `Measurer`), as
    `tune` builds it: for searches other than the bound's (`solverspace.strategies.tune`)."""
    return _measurer(measure, model, timeout)


def checked_sinks(sinks) -> list:
    """`sinks` as a list, each checked to be a `Sink`."""
    return _check_sinks(sinks)


def close_sinks(sinks: list, in_flight: BaseException | None = None) -> None:
    """Close every sink, as `tune` does on any exit."""
    _close_sinks(sinks, in_flight)


def notes_for(result: "TuneResult", store: TuneDB, db) -> list[str]:
    """What a user must hear before measuring (reused measurements, other runs kept apart)."""
    return _notes(result, store, db)


def jsonable(config):
    """A configuration for JSON and the database (orders as lists)."""
    return _jsonable(config)


__all__ = ["AGGREGATES", "Cut", "Measurement", "Measurer", "STATUSES", "Sink", "TuneResult", "checked_sinks",
           "close_sinks", "jsonable", "measurer_for", "notes_for", "run_identity", "tune"]
