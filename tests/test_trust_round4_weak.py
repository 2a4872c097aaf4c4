"""Round four's weak answers: `get` past 64 bits points to what answers instead; `auto` refuses at
once where every backend is estimated at an hour or more, and CP-SAT answers a long sum; one rule
for values given as text on every command; named refusals of API arguments (a negative seed, a
design of 10**12 points, Kernel Tuner tune_params as a string, max_threads below 1, a million
listed values); Optuna's requests with another distribution are `StudyMismatchError`s naming the
parameter, and the sampler's refusal of orders points to `suggest`; stderr lines written whole."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from solverspace import Space
from solverspace.cli import main
from solverspace.core.errors import ArgumentTypeError, OptionError, SettingError, SolverspaceError

ROOT = Path(__file__).resolve().parent.parent


def _file(tmp_path: Path, text: str, name: str = "s.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ----------------------------------------------------------------------------------- get past 64 bits
def test_get_past_64_bits_says_what_positions_are_and_what_answers(tmp_path, capsys):
    space = _file(tmp_path, "x = iterator([2**70, 1])\ny = range(3)\n")
    assert main(["get", space, "0"]) == 2
    err = capsys.readouterr().err
    assert "do not fit in 64 bits" in err
    hint = err.split("hint:", 1)[1]
    assert "`get`" in hint and "enumerate --backend reference" in hint   # what there is, for a command without --backend
    assert "(--backend reference, sample --method reference)" not in hint


# ----------------------------------------------------------------------------------- auto: hours
HOURS = "\n".join(f"p{i} = iterator({list(range(0, 6000, 2))!r})" for i in range(4)) + \
    "\nrequire(p0 + p1 + p2 + p3 < 10000)\n"   # 8.1e13 candidates; C's source: 12,000 listed values


def _refuse_to_start(message: str) -> None:
    """A listener of the waits: `auto` announces the backend it chose by cost just before it runs
    it ("auto: FILE goes to ..."); here nothing may be started."""
    if "goes to" in message:
        raise AssertionError(f"started: {message}")


def test_auto_refuses_at_once_when_every_backend_is_estimated_at_hours(tmp_path):
    from solverspace.translators.c.build import WAITS
    WAITS.append(_refuse_to_start)
    space = Space.load(_file(tmp_path, HOURS))
    try:
        with pytest.raises(SolverspaceError) as caught:
            space.count("auto")
    finally:
        WAITS.remove(_refuse_to_start)
    from solverspace.registry.auto import EstimatedTooLongError
    assert isinstance(caught.value, EstimatedTooLongError)
    text = str(caught.value)
    assert "an hour or more with every backend" in text and "nothing was started" in text
    assert " h (" in text or "more than a year" in text      # the estimates, said
    assert "--backend c runs the cheapest estimate anyway" in text
    assert isinstance(caught.value, ValueError)


def test_auto_hours_on_the_command_line_is_exit_2(tmp_path, capsys):
    from solverspace.translators.c.build import WAITS
    WAITS.append(_refuse_to_start)
    try:
        assert main(["count", _file(tmp_path, HOURS)]) == 2
    finally:
        WAITS.remove(_refuse_to_start)
    err = capsys.readouterr().err
    assert "is estimated at an hour or more with every backend" in err and "goes to" not in err


def test_cpsat_long_sum_wastes_a_bounded_share_on_capped_sub_problems(monkeypatch):
    """300 binary parameters with sum <= 2 (45,151) hung: each capped sub-problem was split on one
    more binary parameter, whose 0 side held nearly every solution, and enumerated again up to the
    same cap, some 160 times. A refined sub-problem's cap now doubles, so the solutions enumerated
    and thrown away stay a small multiple of the answer. The same shape at a small scale: caps of 50
    and 200 solutions, 60 parameters (1,831)."""
    from solverspace.translators.cpsat import count as cpsat_count
    from solverspace.translators.cpsat.backend import count
    monkeypatch.setattr(cpsat_count, "PROBE_SOLUTIONS", 50)
    monkeypatch.setattr(cpsat_count, "CHUNK_SOLUTIONS", 200)
    n = 60
    text = "".join(f"x{i} = range(2)\n" for i in range(n)) + f"require({' + '.join(f'x{i}' for i in range(n))} <= 2)\n"
    stats = count(Space.from_source(text), workers=1)
    assert stats.count == stats.solutions == 1 + n + n * (n - 1) // 2 and stats.exact
    assert stats.discarded <= stats.count, stats.discarded   # 8,091 before: 41 capped sub-problems of 200


# ----------------------------------------------------------------------------------- values as text
VALUES = "x = range(10)\ny = range(10)\nk = iterator(['a', '007', ' 1'])\nn = setting(4)\nflag = setting(False)\n" \
         "require(x + y <= n + 5)\n"


@pytest.mark.parametrize("text, spelling", [("0x1", "1"), (" 1", "1"), ("1.0", "1"), ("1_0", "10"), ("+1", "1"),
                                            ("01", "1"), ("-0", "0"), ("١", "1"), ("1e0", "1"), ("one", None)])
@pytest.mark.parametrize("command", ["check", "neighbors", "repair", "sample"])
def test_integer_text_has_one_spelling_on_every_command(tmp_path, capsys, command, text, spelling):
    space = _file(tmp_path, VALUES)
    words = [f"x={text}", "y=2", "k=a"]
    argv = [command, space, "-n", "1", "--given", *words[:1]] if command == "sample" else [command, space, *words]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"x={text!r}: parameter 'x' takes integer values" in err and "decimal digits" in err
    assert (f"hint: write {spelling}" if spelling else "hint: give an integer") in err


@pytest.mark.parametrize("command", ["check", "neighbors", "repair"])
def test_decimal_integers_and_exact_categorical_text_are_read(tmp_path, capsys, command):
    space = _file(tmp_path, VALUES)
    assert main([command, space, "x=1", "y=2", "k=007"]) in (0, 1)
    out = capsys.readouterr()
    assert "error" not in out.err


def test_categorical_values_are_matched_exactly(tmp_path):
    from solverspace.analysis.check import parse_assignment
    model = Space.load(_file(tmp_path, VALUES)).model
    assert parse_assignment(model, ["x=-3", "y=0", "k=007"]) == {"x": -3, "y": 0, "k": "007"}
    assert parse_assignment(model, ["x=3", "y=0", "k= 1"]) == {"x": 3, "y": 0, "k": " 1"}


@pytest.mark.parametrize("setting, text, refused", [
    ("n", "0x2", "write 2"), ("n", " 2", "write 2"), ("n", "2.0", "write 2"), ("n", "+2", "write 2"),
    ("flag", "2", "expected true, false, 1 or 0"), ("flag", " true", "expected true, false, 1 or 0"),
    ("n", "2", None), ("n", "-2", None), ("flag", "true", None), ("flag", "1", None), ("flag", "False", None)])
def test_set_reads_values_by_the_same_rule(tmp_path, setting, text, refused):
    path = _file(tmp_path, VALUES)
    if refused is None:
        Space.load(path, {setting: text})
        return
    with pytest.raises(SettingError) as caught:
        Space.load(path, {setting: text})
    assert refused in str(caught.value) and f"setting {setting}={text!r}" in str(caught.value)


def test_order_items_follow_the_rule(tmp_path):
    from solverspace.core.errors import SpaceDefinitionError
    from solverspace.core.orders import parse_order
    assert parse_order("2>0>1", (0, 1, 2)) == (2, 0, 1)
    with pytest.raises(SpaceDefinitionError, match="'0x2' is not one"):
        parse_order("0x2>0>1", (0, 1, 2))


def test_the_readme_states_the_rule():
    readme = (ROOT / "docs" / "reference" / "conventions.md").read_text()
    assert "decimal digits with an optional leading `-`" in readme
    assert "solverspace/core/value_text.py" in readme


# ----------------------------------------------------------------------------------- API refusals
SPACE = "x = range(10)\ny = range(10)\nrequire(x + y == 9)\n"


def _searchspace(**arguments):
    from solverspace.integrations.kernel_tuner.searchspace import Searchspace
    return Searchspace(**arguments)


@pytest.mark.parametrize("call, error, words", [
    (lambda: Space.from_source(SPACE).random_neighbor({"x": 3, "y": 6}, seed=-1), OptionError,
     ["seed=-1", "non-negative", "seed=7"]),
    (lambda: Space.from_source(SPACE).design(10 ** 12), OptionError,
     ["n=1,000,000,000,000", "50,000,000", "n=25,000,000 at most"]),
    (lambda: _searchspace(tune_params={"x": "abc"}), ArgumentTypeError,
     ["tune_params['x'] = 'abc'", "list of values", "'a', 'b', 'c'", "['abc']"]),
    (lambda: _searchspace(tune_params={"block_size_x": [32, 64]}, max_threads=-1), OptionError,
     ["max_threads=-1", "at least 1"]),
    (lambda: _searchspace(tune_params={"block_size_x": [32, 64]}, max_threads=1024.5), ArgumentTypeError,
     ["max_threads=1024.5"]),
    (lambda: _searchspace(tune_params={"x": list(range(1_000_000)), "y": [1, 2]}), OptionError,
     ["1,000,002 values", "'x' alone 1,000,000", "100,000", "Searchspace(space=Space.load"]),
])
def test_api_arguments_are_refused_by_name(call, error, words):
    with pytest.raises(error) as caught:
        call()
    assert isinstance(caught.value, SolverspaceError)
    for word in words:
        assert word in str(caught.value)


def test_kernel_tuners_float_max_threads_still_counts():
    """Kernel Tuner's simulation mode passes max_threads=1e9: a whole float is its integer."""
    assert _searchspace(tune_params={"block_size_x": [32, 2048]}, max_threads=1e9).size == 2
    assert _searchspace(tune_params={"block_size_x": [32, 2048]}, max_threads=1024).size == 1


