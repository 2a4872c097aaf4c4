"""Brute-force cross-check of the GEMM space (BEAST paper, seed 004, section IX, Figs. 8-15).

`oracle()` below is an independent, hand-written reading of the paper's figures as plain nested
Python loops.  It imports nothing from solverspace or gemm: the device values are written out
literally (those of the scaled-down device "tiny" in gemm/devices.py SCALED_DEVICES), and every
iterator, derived value and constraint is transcribed from Figs. 11-15 with the fixes DESIGN.md
prescribes:

* the paper's code is Python 2, so integer `/` is written `//` here -- except in `low_fmas`,
  which compares `fmas_per_block / loads_per_block < min_fmas_per_load` exactly (Fraction);
* Fig. 11's `dim_vec` swaps `arithmetic` and `precision`; the intent is used:
  double-real {1, 2}, double-complex {1}, single-real {1, 4}, single-complex {1, 2};
* the paper's @condition functions return True to REJECT a configuration;
* a division by zero (`loads_per_block == 0` in `low_fmas`) makes the configuration invalid.

The loops `continue` as soon as the inputs of a constraint are bound, which is only pruning:
every constraint is a conjunct, so the set produced is exactly the set of 15-tuples whose values
lie in their (dependent) domains and that no constraint rejects.

The oracle's set is then compared with solverspace's reference enumerator.
"""
from __future__ import annotations

import itertools
from fractions import Fraction
from types import SimpleNamespace

import pytest

# --------------------------------------------------------------------------------------------
# Device "tiny" (gemm/devices.py SCALED_DEVICES), copied literally, plus the paper's constants
# of Fig. 8 (float_size) and Fig. 14 (soft-constraint thresholds).
# --------------------------------------------------------------------------------------------
TINY = {
    "cudamajor": 3,
    "cudaminor": 5,
    "max_threads_per_block": 64,
    "max_threads_dim_x": 32,
    "max_threads_dim_y": 32,
    "max_shared_mem_per_block": 4096,
    "warp_size": 16,
    "max_regs_per_block": 4096,
    "max_threads_per_multi_processor": 512,
    "max_registers_per_multi_processor": 8192,
    "max_shmem_per_multi_processor": 8192,
    "max_blocks_per_multi_processor": 8,
    "max_warps_per_multi_processor": 32,
    "max_registers_per_thread": 64,
    # Fig. 8
    "float_size": 4,
    # Fig. 14
    "min_threads_per_multi_processor": 256,
    "min_fmas_per_load": 2,
}

COLUMNS = ("dim_m", "dim_n", "blk_m", "blk_n", "blk_k", "dim_vec", "vec_mul",
           "dim_m_a", "dim_n_a", "dim_m_b", "dim_n_b", "tex_a", "tex_b", "shmem_l1", "shmem_banks")

CONSTRAINTS = (
    # Fig. 13 (hard)
    "over_max_threads", "over_max_regs_per_thread", "over_max_regs_per_block", "over_max_shmem",
    # Fig. 14 (soft)
    "low_occupancy_regs", "low_occupancy_shmem", "low_fmas", "partial_warps",
    # Fig. 15 (correctness)
    "cant_reshape_a1", "cant_reshape_b1", "cant_reshape_a2", "cant_reshape_b2",
)

PRECISIONS = ("single", "double")
ARITHMETICS = ("real", "complex")
TRANSPOSES = (0, 1)

