"""One-pass sweeps (`translators/c/lanes.py`): the points of a sweep counted in one walk give
exactly the count and the undefined tally of counting each point on its own, and a sweep says
which method answered each point."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from solverspace import Space
from solverspace.cli import main
from solverspace.scale.sweep import sweep
from solverspace.validation.generate import spaces
from tests.helpers import generated

pytestmark = pytest.mark.needs_cc


def points(space, grid, one_pass, **options):
    """[(settings, count, undefined, method)] of a sweep, or the error it raised (its type)."""
    load = (lambda s: Space.load(space, s)) if space == "gemm" else (lambda s: Space.from_source(space, s))
    try:
        return [(p.settings, p.count, p.undefined, p.method)
                for p in sweep(load, grid, "c", one_pass=one_pass, threads=1, **options)]
    except Exception as exc:   # the same error either way (the one-pass sweep falls back to per-point)
        return type(exc).__name__


def agree(space, grid, **options):
    """One pass and one by one give the same counts and tallies; the one-pass methods used."""
    shared, alone = points(space, grid, True, **options), points(space, grid, False, **options)
    if isinstance(alone, str):
        assert shared == alone
        return set()
    assert [p[:3] for p in shared] == [p[:3] for p in alone]
    return {p[3] for p in shared}


def test_gemm_threads_per_block_in_one_pass():
    grid = {"max_threads_per_block": ["64", "256", "384", "1000", "1024"]}
    assert agree("gemm", grid) == {"one-pass"}


def test_gemm_two_settings_in_one_pass():
    grid = {"max_threads_per_block": ["256", "512"], "max_shared_mem_per_block": ["16384", "49152"]}
    assert agree("gemm", grid) == {"one-pass"}
    grid = {"max_registers_per_thread": ["32", "63", "255"], "min_threads_per_multi_processor": ["128", "512"]}
    assert agree("gemm", grid) == {"one-pass"}


def test_gemm_devices_and_loop_lengths_in_one_pass():
    # every device's limits at once (many constants differ); a loop stop that differs by lane
    assert agree("gemm", {"device": ["k40c", "p100", "v100"]}) == {"one-pass"}
    assert agree("gemm", {"max_threads_dim_x": ["512", "1024"]}) == {"one-pass"}


def test_gemm_sweep_prints_the_method(capsys):
    assert main(["sweep", "gemm", "--set", "device=tiny", "--set", "max_threads_per_block=32,64", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["count"], line["method"]) for line in lines] == [
        (Space.load("gemm", {"device": "tiny", "max_threads_per_block": v}).count("reference"), "one-pass")
        for v in ("32", "64")]
    assert main(["sweep", "gemm", "--set", "device=tiny", "--set", "max_threads_per_block=32,64"]) == 0
    assert "2 one-pass" in capsys.readouterr().out.splitlines()[-1]
    assert main(["sweep", "gemm", "--set", "device=tiny", "--set", "max_threads_per_block=32,64", "--per-point"]) == 0
    assert "2 per-point" in capsys.readouterr().out.splitlines()[-1]


UNDEFINED = """
D = 0
LIMIT = 5
x = range(-3, 4)
y = range(0, 6)
q = x // (y - D)
r = 100 % (x + D)
require(q + r < LIMIT)
require(y <= LIMIT + 1)
"""


def test_undefined_tallies_and_empty_points_per_lane():
    grid = {"D": ["0", "2", "5", "9"], "LIMIT": ["-100", "0", "5"]}
    shared = points(UNDEFINED, grid, True)
    assert {p[3] for p in shared} == {"one-pass"}
    assert shared == [p[:3] + ("one-pass",) for p in points(UNDEFINED, grid, False)]
    assert any(p[1] == 0 for p in shared) and any(p[1] > 0 for p in shared)
    assert len({p[2] for p in shared}) > 2          # tallies differ by lane
    for settings_, count, undefined, _ in shared:   # and equal the reference's along the literal plan
        stats = Space.from_source(UNDEFINED, settings_).stats("reference")
        assert count == stats.count
    literal = points(UNDEFINED, grid, True, literal=True)
    assert [p[:3] for p in literal] == [(s, Space.from_source(UNDEFINED, s).stats("reference").count,
                                         Space.from_source(UNDEFINED, s).stats("reference").undefined)
                                        for s, *_ in shared]


def test_what_cannot_share_a_walk_is_counted_per_point_and_says_why():
    # a setting that changes the structure (dim_vec, register and memory sums): one point each
    grid = {"device": ["tiny"], "precision": ["single", "double"]}
    found = list(Space.sweep("gemm", grid, "c", threads=1))
    assert [p.method for p in found] == ["per-point", "per-point"]
    # a range whose start differs by lane: stopped at run time, counted one by one
    source = "A = 1\nx = range(A, 9)\ny = range(0, x)\nrequire(x + y < 12)\n"
    found = list(sweep(lambda s: Space.from_source(source, s), {"A": ["1", "3"]}, "c", threads=1))
    assert [p.method for p in found] == ["per-point", "per-point"] and all(p.note for p in found)
    assert [p.count for p in found] == [Space.from_source(source, {"A": a}).count("reference") for a in ("1", "3")]
    # strict sweeps count one by one (the first undefined operation is an error naming it)
    assert {p.method for p in sweep(lambda s: Space.load("gemm", s), {"device": ["tiny"],
                                    "max_threads_per_block": ["32", "64"]}, "c", strict=True)} == {"per-point"}


@generated(25)
@given(source=spaces(c_compatible=True, swept=True), values=st.lists(st.integers(-3, 5), min_size=2, max_size=5,
                                                                     unique=True))
def test_generated_spaces_one_pass_equals_per_point(source, values):
    grid = {"S": [str(v) for v in values]}
    agree(source, grid)                 # the C backend's optimized plans
    agree(source, grid, literal=True)   # the literal plans, whose tallies are the reference's too
