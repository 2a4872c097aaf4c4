"""Run the compiled enumerator: split into work units, count, fill rows, find positions.

Counting: the units (prefixes of the outer loops) are counted in parallel. Listing: the unit
counts give each unit's offset, units are filled in parallel into a NumPy structured array in
batches of at most `batch_rows` rows, and each batch goes to a writer of
`solverspace.core.formats` (`.npy` bytes, CSV text formatted in C, JSON Lines rearranged from
it, Parquet row groups) before the next is filled, so memory stays bounded whatever the output
size.
"""
from __future__ import annotations

import copy
import os
import queue
import signal
import threading
import functools
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from solverspace.core.errors import SolverspaceError, SpaceEvaluationError, UndefinedOperationError
from solverspace.core.options import check_threads
from solverspace.core.records import MutableRecord
from solverspace.analysis.plan import Plan
from solverspace.core.results import Stats
from solverspace.core.draws import Positions

from .codegen import (
    CDEF, CDEF_FUNNEL, CGenerator, ERROR_COUNT_OVERFLOW, ERROR_STEP_ZERO, Generated, funnel_layout)
from .optimize import Options
from .build import space_name, waiting
from .plan_cache import generation_key, load_generated, store_generated
from .runtime import csv_row_width
from .shapes import build_shaped, is_built_shaped
from ..order_slots import SlotJoins, refuse_orders
from . import orders as c_orders
from . import units_cache
from .groups import GroupPositions, consecutive_groups, group_plan

if TYPE_CHECKING:  # NumPy is imported where rows are listed: counting imports none
    import numpy as np

    from solverspace.core.formats import Header

MAX_FILL_ROWS = 1 << 26  # a larger work unit is not listed to find a position in it (see c.rank)
MIN_UNITS = 4096          # many small units: dynamic scheduling evens out uneven subtrees (seed 001)
UNITS_PER_THREAD = 512
DEFAULT_BATCH_ROWS = 1 << 22
WAKE_EVERY = 0.05         # seconds between a long C call's progress reports (and looks for a signal)


class SpaceTooLargeError(SolverspaceError, ValueError):
    """A space with more configurations than can be listed."""


class Units(MutableRecord):
    """The work units: prefixes of the outer loops, and after counting each one's count. Kept in
    C memory and Python ints, so that a count needs no NumPy; listing views them as arrays.
    `n`: units (1 when depth is 0: the whole nest); `prefix_buffer`: cffi int64_t[n * depth] (at
    least one element); `prefix_bytes`: ffi.buffer over it (NumPy views it when listing);
    `unit_counts`, `unit_undefined`: per unit, after counting (its count, the undefined operations
    met below its prefix)."""

    __match_args__ = ("depth", "n", "prefix_buffer", "prefix_bytes", "prefix_stats", "unit_counts", "total",
                      "unit_undefined")

    def __init__(self, depth: int, n: int, prefix_buffer, prefix_bytes, prefix_stats: Stats,
                 unit_counts: list[int] | None = None, total: int | None = None,
                 unit_undefined: list[int] | None = None):
        self.depth, self.n, self.prefix_buffer, self.prefix_bytes = depth, n, prefix_buffer, prefix_bytes
        self.prefix_stats, self.unit_counts, self.total = prefix_stats, unit_counts, total
        self.unit_undefined = unit_undefined

    @cached_property
    def prefixes(self) -> "np.ndarray":
        """(n, depth) int64 view of the prefix buffer."""
        import numpy as np
        flat = np.frombuffer(self.prefix_bytes, dtype=np.int64)
        return flat[: self.n * self.depth].reshape(self.n, self.depth)

    @cached_property
    def counts(self) -> "np.ndarray":
        """Unit counts as an array: int64 when the total fits, else Python ints (object; NumPy's
        cumsum and searchsorted work on it)."""
        import numpy as np
        return np.array(self.unit_counts, dtype=np.int64 if self.total < 2 ** 63 else object)


