"""The one registry of backends: what each can do, and how to make one with its options.

The backends themselves live beside their engines (`analysis.reference_backend`,
`translators.c.backend`, `translators.c.search_backend`, `translators.cpsat.backend`), the `auto`
policy in `solverspace.registry.auto`, and the factories that make them from options in
`solverspace.registry.factories`; this module is the table and the lookup. A row names its factory
as a `"module:attr"` string, imported when the backend is first made (`BackendEntry.make`):
importing the registry imports no policy, compiler or solver.

Every answer goes CLI -> `Space` -> `get_backend(name, capability, **options)` -> backend, and
validation uses the same registry. Each entry declares its capabilities as data (so asking
"which backends can sample?" imports no compiler or solver) and the options its factory takes;
asking a backend for something it cannot do is an error that names the backends that can.

Capabilities and the methods a backend object has for them:

| capability  | method(s)                                                   |
|-------------|-------------------------------------------------------------|
| count       | `count(plan, *, strict, progress) -> Stats`                 |
| list        | `rows(plan, *, strict, with_derived, progress)`, `array(...)` |
| write       | `write(plan, path, fmt, *, strict, with_derived, progress, sep) -> int` |
| positions   | `positions(plan)`: size, rows_at(positions), index(values)  |
| sample      | `sampler(plan, method, *, seed, progress)`: size, draw(n, seed, replace) |
| funnel      | `funnel(plan, *, progress) -> Funnel`                       |
| check       | `complete(plan, assignment)` (partial; the reference also `check`s a full one) |
| best        | `best(plan, objective, *, maximize, top, progress)`         |
| approximate | `approximate_count(plan, epsilon, delta, *, seed)`          |
| emit        | `emit(plan, with_derived) -> str` (the generated program)   |

Each capability's methods are declared as a `typing.Protocol` in `solverspace.core.protocols`
(`PROTOCOLS` below maps the capability to it); `tests/test_backend_protocols.py` checks that every
registered backend's object has them, with the protocol's parameters.
"""
from __future__ import annotations

from typing import Callable

from solverspace.core import protocols
from solverspace.core.errors import BackendUnavailableError, OptionError
from solverspace.core.lazy import resolve
from solverspace.core.records import Record

CAPABILITIES = {
    "count": "count configurations",
    "list": "list configurations",
    "write": "write configurations to a file",
    "positions": "find the configuration at a position (space[i], index, get)",
    "sample": "draw samples",
    "funnel": "compute the pruning funnel",
    "check": "check configurations and complete partial ones",
    "best": "find the best configurations by an objective",
    "approximate": "estimate counts by hashing",
    "emit": "print a generated program",
}
PROTOCOLS: dict[str, type] = {   # the methods a backend with the capability has (solverspace.core.protocols)
    "count": protocols.Counts,
    "list": protocols.Lists,
    "write": protocols.Writes,
    "positions": protocols.FindsPositions,
    "sample": protocols.Samples,
    "funnel": protocols.Funnels,
    "check": protocols.Checks,
    "best": protocols.Searches,
    "approximate": protocols.Approximates,
    "emit": protocols.Emits,
}


class BackendEntry(Record):
    """A registered backend: what it does and how to make one (`factory`: the `"module:attr"` of the
    function that makes it from its options, imported by `make`). A record
    (`solverspace.core.records`): a frozen dataclass written out."""

    __match_args__ = ("name", "summary", "capabilities", "options", "factory", "sampling_methods", "threads_option")
    name: str
    summary: str
    capabilities: frozenset[str]
    options: tuple[str, ...]                  # keyword options its factory accepts
    factory: "str | Callable[..., object]"    # "module:attr" of the function that makes one
    sampling_methods: tuple[str, ...]         # `solverspace sample --method` values it provides
    threads_option: str | None                # the option that sets its parallelism

    def __init__(self, name: str, summary: str, capabilities: frozenset[str], options: tuple[str, ...],
                 factory: "str | Callable[..., object]", sampling_methods: tuple[str, ...] = (),
                 threads_option: str | None = None):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "summary", summary)
        object.__setattr__(self, "capabilities", capabilities)
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "factory", factory)
        object.__setattr__(self, "sampling_methods", sampling_methods)
        object.__setattr__(self, "threads_option", threads_option)

    def make(self, **options):
        """A backend made by the factory with `options` (its module imported now, if not yet). A
        row added at run time may give the factory itself instead of its name."""
        factory = resolve(self.factory) if isinstance(self.factory, str) else self.factory
        return factory(**options)


