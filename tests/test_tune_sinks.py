"""`tune(..., sinks=[...])`: every measurement reaches each sink as it is made (measured now or
reused from the database), in the search's order, and every sink is closed on any exit."""
from __future__ import annotations

import pytest

from solverspace import Space
from solverspace.analysis.tune import Measurement, Sink
from solverspace.core.errors import OptionError

SMALL = """
a = range(1, 6)
b = range(1, 6)
require(a * b % 2 == 0)
"""
MODEL = "a * b / 10"


class Recorder:
    def __init__(self, fail_add_at=None, fail_close=False):
        self.added: list = []
        self.closed = 0
        self.fail_add_at, self.fail_close = fail_add_at, fail_close

    def add(self, measurement):
        assert self.closed == 0, "add after close"
        self.added.append(measurement)
        if self.fail_add_at is not None and len(self.added) == self.fail_add_at:
            raise RuntimeError("sink add failed")

    def close(self):
        self.closed += 1
        if self.fail_close:
            raise RuntimeError("sink close failed")


def timing(config):
    return config["a"] * config["b"] / 10 + (0.05 if config["a"] == 2 else 0.0)


def test_every_measurement_reaches_every_sink_in_order_and_sinks_close(tmp_path):
    space = Space.from_source(SMALL)
    seen: list = []
    first, second = Recorder(), Recorder()
    result = space.tune(timing, MODEL, top=2, db=str(tmp_path / "t.sqlite"), sinks=[first, second],
                        progress=seen.append)
    assert isinstance(first, Sink)
    assert first.closed == second.closed == 1
    assert first.added == second.added
    assert all(isinstance(m, Measurement) for m in first.added)
    assert len(first.added) == result.measured and result.measured > 0
    assert [m.configuration for m in first.added if m.ran][:1] and result.best in [m.configuration for m in first.added]
    assert all(not m.reused for m in first.added)
    # a second run reuses the database: the sink sees the reused measurements, flagged
    again = Recorder()
    rerun = space.tune(timing, MODEL, top=2, db=str(tmp_path / "t.sqlite"), sinks=[again])
    assert rerun.measured == 0 and len(again.added) == rerun.reused > 0
    assert all(m.reused for m in again.added)
    assert [m.configuration for m in again.added] == [m.configuration for m in first.added]


def test_sinks_close_when_the_search_fails_and_a_failing_add_stops_it():
    space = Space.from_source(SMALL)
    sink = Recorder(fail_add_at=2)
    other = Recorder()
    with pytest.raises(RuntimeError, match="sink add failed"):
        space.tune(timing, MODEL, sinks=[sink, other])
    assert sink.closed == other.closed == 1 and len(sink.added) == 2 and len(other.added) == 1

    def broken(config):
        raise KeyboardInterrupt
    sink = Recorder()
    with pytest.raises(KeyboardInterrupt):
        space.tune(broken, MODEL, sinks=[sink])
    assert sink.closed == 1
    # bad options fail before the search: sinks still closed
    sink = Recorder()
    with pytest.raises(OptionError):
        space.tune(timing, MODEL, top=0, sinks=[sink])
    assert sink.closed == 1


def test_a_failing_close_is_raised_after_all_closed_or_noted_on_the_error_in_flight():
    space = Space.from_source(SMALL)
    first, second = Recorder(fail_close=True), Recorder()
    with pytest.raises(RuntimeError, match="sink close failed"):
        space.tune(timing, MODEL, sinks=[first, second])
    assert first.closed == second.closed == 1
    first = Recorder(fail_add_at=1, fail_close=True)
    with pytest.raises(RuntimeError, match="sink add failed") as caught:
        space.tune(timing, MODEL, sinks=[first])
    assert any("sink close failed" in note for note in caught.value.__notes__)


def test_not_a_sink_is_refused():
    space = Space.from_source(SMALL)
    with pytest.raises(OptionError, match="not a sink"):
        space.tune(timing, MODEL, sinks=[object()])
    with pytest.raises(OptionError, match="list of sinks"):
        space.tune(timing, MODEL, sinks=3)
