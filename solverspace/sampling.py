"""Uniform random samples and index-addressable configurations, without listing the space.

Every method sees the space as its canonical enumeration order (the C enumerator's output
order) and draws *positions*: `numpy.random.Generator(PCG64(seed))` picks n distinct positions
(or n positions with replacement) uniformly in [0, size), and the method returns the
configurations at those positions. So a sample depends only on the seed, the space and n, never
on the thread count, and the first m rows of a sample of n are themselves a uniform sample of m.

Methods:
- `exact` (default): the compiled enumerator counts the configurations under each prefix of the
  outer loops (its work units), then fills only the units that hold the drawn positions. Exactly
  uniform; memory is bounded by the prefix table plus one batch of units.
- `reference`: lists the whole space in Python (small spaces only; exactly uniform).
- `cpsat`: exact counts from CP-SAT as the oracle of self-reducibility (translators.cpsat_sample),
  for spaces the compiled enumerator does not accept. Exactly uniform; it draws configurations,
  not positions (it has no canonical order), so its samples differ from the other methods' for
  the same seed. Without replacement, repeated draws are skipped: the result is distributed as
  n distinct configurations drawn one after another uniformly among those not yet drawn.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import SolverspaceError


class SampleSizeError(SolverspaceError, ValueError):
    """More configurations requested than the space has."""


@dataclass(frozen=True)
class SampleInfo:
    """What reproduces a sample: keep it next to the sample file."""

    method: str
    seed: int
    n: int
    replace: bool
    size: int
    guarantee: str


def check_sample_size(size: int, n: int, replace: bool):
    if n < 0:
        raise SampleSizeError(f"sample size n={n} must be non-negative")
    if not replace and n > size:
        raise SampleSizeError(f"cannot draw {n} distinct configurations: the space has {size}",
                              hint="ask for fewer, or sample with replacement (--with-replacement)")
    if size == 0:
        if n:
            raise SampleSizeError(f"cannot draw {n} configurations: the space is empty")


def draw_positions(size: int, n: int, seed: int, replace: bool) -> np.ndarray:
    """n positions in [0, size), uniformly; distinct unless `replace`."""
    check_sample_size(size, n, replace)
    if size == 0:
        return np.empty(0, dtype=np.int64)
    rng = np.random.Generator(np.random.PCG64(seed))
    if replace:
        return rng.integers(0, size, size=n, dtype=np.int64)
    return rng.choice(size, size=n, replace=False).astype(np.int64)


class PositionSampler:
    """A method that maps positions of the canonical order to configurations."""

    def draw(self, n: int, seed: int, replace: bool) -> np.ndarray:
        return self.rows_at(draw_positions(self.size(), n, seed, replace))


class ExactSampler(PositionSampler):
    """Positions through the compiled enumerator's per-unit counts."""

    name = "exact"
    guarantee = "exactly uniform over the valid configurations (positions drawn uniformly)"

    def __init__(self, space, threads=None):
        from translators.c_backend import CBackend
        self.enumerator = CBackend(threads=threads).enumerator(space.plan)

    def size(self) -> int:
        return int(self.enumerator.offsets()[-1])

    def rows_at(self, positions) -> np.ndarray:
        return self.enumerator.decode(self.enumerator.rows_at(positions))

    def index(self, values: dict) -> int | None:
        return self.enumerator.index_of(values)


class ReferenceSampler(PositionSampler):
    """Lists the space in Python: for small spaces the C backend does not accept."""

    name = "reference"
    guarantee = "exactly uniform over the valid configurations (the whole space is listed)"

    def __init__(self, space, threads=None):
        self.columns = space.columns()
        self.rows = list(space.rows())
        self.position = {row: i for i, row in enumerate(self.rows)}

    def size(self) -> int:
        return len(self.rows)

    def rows_at(self, positions) -> np.ndarray:
        from .space import rows_to_array
        return rows_to_array([self.rows[int(i)] for i in positions], self.columns)

    def index(self, values: dict) -> int | None:
        return self.position.get(tuple(values[c] for c in self.columns))


class CpSatSampler:
    """Configurations drawn by self-reducibility over exact CP-SAT counts."""

    name = "cpsat"
    guarantee = ("exactly uniform over the valid configurations (self-reducibility with exact CP-SAT "
                 "counts; configurations drawn directly, not by position)")

    def __init__(self, space, threads=None, **options):
        from translators.cpsat import CpSatBackend
        from translators.cpsat_count import Options
        from translators.cpsat_sample import SelfReducibleSampler
        settings = CpSatBackend(workers=threads).options()
        settings["time_limit"] = None  # a stopped count cannot give uniform draws
        self.columns = space.columns()
        self.sampler = SelfReducibleSampler(space.plan, Options(**settings), **options)

    def size(self) -> int:
        return self.sampler.size()

    def draw(self, n: int, seed: int, replace: bool) -> np.ndarray:
        from .space import rows_to_array
        check_sample_size(self.size(), n, replace)
        rng = np.random.Generator(np.random.PCG64(seed))
        if replace:
            rows = [self._row(c) for c in self.sampler.draw(n, rng)]
        else:
            rows, seen = [], set()
            while len(rows) < n:  # an i.i.d. stream, repeats skipped
                for config in self.sampler.draw(n - len(rows), rng):
                    row = self._row(config)
                    if row not in seen:
                        seen.add(row)
                        rows.append(row)
        return rows_to_array(rows, self.columns)

    def _row(self, config: dict) -> tuple:
        return tuple(config[c] for c in self.columns)


SAMPLERS = {"exact": ExactSampler, "reference": ReferenceSampler, "cpsat": CpSatSampler}


def get_sampler(space, method: str = "exact", threads=None):
    factory = SAMPLERS.get(method)
    if factory is None:
        raise SolverspaceError(f"unknown sampling method {method!r}", hint=f"methods: {', '.join(SAMPLERS)}")
    return factory(space, threads=threads)


def sample(space, n: int, seed: int, *, replace: bool = False, method: str = "exact", threads=None):
    """(structured array of n configurations, SampleInfo)."""
    sampler = get_sampler(space, method, threads)
    rows = sampler.draw(n, seed, replace)
    return rows, SampleInfo(method, seed, n, replace, sampler.size(), sampler.guarantee)
