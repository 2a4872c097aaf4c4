"""`tune` stops early when its first measurements all fail the same way (`analysis.tune_failures`):
a measuring command that fails for every configuration is run `--stop-after-failures` times (10
by default), not on the whole space; the stop says why (the error text, how many, the exit
status), exits 2 and keeps none of those failures. Failures that differ, or a run whose first
measurement worked, are measured as before."""
from __future__ import annotations

import sqlite3

import pytest

from solverspace import Space
from solverspace.analysis.tune import tune
from solverspace.analysis.tune_failures import SAME_FAILURE_LIMIT
from solverspace.cli import main
from solverspace.core.errors import OptionError
from solverspace.strategies.tune import tune_search

SPACE = "x = range(0, 30)\ny = range(0, 3)\n"     # 90 configurations
#: a command that logs each run (one line in runs.log), says "boom" on stderr and exits 3
FAILING = "sh -c 'echo run >> runs.log; echo boom >&2; exit 3'"


def _rows(db) -> int:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT COUNT(*) FROM measurements").fetchone()[0]


@pytest.fixture
def small(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small.py").write_text(SPACE)
    return tmp_path


@pytest.mark.parametrize("search", [["--bound", "0"], ["--strategy", "random"]], ids=["bound", "statistical"])
def test_a_command_that_always_fails_stops_after_the_first_ten(small, capsys, search):
    code = main(["tune", "small.py", *search, "--measure", FAILING, "--db", "t.sqlite", "-q"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len((small / "runs.log").read_text().splitlines()) == SAME_FAILURE_LIMIT == 10   # not 90
    assert "the first 10 configurations measured" in err and "all failed the same way" in err
    assert "exit status 3: boom" in err and "--stop-after-failures" in err and "Traceback" not in err
    assert _rows("t.sqlite") == 0          # not kept: once the command is fixed, they are measured


def test_the_limit_is_an_option_and_zero_never_stops(small, capsys):
    assert main(["tune", "small.py", "--bound", "0", "--measure", FAILING, "--db", "a.sqlite", "-q",
                 "--stop-after-failures", "4"]) == 2
    assert "the first 4 configurations" in capsys.readouterr().err
    assert len((small / "runs.log").read_text().splitlines()) == 4
    (small / "runs.log").unlink()
    assert main(["tune", "small.py", "--bound", "0", "--measure", FAILING, "--db", "b.sqlite", "-q",
                 "--stop-after-failures", "0"]) == 1      # every configuration measured, none ran
    assert len((small / "runs.log").read_text().splitlines()) == 90 and _rows("b.sqlite") == 90


def test_failures_that_name_their_configuration_are_not_the_same_way(small, capsys):
    """The last line on stderr differs per configuration: each may fail for its own reason."""
    command = "sh -c 'echo run >> runs.log; echo bad x={x} >&2; exit 3'"
    assert main(["tune", "small.py", "--bound", "0", "--measure", command, "--db", "t.sqlite", "-q"]) == 1
    assert len((small / "runs.log").read_text().splitlines()) == 90


def test_a_run_whose_first_measurement_worked_never_stops_for_failures(small):
    """x = 0 runs (time 1); every other configuration fails the same way: all are measured."""
    space = Space.load("small.py")
    command = "sh -c 'echo run >> runs.log; test {x} = 0 && echo 1 && exit 0; echo boom >&2; exit 3'"
    result = tune(space.plan, command, "0", db=":memory:")
    assert result.best == {"x": 0, "y": 0} and len(result.failed) == 87
    assert len((small / "runs.log").read_text().splitlines()) == 90


@pytest.mark.parametrize("searcher, limit", [("bound", None), ("statistical", None), ("Space.tune", 3)])
def test_a_callable_raising_the_same_error_stops(small, searcher, limit):
    """Ten like failures of a callable stop either search; `Space.tune(stop_after_failures=K)` is
    the command line's `--stop-after-failures K`."""
    space = Space.load("small.py")
    calls = []

    def measure(configuration):
        calls.append(configuration)
        raise RuntimeError("no GPU")
    measure.tune_identity = f"no gpu {searcher}"
    with pytest.raises(OptionError, match=rf"first {limit or 10} configurations .* \(RuntimeError: no GPU\)"):
        if searcher == "bound":
            tune(space.plan, measure, "0", db=":memory:")
        elif searcher == "statistical":
            tune_search(space, measure, strategy="random", db=":memory:")
        else:
            space.tune(measure, "0", db=":memory:", stop_after_failures=limit)
    assert len(calls) == (limit or 10)


def test_a_bad_limit_is_refused(small):
    with pytest.raises(OptionError, match="stop_after_failures=-1"):
        tune(Space.load("small.py").plan, lambda c: 1.0, "0", stop_after_failures=-1)

