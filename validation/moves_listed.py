"""The moves past neighbours (conditional quantiles, designs, repair) run by their own
code, `designs.Quantiles` and `repair.Repairer`, over counts taken from a *listed* space instead of
the compiled enumerator: no C module is built, so the brute-force checks (`validation.moves_b`)
can run on hundreds of generated spaces per test run.

The moves read their counts through two objects (`Quantiles(space, counter, key, unit_rows,
param_index)`); `listed_quantiles` builds both from the valid configurations (the reference's
rows), with the same meaning as the compiled ones (`translators.c.subtree`):

- `ListedCounter`: a node is a prefix of the plan's loop order with values bound; its count is the
  number of listed configurations that extend it; its children are the values of the next loop
  that some listed configuration takes there, in the order the reference first reaches them
  (domain order, as the compiled counter lists them);
- `ListedUnits`: the work units are the distinct prefixes of the first `depth` loops (in the
  reference's order), each with its rows; string values are coded in the order they are first
  met, which is not value-list order (as C's codes are not), so the moves' mapping from codes to
  parameter indices is exercised; `boxes` are the exact index boxes of each prefix.

So what these checks cover is the moves' logic (the descent through units and counts, the
listing of a small unit, and repair's search over units and counts, `Repairer` with its
`engine = "python"`, with its bounds and tie order) on every generated space; the compiled parts
(the counts under prefixes, `SubtreeCounter` and `UnitRows`, and repair's compiled nearest search,
`translators.c.nearest`, the default engine) are checked against the same brute force on a seeded
subset of the generated spaces, the corpus and the tiny GEMM variants (the C checks of
`validation.moves_b`, `counts="c"`). `depth` (which loops are units) and the quantiles'
`list_rows` (0: every unit is descended by counts; large: every unit is listed) choose which of
the moves' paths run.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from solverspace.analysis.reference import ReferenceEnumerator
from solverspace.moves.value_lists import ParamIndex, value_key
from solverspace.moves.designs import Quantiles

__all__ = ["ListedCounter", "ListedNode", "ListedUnits", "listed_quantiles"]


@dataclass
class ListedNode:
    """A plan-order prefix with values bound (`env`: the bound parameters) and its count."""

    index: int
    env: dict = field(default_factory=dict)
    path: tuple = ()
    count: int = 0


class ListedDecoder:
    """What `Quantiles.structured` reads of an enumerator: the encoded dtype and `decode`."""

    def __init__(self, counter: "ListedCounter", parameters: tuple):
        import numpy as np
        self.counter = counter
        self.parameters = parameters
        self.dtype = np.dtype([(name, np.int64) for name in parameters])
        self.decoded = np.dtype([(name, object if name in counter.strings else np.int64) for name in parameters])

    @property
    def generated(self):
        return self

    def decode(self, rows):
        import numpy as np
        value = self.counter.value
        return np.array([tuple(value(name, code) for name, code in zip(self.parameters, row)) for row in rows.tolist()],
                        dtype=self.decoded)


class ListedCounter:
    """Counts of valid completions under plan-order prefixes, from the listed configurations
    (module docstring); the interface of `translators.c.subtree.SubtreeCounter` that the moves read."""

    def __init__(self, space, rows: list[tuple]):
        self.levels = ReferenceEnumerator(space.plan).levels
        names = [level.name for level in self.levels]
        column = {name: j for j, name in enumerate(space.parameters)}
        self.columns = [column[name] for name in names]
        lists = space.value_lists()
        self.strings: dict[str, dict] = {name: {} for name in space.parameters
                                         if any(type(v) is str for v in lists[name])}
        self.labels: dict[str, list] = {name: [] for name in self.strings}
        self.counts: dict[tuple, int] = {}
        self.kids: dict[tuple, list] = {}
        for row in rows:
            path: tuple = ()
            self.counts[path] = self.counts.get(path, 0) + 1
            for name, j in zip(names, self.columns):
                value = row[j]
                if name in self.strings and value not in self.strings[name]:   # coded in the order first met
                    self.strings[name][value] = len(self.labels[name])
                    self.labels[name].append(value)
                child = path + (value,)
                if child not in self.counts:
                    self.kids.setdefault(path, []).append(value)
                    self.counts[child] = 0
                self.counts[child] += 1
                path = child
        self.enumerator = ListedDecoder(self, tuple(space.parameters))

    def code(self, name: str, value) -> int:
        return self.strings[name][value] if name in self.strings else value

    def value(self, name: str, code: int):
        return self.labels[name][int(code)] if name in self.strings else int(code)

    def root(self) -> ListedNode:
        return ListedNode(0, {}, (), self.counts.get((), 0))

    def expand(self, node: ListedNode) -> list[tuple[object, ListedNode]]:
        """(value, child) for the values of the next loop that a listed configuration takes under
        `node`, in the order the reference reaches them."""
        if node.count == 0 or node.index >= len(self.levels):
            return []
        return [(value, self.bind(node, value)) for value in self.kids.get(node.path, [])]

    def bind(self, node: ListedNode, value) -> ListedNode:
        name = self.levels[node.index].name
        path = node.path + (value,)
        return ListedNode(node.index + 1, {**node.env, name: value}, path, self.counts.get(path, 0))


@dataclass
class ListedUnitCounts:
    """The units as `UnitRows.units` holds them: depth, prefixes (codes, plan order), counts."""

    depth: int
    prefixes: object
    unit_counts: list
    total: int

    @property
    def n(self) -> int:
        return len(self.unit_counts)


class ListedUnits:
    """The work units of a listed space (module docstring); the interface of
    `translators.c.subtree.UnitRows` that the moves read."""

    def __init__(self, counter: ListedCounter, space, rows: list[tuple], depth: int):
        import numpy as np
        self.counter = counter
        self.parameters = tuple(space.parameters)
        self.index = ParamIndex(self.parameters, space.value_lists())
        names = [level.name for level in counter.levels]
        depth = min(depth, len(names))
        groups: dict[tuple, list] = {}
        for row in rows:
            groups.setdefault(tuple(row[j] for j in counter.columns[:depth]), []).append(row)
        prefixes = [[counter.code(name, v) for name, v in zip(names, prefix)] for prefix in groups]
        self.rows = list(groups.values())
        self.units = ListedUnitCounts(depth, np.array(prefixes, dtype=np.int64).reshape(len(groups), depth),
                                      [len(unit) for unit in self.rows], len(rows))
        self.groups = None
        self.box_levels = None

    def column_indices(self, j: int, column):
        """Parameter indices of column `j`'s codes."""
        import numpy as np
        name = self.parameters[j]
        positions = self.index.positions[j]
        return np.array([positions[self.counter.value(name, code)] for code in np.asarray(column).tolist()],
                        dtype=np.int32)

    def unit(self, u: int, indices: bool = True):
        """(encoded rows, parameter indices or None) of unit `u`."""
        import numpy as np
        rows = self.rows[u]
        encoded = np.array([tuple(self.counter.code(name, v) for name, v in zip(self.parameters, row)) for row in rows],
                           dtype=self.counter.enumerator.dtype)
        if not indices:
            return encoded, None
        return encoded, np.array([self.index.indices(tuple(row)) for row in rows], dtype=np.int32).reshape(
            len(rows), len(self.parameters))

    def structure(self):
        """(live units; per depth d the positions where each prefix of length d starts, and their counts)."""
        import numpy as np
        if self.groups is None:
            units = self.units
            live = np.arange(units.n, dtype=np.int64)
            counts = np.array(units.unit_counts, dtype=np.int64)
            starts, sums = [], []
            for d in range(units.depth + 1):
                first = [k for k in range(units.n)
                         if k == 0 or tuple(units.prefixes[k, :d]) != tuple(units.prefixes[k - 1, :d])]
                first = np.array(first, dtype=np.int64)
                starts.append(first)
                sums.append(np.add.reduceat(counts, first) if units.n else counts)
            self.groups = (live, units.prefixes, starts, sums)
        return self.groups

    def boxes(self):
        """Per depth d, (lo, hi): the smallest and largest parameter index of each prefix's
        configurations, per parameter (exact)."""
        import numpy as np
        if self.box_levels is None:
            live, _, starts, _ = self.structure()
            d_total = len(self.parameters)
            per_unit = [self.unit(u)[1] for u in live.tolist()]
            levels = []
            for first in starts:
                ends = first.tolist()[1:] + [len(live)]
                lo = np.zeros((len(first), d_total), dtype=np.int32)
                hi = np.zeros((len(first), d_total), dtype=np.int32)
                for g, (a, b) in enumerate(zip(first.tolist(), ends)):
                    block = np.concatenate(per_unit[a:b])
                    lo[g], hi[g] = block.min(axis=0), block.max(axis=0)
                levels.append((lo, hi))
            self.box_levels = levels
        return self.box_levels


def listed_quantiles(space, rows, depth: int = 1, list_rows: int | None = None):
    """`designs.Quantiles` of `space` over counts from `rows` (every valid configuration, as the
    reference lists them): units at `depth` loops, units of at most `list_rows` configurations
    listed (None: the default)."""
    rows = [tuple(r) for r in rows]
    counter = ListedCounter(space, rows)
    units = ListedUnits(counter, space, rows, depth)
    quantiles = Quantiles(space, counter, value_key(space.model), units,
                          ParamIndex(tuple(space.parameters), space.value_lists()))
    if list_rows is not None:
        quantiles.list_rows = list_rows
    return quantiles
