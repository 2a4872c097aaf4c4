"""How each registered backend is made from its options (`solverspace.backends` names these
factories in its table; `solverspace.auto` makes its C and CP-SAT backends with them).

Imports stay lazy: making a reference backend imports no compiler or solver.
"""
from __future__ import annotations

from solverspace.core.errors import BackendUnavailableError
from solverspace.core.options import check_threads


def reference_backend():
    from solverspace.analysis.reference_backend import ReferenceBackend
    return ReferenceBackend()


def search_backend(engine: str):
    """The factory of one engine of `best`: compiled (`bnb`, `exhaustive`) or the Python walk
    (`bnb-reference`, `exhaustive-reference`)."""
    if engine.endswith("-reference"):
        def factory(*, time_limit: float | None = None):
            from solverspace.analysis.reference_backend import ReferenceSearch
            return ReferenceSearch(engine, time_limit)
    else:
        def factory(*, time_limit: float | None = None, threads: int | None = None):
            from solverspace.translators.c.search_backend import SearchBackend
            return SearchBackend(engine, time_limit, check_threads(threads))
    return factory


def c_backend(*, threads: int | None = None, optimizations=None, literal: bool = False, disable=()):
    """`optimizations`: a `c_optimize.Options`; or `literal` (all off) / `disable` (names)."""
    from solverspace.translators.c.backend import CBackend
    return CBackend.configured(threads=threads, optimizations=optimizations, literal=literal, disable=disable)


def cpsat_backend(*, time_limit: float | None = None, workers: int | None = None, seed: int | None = None,
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