def unit_counts(ffi, words, n: int, width: int) -> list[int]:
    """Unit counts of `width` little-endian unsigned 64-bit words each (width 1: int64)."""
    if width == 1:
        return ffi.unpack(words, n)
    raw = bytes(ffi.buffer(words))
    step = 8 * width
    return [int.from_bytes(raw[u * step:(u + 1) * step], "little") for u in range(n)]


class _Job:
    """One C call handed to the C thread. `finished` is a plain lock held from creation until
    the call returns: the caller blocks on acquiring it and wakes the moment the C thread
    releases it (a wait on a bare lock can be interrupted by a signal and leaves no state
    behind, unlike `Condition.wait`). `done` says the same for callers that only look."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args
        self.value = self.error = None
        self.done = threading.Event()
        self.finished = threading.Lock()
        self.finished.acquire()

    def wait(self, timeout: float = -1) -> bool:
        """Whether the call has returned, waiting up to `timeout` seconds (-1: until it has);
        Ctrl-C interrupts the wait (KeyboardInterrupt), not the call."""
        if self.finished.acquire(timeout=timeout):
            self.finished.release()   # later waits see it at once
            return True
        return False


class _CThread:
    """One long-lived daemon thread runs every C call. OpenMP keeps its thread pool per calling
    thread; a calling thread that exits tears the pool down, which can race with interpreter
    exit (seen as a crash after Ctrl-C). A thread that lives as long as the process avoids it.
    It blocks SIGINT/SIGTERM, and the OpenMP threads inherit that, so Ctrl-C reaches Python."""

    def __init__(self):
        self.queue: "queue.SimpleQueue[_Job]" = queue.SimpleQueue()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()

    def submit(self, fn, args) -> _Job:
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="solverspace-c", daemon=True)
                self.thread.start()
        job = _Job(fn, args)
        self.queue.put(job)
        return job

    def _run(self):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        while True:
            job = self.queue.get()
            try:
                job.value = job.fn(*job.args)
            except BaseException as exc:  # handed to the caller
                job.error = exc
            finally:
                job.done.set()
                job.finished.release()


C_THREAD = _CThread()   # the one thread that runs C calls (shared with lanes.run_program)


def _with_constants(shaped, fn, *args):
    shaped.set_constants()
    return fn(*args)


def call_c(shaped, fn, *args, progress=None, total=0, done=None, cancel=None):
    """Run a C function on the C thread (cffi releases the GIL) so that Ctrl-C and the
    progress bar stay responsive; Ctrl-C (or SIGTERM, raised by the CLI as a KeyboardInterrupt)
    sets `cancel`, which every work unit and every long loop inside one checks, and waits for
    the C threads to stop before raising. The caller sleeps on the job's lock and is woken the
    moment the call returns: a short call costs one hand-over, never a poll; a long one wakes the
    caller every WAKE_EVERY seconds to report progress (a signal delivered to another thread of
    the process is then seen too)."""
    job = None
    if shaped.constants is not None:  # a module shared by its shape: make it this program first
        fn = functools.partial(_with_constants, shaped, fn)
    report = progress is not None and done is not None
    try:
        job = C_THREAD.submit(fn, args)
        while not job.wait(WAKE_EVERY):   # woken at once when the call returns; a long one also
            if report:                     # looks for a signal (and reports) every WAKE_EVERY seconds
                progress(int(done[0]), total)
    except KeyboardInterrupt:
        if cancel is not None:
            cancel[0] = 1
        if job is not None:
            job.wait()
        raise
    if progress and done is not None:
        progress(int(done[0]), total)
    if job.error is not None:
        raise job.error
    return job.value


class CEnumerator:
    """One compiled enumerator for a plan, optimization options and output columns."""

    _cache: dict[tuple, "CEnumerator"] = {}

    def __init__(self, plan: Plan, options: Options = Options(), with_derived: tuple[str, ...] = (),
                 threads: int | None = None, funnel: bool = False, quick: bool = False):
        check_threads(threads)
        self.quick = quick   # the quick (-O0) build of the same source (c.build.flags)
        refuse_orders(plan, "C", "measure the funnel of")  # the backend's other answers go through slot_plan
        self.plan = plan
        self.options = Options.literal() if funnel else options
        self.with_derived, self.funnel_build = with_derived, funnel
        self._build(wide=False)
        self.threads = threads or os.cpu_count() or 1
        self.units: Units | None = None

    def _build(self, wide: bool):
        """Generate and compile; `wide`: counts in wider integers (after a checked int64
        count overflowed), see CGenerator."""
        key = generation_key(self.plan, self.options, self.with_derived, self.funnel_build, wide)
        generated = load_generated(key) if key else None
        if generated is None:
            with waiting(f"analysing {space_name(self.plan.model.source)} and generating its C program"):
                generated = CGenerator(self.plan, self.options, self.with_derived, funnel=self.funnel_build,
                                       wide=wide).generate()
            if key:
                store_generated(key, generated)
        self.generated: Generated = generated
        self.shaped = build_shaped(self.generated.source, CDEF + (CDEF_FUNNEL if self.funnel_build else ""),
                                   quick=self.quick)
        self.module = self.shaped.module
        self.lib, self.ffi = self.module.lib, self.module.ffi

    @classmethod
    def clear_cache(cls) -> None:
        """Forget the enumerators built in this process (benchmarks time a fresh build)."""
        cls._cache.clear()

    @classmethod
    def get(cls, plan, options=Options(), with_derived=(), threads=None, quick=False) -> "CEnumerator":
        key = (id(plan), options, tuple(with_derived), threads, quick)
        if key not in cls._cache:
            cls._cache[key] = cls(plan, options, with_derived, threads, quick=quick)
        return cls._cache[key]

    # ------------------------------------------------------------------------------ running C
    def call(self, fn, *args, progress=None, total=0, done=None, cancel=None):
        """`call_c` with this enumerator's module."""
        return call_c(self.shaped, fn, *args, progress=progress, total=total, done=done, cancel=cancel)

    def check_status(self, stats, strict: bool, where: str = ""):
        if stats.error == ERROR_STEP_ZERO:
            name = self.generated.items[stats.undef_item]
            raise SpaceEvaluationError(f"parameter {name!r}: range step is 0",
                                       hint="a range step must be a non-zero integer")
        if strict and stats.undefined:
            raise self._undefined_error(self.generated.items[stats.undef_item], where)

    @staticmethod
    def _undefined_error(item: str, where: str) -> UndefinedOperationError:
        return UndefinedOperationError(
            f"undefined operation (division or modulo by zero) in {item!r}{where}",
            hint="guard the expression, or run without --strict, where such configurations are invalid "
                 "and counted as undefined; the reference backend with --strict names the configuration")

    def split(self) -> Units:
        """The work units: the prefix depth that gives enough units for dynamic scheduling."""
        if self.units is None:
            self.units = self.prefix_units(max(MIN_UNITS, UNITS_PER_THREAD * self.threads))
        return self.units

    def prefix_units(self, min_units: int, depth: int | None = None) -> Units:
        """The prefixes of the outer loops as work units (not yet counted): at `depth` when given,
        else at the shallowest depth with at least `min_units` prefixes (the deepest one if none
        has). Depth 0 (no loop to split on) is one unit, the whole nest. The prefix walk's
        undefined tally is the units' `prefix_stats`."""
        st = self.ffi.new("ss_stats *")
        cancel = self.ffi.new("int[1]")
        wanted, depth, count = depth, 0, 1
        for s in range(1, self.generated.max_prefix_depth + 1):
            if wanted is not None and s != wanted:
                continue
            count = self.call(self.walk_prefixes, s, self.ffi.NULL, 0, st, cancel, cancel=cancel)
            self.check_status(st, False)
            depth = s
            if wanted is None and count >= min_units:
                break
        if wanted is not None and depth != wanted:
            raise ValueError(f"prefix depth {wanted} is not between 0 and {self.generated.max_prefix_depth}")
        prefixes = self.ffi.new("int64_t[]", max(count, 1) * max(depth, 1))
        if depth:
            self.call(self.walk_prefixes, depth, prefixes, count, st, cancel, cancel=cancel)
        stats = Stats(undefined=st.undefined if depth else 0)
        if depth and st.undefined:
            stats.first_undefined = (self.generated.items[st.undef_item], {})
        return Units(depth, count if depth else 1, prefixes, self.ffi.buffer(prefixes), stats)

    def units_of(self, depth: int, prefixes: "np.ndarray", counts=None) -> Units:
        """Work units from a table of prefixes at `depth` (rows of `prefix_units(...).prefixes`,
        e.g. a partition's block), with their counts when known."""
        import numpy as np
        n = len(prefixes)
        data = np.ascontiguousarray(prefixes, dtype=np.int64)
        buffer = self.ffi.new("int64_t[]", max(n * depth, 1))
        if n * depth:
            self.ffi.memmove(buffer, data.tobytes(), n * depth * 8)
        units = Units(depth, n, buffer, self.ffi.buffer(buffer), Stats(undefined=0))
        if counts is not None:
            units.unit_counts = [int(c) for c in counts]
            units.total = sum(units.unit_counts)
        return units

    def walk_prefixes(self, depth, out, cap, st, cancel) -> int:
        """`ss_prefixes` (the outer loops' walk) with the cancel flag its loops look at: the number of
        prefixes at `depth`, written to `out` (room for `cap`) unless NULL. Run it through `call`."""
        self.lib.ss_set_cancel(cancel)
        try:
            return self.lib.ss_prefixes(depth, out, cap, st)
        finally:
            self.lib.ss_set_cancel(self.ffi.NULL)

    def wide_twin(self) -> "CEnumerator":
        """The same enumerator built to count in wide integers, built (or loaded) once per process."""
        if getattr(self, "_wide_twin", None) is None:
            twin = copy.copy(self)
            twin._build(wide=True)
            self._wide_twin = twin
        return self._wide_twin

    def with_units(self, units: Units) -> "CEnumerator":
        """A copy sharing the loaded module whose work units are `units` (a partition's block), with
        its own position caches."""
        view = copy.copy(self)
        view._unit_ranker = None
        view._unit_of_prefix = None
        view.units = units
        return view

    def count_units(self, strict=False, progress=None) -> Units:
        units = self.split()
        if units.unit_counts is not None:   # counted before (strict or not): strict raises as a first count does
            if strict and units.prefix_stats.undefined:
                item, prefix = units.prefix_stats.first_undefined
                raise self._undefined_error(item, self._under(prefix))
            return units
        n = units.n
        words = self.generated.count_words
        counts = self.ffi.new("int64_t[]", n * words)
        stats = self.ffi.new("ss_stats[]", n)
        cancel = self.ffi.new("int[1]")
        done = self.ffi.new("int64_t[1]")
        self.call(self.lib.ss_count_units, units.depth, units.prefix_buffer, n,
                   counts, stats, self.threads, cancel, done, progress=progress, total=n, done=done,
                   cancel=cancel)
        # the fields of all units at once (ss_stats: int64 count, undefined; int32 error, undef_item)
        raw = memoryview(self.ffi.buffer(stats))
        errors, undefined_of = raw.cast("i")[4::6], raw.cast("q")[1::3]
        failed = [u for u, error in enumerate(errors) if error] if any(errors) else []
        if any(stats[u].error == ERROR_COUNT_OVERFLOW for u in failed):  # same loops and units, wider counts
            self._build(wide=True)
            return self.count_units(strict, progress)
        if failed:
            self.check_status(stats[failed[0]], strict)
        undefined = units.prefix_stats.undefined + sum(undefined_of)
        if strict and units.prefix_stats.first_undefined is not None:
            raise self._undefined_error(units.prefix_stats.first_undefined[0], "")
        if undefined > units.prefix_stats.undefined:
            u = next(u for u, n_undefined in enumerate(undefined_of) if n_undefined)
            if strict:
                raise self._undefined_error(self.generated.items[stats[u].undef_item], self._where(units, u))
            if units.prefix_stats.first_undefined is None:
                units.prefix_stats.first_undefined = (self.generated.items[stats[u].undef_item],
                                                      self._prefix_dict(units, u))
        units.prefix_stats.undefined = undefined
        units.unit_undefined = list(undefined_of)
        units.unit_counts = unit_counts(self.ffi, counts, n, words)
        units.total = sum(units.unit_counts)
        return units

    def _ptr(self, array: "np.ndarray"):
        return self.ffi.cast("int64_t *", array.ctypes.data)

    def _prefix_dict(self, units, u) -> dict:
        if not units.depth:
            return {}
        return dict(zip(self.plan.order[: units.depth], (int(v) for v in units.prefixes[u])))

    def _where(self, units, u) -> str:
        return self._under(self._prefix_dict(units, u))

    @staticmethod
    def _under(prefix: dict) -> str:
        return (" under " + " ".join(f"{k}={v}" for k, v in prefix.items())) if prefix else ""

    # ------------------------------------------------------------------------------ results
    def stats(self, strict=False, progress=None) -> Stats:
        units = self.count_units(strict, progress)
        s = units.prefix_stats
        return Stats(count=units.total, undefined=s.undefined, first_undefined=s.first_undefined)

    def batches(self, strict=False, progress=None, batch_rows=DEFAULT_BATCH_ROWS) -> Iterator[np.ndarray]:
        """Structured arrays of consecutive rows, in output order, each at most `batch_rows`
        rows unless one unit alone is larger."""
        import numpy as np
        units = self.count_units(strict)
        counts = units.counts
        if counts.dtype == object:  # counts may pass 63 bits: this many rows cannot be listed
            total = int(counts.sum())
            if total >= 2 ** 63:
                raise SpaceTooLargeError(f"the space has {total} configurations, too many to list (2**63 or more)",
                                         hint="count, sample, get and index work on it without listing")
            counts = counts.astype(np.int64)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        total = int(offsets[-1])
        dtype = np.dtype(self.generated.dtype)
        cancel = self.ffi.new("int[1]")
        done = self.ffi.new("int64_t[1]")
        start = 0
        n = len(counts)
        while start < n:
            stop = start + 1
            while stop < n and offsets[stop + 1] - offsets[start] <= batch_rows:
                stop += 1
            rows = np.empty(int(offsets[stop] - offsets[start]), dtype=dtype)
            self.call(self.lib.ss_fill_units, units.depth, units.prefix_buffer, start, stop,
                       self._ptr(offsets), self.ffi.cast("char *", rows.ctypes.data), self.threads, cancel, done,
                       progress=progress, total=n, done=done, cancel=cancel)
            yield rows
            start = stop
        if total == 0 and n == 0:
            yield np.empty(0, dtype=dtype)

    def offsets(self) -> np.ndarray:
        """Row offset of each work unit in the output order (length units + 1)."""
        import numpy as np
        counts = self.count_units().counts
        offsets = np.zeros(len(counts) + 1, dtype=counts.dtype)  # object (Python ints) for wide counts
        np.cumsum(counts, out=offsets[1:])
        return offsets

    def rows_at(self, indices, batch_rows=DEFAULT_BATCH_ROWS, progress=None) -> np.ndarray:
        """The configurations at the given positions of the output order (in the order given),
        filling only the work units that hold them, a batch of units at a time."""
        import numpy as np
        offsets = self.offsets()
        total = int(offsets[-1])
        indices = np.asarray(indices, dtype=offsets.dtype) if len(indices) else np.empty(0, dtype=offsets.dtype)
        if len(indices) and (indices.min() < 0 or indices.max() >= total):
            raise IndexError(f"configuration index out of range: the space has {total} configurations")
        units = self.units
        order = np.argsort(indices, kind="stable")
        ordered = indices[order]
        unit_of = np.searchsorted(offsets, ordered, side="right") - 1
        needed = np.unique(unit_of)
        result = np.empty(len(indices), dtype=self.generated.dtype)
        large = units.counts[needed] > MAX_FILL_ROWS
        if large.any():  # too large to list: descend to each position (translators.c.rank)
            ranker = self._ranker()
            for j in np.flatnonzero(np.isin(unit_of, needed[large])):
                u = int(unit_of[j])
                result[order[j]] = self.encode(ranker.row_at(u, int(ordered[j] - offsets[u])))
            needed = needed[~large]
        cancel = self.ffi.new("int[1]")
        done = self.ffi.new("int64_t[1]")
        sizes = units.counts[needed]
        start = 0
        while start < len(needed):
            stop = start + 1
            rows = sizes[start]
            while stop < len(needed) and rows + sizes[stop] <= batch_rows:
                rows += sizes[stop]
                stop += 1
            chosen = np.ascontiguousarray(needed[start:stop])
            out_offsets = np.zeros(len(chosen) + 1, dtype=np.int64)
            np.cumsum(units.counts[chosen].astype(np.int64), out=out_offsets[1:])
            buffer = np.empty(int(out_offsets[-1]), dtype=self.generated.dtype)
            self.call(self.lib.ss_fill_list, units.depth, units.prefix_buffer, self._ptr(chosen), len(chosen),
                       self._ptr(out_offsets), self.ffi.cast("char *", buffer.ctypes.data), self.threads, cancel, done,
                       progress=progress, total=len(needed), done=done, cancel=cancel)
            lo, hi = np.searchsorted(unit_of, [chosen[0], chosen[-1]], side="left")[0], \
                np.searchsorted(unit_of, chosen[-1], side="right")
            which = np.searchsorted(chosen, unit_of[lo:hi])
            within = (ordered[lo:hi] - offsets[unit_of[lo:hi]]).astype(np.int64)  # below a fillable unit's size
            positions = out_offsets[which] + within
            result[order[lo:hi]] = buffer[positions]
            start = stop
        return result

    def _ranker(self):
        from .rank import UnitRanker
        if getattr(self, "_unit_ranker", None) is None:
            self._unit_ranker = UnitRanker(self)
        return self._unit_ranker

    def encode(self, values: dict) -> tuple:
        """A configuration as the row tuple of the structured array (categorical values as codes)."""
        row = []
        for c in self.generated.columns:
            v = values[c.name]
            if c.categorical is not None:
                if v not in self.generated.codes:
                    return None
                v = self.generated.codes[v]
            row.append(v)
        return tuple(row)

    def index_of(self, values: dict) -> int | None:
        """Position of a configuration in the output order, or None if it is not valid."""
        import numpy as np
        offsets = self.offsets()
        units = self.units
        row = self.encode(values)
        if row is None:
            return None
        if units.depth:
            if getattr(self, "_unit_of_prefix", None) is None:
                self._unit_of_prefix = {tuple(p): u for u, p in enumerate(units.prefixes.tolist())}
            key = tuple(values[name] for name in self.plan.order[: units.depth])
            key = tuple(self.generated.codes.get(v, v) if isinstance(v, str) else v for v in key)
            unit = self._unit_of_prefix.get(key)
            if unit is None:
                return None
        else:
            unit = 0
        size = int(units.counts[unit])
        if size == 0:
            return None
        if size > MAX_FILL_ROWS:
            rank = self._ranker().rank_of(unit, values)
            return None if rank is None else offsets[unit] + rank
        rows = self.rows_at(np.arange(size, dtype=np.int64).astype(offsets.dtype) + offsets[unit])
        target = np.array([row], dtype=self.generated.dtype)
        try:
            hits = np.flatnonzero(rows == target[0])
        except (OverflowError, ValueError):
            return None
        return int(offsets[unit] + hits[0]) if len(hits) else None

    def funnel(self, progress=None):
        """The pruning funnel (see solverspace.analysis.funnel) from counters compiled into this build."""
        import numpy as np
        from solverspace.analysis.funnel import empty_funnel
        if not hasattr(self.lib, "ss_funnel"):
            raise TypeError("this enumerator was built without funnel counters (funnel=True)")
        layout = funnel_layout(self.plan)
        units = self.split()
        counters = np.zeros(layout["size"], dtype=np.int64)
        cancel = self.ffi.new("int[1]")
        done = self.ffi.new("int64_t[1]")
        self.call(self.lib.ss_funnel, units.depth, self._ptr(counters), self.threads, cancel, done,
                   progress=progress, total=max(len(units.prefixes), 1), done=done, cancel=cancel)
        result = empty_funnel(self.plan)
        for c in result.constraints:
            g = layout["index"][c.name]
            c.reached, c.rejected, c.undefined, c.alone = (int(v) for v in counters[4 * g: 4 * g + 4])
        n = len(layout["constraints"])
        for (a, b) in result.overlap:
            ga, gb = layout["index"][a], layout["index"][b]
            result.overlap[(a, b)] = int(counters[layout["overlap"] + ga * n + gb])
        for i, level in enumerate(result.levels):
            level.candidates = int(counters[layout["candidates"] + i])
            level.undefined = int(counters[layout["level_undefined"] + i])
        result.count = int(counters[layout["count"]])
        return result

    def _with_derived(self):
        return tuple(c.name for c in self.generated.columns[len(self.plan.model.parameters):])

    def array(self, strict=False, progress=None) -> np.ndarray:
        import numpy as np
        parts = list(self.batches(strict, progress, batch_rows=1 << 62))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    @property
    def header(self) -> Header:
        """The output columns for a writer (`solverspace.core.formats`): names, each categorical
        column's table (the rows hold its codes) and the rows' dtype."""
        from solverspace.core.formats import Header   # the writers' module: only where rows are written
        columns = self.generated.columns
        return Header(tuple(c.name for c in columns), tuple(c.categorical for c in columns), self.generated.dtype)

    def format_csv(self, rows: np.ndarray, sep: str = ",") -> bytes:
        """A batch of rows as CSV lines, formatted in C (`ss_format_csv`, in parallel): the
        writers' `format_csv` for this enumerator's batches."""
        import numpy as np
        width = csv_row_width(self.generated.columns)   # the C side refuses a smaller buffer
        buf = np.empty(max(len(rows) * width, 1), dtype=np.uint8)
        n = self.call(self.lib.ss_format_csv, self.ffi.cast("char *", rows.ctypes.data), len(rows),
                      self.ffi.cast("char *", buf.ctypes.data), len(buf), self.threads, sep.encode())
        if n < 0:
            raise RuntimeError("CSV buffer too small")
        return buf[:n].tobytes()

    def decode(self, rows: np.ndarray) -> np.ndarray:
        """Categorical columns as strings (the structured array holds their codes)."""
        return self.header.decode(rows)

    def write(self, path: Path, fmt: str, *, strict=False, progress=None, sep=",",
              batch_rows=DEFAULT_BATCH_ROWS) -> int:
        """Write CSV, .npy, JSON Lines or Parquet (`solverspace.core.formats`) a batch at a time
        (bounded memory), CSV formatted in C; the file appears under its name only when complete."""
        from solverspace.core.formats import write_batches
        header = self.header
        if fmt == "npy":   # the header states the row count: counted once the temporary file exists
            def header():
                return self.header.with_rows(self.count_units(strict).total)
        return write_batches(path, fmt, header, self.batches(strict, progress, batch_rows), sep=sep,
                             format_csv=self.format_csv)


