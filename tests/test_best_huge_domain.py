"""`best` (and `tune`'s walk) on a domain past 2**63 values: refused as the reference's count refuses
it, never an OverflowError from `len()` nor a walk that never ends."""
from __future__ import annotations

import pytest

from solverspace.analysis.reference import DomainTooLargeError
from tests.helpers import space

HUGE = """
x = range(10**20)
y = range(3)
require(x < 5)
"""


@pytest.mark.parametrize("engine", ["bnb", "bnb-reference", "exhaustive-reference"])
def test_best_refuses_a_walk_past_two_to_the_63(engine):
    with pytest.raises(DomainTooLargeError, match=r"'x' has 100000000000000000000 values"):
        space(HUGE).best("x + y", backend=engine, progress=lambda done, total: None)

