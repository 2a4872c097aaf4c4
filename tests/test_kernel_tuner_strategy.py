"""solverspace's own strategies inside Kernel Tuner (`integrations/kernel_tuner/strategy.py`), run by
the real Kernel Tuner 1.5 in simulation mode on the toy cache: by name through the drop-in's
`tune_kernel`, as an object through Kernel Tuner's own; every proposal valid and new, recorded in
Kernel Tuner's results with the cache's time, the budget Kernel Tuner's, the seed reaching the
strategy, a prior read, and a configuration a Python restriction rejects never measured."""
from __future__ import annotations

import json

import numpy as np
import pytest

kernel_tuner = pytest.importorskip("kernel_tuner")

from solverspace.core.errors import OptionError                                    # noqa: E402
from solverspace.integrations.kernel_tuner import KernelTunerStrategy, tune_kernel  # noqa: E402
from solverspace.integrations.kernel_tuner.strategy import NAMES                    # noqa: E402
from tests.helpers import TOY, TOY_RESTRICTIONS, run                                # noqa: E402


def configs(results) -> list[tuple]:
    return [tuple(r[n] for n in TOY) for r in results]


def key(config) -> str:
    return ",".join(map(str, config))


@pytest.mark.parametrize("name", NAMES)
def test_the_drop_in_takes_our_strategies_by_name(toy_cache, name):
    path, space, times = toy_cache
    results, _ = run(tune_kernel, path, name, {"max_fevals": 40, "seed": 3})
    found = configs(results)
    assert len(found) == 40 and len(set(found)) == 40
    assert all(space.is_valid(c) for c in found)
    assert [r["time"] for r in results] == [times[key(c)] for c in found]
    assert name not in kernel_tuner.interface.strategy_map       # registered for the call only
    with pytest.raises(ValueError, match="Unkown strategy"):
        run(kernel_tuner.tune_kernel, path, name, {"max_fevals": 5})


def test_past_the_budget_every_valid_configuration_once(toy_cache):
    path, space, times = toy_cache
    results, _ = run(tune_kernel, path, "solverspace_random", {"max_fevals": 10 * len(space)})
    assert sorted(map(key, configs(results))) == sorted(times)


def test_a_seed_gives_one_search_and_the_drop_ins_seed_reaches_it(toy_cache):
    path, _, _ = toy_cache
    one = configs(run(tune_kernel, path, "solverspace_model", {"max_fevals": 25, "seed": 7})[0])
    assert one == configs(run(tune_kernel, path, "solverspace_model", {"max_fevals": 25, "seed": 7})[0])
    assert one != configs(run(tune_kernel, path, "solverspace_model", {"max_fevals": 25, "seed": 8})[0])
    by_call = configs(run(tune_kernel, path, "solverspace_model", {"max_fevals": 25}, seed=5)[0])
    assert by_call == configs(run(tune_kernel, path, "solverspace_model", {"max_fevals": 25}, seed=5)[0])
    assert by_call != configs(run(tune_kernel, path, "solverspace_model", {"max_fevals": 25}, seed=6)[0])


def test_kernel_tuners_own_tune_kernel_takes_the_object_and_searches_the_same(toy_cache):
    path, space, _ = toy_cache
    options = {"max_fevals": 30, "seed": 2}
    theirs, _ = run(kernel_tuner.tune_kernel, path, KernelTunerStrategy("model"), options)
    ours, _ = run(tune_kernel, path, "solverspace_model", options)
    assert configs(theirs) == configs(ours)
    assert all(space.is_valid(c) for c in configs(theirs))


def test_the_model_finds_faster_configurations_than_uniform_search(toy_cache):
    path, _, times = toy_cache
    best = {name: [min(r["time"] for r in run(tune_kernel, path, name, {"max_fevals": 30, "seed": s})[0])
                   for s in range(6)] for name in ("solverspace_model", "solverspace_random")}
    assert np.mean(best["solverspace_model"]) < np.mean(best["solverspace_random"])


def test_a_prior_from_another_devices_cache_starts_from_its_best(toy_cache, tmp_path):
    path, _, times = toy_cache
    data = json.loads(path.read_text())
    rng = np.random.default_rng(0)
    for entry in data["cache"].values():          # another device: the same ranking, roughly
        entry["time"] = entry["time"] * 3 * (1 + 0.01 * rng.random())
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    fastest_there = min(data["cache"], key=lambda k: data["cache"][k]["time"])
    results, _ = run(tune_kernel, path, "solverspace_model", {"max_fevals": 12, "seed": 0, "prior": str(other)})
    assert key(configs(results)[0]) == fastest_there


def test_a_configuration_a_python_restriction_rejects_is_never_measured(toy_cache):
    path, space, times = toy_cache
    restrictions = list(TOY_RESTRICTIONS) + [(lambda x: x != 64, ["block_size_x"])]    # runs in Python
    results, _ = tune_kernel("toy", "", (1024,), [], dict(TOY), restrictions=restrictions, cache=str(path),
                             simulation_mode=True, strategy="solverspace_random",
                             strategy_options={"max_fevals": 10 * len(space)}, quiet=True, verbose=False)
    expected = sorted(k for k in times if not k.startswith("64,"))
    assert sorted(map(key, configs(results))) == expected


@pytest.mark.parametrize("name, options, message", [
    ("solverspace_model", {"max_fevals": 5, "sed": 1}, r"(?s)strategy_options\['sed'\].*did you mean 'seed'"),
    ("solverspace_random", {"max_fevals": 5, "prior": "x.json"}, r"only solverspace_model reads a prior"),
    ("solverspace_model", {"max_fevals": 5, "seed": "one"}, r"expected a whole number"),
    ("solverspace_model", {"max_fevals": 5, "seed": -1}, r"expected a whole number"),
])
def test_bad_options_are_refused_with_a_message(toy_cache, name, options, message):
    path, _, _ = toy_cache
    with pytest.raises(OptionError, match=message):
        run(tune_kernel, path, name, options)
    assert name not in kernel_tuner.interface.strategy_map


def test_an_unknown_strategy_and_an_objective_the_model_cannot_take(toy_cache):
    path, _, _ = toy_cache
    with pytest.raises(OptionError, match="did you mean 'model'"):
        KernelTunerStrategy("modle")
    with pytest.raises(OptionError, match="one objective"):
        run(tune_kernel, path, "solverspace_model", {"max_fevals": 5},
            objectives={"time": False, "compile_time": False})
    # higher is better: told as its reciprocal, so the search runs and records as any other
    results, _ = run(tune_kernel, path, "solverspace_model", {"max_fevals": 15, "seed": 0},
                     objective="time", objective_higher_is_better=True)
    assert len(set(configs(results))) == 15
