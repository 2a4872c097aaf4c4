"""The counted work units of a compiled enumerator, remembered beside its module.

A count leaves each work unit's prefix and count in the enumerator (`units`); written here as a
cache entry (`build.write_entry`, kind `kt_units`) keyed like the generated C
(`plan_cache.generation_key`: the model written out in full, the loop order, the options and the
tool's own code), they are given back to the same plan's enumerator in the next process, whose
exact count, `space[i]` and `space.index` then need no count. An absent, unreadable, other-key or
other-format entry is a miss; a cache that cannot be written only makes the next process count.
"""
from __future__ import annotations

from .build import read_entry, write_entry

__all__ = ["FORMAT", "KIND", "recall", "remember"]

FORMAT = 1          # of the entries' fields
KIND = "kt_units"   # the entries' name prefix (`solverspace.core.cache` lists them as Kernel Tuner units)


def recall(enumerator, key: str) -> bool:
    """Give `enumerator` (not counted yet) its work units with their counts from the entry for
    `key`; True when they were given."""
    if enumerator.units is not None and enumerator.units.unit_counts is not None:
        return False
    try:
        entry = read_entry(KIND, key, FORMAT)
    except (OSError, ValueError):
        return False
    if entry is None:
        return False
    import numpy as np   # here: a warm count (the C backend imports this module) imports no numpy
    depth, counts = int(entry["depth"]), [int(c) for c in entry["counts"]]
    prefixes = np.asarray(entry["prefixes"], dtype=np.int64).reshape(len(counts), depth)
    units = enumerator.units_of(depth, prefixes, counts)
    units.prefix_stats.undefined = int(entry["undefined"])
    first = entry["first_undefined"]
    units.prefix_stats.first_undefined = None if first is None else (first[0], dict(first[1]))
    enumerator.units = units
    return True


def remember(enumerator, key: str) -> None:
    """Write the counted work units of `enumerator` as the entry for `key`: the prefixes, each
    unit's count, the undefined tally and its first place. Nothing when it was not counted, when
    the counts pass int64, or when the entry for `key` is there already."""
    units = enumerator.units
    if units is None or units.unit_counts is None or units.total >= 2 ** 63:
        return
    try:
        if read_entry(KIND, key, FORMAT) is not None:
            return
    except (OSError, ValueError):
        pass
    first = units.prefix_stats.first_undefined
    write_entry(KIND, key, FORMAT, {
        "depth": units.depth, "counts": list(units.unit_counts),
        "prefixes": units.prefixes.tolist() if units.depth else [[] for _ in units.unit_counts],
        "undefined": int(units.prefix_stats.undefined),
        "first_undefined": None if first is None else [first[0], {k: v for k, v in first[1].items()}]})