# ----------------------------------------------------------------------------------- Optuna
optuna = pytest.importorskip("optuna")


def _study(space):
    from solverspace.integrations.optuna.sampler import SolverspaceSampler
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.create_study(sampler=SolverspaceSampler(space, n_startup=2, seed=1))


@pytest.mark.parametrize("ask, name", [("suggest_float('x', 0, 9)", "x"), ("suggest_int('x', 0, 20)", "x"),
                                       ("suggest_int('y', 1, 4)", "y"), ("suggest_categorical('x', [0, 1])", "x")])
def test_an_objective_asking_with_another_distribution_is_a_study_mismatch(ask, name):
    from solverspace.integrations.optuna.sampler import StudyMismatchError
    space = Space.from_source("x = range(10)\ny = iterator([1, 2, 4])\nrequire(x + y < 9)\n")
    study = _study(space)
    with pytest.raises(StudyMismatchError) as caught:
        study.optimize(lambda trial: float(eval(f"trial.{ask}")), n_trials=1)
    assert f"parameter {name!r} was asked for with" in str(caught.value)


def test_the_sampler_still_proposes_valid_untried_configurations_through_suggest():
    from solverspace.integrations.optuna.sampler import suggest
    space = Space.from_source("x = range(10)\ny = iterator([1, 2, 4])\nrequire(x + y < 9)\n")
    study = _study(space)
    seen = []
    study.optimize(lambda trial: seen.append(tuple(suggest(trial, space).values())) or 1.0, n_trials=20)
    assert len(set(seen)) == 20 and all(space.is_valid(c) for c in seen)


