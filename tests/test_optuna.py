"""Issue 27: Optuna on the valid set (`solverspace.integrations.optuna`): distributions from value lists,
`suggest`, `SolverspaceSampler` (every proposal valid, none twice, the study stopped after exactly
`count` trials) with each base sampler, on small spaces, generated spaces and T1 files; a base that
raises and a study that disagrees with the space; `tune`'s records in an Optuna storage."""
from __future__ import annotations

import importlib.util
import shutil
import sys
import warnings
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

optuna = pytest.importorskip("optuna")

from optuna.distributions import CategoricalDistribution, IntDistribution  # noqa: E402

from solverspace import Space  # noqa: E402
from solverspace.integrations.optuna.sampler import (  # noqa: E402
    BaseSamplerError, OptunaRecorder, SolverspaceSampler, SpaceExhaustedError, StudyMismatchError, distributions,
    export_records, read_records, suggest)
from solverspace.core.errors import OptionError  # noqa: E402
from solverspace.translators.errors import UnsupportedConstruct  # noqa: E402
from solverspace.validation.generate import spaces  # noqa: E402
from tests.helpers import space  # noqa: E402

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")]
optuna.logging.set_verbosity(optuna.logging.ERROR)
PEER = Path(__file__).resolve().parent / "data" / "peer_spaces"

SMALL = """
x = range(1, 9)
y = iterator([1, 2, 4, 8])
k = iterator(['a', 'b'])
z = x * y
require(x * y < 20)
@require
def r(k, x):
    return k == 'a' or x < 4
"""
ORDERS = """
n = range(1, 4)
o = permutation(['i', 'j', 'k'])
require(position(o, 'i') < n)
"""


BASES = ["tpe", "tpe-multivariate", "random", "qmc", "nsga2", "cmaes", "gp"]
NEEDS = {"cmaes": "cmaes", "gp": "torch"}


def base(name: str, seed: int):
    """A base sampler the issue names (GP needs torch, CMA-ES `cmaes`: skipped where missing)."""
    needed = NEEDS.get(name)
    if needed is not None and importlib.util.find_spec(needed) is None:
        pytest.skip(f"{name}: {needed} is not installed")
    samplers = optuna.samplers
    return {"tpe": lambda: samplers.TPESampler(seed=seed),
            "tpe-multivariate": lambda: samplers.TPESampler(seed=seed, multivariate=True),
            "random": lambda: samplers.RandomSampler(seed=seed), "qmc": lambda: samplers.QMCSampler(seed=seed),
            "nsga2": lambda: samplers.NSGAIISampler(seed=seed),
            "cmaes": lambda: samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False),
            "gp": lambda: samplers.GPSampler(seed=seed)}[name]()


def run_study(sp, sampler, n_trials: int):
    """Optimize a synthetic objective; every proposal is checked valid inside the objective."""
    study = optuna.create_study(sampler=sampler)
    ranks = {}

    def objective(trial):
        config = suggest(trial, sp)
        assert sp.is_valid(config), config
        key = tuple(config.values())
        ranks.setdefault(key, zlib.crc32(repr(key).encode()) % 1000 / 10.0)
        return ranks[key]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=n_trials)
    return study


def configurations(study) -> list[tuple]:
    return [tuple(t.params.values()) for t in study.trials]


# ---------------------------------------------------------------------------------- distributions
def test_distributions_are_the_value_lists():
    sp = space(SMALL)
    dists = distributions(sp)
    assert dists["x"] == IntDistribution(1, 8)                     # a range: integers
    assert dists["y"] == CategoricalDistribution((1, 2, 4, 8))     # gaps: categorical, value-list order
    assert dists["k"] == CategoricalDistribution(("a", "b"))
    values = sp.value_lists()
    for name, dist in dists.items():
        listed = values[name]
        if isinstance(dist, IntDistribution):
            assert listed == tuple(range(dist.low, dist.high + 1, dist.step))
        else:
            assert dist.choices == listed


def test_orders_are_categoricals_of_their_text():
    sp = space(ORDERS)
    dist = distributions(sp)["o"]
    assert isinstance(dist, CategoricalDistribution)
    assert dist.choices == tuple(">".join(o) for o in sp.value_lists()["o"])
    config = suggest(optuna.trial.FixedTrial({"n": 3, "o": "j>i>k"}), sp)
    assert config == {"n": 3, "o": ("j", "i", "k")}


