"""Counts of valid completions under a prefix of the plan's loop order, compiled.

A *node* is a prefix of the plan's loop order (`plan.order`) with values bound: the first
`index` loops, each value admitted by the plan's constraints at its loop (the reference
evaluator's levels, so the same semantics by construction), with the derived values computed
there. Its `count` is the number of valid configurations that extend it. `SubtreeCounter.expand`
lists a node's children (the admitted values of the next loop, in domain order) with their
counts; the search moves (conditional quantiles and designs, repair) descend the loops this
way without listing the space.

Where the counts come from:

- prefixes no deeper than the enumerator's work units: the sums of the unit counts (the units are
  counted once, in parallel, with the memo of independent groups);
- deeper prefixes: the compiled `ss_count_prefix`, which counts under a prefix of the *counting*
  order (the loop order without the hoisted parameters, those nothing depends on) with every
  hoisted parameter multiplied in. A hoisted parameter bound in the plan-order prefix is divided
  out again: its domain depends only on loops before it, so its size is a common factor of every
  completion; its children split the node's count equally (no C call).

Categorical values go to C as their codes; an undefined domain has no values (the C nest counts
it as 0); counts past 63 bits come back whole (the enumerator is rebuilt with wide counts when a
unit count overflows, as counting does). Counts are cached per counting-order prefix (up to
`MAX_CACHED` entries, then the cache starts again). A count under a unit of at most
`DIRECT_ROWS` configurations is run from the calling thread (microseconds); a larger one through
the enumerator's C thread, so that Ctrl-C stops it.

Orders are not handled here: the enumerator of a space with orders is built on its slot plan
(`translators.order_slots`), whose loops are slots, not the space's parameters; callers refuse
such spaces (`refuse_orders_for`).
"""
from __future__ import annotations

from dataclasses import dataclass

from solverspace.analysis.reference import ReferenceEnumerator
from solverspace.lang.evaluate import Undefined
from .codegen import ERROR_COUNT_OVERFLOW
from ..errors import UnsupportedConstruct
from ..order_slots import OrderSlots
from solverspace.lang.kinds import ORDER

__all__ = ["MAX_CACHED", "DIRECT_ROWS", "Node", "SubtreeCounter", "refuse_orders_for"]

MAX_CACHED = 1 << 20     # counting-order prefixes whose counts are kept
DIRECT_ROWS = 1 << 22    # a count under a subtree of at most this many configurations runs in this thread


def refuse_orders_for(plan, what: str) -> None:
    """Refuse a space with order-valued parameters for `what` (a search move), naming the first."""
    if OrderSlots.through_slots(plan):   # C runs the slot model: no counts per order parameter
        model = plan.model
        owner = next(p for p in model.parameters if model.kinds.of(p.name) == ORDER)
        raise UnsupportedConstruct("C", owner.domain,
                                   f"{what} needs counts of completions per parameter, and an order-valued "
                                   f"parameter is counted as slots (one loop per position), not as one parameter",
                                   owner=owner, model=model,
                                   hint="count, sample (without --given) and enumerate support orders; for this "
                                        "move, model the order with one parameter per position")


@dataclass
class Node:
    """A plan-order prefix with values bound. `env` holds the bound parameters and the derived
    values computed so far (do not change it); `codes` the counting-order prefix (codes of the
    bound non-hoisted parameters); `fixed` the product of the bound hoisted parameters' domain
    sizes; `count` the valid configurations that extend it."""

    index: int
    env: dict
    codes: tuple
    fixed: int
    count: int