# A second scaled-down device, obtained from "tiny" by overriding settings.  Every value a
# constraint reads is changed (and the block is not square, so min(dim_x, dim_y) matters).  The
# values are chosen so that each of the twelve constraints rejects, in the single-complex case
# with trans_a=0, trans_b=1, some configuration that no other constraint rejects (checked by
# test_every_constraint_has_power): e.g. over_max_regs_per_thread (24) must bite a 32-register
# thread whose block still fits max_regs_per_block (640) and the occupancy minimum (32 threads),
# while low_occupancy_regs must bite a 24-thread block of 24-register threads (576 registers:
# 1024 // 576 = 1 block of 24 threads < 32).  On "tiny" three hard constraints never bite alone.
OTHER_OVERRIDES = {
    "max_threads_per_block": 32,
    "max_threads_dim_x": 24,
    "max_threads_dim_y": 16,
    "warp_size": 8,
    "max_registers_per_thread": 24,
    "max_regs_per_block": 640,
    "max_shared_mem_per_block": 2048,
    "max_registers_per_multi_processor": 1024,
    "max_shmem_per_multi_processor": 4096,
    "max_blocks_per_multi_processor": 8,
    "min_threads_per_multi_processor": 32,
    "min_fmas_per_load": 2,
}
OTHER = {**TINY, **OTHER_OVERRIDES}


