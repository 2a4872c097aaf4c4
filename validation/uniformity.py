"""Is a sample uniform? A chi-square test of sampled rows against the full listing, by cells of
a few columns (used by the sampling tests and `bench/sample.py`; needs SciPy, the `test` extra)."""
from __future__ import annotations

import numpy as np


def cell_counts(rows, names=("dim_m", "dim_n")) -> dict[tuple, int]:
    """How many rows fall in each cell (each combination of the values of `names`)."""
    keys = np.stack([rows[n].astype(np.int64) for n in names], axis=1)
    cells, counts = np.unique(keys, axis=0, return_counts=True)
    return {tuple(c): n for c, n in zip(cells.tolist(), counts.tolist())}


def chi_square_p(sample_rows, full_rows, names=("dim_m", "dim_n")) -> float:
    """The p-value of a chi-square test that `sample_rows` were drawn uniformly from `full_rows`
    (cells expected to hold fewer than 5 samples are pooled, as the approximation needs)."""
    from scipy import stats
    expected_cells = cell_counts(full_rows, names)
    observed_cells = cell_counts(sample_rows, names)
    total, n = len(full_rows), len(sample_rows)
    keys = sorted(expected_cells)
    observed = np.array([observed_cells.get(k, 0) for k in keys], dtype=float)
    expected = np.array([expected_cells[k] * n / total for k in keys])
    small = expected < 5
    if small.any():
        observed = np.append(observed[~small], observed[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    strays = set(observed_cells) - set(expected_cells)
    if strays:
        raise ValueError(f"sampled rows fall in cells the full listing does not have: {sorted(strays)[:3]}")
    return stats.chisquare(observed, expected).pvalue
