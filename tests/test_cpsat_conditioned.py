"""CP-SAT counting conditioned on an articulation parameter (issue 13, the Hotspot T1 files):
a parameter with a constant domain whose removal splits a component is held at each of its
values and the parts are counted separately; the sum must equal the reference's count."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from solverspace import Space
from solverspace.validation.generate import independent_spaces, spaces
from tests.helpers import HOTSPOT_LIKE, assert_cpsat_matches_reference

pytestmark = pytest.mark.needs_cpsat


def _count_with_strategy(space):
    from solverspace.translators.cpsat.count import Counter
    from solverspace.translators.cpsat.solver import Options
    counter = Counter(space.model, space.plan, Options(workers=1))
    return counter.count(counter.full_problem(), None)


def test_hotspot_shape_is_conditioned_and_exact(monkeypatch):
    from solverspace.translators.cpsat import count as cpsat_count
    monkeypatch.setattr(cpsat_count, "SINK_VALUES", 0)  # else `u` is summed in Python (tests/test_cpsat_sinks.py)
    space = Space.from_source(HOTSPOT_LIKE)
    result = _count_with_strategy(space)
    assert "conditioned on t" in result.strategy
    assert result.exact and result.count == space.count("reference")


def test_small_components_are_not_conditioned(monkeypatch):
    from solverspace.translators.cpsat import count as cpsat_count
    monkeypatch.setattr(cpsat_count, "CONDITION_MIN_SPACE", 10 ** 9)
    monkeypatch.setattr(cpsat_count, "SINK_VALUES", 0)
    space = Space.from_source(HOTSPOT_LIKE)
    result = _count_with_strategy(space)
    assert "conditioned" not in result.strategy
    assert result.count == space.count("reference")


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(source=independent_spaces() | spaces())
def test_generated_spaces_conditioned_everywhere_agree_with_the_reference(source):
    """With the size threshold off, every component with an articulation parameter is conditioned
    (most of the T1-style spaces have one); sinks are not summed in Python here, else many
    articulations would go with them."""
    from solverspace.translators.cpsat import count as cpsat_count
    saved = cpsat_count.CONDITION_MIN_SPACE, cpsat_count.SINK_VALUES
    cpsat_count.CONDITION_MIN_SPACE, cpsat_count.SINK_VALUES = 0, 0
    try:
        assert_cpsat_matches_reference(source)
    finally:
        cpsat_count.CONDITION_MIN_SPACE, cpsat_count.SINK_VALUES = saved


