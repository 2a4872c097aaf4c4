"""solverspace.integrations.kernel_tuner (issue 26): our lazy `Searchspace` against Kernel Tuner 1.5's own on the
16 T1 files under tests/data/peer_spaces and the tiny GEMM space (size, validity on random points of
the value-list box, neighbour sets of every method for valid and invalid configurations, samples
valid); Kernel Tuner's shipped strategies end to end in simulation mode through our `tune_kernel`;
the module-level `Searchspace` replaced per thread and restored on any exit; bad input."""
from __future__ import annotations

import ast
import itertools
import json
import random
import threading
from pathlib import Path

import numpy as np
import pytest

kernel_tuner = pytest.importorskip("kernel_tuner")

from kernel_tuner.searchspace import Searchspace as KernelTunerSearchspace   # noqa: E402

from solverspace import Space                                                 # noqa: E402
from solverspace.core.errors import OptionError, SolverspaceError             # noqa: E402
from solverspace.integrations.kernel_tuner.searchspace import NEIGHBOR_METHODS, Searchspace, build_space, tune_kernel  # noqa: E402
from tests.helpers import (  # noqa: E402
    FAST_FILES, MAX_THREADS, TOY, TOY_RESTRICTIONS, logged, peer_file, run, t1_arguments)


SLOW_FILES = ["willemsen2025/atf_prl", "benchmark_hub_T1/gemm_milo", "benchmark_hub_T1/hotspot_milo", "kernel_tuner_paper_T1/gemm",
              "kernel_tuner_paper_T1/hotspot", "willemsen2025/expdist", "willemsen2025/hotspot", "willemsen2025/gemm",
              "willemsen2025/microhh"]


