"""Search strategies over the valid set (`solverspace.strategies`) and `tune` without a bound:
every proposal is a valid configuration never proposed before, checked against the listed space
(brute force), on hand-written and generated spaces, listed and pooled candidates; the tune
database records and resumes; the command line runs it from a Kernel Tuner cache; a rank prior."""
from __future__ import annotations

import gzip
import json
import math
import warnings
import zlib

import pytest
from hypothesis import HealthCheck, given, settings

from solverspace import Space, SolverspaceError
from solverspace.cli import main
from solverspace.strategies import ModelBased, SpaceExhausted, Uniform, make
from solverspace.strategies.base import Listed, Pooled
from solverspace.strategies.prior import RankPrior
from solverspace.strategies.tune import tune_search
from solverspace.validation.generate import spaces
from tests.helpers import MOVES_SPACE, space

SMALL = """
    bx = iterator([16, 32, 64, 128])
    by = iterator([1, 2, 4])
    tx = range(1, 4)
    ty = range(1, 3)
    shmem = iterator([0, 1])
    require(bx * by <= 128)
    require(bx * tx <= 192)
    require((shmem == 1) | (ty <= 1))
"""
# proposals of the model-based strategy per generated space (a GP fit each: the rest of a large
# space is covered by the uniform strategy, and exhaustion by the hand-written space)
MODEL_STEPS = 30


def synthetic(config: tuple) -> float | None:
    """A deterministic time with a few failures (the hash of the configuration)."""
    h = zlib.crc32(repr(config).encode())
    if h % 17 == 0:
        return None
    return 1.0 + (h % 1000) / 100.0 + sum(zlib.crc32(str(v).encode()) % 7 for v in config) / 10.0


def drive(strategy, s, budget: int) -> list[tuple]:
    """Ask/tell `budget` times (at most the space's size); every proposal checked valid and new."""
    proposed = []
    for _ in range(budget):
        config = strategy.ask()
        assert s.is_valid(config), config
        assert config not in proposed
        proposed.append(config)
        strategy.tell(config, synthetic(config))
    return proposed


@pytest.mark.needs_cc
@pytest.mark.parametrize("name", [pytest.param("model", marks=pytest.mark.slow), "random"])
def test_whole_space_is_proposed_once_then_exhausted(name):
    s = space(SMALL)
    everything = set(s.rows("reference"))
    proposed = drive(make(name, s, seed=3), s, len(everything))
    assert set(proposed) == everything
    strategy = make(name, s, seed=3)
    drive(strategy, s, len(everything))
    with pytest.raises(SpaceExhausted):
        strategy.ask()


@pytest.mark.needs_cc
def test_model_strategy_is_seeded_and_learns():
    s = space(SMALL)
    a = drive(ModelBased(s, seed=1), s, 25)
    b = drive(ModelBased(s, seed=1), s, 25)
    assert a == b
    strategy = ModelBased(s, seed=1, n_startup=5)
    drive(strategy, s, 25)
    assert strategy.counts["startup"] == 5 and strategy.counts["model"] == 20


@pytest.mark.needs_cc
def test_pooled_candidates_are_valid_and_new():
    s = space(SMALL)
    strategy = ModelBased(s, seed=2, list_limit=0)
    assert isinstance(strategy.candidates, Pooled)
    drive(strategy, s, 40)
    assert isinstance(ModelBased(s, seed=2).candidates, Listed)


@pytest.mark.needs_cc
def test_told_configurations_are_never_proposed():
    s = space(SMALL)
    rows = list(s.rows("reference"))
    strategy = ModelBased(s, seed=0)
    for config in rows[::2]:
        strategy.tell(config, synthetic(config))
    left = set(rows[1::2])
    for _ in range(len(left)):
        assert strategy.ask() in left
    with pytest.raises(SpaceExhausted):
        strategy.ask()


