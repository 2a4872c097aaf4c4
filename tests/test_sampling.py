"""Uniform sampling and index-addressable configurations (exact method through the C enumerator)."""

import numpy as np
import pytest
from scipy import stats
from solverspace import Space
from solverspace.analysis.check import check as check_config
from solverspace.core.draws import SampleSizeError, draw_positions
from solverspace.validation.uniformity import chi_square_p
from tests.helpers import UNIFORMITY_SPACES as SMALL

pytestmark = pytest.mark.needs_cc


@pytest.fixture(scope="module")
def k40c():
    return Space.load("gemm")


@pytest.fixture(scope="module")
def k40c_rows(k40c):
    return k40c.to_array("c")


def test_k40c_exact_samples_are_uniform_by_cell(k40c, k40c_rows):
    sample = k40c.sample(100_000, seed=2026)
    assert len(np.unique(sample)) == 100_000  # without replacement: no duplicates
    assert chi_square_p(sample, k40c_rows) > 0.01


def test_a_biased_sampler_fails_the_same_test(k40c, k40c_rows):
    """Picking a work unit (prefix) uniformly and then a row in it is not uniform: the test has power."""
    from solverspace.registry.backends import get_backend
    enumerator = get_backend("c", "positions").positions(k40c.plan).enumerator
    offsets = enumerator.offsets()
    counts = np.diff(offsets)
    rng = np.random.default_rng(2026)
    units = rng.choice(np.flatnonzero(counts), size=100_000)
    positions = offsets[units] + (rng.random(100_000) * counts[units]).astype(np.int64)
    biased = k40c_rows[positions]
    assert chi_square_p(biased, k40c_rows) < 1e-6


def test_samples_are_valid_distinct_reproducible_and_indexable(k40c):
    sample = k40c.sample(500, seed=11)
    assert np.array_equal(sample, k40c.sample(500, seed=11))
    assert not np.array_equal(sample, k40c.sample(500, seed=12))
    names = sample.dtype.names
    for row in sample[:200].tolist():
        config = dict(zip(names, row))
        assert check_config(k40c.plan, config).valid
        assert k40c[k40c.index(config)] == row


def test_sample_is_the_same_for_any_thread_count(k40c):
    from solverspace.scale.sampling import sample
    one, _ = sample(k40c, 300, 5, threads=1)
    two, _ = sample(k40c, 300, 5, threads=2)
    assert np.array_equal(one, two)


def test_indexing_agrees_with_the_enumeration_order(k40c, k40c_rows):
    for position in (0, 1, 77, 123_456, len(k40c_rows) - 1):
        assert k40c[position] == tuple(k40c_rows[position].tolist())
    assert k40c[-1] == tuple(k40c_rows[-1].tolist())
    assert len(k40c) == 1_207_600
    with pytest.raises(IndexError, match="1207600"):
        k40c[1_207_600]
    invalid = dict(zip(k40c.parameters, k40c[0]), dim_m=3)
    with pytest.raises(ValueError, match="not a valid configuration"):
        k40c.index(invalid)


@pytest.mark.parametrize("name", list(SMALL))
@pytest.mark.parametrize("method", ["exact", "reference"])
def test_small_spaces_per_configuration_chi_square(name, method):
    space = Space.from_source(SMALL[name])
    rows = list(space.rows("reference"))
    assert 10 <= len(rows) <= 200
    from solverspace.scale.sampling import sample
    drawn, info = sample(space, 40 * len(rows), seed=3, replace=True, method=method)
    assert info.size == len(rows)
    index = {row: i for i, row in enumerate(rows)}
    observed = np.bincount([index[tuple(r)] for r in drawn.tolist()], minlength=len(rows))
    assert stats.chisquare(observed).pvalue > 0.01
    assert set(map(tuple, drawn.tolist())) <= set(rows)


def test_too_many_is_an_error_stating_the_size():
    space = Space.load("gemm", {"device": "tiny"})
    with pytest.raises(SampleSizeError, match="the space has 336"):
        space.sample(337, seed=1)
    assert len(space.sample(337, seed=1, replace=True)) == 337
    assert len(draw_positions(10, 10, 0, False)) == 10


def test_cli_sample_records_seed_and_method(tmp_path):
    import json
    from solverspace.cli import main
    target = tmp_path / "s.csv"
    assert main(["sample", "gemm", "-n", "100", "--seed", "9", "-o", str(target)]) == 0
    meta = json.loads((tmp_path / "s.csv.meta.json").read_text())
    assert meta["seed"] == 9 and meta["method"] == "exact" and meta["space_size"] == 1_207_600
    lines = target.read_text().splitlines()
    assert len(lines) == 101 and lines[0].startswith("dim_m,dim_n")
    again = tmp_path / "again.npy"
    assert main(["sample", "gemm", "-n", "100", "--seed", "9", "-o", str(again)]) == 0
    assert [",".join(map(str, r)) for r in np.load(again).tolist()] == lines[1:]
