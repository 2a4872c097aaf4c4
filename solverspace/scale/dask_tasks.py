"""What runs on a Dask worker for `--engine dask` (`solverspace.scale.dask_engine` is the driver).

A task carries plain values: a `Job` (the space's path, the settings given, the options, and the
run's identity) and a block of prefixes. Each worker process loads the space and the compiled
enumerator once (`worker_enumerator`: the module from the shared compile cache) and refuses to
work on a space whose identity differs from the driver's. Tasks return `{"ok": value}`, or a
refusal (`SolverspaceError`) as `{"error": ...}` so that Dask does not retry it.
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

from solverspace.core import manifest as shards
from solverspace.core.errors import SolverspaceError
from solverspace.io.loader import resolve_space_path, BUILTIN_SPACES
from solverspace.registry.backends import get_backend
from solverspace.space import Space
from solverspace.translators.c.partition import count_block, restricted
from solverspace.translators.c.plan_cache import generation_key, generator_version
from solverspace.core.sources import read_bytes, space_kind


class EngineError(SolverspaceError, ValueError):
    """A request the Dask engine cannot serve (another backend, method or output, another space)."""


@dataclass(frozen=True)
class Job:
    """What a worker needs to load the same space and compiled enumerator: plain values."""

    space: str                    # an absolute space-file path, or a built-in name
    settings: tuple = ()          # (name, value) overrides as given
    max_closure_values: int = 100_000
    with_derived: tuple = ()
    literal: bool = False
    disable: tuple = ()
    identity: str = ""            # `identity()` of the space loaded by the driver

    @classmethod
    def make(cls, space, settings=None, **options) -> "Job":
        name = str(space)
        if name not in BUILTIN_SPACES:
            name = str(Path(name).resolve())
        return cls(name, tuple(sorted((settings or {}).items())), **options)


def load_space(job: Job):
    return Space.load(job.space, dict(job.settings), max_closure_values=job.max_closure_values)


def c_backend(job: Job, threads: int | None):
    return get_backend("c", "write", threads=threads, literal=job.literal or None, disable=job.disable or None)


def identity(space, job: Job) -> str:
    """A hash of what decides the rows: the space file's bytes, every setting's value, the plan's
    loop order, the options, the derived columns, and the tool's code (`generator_version`), plus
    the model written out in full where it can be (no closure iterator)."""
    backend = c_backend(job, None)
    written = json.dumps({
        "generator": generator_version(),
        "source": hashlib.sha256(read_bytes(path := resolve_space_path(job.space), space_kind(path))).hexdigest(),
        "settings": sorted((k, repr(v)) for k, v in space.settings.items()),
        "order": list(space.plan.order), "max_closure_values": job.max_closure_values,
        "derived": list(job.with_derived), "literal": job.literal, "disable": sorted(job.disable),
        "model": generation_key(space.plan, backend.options, job.with_derived, False, False),
    }, sort_keys=True)
    return hashlib.sha256(written.encode()).hexdigest()


_LOADED: dict = {}
_LOADING = threading.Lock()


def worker_enumerator(job: Job, threads: int | None):
    """The compiled enumerator for `job`, loaded once per worker process (the module comes from
    the compile cache; a worker that sees another space or version is refused, never used)."""
    if threads is None:
        from distributed import get_worker
        threads = get_worker().state.nthreads
    key = (job, threads)
    with _LOADING:
        if key not in _LOADED:
            space = load_space(job)
            if identity(space, job) != job.identity:
                raise EngineError(f"a worker loaded {job.space!r} with other contents, settings or solverspace "
                                  f"version than the driver", hint="give every worker the same space file and "
                                  "the same solverspace installation")
            _LOADED[key] = c_backend(job, threads).enumerator(space.plan, job.with_derived)
        return _LOADED[key]


def _refusals(task):
    """A refusal (SolverspaceError: strict undefined, a full disk) comes back as a value, so Dask
    does not retry it; other failures are raised and retried."""
    def run(*args):
        try:
            return {"ok": task(*args)}
        except SolverspaceError as exc:
            return {"error": type(exc).__name__, "message": exc.message, "hint": exc.hint}
    run.__name__ = task.__name__
    return run


@_refusals
def count_task(job, threads, depth, prefixes, strict):
    return count_block(worker_enumerator(job, threads), depth, prefixes, strict)


@_refusals
def write_task(job, threads, depth, prefixes, counts, path, fmt, strict):
    enumerator = restricted(worker_enumerator(job, threads), depth, prefixes, counts)
    rows = enumerator.write(Path(path), fmt, strict=strict)
    size, digest = shards.file_digest(Path(path))
    return rows, size, digest


@_refusals
def rows_task(job, threads, depth, prefixes, counts, positions, wide):
    return restricted(worker_enumerator(job, threads), depth, prefixes, counts, wide).rows_at(positions)


def outcome(value):
    if "error" in value:
        raise SolverspaceError(value["message"], hint=value["hint"])
    return value["ok"]
