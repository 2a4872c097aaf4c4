"""Exact samples and positions of a space of independent groups are found group by group
(`translators/c/groups.py`), and a short C call wakes its caller at once (`call_c`: no poll).

The stages here are `t_i = range(32, 1025, 32)`, `w_i = range(32, 65537, 32)` with
`require(w_i % t_i == 0)` (8,299 configurations each): the whole space's work units are far too
large to list, so without the groups a position is found by one compiled subtree count per value
of every `w_i` tried (thousands of C calls per configuration drawn)."""
from __future__ import annotations

import time

import pytest

from solverspace import Space
from solverspace.core.draws import draw_positions
from solverspace.translators.c import backend
from solverspace.translators.c.groups import consecutive_groups, group_plan

pytestmark = pytest.mark.needs_cc

PER_STAGE = sum(2048 // k for k in range(1, 33))   # w = 32 j, t = 32 k, k | j, j <= 2048


def stages(n: int) -> str:
    return "".join(f"t{i} = range(32, 1025, 32)\nw{i} = range(32, 65537, 32)\nrequire(w{i} % t{i} == 0)\n"
                   for i in range(1, n + 1))


def valid_stage_row(row) -> bool:
    return all(w % t == 0 and 32 <= t <= 1024 and 32 <= w <= 65536 for t, w in zip(row[0::2], row[1::2]))


@pytest.fixture
def c_calls(monkeypatch):
    """The number of C calls handed to the C thread (`call_c`) so far."""
    calls = [0]
    call_c = backend.call_c

    def counted(*args, **kwargs):
        calls[0] += 1
        return call_c(*args, **kwargs)
    monkeypatch.setattr(backend, "call_c", counted)
    return calls


def test_ten_stages_sample_group_by_group(c_calls):
    space = Space.from_source(stages(10))
    assert space.count("c") == PER_STAGE ** 10
    before = c_calls[0]
    drawn = space.sample(10, seed=4)
    # a fixed number of C calls per group (count its units, fill the units holding the draws), not
    # one subtree count per value tried: 10 stages, 10 draws
    assert c_calls[0] - before <= 60, c_calls[0] - before
    rows = [tuple(r) for r in drawn.tolist()]
    assert len(set(rows)) == 10 and all(valid_stage_row(r) for r in rows)
    positions = draw_positions(PER_STAGE ** 10, 10, 4, False)
    assert [space.index(r) for r in rows] == [int(p) for p in positions]
    assert space[0] == (32, 32) * 10 and space[-1] == (1024, 65536) * 10


@pytest.mark.parametrize("text, size", [
    (stages(3), PER_STAGE ** 3),
    ("a = range(2)\n" + stages(3) + "b = range(3)\n", 6 * PER_STAGE ** 3),   # free parameters join the stages' blocks
], ids=["stages", "with-free-parameters"])
def test_groups_give_the_positions_of_the_whole_nest(monkeypatch, text, size):
    """The same samples, rows at positions and positions of rows with and without the groups (the
    whole enumerator descends its large units by subtree counts)."""
    grouped = Space.from_source(text)
    monkeypatch.setattr(backend, "consecutive_groups", lambda plan: None)
    whole = Space.from_source(text)
    whole.position_index()   # made (and kept) while the groups are hidden
    monkeypatch.undo()
    assert type(grouped.position_index()).__name__ == "GroupPositions" and grouped.position_index().by_groups()
    assert type(whole.position_index()).__name__ == "EnumeratorPositions"
    assert grouped.count("c") == whole.count("c") == size
    a, b = grouped.sample(6, seed=11), whole.sample(6, seed=11)
    assert a.tolist() == b.tolist()
    for p in (0, 1, PER_STAGE - 1, PER_STAGE, PER_STAGE ** 2 + 5, size // 3, size - 1):
        assert grouped[p] == whole[p]
        assert grouped.index(grouped[p]) == p
    invalid = dict(zip(grouped.parameters, grouped[5]), t3=64, w3=96)   # 96 % 64 != 0
    with pytest.raises(ValueError, match="not a valid configuration"):
        grouped.index(invalid)
    with pytest.raises(IndexError):
        grouped[size]


def test_groups_only_where_consecutive_and_independent():
    plan = Space.from_source(stages(2)).plan
    assert consecutive_groups(plan) == [["t1", "w1"], ["t2", "w2"]]
    assert group_plan(plan, ["t2", "w2"]).order == ("t2", "w2")
    linked = Space.from_source(stages(2) + "require(t1 <= t2)\n").plan
    assert consecutive_groups(linked) is None
    # x, y, then u (linked to x): the groups {x, u} and {y} interleave in the loop order
    interleaved = Space.from_source("x = range(4)\ny = range(5)\nu = range(x, 9)\n").plan
    assert consecutive_groups(interleaved) is None


def test_hoisted_only_groups_join_a_block_and_compile_nothing_more(monkeypatch):
    """64 independent binary parameters (hoisted: the descent divides, no count) go through the
    whole enumerator; a stage among free parameters is one block with them."""
    made = []
    group_plan_of = backend.group_plan
    monkeypatch.setattr(backend, "group_plan", lambda plan, names: made.append(names) or group_plan_of(plan, names))
    binary = Space.from_source("".join(f"p{i} = range(2)\n" for i in range(64)))
    positions = binary.position_index()
    assert positions.blocks() == [] and not positions.by_groups()
    assert binary[2 ** 63 + 5] == (1,) + (0,) * 60 + (1, 0, 1) and made == []
    mixed = Space.from_source("a = range(2)\n" + stages(2) + "b = range(3)\n")
    assert mixed.position_index().blocks() == [["a", "t1", "w1"], ["t2", "w2", "b"]]


def test_a_short_c_call_is_not_polled(monkeypatch):
    """`call_c` sleeps on the job's lock and is woken when the call returns: no `time.sleep`."""
    space = Space.from_source("x = range(1, 50)\ny = range(1, 50)\nrequire(y % x == 0)\n")
    space.count("c")
    sleeps = [0]
    sleep = time.sleep

    def counted(seconds):
        sleeps[0] += 1
        sleep(seconds)
    monkeypatch.setattr(time, "sleep", counted)
    enumerator = backend.CBackend().enumerator(space.plan)
    ffi = enumerator.ffi
    for _ in range(20):
        st = ffi.new("ss_stats *")
        cancel = ffi.new("int[1]")
        enumerator.call(enumerator.walk_prefixes, 1, ffi.NULL, 0, st, cancel, cancel=cancel)
    assert sleeps[0] == 0


def _snapshot_spaces_of_blocks():
    """The snapshot's generated spaces (categorical values, closures, derived values, settings) whose
    positions could go by two or more blocks."""
    import json
    from pathlib import Path
    data = json.loads((Path(__file__).parent / "data" / "snapshot.json").read_text())
    return [source for source in data["generated"]
            if (plan := _plan_or_none(source)) is not None and consecutive_groups(plan) is not None]


def _plan_or_none(source):
    try:
        return Space.from_source(source, filename="generated.py").plan
    except Exception:   # a space the loader refuses: its refusal is pinned by the snapshot
        return None


def test_blocks_agree_with_the_whole_nest_on_generated_spaces(monkeypatch):
    """Every position of small generated spaces, found through the blocks (forced: their units are
    small) and by listing the whole space in C, and each row's position back."""
    checked = 0
    for source in _snapshot_spaces_of_blocks():
        space = Space.from_source(source, filename="generated.py")
        positions = space.position_index()
        try:
            if len(positions.blocks()) < 2:
                continue
            listed = [tuple(row) for row in space.to_array("c").tolist()]
        except Exception:   # the C backend refuses it or it fails to evaluate: pinned by the snapshot
            continue
        monkeypatch.setattr(type(positions.whole), "descends", lambda self: True)
        assert positions.by_groups()
        assert positions.size() == len(listed)
        for i, row in enumerate(listed):
            assert space[i] == row, (source, i)
            assert space.index(row) == i, (source, i)
        monkeypatch.undo()
        checked += bool(listed)
    assert checked >= 3
