"""Issue 25, moves (first half): value lists, parameter indices, the fast validity check and
Kernel Tuner's five neighbour methods, against brute force over the listed space
(`validation.moves`), on the corpus, tiny GEMM variants and generated spaces."""
from __future__ import annotations

import json
import os
import textwrap
from collections import Counter

import pytest
from hypothesis import given
from scipy import stats

from solverspace import Space, SolverspaceError
from solverspace.moves.value_lists import ValueListError
from solverspace.validation.generate import spaces
from solverspace.validation.moves import check_moves, listable
from tests.helpers import (CORPUS, corpus_space, generated_examples, load_generated, space, space_file, tiny_gemm,
                           TINY_VARIANTS)

CORPUS_FILES = sorted(CORPUS.glob("*.py"))
GENERATED = int(os.environ.get("SOLVERSPACE_MOVES_EXAMPLES", "250"))
GENERATED_SLOW = int(os.environ.get("SOLVERSPACE_MOVES_SLOW_EXAMPLES", "2000"))


def test_value_lists_documented_order_and_indices():
    s = space("""
        x = range(1, 5)
        y = range(x, 5)
        k = iterator(["b", "a"])
        require(x + y < 6)
        require((k == "a") | (x < 4))
    """)
    assert s.value_lists() == {"x": (1, 2, 3, 4), "y": (1, 2, 3, 4), "k": ("b", "a")}
    assert s.param_indices({"x": 2, "y": 3, "k": "a"}) == (1, 2, 1)
    assert s.from_param_indices((1, 2, 0)) == (2, 3, "b")
    assert s.is_valid((2, 3, "a")) and not s.is_valid((2, 4, "a")) and not s.is_valid((3, 2, "a"))
    with pytest.raises(SolverspaceError, match="not in parameter 'y'"):
        s.param_indices((1, 9, "a"))
    with pytest.raises(SolverspaceError, match="out of range"):
        s.from_param_indices((0, 4, 0))
    with pytest.raises(SolverspaceError, match="not a parameter"):
        s.is_valid({"x": 1, "y": 1, "k": "a", "w": 2})


# ------------------------------------------------------------------------ neighbours by hand
HAND = """
    x = range(1, 5)
    y = range(x, 5)
    k = iterator(["b", "a"])
    require(x + y < 6)
    require((k == "a") | (x < 4))
"""


def test_five_methods_by_hand():
    s = space(HAND)
    c = (2, 3, "a")
    assert s.neighbors(c) == [(1, 3, "a"), (2, 2, "a"), (2, 3, "b")]
    assert s.neighbors(c, "Hamming-adjacent") == [(1, 3, "a"), (2, 2, "a"), (2, 3, "b")]
    assert s.neighbors({"x": 2, "y": 3, "k": "a"}, "strictly-adjacent") == [
        (1, 2, "b"), (1, 2, "a"), (1, 3, "b"), (1, 3, "a"), (1, 4, "b"), (1, 4, "a"),
        (2, 2, "b"), (2, 2, "a"), (2, 3, "b")]
    assert s.neighbors(c, "closest-param-indices") == [(1, 3, "a"), (2, 2, "a"), (2, 3, "b")]
    assert s.count_neighbors(c, "adjacent") == 9
    assert s.random_neighbor(c, "hamming", seed=3) in s.neighbors(c)
    assert s.random_neighbor(c, seed=5) == s.random_neighbor(c, seed=5)


def test_adjacent_reads_occurring_values_not_the_value_list():
    """Kernel Tuner's `adjacent` bounds come from the values some valid configuration takes: a
    value-list value no valid configuration takes is stepped over (strictly-adjacent is not)."""
    s = space("""
        x = range(0, 6)
        y = range(0, 3)
        require(x != 2)
        require(x != 3)
    """)
    assert 2 in s.value_lists()["x"]
    assert s.neighbors((1, 1), "adjacent") == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (4, 0), (4, 1), (4, 2)]
    assert s.neighbors((1, 1), "strictly-adjacent") == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2)]
    assert s.neighbors((1, 1), "Hamming-adjacent") == [(0, 1), (1, 0), (1, 2), (4, 1)]
    assert s.neighbors((1, 1), "closest-param-indices") == [(0, 1), (1, 0), (1, 2)]


def test_no_neighbors_and_uniform_random_neighbor():
    s = space("x = range(3)\nrequire(x == 1)")
    assert s.neighbors((1,), "closest-param-indices") == [] and s.random_neighbor((1,), "adjacent") is None
    many = space("x = range(6)\ny = range(6)\nrequire(x + y < 9)")
    found = many.neighbors((2, 2))
    counts = Counter(many.random_neighbor((2, 2), seed=seed) for seed in range(2000))
    assert set(counts) == set(found)
    assert stats.chisquare(list(counts.values())).pvalue > 1e-4


