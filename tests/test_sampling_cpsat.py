"""The CP-SAT sampling method: self-reducibility over exact CP-SAT counts (translators.cpsat_sample)."""
import collections

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from scipy import stats

from solverspace import Space
from solverspace.analysis.check import check as check_config
from solverspace.scale.sampling import SampleSizeError, sample
from solverspace.translators.cpsat.samplers import CpSatSampler
from solverspace.translators.cpsat.count import Options
from solverspace.translators.cpsat.sample import SelfReducibleSampler, below, pick
from solverspace.validation.generate import spaces

from solverspace.validation.uniformity import chi_square_p

from tests.helpers import UNIFORMITY_SPACES as SMALL, per_configuration_p

#: Peeled parameters with children (g under f), a categorical parameter, independent components
#: and a closure-free @iterator: every path of the sampler.
MIXED = """
a = range(1, 6)
b = range(a, 8)
c = iterator(["x", "y", "z"])
@iterator
def d(b):
    return range(0, b % 3 + 1)
e = range(0, 3)
f = range(1, 4)
g = range(0, f + 1)
s = a + b
@require
def even_or_x(s, c):
    return s % 2 == 0 or c == "x"
require(e * f != 2)
"""

SPACES = {**SMALL, "mixed": MIXED}


@pytest.mark.parametrize("name", list(SPACES))
@pytest.mark.parametrize("table_limit", [0, 200_000], ids=["split-only", "tables"])
def test_small_spaces_per_configuration_chi_square(name, table_limit):
    """table_limit=0 never lists a component: every draw descends by counts, value by value."""
    space = Space.from_source(SPACES[name])
    size = space.count("reference")
    sampler = CpSatSampler(space, threads=1, table_limit=table_limit)
    assert sampler.size() == size
    drawn = sampler.draw(40 * size, seed=5, replace=True)
    configs = [tuple(r) for r in drawn.tolist()]
    assert set(configs) <= set(space.rows("reference"))
    assert per_configuration_p(space, configs) > 0.01


def test_biased_descent_fails_the_same_test():
    """Choosing each value of the first parameter uniformly (not by its count) is detected."""
    space = Space.from_source(MIXED)
    rows = list(space.rows("reference"))
    by_a = collections.defaultdict(list)
    for row in rows:
        by_a[row[0]].append(row)
    rng = np.random.default_rng(5)
    keys = sorted(by_a)
    biased = []
    for _ in range(40 * len(rows)):
        group = by_a[keys[rng.integers(len(keys))]]
        biased.append(group[rng.integers(len(group))])
    assert per_configuration_p(space, biased) < 1e-6


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(spaces(max_candidates=400))
def test_generated_spaces_per_configuration_chi_square(source):
    """Most generated spaces are empty or tiny: only those with 2-100 configurations count."""
    space = Space.from_source(source)
    size = space.count("reference")
    assume(2 <= size <= 100)
    sampler = CpSatSampler(space, threads=1, table_limit=0)
    assert sampler.size() == size
    configs = [tuple(r) for r in sampler.draw(40 * size, seed=11, replace=True).tolist()]
    assert per_configuration_p(space, configs) > 0.001, source


def test_samples_are_valid_distinct_reproducible_and_sized():
    space = Space.load("gemm", {"device": "tiny"})
    drawn = space.sample(200, seed=4, method="cpsat")
    configs = [tuple(r) for r in drawn.tolist()]
    assert len(set(configs)) == 200
    for config in configs[:50]:
        assert check_config(space.plan, dict(zip(space.parameters, config))).valid
    assert np.array_equal(drawn, space.sample(200, seed=4, method="cpsat"))
    assert not np.array_equal(drawn, space.sample(200, seed=5, method="cpsat"))
    everything = space.sample(336, seed=4, method="cpsat")  # the whole space, by rejection of repeats
    assert sorted(map(tuple, everything.tolist())) == sorted(space.rows("reference"))
    with pytest.raises(SampleSizeError, match="the space has 336"):
        space.sample(337, seed=1, method="cpsat")
    assert len(space.sample(400, seed=1, method="cpsat", replace=True)) == 400


def test_same_sample_for_any_worker_count():
    space = Space.load("gemm", {"device": "tiny"})
    one = sample(space, 50, 8, method="cpsat", threads=1)[0]
    two = sample(space, 50, 8, method="cpsat", threads=2)[0]
    assert np.array_equal(one, two)


def test_k40c_samples_are_uniform_by_cell():
    """The issue's target: 1,000 K40c samples pass the (dim_m, dim_n) cell chi-square."""
    k40c = Space.load("gemm")
    drawn = k40c.sample(1_000, seed=2026, method="cpsat")
    assert len(np.unique(drawn)) == 1_000
    assert chi_square_p(drawn, k40c.to_array("c")) > 0.01


@pytest.mark.slow
def test_k40c_samples_by_descent_are_uniform_by_cell():
    """The same with components listed only below 2,000 solutions: most draws descend by counts."""
    k40c = Space.load("gemm")
    sampler = CpSatSampler(k40c, threads=1, table_limit=2_000)
    drawn = sampler.draw(1_000, seed=2026, replace=False)
    assert chi_square_p(drawn, k40c.to_array("c")) > 0.01


def test_weighted_pick_and_big_integers_are_exact():
    rng = np.random.Generator(np.random.PCG64(0))
    picks = pick([0, 3, 0, 1], 40_000, rng)
    counts = np.bincount(picks, minlength=4)
    assert counts[0] == counts[2] == 0
    assert stats.chisquare(counts[[1, 3]], [30_000, 10_000]).pvalue > 0.01
    huge = 3 * 2**70
    values = [below(huge, rng) for _ in range(2_000)]
    assert all(0 <= v < huge for v in values)
    assert stats.chisquare(np.bincount([v * 3 // huge for v in values], minlength=3)).pvalue > 0.01
    assert set(pick([2**70, 2**70], 200, rng)) == {0, 1}


def test_counts_are_memoised_on_the_separator():
    """Draws that reach the same values of the parameters a sub-space reads share its count."""
    space = Space.from_source(MIXED)
    sampler = SelfReducibleSampler(space.plan, Options(workers=1), table_limit=0)
    sampler.draw(500, np.random.Generator(np.random.PCG64(1)))
    first = sampler.counts_made
    sampler.draw(500, np.random.Generator(np.random.PCG64(2)))
    assert sampler.counts_made <= first + 5  # almost every sub-space was counted already
