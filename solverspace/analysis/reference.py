"""The reference enumerator: plain Python loops over the literal plan, the ground truth.

No optimization beyond the plan's placement (each derived value computed, and each constraint
tested, right after the loop of its last input). Every backend is checked against this.

Domains are sized before they are walked (`orders.domain_size`: a range or an order domain by
arithmetic, never by listing), so a budget acts before the first value and a domain of more
than 2**63 values is refused rather than walked forever. One thing is not walked: when counting,
a loop that nothing reads and nothing is tested at multiplies the count of the loops inside it
(`_free_levels`), the walk that the literal plan implies, done arithmetically.
"""
from __future__ import annotations

import sys
from typing import Callable, Iterator

from solverspace.core.errors import Location, SpaceEvaluationError, UndefinedOperationError
from solverspace.lang import ir
from solverspace.lang.evaluate import Undefined, compile_domain, compile_expr
from solverspace.core.orders import domain_size
from solverspace.analysis.plan import Plan
from solverspace.lang.printing import to_source
from solverspace.core.results import Stats


class _CompiledLevel:
    __slots__ = ("name", "domain", "derived", "constraints")

    def __init__(self, name, domain, derived, constraints):
        self.name, self.domain, self.derived, self.constraints = name, domain, derived, constraints


def _once_if_constant(domain, values):
    """A domain that reads no parameter has the same values at every visit: computed at the first
    (so an error still surfaces only where the loop is reached, and again at each visit), then
    reused; T1 files' domains are all constant lists, deduplicated anew at each visit before."""
    if any(isinstance(n, (ir.Ref, ir.Closure)) for n in ir.walk(domain)):
        return values
    memo = []

    def constant(env):
        if not memo:
            memo.append(values(env))
        return memo[0]
    return constant


class WorkBudgetExceeded(Exception):
    """The enumeration tried more candidate values than its budget allowed (see `budget`)."""


WALK_LIMIT = sys.maxsize   # the most values of one domain the reference walks one by one (2**63 - 1)


class DomainTooLargeError(SpaceEvaluationError):
    """A domain the reference would have to walk value by value has more than `WALK_LIMIT`
    values (`range(10**20)` under a constraint): the walk would never end, so it is refused."""


