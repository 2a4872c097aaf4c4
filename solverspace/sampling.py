"""Uniform random samples and index-addressable configurations, without listing the space.

Every method sees the space as its canonical enumeration order (the C enumerator's output
order) and draws *positions*: `numpy.random.Generator(PCG64(seed))` picks n distinct positions
(or n positions with replacement) uniformly in [0, size), and the method returns the
configurations at those positions. So a sample depends only on the seed, the space and n, never
on the thread count, and the first m rows of a sample of n are themselves a uniform sample of m.
Spaces of 2**63 configurations or more get positions as Python ints (`draw_big_positions`).
A sample is held in memory before it is written: at most MAX_SAMPLE rows.

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
- `cpsat-xor`: near-uniform (UniGen2 with random XOR cells, translators.cpsat_hash), for spaces
  whose exact counts do not finish: each sample has probability within a factor 1 + epsilon
  (epsilon 16) of 1/size; the size it reports is an ApproxMC estimate with (0.8, 0.8).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import SolverspaceError
from .options import check_seed, check_threads


class SampleSizeError(SolverspaceError, ValueError):
    """More configurations requested than the space has, or than a sample can hold."""


MAX_SAMPLE = 1 << 30   # rows of one sample (held in memory with their positions before writing)


@dataclass(frozen=True)
class SampleInfo:
    """What reproduces a sample: keep it next to the sample file."""

    method: str
    seed: int
    n: int
    replace: bool
    size: int
    guarantee: str
    size_exact: bool = True     # False: `size` is an estimate (the cpsat-xor method)


def check_sample_size(size: int, n: int, replace: bool):
    if n < 0:
        raise SampleSizeError(f"sample size n={n} must be non-negative")
    if n > MAX_SAMPLE:
        raise SampleSizeError(f"sample size n={n} is more than {MAX_SAMPLE} (2**30): a sample is held in memory, "
                              f"with its positions, before it is written",
                              hint="ask for fewer; for every configuration use `solverspace enumerate`")
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
    if size >= 2 ** 63:
        return draw_big_positions(rng, size, n, replace)
    if replace:
        return rng.integers(0, size, size=n, dtype=np.int64)
    return rng.choice(size, size=n, replace=False).astype(np.int64)


def draw_big_positions(rng: np.random.Generator, size: int, n: int, replace: bool) -> np.ndarray:
    """n positions in [0, size) for a size of 2**63 or more (NumPy's integers stop at 64 bits),
    as an object array of Python ints: each draw takes size.bit_length() bits from 64-bit words
    of the seeded generator and is rejected if not below size (fewer than two tries on average);
    without replacement a repeat is drawn again, so each position is uniform among those not yet
    drawn, as in `rng.choice`. Reproducible from the seed alone, whatever the thread count."""
    bits = size.bit_length()
    words = -(-bits // 64)
    excess = 64 * words - bits
    positions, seen = [], set()
    while len(positions) < n:
        raw = rng.integers(0, 2 ** 64, size=words, dtype=np.uint64, endpoint=False)
        value = int.from_bytes(raw.tobytes(), "little") >> excess
        if value >= size or (not replace and value in seen):
            continue
        seen.add(value)
        positions.append(value)
    result = np.empty(n, dtype=object)
    result[:] = positions
    return result


class PositionSampler:
    """A method that maps positions of the canonical order to configurations."""

    def draw(self, n: int, seed: int, replace: bool) -> np.ndarray:
        return self.rows_at(draw_positions(self.size(), n, seed, replace))


class ExactSampler(PositionSampler):
    """Positions through the compiled enumerator's per-unit counts."""

    name = "exact"
    guarantee = "exactly uniform over the valid configurations (positions drawn uniformly)"

    def __init__(self, space, threads=None, *, seed: int = 0, progress=None):
        from solverspace.translators.c_backend import CBackend
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

    def __init__(self, space, threads=None, *, seed: int = 0, progress=None):
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

    def __init__(self, space, threads=None, *, seed: int = 0, progress=None, **options):
        from solverspace.translators.cpsat import CpSatBackend
        from solverspace.translators.cpsat_count import Options
        from solverspace.translators.cpsat_sample import SelfReducibleSampler
        settings = CpSatBackend(workers=threads).options()
        settings["time_limit"] = None  # a stopped count cannot give uniform draws
        self.columns = space.columns()
        self.sampler = SelfReducibleSampler(space.plan, Options(**settings), progress=progress, **options)

    def size(self) -> int:
        return self.sampler.size()

    def draw(self, n: int, seed: int, replace: bool) -> np.ndarray:
        from .space import rows_to_array
        check_sample_size(self.size(), n, replace)
        rng = np.random.Generator(np.random.PCG64(seed))
        rows = collect_rows(lambda wanted: self.sampler.draw(wanted, rng), n, replace, self.columns)
        return rows_to_array(rows, self.columns)


class XorSampler:
    """Near-uniform configurations from random XOR cells (UniGen2); see translators.cpsat_hash."""

    name = "cpsat-xor"

    def __init__(self, space, threads=None, *, seed: int = 0, progress=None):
        from solverspace.translators.cpsat_count import Options
        self.space = space
        self.columns = space.columns()
        self.options = Options(workers=threads or 1)
        self._for_seed(seed)

    def _for_seed(self, seed: int):
        """The hashing state of one seed (its ApproxMC2 count included): a new seed starts over."""
        from solverspace.translators.cpsat_hash import NearUniformSampler
        if getattr(self, "seed", None) != seed:
            self.sampler, self.seed = NearUniformSampler(self.space.plan, self.options, seed), seed
        return self.sampler

    @property
    def size_exact(self) -> bool:
        return self.sampler.count.exact

    @property
    def guarantee(self) -> str:
        sampler = self.sampler
        if sampler.listed is not None:
            return "exactly uniform (the space is small enough to list: no hashing needed)"
        return (f"near-uniform (UniGen2): each configuration's probability within a factor {1 + sampler.epsilon:.1f} "
                f"of 1/size; size {sampler.count.describe()}")

    def size(self) -> int:
        return self.sampler.count.estimate

    def draw(self, n: int, seed: int, replace: bool) -> np.ndarray:
        from .space import rows_to_array
        sampler = self._for_seed(seed)
        count = sampler.count
        if count.exact:
            check_sample_size(count.estimate, n, replace)
        elif not replace and n > count.estimate / (1 + count.epsilon):
            raise SampleSizeError(
                f"cannot promise {n} distinct configurations: the space has {count.describe()}",
                hint="ask for at most the estimate divided by 1.8, sample with replacement, or use "
                     "--method exact / cpsat, which know the exact size")
        rows = collect_rows(lambda wanted: sampler.draw_cell(), n, replace, self.columns, patience=200)
        return rows_to_array(rows, self.columns)


def collect_rows(next_batch, n: int, replace: bool, columns, patience: int | None = None) -> list[tuple]:
    """n rows from a stream of independent draws (`next_batch(still_wanted)` gives a list of
    configurations), repeats skipped unless `replace`: without replacement this is n distinct
    configurations, each uniform among those not drawn yet when the draws are. `patience`: how
    many batches in a row may bring nothing new before giving up."""
    rows, seen, fruitless = [], set(), 0
    while len(rows) < n:
        fresh = False
        for config in next_batch(n - len(rows)):
            row = tuple(config[c] for c in columns)
            if replace or row not in seen:
                seen.add(row)
                rows.append(row)
                fresh = True
                if len(rows) == n:
                    break
        fruitless = 0 if fresh else fruitless + 1
        if patience is not None and fruitless >= patience:
            raise SampleSizeError(f"found only {len(rows)} distinct configurations after {patience} draws "
                                  f"in a row gave nothing new", hint="ask for fewer")
    return rows


SAMPLERS = {"exact": ExactSampler, "reference": ReferenceSampler, "cpsat": CpSatSampler, "cpsat-xor": XorSampler}


def get_sampler(space, method: str = "exact", threads=None, *, seed: int = 0, progress=None):
    factory = SAMPLERS.get(method)
    if factory is None:
        raise SolverspaceError(f"unknown sampling method {method!r}", hint=f"methods: {', '.join(SAMPLERS)}")
    return factory(space, threads=threads, seed=seed, progress=progress)


def sample(space, n: int, seed: int, *, replace: bool = False, method: str = "exact", threads=None, progress=None):
    """(structured array of n configurations, SampleInfo); `progress(done, total)` follows the
    CP-SAT count of the `cpsat` method."""
    check_seed(seed), check_threads(threads)
    sampler = get_sampler(space, method, threads, seed=seed, progress=progress)
    try:
        rows = sampler.draw(n, seed, replace)
    except MemoryError:
        raise SampleSizeError(f"not enough memory to hold a sample of {n} configurations",
                              hint="ask for fewer") from None
    return rows, SampleInfo(method, seed, n, replace, sampler.size(), sampler.guarantee,
                            getattr(sampler, "size_exact", True))
