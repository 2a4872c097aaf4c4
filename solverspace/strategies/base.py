"""What every search strategy shares: the ask/tell loop over valid configurations, their features,
and the candidates an acquisition is maximised over.

A strategy proposes (`ask`) a valid configuration it has not proposed before and is told
(`tell`) its time, or None when it did not run (a compile error, a timeout): such a
configuration is *failed*, and the model learns it as worse than every measured one. Nothing is
ever a repaired point of the value-list box: candidates are valid configurations, either

- **listed** (`Listed`): every valid configuration, when the space has at most `list_limit` of
  them (the compiled enumerator's `to_array`), or
- **pooled** (`Pooled`): exact uniform samples (`Space.sample`, a fresh seed per refresh) plus
  the valid neighbours (`Space.neighbors`) of the best configurations measured so far.

Features: a parameter's value becomes its rank among the value-list indices that valid
configurations take (`Features`), scaled to [0, 1]: a power-of-two list and a dense range both
become evenly spaced steps, and values no valid configuration takes are stepped over. A
parameter with one occurring value is dropped. A positive integer parameter with more than two
occurring values also gets its values' *dyadic* column (`dyadic`): the exponent of the largest
power of two that divides the value (16 -> 4, 48 -> 4, 64 -> 6), scaled to [0, 1]. Kernels run
faster on sizes divisible by large powers of two (whole warps, aligned loads, bank widths), which
a value's rank does not express: on the benchmark hub's 12 caches the column improved the model's
best/optimum at 100 measurements on 317 of the 476 (cache, seed) runs that differ, 159 worse
(60 seeds, paired Wilcoxon p = 7e-7; geometric mean 1.059 -> 1.050), and on 60 further seeds
used for no choice 321 better, 152 worse (p = 2e-8; 1.061 -> 1.052).
"""
from __future__ import annotations

import math

import numpy as np

from solverspace.core.errors import SolverspaceError

#: Spaces with at most this many valid configurations are listed whole as candidates.
LIST_LIMIT = 50_000


class SpaceExhausted(SolverspaceError, StopIteration):
    """Every valid configuration has been proposed."""


def config_tuples(rows) -> list[tuple]:
    """A structured array's rows as tuples of Python values (column order)."""
    return [tuple(row) for row in rows.tolist()]


