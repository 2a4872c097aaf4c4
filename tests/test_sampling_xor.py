"""The XOR-hash mode: ApproxMC2 counts and UniGen2 near-uniform samples (translators.cpsat_hash)."""
import json

import numpy as np
import pytest
from scipy import stats

from solverspace import Space
from solverspace.cli import main
from solverspace.scale.sampling import SampleSizeError, sample
from solverspace.translators.cpsat.hashing import (
    HI_THRESH, UNIGEN_EPSILON, approximate_count, approxmc_rounds, approxmc_threshold)

from tests.helpers import UNIFORMITY_SPACES as SMALL

#: 86 configurations: above UniGen2's listing limit (63), so samples come from hashed cells.
HASHED = """
a = range(0, 10)
b = range(a, 12)
c = iterator(["p", "q"])
require((a + b) % 3 != 1)
reject_if(b - a > 7)
"""


def test_constants_are_the_published_ones():
    assert approxmc_threshold(0.8) == 73 and approxmc_rounds(0.2) == 67 and approxmc_rounds(0.8) == 33
    assert HI_THRESH == 64 and 16 < UNIGEN_EPSILON < 16.2


@pytest.mark.parametrize("source", [HASHED, "x = range(0, 40)\ny = range(0, 40)\nrequire(x * y % 7 != 3)"])
def test_approximate_count_is_within_the_tolerance(source):
    space = Space.from_source(source)
    exact = space.count("reference")
    result = approximate_count(space.plan, 0.8, 0.2, seed=1)
    assert not result.exact and result.rounds == 67
    assert exact / 1.8 <= result.estimate <= exact * 1.8


def test_small_spaces_are_counted_and_sampled_exactly():
    space = Space.from_source(SMALL["dependent ranges and guards"])
    size = space.count("reference")
    assert size < HI_THRESH
    assert approximate_count(space.plan, 0.8, 0.2).estimate == size
    drawn, info = sample(space, 40 * size, seed=3, replace=True, method="cpsat-xor")
    assert info.size == size and info.size_exact and "exactly uniform" in info.guarantee
    rows = list(space.rows("reference"))
    index = {row: i for i, row in enumerate(rows)}
    observed = np.bincount([index[tuple(r)] for r in drawn.tolist()], minlength=len(rows))
    assert stats.chisquare(observed).pvalue > 0.01


def test_hashed_samples_are_valid_cover_the_space_and_keep_the_bound():
    space = Space.from_source(HASHED)
    rows = list(space.rows("reference"))
    assert len(rows) > HI_THRESH
    drawn, info = sample(space, 40 * len(rows), seed=7, replace=True, method="cpsat-xor")
    assert not info.size_exact and "UniGen2" in info.guarantee
    index = {row: i for i, row in enumerate(rows)}
    observed = np.bincount([index[tuple(r)] for r in drawn.tolist()], minlength=len(rows))  # KeyError: invalid
    assert observed.min() > 0  # every configuration can be drawn
    expected = len(drawn) / len(rows)
    # UniGen2's bound, with room for the sampling noise of 40 draws per configuration
    assert observed.max() <= (1 + UNIGEN_EPSILON) * expected * 2
    assert observed.min() >= expected / (1 + UNIGEN_EPSILON) / 2


def test_without_replacement_gives_distinct_configurations_and_refuses_too_many():
    space = Space.from_source(HASHED)
    drawn = space.sample(40, seed=2, method="cpsat-xor")
    assert len(set(map(tuple, drawn.tolist()))) == 40
    with pytest.raises(SampleSizeError, match="cannot promise"):
        space.sample(60, seed=2, method="cpsat-xor")
    assert np.array_equal(drawn, space.sample(40, seed=2, method="cpsat-xor"))


def test_cli_approximate_count(tmp_path, capsys):
    target = tmp_path / "space.py"
    target.write_text(HASHED)
    assert main(["count", str(target), "--approximate", "--json", "--seed", "4"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["method"] == "approxmc2" and result["epsilon"] == 0.8 and result["delta"] == 0.2
    assert 86 / 1.8 <= result["count"] <= 86 * 1.8