REGISTRY: dict[str, BackendEntry] = {entry.name: entry for entry in (
    BackendEntry("auto", "the compiled enumerator when built or needed, the reference for small spaces",
                 frozenset({"count", "list", "write"}),
                 ("threads", "optimizations", "literal", "disable", "budget", "limit", "build_behind", "build_work",
                  "quick_work", "exact_tally"),
                 "solverspace.registry.auto:auto_backend", (), "threads"),
    BackendEntry("c", "compiled C/OpenMP enumerator",
                 frozenset({"count", "list", "write", "positions", "sample", "funnel", "emit"}),
                 ("threads", "optimizations", "literal", "disable"), "solverspace.registry.factories:c_backend",
                 ("exact",), "threads"),
    BackendEntry("reference", "pure Python over the literal plan (the ground truth, small spaces)",
                 frozenset({"count", "list", "write", "positions", "sample", "funnel", "check"}),
                 (), "solverspace.registry.factories:reference_backend", ("reference",)),
    BackendEntry("bnb", "branch and bound over the loop nest, cut by sound bounds of the objective (compiled C)",
                 frozenset({"best"}), ("time_limit", "threads"), "solverspace.registry.factories:bnb", (), "threads"),
    BackendEntry("exhaustive", "every valid configuration evaluated (compiled C)",
                 frozenset({"best"}), ("time_limit", "threads"), "solverspace.registry.factories:exhaustive", (), "threads"),
    BackendEntry("bnb-reference", "branch and bound over the reference's walk (Python: any space, slower)",
                 frozenset({"best"}), ("time_limit",), "solverspace.registry.factories:bnb_reference"),
    BackendEntry("exhaustive-reference", "every valid configuration evaluated in Python (the ground truth of best)",
                 frozenset({"best"}), ("time_limit",), "solverspace.registry.factories:exhaustive_reference"),
    BackendEntry("cpsat", "OR-Tools CP-SAT (counting, checking, optimising)",
                 frozenset({"count", "sample", "check", "best", "approximate"}),
                 ("time_limit", "workers", "seed", "sinks"), "solverspace.registry.factories:cpsat_backend",
                 ("cpsat", "cpsat-xor"), "workers"),
)}
BACKENDS = REGISTRY   # the name the command line's choices read
#: What wraps a C or CP-SAT backend made by hand, as the factories wrap the ones they make (orders
#: answered through slots); imported when such a backend is first given.
SLOTS_WRAPPER = "solverspace.translators.order_slots:with_order_slots"


def backends_with(capability: str) -> tuple[str, ...]:
    """Names of the registered backends that have `capability`."""
    return tuple(name for name, entry in REGISTRY.items() if capability in entry.capabilities)


def backend_for_method(method: str) -> str:
    """The backend that provides a sampling method (`exact`, `reference`, `cpsat`, `cpsat-xor`)."""
    for name, entry in REGISTRY.items():
        if method in entry.sampling_methods:
            return name
    methods = [m for entry in REGISTRY.values() for m in entry.sampling_methods]
    raise OptionError(f"unknown sampling method {method!r}", hint=f"methods: {', '.join(methods)}")


def require(name: str, capability: str) -> BackendEntry:
    """The entry of backend `name`, which must have `capability`."""
    entry = REGISTRY.get(name)
    if entry is None:
        raise BackendUnavailableError(f"unknown backend {name!r}", hint=f"available backends: {', '.join(REGISTRY)}")
    if capability not in entry.capabilities:
        able = backends_with(capability)
        raise BackendUnavailableError(f"the {name} backend cannot {CAPABILITIES[capability]}",
                                      hint=f"backends that can: {', '.join(able)}" if able else
                                      "no backend of this installation can")
    return entry


def get_backend(name: "str | object", capability: str | None = None, **options):
    """A backend by name, configured with `options` (those left None take the backend's
    defaults), or the backend object itself. With `capability`, a backend that lacks it is
    refused with a message naming the backends that have it."""
    if not isinstance(name, str):  # a backend object: a registered one must have the capability too
        if capability is not None and getattr(name, "name", None) in REGISTRY:
            require(name.name, capability)
        return resolve(SLOTS_WRAPPER)(name)   # a C or CP-SAT backend made by hand: orders through slots too
    if capability is not None:
        entry = require(name, capability)
    else:
        entry = REGISTRY.get(name)
        if entry is None:
            raise BackendUnavailableError(f"unknown backend {name!r}", hint=f"available backends: {', '.join(REGISTRY)}")
    given = {key: value for key, value in options.items() if value is not None}
    unknown = sorted(set(given) - set(entry.options))
    if unknown:
        raise OptionError(f"the {name} backend takes no option {unknown[0]!r}",
                          hint=f"its options: {', '.join(entry.options)}" if entry.options else "it takes no options")
    return entry.make(**given)


__all__ = ["BACKENDS", "REGISTRY", "CAPABILITIES", "PROTOCOLS", "BackendEntry", "backends_with", "backend_for_method",
           "get_backend", "require"]
