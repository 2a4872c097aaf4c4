"""The K best configurations by an objective, by walking the plan's loop nest in Python (the
`bnb-reference` and `exhaustive-reference` engines; `translators.c.best` compiles the same two
walks in C as `bnb` and `exhaustive`).

Two engines share one walk (the reference enumerator's domains and admission tests):

- `exhaustive`: every valid configuration is evaluated; the ground truth.
- `bnb`: depth-first branch and bound (Telamon, seed 003, Section 5). After each loop binds its
  parameter, `PrefixBound` bounds the objective over every valid completion of the prefix;
  the values of a loop are visited in order of their bounds (most promising first), and a
  subtree whose bound is strictly worse than the current K-th best is cut. Since the bound is
  sound, the answer equals `exhaustive`'s, ties included: equal objectives are ranked by
  `objective.tie_key`, and a subtree whose bound equals the K-th best is still visited.

`SearchStats` keeps, per loop level, the prefixes visited (admitted by the constraints placed
there), the subtrees cut, and the configurations evaluated.
"""
from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from fractions import Fraction

from solverspace.core.orders import domain_size
from solverspace.lang.bounds import INF
from solverspace.core.errors import SpaceDefinitionError
from solverspace.lang.evaluate import Undefined, compile_expr
from solverspace.analysis.lower_bound import PrefixBound
from solverspace.analysis.objective import (
    BestResult, Ranked, parse_objective, string_order, tie_key, tie_prefix_lengths)
from solverspace.analysis.reference import WALK_LIMIT, ReferenceEnumerator

ENGINES = ("bnb", "exhaustive")


@dataclass
class SearchStats:
    order: tuple[str, ...]                      # the loop order
    visited: list[int] = field(default_factory=list)   # prefixes admitted, per loop level
    pruned: list[int] = field(default_factory=list)    # subtrees cut by their bound, per loop level
    evaluated: int = 0                          # complete configurations whose objective was computed

    def as_dict(self) -> dict:
        return {"order": list(self.order), "visited": self.visited, "pruned": self.pruned,
                "evaluated": self.evaluated}


class _Walk:
    def __init__(self, plan, expr, maximize: bool, top: int, prune: bool, deadline: float | None,
                 progress=None):
        self.plan, self.maximize, self.top, self.prune = plan, maximize, top, prune
        self.deadline = deadline
        self.progress = progress      # progress(done, total) over the outermost loop's values
        self.enumerator = ReferenceEnumerator(plan)
        self.levels = self.enumerator.levels
        self.objective = compile_expr(expr)
        self.bound = PrefixBound(plan, expr)
        order = string_order(plan.model)
        self.tie = tie_key(plan.model, order=order)
        self.names = plan.model.parameter_names
        # per loop: the tie key of the parameters bound there that lead definition order
        self.tie_prefix = [(n, tie_key(plan.model, tuple(self.names[:n]), order)) if n else None
                           for n in tie_prefix_lengths(self.names, plan.order)]
        depth = len(self.levels)
        self.stats = SearchStats(plan.order, [0] * depth, [0] * depth)
        self.best: list[tuple] = []     # sorted (rank key, tie key, objective, configuration)
        self.stopped = False
        self.ticks = 0

    # the objective as a number to minimise: the rank key
    def _key(self, value):
        return -value if self.maximize else value

    def _bound_key(self, env, depth):
        """A lower bound on the rank key of every completion (INF: none has a defined objective)."""
        interval = self.bound.interval(env, depth)
        if interval.empty:
            return INF
        return -interval.hi if self.maximize else interval.lo

    def _cut(self, bound_key) -> bool:
        return len(self.best) == self.top and bound_key > self.best[-1][0]

    def _behind_on_ties(self, bound_key, env, depth) -> bool:
        """At best a tie with the K-th best, and every completion comes after it in the tie order
        (the parameters that lead definition order are bound, and already compare greater)."""
        if len(self.best) < self.top or bound_key != self.best[-1][0] or self.tie_prefix[depth] is None:
            return False
        length, key = self.tie_prefix[depth]
        return key(env) > self.best[-1][1][:length]

    def _tick(self) -> None:
        self.ticks += 1
        if self.deadline is not None and self.ticks % 1024 == 0 and time.perf_counter() > self.deadline:
            self.stopped = True

    def run(self):
        env: dict = {}
        if self.enumerator.admit(self.enumerator.prelude, env):
            key = self._bound_key(env, -1) if self.prune else -INF
            if key != INF:
                self._descend(0, env, key)
        return self.best

    def _descend(self, index: int, env: dict, key) -> None:
        """Visit the subtree below loop `index`; `key`: the bound of the prefix so far."""
        self._tick()
        if self.stopped:
            return
        if index == len(self.levels):
            self._offer(env)
            return
        level = self.levels[index]
        report = self._reporter(index, level, env)
        if not self.prune or not self.bound.moves[index]:
            # no bound, or one this loop cannot change (the objective reads nothing bound here):
            # the children keep the prefix's bound, in domain order
            for _ in admitted(self.enumerator, level, env):
                self.stats.visited[index] += 1
                if self.prune and (self._cut(key) or self._behind_on_ties(key, env, index)):
                    self.stats.pruned[index] += 1
                else:
                    self._descend(index + 1, env, key)
                report(1)
            report(None)
            return
        ranked = []
        for position, value in enumerate(admitted(self.enumerator, level, env)):
            self.stats.visited[index] += 1
            key = self._bound_key(env, index)
            if key == INF:
                self.stats.pruned[index] += 1
            else:
                ranked.append((key, position, value))
        ranked.sort(key=lambda item: (item[0], item[1]))
        for number, (key, _, value) in enumerate(ranked):
            report(1)
            if self._cut(key):
                self.stats.pruned[index] += len(ranked) - number   # the rest are no better
                break
            env[level.name] = value
            self.enumerator.admit(level, env)   # recompute this level's derived values
            if self._behind_on_ties(key, env, index):
                self.stats.pruned[index] += 1
                continue
            self._descend(index + 1, env, key)
        report(None)

    def _reporter(self, index: int, level, env: dict):
        """report(1): one more value of the outermost loop done; report(None): all done."""
        if index != 0 or self.progress is None:
            return _silent
        try:
            total = domain_size(level.domain(env))   # len() stops at sys.maxsize
        except Undefined:
            total = 0
        done = 0

        def report(step):
            nonlocal done
            done = total if step is None else min(done + step, total)
            self.progress(done, total)

        return report

    def _offer(self, env: dict) -> None:
        self.stats.evaluated += 1
        try:
            value = self.objective(env)
        except Undefined:
            return
        if type(value) is bool:
            value = int(value)
        elif type(value) not in (int, Fraction):
            raise SpaceDefinitionError(f"the objective is {value!r} at {_short(env, self.names)}: not a number",
                                       hint="objectives are numbers (an order's position or length, not the order)")
        config = {n: env[n] for n in self.names}
        entry = (self._key(value), self.tie(config), value, config)
        if len(self.best) == self.top and entry[:2] >= self.best[-1][:2]:
            return
        bisect.insort(self.best, entry, key=lambda e: e[:2])
        del self.best[self.top:]


