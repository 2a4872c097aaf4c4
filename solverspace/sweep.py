"""Counting a space for every combination of some settings, in one process (`solverspace sweep`,
`Space.sweep`): load, plan and count each combination in turn, in the order given.

Each combination is its own space: a setting may change ranges, constraints or the structure. The
C backend remembers each generated program (`translators.c_plan_cache`), and programs that differ
only in integer constants share one compiled module (`translators.c_shapes`), so a first sweep
over n values of a setting that changes constants compiles twice, and a repeated sweep runs warm.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from .backends import get_backend
from .errors import OptionError


@dataclass(frozen=True)
class SweepPoint:
    """One combination of settings and what counting it gave."""

    settings: dict
    count: int
    undefined: int
    exact: bool
    seconds: float
    backend: str = ""   # the backend that answered (for `auto`, the one it chose)


def parse_grid(pairs: list[str]) -> dict[str, list[str]]:
    """`--set NAME=V1,V2,...` (repeatable) as {name: [values]}, in the order given.

    >>> parse_grid(["device=k40c,p100", "precision=single"])
    {'device': ['k40c', 'p100'], 'precision': ['single']}
    """
    grid: dict[str, list[str]] = {}
    for pair in pairs or []:
        name, sep, values = pair.partition("=")
        name = name.strip()
        if not sep or not name or not values:
            raise OptionError(f"--set {pair!r}: expected NAME=VALUE[,VALUE...]", hint="e.g. --set device=k40c,p100")
        if name in grid:
            raise OptionError(f"setting {name!r} is given twice", hint="list all its values in one --set, comma-separated")
        grid[name] = [v.strip() for v in values.split(",")]
        if any(not v for v in grid[name]):
            raise OptionError(f"--set {pair!r}: an empty value", hint="values are separated by single commas")
    return grid


def sweep(load: Callable[[dict], object], grid: dict[str, list], backend: str = "auto", *, base: dict | None = None,
          strict: bool = False, **options) -> Iterator[SweepPoint]:
    """Count, for every combination of the values in `grid` (the last setting varies fastest),
    the space `load(settings)` gives (a `Space`), with the settings of `base` too; yields one
    `SweepPoint` per combination. (`Space.sweep` passes its loader: this module sits below it.)"""
    names = list(grid)
    chosen = get_backend(backend, "count", **options)
    for values in itertools.product(*(grid[n] for n in names)):
        settings = {**(base or {}), **dict(zip(names, values))}
        start = time.perf_counter()
        stats = load(settings).stats(chosen, strict=strict)
        yield SweepPoint(dict(zip(names, values)), int(stats.count), int(stats.undefined),
                         bool(getattr(stats, "exact", True)), time.perf_counter() - start,
                         getattr(chosen, "answered_by", None) or chosen.name)