class CBackend:
    """The compiled C/OpenMP enumerator behind the backend protocols (`solverspace.core.protocols`).
    Its methods take plans without orders: the registry wraps it in `order_slots.OrderSlots`, which
    gives it the slot plan of a space with orders and joins what it answers (`translators/c/orders.py`)."""

    name = "c"
    order_slots = SlotJoins("C", rows=c_orders.rows, array=c_orders.array, write=c_orders.write,
                            positions=c_orders.OrderPositions, sampler=c_orders.OrderPositions)

    def __init__(self, threads: int | None = None, options: Options = Options(), quick: bool = False):
        self.threads = check_threads(threads)
        self.options = options
        self.quick = quick   # run the quick (-O0) build of each module (`auto` on small spaces, cold)

    @classmethod
    def configured(cls, *, threads: int | None = None, optimizations=None, literal: bool = False,
                   disable=(), quick: bool = False) -> "CBackend":
        """From the registry's options: `optimizations` (an `Options`), or `literal` (all off) /
        `disable` (names of optimizations to switch off); `quick`: the quick (-O0) builds."""
        if optimizations is None:
            optimizations = Options.parse(literal=literal, disable=tuple(disable))
        return cls(threads=threads, options=optimizations, quick=quick)

    def enumerator(self, plan, with_derived=()) -> CEnumerator:
        return CEnumerator.get(plan, self.options, tuple(with_derived), self.threads, self.quick)

    def count(self, plan, *, strict=False, progress=None) -> Stats:
        return self.enumerator(plan).stats(strict, progress)

    def is_built(self, plan, with_derived=()) -> bool:
        """Whether this plan's module is in the cache, so that running it compiles and generates
        nothing (the `auto` backend asks before choosing)."""
        if (id(plan), self.options, tuple(with_derived), self.threads, self.quick) in CEnumerator._cache:
            return True
        key = generation_key(plan, self.options, tuple(with_derived), False, False)
        generated = load_generated(key) if key else None
        return generated is not None and is_built_shaped(generated.source, CDEF, self.quick)

    def recall_units(self, plan) -> bool:
        """Give this plan's enumerator, when its module is built already (so nothing compiles), the
        counted work units a previous process remembered (`units_cache`): its exact count,
        positions and index then need no count. True when they were given."""
        built = self._built(plan)
        return built is not None and units_cache.recall(*built)

    def remember_units(self, plan) -> None:
        """Remember the counted work units of this plan's enumerator (`units_cache`) for the next
        process; nothing when its module is not built or it was not counted."""
        built = self._built(plan)
        if built is not None:
            units_cache.remember(*built)

    def _built(self, plan):
        """(the plan's enumerator, its generation key) when its module is built, else None."""
        if not self.is_built(plan):
            return None
        key = generation_key(plan, self.options, (), False, False)
        return (self.enumerator(plan), key) if key else None

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        enumerator = self.enumerator(plan, with_derived)
        for batch in enumerator.batches(strict, progress):
            decoded = enumerator.decode(batch)
            for row in decoded.tolist():
                yield tuple(row)

    def array(self, plan, *, strict=False, with_derived=(), progress=None) -> np.ndarray:
        enumerator = self.enumerator(plan, with_derived)
        return enumerator.decode(enumerator.array(strict, progress))

    def write(self, plan, path, fmt="csv", *, strict=False, with_derived=(), progress=None, sep=",") -> int:
        return self.enumerator(plan, with_derived).write(path, fmt, strict=strict, progress=progress, sep=sep)

    def positions(self, plan) -> "EnumeratorPositions | GroupPositions":
        """The canonical order's positions; a space of consecutive independent groups finds them
        group by group where a work unit is too large to list (`translators.c.groups`)."""
        whole = EnumeratorPositions(self.enumerator(plan))
        groups = consecutive_groups(plan)
        if groups is None:
            return whole
        return GroupPositions(whole, groups, lambda names: EnumeratorPositions(self.enumerator(group_plan(plan, names))))

    def sampler(self, plan, method="exact", *, seed=0, progress=None) -> "EnumeratorPositions":
        return self.positions(plan)   # samples are drawn positions

    def funnel(self, plan, *, progress=None):
        """Where the constraints prune: a build of the literal plan with counters compiled in."""
        return CEnumerator(plan, threads=self.threads, funnel=True).funnel(progress=progress)

    def emit(self, plan, with_derived=()) -> str:
        """The generated C source, with this backend's optimizations."""
        return CGenerator(plan, self.options, tuple(with_derived)).generate().source


class EnumeratorPositions(Positions):
    """Positions of the canonical order through the compiled enumerator's per-unit counts:
    the `exact` sampling method and `space[i]`."""

    name = "exact"
    guarantee = "exactly uniform over the valid configurations (positions drawn uniformly)"

    def __init__(self, enumerator: CEnumerator):
        self.enumerator = enumerator

    def size(self) -> int:
        return int(self.enumerator.offsets()[-1])

    def rows_at(self, positions) -> np.ndarray:
        return self.enumerator.decode(self.enumerator.rows_at(positions))

    def index(self, values: dict) -> int | None:
        return self.enumerator.index_of(values)

    def descends(self) -> bool:
        """Whether some work unit is too large to list, so that a position in it is found by
        descending it with subtree counts (`translators.c.rank`)."""
        return max(self.enumerator.count_units().unit_counts, default=0) > MAX_FILL_ROWS