def test_the_sampler_refuses_orders_and_points_to_suggest():
    from solverspace.translators.errors import UnsupportedConstruct
    space = Space.load(str(ROOT / "examples" / "orders" / "oa_mixer.py"))
    with pytest.raises(UnsupportedConstruct) as caught:
        _study(space)
    text = str(caught.value)
    assert "SolverspaceSampler repairs" in text and "'seq'" in text and "suggest(trial, space)" in text
    readme = (ROOT / "docs" / "how-to" / "optuna.md").read_text()
    assert "order-valued parameter is refused by `SolverspaceSampler`" in readme


# ----------------------------------------------------------------------------------- whole lines
class _Writes(io.StringIO):
    """A stderr that keeps each write."""

    def __init__(self):
        super().__init__()
        self.writes: list[str] = []

    def write(self, text):
        self.writes.append(text)
        return super().write(text)


@pytest.mark.parametrize("words", [["x=3"], ["x=3", "y=3"]])
def test_stderr_lines_are_written_whole(tmp_path, monkeypatch, words):
    """A hint and the next command's status line ran together ("give every parameter a
    valuedistance 23") where two commands shared a stderr: print() wrote the text and its newline
    in two writes, and the other process's line came in between."""
    writes = _Writes()
    monkeypatch.setattr(sys, "stderr", writes)
    main(["repair", _file(tmp_path, SPACE), *words])
    assert writes.writes and all(w.endswith("\n") for w in writes.writes), writes.writes