def test_suggest_returns_the_configuration_and_sets_derived_values():
    sp = space(SMALL)
    study = optuna.create_study()
    trial = study.ask()
    config = suggest(trial, sp)
    assert list(config) == list(sp.parameters)
    assert trial.user_attrs == {"z": config["x"] * config["y"]}
    fixed = optuna.trial.FixedTrial({"x": 3, "y": 4, "k": "b"})
    assert suggest(fixed, sp) == {"x": 3, "y": 4, "k": "b"}
    assert fixed.user_attrs["z"] == 12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # Optuna's own warning: out of the range
        with pytest.raises(StudyMismatchError, match="parameter 'x': the trial gave 100"):
            suggest(optuna.trial.FixedTrial({"x": 100, "y": 4, "k": "b"}), sp)


# ---------------------------------------------------------------------------------- the sampler
@pytest.mark.parametrize("name, startup", [(name, "lhs") for name in BASES] + [("tpe", "uniform"), ("random", "sobol")])
def test_every_proposal_is_valid_and_new_and_the_study_stops_after_count(name, startup):
    sp = space(SMALL)
    count = len(sp)
    sampler = SolverspaceSampler(sp, base(name, 1), startup=startup, n_startup=5, seed=2)
    study = run_study(sp, sampler, count + 20)
    found = configurations(study)
    assert len(found) == count                          # stopped by the sampler, not by n_trials
    assert len(set(found)) == count                     # never one twice
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    assert sampler.counts["startup"] == 5
    assert sum(sampler.counts.values()) == count


def test_a_space_repair_refuses_is_refused_when_the_sampler_is_made():
    """Issue 25's repair refuses order-valued parameters (naming the parameter); the sampler says so
    when it is made, not at the first proposal after the start-up trials."""
    sp = space(ORDERS)
    with pytest.raises(UnsupportedConstruct, match="in 'o'"):
        SolverspaceSampler(sp, seed=0)


def test_the_base_drives_after_start_up():
    """After the start-up trials every proposal comes from the base (as proposed, repaired, or its
    nearest untried neighbour): the uniform fallback is only for a neighbourhood all tried."""
    sp = Space.load(PEER / "benchmark_hub_T1" / "convolution_milo.json")
    sampler = SolverspaceSampler(sp, seed=0, n_startup=10)
    study = run_study(sp, sampler, 40)
    assert len(set(configurations(study))) == 40
    assert sampler.counts["startup"] == 10
    assert sampler.counts["base"] + sampler.counts["repaired"] + sampler.counts["neighbour"] >= 25


T1_FILES = ["benchmark_hub_T1/convolution_milo.json", "benchmark_hub_T1/dedispersion_milo.json",
            "benchmark_hub_T1/gemm_milo.json", "benchmark_hub_T1/hotspot_milo.json", "willemsen2025/expdist.json"]


def valid_and_new_on_t1(path: str, name: str, trials: int = 25) -> None:
    if not (PEER / path).exists():
        pytest.skip(f"{PEER / path} is not here")
    sp = Space.load(PEER / path)
    study = run_study(sp, SolverspaceSampler(sp, base(name, 3), n_startup=5, seed=3), trials)
    assert len(set(configurations(study))) == len(study.trials) == trials


@pytest.mark.parametrize("path, name", [(T1_FILES[0], name) for name in ("tpe", "random", "qmc", "cmaes", "gp")]
                         + [(path, "tpe") for path in T1_FILES[1:]])
def test_t1_files_every_proposal_valid(path, name):
    valid_and_new_on_t1(path, name)


@pytest.mark.slow
@pytest.mark.parametrize("path", T1_FILES)
@pytest.mark.parametrize("name", BASES)
def test_t1_files_every_base_every_proposal_valid(path, name):
    valid_and_new_on_t1(path, name, trials=60)


