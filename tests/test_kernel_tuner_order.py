"""The Kernel Tuner drop-in is Kernel Tuner's search: `Searchspace.list` in the order of Kernel Tuner
1.5's own list (python-constraint's variable order, values last first), its random and Latin
hypercube samples the same draws from the same generators, and Kernel Tuner's `bayes_opt` and
`random_sample` through our `tune_kernel(seed=...)` propose exactly what they propose on Kernel
Tuner's own `Searchspace` after the same seeding (`seeded_draws`)."""
from __future__ import annotations

import random

import numpy as np
import pytest

kernel_tuner = pytest.importorskip("kernel_tuner")

from kernel_tuner.searchspace import Searchspace as KernelTunerSearchspace   # noqa: E402

from solverspace.core.errors import OptionError                               # noqa: E402
from solverspace.integrations.kernel_tuner.searchspace import Searchspace, seeded_draws, tune_kernel  # noqa: E402
from tests.helpers import FAST_FILES, MAX_THREADS, TOY, peer_file, run, t1_arguments  # noqa: E402


@pytest.mark.parametrize("name", FAST_FILES)
def test_the_list_is_kernel_tuners_list_in_its_order(name):
    tune_params, restrictions = t1_arguments(peer_file(name))
    ours = Searchspace(tune_params, restrictions, MAX_THREADS)
    theirs = KernelTunerSearchspace(tune_params, restrictions, MAX_THREADS)
    rng = random.Random(0)
    for position in [0, theirs.size - 1] + [rng.randrange(theirs.size) for _ in range(20)]:
        assert ours.get_param_configs_at_indices([position]) == [theirs.list[position]]
        assert ours.get_param_config_index(theirs.list[position]) == position
    assert list(ours.list) == [tuple(c) for c in theirs.list]


def test_samples_are_kernel_tuners_draws_from_the_same_generators(monkeypatch):
    tune_params, restrictions = t1_arguments(peer_file("benchmark_hub_T1/convolution_milo"))
    ours = Searchspace(tune_params, restrictions, MAX_THREADS)
    theirs = KernelTunerSearchspace(tune_params, restrictions, MAX_THREADS)
    for seed in (0, 1, 2):
        np.random.seed(seed)
        expected = theirs.get_random_sample(30)
        np.random.seed(seed)
        assert ours.get_random_sample(30) == expected
    # Kernel Tuner's LHS is scipy's, unseeded: both given the same Latin hypercube draws from numpy's generator
    import scipy.stats.qmc as qmc
    latin = qmc.LatinHypercube
    monkeypatch.setattr(qmc, "LatinHypercube", lambda d, **_: latin(d, seed=np.random.mtrand._rand))
    for seed in (0, 1, 2):
        np.random.seed(seed)
        expected = theirs.get_LHS_sample_indices(20)
        np.random.seed(seed)
        assert ours.get_LHS_sample_indices(20) == expected
    assert ours.get_LHS_sample(20) and all(theirs.is_param_config_valid(c) for c in ours.get_LHS_sample(20))


def test_own_seed_gives_own_generators():
    tune_params, restrictions = t1_arguments(peer_file("benchmark_hub_T1/convolution_milo"))
    one, two = Searchspace(tune_params, restrictions, MAX_THREADS, seed=4), \
        Searchspace(tune_params, restrictions, MAX_THREADS, seed=4)
    state = np.random.get_state()[1].copy()
    assert one.get_LHS_sample(20) == two.get_LHS_sample(20) and one.get_random_sample(9) == two.get_random_sample(9)
    assert (np.random.get_state()[1] == state).all()     # the global generator untouched


def _proposals(results) -> list:
    return [tuple(r[n] for n in TOY) for r in results]


# bayes_opt's default method, "multi-ultrafast", refits its model or not by the wall-clock times of its
# predictions and evaluations: Kernel Tuner's own runs of it differ with the machine's load, seeded or
# not (bench/kt_dropin_search.py compares it statistically). Its other methods decide by the data alone.
@pytest.mark.parametrize("strategy, options", [("bayes_opt", {"method": "multi"}), ("bayes_opt", {"method": "ei"}),
                                               ("random_sample", {})])
def test_kernel_tuners_strategy_proposes_the_same_sequence_through_the_drop_in(toy_cache, strategy, options):
    path, space, _ = toy_cache
    options = {"max_fevals": 40, **options}
    for seed in (1, 2):
        with seeded_draws(seed):
            theirs, _ = run(kernel_tuner.tune_kernel, path, strategy, dict(options))
        before = random.getstate(), np.random.get_state()[1].copy()
        ours, _ = run(tune_kernel, path, strategy, dict(options), seed=seed)
        assert random.getstate() == before[0] and (np.random.get_state()[1] == before[1]).all()   # restored
        assert len(theirs) >= 30
        assert _proposals(ours) == _proposals(theirs), (strategy, seed)
    assert kernel_tuner.interface.Searchspace is KernelTunerSearchspace
    import kernel_tuner.strategies.bayes_opt as bayes_opt
    import scipy.stats.qmc as qmc
    assert bayes_opt.LatinHypercube is qmc.LatinHypercube      # restored


def test_the_seed_reaches_diff_evo_and_its_lhs(toy_cache):
    path, _, _ = toy_cache
    first, _ = run(tune_kernel, path, "diff_evo", {"max_fevals": 30}, seed=5)
    again, _ = run(tune_kernel, path, "diff_evo", {"max_fevals": 30}, seed=5)
    assert _proposals(first) == _proposals(again)


def test_a_seed_numpy_cannot_take_is_refused(toy_cache):
    path, _, _ = toy_cache
    with pytest.raises(OptionError, match="seed=-1"):
        run(tune_kernel, path, "random_sample", {"max_fevals": 5}, seed=-1)