def test_bad_input_is_refused():
    s = space(HAND)
    with pytest.raises(SolverspaceError, match="not a valid configuration"):
        s.neighbors((3, 4, "a"))
    with pytest.raises(SolverspaceError, match="unknown neighbour method"):
        s.neighbors((2, 3, "a"), "hamming-distance")
    with pytest.raises(SolverspaceError, match="not in parameter 'k'"):
        s.neighbors((2, 3, "c"))
    with pytest.raises(SolverspaceError, match="lacks parameters"):
        s.neighbors({"x": 2, "y": 3})


# ------------------------------------------------------------------------ against brute force
def assert_moves(s, **options):
    problems = check_moves(s, **options)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_corpus_moves(path):
    s = corpus_space(path)
    if not listable(s):
        pytest.skip("too many configurations to list for brute force")
    assert_moves(s)


@pytest.mark.needs_cc
@pytest.mark.parametrize("variant", TINY_VARIANTS, ids=lambda v: "-".join(map(str, v)))
def test_tiny_gemm_moves(variant):
    s = tiny_gemm(variant)
    assert_moves(s, configs=8)


def test_moves_with_orders_closures_settings():
    s = space("""
        N = setting(3)
        loops = permutation(["i", "j", "k"])
        tile = range(1, N + 2)
        @iterator
        def unroll(tile):
            if tile == 2:
                return range(2, 7, 2)
            return range(1, tile + 2)
        kind = iterator(["tex", "ldg"])
        require(position(loops, "k") < tile)
        reject_if((kind == "tex") & (unroll == 3))
    """)
    assert s.value_lists()["loops"][0] == ("i", "j", "k")
    assert_moves(s, configs=30)


def generated_check(source: str) -> None:
    model = load_generated(source)
    s = Space(model)
    try:
        rows = list(s.rows("reference"))
    except SolverspaceError:
        return   # the reference itself refuses the space (checked elsewhere)
    if len(rows) > 3000:
        return
    try:
        s.value_lists()
    except ValueListError:
        return   # refused with a message naming the parameter
    assert_moves(s, rows=rows, configs=6)


@generated_examples(GENERATED)
@given(source=spaces())
def test_generated_spaces_moves(source):
    generated_check(source)


@pytest.mark.slow
@generated_examples(GENERATED_SLOW)
@given(source=spaces(max_parameters=5, max_candidates=4000))
def test_many_generated_spaces_moves(source):
    generated_check(source)


# ------------------------------------------------------------------------ the command line
def test_neighbors_command(tmp_path, capsys):
    from solverspace.cli import main
    path = space_file(tmp_path, textwrap.dedent(HAND))
    assert main(["neighbors", path, "x=2", "y=3", "k=a"]) == 0
    assert capsys.readouterr().out.splitlines() == ["x=1 y=3 k=a", "x=2 y=2 k=a", "x=2 y=3 k=b"]
    assert main(["neighbors", path, "x=2", "y=3", "k=a", "--method", "adjacent", "--count"]) == 0
    assert capsys.readouterr().out.strip() == "9"
    assert main(["neighbors", path, "x=2", "y=3", "k=a", "--random", "--seed", "4", "--json"]) == 0
    [drawn] = json.loads(capsys.readouterr().out)
    assert tuple(drawn.values()) in space(HAND).neighbors((2, 3, "a"))
    for bad, message in ((["x=3", "y=4", "k=a"], "not a valid configuration"),
                         (["x=2", "y=3", "k=a", "--method", "nearest"], "unknown neighbour method"),
                         (["x=2", "y=3", "k=c"], "value list"),
                         (["x=2", "y=3", "k=a", "w=1"], "not a parameter"),
                         (["x=2", "y=3"], "lacks parameters")):
        assert main(["neighbors", path, *bad]) == 2
        assert message in capsys.readouterr().err


def test_assignments_may_follow_a_set_option(capsys):
    """`neighbors gemm --set device=tiny k=v ...`: argparse stops a positional list at an option;
    the configuration after `--set` is the same configuration."""
    from solverspace.cli import main
    space = Space.load("gemm", {"device": "tiny"})
    config = [f"{name}={value}" for name, value in zip(space.parameters, space[0])]
    assert main(["neighbors", "gemm", *config, "--set", "device=tiny", "--count"]) == 0
    before = capsys.readouterr().out
    assert main(["neighbors", "gemm", "--set", "device=tiny", *config, "--count"]) == 0
    assert capsys.readouterr().out == before and int(before) >= 0
