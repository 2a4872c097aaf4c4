"""`Moves(space)`: the engines behind a space's moves, chosen once per space.

`Space` answers value lists, validity, neighbours, designs and repair through this object and
chooses nothing itself. Here it is decided, once, whether the neighbour queries run on the
compiled check and walks (`translators/c/config_check.py`, for a space too large for the
reference to list quickly) or on the reference's compiled levels; conditional quantiles, designs
and repair run over the compiled subtree counts (`translators/c/subtree.py`), refused for spaces
with orders.
"""
from __future__ import annotations

from solverspace.analysis.config_check import ConfigChecker
from solverspace.analysis.reference import ReferenceEnumerator, WorkBudgetExceeded
from solverspace.moves.designs import EmptySpaceError, Quantiles
from solverspace.moves.neighbors import Neighbors
from solverspace.moves.repair import Repairer, nearby
from solverspace.moves.value_lists import ParamIndex, value_key, value_lists
from solverspace.registry.backends import get_backend

__all__ = ["Moves"]


class Moves:
    """The move engines of one space, each made on first use and kept."""

    def __init__(self, space):
        self.space = space

    def param_index(self) -> ParamIndex:
        """Each parameter's value list and the index of a value (`value_lists`)."""
        if getattr(self, "_param_index", None) is None:
            self._param_index = ParamIndex(self.space.parameters, value_lists(self.space.model))
        return self._param_index

    def checker(self) -> ConfigChecker:
        """The reference's check of one configuration (`analysis.config_check`)."""
        if getattr(self, "_checker", None) is None:
            self._checker = ConfigChecker(self.space.plan)
        return self._checker

    def neighbors(self) -> Neighbors:
        """The neighbour queries, on the engine `compiled_check` chose."""
        if getattr(self, "_neighbors", None) is None:
            compiled = self.compiled_check()
            self._neighbors = Neighbors(self.checker(), self.param_index(), self.occurring_indices,
                                        compiled=compiled, nearest_all=self.nearest_all if compiled else None)
        return self._neighbors

    def neighbors_in(self, lists: dict, *, keep=None, occurring=None) -> Neighbors:
        """The neighbour queries in a caller's parameter indices: `lists` gives each parameter's
        values in the caller's order (its value list in another order, or with values more, which
        no configuration takes). `keep`: a further test of a valid configuration (the caller's own
        restrictions, Python predicates): the valid set is then what it keeps, on the reference
        engine, with `occurring()` giving per parameter the caller's indices that a kept
        configuration takes (what `adjacent` reads). Without `keep`, the engine `compiled_check`
        chose, over the caller's lists."""
        index = ParamIndex(self.space.parameters, lists)
        if keep is None and all(len(ours) == len(theirs) and all(type(a) is type(b) and a == b
                                                                  for a, b in zip(ours, theirs))
                                for ours, theirs in zip(self.param_index().lists, index.lists)):
            return self.neighbors()
        compiled = None
        if keep is None and self.compiled_check() is not None:
            from solverspace.translators.c.config_check import CompiledChecker
            from solverspace.translators.errors import UnsupportedConstruct
            try:
                compiled = CompiledChecker(self.space.plan, index.lists)
            except UnsupportedConstruct:     # a caller's value C cannot hold (a string it never met)
                compiled = None
        if keep is None:
            occurring = lambda: self.occurring_indices(index, compiled)   # noqa: E731
        return Neighbors(self.checker(), index, occurring, compiled=compiled, keep=keep)

    def compiled_check(self):
        """The compiled check and walks the neighbour queries use (`translators/c/config_check.py`),
        or None where the reference answers them: a small space (the reference lists it within
        100,000 candidate values, as `auto` does; the rows are kept for `adjacent`), or one the C
        backend refuses by construct (orders, values past 64 bits, ...). Decided once per space."""
        if getattr(self, "_compiled_check", None) is None:
            from solverspace.translators.errors import UnsupportedConstruct   # --help imports no backend module
            try:
                self._small_rows = list(ReferenceEnumerator(self.space.plan, budget=100_000).rows())
                self._compiled_check = False
            except WorkBudgetExceeded:
                from solverspace.translators.c.config_check import CompiledChecker
                try:
                    self._compiled_check = CompiledChecker(self.space.plan, self.param_index().lists)
                except UnsupportedConstruct:
                    self._compiled_check = False
        return self._compiled_check or None

    def occurring_indices(self, index: ParamIndex | None = None, compiled=None) -> list[list[int]]:
        """Per parameter, the indices of its value list that some valid configuration takes (what
        `adjacent` reads), once per space: from the reference's listing of a small space, else
        the compiled check's marking walk (one parallel pass in C, the parameters nothing depends
        on not looped over); for a large space C refuses by construct (orders, ...), one pass of
        the compiled enumerator where it lists the space, else of the reference. `index` and
        `compiled`: a caller's lists and the compiled check over them (`neighbors_in`), in place
        of the value lists'."""
        from solverspace.translators.errors import UnsupportedConstruct
        if index is None:
            index, compiled = self.param_index(), self.compiled_check()
        taken: list[set] = [set() for _ in self.space.parameters]

        def listed(rows):
            for row in rows:
                for seen, lookup, value in zip(taken, index.positions, row):
                    seen.add(lookup[value])
            return [sorted(seen) for seen in taken]
        if compiled is not None:
            return compiled.occurring()
        if getattr(self, "_small_rows", None) is not None:
            return listed(self._small_rows)
        try:   # a space with orders is refused by the enumerator (its slot model's rows are not orders)
            enumerator = get_backend("c", "list").enumerator(self.space.plan)
        except UnsupportedConstruct:
            enumerator = None
        if enumerator is None:
            return listed(self.space.rows("reference"))
        import numpy as np
        columns = enumerator.generated.columns
        for batch in enumerator.batches():
            for p, (seen, lookup) in enumerate(zip(taken, index.positions)):
                column = batch[columns[p].name]
                if len(column) == 0:
                    continue
                lo, hi = int(column.min()), int(column.max())
                if hi - lo < 1 << 24:
                    present = np.flatnonzero(np.bincount(column - lo)) + lo
                else:
                    present = np.unique(column)
                labels = columns[p].categorical
                for code in present.tolist():
                    seen.add(lookup[labels[code] if labels is not None else code])
        return [sorted(seen) for seen in taken]

    def quantiles(self) -> Quantiles:
        """Conditional quantiles over the compiled subtree counts (`designs`), made once."""
        if getattr(self, "_quantiles", None) is None:
            from solverspace.translators.c.subtree import SubtreeCounter, UnitRows, refuse_orders_for
            refuse_orders_for(self.space.plan, "a conditional quantile, design or repair")
            counter = SubtreeCounter(self.space.position_index().enumerator)
            rows = UnitRows(counter, self.space.parameters, self.param_index().lists)
            self._quantiles = Quantiles(self.space, counter, value_key(self.space.model), rows, self.param_index())
        return self._quantiles

    def repaired(self, target: tuple) -> tuple[tuple, int]:
        """(the valid configuration nearest the parameter indices `target`, its L1 distance): a few
        probes around the target first (no count needed), else the compiled branch and bound."""
        from solverspace.translators.c.subtree import refuse_orders_for
        refuse_orders_for(self.space.plan, "a conditional quantile, design or repair")
        Repairer.check_engine()
        sizes = tuple(len(values) for values in self.param_index().lists)
        columns = {name: j for j, name in enumerate(self.space.parameters)}
        found = nearby(target, sizes, [columns[name] for name in self.space.plan.order],   # no count needed
                       lambda point: self.checker().valid(self.param_index().values(point)), Repairer.probe_points)
        if found is not None:
            return self.param_index().values(found[0]), found[1]
        return Repairer(self.quantiles(), self.nearest).repair(target)

    def nearest_all(self, target: tuple) -> list[tuple] | None:
        """Every valid configuration (as parameter indices, sorted) at the smallest L1 distance from
        the parameter indices `target` of a configuration that is not valid: the repair's distance
        (`repaired`, exact), then the repair search again keeping every configuration at it
        (`Repairer.nearest_all`). None where repair is refused (a space with orders): the caller
        then answers by its own search."""
        from solverspace.translators.errors import UnsupportedConstruct
        try:
            _, distance = self.repaired(target)
            quantiles = self.quantiles()        # made by `repaired` unless a near probe found the repair
        except UnsupportedConstruct:
            return None
        except EmptySpaceError:
            return []
        if distance == 0:
            raise RuntimeError(f"internal error: nearest_all was asked for {target}, a valid configuration")
        found = Repairer(quantiles, self.nearest).nearest_all(target, distance)
        return sorted(self.param_index().indices(config) for config in found)

    def nearest(self):
        """The compiled nearest search of the space (`translators.c.nearest`: `Repairer`'s
        `compiled` engine), built once over the quantiles' work units."""
        if getattr(self, "_nearest", None) is None:
            from solverspace.translators.c.nearest import CompiledNearest
            self._nearest = CompiledNearest(self.space.plan, self.param_index().lists, self.quantiles().rows.units)
        return self._nearest