def admitted(enumerator, level, env: dict):
    """The values of `level` that its constraints admit after the prefix in `env` (the walk
    shared by `best` and `tune`): each value is yielded with `env` holding it and the derived
    values computed at that level. An undefined domain has no values."""
    try:
        values = level.domain(env)
    except Undefined:
        return
    size = domain_size(values)
    if size > WALK_LIMIT:   # as the reference's count refuses it: the walk would never end
        enumerator.refuse_walk(level, size)
    for value in values:
        env[level.name] = value
        if enumerator.admit(level, env):
            yield value


def _silent(step) -> None:
    """The reporter of every loop but the outermost (no function made per visited prefix)."""


def _short(env, names) -> str:
    return " ".join(f"{n}={env[n]!r}" for n in names)


def objective_expr(model, objective: str, top: int, expr=None):
    """The IR of a `best` objective (parsed from `objective` unless `expr` is given), checked:
    a number, and a positive `top` (every engine's first step)."""
    if top < 1:
        raise SpaceDefinitionError(f"top={top!r}: expected a positive number of configurations")
    expr = parse_objective(model, objective) if expr is None else expr
    if model.kinds.is_string(expr):
        raise SpaceDefinitionError(f"objective {objective!r} is a categorical value or an order, not a number",
                                   hint="objectives are numbers: e.g. --minimize 'position(loops, \"k\") + tile'")
    return expr


def best(plan, objective: str, *, maximize: bool = True, top: int = 10, engine: str = "bnb",
         time_limit: float | None = None, expr=None, progress=None) -> BestResult:
    """The `top` best configurations of `plan` by `objective`, by `engine` (`bnb` or `exhaustive`)."""
    start = time.perf_counter()
    if engine not in ENGINES:
        raise SpaceDefinitionError(f"unknown search engine {engine!r}", hint=f"engines: {', '.join(ENGINES)}")
    expr = objective_expr(plan.model, objective, top, expr)
    deadline = None if time_limit is None else start + time_limit
    walk = _Walk(plan, expr, maximize, top, engine == "bnb", deadline, progress)
    found = walk.run()
    result = BestResult(objective, maximize, engine=engine, search=walk.stats)
    result.exact = not walk.stopped
    for rank, (_, _, value, config) in enumerate(found, 1):
        result.ranked.append(Ranked(rank, value, config))
    result.seconds = time.perf_counter() - start
    return result


__all__ = ["ENGINES", "SearchStats", "admitted", "best", "objective_expr"]
