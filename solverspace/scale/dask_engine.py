"""Counting, enumerating and sampling on a Dask cluster (`--engine dask`).

The driver (this process) loads the space, compiles it once and lists the prefixes of the outer
loops at a depth with many more prefixes than workers (`translators.c.partition`). Dask tasks
count contiguous blocks of prefixes; the exact per-prefix counts make contiguous partitions of
about equal rows; each partition is one task that lists its rows with its prefixes fixed. Tasks
carry plain values (`Job`: the space's path, the settings given, the options, and the run's
identity), and each worker process loads the space and the compiled module once (from the
shared compile cache, `$SOLVERSPACE_CACHE`) and reuses them for every task it runs.

- count: the sum of the blocks' counts (and undefined tallies): the single-process count.
- enumerate: one shard per partition, `part-NNNNN.parquet` (or `.npy`), written by the worker
  (atomically) into the output directory, which must therefore be reachable from every worker
  (the same machine, or a shared file system), plus `_manifest.json` (`solverspace.core.manifest`).
  Shards in name order are the single-process output row for row. A rerun skips the shards the
  manifest records as complete whose size and SHA-256 still match.
- sample: the positions are drawn in this process exactly as the single-process `exact` method
  draws them (one seeded generator over [0, count), `solverspace.core.draws`), then routed to the
  partitions that hold them, whose tasks fill only the units holding a position. So the sample
  is the single-process sample, row for row, for any number of workers or partitions.

Dask (`dask.distributed`) is imported only here and in `dask_tasks`, only when the engine runs.
"""
from __future__ import annotations

import hashlib
import logging
import os
import signal
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from solverspace.core import manifest as shards
from solverspace.scale.dask_tasks import (
    EngineError, Job, c_backend, count_task, identity, load_space, outcome, rows_task, write_task)
from solverspace.core.errors import SolverspaceError, UndefinedOperationError
from solverspace.core.results import Stats
from solverspace.core.draws import draw_positions
from solverspace.core.formats import require_pyarrow
from solverspace.io.loader import resolve_space_path
from solverspace.scale.sampling import SampleInfo
from solverspace.translators.c.backend import SpaceTooLargeError, EnumeratorPositions
from solverspace.translators.c.partition import prefix_table, balanced_partitions, prefix_digest

DASK_HINT = 'install the dask extra: from a solverspace checkout, pip install ".[dask]"'
ADDRESS_HINT = "give the address the scheduler prints when it starts (tcp://HOST:8786 by default)"
CONNECT_TIMEOUT = 5              # seconds to open a connection to --scheduler (a refusal fails at once)
HANDSHAKE_TIMEOUT = 10           # seconds for a tcp:// scheduler's first bytes, and for Dask's client to connect
TCP_SCHEMES = ("tcp", "tls", "ws", "wss")   # addresses with a host and port, probed before connecting
ROWS_PER_PARTITION = 1 << 22     # default partitions: at least total / this (and 4 per worker)
PARTITIONS_PER_WORKER = 4
UNITS_PER_PARTITION = 64         # prefixes listed: at least this many per partition (balance)
COUNT_BLOCKS_PER_WORKER = 16     # counting tasks: blocks of prefixes, many per worker (uneven subtrees)
MIN_UNITS = 4096
RETRIES = 2                      # a task that raised (not a refusal) is run again this often


class DaskUnavailableError(SolverspaceError, RuntimeError):
    """`--engine dask` without Dask's distributed scheduler installed."""


def require_dask():
    """The `distributed` module, or a clear error naming the extra to install."""
    try:
        import distributed
    except ImportError:
        raise DaskUnavailableError("--engine dask needs Dask's distributed scheduler (dask.distributed), which is "
                                   "not installed", hint=DASK_HINT) from None
    return distributed


