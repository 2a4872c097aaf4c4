"""Approximate counts and near-uniform samples with random parity (XOR) constraints.

The hashing approach of ApproxMC and UniGen, with CP-SAT enumerating the cells:

- The sampling set is the binary encoding of every parameter (`value - low = sum 2^j b_j`), so
  a cell's CP-SAT solutions are exactly the configurations whose bits satisfy the hash: each
  configuration is one CP-SAT solution (every other variable of the model is a function of the
  parameters, as counting already relies on).
- A hash with m rows is m random XOR constraints, each over a random half of the bits with a
  random right-hand side: a 3-wise independent family (H_xor). Rows are drawn once per round and
  the first m used, so cells shrink as m grows and the right m is found by binary search.
- `approximate_count(epsilon, delta)` is ApproxMC2 (Chakraborty, Meel, Vardi, IJCAI 2016):
  threshold 1 + 9.84 (1 + e/(1+e)) (1 + 1/e)^2, ceil(17 log2(3/delta)) rounds, median of
  |cell| * 2^m. Guarantee: P[count/(1+e) <= estimate <= (1+e) count] >= 1 - delta.
- `NearUniformSampler` is UniGen2 (Chakraborty, Fremont, Meel, Seshia, Vardi, TACAS 2015) with
  the parameters of its reference implementation (meelgroup/unigen): kappa 0.638, i.e. epsilon
  16; pivot 27; a cell is accepted when it holds 11 to 63 configurations, and gives 11 of them
  (multisampling). Guarantee, per sample: every configuration y has
  1/((1+e) N) <= P[y] <= (1+e)/N for the space's size N; samples from one cell are not
  independent of each other; an attempt can fail (no accepted cell) and is retried. A space
  with at most 63 configurations is listed and sampled exactly.

CP-SAT has no Gaussian elimination for XOR constraints (CryptoMiniSat, which UniGen uses, has):
a parity constraint propagates only once all but one of its bits are fixed, so enumerating a
cell costs about one pass of the search over the whole space (K40c GEMM: 6 s per cell). On the
spaces we have, the exact self-reducibility sampler is faster (see bench/sample.py); this mode
is for spaces whose exact counts do not finish, with the guarantee above, stated not improved.

Layering: cpsat.solver (`Options`, `new_solver`), cpsat.count (`Counter`) -> **cpsat.hashing** -> cpsat.backend
(the facade re-exports `approximate_count`).
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from solverspace.core.errors import OptionError

from .count import Counter
from .solver import Options, new_solver

#: UniGen2's parameters, as in its reference implementation.
KAPPA = 0.638
PIVOT = math.ceil(4.03 * (1 + 1 / KAPPA) ** 2)                      # 27
HI_THRESH = math.ceil(1 + math.sqrt(2) * (1 + KAPPA) * PIVOT)        # 64: accepted cells hold < 64
LO_THRESH = math.floor(PIVOT / (math.sqrt(2) * (1 + KAPPA)))         # 11
UNIGEN_EPSILON = (1 + KAPPA) * (7.44 + 0.392 / (1 - KAPPA) ** 2) - 1  # 16.1: the TACAS-15 bound


def approxmc_threshold(epsilon: float) -> int:
    return math.ceil(1 + 9.84 * (1 + epsilon / (1 + epsilon)) * (1 + 1 / epsilon) ** 2)


def approxmc_rounds(delta: float) -> int:
    return math.ceil(17 * math.log2(3 / delta))


@dataclass
class ApproximateCount:
    estimate: int
    epsilon: float
    delta: float
    exact: bool            # the space was small enough to count outright (estimate is the count)
    rounds: int
    cells: int             # cells enumerated
    seconds: float

    def describe(self) -> str:
        if self.exact:
            return f"{self.estimate} (exact: the space has fewer than the hashing threshold)"
        return (f"about {self.estimate}: within a factor {1 + self.epsilon:g} of the true count with "
                f"probability at least {1 - self.delta:g} (ApproxMC2, {self.rounds} rounds, {self.cells} cells)")


class HashedSpace:
    """The CP-SAT model of every parameter with its bits, and bounded cell enumeration."""

    def __init__(self, plan, options: Options | None = None):
        self.plan = plan
        self.options = options or Options(workers=1)
        self.counter = Counter(plan.model, plan, self.options)
        problem = self.counter.full_problem()
        self.lowering = self.counter.build(problem.params, problem.factors)
        cp = self.lowering.cp
        self.bits = []
        for p in plan.order:
            val = self.lowering.params[p]
            width = max(0, (val.hi - val.lo)).bit_length()
            bits = [cp.new_bool_var(f"{p}.bit{j}") for j in range(width)]
            cp.add(self.lowering.param_vars[p] - val.lo == sum((1 << j) * b for j, b in enumerate(bits)))
            self.bits.extend(bits)
        variables = [self.lowering.param_vars[p] for p in plan.order]
        cp.add_decision_strategy(variables, cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE)
        self.cells = 0

    def random_rows(self, count: int, rng: np.random.Generator) -> list[tuple[list, int]]:
        """`count` XOR rows over the bits: (bit indices, right-hand side)."""
        rows = []
        for _ in range(count):
            mask = rng.integers(0, 2, size=len(self.bits))
            rows.append((np.flatnonzero(mask).tolist(), int(rng.integers(0, 2))))
        return rows

    def cell(self, rows, limit: int) -> list[dict]:
        """Up to `limit` configurations satisfying every row (all of them if fewer)."""
        self.cells += 1
        model = self.lowering.cp.clone()
        for indices, rhs in rows:
            literals = [model.get_bool_var_from_proto_index(self.bits[i].index) for i in indices]
            if not literals:
                if rhs:
                    return []
                continue
            if not rhs:  # XOR(bits) == 0  <=>  XOR(bits with one negated) == 1
                literals[0] = literals[0].Not()
            model.add_bool_xor(literals)
        collector = _Collector(self.lowering, self.plan.order, limit)
        solver = new_solver(self.options, None, enumerate_all=True)
        status = solver.solve(model, collector)
        if status == cp_model.MODEL_INVALID:
            raise RuntimeError(f"invalid CP-SAT model with parity constraints: {model.validate()}")
        return collector.found


class _Collector(cp_model.CpSolverSolutionCallback):
    def __init__(self, lowering, order, limit):
        super().__init__()
        self.variables = [(p, lowering.param_vars[p]) for p in order]
        self.lowering, self.limit, self.found = lowering, limit, []

    def on_solution_callback(self):
        self.found.append({p: self.lowering.decode(p, self.value(v)) for p, v in self.variables})
        if len(self.found) >= self.limit:
            self.stop_search()


def approximate_count(plan, epsilon: float = 0.8, delta: float = 0.2, seed: int = 0,
                      options: Options | None = None, hashed: HashedSpace | None = None) -> ApproximateCount:
    """ApproxMC2: an estimate within a factor (1 + epsilon) with probability >= 1 - delta."""
    if not epsilon > 0 or not 0 < delta < 1:
        raise OptionError(f"need epsilon > 0 and 0 < delta < 1 (got epsilon={epsilon}, delta={delta})",
                          hint="e.g. --epsilon 0.8 --delta 0.2")
    start = time.perf_counter()
    hashed = hashed or HashedSpace(plan, options)
    cells_before = hashed.cells
    threshold = approxmc_threshold(epsilon)
    everything = hashed.cell([], threshold)
    if len(everything) < threshold:
        return ApproximateCount(len(everything), epsilon, delta, True, 0, hashed.cells - cells_before,
                                time.perf_counter() - start)
    rng = np.random.Generator(np.random.PCG64(seed))
    rounds = approxmc_rounds(delta)
    estimates = []
    for _ in range(rounds):
        rows = hashed.random_rows(len(hashed.bits), rng)
        low, high, size_at = 1, len(rows), {}
        while low < high:  # the smallest m whose cell is below the threshold (cells are nested)
            m = (low + high) // 2
            size_at[m] = len(hashed.cell(rows[:m], threshold))
            if size_at[m] < threshold:
                high = m
            else:
                low = m + 1
        size = size_at.get(low)
        if size is None:
            size = len(hashed.cell(rows[:low], threshold))
        if size < threshold:
            estimates.append(size * 2**low)
    estimate = round(statistics.median_low(estimates)) if estimates else 0
    return ApproximateCount(estimate, epsilon, delta, False, rounds, hashed.cells - cells_before,
                            time.perf_counter() - start)


class NearUniformSampler:
    """UniGen2: near-uniform configurations through random XOR cells (see the module docstring)."""

    epsilon = UNIGEN_EPSILON

    def __init__(self, plan, options: Options | None = None, seed: int = 0):
        self.hashed = HashedSpace(plan, options)
        self.rng = np.random.Generator(np.random.PCG64(seed))
        small = self.hashed.cell([], HI_THRESH)
        self.listed = small if len(small) < HI_THRESH else None
        if self.listed is not None:
            self.count = ApproximateCount(len(small), 0.0, 0.0, True, 0, 1, 0.0)
        else:  # UniGen2 asks ApproxMC for a (0.8, 0.8) estimate to place the hash size
            self.count = approximate_count(plan, 0.8, 0.8, seed=int(self.rng.integers(2**32)), hashed=self.hashed)
            q = round(math.log2(self.count.estimate) + math.log2(1.8) - math.log2(PIVOT))
            self.sizes = [m for m in (q - 2, q - 1, q) if m >= 0] or [0]
        self.failures = 0

    def draw_cell(self) -> list[dict]:
        """One UniGen2 call: LO_THRESH near-uniform configurations from one accepted cell, or
        (small space) one exactly uniform configuration; [] when no cell was accepted."""
        if self.listed is not None:
            return [self.listed[int(self.rng.integers(len(self.listed)))]]
        rows = self.hashed.random_rows(max(self.sizes), self.rng)
        for m in self.sizes:
            cell = self.hashed.cell(rows[:m], HI_THRESH)
            if LO_THRESH <= len(cell) < HI_THRESH:
                chosen = self.rng.choice(len(cell), size=LO_THRESH, replace=False)
                return [cell[int(i)] for i in chosen]
        self.failures += 1
        return []
