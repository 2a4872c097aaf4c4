"""The registry of backends behind one small protocol.

A backend counts and lists the valid configurations of a plan. The CLI and the API pick one by
name from `BACKENDS`; the C and CP-SAT translators register here when they are installed.
"""
from __future__ import annotations

from typing import Callable, Iterator, Protocol

from .errors import BackendUnavailableError
from .options import check_threads
from .plan import Plan
from .reference import ReferenceEnumerator, Stats


class Backend(Protocol):
    name: str

    def count(self, plan: Plan, *, strict: bool = False, progress: Callable | None = None) -> Stats: ...

    def rows(self, plan: Plan, *, strict: bool = False, with_derived: tuple[str, ...] = (),
             progress: Callable | None = None) -> Iterator[tuple]: ...


class ReferenceBackend:
    """Pure Python over the literal plan: exact, slow, the ground truth."""

    name = "reference"

    def count(self, plan, *, strict=False, progress=None) -> Stats:
        enumerator = ReferenceEnumerator(plan, strict=strict, progress=progress)
        enumerator.count()
        return enumerator.stats

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        return ReferenceEnumerator(plan, strict=strict, progress=progress).rows(with_derived)


def _reference(**options) -> Backend:
    return ReferenceBackend()


def _c(*, threads: int | None = None, optimizations=None, **options) -> Backend:
    from solverspace.translators.c_backend import CBackend
    from solverspace.translators.c_optimize import Options
    return CBackend(threads=threads, options=optimizations or Options())


def _cpsat(*, time_limit: float | None = None, workers: int | None = None, **options) -> Backend:
    try:
        from solverspace.translators.cpsat import CpSatBackend
    except ImportError as exc:
        raise BackendUnavailableError(f"the CP-SAT backend needs OR-Tools ({exc})",
                                      hint="pip install 'ortools>=9.10'") from None
    return CpSatBackend(time_limit=time_limit, workers=check_threads(workers, "workers"))


# name -> factory taking backend options (threads, optimizations, ...); imports stay lazy so
# that `import solverspace` needs neither a compiler nor a solver
BACKENDS: dict[str, Callable[..., Backend]] = {"reference": _reference, "c": _c, "cpsat": _cpsat}
PLANNED: dict[str, str] = {}


def get_backend(name: "str | Backend", **options) -> Backend:
    """A backend by name (configured with `options`), or the backend object itself."""
    if not isinstance(name, str):
        return name
    factory = BACKENDS.get(name)
    if factory is not None:
        return factory(**options)
    if name in PLANNED:
        raise BackendUnavailableError(
            f"backend {name!r} ({PLANNED[name]}) is not available in this version of solverspace",
            hint=f"available backends: {', '.join(BACKENDS)}")
    raise BackendUnavailableError(f"unknown backend {name!r}", hint=f"available backends: {', '.join(BACKENDS)}")