def compare(ours: Searchspace, theirs, *, configs: int, box_points: int, seed: int = 0) -> None:
    assert ours.size == theirs.size
    rng = random.Random(seed)
    values = ours.params_values
    for _ in range(box_points):
        point = tuple(rng.choice(v) for v in values)
        assert ours.is_param_config_valid(point) == theirs.is_param_config_valid(point), point
    chosen = [theirs.list[rng.randrange(theirs.size)] for _ in range(configs)]
    invalid = []
    for _ in range(10_000):     # some spaces are their whole box: no invalid point
        point = tuple(rng.choice(v) for v in values)
        if not theirs.is_param_config_valid(point):
            invalid.append(point)
            if len(invalid) == max(1, configs // 3):
                break
    indices = theirs.get_list_param_indices_numpy()
    # Kernel Tuner 1.5 sums index differences in the list's own dtype (int8 when every index is
    # below 64): past 127 the sum wraps and its closest-param-indices answer is wrong (tiny GEMM:
    # distance 129 read as -127). Its definition, in int64, is checked always; its answer where no sum can wrap.
    wraps = np.iinfo(indices.dtype).max < sum(len(v) - 1 for v in values)
    indices = indices.astype(np.int64)
    for config in chosen + invalid:
        for method in NEIGHBOR_METHODS:
            mine = ours.get_neighbors(config, method)
            assert all(ours.is_param_config_valid(n) for n in mine)
            if method == "closest-param-indices":
                distance = np.abs(indices - np.array(theirs.get_param_indices(config))).sum(axis=1)
                own = theirs.get_param_config_index(config)
                if own is not None:
                    distance[own] = np.iinfo(np.int64).max
                assert set(mine) == {tuple(theirs.list[i]) for i in np.flatnonzero(distance == distance.min())}
                if wraps:
                    continue
            assert set(mine) == set(map(tuple, theirs.get_neighbors_no_cache(config, method))), (config, method)
    for sample in (ours.get_random_sample(min(25, ours.size)), ours.get_LHS_sample(min(25, ours.size // 2))):
        assert len(set(sample)) == len(sample) and all(theirs.is_param_config_valid(c) for c in sample)


@pytest.mark.parametrize("name", FAST_FILES)
def test_agrees_with_kernel_tuners_searchspace_on_peer_spaces(name):
    tune_params, restrictions = t1_arguments(peer_file(name))
    ours = Searchspace(tune_params, restrictions, MAX_THREADS)
    theirs = KernelTunerSearchspace(tune_params, restrictions, MAX_THREADS)
    compare(ours, theirs, configs=3, box_points=2_000)


@pytest.mark.slow
@pytest.mark.parametrize("name", FAST_FILES + SLOW_FILES)
def test_agrees_with_kernel_tuners_searchspace_on_peer_spaces_exhaustively(name):
    tune_params, restrictions = t1_arguments(peer_file(name))
    ours = Searchspace(tune_params, restrictions, MAX_THREADS)
    theirs = KernelTunerSearchspace(tune_params, restrictions, MAX_THREADS)
    compare(ours, theirs, configs=1_000, box_points=100_000, seed=1)


def gemm_against_kernel_tuner(device: str, tmp_path: Path, configs: int, box_points: int) -> None:
    """Kernel Tuner cannot build the GEMM space itself (python-constraint's parser rejects the
    exported conditions' `not (...)`; its bruteforce builder would try every point of the box):
    its Searchspace is given our list through its own ATF_cache reader, and its own code answers
    validity and neighbours on it."""
    space = Space.load("gemm", {"device": device})
    ours = Searchspace(space=space)
    table = tmp_path / "gemm.csv"
    space.write_csv(table, "auto", sep=";")
    theirs = KernelTunerSearchspace({n: list(v) for n, v in ours.tune_params.items()}, None, 1024,
                                    framework="ATF_cache", path_to_ATF_cache=table)
    assert ours.size == theirs.size == space.count("auto")
    compare(ours, theirs, configs=configs, box_points=box_points)


def test_agrees_with_kernel_tuners_neighbours_on_tiny_gemm(tmp_path):
    gemm_against_kernel_tuner("tiny", tmp_path, configs=6, box_points=2_000)


@pytest.mark.parametrize("predicate", [False, True])
def test_neighbours_of_every_point_in_kernel_tuners_own_list_order(predicate):
    """`tune_params` lists in no sorted order (Kernel Tuner's indices are not the value lists'),
    with and without a Python predicate: every point of the box, valid or not, has Kernel Tuner's
    own neighbours by each method (all answered by `moves/`)."""
    tune_params = {"block_size_x": [64, 16, 128, 32], "tile": [3, 1, 4, 2], "kind": ["b", "c", "a"]}
    restrictions = ["block_size_x * tile <= 192", "kind != 'c' or tile < 3"]
    def positional(x, t, k):
        return (x + t) % 3 != 0
    if predicate:
        restrictions.append(positional)
    ours = Searchspace(tune_params, restrictions, MAX_THREADS)
    theirs = KernelTunerSearchspace(tune_params, restrictions, MAX_THREADS)
    assert ours.size == theirs.size
    box = list(itertools.product(*tune_params.values()))
    assert sum(not theirs.is_param_config_valid(c) for c in box) >= 12
    for config in box:
        for method in NEIGHBOR_METHODS:
            mine = ours.get_neighbors(config, method)
            assert mine == sorted(mine, key=theirs.get_param_indices)
            assert set(mine) == set(map(tuple, theirs.get_neighbors_no_cache(config, method))), (config, method)


@pytest.mark.slow
def test_agrees_with_kernel_tuners_neighbours_on_k40c_gemm(tmp_path):
    gemm_against_kernel_tuner("k40c", tmp_path, configs=30, box_points=100_000)


def test_searchspace_of_a_space_needs_no_list_and_samples_are_seeded():
    space = Space.load("gemm", {"device": "tiny"})
    ours = Searchspace(space=space, seed=7)
    again = Searchspace(space=space, seed=7)
    assert ours.size == space.count("reference") == 336
    assert ours.get_random_sample(10) == again.get_random_sample(10)
    config = ours.get_random_sample(1)[0]
    assert again.get_random_sample(1)[0] == config
    for method in NEIGHBOR_METHODS:
        assert all(space.is_valid(n) for n in ours.get_neighbors(config, method))
    assert ours.get_random_neighbor(config, "Hamming") == again.get_random_neighbor(config, "Hamming")
    assert not ours.listed
    with pytest.raises(OptionError, match="whole list"):
        Searchspace(space=space, materialize_limit=10).list


# ---------------------------------------------------------------------------------- restrictions
def test_callables_are_python_predicates_as_kernel_tuner_calls_them(caplog):
    tune_params = {"block_size_x": [16, 32, 64, 128], "block_size_y": [1, 2, 4, 8], "tile": [1, 2, 3, 4]}
    def monolithic(p):
        return p["block_size_x"] * p["tile"] <= 256 and p["tile"] != 3

    def positional(x, y, t):
        return x * t <= 256 and t != 3
    cases = [   # (restrictions, evaluated in Python?)
        (["block_size_x * tile <= 256", lambda p: p["tile"] != 3], False),           # a lambda: read as a string
        (["block_size_x * tile <= 256", lambda p: p["tile"].bit_length() != 2 or p["tile"] == 2], True),  # unreadable
        ([(lambda x, t: x * t <= 256, ["block_size_x", "tile"]), "tile != 3"], True),  # (function, [names])
        ([monolithic], True),                                                          # the old monolithic form
        ([positional], True),                                                          # every value, positionally
    ]
    expected = KernelTunerSearchspace(tune_params, ["block_size_x * tile <= 256", "tile != 3"], MAX_THREADS)
    for restrictions, in_python in cases:
        ours = Searchspace(tune_params, restrictions, MAX_THREADS)
        assert set(ours.list) == set(expected.list)
        assert ("run in Python" in logged(caplog)) == in_python
    ours = Searchspace(tune_params, ["block_size_x * tile <= 256", "tile != 3"], MAX_THREADS)
    assert ours.size == expected.size and "callables" not in logged(caplog)


def test_a_string_restriction_we_cannot_read_is_refused_not_dropped():
    with pytest.raises(SolverspaceError):
        build_space({"a": [1, 2, 3]}, ["a.bit_length() > 1"])
    with pytest.raises(OptionError, match="not a Python expression"):
        build_space({"a": [1, 2, 3]}, ["a >"])


def test_the_block_size_rule_is_kernel_tuners():
    tune_params = {"block_size_x": [32, 64, 128, 256], "block_size_y": [1, 2, 4, 8]}
    for max_threads in (128, 256, 1024):
        ours = Searchspace(tune_params, None, max_threads)
        assert ours.size == KernelTunerSearchspace(tune_params, None, max_threads).size
        assert ours.is_param_config_valid((256, 1)) == (256 <= max_threads)


# ---------------------------------------------------------------------------------- inside Kernel Tuner
STRATEGIES = ["random_sample", "genetic_algorithm", "simulated_annealing", "mls", "greedy_ils", "diff_evo", "pso",
              "firefly_algorithm"]
MORE = ["basinhopping", "greedy_mls", "dual_annealing", "ordered_greedy_mls", "minimize", "bayes_opt"]


def _check_strategy(toy_cache, strategy):
    path, space, times = toy_cache
    results, env = run(tune_kernel, path, strategy, {"max_fevals": 30})
    assert results and all(space.is_valid(tuple(r[n] for n in TOY)) for r in results)
    assert all(r["time"] == times[",".join(str(r[n]) for n in TOY)] for r in results)
    assert kernel_tuner.interface.Searchspace is KernelTunerSearchspace


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_shipped_strategies_run_on_our_searchspace_and_return_only_valid_configurations(toy_cache, strategy):
    _check_strategy(toy_cache, strategy)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", MORE)
def test_more_shipped_strategies(toy_cache, strategy):
    _check_strategy(toy_cache, strategy)


def test_the_same_user_code_runs_unchanged_against_both(toy_cache):
    path, _, times = toy_cache
    ours, _ = run(tune_kernel, path, "brute_force")
    theirs, _ = run(kernel_tuner.tune_kernel, path, "brute_force")
    key = lambda r: ",".join(str(r[n]) for n in TOY)   # noqa: E731
    assert sorted((key(r), r["time"]) for r in ours) == sorted((key(r), r["time"]) for r in theirs)
    assert len(ours) == len(times)


def test_space_argument_and_the_name_restored_on_an_exception(toy_cache, tmp_path):
    path, space, _ = toy_cache
    with pytest.raises(ValueError):     # Kernel Tuner's own error: another kernel's cache
        tune_kernel("other", "", (1024,), [], dict(TOY), restrictions=list(TOY_RESTRICTIONS), cache=str(path),
                    simulation_mode=True, quiet=True)
    assert kernel_tuner.interface.Searchspace is KernelTunerSearchspace
    seen = []

    class Strategy:
        @staticmethod
        def tune(searchspace, runner, tuning_options):
            seen.append(searchspace)
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        tune_kernel("toy", "", (1024,), [], None, cache=str(path), simulation_mode=True, quiet=True,
                    strategy=Strategy, space=space)
    assert isinstance(seen[0], Searchspace) and seen[0].space is space
    assert kernel_tuner.interface.Searchspace is KernelTunerSearchspace
    with pytest.raises(OptionError, match="restrictions with space="):
        tune_kernel("toy", "", (1024,), [], None, restrictions=["x > 1"], space=space)


def test_other_threads_get_kernel_tuners_own_searchspace_meanwhile(toy_cache):
    path, _, _ = toy_cache
    inside, release = threading.Event(), threading.Event()
    kinds: dict = {}

    class Holding:
        @staticmethod
        def tune(searchspace, runner, tuning_options):
            kinds["ours"] = type(searchspace)
            inside.set()
            assert release.wait(60)
            return []

    class Recording:
        @staticmethod
        def tune(searchspace, runner, tuning_options):
            kinds["theirs"] = type(searchspace)
            return []

    errors = []

    def ours():
        try:
            run(tune_kernel, path, Holding)
        except Exception as exc:    # noqa: BLE001 - reported below
            errors.append(exc)
    thread = threading.Thread(target=ours)
    thread.start()
    assert inside.wait(60)
    assert kernel_tuner.interface.Searchspace is not KernelTunerSearchspace     # replaced while ours runs
    run(kernel_tuner.tune_kernel, path, Recording)
    release.set()
    thread.join(60)
    assert not errors
    assert kinds == {"ours": Searchspace, "theirs": KernelTunerSearchspace}
    assert kernel_tuner.interface.Searchspace is KernelTunerSearchspace


# ---------------------------------------------------------------------------------- run_kernel
SCALE_SOURCE = """
extern "C" float scale(float *out, float *a, int n) {
    for (int i = 0; i < n; i += 1) { out[i] = a[i] * block_size_x + tile; }
    return 0.0f;
}
"""


def test_run_kernel_checks_params_then_runs_kernel_tuners_own(monkeypatch):
    import shutil
    from solverspace.integrations.kernel_tuner.searchspace import run_kernel
    tune_params = {"block_size_x": [1, 2, 4, 8], "tile": [1, 2, 3]}
    restrictions = ["block_size_x * tile <= 8", "tile & 1 == 1"]
    a = np.arange(8, dtype=np.float32)
    calls = []
    real = kernel_tuner.run_kernel

    def recording(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)
    monkeypatch.setattr(kernel_tuner, "run_kernel", recording)
    with pytest.raises(OptionError, match=r"'block_size_x \* tile <= 8' with block_size_x=4, tile=3; "
                                          r"'tile != 3 or block_size_x < 4' with block_size_x=4, tile=3\n"):
        run_kernel("scale", SCALE_SOURCE, 8, [np.zeros_like(a), a, np.int32(8)], {"block_size_x": 4, "tile": 3},
                   tune_params=tune_params, restrictions=restrictions + ["tile != 3 or block_size_x < 4"], lang="C")
    with pytest.raises(OptionError, match=r"it breaks 'tile & 1 == 1'\n"):     # run in Python, named as well
        run_kernel("scale", SCALE_SOURCE, 8, [np.zeros_like(a), a, np.int32(8)], {"block_size_x": 2, "tile": 2},
                   tune_params=tune_params, restrictions=restrictions, lang="C")
    with pytest.raises(OptionError, match=r"'block_size_x <= 4' with block_size_x=8"):   # Kernel Tuner's own rule
        run_kernel("scale", SCALE_SOURCE, 8, [np.zeros_like(a), a, np.int32(8)], {"block_size_x": 8, "tile": 1},
                   tune_params=tune_params, restrictions=restrictions, max_threads=4, lang="C")
    with pytest.raises(OptionError, match=r"block_size_x=5 is not among its values"):
        run_kernel("scale", SCALE_SOURCE, 8, [], {"block_size_x": 5, "tile": 1}, tune_params=tune_params)
    with pytest.raises(OptionError, match="no space to check params against"):
        run_kernel("scale", SCALE_SOURCE, 8, [], {"block_size_x": 1, "tile": 1})
    assert not calls
    if shutil.which("g++") is None:
        pytest.skip("Kernel Tuner's C backend needs g++")
    out = run_kernel("scale", SCALE_SOURCE, 8, [np.zeros_like(a), a, np.int32(8)], {"block_size_x": 2, "tile": 3},
                     tune_params=tune_params, restrictions=restrictions, max_threads=1024, lang="C", quiet=True)
    assert len(calls) == 1 and "tune_params" not in calls[0][1] and calls[0][1]["lang"] == "C"
    assert out[0].tolist() == (a * 2 + 3).tolist()


def test_run_kernel_with_a_space_names_the_broken_constraint():
    from solverspace.integrations.kernel_tuner.searchspace import broken_restrictions
    space = Space.load("gemm", {"device": "tiny"})
    config = dict(zip(space.parameters, space[0]))
    assert broken_restrictions(config, space=space) == []
    config["blk_m"] *= 2
    broken = broken_restrictions(config, space=space)
    assert broken and all(":" in b and "with" in b for b in broken)
    with pytest.raises(OptionError, match="not both"):
        broken_restrictions(config, space=space, tune_params={"blk_m": [1]})
    del config["blk_m"]
    with pytest.raises(OptionError, match=r"lacks \['blk_m'\]"):
        broken_restrictions(config, space=space)


def test_a_restriction_run_in_python_holds_inside_kernel_tuners_tuning(toy_cache, caplog):
    path, space, times = toy_cache
    extra = "(tile_x | tile_y) != 3"     # bitwise: not translated, run by the safe evaluator
    results, _ = tune_kernel("toy", "", (1024,), [], dict(TOY), restrictions=list(TOY_RESTRICTIONS) + [extra],
                             cache=str(path), simulation_mode=True, strategy="random_sample",
                             strategy_options={"max_fevals": 40}, quiet=True, verbose=False)
    assert len(results) == 40 and all((r["tile_x"] | r["tile_y"]) != 3 for r in results)
    assert all(space.is_valid(tuple(r[n] for n in TOY)) for r in results)
    assert logged(caplog).count(f"restriction {extra!r} runs in Python") == 1
    assert kernel_tuner.interface.Searchspace is KernelTunerSearchspace
