"""`tune` without a bound: a statistical search (`solverspace tune SPACE --measure CMD` when the
space declares no cost and no `--bound` is given, or with `--strategy`).

The strategy (`solverspace.strategies.make`: `model` by default, `random`) proposes valid
configurations never proposed before; each is measured exactly as the bound's search measures
(`analysis.tune.measurer_for`: a command without a shell, a callable, a Kernel Tuner cache),
`repeat` times, aggregated, committed at once to the same SQLite database, and given to the sinks.
The run identity has no bound and no strategy in it, so every statistical search of the same
space and measurement shares its rows: a run stopped by a budget or Ctrl-C resumes, whatever the
strategy or seed, with every stored measurement told to the strategy first (reused, never
measured again). Nothing is proven (there is no bound): the result says how many were measured
and where the proposals came from (`counts`). Stops: `max_measurements` new measurements,
`time_limit`, or every valid configuration measured (`status` "exhausted": then the best is
the fastest of those that ran).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from solverspace.analysis.objective import tie_key
from solverspace.analysis.tune import (Measurement, TuneResult, check_options, checked_sinks, close_sinks, jsonable,
                                       measurer_for, notes_for, run_identity)
from solverspace.analysis.tune_db import TuneDB, canonical_key
from solverspace.analysis.tune_failures import SAME_FAILURE_LIMIT, FailureStreak, check_failure_limit
from solverspace.analysis.tune_measure import DidNotRun
from solverspace.core.errors import OptionError
from solverspace.core.orders import format_value
from solverspace.strategies import SpaceExhausted, make

NO_BOUND = "none (a statistical search)"


@dataclass
class SearchResult(TuneResult):
    """A `TuneResult` of a statistical search: no bound, no proof; `strategy`, `seed`, and
    `counts` (where the proposals came from: startup, model, uniform, ...)."""
    strategy: str = ""
    seed: int = 0
    counts: dict = field(default_factory=dict)

    def summary(self) -> str:
        lines = []
        if self.top:
            for rank, m in enumerate(self.top, 1):
                head = "best:" if rank == 1 else f"{rank:>4}:"
                lines.append(f"{head} {m.time:.6g} s  {_config(m.configuration)}")
        else:
            lines.append("no configuration ran successfully")
        why = {"max_measurements": "stopped by --max-measurements", "time_limit": "stopped by --time-limit",
               "exhausted": "every valid configuration was measured"}.get(self.status, self.status)
        reused = f"{self.reused} reused from run {self.run} of the database" if self.reused else "none reused"
        sources = ", ".join(f"{n} {k}" for k, n in self.counts.items()) or "none"
        lines.append(f"not proven (no bound: a {self.strategy} search, seed {self.seed}): {why} ({self.measured} "
                     f"measured now, {reused}; proposals: {sources}; {self.seconds:.2f} s)")
        if self.failed:
            lines.append(f"{len(self.failed)} configuration(s) did not run: recorded, learned as failed")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {**super().as_dict(), "strategy": self.strategy, "seed": self.seed, "counts": dict(self.counts)}


def _config(config: dict) -> str:
    return " ".join(f"{k}={format_value(v)}" for k, v in config.items())


def tune_search(space, measure, *, strategy: str = "model", seed: int = 0, prior=None, top: int = 1,
                max_measurements: int | None = None, time_limit: float | None = None, repeat: int = 1,
                aggregate: str = "min", db: str = ":memory:", timeout: float | None = None, progress=None,
                sinks=(), stop_after_failures: int = SAME_FAILURE_LIMIT) -> SearchResult:
    """A statistical search over `space` (see the module's documentation); `prior`: a
    `prior.RankPrior` or the path of a cache or database to read as one (model strategy only);
    `stop_after_failures`: stop when the first this many new measurements all failed the same
    way (0: never; `analysis.tune_failures`)."""
    start = time.perf_counter()
    sinks = checked_sinks(sinks)
    try:
        result = _search(space, measure, strategy, seed, prior, top, max_measurements, time_limit, repeat,
                         aggregate, db, timeout, progress, sinks, start, stop_after_failures)
    except BaseException as exc:
        close_sinks(sinks, exc)
        raise
    close_sinks(sinks)
    return result


def _search(space, measure, strategy, seed, prior, top, max_measurements, time_limit, repeat, aggregate, db,
            timeout, progress, sinks, start, stop_after_failures) -> SearchResult:
    from solverspace.analysis.tune import AGGREGATES
    check_options(top, max_measurements, time_limit, repeat, aggregate, timeout)
    check_failure_limit(stop_after_failures)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise OptionError(f"seed={seed!r}: expected a whole number of at least 0", hint="e.g. --seed 1")
    say = progress or (lambda message: None)
    if prior is not None and not hasattr(prior, "ranked"):
        from solverspace.strategies.prior import RankPrior
        prior = RankPrior.from_path(space, prior)
        say(f"prior: {prior.size} configuration(s) of {prior.source}"
            + (f" ({prior.skipped} entries skipped: not valid configurations of this space)" if prior.skipped else ""))
    chooser = make(strategy, space, seed, prior)
    model = space.model
    measurer = measurer_for(measure, model, timeout)
    run, description = run_identity(model, NO_BOUND, measurer.describe, repeat, aggregate,
                                    getattr(measurer, "identity", None))
    store = TuneDB(db, run, description)
    try:
        result = SearchResult(NO_BOUND, measurer.describe, database=str(db), kept_apart=store.others, run=run,
                              reusable=store.reusable, identity_note=getattr(measurer, "unstable", None),
                              strategy=strategy, seed=seed)
        for note in notes_for(result, store, db):
            say(note)
        loop = _Loop(space, chooser, measurer, store, result, sinks, top, repeat, AGGREGATES[aggregate], say,
                     FailureStreak(measurer.describe, store.forget, stop_after_failures))
        loop.reuse()
        deadline = None if time_limit is None else start + time_limit
        loop.run(max_measurements, deadline)
        result.counts = dict(chooser.counts)
        result.top = [m for _, _, m in loop.best]
        result.seconds = time.perf_counter() - start
        try:
            store.finish(result.status, False, result.time, None, None)
        except Exception as exc:     # every measurement is committed already
            say(f"warning: the run's summary was not recorded in {db}: {exc}")
    finally:
        store.close()
    return result


class _Loop:
    def __init__(self, space, chooser, measurer, store, result, sinks, top, repeat, aggregate, say, streak):
        self.space, self.chooser, self.measurer, self.store, self.result = space, chooser, measurer, store, result
        self.sinks, self.top, self.repeat, self.aggregate, self.say = sinks, top, repeat, aggregate, say
        self.names = space.parameters
        self.tie = tie_key(space.model)
        self.best: list = []
        self.streak = streak

    def reuse(self) -> None:
        """Tell the strategy every stored measurement of this run (a resumed search)."""
        for row in self.store.stored():
            stored = row["configuration"]
            if any(n not in stored for n in self.names):
                continue
            config = tuple(tuple(v) if isinstance(v, list) else v for v in (stored[n] for n in self.names))
            try:
                valid = self.space.is_valid(config)
            except (ValueError, TypeError):
                valid = False
            if not valid:
                continue
            ran = row["status"] in ("ok", "below bound")
            self.chooser.tell(config, row["value"] if ran else None)
            self.result.reused += 1
            m = Measurement(dict(zip(self.names, config)), row["times"], row["value"] if ran else None,
                            row["status"], None, None, reused=True, error=row["error"])
            self._done(m, "stored")

    def run(self, max_measurements, deadline) -> None:
        result = self.result
        result.status = "max_measurements"
        while max_measurements is None or result.measured < max_measurements:
            if deadline is not None and time.perf_counter() > deadline:
                result.status = "time_limit"
                return
            try:
                config = self.chooser.ask()
            except SpaceExhausted:
                result.status = "exhausted"
                return
            self._measure(config)

    def _measure(self, config: tuple) -> None:
        configuration = dict(zip(self.names, config))
        key = canonical_key(jsonable(configuration))
        times, status, error, failed = [], "ok", None, None
        began = time.perf_counter()
        for _ in range(self.repeat):
            try:
                times.append(self.measurer.once(configuration))
            except DidNotRun as failure:
                status, error, failed = failure.status, failure.message, failure
                break
        value = self.aggregate(times) if status == "ok" else None
        self.store.record(key, jsonable(configuration), times, value, -math.inf, status, None, error,
                          time.perf_counter() - began)
        self.result.measured += 1
        self.chooser.tell(config, value)
        m = Measurement(configuration, times, value, status, None, None, error=error)
        self._done(m, f"#{self.result.measured}")
        self.streak.see(key, failed)

    def _done(self, m: Measurement, where: str) -> None:
        if m.ran:
            self.say(f"{where}: {m.time:.6g} s  {_config(m.configuration)}")
            entry = (m.time, self.tie(m.configuration), m)
            if len(self.best) < self.top or entry[:2] < self.best[-1][:2]:
                self.best.append(entry)
                self.best.sort(key=lambda e: e[:2])
                del self.best[self.top:]
        else:
            self.say(f"{where}: {m.status}  {_config(m.configuration)}: {m.error}")
            self.result.failed.append(m)
        for sink in self.sinks:
            sink.add(m)
