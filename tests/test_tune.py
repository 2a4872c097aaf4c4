"""Measured search (`tune`, Telamon Algorithm 2): the true optimum with fewer measurements than
the space has configurations, bound violations reported, resumption from the database with no
configuration measured twice, failures recorded, and clear errors for bad input."""
from __future__ import annotations

import json
import shlex
import sqlite3
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solverspace import Space
from solverspace.lang import ir
from solverspace.cli import main
from solverspace.core.errors import OptionError, OutputError, SolverspaceWarning, SpaceDefinitionError
from solverspace.validation.generate import spaces
from tests.helpers import Counting, truth

SMALL = """
a = range(1, 6)
b = range(1, 6)
c = range(0, 3)
s = a * b
require((s % 2 == 0) | (c == 0))
"""
MODEL = "s + c / 2 + 1"


# ---------------------------------------------------------------------------------- the optimum
TEMPLATES = ["{0}", "max({0}, {1}) + {2}", "{0} * {1} - {2}", "abs({0}) / 3 + {1}", "min({0}, {1}) + {2} // 2",
             "if_then_else({0} > {1}, {0}, {1} / 2)", "abs({0} - {1}) + abs({2})"]


@st.composite
def space_and_model(draw):
    text = draw(spaces(max_parameters=4, max_derived=2, max_constraints=2, max_candidates=600))
    space = Space.from_source(text)
    numeric = [n for n in (*space.parameters, *space.model.derived_value)
               if not space.model.kinds.is_string(ir.Ref(n))]
    if not numeric:
        return space, "1"
    names = [draw(st.sampled_from(numeric)) for _ in range(3)]
    return space, draw(st.sampled_from(TEMPLATES)).format(*names)


@pytest.mark.filterwarnings("ignore::solverspace.core.errors.SolverspaceWarning")   # lint notes on generated spaces
def test_synthetic_measurement_gives_the_true_optimum_with_fewer_measurements():
    totals = {"measured": 0, "size": 0, "cases": 0}

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(space_and_model(), st.integers(1, 2))
    def check(case, top):
        space, model = case
        times = truth(space, model)
        if not times:   # an empty space: an error (tested below)
            with pytest.raises(SpaceDefinitionError, match="nothing to measure"):
                space.tune(lambda c: 0.0, model)
            return
        measure = Counting(space, times)
        result = space.tune(measure, model, top=top)
        expected = sorted(times.values())[:top]
        assert [m.time for m in result.top] == expected, (model, space.model.source)
        assert result.proven and result.status == "proven" and not result.violations
        assert len(set(measure.calls)) == len(measure.calls) == result.measured
        totals["measured"] += result.measured
        totals["size"] += len(times)
        totals["cases"] += 1

    check()
    assert totals["cases"] >= 10
    assert totals["measured"] < totals["size"], totals


def test_small_space_measures_a_fraction_and_explains_the_cut(tmp_path):
    space = Space.from_source(SMALL)
    times = truth(space, MODEL, noise=0.4)
    measure = Counting(space, times)
    result = space.tune(measure, MODEL, db=tmp_path / "t.sqlite")
    assert result.time == min(times.values()) and result.proven and result.gap == 0
    assert result.measured < len(times) / 2
    assert result.best == {"a": 1, "b": 1, "c": 0}
    assert result.top[0].bottleneck == "s" and dict(result.best_terms)["s"] == 1
    assert result.cut > 0 and sum(result.cut_by.values()) == result.cut
    assert result.pruned and result.pruned[0].depth == 1      # a subtree cut with only `a` bound
    text = result.explain()
    assert "set by `s`" in text and "largest cut subtrees" in text
    with sqlite3.connect(tmp_path / "t.sqlite") as db:
        rows = db.execute("SELECT configuration, times, value, bound, status, bottleneck FROM measurements").fetchall()
        pruned = db.execute("SELECT prefix, depth, bottleneck FROM pruned ORDER BY rank").fetchall()
    assert len(rows) == result.measured and {r[4] for r in rows} == {"ok"}
    assert all(r[5] for r in rows) and pruned and pruned[0][2] == "s"
    assert json.loads(pruned[0][0]) == result.pruned[0].prefix


# ---------------------------------------------------------------------------------- soundness
def test_a_bound_above_the_measurement_is_reported_and_nothing_is_proven(tmp_path):
    space = Space.from_source(SMALL)
    times = truth(space, MODEL, noise=0.0)
    with pytest.warns(SolverspaceWarning, match="not a lower bound"):
        result = space.tune(Counting(space, times), f"2 * ({MODEL})", db=tmp_path / "t.sqlite")
    assert not result.proven and result.violations and result.status == "bound violated"
    first = result.violations[0]
    assert first.status == "below bound" and first.time < first.bound
    assert "NOT PROVEN: the model is not a lower bound" in result.summary()
    with sqlite3.connect(tmp_path / "t.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM measurements WHERE status = 'below bound'").fetchone()[0] >= 1
    with pytest.warns(SolverspaceWarning):   # reused from the database: reported again, still not proven
        again = space.tune(Counting(space, times), f"2 * ({MODEL})", db=tmp_path / "t.sqlite")
    assert not again.proven and again.violations and again.measured == 0