def check_scheduler(address: str) -> None:
    """Fail fast where `--scheduler` cannot be reached: an address Dask cannot read, a port outside
    1-65535, nothing listening there (Dask's own client retries a refused connection until its
    timeout), no connection within CONNECT_TIMEOUT, or (tcp://) a listener that sends no Dask
    handshake (Dask's client would wait for one forever). Only host:port addresses are probed
    (a TCP connection opened and closed: the scheduler logs it at INFO level)."""
    from distributed.comm.addressing import parse_address, parse_host_port
    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location) if scheme in TCP_SCHEMES else (None, None)
    except ValueError as exc:
        raise EngineError(f"--scheduler {address!r} is not a Dask scheduler address ({exc})",
                          hint=ADDRESS_HINT) from None
    if scheme not in TCP_SCHEMES:
        return
    if not 1 <= port <= 65535:
        raise EngineError(f"--scheduler {address!r}: port {port} is not a TCP port (1 to 65535)", hint=ADDRESS_HINT)
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT) as conn:
            if scheme == "tcp":   # a Dask server speaks first; TLS and websockets wait for the client
                _await_greeting(conn, address, host, port)
    except OSError as exc:
        raise EngineError(f"cannot reach the Dask scheduler at {address!r}: {_unreachable(exc, host, port)}",
                          hint="start it (`dask scheduler`), or " + ADDRESS_HINT) from None


def _await_greeting(conn: socket.socket, address: str, host: str, port: int) -> None:
    """Refuse a listener that does not open a Dask handshake within HANDSHAKE_TIMEOUT."""
    conn.settimeout(HANDSHAKE_TIMEOUT)
    try:
        greeted = bool(conn.recv(1))
    except TimeoutError:
        raise EngineError(f"cannot reach the Dask scheduler at {address!r}: something listens on port {port} of "
                          f"{host} but sent no Dask handshake within {HANDSHAKE_TIMEOUT} s",
                          hint="is it a Dask scheduler? " + ADDRESS_HINT) from None
    if not greeted:
        raise EngineError(f"cannot reach the Dask scheduler at {address!r}: the listener on port {port} of {host} "
                          f"closed the connection without a Dask handshake",
                          hint="is it a Dask scheduler? " + ADDRESS_HINT)


def _unreachable(exc: OSError, host: str, port: int) -> str:
    """Why a connection to host:port failed, in words."""
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused (nothing listens on port {port} of {host})"
    if isinstance(exc, socket.gaierror):
        return f"the host name {host!r} is unknown ({exc.strerror})"
    if isinstance(exc, TimeoutError):
        return f"no answer within {CONNECT_TIMEOUT} s"
    return exc.strerror or str(exc)


# ---------------------------------------------------------------------------------------- driver side
_log = logging.getLogger(__name__)


class Progress:
    """One line per step of the run (at most one a second while tasks finish), an INFO record of
    this module's logger (the command line shows them on stderr, unless --quiet)."""

    def __init__(self, enabled: bool):
        self.enabled, self.last = enabled, 0.0

    def __call__(self, text: str, force: bool = True):
        now = time.monotonic()
        if self.enabled and (force or now - self.last >= 1.0):
            self.last = now
            _log.info(f"dask: {text}")


@dataclass
class Split:
    """The run's units: the prefix depth, the prefix table, and after counting the counts."""

    depth: int
    prefixes: object
    prefix_stats: Stats
    counts: list | None = None
    undefined: int = 0
    first_undefined: tuple | None = None


