"""Counting a space for every combination of some settings, in one process (`solverspace sweep`,
`Space.sweep`), in the order given.

Each combination is its own space: a setting may change ranges, constraints or the structure.
With the C backend (`c`, or `auto`), combinations whose models differ only in integer constants
are counted together in ONE walk (`method` "one-pass", `translators.c.lanes`): every point is a
lane of the walk, statements that do not depend on the point run once, the others once per lane
still alive, and each lane gets exactly the count and undefined tally of its own program (up to 64
lanes a pass). The lane program is remembered by the points' programs (`lanes_*.json` beside the
compiled modules) and its module is shared by any values of the same shape (the differing
constants are a runtime table), so a repeated sweep loads the spaces and runs one compiled walk.
Where the module of the base settings (the swept ones at their defaults: what a `count` before
the sweep built) is in the cache and the points differ from it only in their outer loops, the
sweep compiles only those loops (a *top program*, `lanes.run_top`): it writes the prefixes alive
in each point, and the base module counts each prefix's subtree once for all of them.
Points that cannot share a walk (another structure, a construct the lanes refuse; the reason is
in `SweepPoint.note`), `--strict`, and the other backends are counted one by one ("per-point"),
which is always exact too.
"""
from __future__ import annotations

import itertools
import re
import time
from typing import Callable, Iterator

from solverspace.registry.backends import get_backend
from solverspace.core.errors import OptionError
from solverspace.core.records import Record


class SweepPoint(Record):
    """One combination of settings and what counting it gave: `backend` the backend that answered
    (for `auto`, the one it chose); `method` "one-pass" where counted with the other points of its
    group in one walk, else "per-point"; `note`, for a per-point count of a group that could not
    share a walk, why. (A record, not a dataclass: see `core.records`.)"""

    __match_args__ = ("settings", "count", "undefined", "exact", "seconds", "backend", "method", "note")

    def __init__(self, settings: dict, count: int, undefined: int, exact: bool, seconds: float, backend: str = "",
                 method: str = "per-point", note: str = ""):
        for name, value in zip(self.__match_args__, (settings, count, undefined, exact, seconds, backend, method, note)):
            object.__setattr__(self, name, value)


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
          strict: bool = False, one_pass: bool = True, **options) -> Iterator[SweepPoint]:
    """Count, for every combination of the values in `grid` (the last setting varies fastest),
    the space `load(settings)` gives (a `Space`), with the settings of `base` too; yields one
    `SweepPoint` per combination. (`Space.sweep` passes its loader: this module sits below it.)
    `one_pass`: share walks between points where the C backend can (see the module); False
    counts every point on its own."""
    names = list(grid)
    chosen = get_backend(backend, "count", **options)
    combos = [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]
    compiled = _compiled(chosen) if one_pass and not strict and len(combos) > 1 else None
    if compiled is None:
        for point in combos:
            start = time.perf_counter()
            yield _per_point(load({**(base or {}), **point}), point, chosen, strict, time.perf_counter() - start)
        return
    loaded = []
    for point in combos:   # every point loaded first: a bad setting value is an error before any count
        start = time.perf_counter()
        loaded.append((load({**(base or {}), **point}), time.perf_counter() - start))
    answers: dict[int, SweepPoint] = {}
    notes: dict[int, str] = {}
    groups = _groups([space for space, _ in loaded])
    start = time.perf_counter()
    base_space = _base_space(load, base)
    loading = (time.perf_counter() - start) / len(combos)
    loaded = [(space, seconds + loading) for space, seconds in loaded]
    while groups:
        group, by_shape = groups.pop(0)
        if len(group) < 2:
            continue
        start = time.perf_counter()
        result, reason = _count_lanes([loaded[i][0] for i in group], compiled, base_space)
        if result is None:
            notes.update({i: reason for i in group})
            if not by_shape:   # the points whose generated programs have one shape may still share a walk
                groups[:0] = [(g, True) for g in _shape_groups(group, [loaded[i][0] for i in group], compiled)]
            continue
        share = (time.perf_counter() - start) / len(group)
        for lane, i in enumerate(group):
            answers[i] = SweepPoint(combos[i], result.counts[lane], result.undefined[lane], True,
                                    loaded[i][1] + share, compiled.name, "one-pass")
    for i, point in enumerate(combos):
        yield answers[i] if i in answers else _per_point(loaded[i][0], point, chosen, strict, loaded[i][1],
                                                            notes.get(i, ""))


def _per_point(space, point, chosen, strict, loading: float, note: str = "") -> SweepPoint:
    """One point counted on its own (`loading`: the seconds its space took to load)."""
    start = time.perf_counter()
    stats = space.stats(chosen, strict=strict)
    return SweepPoint(point, int(stats.count), int(stats.undefined), bool(getattr(stats, "exact", True)),
                      loading + time.perf_counter() - start, getattr(chosen, "answered_by", None) or chosen.name,
                      note=note)


