"""The compiled enumerator's work units, split across processes or machines.

A work unit is a prefix of the outer loops (`backend.Units`). To spread a space over a
cluster, the driver lists the prefixes at a depth chosen here (`prefix_table`), any process
counts a contiguous block of them (`count_block`), the blocks' exact counts are grouped into
contiguous, balanced partitions (`balanced_partitions`), and any process lists the rows of a
partition (`restricted(...).write` / `.rows_at`) with its prefixes fixed. The prefixes are in
output order, so partitions read in prefix order give exactly the single-process output.

A restricted enumerator is a shallow copy of a compiled one (same loaded module, no build)
whose units are only the block's prefixes; everything `CEnumerator` does on units (counting,
wide-count rebuilds, batches, files, positions) then works on the block unchanged.
"""
from __future__ import annotations

import hashlib
from bisect import bisect_left
from typing import TYPE_CHECKING

from solverspace.core.results import Stats

from .backend import CEnumerator

if TYPE_CHECKING:
    import numpy as np


def prefix_table(enumerator: CEnumerator, min_units: int, depth: int | None = None) -> tuple[int, "np.ndarray", Stats]:
    """(depth, prefixes as an (n, depth) int64 array, the prefix walk's undefined tally): at
    `depth` when given, else the shallowest depth with at least `min_units` prefixes (the
    deepest possible one if none has), as `CEnumerator.prefix_units` finds them. Depth 0 (a plan
    without prefixes) is one unit, the whole nest: an array of shape (1, 0)."""
    units = enumerator.prefix_units(min_units, depth)
    return units.depth, units.prefixes.copy(), units.prefix_stats


def prefix_digest(prefixes: "np.ndarray") -> str:
    """SHA-256 of a prefix table (its shape and int64 values): the same units, or not."""
    import numpy as np
    data = np.ascontiguousarray(prefixes, dtype="<i8")
    return hashlib.sha256(repr(data.shape).encode() + data.tobytes()).hexdigest()


def restricted(enumerator: CEnumerator, depth: int, prefixes: "np.ndarray", counts=None,
               wide: bool = False) -> CEnumerator:
    """A copy of `enumerator` whose work units are only `prefixes` (rows of a prefix table at
    `depth`), with their counts when known. It shares the loaded module (nothing is built)
    unless `wide`: the build that counts in wide integers, needed when the space has 2**63
    configurations or more and counts are given (positions inside a large unit are found with
    subtree counts, `c.rank`, which would wrap in int64; a block counted here rebuilds by itself)."""
    if wide and enumerator.generated.count_words == 1:
        enumerator = enumerator.wide_twin()
    return enumerator.with_units(enumerator.units_of(depth, prefixes, counts))


def count_block(enumerator: CEnumerator, depth: int, prefixes: "np.ndarray", strict: bool = False):
    """(per-unit counts, undefined tally, first undefined or None) of a block of prefixes. The
    undefined tally covers the loops below the prefixes (the prefix walk's own is the driver's)."""
    view = restricted(enumerator, depth, prefixes)
    units = view.count_units(strict)
    stats = units.prefix_stats
    return units.unit_counts, stats.undefined, stats.first_undefined


def balanced_partitions(counts: list[int], parts: int) -> list[tuple[int, int]]:
    """Contiguous unit ranges [u0, u1) about equal in rows: range j ends at the first unit where
    the running count reaches (j + 1) / parts of the total (a space without rows: equal in units).
    Every range holds at least one unit; fewer than `parts` come back when units are too few or
    one unit outweighs a share. Depends only on the counts and `parts`."""
    n = len(counts)
    if n == 0:
        return [(0, 0)]
    parts = max(1, min(parts, n))
    running, ends = 0, []
    for c in counts:
        running += int(c)
        ends.append(running)
    total = running
    bounds = [0]
    for j in range(1, parts):
        cut = bisect_left(ends, -(-total * j // parts)) + 1 if total else (n * j) // parts
        if bounds[-1] < cut < n:
            bounds.append(cut)
    bounds.append(n)
    return list(zip(bounds[:-1], bounds[1:]))
