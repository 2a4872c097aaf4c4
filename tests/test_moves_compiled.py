"""Issue 25, neighbours: the compiled check and walks (`translators/c/config_check.py`) agree with
the reference check and with brute force (`validation.moves.check_compiled`): validity of listed
configurations and of random points of the index box (undefined operations invalid, errors the
same), each parameter's occurring indices (Kernel Tuner's `adjacent` bounds) and the neighbour
sets of all five methods, on the corpus, hand-made spaces with categoricals, closures, settings
and undefined operations, and generated spaces; spaces with orders are refused by name and
answered by the reference engine."""
from __future__ import annotations

import os

import pytest
from hypothesis import given

from solverspace import Space, SolverspaceError
from solverspace.analysis.config_check import ConfigChecker
from solverspace.moves.value_lists import ValueListError
from solverspace.translators.c.config_check import CompiledChecker
from solverspace.translators.errors import UnsupportedConstruct
from solverspace.validation.generate import spaces
from solverspace.validation.moves import check_compiled, check_moves, compiled_neighbors, listable
from tests.helpers import COMPILED_MOVES_SPACE, CORPUS, corpus_space, generated_examples, load_generated, space

pytestmark = pytest.mark.needs_cc

CORPUS_FILES = sorted(CORPUS.glob("*.py"))
GENERATED = int(os.environ.get("SOLVERSPACE_COMPILED_MOVES_EXAMPLES", "12"))


def assert_agree(s, rows=None, **options):
    rows = list(s.rows("reference")) if rows is None else rows
    problems = check_compiled(s, rows, **options)
    assert not problems, "\n".join(problems)


def test_corpus_compiled():
    """Every corpus space that brute force can list, whose value lists are not refused and that
    C does not refuse by construct (those are answered by the reference engine and checked in
    tests/test_moves_neighbors.py)."""
    checked = []
    for path in CORPUS_FILES:
        s = corpus_space(path)
        try:
            if not listable(s) or not s.value_lists():
                continue
            problems = check_compiled(s, list(s.rows("reference")))
        except (ValueListError, UnsupportedConstruct):
            continue
        assert not problems, (path.name, problems)
        checked.append(path.name)
    assert len(checked) >= 10, checked


def test_categoricals_closures_settings():
    s = space("""
        N = setting(4)
        tile = range(1, N + 2)
        @iterator
        def unroll(tile):
            if tile % 2 == 0:
                return range(tile, 3 * tile + 1, tile)
            return [1, tile + 1]
        kind = iterator(["tex", "ldg", "shared"])
        mode = iterator(["a", "b"])
        require((kind == "shared") | (unroll % 2 == 1) | (tile > 3))
        reject_if((kind == "tex") & (mode == "b") & (tile == unroll))
    """, {"N": 3})
    assert_agree(s)
    assert s.value_lists()["kind"] == ("tex", "ldg", "shared")


def test_undefined_operations_are_invalid_as_the_reference_says():
    """Division and modulo by zero reject (in a derived value, a constraint and a domain bound);
    a fraction compared exactly; a constraint whose divisor is zero only past an earlier rejection."""
    s = space("""
        x = range(-3, 4)
        y = range(0, 5)
        z = range(0, 10 // (x + 2) + 3)
        q = 12 // (x - y)
        require(q % 3 != 1)
        require((x == y) | (100 // (y - 1) > 0))
        require(x / (y + 1) < 2)
    """)
    engine, compiled = compiled_neighbors(s)
    assert not compiled.valid((2, 2, 0)) and not s.is_valid((2, 2, 0))       # q: 12 // 0
    assert not compiled.valid((-2, 0, 0)) and not s.is_valid((-2, 0, 0))     # z's domain: 10 // 0
    assert_agree(s, points=600)


def test_a_zero_range_step_is_the_same_error():
    """(Value lists refuse such a space; the check itself is given lists by hand.)"""
    s = space("""
        x = range(0, 3)
        y = range(0, 6, x)
        require(x + y < 7)
    """)
    compiled = CompiledChecker(s.plan, [range(3), range(7)], quick=True)
    for check in (ConfigChecker(s.plan).valid, compiled.valid):
        with pytest.raises(SolverspaceError, match="range step is 0"):
            check((0, 0))
    assert compiled.valid((2, 4)) and not compiled.valid((1, 6)) and not compiled.valid((2, 3))