class ReferenceEnumerator:
    """Enumerate a plan in Python. `fixed` pins parameters to one value each (used by `check`).
    `budget`: stop with `WorkBudgetExceeded` after trying that many candidate values (all loops
    together), so a caller can try the reference first and go elsewhere when the space is big.
    `on_budget(work, fraction)`, when given, is asked first, with the share of the walk done so
    far (`fraction_done`); it returns a larger budget to go on with, or None to stop."""

    TRACKED_LEVELS = 3   # the outer loops whose place estimates the share of the walk done
    ESTIMATE_LEVELS = 16  # the loops whose place `estimated_work` reads

    def __init__(self, plan: Plan, *, strict: bool = False, fixed: dict | None = None,
                 progress: Callable[[int, int], None] | None = None, budget: int | None = None,
                 on_budget: Callable[[int, float], int | None] | None = None):
        self.plan = plan
        self.budget, self.on_budget = budget, on_budget
        self.work = 0
        self._place = [[0, 1] for _ in range(self.ESTIMATE_LEVELS)]   # [value index, values] per outer loop
        self._stopped_at: int | None = None   # the depth where the budget was last reached
        self.stopped_domain: tuple[str, int] | None = None   # (parameter, its number of values) there
        self.strict = strict
        self.fixed = fixed or {}
        self.progress = progress
        self.stats = Stats()
        model = plan.model
        closure_globals = dict(model.closure_globals)

        def derived(ds):
            return [(d.name, compile_expr(d.expr), d.expr) for d in ds]

        def constraints(cs):
            return [(c.name, compile_expr(c.expr), c.rejects) for c in cs]

        self.prelude = _CompiledLevel(None, None, derived(plan.prelude_derived), constraints(plan.prelude_constraints))
        self.levels = [
            _CompiledLevel(level.parameter.name,
                           _once_if_constant(level.parameter.domain,
                                             compile_domain(level.parameter.domain, level.parameter.name,
                                                            closure_globals=closure_globals,
                                                            max_closure_values=model.max_closure_values)),
                           derived(level.derived), constraints(level.constraints))
            for level in plan.levels]
        position = {name: i for i, name in enumerate(plan.order)}
        self.column_positions = [position[p] for p in model.parameter_names]
        self._multiplying = False
        self._free = _free_levels(plan, self.fixed)

    # ------------------------------------------------------------------------------ results
    def rows(self, with_derived: tuple[str, ...] = ()) -> Iterator[tuple]:
        """Valid configurations in plan order, as tuples of parameter values in definition
        order (followed by the requested derived values)."""
        names = self.plan.model.parameter_names + tuple(with_derived)
        for env in self._leaves():
            yield tuple(env[n] for n in names)

    def count(self) -> int:
        """The number of valid configurations. A loop that nothing reads, with nothing tested at
        it, multiplies the count of the loops inside it instead of repeating them (its values
        are never walked: `range(10**20)` alone counts 10**20 at once, a permutation of 13 items
        13! without listing one); every other loop is walked as `rows()` walks it."""
        self._multiplying = True
        try:
            for _ in self._leaves():
                pass
        finally:
            self._multiplying = False
        return self.stats.count

    # ------------------------------------------------------------------------------ walking
    def _leaves(self) -> Iterator[dict]:
        self.stats = Stats()
        env: dict = {}
        if not self.admit(self.prelude, env):
            return
        yield from self._descend(0, env)

    def _descend(self, index: int, env: dict) -> Iterator[dict]:
        if index == len(self.levels):
            self.stats.count += 1
            yield env
            return
        level = self.levels[index]
        try:
            values = level.domain(env)
        except Undefined as exc:
            self._undefined(exc, env, level.name)
            return
        except SpaceEvaluationError as exc:
            raise _with_configuration(exc, env, self._where(level.name)) from None
        if level.name in self.fixed:
            wanted = self.fixed[level.name]
            values = [wanted] if wanted in values else []
        if self._multiplying and index in self._free:
            self._multiply(index, env, values)
            return
        try:
            total = len(values)   # sized, never listed: an order domain computes it (orders.OrderDomain)
        except OverflowError:     # past sys.maxsize (range(10**20)): only arithmetic knows
            total = domain_size(values)
        if self.budget is not None:   # counted against the budget before any value is walked
            self.work += total
            if self.work > self.budget:
                self.stopped_domain = (level.name, total)
                self._over_budget(index)
        if total > WALK_LIMIT:
            self.refuse_walk(level, total)
        report = self.progress if index == 0 and self.progress else None
        tracked = self._place[index] if index < self.ESTIMATE_LEVELS else None
        if tracked:
            tracked[1] = min(total, _FLOAT_SAFE)
        for done, value in enumerate(values, 1):
            if tracked:
                tracked[0] = done - 1
            env[level.name] = value
            if self.admit(level, env):
                yield from self._descend(index + 1, env)
            if report:
                report(done, total)
        env.pop(level.name, None)

    def refuse_walk(self, level: _CompiledLevel, size: int):
        raise DomainTooLargeError(
            f"parameter {level.name!r} has {size} values, more than 2**63: the reference walks a domain "
            f"value by value here (something is tested at or inside its loop) and would never finish",
            where=self._where(level.name),
            hint="narrow its domain; a parameter that no constraint, derived value or other domain "
                 "reads is counted by a multiply at any size")

    def _multiply(self, index: int, env: dict, values) -> None:
        """Count a free loop (`_free_levels`): the loops inside it once, for its first value,
        then every tally times its number of values (the inner loops read nothing of it, so each
        value gives the same)."""
        size = domain_size(values)
        if self.budget is not None:
            self.work += 1
            if self.work > self.budget:
                self._over_budget(index)
        if size == 0:
            return
        level = self.levels[index]
        if index < self.ESTIMATE_LEVELS:
            self._place[index][:] = [0, 1]
        before = _tallies(self.stats)
        env[level.name] = next(iter(values))
        for _ in self._descend(index + 1, env):
            pass
        env.pop(level.name, None)
        _scale(self.stats, before, size)
        if index == 0 and self.progress:
            self.progress(1, 1)

    def fraction_done(self, depth: int, levels: int | None = None) -> float:
        """The share of the walk before the current place, read off the outer loops above `depth`
        (at most `levels` of them, `TRACKED_LEVELS` unless given; each value of a loop taken as
        an equal share of its parent's: an estimate)."""
        fraction, share = 0.0, 1.0
        for done, total in self._place[:min(depth, self.TRACKED_LEVELS if levels is None else levels)]:
            share /= max(total, 1)
            fraction += done * share
        return fraction

    def estimated_work(self) -> float | None:
        """After the budget stopped the walk: the whole walk's candidate values, estimated from
        the work done and the share done read off up to `ESTIMATE_LEVELS` loops (a walk whose
        three outer loops are still at their first values after the budget says nothing through
        `fraction_done`; the deeper loops do). None when it says nothing still. An estimate
        (equal shares), used only to choose how to compile, never for an answer."""
        if self._stopped_at is None:
            return None
        fraction = self.fraction_done(self._stopped_at, self.ESTIMATE_LEVELS)
        return self.work / fraction if fraction > 0 else None

    def _over_budget(self, depth: int) -> None:
        self._stopped_at = depth
        more = self.on_budget(self.work, self.fraction_done(depth)) if self.on_budget else None
        if more is None or more <= self.work:
            raise WorkBudgetExceeded(self.work)
        self.budget = more

    def admit(self, level: _CompiledLevel, env: dict) -> bool:
        try:
            for name, fn, _ in level.derived:
                env[name] = fn(env)
            for name, fn, rejects in level.constraints:
                if bool(fn(env)) == rejects:
                    return False
        except Undefined as exc:
            self._undefined(exc, env, name)
            return False
        except SpaceEvaluationError as exc:
            raise _with_configuration(exc, env, self._where(name)) from None
        return True

    def _where(self, name: str) -> Location:
        """The definition site of a parameter, derived value or constraint, for messages."""
        model = self.plan.model
        item = model.parameter.get(name) or model.derived_value.get(name) or model.constraint.get(name)
        return Location(model.source, getattr(item, "line", None))

    def _undefined(self, exc: Undefined, env: dict, where: str) -> None:
        bound = {p: env[p] for p in self.plan.order if p in env}
        if self.strict:
            raise UndefinedOperationError(
                f"undefined operation in {where!r}: {exc.reason} in `{to_source(exc.expr)}` "
                f"at {_format(bound)}", where=self._where(where),
                hint="guard the expression (e.g. `b == 0 or a // b < 2`) or run without strict mode, "
                     "where such configurations are invalid and counted as undefined")
        self.stats.undefined += 1
        self.stats.undefined_by[where] = self.stats.undefined_by.get(where, 0) + 1
        if self.stats.first_undefined is None:
            self.stats.first_undefined = (f"{where}: {to_source(exc.expr)}", bound)


