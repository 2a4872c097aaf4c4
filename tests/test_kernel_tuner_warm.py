"""A warm `solverspace.integrations.kernel_tuner.Searchspace` (issue 26): the counted work units of the compiled
enumerator (the exact count, and what `space[i]` and `space.index` descend through) are remembered
beside the module and given back in the next process, so that the count is not run again; the
answers are the counted ones; an entry of another key, or unreadable, is a miss."""
from __future__ import annotations

import json

import pytest

from solverspace import Space
from solverspace.translators.c.backend import CBackend, CEnumerator

pytestmark = pytest.mark.usefixtures("cache")


def _counted_calls(monkeypatch) -> list:
    """Names of the C functions run through `CEnumerator.call` from now on."""
    seen: list = []
    original = CEnumerator.call

    def call(self, fn, *args, **kwargs):
        seen.append(getattr(fn, "__name__", repr(fn)))
        return original(self, fn, *args, **kwargs)
    monkeypatch.setattr(CEnumerator, "call", call)
    return seen


def test_the_units_are_remembered_and_given_back_without_a_count(monkeypatch, cache):
    from solverspace.integrations.kernel_tuner.searchspace import Searchspace, remember_units, remembered_units
    space = Space.load("gemm", {"device": "tiny"})
    assert space.count("c") == 336
    rows = list(space.rows("c"))
    remember_units(space)
    entries = list(cache.glob("kt_units_*.json"))
    assert len(entries) == 1 and json.loads(entries[0].read_text())["counts"]

    CEnumerator.clear_cache()       # as in a new process: nothing counted in memory
    again = Space.load("gemm", {"device": "tiny"})
    seen = _counted_calls(monkeypatch)
    assert remembered_units(again)
    assert not remembered_units(again)      # given once: the enumerator has its counted units
    searchspace = Searchspace(space=again, seed=3)
    assert searchspace.size == 336 and again.count("c") == 336
    sample = searchspace.get_random_sample(20)
    assert all(again.is_valid(c) for c in sample)
    assert [again[i] for i in range(0, 336, 7)] == rows[::7]
    assert all(again.index(rows[i]) == i for i in range(0, 336, 11))
    assert "ss_count_units" not in seen and "ss_prefixes" not in seen


def test_an_entry_of_another_key_or_unreadable_is_a_miss(cache):
    from solverspace.integrations.kernel_tuner.searchspace import remember_units, remembered_units
    space = Space.load("gemm", {"device": "tiny"})
    space.count("c")
    remember_units(space)
    entry = next(cache.glob("kt_units_*.json"))
    data = json.loads(entry.read_text())
    for broken in (json.dumps({**data, "key": "0" * 64}), json.dumps({**data, "format": 0}), "{not json"):
        entry.write_text(broken)
        CEnumerator.clear_cache()
        fresh = Space.load("gemm", {"device": "tiny"})
        assert not remembered_units(fresh)
        assert fresh.count("c") == 336      # counted, as without the entry
        remember_units(fresh)               # and the entry written again
        assert json.loads(entry.read_text()) == data


def test_nothing_is_remembered_without_a_built_module(cache):
    from solverspace.integrations.kernel_tuner.searchspace import remember_units, remembered_units
    space = Space.load("gemm", {"device": "tiny"})
    assert not CBackend().is_built(space.plan)
    assert not remembered_units(space)
    remember_units(space)
    assert not list(cache.glob("kt_units_*.json"))
