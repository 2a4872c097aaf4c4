"""Compile C enumerators in worker processes while the main process does other work.

Validating many small spaces is bound by the C compiler (about 0.4 s a module, two modules a
space: optimized and literal), not by running anything. `Builder` generates the C source of a
plan in the calling process (cheap, and where a refusal is raised), then hands the compilation to
a pool of worker processes that write the module into the shared cache (`translators.c.build`,
keyed by the source's hash). When the enumerator is later made in the main process, `build`
finds the module in the cache and only imports it. Identical sources (the literal plan often
prints the same C as the optimized one) are compiled once.

Workers are started with "spawn" (the main process may already run OpenMP threads, which do not
survive a fork) and reused for every space.
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from solverspace.translators.c.build import build, module_path, cache_dir
from solverspace.translators.c.codegen import CDEF, CGenerator
from solverspace.translators.c.optimize import Options


def _compile(source: str, cdef: str, cache: str) -> str:
    import os
    os.environ["SOLVERSPACE_CACHE"] = cache  # the caller's cache, whatever this process inherited
    build(source, cdef)
    return str(module_path(source, cdef))


class Builder:
    """A pool of compiler processes. `submit(plan, literal)` returns a Future that is done when
    the module for that plan and mode is in the cache (its result: the module path, or the
    exception the translator or the compiler raised)."""

    def __init__(self, workers: int = 2):
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        self.pending: dict[str, Future] = {}

    def submit(self, plan, literal: bool) -> Future:
        try:
            source = CGenerator(plan, Options.literal() if literal else Options()).generate().source
        except Exception as exc:  # a refusal: the main process will raise it again, where it is reported
            future: Future = Future()
            future.set_exception(exc)
            return future
        key = str(module_path(source, CDEF))
        if key in self.pending:
            return self.pending[key]
        future = self.pool.submit(_compile, source, CDEF, str(cache_dir()))
        self.pending[key] = future
        if len(self.pending) > 1024:  # forget finished builds: their modules are in the cache
            self.pending = {k: f for k, f in self.pending.items() if not f.done()}
        return future

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "Builder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