def test_orders_are_refused_by_name_and_answered_by_the_reference():
    s = space("""
        loops = permutation(["i", "j", "k"])
        tile = range(1, 4)
        require(position(loops, "k") < tile)
    """)
    with pytest.raises(UnsupportedConstruct, match="loops"):
        compiled_neighbors(s)
    problems = check_moves(s, compiled=True)
    assert not problems, "\n".join(problems)


def test_a_large_space_goes_through_the_compiled_engine():
    """Past the reference's 100,000 candidate values `Space.neighbors` answers through the
    compiled engine (the Python engine would take seconds here); brute force over its list agrees."""
    s = space(COMPILED_MOVES_SPACE)
    assert listable(s)
    problems = check_moves(s, configs=15, compiled=True)
    assert not problems, "\n".join(problems)
    assert s.neighbors((39, 0, "p"), "adjacent") == [(38, 0, "p"), (38, 0, "q"), (39, 0, "q")]


def generated_check(source: str) -> None:
    model = load_generated(source)
    s = Space(model)
    try:
        rows = list(s.rows("reference"))
        s.value_lists()
    except (SolverspaceError, ValueListError):
        return   # the reference or the value lists refuse the space (checked elsewhere)
    if len(rows) > 3000:
        return
    try:
        assert_agree(s, rows, points=100)
    except UnsupportedConstruct:
        return   # refused by construct: the reference engine answers it (tests/test_moves_neighbors.py)


@generated_examples(GENERATED)
@given(source=spaces())
def test_generated_spaces_compiled(source):
    generated_check(source)


@pytest.mark.slow
@generated_examples(150)
@given(source=spaces(max_parameters=5, max_candidates=4000))
def test_many_generated_spaces_compiled(source):
    generated_check(source)


@pytest.mark.slow
def test_gemm_k40c_engines_agree():
    """On K40c GEMM (1,207,600 configurations): the compiled engine's occurring indices equal a
    pass over the compiled enumerator's rows, and Hamming, Hamming-adjacent and strictly-adjacent
    neighbours equal the reference engine's for random configurations."""
    import numpy as np
    from solverspace.analysis.config_check import ConfigChecker
    from solverspace.moves.neighbors import Neighbors
    s = Space.load("gemm")
    engine, compiled = compiled_neighbors(s, quick=False)
    reference = Neighbors(ConfigChecker(s.plan), engine.index)
    taken = [set() for _ in s.parameters]
    for row in s.rows("c"):
        for seen, j in zip(taken, s.param_indices(tuple(row))):
            seen.add(j)
    assert compiled.occurring() == [sorted(t) for t in taken]
    for config in [tuple(r) for r in s.sample(6, seed=4).tolist()]:
        for method in ("Hamming", "Hamming-adjacent", "strictly-adjacent"):
            assert engine.neighbors(config, method) == reference.neighbors(config, method)
    assert np.all(compiled.valid_many([tuple(r) for r in s.sample(50, seed=5).tolist()]))


@pytest.mark.slow
def test_k40c_neighbours_equal_kernel_tuners_own(tmp_path):
    """Kernel Tuner 1.5's own `get_neighbors_no_cache` (its Searchspace given our K40c list through
    its ATF_cache reader: its builders do not finish on GEMM) against `Space.neighbors`, which on
    K40c answers through the compiled engine, for random valid configurations and every method
    (closest-param-indices where Kernel Tuner's int8 sum cannot wrap: here it can, so its
    definition is checked in int64 instead)."""
    import numpy as np
    kt = pytest.importorskip("kernel_tuner.searchspace")
    s = Space.load("gemm")
    table = tmp_path / "gemm.csv"
    s.write_csv(table, "c", sep=";")
    theirs = kt.Searchspace({n: list(v) for n, v in s.value_lists().items()}, None, 1024,
                            framework="ATF_cache", path_to_ATF_cache=table)
    indices = theirs.get_list_param_indices_numpy().astype(np.int64)
    for config in [tuple(r) for r in s.sample(8, seed=11).tolist()]:
        for method in ("strictly-adjacent", "adjacent", "Hamming", "Hamming-adjacent"):
            expected = {tuple(c) for c in theirs.get_neighbors_no_cache(config, method)}
            assert set(s.neighbors(config, method)) == expected, (config, method)
        distance = np.abs(indices - np.array(theirs.get_param_indices(config))).sum(axis=1)
        distance[theirs.get_param_config_index(config)] = np.iinfo(np.int64).max
        closest = {tuple(theirs.list[i]) for i in np.flatnonzero(distance == distance.min())}
        assert set(s.neighbors(config, "closest-param-indices")) == closest