_FLOAT_SAFE = 2**1000   # a loop's size as `fraction_done` reads it (a float cannot hold 10**400)


def _free_levels(plan: Plan, fixed: dict) -> frozenset[int]:
    """The loops whose values only multiply the count: nothing computed or tested at the loop,
    not pinned, and no later domain, derived value or constraint reads the parameter."""
    free, read = set(), set()
    for index in range(len(plan.levels) - 1, -1, -1):
        level = plan.levels[index]
        name = level.parameter.name
        if not level.derived and not level.constraints and name not in fixed and name not in read:
            free.add(index)
        read |= level.parameter.depends_on
        for item in (*level.derived, *level.constraints):
            read |= item.depends_on
    return frozenset(free)


def _tallies(stats: Stats) -> tuple[int, int, dict]:
    return stats.count, stats.undefined, dict(stats.undefined_by)


def _scale(stats: Stats, before: tuple[int, int, dict], size: int) -> None:
    """Multiply what the walk added to `stats` since `before` by `size` (a free loop's values)."""
    count, undefined, by = before
    stats.count = count + (stats.count - count) * size
    stats.undefined = undefined + (stats.undefined - undefined) * size
    for where, n in list(stats.undefined_by.items()):
        stats.undefined_by[where] = by.get(where, 0) + (n - by.get(where, 0)) * size


def _format(values: dict) -> str:
    return " ".join(f"{k}={v!r}" for k, v in values.items()) or "(no parameters bound)"


def _with_configuration(exc: SpaceEvaluationError, env: dict, where: Location) -> SpaceEvaluationError:
    if env:
        exc.message = f"{exc.message} (at {_format(env)})"
    if exc.where is None:
        exc.where = where
    exc.args = (exc.render(),)
    return exc