# --------------------------------------------------------------------------------------------
# The oracle
# --------------------------------------------------------------------------------------------
def oracle(dev, precision, arithmetic, trans_a, trans_b, drop=frozenset(), literal_dim_vec=False):
    """Set of valid GEMM configurations (tuples in COLUMNS order), by brute force.

    `drop` names constraints to leave out and `literal_dim_vec` uses Fig. 11's dim_vec with the
    names swapped as printed: both exist only to build deliberately wrong variants.
    """
    dev = SimpleNamespace(**dev)   # the device table's limits, as dev.<name>

    def rejects(name, condition):
        return condition and name not in drop

    def words(single_real):
        """A size counted for single-real numbers, for the precision and arithmetic asked (double: x2,
        complex: x2)."""
        return single_real * (2 if double else 1) * (2 if complex_ else 1)

    def low_occupancy(resource, per_multi_processor, per_block, threads_per_block):
        """Fig. 14's soft constraint `low_occupancy_<resource>`: the threads a multiprocessor holds when each
        block takes `per_block` of its `per_multi_processor` registers or shared memory (at most
        max_blocks_per_multi_processor blocks) are fewer than min_threads_per_multi_processor."""
        max_blocks = min(per_multi_processor // per_block, dev.max_blocks_per_multi_processor)
        resident = max_blocks * threads_per_block
        return rejects(f"low_occupancy_{resource}", resident < dev.min_threads_per_multi_processor)

    def reshapes(matrix, rows, cols, dim_vec, threads_per_block):
        """Fig. 11's reshapes of `matrix`'s (rows x cols) tile (rows counted in vectors of dim_vec) over
        the block's threads: the (dim_m, dim_n) with one thread per piece that divide the tile evenly."""
        for dim_m_x in range(1, rows // dim_vec + 1):
            for dim_n_x in range(1, cols + 1):
                if rejects(f"cant_reshape_{matrix}1", dim_m_x * dim_n_x != threads_per_block):
                    continue
                if rejects(f"cant_reshape_{matrix}2", rows % (dim_m_x * dim_vec) != 0 or cols % dim_n_x != 0):
                    continue
                yield dim_m_x, dim_n_x

    # Fig. 11: dim_vec (intent: double-real {1,2}, double-complex {1}, single-real {1,4},
    # single-complex {1,2}); the literal figure tests `arithmetic == "double"`.
    first, second = (arithmetic, precision) if literal_dim_vec else (precision, arithmetic)
    if first == "double":
        dim_vec_values = [1, 2] if second == "real" else [1]
    else:
        dim_vec_values = [1, 4] if second == "real" else [1, 2]

    double = precision == "double"
    complex_ = arithmetic == "complex"

    found = set()
    for dim_m in range(1, dev.max_threads_dim_x + 1):
        for dim_n in range(1, dev.max_threads_dim_y + 1):
            threads_per_block = dim_m * dim_n
            if rejects("over_max_threads", threads_per_block > dev.max_threads_per_block):
                continue
            if rejects("partial_warps", threads_per_block % dev.warp_size != 0):
                continue
            for blk_m in range(dim_m, dev.max_threads_dim_x + 1, dim_m):
                thr_m = blk_m // dim_m
                for blk_n in range(dim_n, dev.max_threads_dim_y + 1, dim_n):
                    thr_n = blk_n // dim_n
                    regs_per_thread = words(thr_m * thr_n)
                    if rejects("over_max_regs_per_thread", regs_per_thread > dev.max_registers_per_thread):
                        continue
                    regs_per_block = regs_per_thread * threads_per_block
                    if rejects("over_max_regs_per_block", regs_per_block > dev.max_regs_per_block):
                        continue
                    if low_occupancy("regs", dev.max_registers_per_multi_processor, regs_per_block, threads_per_block):
                        continue
                    for blk_k in range(1, min(dev.max_threads_dim_x, dev.max_threads_dim_y) + 1):
                        shmem_per_block = words(blk_k * (blk_m + blk_n) * dev.float_size)
                        if rejects("over_max_shmem", shmem_per_block > dev.max_shared_mem_per_block):
                            continue
                        if low_occupancy("shmem", dev.max_shmem_per_multi_processor, shmem_per_block,
                                         threads_per_block):
                            continue
                        fmas_per_thread = thr_m * thr_n * blk_k
                        fmas_per_block = fmas_per_thread * threads_per_block
                        if complex_:
                            fmas_per_block = fmas_per_block * 4
                        for dim_vec in dim_vec_values:
                            loads_per_thread = (thr_m + thr_n) * blk_k // dim_vec
                            loads_per_block = loads_per_thread * threads_per_block
                            if complex_:
                                loads_per_block = loads_per_block * 2
                            if "low_fmas" not in drop:
                                if loads_per_block == 0:
                                    continue  # division by zero: undefined, hence invalid
                                if Fraction(fmas_per_block, loads_per_block) < dev.min_fmas_per_load:
                                    continue
                            for vec_mul in ([0] if dim_vec == 1 else [0, 1]):
                                a_tile = (blk_m, blk_k) if trans_a == 0 else (blk_k, blk_m)
                                b_tile = (blk_k, blk_n) if trans_b == 0 else (blk_n, blk_k)
                                for dim_m_a, dim_n_a in reshapes("a", *a_tile, dim_vec, threads_per_block):
                                    for dim_m_b, dim_n_b in reshapes("b", *b_tile, dim_vec, threads_per_block):
                                        for tex_a in range(0, 2):
                                            for tex_b in range(0, 2):
                                                for shmem_l1 in range(0, 2):
                                                    for shmem_banks in range(0, 2):
                                                        found.add((dim_m, dim_n, blk_m, blk_n, blk_k,
                                                                   dim_vec, vec_mul,
                                                                   dim_m_a, dim_n_a, dim_m_b, dim_n_b,
                                                                   tex_a, tex_b, shmem_l1, shmem_banks))
    return found


# --------------------------------------------------------------------------------------------
# solverspace's answers (computed once per case)
# --------------------------------------------------------------------------------------------
_LIBRARY_CACHE: dict = {}


def library(overrides, precision, arithmetic, trans_a, trans_b):
    """(parameters, rows, stats) from solverspace's reference enumerator, cached per case."""
    key = (tuple(sorted(overrides.items())), precision, arithmetic, trans_a, trans_b)
    if key not in _LIBRARY_CACHE:
        from solverspace import Space

        settings = {"device": "tiny", "precision": precision, "arithmetic": arithmetic,
                    "trans_a": trans_a, "trans_b": trans_b, **overrides}
        space = Space.load("gemm", settings)
        rows = list(space.rows("reference"))
        _LIBRARY_CACHE[key] = (space.parameters, rows, space.stats("reference"))
    return _LIBRARY_CACHE[key]


_ORACLE_CACHE: dict = {}


def oracle_cached(name, precision, arithmetic, trans_a, trans_b):
    key = (name, precision, arithmetic, trans_a, trans_b)
    if key not in _ORACLE_CACHE:
        dev = {"tiny": TINY, "other": OTHER}[name]
        _ORACLE_CACHE[key] = oracle(dev, precision, arithmetic, trans_a, trans_b)
    return _ORACLE_CACHE[key]


def assert_same(expected, parameters, rows, stats):
    assert tuple(parameters) == COLUMNS
    assert all(len(r) == len(COLUMNS) for r in rows)
    got = set(map(tuple, rows))
    assert len(rows) == len(got), "duplicate rows"
    assert stats.count == len(rows)
    missing = sorted(expected - got)
    extra = sorted(got - expected)
    assert not missing and not extra, (
        f"{len(missing)} valid configurations missing (first: {missing[:3]}), "
        f"{len(extra)} invalid ones present (first: {extra[:3]}); columns {COLUMNS}")


ALL_CASES = list(itertools.product(PRECISIONS, ARITHMETICS, TRANSPOSES, TRANSPOSES))
KINDS = list(itertools.product(PRECISIONS, ARITHMETICS))


# --------------------------------------------------------------------------------------------
# 1. device "tiny": all 16 settings
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("precision,arithmetic,trans_a,trans_b", ALL_CASES)
def test_tiny_matches_oracle(precision, arithmetic, trans_a, trans_b):
    expected = oracle_cached("tiny", precision, arithmetic, trans_a, trans_b)
    assert_same(expected, *library({}, precision, arithmetic, trans_a, trans_b))


# --------------------------------------------------------------------------------------------
# 2. a second device made of setting overrides: each precision/arithmetic, two transpositions
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("trans_a,trans_b", [(0, 1), (1, 0)])
@pytest.mark.parametrize("precision,arithmetic", KINDS)
def test_overridden_device_matches_oracle(precision, arithmetic, trans_a, trans_b):
    expected = oracle_cached("other", precision, arithmetic, trans_a, trans_b)
    assert_same(expected, *library(OTHER_OVERRIDES, precision, arithmetic, trans_a, trans_b))


# --------------------------------------------------------------------------------------------
# 3. the comparison has power
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["tiny", "other"])
def test_oracle_counts_are_not_trivial(name):
    for case in ALL_CASES:
        n = len(oracle_cached(name, *case))
        assert n >= 48, (name, case, n)
    # The two devices differ in every precision/arithmetic: the overrides change the space.
    for kind in KINDS:
        assert oracle_cached("tiny", *kind, 0, 1) != oracle_cached("other", *kind, 0, 1)


def test_oracle_tiny_counts():
    # Regression numbers of the oracle itself (hand-derived program, not the library).
    counts = {case: len(oracle_cached("tiny", *case)) for case in ALL_CASES}
    per_kind = {("single", "real"): 2000, ("single", "complex"): 1568,
                ("double", "real"): 336, ("double", "complex"): 48}
    assert counts == {case: per_kind[case[:2]] for case in ALL_CASES}


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_every_constraint_has_power(constraint):
    """Dropping any one constraint from the oracle makes it disagree with solverspace."""
    case = ("single", "complex", 0, 1)
    expected = oracle_cached("other", *case)
    wrong = oracle(OTHER, *case, drop={constraint})
    assert wrong > expected  # strictly more configurations survive
    _, rows, _ = library(OTHER_OVERRIDES, *case)
    assert set(rows) != wrong


def test_literal_dim_vec_slip_is_detected():
    """Fig. 11 as printed (arithmetic/precision swapped) gives single-real dim_vec {1, 2}."""
    case = ("single", "real", 0, 1)
    wrong = oracle(TINY, *case, literal_dim_vec=True)
    assert {r[COLUMNS.index("dim_vec")] for r in wrong} == {1, 2}
    _, rows, _ = library({}, *case)
    assert {r[COLUMNS.index("dim_vec")] for r in rows} == {1, 4}
    assert set(rows) != wrong