class DaskEngine:
    """A client on a cluster (a `LocalCluster` of `workers` processes, or the scheduler at
    `scheduler`), and the three answers computed on it. Use as a context manager."""

    def __init__(self, space, job: Job, *, scheduler: str | None = None, workers: int | None = None,
                 threads: int | None = None, partitions: int | None = None, strict: bool = False,
                 progress: bool = True):
        if space.model.source != str(resolve_space_path(job.space)):
            space = load_space(job)   # loaded from a relative path: as the workers load it (absolute)
        self.space, self.strict, self.partitions = space, strict, partitions
        self.job = replace(job, identity=identity(space, job))
        self.scheduler, self.workers, self.threads = scheduler, workers, threads
        self.say = Progress(progress)
        self.client = self.cluster = None

    # ------------------------------------------------------------------ cluster
    def __enter__(self):
        distributed = require_dask()
        if self.scheduler:
            check_scheduler(self.scheduler)
            try:
                self.client = distributed.Client(self.scheduler, timeout=f"{HANDSHAKE_TIMEOUT}s")
            except (OSError, ValueError) as exc:   # a listener that is no scheduler; ValueError: ucx:// etc.
                raise EngineError(f"cannot reach the Dask scheduler at {self.scheduler!r}: {exc}",
                                  hint="start it (`dask scheduler`), or " + ADDRESS_HINT) from None
            self.task_threads = self.threads     # None: each worker's own thread count
        else:
            cores = os.cpu_count() or 1
            workers = self.workers or cores
            # Ctrl-C reaches every process of the terminal's group; the workers are this process's
            # to stop, so they start with SIGINT ignored (a disposition children inherit)
            with _sigint_ignored():
                self.cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                        dashboard_address=":0",  # any free port: never 8787 in use
                                                        silence_logs=logging.CRITICAL)  # shutdown noise; see README
            self.client = distributed.Client(self.cluster)
            self.task_threads = self.threads or max(1, cores // workers)
        self.n_workers = workers if self.cluster is not None else max(1, len(self.client.scheduler_info()["workers"]))
        link = getattr(self.client, "dashboard_link", None) if (self.scheduler or _has_dashboard()) else None
        where = self.scheduler or f"a local cluster of {self.n_workers} worker process{'es' if self.n_workers > 1 else ''}"
        self.say(f"{where}" + (f", dashboard {link}" if link else ""))
        return self

    def __exit__(self, *exc):
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def describe(self) -> str:
        return f"c backend on dask, {self.n_workers} worker{'s' if self.n_workers != 1 else ''}"

    # ------------------------------------------------------------------ units and counts
    def _driver_enumerator(self):
        return c_backend(self.job, self.threads).enumerator(self.space.plan, self.job.with_derived)

    def split(self, depth: int | None = None) -> Split:
        """The prefix table: at `depth`, or at the shallowest depth with enough prefixes for
        balanced partitions on this many workers."""
        parts = self.partitions or PARTITIONS_PER_WORKER * self.n_workers
        minimum = max(MIN_UNITS, UNITS_PER_PARTITION * parts)
        found, prefixes, stats = prefix_table(self._driver_enumerator(), minimum, depth)
        if self.strict and stats.first_undefined is not None:
            raise UndefinedOperationError(f"undefined operation (division or modulo by zero) in "
                                          f"{stats.first_undefined[0]!r}", hint="run without --strict")
        return Split(found, prefixes, stats)

    def count_units(self, split: Split) -> Split:
        """Each unit's exact count, computed by tasks over contiguous blocks of prefixes."""
        n = len(split.prefixes)
        blocks = max(1, min(n, COUNT_BLOCKS_PER_WORKER * self.n_workers))
        bounds = [n * b // blocks for b in range(blocks + 1)]
        futures = [self.client.submit(count_task, self.job, self.task_threads, split.depth,
                                      split.prefixes[a:b], self.strict, pure=False, retries=RETRIES)
                   for a, b in zip(bounds[:-1], bounds[1:])]
        results = self._gather(futures, lambda done: f"counted {done}/{blocks} blocks of prefixes")
        split.counts, split.undefined, split.first_undefined = [], split.prefix_stats.undefined, None
        for counts, undefined, first in results:
            split.counts += counts
            split.undefined += undefined
            split.first_undefined = split.first_undefined or first
        split.first_undefined = split.prefix_stats.first_undefined or split.first_undefined
        return split

    def _gather(self, futures, describe, on_result=None) -> list:
        """Results in submission order, with progress as tasks finish. A refusal is raised once
        every task has finished, the first in task order (so a `--strict` error names the same
        configuration as one process); any other failure cancels the pending tasks at once."""
        from distributed import KilledWorker, as_completed
        results = [None] * len(futures)
        refusals = {}
        position = {f.key: i for i, f in enumerate(futures)}
        done = 0
        try:
            for future in as_completed(futures):
                i = position[future.key]
                try:
                    value = future.result()
                except KilledWorker as exc:
                    raise EngineError(f"a task killed every worker that ran it ({exc})",
                                      hint="a worker may run out of memory: give workers more memory, or use "
                                           "more --partitions") from None
                done += 1
                if "error" in value:
                    refusals[i] = value
                    continue
                results[i] = value["ok"]
                if on_result is not None:
                    on_result(i, results[i])
                self.say(describe(done), force=done == len(futures))
        except BaseException:
            self.client.cancel(futures)
            raise
        if refusals:
            outcome(refusals[min(refusals)])
        return results

    def stats(self) -> Stats:
        split = self.count_units(self.split())
        return Stats(count=sum(split.counts), undefined=split.undefined, first_undefined=split.first_undefined)

    def _partitions(self, split: Split) -> list[tuple[int, int]]:
        total = sum(split.counts)
        parts = self.partitions or max(PARTITIONS_PER_WORKER * self.n_workers, -(-total // ROWS_PER_PARTITION))
        return balanced_partitions(split.counts, parts)

    # ------------------------------------------------------------------ enumerate
    def enumerate(self, directory, fmt: str = "parquet") -> dict:
        """Write one shard per partition into `directory` (resuming a previous run of the same
        command); returns the manifest."""
        if fmt not in ("parquet", "npy"):
            raise EngineError(f"--engine dask writes .parquet or .npy shards, not {fmt!r}", hint="--format parquet or npy")
        if fmt == "parquet":
            require_pyarrow()
        directory = _output_directory(directory)
        run = hashlib.sha256(f"{self.job.identity}\0{fmt}".encode()).hexdigest()
        manifest = shards.read(directory)
        described = {"space": self.job.space, "settings": self.space.settings, "format": fmt,
                     "derived": list(self.job.with_derived), "literal": self.job.literal,
                     "disable": list(self.job.disable)}
        if manifest is not None:
            shards.check_same_run(manifest, run, directory, described)
            shards.check_layout(manifest, directory, fmt)
            split = self._resumed_split(manifest, directory)
        else:
            split = self.split()
        self.count_units(split)
        total = sum(split.counts)
        if total >= 2 ** 63:
            raise SpaceTooLargeError(f"the space has {total} configurations, too many to list (2**63 or more)")
        if manifest is None:
            ranges = self._partitions(split)
            manifest = {"format": shards.FORMAT, "version": shards.VERSION, "identity": run,
                        "run": described,
                        "columns": list(self.space.columns(self.job.with_derived)), "total": total,
                        "depth": split.depth, "units": len(split.prefixes),
                        "prefix_digest": prefix_digest(split.prefixes), "complete": False,
                        "partitions": [{"index": i, "file": shards.shard_name(i, len(ranges), fmt), "units": [a, b],
                                        "rows": sum(split.counts[a:b]), "bytes": None, "sha256": None}
                                       for i, (a, b) in enumerate(ranges)]}
        shards.check_counts(manifest, directory, split.counts)
        entries = manifest["partitions"]
        todo = [e for e in entries if not shards.complete_shard(directory, e)]
        for e in todo:
            e["bytes"] = e["sha256"] = None
        manifest["complete"] = False
        shards.write(directory, manifest)
        skipped = len(entries) - len(todo)
        if skipped:
            self.say(f"{skipped} of {len(entries)} shards already complete (size and SHA-256 checked), skipped")
        self.written_rows = sum(e["rows"] for e in entries if e["sha256"])
        futures = [self.client.submit(write_task, self.job, self.task_threads, split.depth,
                                      split.prefixes[e["units"][0]:e["units"][1]],
                                      split.counts[e["units"][0]:e["units"][1]], str(directory / e["file"]), fmt,
                                      self.strict, pure=False, retries=RETRIES) for e in todo]

        def record(i, result):
            rows, size, digest = result
            entry = todo[i]
            if rows != entry["rows"]:
                raise SolverspaceError(f"shard {entry['file']} has {rows} rows, expected {entry['rows']}")
            entry["bytes"], entry["sha256"] = size, digest
            self.written_rows += rows
            shards.write(directory, manifest)

        self._gather(futures, lambda done: f"{done + skipped}/{len(entries)} partitions done, "
                                           f"{self.written_rows:,} of {total:,} configurations written", record)
        manifest["complete"] = True
        shards.write(directory, manifest)
        _remove_partials(directory, entries)
        self.shards_written = len(todo)
        return manifest

    def _resumed_split(self, manifest: dict, directory: Path) -> Split:
        """The prefix table at the manifest's depth, which must be this run's (same digest)."""
        deepest = self._driver_enumerator().generated.max_prefix_depth
        if manifest["depth"] > deepest:
            shards.refuse(directory, f"its prefix depth {manifest['depth']} is deeper than this space's loops "
                                     f"allow ({deepest})")
        split = self.split(manifest["depth"])
        if prefix_digest(split.prefixes) != manifest.get("prefix_digest"):
            shards.refuse(directory, "its prefix table differs from this run's")
        return split

    # ------------------------------------------------------------------ sample
    def draw(self, n: int, seed: int, replace: bool = False):
        """(rows, SampleInfo): the single-process `exact` sample, its rows filled by tasks."""
        import numpy as np

        split = self.count_units(self.split())
        total = sum(split.counts)
        positions = draw_positions(total, n, seed, replace)
        enumerator = self._driver_enumerator()
        offsets = np.zeros(len(split.counts) + 1, dtype=np.int64 if total < 2 ** 63 else object)
        np.cumsum(np.array(split.counts, dtype=offsets.dtype), out=offsets[1:])
        ranges = self._partitions(split)
        starts = np.array([a for a, _ in ranges], dtype=np.int64)
        unit = np.searchsorted(offsets, positions, side="right") - 1
        part = np.searchsorted(starts, unit, side="right") - 1
        futures, picks = [], []
        for p in np.unique(part).tolist():
            a, b = ranges[p]
            chosen = np.flatnonzero(part == p)
            picks.append(chosen)
            local = positions[chosen] - offsets[a]
            futures.append(self.client.submit(rows_task, self.job, self.task_threads, split.depth,
                                              split.prefixes[a:b], split.counts[a:b], local, total >= 2 ** 63,
                                              pure=False, retries=RETRIES))
        results = self._gather(futures, lambda done: f"filled {done}/{len(futures)} partitions holding draws")
        rows = np.empty(len(positions), dtype=enumerator.generated.dtype)
        for chosen, filled in zip(picks, results):
            rows[chosen] = filled
        return (enumerator.decode(rows),
                SampleInfo("exact", seed, n, replace, total, EnumeratorPositions.guarantee))


@contextmanager
def _sigint_ignored():
    """SIGINT ignored while the block runs (in the main thread only: elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _has_dashboard() -> bool:
    import importlib.util
    return importlib.util.find_spec("bokeh") is not None


def _output_directory(directory) -> Path:
    """The output directory, created if needed; an existing one must be empty or hold a manifest."""
    from solverspace.core.errors import OutputError
    directory = Path(directory).absolute()   # the workers write there: not relative to their directory
    if directory.exists() and not directory.is_dir():
        raise OutputError(f"-o {str(directory)!r} is a file; --engine dask writes a directory of shards",
                          hint="name a new or empty directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the directory {str(directory)!r}: {exc.strerror}") from None
    if not (directory / shards.NAME).exists() and any(not p.name.startswith(".") for p in directory.iterdir()):
        raise OutputError(f"-o {str(directory)!r} is not empty and holds no {shards.NAME}",
                          hint="name a new or empty directory (shards are written next to a manifest only)")
    return directory


def _remove_partials(directory: Path, entries) -> None:
    """Temporary files a killed worker left behind (`.part-00003.parquet.PID.N.partial`)."""
    names = {e["file"] for e in entries} | {e["file"] + ".categories.json" for e in entries}
    for path in directory.glob(".part-*.partial"):
        if path.name[1:].split(".partial")[0].rsplit(".", 2)[0] in names:
            path.unlink(missing_ok=True)


@dataclass(frozen=True)
class DaskOptions:
    """What `--engine dask` is asked to run (the command line builds it from its options):
    `space` as given (a file path is made absolute for the workers) with its `settings`, the
    backend and sampling method asked for (only the compiled enumerator and `exact` run on
    Dask), C's optimization switches, and Dask's own options."""

    space: str
    settings: dict
    max_closure_values: int | None = None
    backend: str = "auto"
    method: str = "exact"
    literal: bool = False
    disable: tuple[str, ...] = ()
    scheduler: str | None = None
    workers: int | None = None
    threads: int | None = None
    partitions: int | None = None
    strict: bool = False
    progress: bool = True


def engine_for(options: DaskOptions, space, with_derived=()) -> DaskEngine:
    """The engine for `options`: the C backend with its options, the space as given, Dask's options."""
    require_dask()
    if options.backend not in ("auto", "c"):
        raise EngineError(f"--engine dask runs the compiled enumerator, not the {options.backend} backend",
                          hint="drop --backend (or use --backend c)")
    if options.method != "exact":
        raise EngineError(f"--engine dask samples with the exact method, not {options.method}",
                          hint="drop --method, or run it without --engine dask")
    # strict under auto is the literal plan's walk, as `Space.count(strict=True)`: C's literal plan
    literal = options.literal or (options.strict and options.backend == "auto")
    job = Job.make(options.space, options.settings, max_closure_values=options.max_closure_values,
                   with_derived=tuple(with_derived), literal=literal, disable=tuple(options.disable))
    return DaskEngine(space, job, scheduler=options.scheduler, workers=options.workers, threads=options.threads,
                      partitions=options.partitions, strict=options.strict, progress=options.progress)