@pytest.mark.needs_cc
@settings(max_examples=8, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(source=spaces(c_compatible=True))
def test_generated_spaces_against_brute_force(source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = Space.from_source(source, filename="generated.py")
    everything = list(s.rows("reference"))
    if not everything:
        return
    proposed = drive(make("random", s, seed=len(everything)), s, len(everything))
    assert sorted(map(repr, proposed)) == sorted(map(repr, everything))
    steps = min(MODEL_STEPS, len(everything))
    proposed = drive(make("model", s, seed=len(everything)), s, steps)
    assert set(map(repr, proposed)) <= set(map(repr, everything)) and len(set(proposed)) == steps


@pytest.mark.needs_cc
def test_tune_search_records_and_resumes(tmp_path):
    s = space(SMALL)
    db = str(tmp_path / "t.sqlite")
    calls = []

    def measure(config):
        calls.append(tuple(config[p] for p in s.parameters))
        t = synthetic(calls[-1])
        if t is None:
            raise RuntimeError("did not run")
        return t
    measure.tune_identity = "synthetic"      # the closure holds the Space and a growing list
    first = tune_search(s, measure, seed=4, max_measurements=12, db=db)
    assert first.measured == 12 and first.status == "max_measurements" and not first.proven
    assert all(s.is_valid(c) for c in calls) and len(set(calls)) == 12
    second = tune_search(s, measure, strategy="random", seed=9, max_measurements=5, db=db)
    assert second.reused == 12 and second.measured == 5 and len(set(calls)) == 17
    best = min((synthetic(c), c) for c in calls if synthetic(c) is not None)
    assert second.time == best[0]
    assert json.loads(json.dumps(second.as_dict()))["strategy"] == "random"


@pytest.mark.needs_cc
def test_tune_search_until_exhausted():
    s = space(MOVES_SPACE)
    result = tune_search(s, lambda c: float(c["x"] + c["y"] + c["h"]), strategy="model", seed=0)
    assert result.status == "exhausted" and result.measured == len(list(s.rows("reference")))
    assert result.time == min(x + y + h for x, y, _, h in s.rows("reference"))


def write_cache(path, s, time_of, device="dev"):
    """A brute-force Kernel Tuner cache of `s` (every valid configuration), times in ms."""
    names = list(s.parameters)
    cache = {}
    for config in s.rows("reference"):
        key = ",".join(map(str, config))
        t = time_of(config)
        entry = dict(zip(names, config))
        entry.update({"time": t * 1000, "times": [t * 1000]} if t is not None else
                     {"time": "RuntimeFailedConfig", "times": ["RuntimeFailedConfig"]})
        cache[key] = entry
    data = {"device_name": device, "kernel_name": "k", "problem_size": [1], "tune_params_keys": names,
            "tune_params": {n: list(v) for n, v in s.value_lists().items()}, "objective": "time", "cache": cache}
    text = json.dumps(data)
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.needs_cc
def test_command_line_from_a_cache(tmp_path, capsys):
    s = space(SMALL)
    source = tmp_path / "small.py"
    import textwrap
    source.write_text(textwrap.dedent(SMALL))
    cache = write_cache(tmp_path / "brute.json", s, synthetic)
    db = tmp_path / "t.sqlite"
    code = main(["tune", str(source), "--measure-from", str(cache), "--max-measurements", "30", "--seed", "5",
                 "--db", str(db), "--json", "-q"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["strategy"] == "model" and out["measured"] == 30 and out["seed"] == 5
    import sqlite3
    rows = sqlite3.connect(db).execute("SELECT configuration FROM measurements").fetchall()
    configs = [tuple(json.loads(r[0])[p] for p in s.parameters) for r in rows]
    assert len(configs) == 30 == len(set(configs)) and all(s.is_valid(c) for c in configs)
    ran = [synthetic(c) for c in configs if synthetic(c) is not None]
    assert math.isclose(out["time"], min(ran))
    code = main(["tune", str(source), "--measure-from", str(cache), "--strategy", "random", "--bound", "bx",
                 "--db", str(db)])
    assert code == 2 and "a statistical search uses no bound" in capsys.readouterr().err


@pytest.mark.needs_cc
def test_rank_prior_from_cache_and_database(tmp_path):
    s = space(SMALL)
    cache = write_cache(tmp_path / "other.json.gz", s, lambda c: 1.0 + c[0] / 100.0 + c[2])
    prior = RankPrior.from_path(s, cache)
    ranked = prior.ranked()
    assert ranked[0][0] == 16 and ranked[0][2] == 1       # the fastest there first
    assert prior.scores([ranked[0], ranked[-1]]).tolist() == [0.0, 1.0]
    strategy = ModelBased(s, seed=0, prior=prior)
    first = strategy.ask()
    assert first == ranked[0]
    db = str(tmp_path / "t.sqlite")
    tune_search(s, lambda c: 1.0 + c["tx"], seed=0, max_measurements=10, db=db)
    from_db = RankPrior.from_path(s, db)
    assert from_db.size == 10
    with pytest.raises(SolverspaceError, match="no such file"):
        RankPrior.from_path(s, tmp_path / "missing.json")


def test_unknown_strategy_is_refused():
    s = space(MOVES_SPACE)
    with pytest.raises(SolverspaceError, match="expected one of"):
        make("annealing", s)
    with pytest.raises(SolverspaceError, match="takes no prior"):
        make("random", s, prior=object())


def changes(a: tuple, b: tuple) -> int:
    return sum(x != y for x, y in zip(a, b))


@pytest.mark.needs_cc
def test_local_steps_move_one_parameter_of_the_best():
    s = space(SMALL)
    everything = set(s.rows("reference"))
    strategy = ModelBased(s, seed=4, n_startup=5, global_every=4, anchors=2, local_changes=1)
    local = 0
    for _ in range(30):
        anchors = strategy.best(2)
        near = {c for c in everything - strategy.proposed if any(changes(c, a) <= 1 for a in anchors)}
        config = strategy.ask()
        if strategy.last_source == "model" and strategy.model_steps % 4 and near:
            assert config in near, (config, anchors)
            local += 1
        strategy.tell(config, synthetic(config))
    assert local >= 10


def test_model_steps_use_one_blas_thread():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from solverspace.strategies.surrogate import one_blas_thread
    with one_blas_thread():
        inside = [lib["num_threads"] for lib in threadpoolctl.threadpool_info()]
    assert inside and set(inside) == {1}


def test_categorical_features_put_two_values_at_distance_one():
    s = space(SMALL)
    rows = list(s.rows("reference"))
    features = Listed(s, rows, categorical=True, dyadic=False).features
    columns = features.groups()
    x = features.encode(features.indices(rows))
    assert x.shape == (len(rows), len(columns))
    ordinal = len(features.kept)
    bx = s.parameters.index("bx")
    assert bx in features.onehot and s.parameters.index("shmem") not in features.onehot
    for a in rows:
        for b in rows:
            if [i for i in range(len(a)) if a[i] != b[i]] == [bx]:
                assert math.isclose(float(((x[rows.index(a), ordinal:] - x[rows.index(b), ordinal:]) ** 2).sum()), 1.0)
                return
    raise AssertionError("no two configurations differ in bx alone")


def test_dyadic_exponent_of_positive_integers_only():
    from solverspace.strategies.base import dyadic_exponent
    assert [dyadic_exponent(v) for v in (1, 2, 16, 48, 64, 96, 2**70 * 3)] == [0, 1, 4, 4, 6, 5, 70]
    assert all(math.isnan(dyadic_exponent(v)) for v in (0, -4, True, 3.0, "a", None))


def test_dyadic_columns_for_lists_of_positive_integers():
    s = space(SMALL + "    mode = iterator(['a', 'b', 'c'])\n    z = range(0, 3)\n")
    rows = list(s.rows("reference"))
    features = Listed(s, rows).features
    with_columns = sorted(s.parameters[p] for p, *_ in features.dyadic)
    assert with_columns == ["bx", "by", "tx"]   # ty: two values; shmem: two; mode: strings; z: holds 0
    x = features.encode(features.indices(rows))
    assert x.shape == (len(rows), len(features.groups())) and x.min() >= 0.0 and x.max() <= 1.0
    bx = s.parameters.index("bx")
    column = len(features.kept) + [p for p, *_ in features.dyadic].index(bx)
    by_value = {row[bx]: x[i, column] for i, row in enumerate(rows)}
    assert by_value == {16: 0.0, 32: 1 / 3, 64: 2 / 3, 128: 1.0}
    assert not Listed(s, rows, dyadic=False).features.dyadic


def test_grouped_length_scales_have_the_exact_gradient():
    import numpy as np
    from scipy.optimize import check_grad
    from solverspace.strategies.surrogate import GaussianProcess
    rng = np.random.default_rng(0)
    x, y = rng.random((30, 5)), rng.standard_normal(30)
    for groups, width in ((None, 5), ([0, 0, 1, 2, 2], 3)):
        gp = GaussianProcess(groups=groups)
        theta = 0.5 * rng.standard_normal(width + 2)
        assert check_grad(lambda t: gp.negative_log_likelihood(t, x, y)[0], lambda t: gp.negative_log_likelihood(t, x, y)[1], theta) < 1e-4


@pytest.mark.needs_cc
@pytest.mark.parametrize("options", [{"categorical": True}, {"target": "rank"}, {"spread": 2},
                                     {"fit_limit": 12, "list_limit": 0}, {"dyadic": False}])
def test_model_variants_propose_valid_new_configurations_by_seed(options):
    s = space(SMALL)
    a = drive(ModelBased(s, seed=5, **options), s, 30)
    assert a == drive(ModelBased(s, seed=5, **options), s, 30)


def test_unknown_surrogate_target_is_refused():
    with pytest.raises(SolverspaceError, match="target"):
        ModelBased(space(SMALL), seed=0, target="median")


@pytest.mark.needs_cc
def test_prior_start_up_can_share_the_design_with_a_latin_hypercube():
    s = space(SMALL)
    rows = list(s.rows("reference"))
    prior = RankPrior(s, {c: synthetic(c) for c in rows})
    strategy = ModelBased(s, seed=0, prior=prior, n_startup=8, prior_startup=3)
    proposed = drive(strategy, s, 12)
    assert proposed[0] == prior.ranked()[0]
    assert set(proposed[:3]) <= set(prior.ranked()[:30])
    design = ModelBased(s, seed=0, prior=prior, n_startup=8, prior_startup=3).startup
    only_prior = ModelBased(s, seed=0, prior=prior, n_startup=8).startup
    assert design[:3] == only_prior[:3] and design != only_prior