def exhausted_exactly(source: str, name: str, seed: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sp = Space.from_source(source, filename="generated.py")
    count = sp.count("c")
    assume(0 < count <= 120)
    study = run_study(sp, SolverspaceSampler(sp, base(name, seed), n_startup=4, seed=seed), count + 10)
    found = configurations(study)
    assert len(found) == count and len(set(found)) == count


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(spaces(c_compatible=True, max_candidates=300), st.sampled_from(["tpe", "random", "qmc"]), st.integers(0, 3))
def test_generated_spaces_exhausted_exactly(source, name, seed):
    exhausted_exactly(source, name, seed)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(spaces(c_compatible=True, max_candidates=1000),
       st.sampled_from(["tpe", "tpe-multivariate", "random", "qmc", "nsga2", "cmaes"]), st.integers(0, 9))
def test_many_generated_spaces_exhausted_exactly(source, name, seed):
    exhausted_exactly(source, name, seed)


def test_threads_share_the_sampler_without_repeats():
    sp = space(SMALL)
    study = optuna.create_study(sampler=SolverspaceSampler(sp, seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(lambda t: float(suggest(t, sp)["x"]), n_trials=len(sp) + 20, n_jobs=3)
    done = [tuple(t.params.values()) for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(done) == len(set(done)) == len(sp)
    late = [t for t in study.trials if t.state != optuna.trial.TrialState.COMPLETE]
    assert all(t.state == optuna.trial.TrialState.PRUNED and not t.params for t in late)   # asked after the last
    assert len(late) <= 2


def test_ask_after_exhaustion_says_so():
    sp = space("x = range(3)")
    study = optuna.create_study(sampler=SolverspaceSampler(sp, seed=0, n_startup=1))
    for _ in range(3):
        trial = study.ask()
        study.tell(trial, suggest(trial, sp)["x"])
    trial = study.ask()
    with pytest.raises(SpaceExhaustedError, match="every one of the 3 valid configurations"):
        suggest(trial, sp)


class Broken(optuna.samplers.RandomSampler):
    def sample_independent(self, study, trial, param_name, param_distribution):
        raise ZeroDivisionError("the base's own bug")


def test_a_base_that_raises_is_reported():
    sp = space(SMALL)
    study = optuna.create_study(sampler=SolverspaceSampler(sp, Broken(), n_startup=2, seed=0))
    with pytest.raises(BaseSamplerError, match=r"Broken failed in sample_independent at trial #2: "
                                               r"ZeroDivisionError: the base's own bug") as caught:
        study.optimize(lambda t: float(suggest(t, sp)["x"]), n_trials=5)
    assert isinstance(caught.value.__cause__, ZeroDivisionError)
    assert len(study.trials) == 3 and study.trials[-1].state == optuna.trial.TrialState.FAIL


def test_a_study_that_disagrees_with_the_space_is_refused_naming_the_parameter():
    sp = space(SMALL)
    study = optuna.create_study()
    study.add_trial(optuna.create_trial(params={"x": 3, "y": 4, "k": "a"}, value=1.0,
                                        distributions={"x": IntDistribution(0, 20), "y": dists_y(),
                                                       "k": CategoricalDistribution(("a", "b"))}))
    study.sampler = SolverspaceSampler(sp, seed=0)
    with pytest.raises(StudyMismatchError, match=r"parameter 'x': trial #0 of the study has IntDistribution"):
        study.optimize(lambda t: float(suggest(t, sp)["x"]), n_trials=1)


def dists_y():
    return CategoricalDistribution((1, 2, 4, 8))


def test_asking_with_another_distribution_is_refused_naming_the_parameter():
    sp = space(SMALL)
    study = optuna.create_study(sampler=SolverspaceSampler(sp, seed=0))
    with pytest.raises(StudyMismatchError, match="parameter 'x'"):
        study.optimize(lambda t: float(t.suggest_int("x", 100, 200)), n_trials=1)


def test_bad_arguments():
    sp = space(SMALL)
    with pytest.raises(OptionError, match="startup='grid'"):
        SolverspaceSampler(sp, startup="grid")
    with pytest.raises(OptionError, match="n_startup=-1"):
        SolverspaceSampler(sp, n_startup=-1)
    with pytest.raises(OptionError, match="base=.*expected an Optuna sampler"):
        SolverspaceSampler(sp, base="tpe")
    with pytest.raises(OptionError, match="neighbors='hamming'"):
        SolverspaceSampler(sp, neighbors="hamming")
    with pytest.raises(OptionError, match="study_name=''"):
        OptunaRecorder(sp, "sqlite:///:memory:", "")


def test_records_already_in_the_study_are_not_proposed_again():
    sp = space(SMALL)
    first = run_study(sp, SolverspaceSampler(sp, seed=0), 10)
    study = optuna.create_study(sampler=SolverspaceSampler(sp, seed=1))
    study.add_trials(first.trials)
    study.optimize(lambda t: float(suggest(t, sp)["x"]), n_trials=100)
    assert len(study.trials) == len(sp) and len(set(configurations(study))) == len(sp)


# ---------------------------------------------------------------------------------- tune records
TUNED_NUMBERS = """
x = range(1, 9)
y = iterator([1, 2, 4, 8])
require(x * y < 20)
"""
TUNED = TUNED_NUMBERS + "o = permutation(['a', 'b'])\n"      # a third term that is an order
PLAIN = TUNED_NUMBERS + "k = iterator(['a', 'b'])\n"         # ... or a plain string


def measure(config):
    """A model time of TUNED's and PLAIN's configurations (the last term: the order or the string)."""
    if config["x"] == 3:
        raise RuntimeError("does not run at x = 3")
    last = config["o"] == ("b", "a") if "o" in config else config["k"] == "b"
    return config["x"] / 100 + config["y"] / 1000 + (0.0005 if last else 0)


def test_export_records_puts_every_measurement_in_the_study(tmp_path):
    sp = space(TUNED)
    db = str(tmp_path / "t.sqlite")
    sp.tune(measure, "1 / 1000", db=db, max_measurements=30)
    run, records = read_records(db)
    assert len(records) == 30
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    assert export_records(db, storage, "run") == 30
    assert export_records(db, storage, "run") == 0               # nothing twice
    trials = optuna.load_study(study_name="run", storage=storage).trials
    assert len(trials) == 30
    by_key = {t.user_attrs["solverspace_key"]: t for t in trials}
    for record in records:
        trial = by_key[record["key"]]
        config = record["configuration"]
        assert trial.params == {"x": config["x"], "y": config["y"], "o": ">".join(config["o"])}
        assert trial.user_attrs["status"] == record["status"]
        assert trial.user_attrs["bound_exact"] == "1/1000" and trial.user_attrs["bound"] == 0.001
        assert trial.user_attrs["bottleneck"] == "1 / 1000"
        if record["status"] == "ok":
            assert trial.state == optuna.trial.TrialState.COMPLETE and trial.value == record["value"]
        else:
            assert record["status"] == "failed" and config["x"] == 3
            assert trial.state == optuna.trial.TrialState.FAIL and "x = 3" in trial.user_attrs["error"]
    assert any(t.state == optuna.trial.TrialState.FAIL for t in trials)


def test_exported_with_the_space_the_study_goes_on_with_the_sampler(tmp_path):
    sp = space(PLAIN)
    db = str(tmp_path / "t.sqlite")
    sp.tune(measure, "1 / 1000", db=db, max_measurements=12)
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    assert export_records(db, storage, "go-on", space=sp) == 12
    exported = {tuple(t.params.values()) for t in optuna.load_study(study_name="go-on", storage=storage).trials}
    study = optuna.load_study(study_name="go-on", storage=storage, sampler=SolverspaceSampler(sp, seed=0))

    def objective(trial):
        config = suggest(trial, sp)
        assert tuple(config.values()) not in exported      # never measured again
        return 1.0 if config["x"] == 3 else measure(config)

    study.optimize(objective, n_trials=500)
    found = configurations(study)
    assert len(found) == len(sp) and len(set(found)) == len(sp)


def test_tune_records_into_optuna_as_it_goes(tmp_path):
    sp = space(TUNED)
    db = str(tmp_path / "t.sqlite")
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    recorder = OptunaRecorder(sp, storage, "live")
    sp.tune(measure, "1 / 1000", db=db, max_measurements=10, sinks=[recorder])
    _, records = read_records(db)
    trials = optuna.load_study(study_name="live", storage=storage).trials
    assert recorder.added == len(trials) == len(records) == 10
    assert {t.user_attrs["solverspace_key"]: (t.value, t.user_attrs["status"]) for t in trials} == \
        {r["key"]: (r["value"], r["status"]) for r in records}


def test_read_records_refuses_what_is_not_one_run(tmp_path):
    other = tmp_path / "other.sqlite"
    import sqlite3
    sqlite3.connect(other).execute("CREATE TABLE t (a)").connection.close()
    with pytest.raises(OptionError, match="is not a tune database"):
        read_records(str(other))
    with pytest.raises(OptionError, match="does not exist"):
        read_records(str(tmp_path / "missing.sqlite"))
    sp = space(TUNED)
    db = str(tmp_path / "t.sqlite")
    sp.tune(measure, "1 / 1000", db=db, max_measurements=2)
    sp.tune(measure, "1 / 500", db=db, max_measurements=2)
    with pytest.raises(OptionError, match="holds measurements of 2 runs"):
        read_records(db)


def test_tune_command_records_into_an_optuna_storage(tmp_path, capsys):
    from solverspace.cli import main
    path = tmp_path / "plain.py"
    path.write_text(PLAIN)
    bench = tmp_path / "bench.py"
    bench.write_text("import sys\nx, y = map(int, sys.argv[1:3])\nprint(x / 100 + y / 1000)\n")
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    code = main(["tune", str(path), "--bound", "x / 100", "--measure", f"{sys.executable} {bench} {{x}} {{y}}",
                 "--max-measurements", "5", "--optuna-storage", storage, "-q"])
    assert code == 0
    _, records = read_records(str(tmp_path / "plain.tune.sqlite"))
    trials = optuna.load_study(study_name="plain", storage=storage).trials          # the stem by default
    assert len(trials) == len(records) == 5
    assert {t.user_attrs["solverspace_key"]: t.value for t in trials} == {r["key"]: r["value"] for r in records}
    assert main(["tune", str(path), "--measure", "x", "--optuna-study", "s"]) == 2
    assert "--optuna-study names a study of --optuna-storage" in capsys.readouterr().err
    assert main(["tune", str(path), "--bound", "x / 100", "--measure", f"{sys.executable} {bench} {{x}} {{y}}",
                 "--optuna-storage", "nonsense://x", "-q"]) == 2
    assert "Optuna storage 'nonsense://x'" in capsys.readouterr().err