class SubtreeCounter:
    """Subtree counts of one compiled enumerator (a `CEnumerator` of a plan without orders)."""

    def __init__(self, enumerator):
        self.enumerator = enumerator
        self.plan = enumerator.plan
        self.reference = ReferenceEnumerator(self.plan)
        self.levels = self.reference.levels
        self.order = tuple(self.plan.order)
        generated = enumerator.generated
        self.hoisted = set(generated.hoisted)
        self.categorical = {c.name for c in generated.columns if c.categorical is not None}
        self.strings = {code: text for text, code in generated.codes.items()}
        self.cache: dict[tuple, int] = {}
        self.tables: list[dict] | None = None
        self.calls = 0          # compiled counts run (tests read the work done)

    # ------------------------------------------------------------------------------ values
    def code(self, name: str, value) -> int:
        """The value C holds for `value` of parameter `name` (a categorical string's code)."""
        return self.enumerator.generated.codes[value] if name in self.categorical else value

    def value(self, name: str, code: int):
        return self.strings[int(code)] if name in self.categorical else int(code)

    def children(self, index: int, env: dict):
        """The values of loop `index` admitted under env (env is left with the last one tried)."""
        level = self.levels[index]
        try:
            values = level.domain(env)
        except Undefined:  # an undefined domain has no values (the C nest counts it as 0)
            return
        for value in values:
            env[level.name] = value
            if self.reference.admit(level, env):
                yield value

    # ------------------------------------------------------------------------------ counts
    def count_codes(self, prefix) -> int:
        """Configurations under a prefix of the counting order (codes), hoisted parameters all
        free: `ss_count_prefix` through the enumerator's C thread."""
        return self._run(list(prefix), direct=False)

    def _run(self, prefix: list, direct: bool) -> int:
        import numpy as np
        e = self.enumerator
        words = e.generated.count_words
        values = np.array(prefix or [0], dtype=np.int64)
        out = np.zeros(words, dtype=np.int64)
        st = e.ffi.new("ss_stats *")
        args = (e.ffi.cast("int64_t *", values.ctypes.data), len(prefix), e.ffi.cast("int64_t *", out.ctypes.data), st)
        self.calls += 1
        if direct:
            if e.shaped.constants is not None:   # a module shared by its shape: this program's constants
                e.shaped.set_constants()
            e.lib.ss_count_prefix(*args)
        else:
            e.call(e.lib.ss_count_prefix, *args)
        if st.error == ERROR_COUNT_OVERFLOW:   # a subtree past 63 bits in an int64 build: count wide
            self.enumerator = e.wide_twin()
            return self._run(prefix, direct)
        e.check_status(st, False)
        return int(out[0]) if words == 1 else int.from_bytes(out.view(np.uint64).tobytes(), "little")

    def _unit_tables(self) -> list[dict]:
        """Per depth d <= the units' depth: counting-order prefix of length d -> count."""
        if self.tables is None:
            units = self.enumerator.count_units()   # rebuilds the enumerator wide if a unit count overflows
            tables: list[dict] = [dict() for _ in range(units.depth + 1)]
            tables[0][()] = units.total
            if units.depth:
                for prefix, n in zip(units.prefixes.tolist(), units.unit_counts):
                    for d in range(1, units.depth + 1):
                        key = tuple(prefix[:d])
                        tables[d][key] = tables[d].get(key, 0) + n
            self.tables = tables
        return self.tables

    def count_prefix(self, codes: tuple, parent: int | None = None) -> int:
        """Configurations under a counting-order prefix (codes), hoisted parameters all free;
        `parent`: the count under its parent prefix (hoisted free), which says whether the
        subtree is small enough to count from this thread."""
        tables = self._unit_tables()
        if len(codes) < len(tables):
            return tables[len(codes)].get(tuple(codes), 0)
        cached = self.cache.get(codes)
        if cached is None:
            if len(self.cache) >= MAX_CACHED:
                self.cache.clear()
            cached = self._run(list(codes), direct=parent is not None and parent <= DIRECT_ROWS)
            self.cache[codes] = cached
        return cached

    # ------------------------------------------------------------------------------ nodes
    def root(self) -> Node:
        """The empty prefix: the prelude's environment and the space's count."""
        env: dict = {}
        if not self.reference.admit(self.reference.prelude, env):
            return Node(0, env, (), 1, 0)
        return Node(0, env, (), 1, self._unit_tables()[0][()])

    def expand(self, node: Node) -> list[tuple[object, Node]]:
        """(value, child) for each admitted value of the next loop, in domain order, each child
        with its count (0 for a value with no valid completion). A node with count 0 or every
        loop bound has no children."""
        if node.count == 0 or node.index >= len(self.levels):
            return []
        index = node.index
        level = self.levels[index]
        name = level.name
        scratch = dict(node.env)
        values = list(self.children(index, scratch))
        result = []
        if name in self.hoisted:   # equal subtrees: the count splits evenly
            size = len(values)
            for value in values:
                env = dict(node.env)
                env[name] = value
                self.reference.admit(level, env)
                result.append((value, Node(index + 1, env, node.codes, node.fixed * size, node.count // size)))
            return result
        parent = node.count * node.fixed
        for value in values:
            env = dict(node.env)
            env[name] = value
            self.reference.admit(level, env)
            codes = node.codes + (self.code(name, value),)
            count = self.count_prefix(codes, parent) // node.fixed
            result.append((value, Node(index + 1, env, codes, node.fixed, count)))
        return result

    def bind(self, node: Node, value) -> Node | None:
        """The child of `node` with the next loop's parameter at `value` (its count, 0 if no valid
        configuration extends it), or None if the value is not admitted there."""
        index = node.index
        level = self.levels[index]
        name = level.name
        env = dict(node.env)
        try:
            domain = level.domain(env)
        except Undefined:
            return None
        try:
            if value not in domain:
                return None
        except TypeError:   # a value of another kind than the domain's
            return None
        env[name] = value
        if not self.reference.admit(level, env):
            return None
        if name in self.hoisted:
            size = sum(1 for _ in self.children(index, dict(node.env)))
            return Node(index + 1, env, node.codes, node.fixed * size, node.count // size)
        codes = node.codes + (self.code(name, value),)
        return Node(index + 1, env, codes, node.fixed,
                    self.count_prefix(codes, node.count * node.fixed) // node.fixed if node.count else 0)


LIST_ROWS = 1 << 18      # a work unit of at most this many configurations is listed to finish a move in NumPy
CACHED_ROWS = 1 << 20    # listed units kept (configurations, all units together; H100 designs: 4x as many
                         # held 100 MiB more for no speed)
BOX_ROWS = 1 << 31       # spaces up to this size get per-unit index boxes (one listing pass)


class UnitRows:
    """The work units of a counter's enumerator as *index* data: each unit's rows as parameter
    indices (positions in the value lists, one int32 column per parameter in column order), and
    per prefix of the units (every depth up to theirs) the box of indices its configurations
    take (per parameter the smallest and largest). `lists`: the value lists, column order, each
    sorted as `analysis.value_lists` sorts them."""

    def __init__(self, counter: SubtreeCounter, parameters: tuple, lists: list):
        import numpy as np
        self.counter = counter
        self.parameters = parameters
        self.lists = lists
        e = counter.enumerator
        counter.root()                      # counts the units (and widens the build if needed)
        self.units = e.count_units()
        columns = {c.name: c for c in e.generated.columns}
        self.maps = []                      # per column: codes -> index (a lookup array, or a sorted value array)
        for name, values in zip(parameters, lists):
            column = columns[name]
            if column.categorical is not None:
                position = {v: i for i, v in enumerate(values)}
                lookup = np.array([position.get(s, -1) for s in column.categorical], dtype=np.int32)
                self.maps.append(("lookup", lookup))
            elif values and values[-1] - values[0] < 1 << 24:   # a lookup array over the value range
                lookup = np.full(values[-1] - values[0] + 1, -1, dtype=np.int32)
                lookup[np.array(values, dtype=np.int64) - values[0]] = np.arange(len(values), dtype=np.int32)
                self.maps.append(("offset", (values[0], lookup)))
            else:
                self.maps.append(("sorted", np.array(values, dtype=np.int64)))
        self.cache: dict[int, object] = {}
        self.cached_rows = 0
        self.groups: list | None = None

    def indices(self, rows):
        """(n, D) int32 parameter indices of encoded rows (a structured array of the enumerator)."""
        import numpy as np
        out = np.empty((len(rows), len(self.parameters)), dtype=np.int32)
        for j, name in enumerate(self.parameters):
            out[:, j] = self.column_indices(j, rows[name])
        return out

    def column_indices(self, j: int, column):
        """Parameter indices of column `j`'s values (codes for a categorical column)."""
        import numpy as np
        kind, table = self.maps[j]
        if kind == "lookup":
            return table[column]
        if kind == "offset":
            return table[1][column - table[0]]
        return np.searchsorted(table, column)

    def fill(self, u: int):
        """The encoded rows of unit `u`, filled by `ss_fill_list` from this thread with one OpenMP
        thread (a small unit: the C thread's hand-over costs more than the fill)."""
        import numpy as np
        e = self.counter.enumerator
        units = self.units
        size = int(units.unit_counts[u])
        rows = np.empty(size, dtype=e.generated.dtype)
        if size:
            chosen = np.array([u], dtype=np.int64)
            out_offsets = np.array([0, size], dtype=np.int64)
            cancel = e.ffi.new("int[1]")
            done = e.ffi.new("int64_t[1]")
            if e.shaped.constants is not None:   # a module shared by its shape: this program's constants
                e.shaped.set_constants()
            e.lib.ss_fill_list(units.depth, units.prefix_buffer, e.ffi.cast("int64_t *", chosen.ctypes.data), 1,
                               e.ffi.cast("int64_t *", out_offsets.ctypes.data),
                               e.ffi.cast("char *", rows.ctypes.data), 1, cancel, done)
        return rows

    def unit(self, u: int, indices: bool = True):
        """(encoded rows, index matrix or None) of unit `u` (at most LIST_ROWS rows; cached; the
        index matrix made when first asked for)."""
        found = self.cache.get(u)
        if found is None:
            rows = self.fill(u)
            if self.cached_rows + len(rows) > CACHED_ROWS:
                self.cache.clear()
                self.cached_rows = 0
            found = [rows, None]
            self.cache[u] = found
            self.cached_rows += len(rows)
        if indices and found[1] is None:
            found[1] = self.indices(found[0])
        return found[0], found[1]

    def structure(self):
        """(live units, in unit order; per depth d in 0..units.depth the positions in `live` where
        each prefix of length d starts, and those prefixes' counts). Units without configurations
        are left out; prefixes of a given length are contiguous in unit order."""
        import numpy as np
        if self.groups is None:
            units = self.units
            counts = np.array(units.unit_counts, dtype=object if units.total >= 2 ** 63 else np.int64)
            live = np.flatnonzero(counts > 0)
            prefixes = units.prefixes[live] if units.depth else np.zeros((len(live), 0), dtype=np.int64)
            starts, sums = [], []
            for d in range(units.depth + 1):
                if d == 0 or len(live) == 0:
                    first = np.array([0] if len(live) else [], dtype=np.int64)
                else:
                    change = np.any(prefixes[1:, :d] != prefixes[:-1, :d], axis=1)
                    first = np.concatenate([[0], np.flatnonzero(change) + 1])
                starts.append(first)
                sums.append(np.add.reduceat(counts[live], first) if len(live) else counts[live])
            self.groups = (live, prefixes, starts, sums)
        return self.groups

    def boxes(self):
        """Per depth d in 0..units.depth, (lo, hi): for each prefix of length d (as `structure`
        orders them) the smallest and largest parameter index per parameter, shape (groups, D).
        One listing pass for spaces up to BOX_ROWS configurations; past it the whole value list (a
        sound, loose bound)."""
        import numpy as np
        if getattr(self, "box_levels", None) is not None:
            return self.box_levels
        live, _, starts, _ = self.structure()
        units = self.units
        d_total = len(self.parameters)
        lo = np.zeros((len(live), d_total), dtype=np.int32)
        hi = np.tile(np.array([max(len(v) - 1, 0) for v in self.lists], dtype=np.int32), (len(live), 1))
        if units.total <= BOX_ROWS and len(live):
            e = self.counter.enumerator
            position = {int(u): k for k, u in enumerate(live)}
            offsets = e.offsets()
            unit = 0
            for rows in e.batches():
                first = unit
                end = int(offsets[first]) + len(rows)
                while unit < units.n and int(offsets[unit + 1]) <= end:
                    unit += 1
                chosen = [u for u in range(first, unit) if u in position]
                if not chosen:
                    continue
                cut = np.array([int(offsets[u]) - int(offsets[first]) for u in chosen], dtype=np.int64)
                index = [position[u] for u in chosen]
                for j, name in enumerate(self.parameters):
                    column = rows[name]
                    if self.maps[j][0] == "lookup":    # categorical: codes are not in value-list order
                        values = self.column_indices(j, column)
                        lo[index, j] = np.minimum.reduceat(values, cut)
                        hi[index, j] = np.maximum.reduceat(values, cut)
                    else:                              # numbers: the index grows with the value
                        lo[index, j] = self.column_indices(j, np.minimum.reduceat(column, cut))
                        hi[index, j] = self.column_indices(j, np.maximum.reduceat(column, cut))
        levels = []
        for first in starts:
            if len(first) == 0:
                levels.append((lo, hi))
            else:
                levels.append((np.minimum.reduceat(lo, first, axis=0), np.maximum.reduceat(hi, first, axis=0)))
        self.box_levels = levels
        return levels
