"""The pruning funnel: where the constraints prune, by how much, and which ones are redundant.

Measured on the literal plan (each constraint tested at its earliest loop, in definition order,
no other optimization), so the numbers describe the space and its plan, not an optimizer:

- per constraint: `reached` (candidates at its loop that passed the derived values and the
  constraints before it there), `rejected`, `undefined` (division or modulo by zero in it) and
  `kept`; reached = kept + rejected + undefined;
- `alone`: candidates at that loop rejected by this constraint and by no other constraint there
  (every constraint of the loop evaluated): 0 means the constraint is redundant at that loop;
- `overlap[a][b]`: candidates at the loop rejected by both a and b;
- per loop: `candidates` (values the loop produced) and `undefined` (lost to an undefined
  domain or derived value before any constraint).

`reference_funnel` computes it in Python; the C backend computes the same numbers with counters
compiled in only when a funnel is asked for.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from solverspace.lang.evaluate import Undefined, compile_domain, compile_expr
from solverspace.analysis.plan import Plan


@dataclass
class ConstraintFunnel:
    name: str
    level: str
    reached: int = 0
    rejected: int = 0
    undefined: int = 0
    alone: int = 0

    @property
    def kept(self) -> int:
        return self.reached - self.rejected - self.undefined

    @property
    def kept_fraction(self) -> float:
        return self.kept / self.reached if self.reached else 1.0


@dataclass
class LevelFunnel:
    parameter: str
    candidates: int = 0
    undefined: int = 0


@dataclass
class Funnel:
    constraints: list[ConstraintFunnel]
    levels: list[LevelFunnel]
    overlap: dict[tuple[str, str], int] = field(default_factory=dict)
    count: int = 0

    def to_json(self) -> str:
        data = {
            "count": self.count,
            "levels": [asdict(level) for level in self.levels],
            "constraints": [{**asdict(c), "kept": c.kept, "kept_fraction": c.kept_fraction} for c in self.constraints],
            "overlap": [{"a": a, "b": b, "both_rejected": n} for (a, b), n in self.overlap.items() if n],
        }
        return json.dumps(data, indent=2)

    def table(self) -> str:
        width = max([len(c.name) for c in self.constraints] + [10])
        lwidth = max([len(c.level) for c in self.constraints] + [5])
        lines = [f"{'loop':<{lwidth}}  {'constraint':<{width}}  {'reached':>14}  {'rejected':>14}  {'undefined':>10}  "
                 f"{'kept':>14}  {'kept %':>7}  {'alone':>12}"]
        for c in self.constraints:
            flag = "  redundant here" if c.alone == 0 and c.reached else ""
            lines.append(f"{c.level:<{lwidth}}  {c.name:<{width}}  {c.reached:>14}  {c.rejected:>14}  {c.undefined:>10}  "
                         f"{c.kept:>14}  {100 * c.kept_fraction:>6.2f}%  {c.alone:>12}{flag}")
        pairs = [(a, b, n) for (a, b), n in self.overlap.items() if n]
        if pairs:
            lines += ["", "rejected by both (same loop):"]
            lines += [f"  {a} & {b}: {n}" for a, b, n in pairs]
        lines += ["", f"valid configurations: {self.count}"]
        return "\n".join(lines)


def empty_funnel(plan: Plan) -> Funnel:
    constraints = [ConstraintFunnel(c.name, "(before the loops)") for c in plan.prelude_constraints]
    overlap = {}
    for level in plan.levels:
        names = [c.name for c in level.constraints]
        constraints += [ConstraintFunnel(name, level.parameter.name) for name in names]
        overlap.update({(a, b): 0 for i, a in enumerate(names) for b in names[i + 1:]})
    names = [c.name for c in plan.prelude_constraints]
    overlap.update({(a, b): 0 for i, a in enumerate(names) for b in names[i + 1:]})
    return Funnel(constraints, [LevelFunnel(level.parameter.name) for level in plan.levels], overlap)


def reference_funnel(plan: Plan) -> Funnel:
    """The funnel computed in Python (ground truth for small spaces)."""
    model = plan.model
    funnel = empty_funnel(plan)
    stats = {c.name: c for c in funnel.constraints}
    closure_globals = dict(model.closure_globals)
    domains = [compile_domain(level.parameter.domain, level.parameter.name, closure_globals=closure_globals,
                              max_closure_values=model.max_closure_values) for level in plan.levels]

    def compiled(constraints):
        return [(c.name, compile_expr(c.expr), c.rejects) for c in constraints]

    def derived_of(ds):
        return [(d.name, compile_expr(d.expr)) for d in ds]

    groups = [(derived_of(plan.prelude_derived), compiled(plan.prelude_constraints))] + \
        [(derived_of(level.derived), compiled(level.constraints)) for level in plan.levels]

    def admit(group, env, level_stats) -> bool:
        derived, constraints = group
        try:
            for name, fn in derived:
                env[name] = fn(env)
        except Undefined:
            if level_stats is not None:
                level_stats.undefined += 1
            return False
        failing = {}
        for name, fn, rejects in constraints:
            try:
                failing[name] = "rejected" if bool(fn(env)) == rejects else None
            except Undefined:
                failing[name] = "undefined"
        for name, _, _ in constraints:  # the sequential funnel, in test order
            stats[name].reached += 1
            if failing[name] == "undefined":
                stats[name].undefined += 1
                break
            if failing[name] == "rejected":
                stats[name].rejected += 1
                break
        bad = [n for n, why in failing.items() if why]
        if len(bad) == 1 and failing[bad[0]] == "rejected":
            stats[bad[0]].alone += 1
        rejected = [n for n, why in failing.items() if why == "rejected"]
        for i, a in enumerate(rejected):
            for b in rejected[i + 1:]:
                funnel.overlap[(a, b)] += 1
        return not bad

    def descend(index, env):
        if index == len(plan.levels):
            funnel.count += 1
            return
        level_stats = funnel.levels[index]
        try:
            values = domains[index](env)
        except Undefined:
            level_stats.undefined += 1
            return
        for value in values:
            level_stats.candidates += 1
            env[plan.levels[index].parameter.name] = value
            if admit(groups[index + 1], env, level_stats):
                descend(index + 1, env)

    env: dict = {}
    if admit(groups[0], env, None):
        descend(0, env)
    return funnel
