"""Positions inside a work unit too large to list: unranking and ranking by subtree counts.

A space of 2**64 configurations can be a single work unit (its count multiplies in the
parameters nothing depends on), so the row at a position cannot be found by listing the unit.
Instead the output order is descended one loop at a time, from the unit's prefix:

- a *hoisted* parameter (one nothing depends on) has subtrees of equal size under each of its
  values, so the value is the position divided by that size;
- any other parameter's values are tried in domain order, each admitted by the plan's
  constraints at that loop (the reference evaluator: same semantics by construction), and
  skipped by its subtree count from the compiled `ss_count_prefix`.

Counts, codes and admitted values come from `translators.c.subtree.SubtreeCounter` (shared with
the search moves: quantiles, designs, repair). `ss_count_prefix` counts under a prefix of the counting order (the non-hoisted loops), with
every hoisted parameter multiplied in; the hoisted parameters already fixed are divided out
again: their domain sizes depend only on loops before them, so they are common factors.
"""
from __future__ import annotations

from .subtree import SubtreeCounter


class UnitRanker:
    """Rows at positions (and positions of rows) within single work units of a CEnumerator."""

    def __init__(self, enumerator):
        self.enumerator = enumerator
        self.plan = enumerator.plan
        self.counter = SubtreeCounter(enumerator)   # counts, codes and admitted values (translators.c.subtree)
        self.reference = self.counter.reference
        self.hoisted = self.counter.hoisted

    # ------------------------------------------------------------------------------ counts
    def _count(self, prefix: list[int]) -> int:
        """Configurations under a prefix of the counting order, hoisted parameters all free."""
        return self.counter.count_codes(prefix)

    def _code(self, name, value) -> int:
        return self.counter.code(name, value)

    def _value(self, name, code: int):
        return self.counter.value(name, code)

    def _start(self, unit: int):
        """(env, counting-order prefix) for a unit's prefix, derived values computed."""
        units = self.enumerator.units
        env: dict = {}
        if not self.reference.admit(self.reference.prelude, env):
            raise AssertionError("a unit with rows under a rejecting prelude")
        prefix = []
        for i in range(units.depth):
            name = self.plan.order[i]
            env[name] = self._value(name, units.prefixes[unit][i])
            self.reference.admit(self.reference.levels[i], env)
            prefix.append(int(units.prefixes[unit][i]))
        return env, prefix

    def _children(self, index: int, env: dict):
        """The values of loop `index` admitted under env (env is left with the last one tried)."""
        return self.counter.children(index, env)

    # ------------------------------------------------------------------------------ positions
    def row_at(self, unit: int, rank: int) -> dict:
        """The values (parameters and derived) of the row at `rank` within `unit`."""
        env, prefix = self._start(unit)
        size, fixed = int(self.enumerator.units.counts[unit]), 1
        for index in range(self.enumerator.units.depth, len(self.plan.order)):
            name = self.plan.order[index]
            if name in self.hoisted:
                values = list(self._children(index, env))
                size //= len(values)
                k, rank = divmod(rank, size)
                env[name] = values[k]
                self.reference.admit(self.reference.levels[index], env)
                fixed *= len(values)
                continue
            for value in self._children(index, env):
                below = self._count(prefix + [self._code(name, value)]) // fixed
                if rank < below:
                    prefix.append(self._code(name, value))
                    size = below
                    break
                rank -= below
        return dict(env)

    def rank_of(self, unit: int, values: dict) -> int | None:
        """The position within `unit` of a configuration, or None if it is not valid."""
        env, prefix = self._start(unit)
        rank, size, fixed = 0, int(self.enumerator.units.counts[unit]), 1
        for index in range(self.enumerator.units.depth, len(self.plan.order)):
            name = self.plan.order[index]
            wanted = values[name]
            if name in self.hoisted:
                options = list(self._children(index, env))
                if wanted not in options:
                    return None
                size //= len(options)
                rank += options.index(wanted) * size
                env[name] = wanted
                self.reference.admit(self.reference.levels[index], env)
                fixed *= len(options)
                continue
            for value in self._children(index, env):
                below = self._count(prefix + [self._code(name, value)]) // fixed
                if value == wanted and isinstance(value, str) == isinstance(wanted, str):
                    prefix.append(self._code(name, value))
                    size = below
                    break
                rank += below
            else:
                return None
            env[name] = wanted
            self.reference.admit(self.reference.levels[index], env)
        return rank
