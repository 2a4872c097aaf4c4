"""Exactly uniform samples with CP-SAT counts as the oracle (self-reducibility).

For spaces the compiled enumerator does not accept, or whose prefixes it cannot count one by one.
A configuration is drawn the way `cpsat.count` counts, each step in proportion to exact counts,
so every valid configuration has probability exactly 1/size:

- **Peeled parameters** (a parameter whose only condition is its own domain) are drawn in
  Python after the parameters they depend on: a value with probability proportional to the
  number of completions under it (`Counter.weight`).
- **Independent components** are drawn independently: the space is their product.
- **A component whose joint enumeration has at most `table_limit` CP-SAT solutions** is listed
  while it is counted (`Counter.count(record=...)`); a row is drawn with probability proportional
  to its weight (the completions of its peeled parameters), then those parameters are drawn.
- **A larger component is split on its first parameter** (its inputs are fixed by then): the
  sub-space under each value is counted by the CP-SAT counter, a value drawn in proportion, and
  the sub-space drawn from recursively, where it may split into components again. Counts are
  memoised on the sub-problem and the values of the fixed parameters its conditions read (its
  separator), so draws that reach the same separator assignment share one count.

Draws are made in batches: a sub-space is counted once for all the draws that reach it, and
each draw keeps its slot, so a batch of k is k independent uniform draws in order.

CP-SAT's own random seeds and solution hints are not used to sample: they do not give a uniform
distribution (the OR-Tools maintainers say so); here the randomness is ours (NumPy PCG64).

Layering: cpsat.count (`Counter`, its problems and weights) -> **cpsat.sample** -> cpsat.backend (the
facade re-exports `SelfReducibleSampler`); `solverspace.scale.sampling` drives it.
"""
from __future__ import annotations

import bisect
import itertools

import numpy as np

from .count import (
    Component, Counter, CountResult, Factor, Problem, Weight, peeled_params, rest_at)
from .solver import Options
from .wide import size as domain_size

#: A component with at most this many CP-SAT solutions is listed while counted and drawn from
#: the list (K40c GEMM: 59,166 rows, about 10 MB); larger ones are split on their first parameter.
TABLE_SOLUTIONS = 200_000

#: Listed rows kept in the count memo at most, over all sub-problems; beyond it, counts are kept
#: without their rows and a draw that needs them splits instead (still exact, slower).
MEMO_ROWS = 2_000_000


class CountNotExact(RuntimeError):
    """The time limit stopped a count the sampler needs: no exactly uniform draw is possible."""


