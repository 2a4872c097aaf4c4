"""A fast full-configuration check through the reference's levels.

`ConfigChecker.valid(values)` decides what `check` and the reference enumerator decide for one
full configuration (domain membership at each loop, each derived value computed and each
constraint tested where the plan places it; an undefined operation makes it invalid), with the
reference's own compiled levels (`ReferenceEnumerator.levels`, `admit`): no SymPy, no planning
per call. It stops at the first rejection, so it says only valid or not (`check` says why).

Moves that change one parameter re-evaluate only the levels from that parameter's loop on:
`prefix(values)` keeps the environment before each loop (parameters bound so far and the derived
values computed there), and `valid_from(envs, k, values)` continues a copy of the environment
before loop `k`. This is sound because whatever is evaluated before loop `k` reads only the
parameters bound before it (the plan places each item after the loop of its last input).
"""
from __future__ import annotations

from solverspace.analysis.plan import Plan
from solverspace.lang.evaluate import Undefined
from solverspace.analysis.reference import ReferenceEnumerator

__all__ = ["ConfigChecker", "contains"]


def contains(domain, value) -> bool:
    """`value in domain`, False for a value of another kind than the domain's."""
    try:
        return value in domain
    except TypeError:
        return False


class ConfigChecker:
    """Validity of full configurations of one plan. Values are given in definition order
    (`model.parameter_names`)."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.enumerator = ReferenceEnumerator(plan)
        self.levels = self.enumerator.levels
        names = plan.model.parameter_names
        column = {name: i for i, name in enumerate(names)}
        self.columns = [column[level.name] for level in self.levels]   # plan level -> definition column
        self.level_of = {level.name: k for k, level in enumerate(self.levels)}  # parameter -> plan level
        self.affected_cache: dict[int, list[int]] = {}
        env: dict = {}
        self.start: dict | None = env if self.enumerator.admit(self.enumerator.prelude, env) else None

    def valid(self, values) -> bool:
        """Whether the configuration (values in definition order) is valid."""
        if self.start is None:
            return False
        return self.run(dict(self.start), 0, values)

    def run(self, env: dict, k: int, values) -> bool:
        """Bind and test the levels from `k` on in `env` (the environment before loop `k`)."""
        admit = self.enumerator.admit
        levels, columns = self.levels, self.columns
        for index in range(k, len(levels)):
            level = levels[index]
            value = values[columns[index]]
            if not self.member(level, env, value):
                return False
            env[level.name] = value
            if not admit(level, env):
                return False
        return True

    def member(self, level, env: dict, value) -> bool:
        """Whether `value` is in the level's domain at `env` (an undefined domain has no values)."""
        return contains(self.domain(level, env), value)

    @staticmethod
    def domain(level, env: dict):
        """The level's domain at `env`: its values (a list, range or order domain), empty where
        the domain is undefined (the reference walks no value there)."""
        try:
            return level.domain(env)
        except Undefined:
            return ()

    def prefix(self, values) -> list[dict] | None:
        """The environments before each loop for a configuration whose first loops are valid:
        `envs[k]` is the environment before loop `k` (`len(levels) + 1` of them when the whole
        configuration is valid); None if the prelude rejects everything. Stops at the first
        rejected loop (the list is then shorter)."""
        if self.start is None:
            return None
        envs = [dict(self.start)]
        env = dict(self.start)
        admit = self.enumerator.admit
        for index, level in enumerate(self.levels):
            value = values[self.columns[index]]
            if not self.member(level, env, value):
                return envs
            env[level.name] = value
            if not admit(level, env):
                return envs
            envs.append(dict(env))
        return envs

    def affected(self, k: int) -> list[int]:
        """The loops to evaluate again when only the parameter of loop `k` changes in a valid
        configuration: loop `k` and every later loop whose domain, derived values or constraints
        read it, directly or through a derived value (the others evaluate as before: they pass)."""
        cached = self.affected_cache.get(k)
        if cached is None:
            name = self.levels[k].name
            inputs = self.plan.model.analysis.dag.parameter_inputs   # through derived values and closures
            cached = [k]
            for j in range(k + 1, len(self.levels)):
                level = self.plan.levels[j]
                if any(name in inputs[item.name] for item in (level.parameter, *level.derived, *level.constraints)):
                    cached.append(j)
            self.affected_cache[k] = cached
        return cached

    def valid_changed(self, env: dict, k: int, values, in_domain: bool = False) -> bool:
        """Validity of `values`, a valid configuration with only the parameter of loop `k`
        changed; `env` is a working copy of the valid configuration's whole environment
        (`prefix(...)[-1]`), reused across calls for the same `k` (each loop evaluated again
        writes what it computes before anything later reads it). `in_domain`: the caller took
        the new value from loop `k`'s domain (so its membership is not tested again)."""
        admit = self.enumerator.admit
        levels, columns = self.levels, self.columns
        for j in self.affected(k):
            level = levels[j]
            value = values[columns[j]]
            if j != k or not in_domain:
                try:
                    if value not in level.domain(env):
                        return False
                except (Undefined, TypeError):   # an undefined domain; a value of another kind
                    return False
            env[level.name] = value
            if not admit(level, env):
                return False
        return True

    def valid_from(self, envs: list[dict], k: int, values) -> bool:
        """Validity of `values`, which agree with the configuration `envs` was made from on every
        parameter bound before loop `k` (so the environment before loop `k` is `envs[k]`)."""
        return self.run(dict(envs[k]), k, values)