def _compiled(chosen):
    """The C backend behind `chosen` (`c` itself, or the one `auto` would run), or None."""
    if getattr(chosen, "name", None) == "c":
        return chosen
    if getattr(chosen, "name", None) == "auto":
        from solverspace.registry.backends import get_backend
        return get_backend("c", **chosen.c_options)
    return None


_CONSTANT = re.compile(r"Const\(value=-?\d+\)")


def _groups(spaces) -> list[tuple[list[int], bool]]:
    """The points whose models are written alike up to integer constants (candidates for one
    walk, in sweep order, at most `MAX_LANES` a group), each with False (not yet split by shape)."""
    by_model: dict[str, list[int]] = {}
    for i, space in enumerate(spaces):
        m = space.model
        by_model.setdefault(_CONSTANT.sub("#", repr((m.parameters, m.derived, m.constraints))), []).append(i)
    return [(chunk, False) for members in by_model.values() for chunk in _chunks(members)]


def _chunks(members: list[int]) -> list[list[int]]:
    from solverspace.translators.c.lanes import MAX_LANES
    return [members[k:k + MAX_LANES] for k in range(0, len(members), MAX_LANES)]


def _shape_groups(group: list[int], spaces, compiled) -> list[list[int]]:
    """`group` split by the shape of each point's generated program (`translators.c.shapes`:
    the text between its integer literals); only when that splits it. A point the C backend
    refuses is left out (its per-point count says why)."""
    from solverspace.translators.c.lanes import program_shape
    shapes: dict[str, list[int]] = {}
    for i, space in zip(group, spaces):
        shape = program_shape(space.plan, compiled.options)
        if shape is not None:
            shapes.setdefault(shape, []).append(i)
    if len(shapes) == 1 and len(next(iter(shapes.values()))) == len(group):
        return []
    return [chunk for members in shapes.values() if len(members) > 1 for chunk in _chunks(members)]


def _base_space(load, base):
    """The space of the sweep's base settings (the swept ones at their defaults): where a count
    has built its module, a sweep counts on it (`_count_top`); None if it does not load."""
    from solverspace.core.errors import SolverspaceError
    try:
        return load(dict(base or {}))
    except SolverspaceError:
        return None


def _count_lanes(spaces, compiled, base_space=None):
    """(LaneResult, None) for points counted in one walk, or (None, why not)."""
    from solverspace.core.errors import SolverspaceError
    from solverspace.translators.c import lanes as c_lanes
    from solverspace.translators.c.build import CompilerError
    from solverspace.translators.c.plan_cache import flush_simplifications, generation_key
    from solverspace.translators.errors import UnsupportedConstruct
    plans = [space.plan for space in spaces]
    keys = [generation_key(plan, compiled.options, (), False, False) for plan in plans]
    if base_space is not None and compiled.is_built(base_space.plan):
        result = _count_top(plans, keys, base_space.plan, compiled)
        if result is not None:
            return result, None
    key = c_lanes.lanes_key(keys)
    remembered = c_lanes.load_program(key) if key else None
    if remembered is None:
        try:
            program, reason = c_lanes.LaneWalk(plans, compiled.options).generate(), None
        except c_lanes.NotLaneable as exc:
            program, reason = None, str(exc)
        except UnsupportedConstruct as exc:   # the per-point counts say it, with the construct
            return None, f"the C backend refuses the space ({exc})"
        except SolverspaceError as exc:       # e.g. a closure's error: the per-point count raises it
            return None, str(exc)
        if key:
            c_lanes.store_program(key, program, reason)
        flush_simplifications()   # the points' derived values, simplified: a later generation needs no SymPy
    else:
        program, reason = remembered
    if program is None:
        return None, reason
    try:
        return c_lanes.run_program(program, compiled.threads), None
    except (c_lanes.LaneError, CompilerError) as exc:   # no compiler: `auto` counts each with the reference
        return None, str(exc)


def _count_top(plans, keys, base_plan, compiled):
    """The points counted by a top program and the base point's built module (`lanes.run_top`:
    the sweep compiles only the loops above the deepest one where the points differ), or None
    where that does not apply (the reason is remembered with the program; the whole lane walk
    is tried next)."""
    from solverspace.core.errors import SolverspaceError
    from solverspace.translators.c import lanes as c_lanes
    from solverspace.translators.c.plan_cache import flush_simplifications, generation_key
    key = c_lanes.lanes_key([*keys, generation_key(base_plan, compiled.options, (), False, False), "top"])
    remembered = c_lanes.load_program(key) if key else None
    if remembered is None:
        try:
            program, reason = c_lanes.top_program(plans, base_plan, compiled.options), None
        except c_lanes.NotLaneable as exc:
            program, reason = None, str(exc)
        except SolverspaceError:   # a refusal: the whole lane walk or the per-point counts report it
            return None
        if key:
            c_lanes.store_program(key, program, reason)
        flush_simplifications()
    else:
        program = remembered[0]   # (the reason a top program was refused is only for the cache)
    if program is None:
        return None
    try:
        return c_lanes.run_top(program, compiled.enumerator(base_plan))
    except SolverspaceError:   # e.g. a zero step below the prefixes (the whole walk or the per-point count says it)
        return None