class SelfReducibleSampler:
    """Uniform configurations of a plan through exact CP-SAT counts."""

    def __init__(self, plan, options: Options | None = None, *, table_limit: int = TABLE_SOLUTIONS,
                 progress=None):
        self.plan = plan
        self.counter = Counter(plan.model, plan, options or Options(), progress)
        self.table_limit = table_limit
        self.top = self.counter.full_problem()
        self._counts: dict = {}
        self._rows_kept = 0
        self.counts_made = 0       # CP-SAT count calls (memo misses), for benchmarks

    def size(self) -> int:
        return self._count(self.top).count

    def draw(self, k: int, rng: np.random.Generator) -> list[dict]:
        """k independent uniform configurations (dicts over the parameters)."""
        if k and not self.size():
            raise ValueError("the space is empty: nothing to draw")
        return self._draw(self.top, k, rng)

    # ------------------------------------------------------------------------------ counting
    def _count(self, problem: Problem) -> CountResult:
        read = set().union(*(f.scope for f in problem.factors)) if problem.factors else set()
        key = (problem.params, frozenset(problem.factors),
               tuple(sorted((p, v) for p, v in problem.fixed.items() if p in read)))
        found = self._counts.get(key)
        if found is None:
            found = self.counter.count(problem, None, record=self.table_limit)
            self.counts_made += 1
            if not found.exact:
                raise CountNotExact("a CP-SAT count stopped before it finished")
            rows = sum(len(t.rows) for t in found.tables if t is not None)
            if self._rows_kept + rows > MEMO_ROWS:
                found = CountResult(found.count, found.exact, found.solutions, found.seconds, found.strategy,
                                    [None] * len(found.tables))
            else:
                self._rows_kept += rows
            self._counts[key] = found
        return found

    # ------------------------------------------------------------------------------ drawing
    def _draw(self, problem: Problem, k: int, rng) -> list[dict]:
        """k uniform assignments of `problem.params` (its count must be positive)."""
        result = self._count(problem)
        structure = self.counter.structure(problem)
        drawn = [{} for _ in range(k)]
        in_components = set()
        for component, table in zip(structure.components, result.tables):
            in_components.update(id(w) for w in component.weights)
            for values, part in zip(drawn, self._draw_component(component, table, problem.fixed, k, rng)):
                values.update(part)
        for w in structure.weights:
            if id(w) not in in_components:
                for values in drawn:
                    self._draw_weight(w, {**problem.fixed, **values}, rng, values)
        return drawn

    def _draw_component(self, component: Component, table, fixed: dict, k: int, rng) -> list[dict]:
        if table is not None:
            drawn = []
            for index in pick(table.weights, k, rng):
                values = dict(zip(table.params, table.rows[index]))
                env = {**fixed, **values}
                for w in component.weights:
                    self._draw_weight(w, env, rng, values)
                drawn.append(values)
            return drawn
        split = self.counter.residue_split(component, fixed)
        if split is not None:
            return self._draw_residues(split, k, rng)
        first = component.params[0]
        peeled = [q for w in component.weights for q in peeled_params(w)]
        rest = set(component.params[1:]) | set(peeled)
        params = tuple(q for q in self.plan.order if q in rest)
        factors = list(component.factors) + [Factor("domain", q, self.counter.scope(q)) for q in peeled]
        children = []
        for value in self.counter.domain_values(first, fixed):
            child = Problem(params, factors, {**fixed, first: value})
            children.append((value, child, self._count(child).count))
        slots: dict[int, list[int]] = {}
        for slot, index in enumerate(pick([count for _, _, count in children], k, rng)):
            slots.setdefault(index, []).append(slot)
        drawn: list = [None] * k
        for index in sorted(slots):
            value, child, _ = children[index]
            for slot, values in zip(slots[index], self._draw(child, len(slots[index]), rng)):
                values[first] = value
                drawn[slot] = values
        return drawn

    def _draw_residues(self, split, k: int, rng) -> list[dict]:
        """Draw a component with a wide parameter used only modulo a constant: a residue class
        in proportion to (class size * count of the rest), the rest from the sub-space at the
        class's representative (the same sub-space for every value of the class), then the wide
        parameter uniformly within its class, by arithmetic (its range is never listed)."""
        x, classes, rest, stride = split
        children = []
        for value, size in classes:
            child = rest_at(rest, x, value, abs(stride))
            children.append((value, size, child, size * self._count(child).count))
        slots: dict[int, list[int]] = {}
        for slot, index in enumerate(pick([weight for *_, weight in children], k, rng)):
            slots.setdefault(index, []).append(slot)
        drawn: list = [None] * k
        for index in sorted(slots):
            value, size, child, _ = children[index]
            for slot, values in zip(slots[index], self._draw(child, len(slots[index]), rng)):
                values[x] = value + stride * below(size, rng)
                drawn[slot] = values
        return drawn

    def _draw_weight(self, w: Weight, env: dict, rng, out: dict):
        """Draw a peeled parameter and its peeled descendants given `env` (updated in place)."""
        domain = self.counter.domain_values(w.param, env)
        if w.children:
            weights = []
            for value in domain:
                inner = {**env, w.param: value}
                product = 1
                for child in w.children:
                    product *= self.counter.weight(child, inner)
                    if not product:
                        break
                weights.append(product)
            value = domain[pick(weights, 1, rng)[0]]
        else:
            value = domain[below(domain_size(domain), rng)]
        env[w.param] = out[w.param] = value
        for child in w.children:
            self._draw_weight(child, env, rng, out)


# ---------------------------------------------------------------------------------- randomness
def below(n: int, rng: np.random.Generator) -> int:
    """A uniform integer in [0, n), for any positive Python int (counts can pass 2**63)."""
    if n <= 0:
        raise ValueError(f"cannot draw below {n}")
    if n < 2**63:
        return int(rng.integers(0, n))
    bits = n.bit_length()
    while True:  # rejection: exact for any n
        value = 0
        for _ in range((bits + 62) // 63):
            value = (value << 63) | int(rng.integers(0, 2**63))
        value &= (1 << bits) - 1
        if value < n:
            return value


def pick(weights: list[int], k: int, rng: np.random.Generator) -> list[int]:
    """k independent indices, index i with probability weights[i] / sum(weights) (exact)."""
    cumulative = list(itertools.accumulate(weights))
    total = cumulative[-1] if cumulative else 0
    if k and total <= 0:
        raise ValueError("cannot pick from weights that sum to zero")
    if total < 2**62:
        draws = rng.integers(0, total, size=k) if k else np.empty(0, dtype=np.int64)
        return np.searchsorted(np.asarray(cumulative, dtype=np.int64), draws, side="right").tolist()
    return [bisect.bisect_right(cumulative, below(total, rng)) for _ in range(k)]
