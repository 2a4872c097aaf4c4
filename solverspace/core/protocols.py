"""The backend interface: one `typing.Protocol` per capability of the registry
(`solverspace.registry.backends.CAPABILITIES`; `backends.PROTOCOLS` maps each capability to its protocol).

A registered backend that declares a capability has the protocol's methods with the protocol's
parameters: the same names, in the same places (positional or keyword-only), with the same
defaults; it may accept more, each with a default (`tests/test_backend_protocols.py` checks every
registered backend). A parameter without a default here may have one in a backend (a backend's own
sampling method, say): callers always pass it.

Plans, results and samplers are typed `Any` here: this is the lowest layer, below the plan
(`solverspace.analysis.plan`) and the results the backends return.
"""
from __future__ import annotations

from typing import Any, Iterator, Protocol, runtime_checkable


@runtime_checkable
class Counts(Protocol):
    """`count`: the number of valid configurations and the undefined tally (`Stats`)."""

    def count(self, plan: Any, *, strict: bool = False, progress: Any = None) -> Any: ...


@runtime_checkable
class Lists(Protocol):
    """`list`: the valid configurations in the canonical order, as tuples or as a structured array."""

    def rows(self, plan: Any, *, strict: bool = False, with_derived: tuple = (), progress: Any = None
             ) -> Iterator[tuple]: ...

    def array(self, plan: Any, *, strict: bool = False, with_derived: tuple = (), progress: Any = None) -> Any: ...


@runtime_checkable
class Writes(Protocol):
    """`write`: the valid configurations into a file of format `fmt`; returns the rows written."""

    def write(self, plan: Any, path: Any, fmt: str = "csv", *, strict: bool = False, with_derived: tuple = (),
              progress: Any = None, sep: str = ",") -> int: ...


@runtime_checkable
class FindsPositions(Protocol):
    """`positions`: a `core.draws.Positions` (size, rows_at(positions), index(values))."""

    def positions(self, plan: Any) -> Any: ...


@runtime_checkable
class Samples(Protocol):
    """`sample`: a sampler (size, draw(n, seed, replace)) for one of the backend's sampling methods."""

    def sampler(self, plan: Any, method: str, *, seed: int = 0, progress: Any = None) -> Any: ...


@runtime_checkable
class Funnels(Protocol):
    """`funnel`: where the constraints prune (`analysis.funnel.Funnel`)."""

    def funnel(self, plan: Any, *, progress: Any = None) -> Any: ...


@runtime_checkable
class Checks(Protocol):
    """`check`: a partial assignment completed, or the rules that rule it out (a full assignment
    is checked by the reference, `Space.check`)."""

    def complete(self, plan: Any, assignment: dict) -> Any: ...


@runtime_checkable
class Searches(Protocol):
    """`best`: the `top` best distinct configurations by an objective
    (`analysis.objective.BestResult`; the objective's parsing and tie order are there)."""

    def best(self, plan: Any, objective: str, *, maximize: bool = True, top: int = 10, progress: Any = None
             ) -> Any: ...


@runtime_checkable
class Approximates(Protocol):
    """`approximate`: a count within a factor (1 + epsilon) with probability >= 1 - delta."""

    def approximate_count(self, plan: Any, epsilon: float = 0.8, delta: float = 0.2, *, seed: int = 0) -> Any: ...


@runtime_checkable
class Emits(Protocol):
    """`emit`: the generated program's text."""

    def emit(self, plan: Any, with_derived: tuple = ()) -> str: ...


__all__ = ["Approximates", "Checks", "Counts", "Emits", "FindsPositions", "Funnels", "Lists", "Samples", "Searches",
           "Writes"]