# ---------------------------------------------------------------------------------- resumption
def test_a_stopped_run_resumes_without_measuring_anything_twice(tmp_path):
    space = Space.from_source(SMALL)
    times = truth(space, MODEL, noise=6)   # noisy: many configurations to measure
    db = tmp_path / "t.sqlite"
    first = Counting(space, times)
    stopped = space.tune(first, MODEL, db=db, max_measurements=3)
    assert stopped.measured == 3 and not stopped.proven and stopped.status == "max_measurements"
    assert stopped.lower is not None and stopped.gap is not None and stopped.gap > 0
    assert "not proven: stopped by --max-measurements" in stopped.summary()
    second = Counting(space, times)
    resumed = space.tune(second, MODEL, db=db)
    assert not set(first.calls) & set(second.calls)
    assert resumed.reused == 3 and resumed.proven and resumed.time == min(times.values())
    whole = Counting(space, times)
    alone = space.tune(whole, MODEL)
    assert sorted(first.calls + second.calls) == sorted(whole.calls)


def test_an_interrupted_run_loses_no_measurement(tmp_path):
    space = Space.from_source(SMALL)
    times = truth(space, MODEL, noise=6)   # noisy: many configurations to measure
    db = tmp_path / "t.sqlite"
    first = Counting(space, times, stop_after=4)
    with pytest.raises(KeyboardInterrupt):
        space.tune(first, MODEL, db=db)
    second = Counting(space, times)
    resumed = space.tune(second, MODEL, db=db)
    assert len(first.calls) == 4 and resumed.reused == 4 and not set(first.calls) & set(second.calls)
    assert resumed.proven and resumed.time == min(times.values())


def test_another_space_or_bound_is_kept_apart(tmp_path):
    db = tmp_path / "t.sqlite"
    space = Space.from_source(SMALL)
    times = truth(space, MODEL)
    made = space.tune(Counting(space, times), MODEL, db=db).measured
    other = Space.from_source(SMALL.replace("range(0, 3)", "range(0, 2)"))
    notes = []
    result = other.tune(Counting(other, truth(other, MODEL)), MODEL, db=db, progress=notes.append)
    assert result.reused == 0 and result.measured > 0 and result.kept_apart == made
    assert any("kept apart, not reused" in n for n in notes)
    again = space.tune(Counting(space, times), MODEL + " + 0", db=db)   # another bound: another run
    assert again.reused == 0


def test_a_file_that_is_not_a_tune_database_is_refused(tmp_path):
    space = Space.from_source(SMALL)
    text = tmp_path / "notes.txt"
    text.write_text("hello, not a database\n" * 100)
    with pytest.raises(OutputError, match="tune database"):
        space.tune(lambda c: 1.0, MODEL, db=text)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(OutputError, match="something else"):
        space.tune(lambda c: 1.0, MODEL, db=other)


# ---------------------------------------------------------------------------------- commands
def _python(code: str, *fields: str) -> str:
    """A command running Python `code`; the fields are its arguments (sys.argv[1:]): a value is
    never spliced into code or shell text."""
    return " ".join([shlex.quote(sys.executable), "-c", shlex.quote(code), *fields])


def test_shell_command_failures_are_recorded_and_skipped(tmp_path):
    space = Space.from_source("x = range(0, 4)\n")
    db = tmp_path / "t.sqlite"
    command = "sh -c 'case {x} in 0) exit 3;; 1) echo no time here;; 2) sleep 5;; *) echo took 0.25 s, run {x};; esac'"
    result = space.tune(command, "0", db=db, timeout=0.5)
    assert {m.configuration["x"]: m.status for m in result.failed} == {0: "failed", 1: "invalid output",
                                                                       2: "timeout"}
    assert result.best == {"x": 3} and result.time == 3.0 and result.proven   # the last number: 3
    assert "3 configuration(s) did not run" in result.summary()
    with sqlite3.connect(db) as connection:
        statuses = dict(connection.execute("SELECT configuration, status FROM measurements"))
    assert statuses == {'{"x": 0}': "failed", '{"x": 1}': "invalid output", '{"x": 2}': "timeout", '{"x": 3}': "ok"}
    calls = space.tune(command, "0", db=db, timeout=0.5)       # failed ones are not run again either
    assert calls.measured == 0 and calls.reused == 4


def test_repeats_and_their_aggregate(tmp_path):
    space = Space.from_source("x = range(1, 3)\n")
    counter = tmp_path / "n"
    command = _python(f"import pathlib; p = pathlib.Path({str(counter)!r}); n = int(p.read_text()) if p.exists() "
                      f"else 0; p.write_text(str(n + 1)); import sys; print(10 * int(sys.argv[1]) + n)", "{x}")
    low = space.tune(command, "0", repeat=3, aggregate="min")
    assert low.top[0].times == [10.0, 11.0, 12.0] and low.time == 10.0
    counter.unlink()
    mid = space.tune(command, "0", repeat=3, aggregate="median")
    assert mid.time == 11.0


