"""Positions of a space made of independent groups, one group at a time.

A space whose parameters fall into groups that share no parameter, derived value or constraint
is the product of its groups: its count is the product of theirs. Where each group's loops are
consecutive in the plan's order (`plan.order`), the canonical order (lexicographic in that order)
is the product order too: the configuration at position p has, in group g, the group's own
configuration at digit d_g of p written in the mixed radix of the group sizes, the first group
the most significant (p = (...(d_1 * n_2 + d_2) * n_3 + ...) + d_m). So a position needs only
each group's own positions: a compiled enumerator per group (`group_plan`, the group's
parameters with the derived values and rules that read only them, loops in the plan's order),
whose work units are small where the whole space's are too large to list.

`GroupPositions` answers `rows_at` and `index` that way when the whole space's enumerator would
have to descend a work unit too large to list (`EnumeratorPositions.descends`: one subtree count
per value tried, per loop); otherwise it is the whole space's positions, unchanged. Each group
costs a compiled module, and a group of hoisted parameters only (nothing in the space depends on
them: the descent takes each one's value by a division, no count) gains nothing from one: such
groups join a neighbouring group into a *block* (consecutive groups, so the product order holds
for blocks too), and with fewer than two blocks the whole space's positions answer (64
independent binary parameters compile no module more). The positions are the same either
way, so a sample (uniformly drawn positions, `solverspace.core.draws`) is the same configurations
for the same seed: only the work differs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from solverspace.analysis.plan import Plan, make_plan
from solverspace.core.draws import Positions
from solverspace.lang.dag import connected_groups
from solverspace.lang.model import Model

if TYPE_CHECKING:
    import numpy as np

__all__ = ["GroupPositions", "consecutive_groups", "group_plan"]


def consecutive_groups(plan: Plan) -> list[list[str]] | None:
    """The independent groups of the plan's parameters (each in loop order, groups in the order
    of their first loop), or None when there are fewer than two or a group's loops are not
    consecutive in the plan's order (the canonical order is then not the product order)."""
    model, order = plan.model, list(plan.order)
    inputs = plan.analysis.dag.parameter_inputs
    scopes = [inputs[p.name] | {p.name} for p in model.parameters] + \
        [inputs[item.name] for item in (*model.derived, *model.constraints)]
    groups = connected_groups(order, scopes, order)
    if len(groups) < 2 or [name for group in groups for name in group] != order:
        return None
    return groups


def group_plan(plan: Plan, names: list[str]) -> Plan:
    """The plan of one group: its parameters, every derived value and rule whose parameter inputs
    are all in it (those that read none, settings only, belong to every group), the settings,
    loops in the plan's order."""
    model = plan.model
    inputs = plan.analysis.dag.parameter_inputs
    members = set(names)
    sub = Model(model.source, tuple(p for p in model.parameters if p.name in members),
                tuple(d for d in model.derived if inputs[d.name] <= members),
                tuple(c for c in model.constraints if inputs[c.name] <= members),
                model.settings, model.closure_globals, model.max_closure_values)
    return make_plan(sub, [name for name in plan.order if name in members])


class GroupPositions(Positions):
    """Positions of a space of consecutive independent groups (the module docstring): `whole`,
    the whole space's positions (`EnumeratorPositions`); `parts(group)` makes a group's positions
    (a compiled enumerator of `group_plan`), when first needed."""

    name = "exact"
    guarantee = "exactly uniform over the valid configurations (positions drawn uniformly)"

    def __init__(self, whole, groups: list[list[str]], parts):
        self.whole = whole
        self.enumerator = whole.enumerator
        self.groups = groups
        self._make_parts = parts
        self._parts: list | None = None
        self._blocks: list[list[str]] | None = None
        self._by_groups: bool | None = None

    def blocks(self) -> list[list[str]]:
        """The groups joined into blocks, each holding one group with a parameter that is not
        hoisted, the hoisted-only groups joined to the next block (the last block takes those
        after it); no block when no group has such a parameter."""
        if self._blocks is not None:
            return self._blocks
        hoisted = set(self.enumerator.generated.hoisted)
        blocks: list[list[str]] = []
        pending: list[str] = []
        for group in self.groups:
            pending += group
            if any(name not in hoisted for name in group):
                blocks.append(pending)
                pending = []
        if pending and blocks:
            blocks[-1] += pending
        self._blocks = blocks
        return blocks

    @property
    def parts(self) -> list:
        if self._parts is None:
            self._parts = [self._make_parts(block) for block in self.blocks()]
        return self._parts

    def by_groups(self) -> bool:
        """Whether positions go through the blocks: there are two or more, and the whole space's
        enumerator would descend a work unit by subtree counts to find one."""
        if self._by_groups is None:
            self._by_groups = len(self.blocks()) >= 2 and self.whole.descends()
        return self._by_groups

    def size(self) -> int:
        return self.whole.size()

    def digits(self, position: int) -> list[int]:
        """Each group's position for a position of the whole space (mixed radix, first group first)."""
        digits = []
        for part in reversed(self.parts):
            position, digit = divmod(position, part.size())
            digits.append(digit)
        return digits[::-1]

    def rows_at(self, positions) -> np.ndarray:
        if not self.by_groups():
            return self.whole.rows_at(positions)
        import numpy as np
        total = self.size()
        wanted = [int(p) for p in positions]
        if wanted and (min(wanted) < 0 or max(wanted) >= total):
            raise IndexError(f"configuration index out of range: the space has {total} configurations")
        enumerator = self.enumerator
        out = np.empty(len(wanted), dtype=enumerator.decode(np.zeros(0, dtype=enumerator.generated.dtype)).dtype)
        digits = [self.digits(p) for p in wanted]
        for g, (group, part) in enumerate(zip(self.blocks(), self.parts)):
            mine = [d[g] for d in digits]
            rows = part.rows_at(np.array(mine, dtype=np.int64 if part.size() < 2 ** 63 else object))
            for name in group:
                out[name] = rows[name]
        return out

    def index(self, values: dict) -> int | None:
        if not self.by_groups():
            return self.whole.index(values)
        position = 0
        for part in self.parts:
            digit = part.index(values)
            if digit is None:
                return None
            position = position * part.size() + digit
        return position