def dyadic_exponent(value) -> float:
    """The exponent of the largest power of two dividing a positive integer (48 -> 4); NaN for
    anything else (a string, a bool, zero, a negative or fractional number)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value > 0:
        value = int(value)
        return float((value & -value).bit_length() - 1)
    return math.nan


class Features:
    """Value -> feature maps of one space: per parameter, value -> value-list index -> its rank
    among the indices valid configurations take (interpolated for an index not seen), scaled to
    [0, 1]; the one-hot blocks (`categorical`) and dyadic columns (`dyadic`) of the module's
    documentation."""

    def __init__(self, space, occurring: list[np.ndarray], *, categorical: bool = False, dyadic: bool = True):
        self.names = space.parameters
        lists = space.value_lists()
        self.position = [{value: i for i, value in enumerate(lists[name])} for name in self.names]
        self.occurring = [np.unique(np.asarray(o, dtype=np.int64)) for o in occurring]
        self.kept = [p for p, o in enumerate(self.occurring) if len(o) > 1]
        #: the parameters (more than two occurring values) that also get a one-hot block
        self.onehot = [p for p in self.kept if len(self.occurring[p]) > 2] if categorical else []
        #: per parameter with a dyadic column: (p, exponent per value-list index, lowest, highest occurring)
        self.dyadic = []
        for p in (self.kept if dyadic else []):
            exponents = np.array([dyadic_exponent(v) for v in lists[self.names[p]]])
            seen = exponents[self.occurring[p]]
            if len(seen) > 2 and not np.isnan(exponents).any() and seen.min() < seen.max():
                self.dyadic.append((p, exponents, seen.min(), seen.max()))

    @classmethod
    def from_rows(cls, space, rows: list[tuple], *, categorical: bool = False, dyadic: bool = True) -> "Features":
        positions = [{value: i for i, value in enumerate(values)} for values in space.value_lists().values()]
        occurring = [np.unique([lookup[row[p]] for row in rows]) if rows else np.zeros(0, np.int64)
                     for p, lookup in enumerate(positions)]
        return cls(space, occurring, categorical=categorical, dyadic=dyadic)

    def groups(self) -> list[int]:
        """Each feature column's length-scale group: one per ordinal column, one per one-hot
        block, one per dyadic column."""
        out = list(range(len(self.kept)))
        for g, p in enumerate(self.onehot):
            out += [len(self.kept) + g] * len(self.occurring[p])
        first = len(self.kept) + len(self.onehot)
        return out + list(range(first, first + len(self.dyadic)))

    def indices(self, rows: list[tuple]) -> np.ndarray:
        """Value-list indices of configurations (n x parameters, int64)."""
        out = np.empty((len(rows), len(self.names)), dtype=np.int64)
        for p, lookup in enumerate(self.position):
            out[:, p] = [lookup[row[p]] for row in rows]
        return out

    def encode(self, indices: np.ndarray) -> np.ndarray:
        """Features in [0, 1] of index rows (n x columns, float64): the kept parameters' ordinal
        columns, then the one-hot blocks (1/sqrt(2) at the value's place: two configurations that
        differ in the parameter are at distance 1 in its block), then the dyadic columns (a
        parameter gets one only when every value of its list is a positive integer)."""
        width = len(self.kept) + sum(len(self.occurring[p]) for p in self.onehot) + len(self.dyadic)
        out = np.zeros((indices.shape[0], width))
        for j, p in enumerate(self.kept):
            occ = self.occurring[p]
            out[:, j] = np.interp(indices[:, p], occ, np.linspace(0.0, 1.0, len(occ)))
        j = len(self.kept)
        for p in self.onehot:
            occ = self.occurring[p]
            where = np.searchsorted(occ, indices[:, p])
            hit = (where < len(occ)) & (occ[np.minimum(where, len(occ) - 1)] == indices[:, p])
            out[np.flatnonzero(hit), j + where[hit]] = math.sqrt(0.5)
            j += len(occ)
        for p, exponents, low, high in self.dyadic:
            out[:, j] = np.clip((exponents[indices[:, p]] - low) / (high - low), 0.0, 1.0)
            j += 1
        return out


class Candidates:
    """Valid configurations not yet proposed, for an acquisition to choose among: `current()`
    gives (configurations, features); `taken(config)` removes one for good."""

    features: Features

    def current(self, best: list[tuple]) -> tuple[list[tuple], np.ndarray]:
        raise NotImplementedError

    def taken(self, config: tuple) -> None:
        raise NotImplementedError

    def left(self) -> int | None:
        """How many are left to propose (None: not known, the space is not listed)."""
        return None


class Listed(Candidates):
    """Every valid configuration (the space listed once)."""

    def __init__(self, space, rows: list[tuple], *, categorical: bool = False, dyadic: bool = True):
        self.rows = rows
        self.features = Features.from_rows(space, rows, categorical=categorical, dyadic=dyadic)
        self.where = {row: i for i, row in enumerate(rows)}
        self.x = self.features.encode(self.features.indices(rows))
        self.alive = np.ones(len(rows), dtype=bool)
        self.alive_count = len(rows)

    def current(self, best):
        alive = np.flatnonzero(self.alive)
        return [self.rows[i] for i in alive], self.x[alive]

    def alive_positions(self) -> np.ndarray:
        return np.flatnonzero(self.alive)

    def taken(self, config):
        i = self.where.get(config)
        if i is not None and self.alive[i]:
            self.alive[i] = False
            self.alive_count -= 1

    def left(self):
        return self.alive_count


class Pooled(Candidates):
    """Exact uniform samples (`pool` of them drawn at start-up, `refresh` replaced by fresh draws every
    `refresh_every` calls: on the H100 GEMM space a sample costs about 1.3 CPU-ms, 100 draws 0.12 s and
    500 0.67 s, so a few fresh samples per proposal keep the proposal cost under 10 ms)
    plus the valid neighbours of the `around` best configurations measured so far (`Hamming` and
    `strictly-adjacent`: one parameter moved anywhere, or every parameter by one step)."""

    METHODS = ("Hamming", "strictly-adjacent")

    def __init__(self, space, seed: int, *, pool: int = 1000, refresh: int = 10, refresh_every: int = 10,
                 around: int = 3, categorical: bool = False, dyadic: bool = True):
        self.space, self.seed = space, seed
        self.calls, self.refresh_every = 0, refresh_every
        self.pool_size, self.refresh, self.around = pool, refresh, around
        self.draws = 0
        self.tried: set = set()
        first = self._draw(pool)
        self.features = Features.from_rows(space, first, categorical=categorical, dyadic=dyadic)
        self.pool = [c for c in dict.fromkeys(first) if c not in self.tried]
        self.near: dict = {}           # configuration -> its neighbours (asked once)
        self.encoded: dict = {}        # configuration -> its features (computed once)

    def _draw(self, n: int) -> list[tuple]:
        self.draws += 1
        n = min(n, len(self.space))
        return config_tuples(self.space.sample(n, seed=(self.seed * 1_000_003 + self.draws) % 2**63))

    def current(self, best):
        self.calls += 1
        if self.refresh and self.calls % self.refresh_every == 0:
            fresh = [c for c in self._draw(self.refresh) if c not in self.tried]
            keep = self.pool[len(fresh):] if len(self.pool) >= self.pool_size else self.pool
            self.pool = list(dict.fromkeys(keep + fresh))
        configs = dict.fromkeys(self.pool)
        for config in best[:self.around]:
            if config not in self.near:
                self.near[config] = [n for m in self.METHODS for n in self.space.neighbors(config, m)]
            configs.update(dict.fromkeys(n for n in self.near[config] if n not in self.tried))
        rows = list(configs)
        new = [c for c in rows if c not in self.encoded]
        if new:
            self.encoded.update(zip(new, self.features.encode(self.features.indices(new))))
        return rows, np.array([self.encoded[c] for c in rows])

    def taken(self, config):
        self.tried.add(config)
        if config in self.pool:
            self.pool.remove(config)
        self.encoded.pop(config, None)


def candidates_for(space, seed: int, list_limit: int = LIST_LIMIT, *, categorical: bool = False,
                   dyadic: bool = True) -> Candidates:
    """`Listed` when the space has at most `list_limit` valid configurations, else `Pooled`
    (`categorical`, `dyadic`: their features carry one-hot blocks, dyadic columns: `Features`)."""
    if len(space) <= list_limit:
        return Listed(space, listed(space), categorical=categorical, dyadic=dyadic)
    return Pooled(space, seed, categorical=categorical, dyadic=dyadic)


def listed(space) -> list[tuple]:
    """Every valid configuration: the compiled enumerator's array, or the reference's rows for a
    space the C backend refuses by construct (orders, values past 64 bits)."""
    from solverspace.translators.errors import UnsupportedConstruct
    try:
        return config_tuples(space.to_array("c"))
    except UnsupportedConstruct:
        return [tuple(row) for row in space.rows("reference")]


class Strategy:
    """The ask/tell loop: `ask()` a valid configuration never proposed before (a tuple in column
    order), `tell(config, time)` its time (None: failed). `counts` says where proposals came
    from. Subclasses choose in `_propose()`."""

    name = "strategy"

    def __init__(self, space, seed: int = 0):
        self.space, self.seed = space, seed
        self.rng = np.random.default_rng(seed)
        self.proposed: set = set()
        self.results: dict = {}        # configuration -> time (None: failed)
        self.counts: dict = {}
        self.last_source: str | None = None

    def ask(self) -> tuple:
        config, source = self._propose()
        if config in self.proposed:
            raise AssertionError(f"{self.name} proposed {config} twice")   # a bug of ours, not user input
        self.proposed.add(config)
        self.counts[source] = self.counts.get(source, 0) + 1
        self.last_source = source
        return config

    def tell(self, config: tuple, time: float | None) -> None:
        config = tuple(config)
        self.proposed.add(config)
        self.results[config] = None if time is None or not np.isfinite(time) else float(time)
        self._told(config)

    def _propose(self) -> tuple[tuple, str]:
        raise NotImplementedError

    def _told(self, config: tuple) -> None:
        """Called after each `tell` (a configuration measured, possibly not proposed by us)."""

    def best(self, k: int = 1) -> list[tuple]:
        ran = sorted((t, c) for c, t in self.results.items() if t is not None)
        return [c for _, c in ran[:k]]
