"""A fast full-configuration check through the reference's levels (issue 25).

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
from solverspace.analysis.reference import ReferenceEnumerator

__all__ = ["ConfigChecker"]


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
        from solverspace.lang.evaluate import Undefined
        try:
            domain = level.domain(env)
        except Undefined:
            return False
        try:
            return value in domain
        except TypeError:   # a value of another kind than the domain's (a string against a range)
            return False

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

    def valid_from(self, envs: list[dict], k: int, values) -> bool:
        """Validity of `values`, which agree with the configuration `envs` was made from on every
        parameter bound before loop `k` (so the environment before loop `k` is `envs[k]`)."""
        return self.run(dict(envs[k]), k, values)
