"""How each registered backend is made from its options (`solverspace.registry.backends` names these
factories in its table, as `"module:attr"` strings; `solverspace.registry.auto` makes its C and
CP-SAT backends with them).

Imports stay lazy: making a reference backend imports no compiler or solver. Every backend made
here whose class declares `order_slots` (C, CP-SAT) comes wrapped in `translators.order_slots.OrderSlots`,
which answers spaces with order-valued parameters through their slot model.
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


#: The engines of `best`, one factory each (the registry's rows name them).
bnb, exhaustive = search_backend("bnb"), search_backend("exhaustive")
bnb_reference, exhaustive_reference = search_backend("bnb-reference"), search_backend("exhaustive-reference")


def c_backend(*, threads: int | None = None, optimizations=None, literal: bool = False, disable=(), quick: bool = False):
    """`optimizations`: a `c.optimize.Options`; or `literal` (all off) / `disable` (names);
    `quick`: the quick (-O0) builds (`auto` on small spaces; not a registry option)."""
    from solverspace.translators.c.backend import CBackend
    return slots_applied(CBackend.configured(threads=threads, optimizations=optimizations, literal=literal,
                                             disable=disable, quick=quick))


def cpsat_backend(*, time_limit: float | None = None, workers: int | None = None, seed: int | None = None,
                  sinks: bool | None = None):
    """`sinks=False`: every parameter through CP-SAT (validation: no constraint counted by the
    reference's evaluator)."""
    try:
        from solverspace.translators.cpsat.backend import CpSatBackend
    except ImportError as exc:
        raise BackendUnavailableError(f"the CP-SAT backend needs OR-Tools ({exc})",
                                      hint="pip install 'ortools>=9.10'") from None
    return slots_applied(CpSatBackend(time_limit=time_limit, workers=check_threads(workers, "workers"), seed=seed,
                                      sinks=True if sinks is None else sinks))


def slots_applied(backend):
    """The backend, wrapped in `OrderSlots` when it declares that it answers orders through slots."""
    from solverspace.translators.order_slots import with_order_slots
    return with_order_slots(backend)
