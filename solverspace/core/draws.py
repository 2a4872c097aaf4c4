"""Drawing positions and sample sizes: the part of sampling every method shares.

A sample is a set of *positions* of the canonical order (or of configurations, for the CP-SAT
methods), drawn from `numpy.random.Generator(PCG64(seed))`, so it depends only on the seed, the
space and n. This module sits below the backends: the samplers they provide use it, and so does
`solverspace.scale.sampling`, which picks the sampler.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from solverspace.core.errors import SolverspaceError

if TYPE_CHECKING:  # NumPy is imported where used: a count imports none
    import numpy as np


class SampleSizeError(SolverspaceError, ValueError):
    """More configurations requested than the space has, or than a sample can hold."""


MAX_SAMPLE = 1 << 30   # rows of one sample (held in memory with their positions before writing)


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
    import numpy as np
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
    import numpy as np
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


class Positions:
    """A space seen as its canonical order: `size()`, `rows_at(positions)`, `index(values)`.
    Its samples are uniformly drawn positions (the `exact` and `reference` methods)."""

    def draw(self, n: int, seed: int, replace: bool) -> np.ndarray:
        return self.rows_at(draw_positions(self.size(), n, seed, replace))