def test_the_command_line(tmp_path, capsys):
    path = tmp_path / "small.py"
    path.write_text(SMALL)
    measure = _python("import sys; print(int(sys.argv[1]) + int(sys.argv[2]) / 2 + 1.25)", "{s}", "{c}")
    code = main(["tune", str(path), "--bound", MODEL, "--measure", measure, "--explain"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "best: 2.25 s  a=1 b=1 c=0" in out and "proven:" in out and "set by `s`" in out
    assert "#1: " in err and (tmp_path / "small.tune.sqlite").exists()
    code = main(["tune", str(path), "--bound", MODEL, "--measure", measure, "--json", "-q"])
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert code == 0 and err == "" and result["proven"] and result["measured"] == 0 and result["reused"] > 0
    assert result["best"] == {"a": 1, "b": 1, "c": 0} and result["time"] == 2.25


def test_the_command_line_records_a_failing_command(tmp_path, capsys):
    path = tmp_path / "small.py"
    path.write_text(SMALL)
    db = tmp_path / "runs.sqlite"
    code = main(["tune", str(path), "--bound", MODEL, "--measure", "false", "--db", str(db), "--json",
                 "--stop-after-failures", "0"])   # else it stops after the first 10 (tests/test_tune_failures.py)
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert code == 1 and result["best"] is None and result["failed"]
    assert {f["status"] for f in result["failed"]} == {"failed"} and "Traceback" not in err
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT COUNT(*) FROM measurements WHERE status = 'failed'").fetchone()[0] \
            == len(result["failed"]) == len(truth(Space.from_source(SMALL), MODEL))


@pytest.mark.parametrize("argv, fragment", [
    (["--bound", MODEL, "--measure", "echo {a} {dd}"], "unknown field {dd}"),
    (["--bound", MODEL, "--measure", "echo {ss}"], "did you mean 's'"),
    (["--bound", MODEL, "--measure", "echo {a"], "--measure"),
    (["--bound", MODEL, "--measure", "echo 1", "--max-measurements", "-1"], "expected at least 0"),
    (["--bound", MODEL, "--measure", "echo 1", "--time-limit", "0"], "expected a number greater than 0"),
    (["--bound", "a + zz", "--measure", "echo 1"], "unknown name 'zz'"),
    (["--measure", "echo 1", "--strategy", "model", "--bound", MODEL], "a statistical search uses no bound"),
    (["--bound", "1", "--measure", "echo 1", "--db", "/no/such/dir/x.sqlite"], "tune database"),
])
def test_bad_input_gets_a_message_not_a_traceback(tmp_path, capsys, argv, fragment):
    path = tmp_path / "small.py"
    path.write_text(SMALL)
    try:
        code = main(["tune", str(path), *argv])
    except SystemExit as exc:   # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2 and fragment in err and "Traceback" not in err, err


def test_an_empty_space_is_an_error(tmp_path, capsys):
    path = tmp_path / "empty.py"
    path.write_text("x = range(1, 4)\nrequire(x > 5)\n")
    code = main(["tune", str(path), "--bound", "x", "--measure", "echo {x}"])
    out, err = capsys.readouterr()
    assert code == 2 and "nothing to measure: the space has no valid configuration" in err
    nowhere = Space.from_source("x = range(1, 4)\n").tune(lambda c: 1.0, "1 // (x - x)")   # no bound anywhere:
    assert nowhere.undefined == nowhere.measured == 3 and nowhere.proven                 # everything measured
    assert "3 configuration(s) have no bound" in nowhere.summary()


@pytest.mark.parametrize("options, fragment", [
    ({"max_measurements": -1}, "max_measurements=-1"), ({"time_limit": -2}, "time_limit=-2"),
    ({"repeat": 0}, "repeat=0"), ({"aggregate": "mean"}, "aggregate='mean'"), ({"top": 0}, "top=0"),
])
def test_bad_options_of_the_api(options, fragment):
    with pytest.raises(OptionError, match=fragment):
        Space.from_source(SMALL).tune(lambda c: 1.0, MODEL, **options)


def test_a_time_limit_stops_with_the_gap():
    space = Space.from_source(SMALL)
    times = truth(space, MODEL)
    result = space.tune(Counting(space, times), MODEL, time_limit=1e-9)
    assert result.status == "time_limit" and not result.proven and result.measured == 0
    assert "stopped by --time-limit" in result.summary()


def test_a_first_configuration_is_measured_by_a_dive_before_any_breadth():
    """Before `top` configurations have run there is nothing to cut against: tune dives depth
    first (domain order) to a complete configuration instead of expanding the many shallow
    prefixes a loose bound ranks first (on the K40c space best-first alone measured nothing in
    60 s). Here best-first alone would expand every `a` before any `b`."""
    space = Space.from_source("a = range(1, 30)\nb = range(1, 30)\nc = range(1, 30)\n")
    measured = []
    result = space.tune(lambda config: measured.append(config) or 1000.0, "max(a, 40 - b) + c", max_measurements=1)
    assert measured == [{"a": 1, "b": 1, "c": 1}]
    assert result.nodes_expanded <= 4 and not result.proven and result.lower is not None
