"""Trust in `tune` (issue 23, items 1, 2, 3, 8 and its `tune` lines): values of a space (a T1
file's too) are never run as shell code; a configuration whose bound is undefined is measured
before anything is called proven; another function's measurements are never reused; a database
failing mid-run loses no measurement and says what it kept; two `tune` processes never share a
run; exact bounds past the float range; negative times are invalid; the command dies with tune."""
from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solverspace import Space
from solverspace.lang import ir
from solverspace.analysis import tune_db
from solverspace.cli import main
from solverspace.core.errors import OutputError, SolverspaceWarning
from solverspace.analysis.tune_measure import TAIL, Command, DidNotRun
from solverspace.validation.generate import spaces
from tests.helpers import Counting, truth

PYTHON = sys.executable
HOSTILE = ["a; touch PWNED", "$(touch PWNED)", "`touch PWNED`", "a\ntouch PWNED", "a && touch PWNED",
           "a | touch PWNED", "a > PWNED"]
PROBE = """import json, os, sys
with open("probe.log", "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
print(1.0)
"""
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG and /proc are Linux's")


def _t1(path: Path) -> Path:
    path.write_text(json.dumps({"ConfigurationSpace": {"TuningParameters": [
        {"Name": "kind", "Type": "string", "Values": HOSTILE},
        {"Name": "n", "Type": "int", "Values": "[1]"}], "Conditions": []}}))
    return path


def _tune(*argv: str) -> tuple[int, str, str]:
    try:
        code = main(["tune", *argv])
    except SystemExit as exc:
        code = exc.code
    return code


# ---------------------------------------------------------------------------------- 1. no shell
@pytest.mark.parametrize("template", [     # (pasting such a value into a word is refused: test_trust_round4_tune)
    "sh -c '{py} probe.py {{kind}} {{n}}'",                    # a shell script: environment variables
    "sh -c \"{py} probe.py \\\"{{kind}}\\\" {{n}}\"",          # ... in the script's double quotes
    "sh -ec '{py} probe.py '\\''{{kind}}'\\'' {{n}}'",         # ... in the script's single quotes
    "bash -c 'exec \"$0\" probe.py \"$SOLVERSPACE_kind\" {{n}}' {py}",  # the variable, read by the script
])
def test_t1_values_are_arguments_never_shell_code(tmp_path, monkeypatch, capsys, template):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probe.py").write_text(PROBE)
    code = _tune(str(_t1(tmp_path / "t1.json")), "--bound", "0", "--measure", template.format(py=PYTHON),
                 "--db", str(tmp_path / "t.sqlite"), "-q")
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err, err
    assert not (tmp_path / "PWNED").exists()
    received = [json.loads(line) for line in (tmp_path / "probe.log").read_text().splitlines()]
    wrapped = "x{}y" if "x{{kind}}y" in template else "{}"
    assert sorted(r[0] for r in received) == sorted(wrapped.format(v) for v in HOSTILE)
    assert all(r[1:] == ["1"] for r in received)


@pytest.mark.parametrize("template, fragment", [
    ("sh run.sh '{kind}' {n}", "inside quotes"),                # the forms: the user's own quotes
    ('sh run.sh "{kind}" {n}', "inside quotes"),
    ("sh run.sh {kind!r} {n}", "has a conversion"),
    ("./bench {kind} | tail -1", "shell syntax"),
    ("./bench {kind}; echo 1", "shell syntax"),
    ("./bench {kind} > out.txt", "shell syntax"),
    ("./bench {kind} && echo 1", "shell syntax"),
    ("./bench $HOME {kind}", "shell syntax"),
    ('./bench "$HOME" {kind}', "shell syntax"),
    ("./bench `id` {kind}", "shell syntax"),
    ("./bench *.txt {kind}", "shell syntax"),
    ("{kind} {n}", "program's name"),
    ("./bench '{n}", "an unclosed '"),
])
def test_what_only_a_shell_would_do_is_refused_with_the_fix(tmp_path, monkeypatch, capsys, template, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.sh").write_text("echo 1\n")
    code = _tune(str(_t1(tmp_path / "t1.json")), "--bound", "0", "--measure", template,
                 "--db", str(tmp_path / "t.sqlite"))
    out, err = capsys.readouterr()
    assert code == 2 and fragment in err and "Traceback" not in err, err
    assert "sh -c" in err or fragment in ("program's name", "an unclosed '")
    assert not (tmp_path / "PWNED").exists()
    with sqlite3.connect(tmp_path / "t.sqlite") as db:   # nothing ran, nothing recorded
        assert not db.execute("SELECT name FROM sqlite_master WHERE name = 'measurements'").fetchall()


def test_a_nul_in_a_value_is_a_failed_configuration():
    space = Space.from_source('kind = iterator(["ok", "z"])\n')
    command = Command(f"{PYTHON} -c pass {{kind}}", space.model, None)
    with pytest.raises(DidNotRun) as failure:
        command.once({"kind": "nul\0byte"})
    assert failure.value.status == "failed" and "NUL byte" in failure.value.message
    script = Command("sh -c 'echo {kind}'", space.model, None)   # the environment cannot hold one either
    with pytest.raises(DidNotRun, match="NUL byte"):
        script.once({"kind": "nul\0byte"})


# ---------------------------------------------------------------------------------- 2. undefined bound
def test_configurations_with_an_undefined_bound_are_measured_before_proving():
    space = Space.from_source("x = range(0, 5)\ny = range(1, 4)\n")
    times = {(x, y): (0.01 * y if x == 0 else y / x + 0.1) for x in range(5) for y in range(1, 4)}
    result = space.tune(Counting(space, times), "y / x")
    assert result.best == {"x": 0, "y": 1} and result.time == pytest.approx(0.01)
    assert result.proven and result.undefined == 3
    assert result.top[0].bound == float("-inf") and "3 configuration(s) have no bound" in result.summary()
    assert "(bound undefined" in result.summary()


DIVIDING = ["{0} / ({1} - {v})", "max({0}, {2}) + 1 // ({1} - {v})", "{0} % ({1} - {v}) + {2}",
            "if_then_else({0} > {2}, {0}, {2} / ({1} - {v}))", "{2} + abs({0}) * 3 / ({1} - {v}) - {1}"]


@st.composite
def undefined_models(draw):
    """A small generated space and a model with a division that is by zero on some valid
    configuration (the divisor's name minus a value it takes)."""
    text = draw(spaces(max_parameters=3, max_derived=1, max_constraints=2, max_candidates=300))
    space = Space.from_source(text)
    numeric = [n for n in (*space.parameters, *space.model.derived_value)
               if not space.model.kinds.is_string(ir.Ref(n))]
    rows = list(space.rows("reference", with_derived=tuple(space.model.derived_value)))
    if not numeric or not rows:
        return None
    names = [draw(st.sampled_from(numeric)) for _ in range(3)]
    columns = (*space.parameters, *space.model.derived_value)
    value = draw(st.sampled_from(rows))[columns.index(names[1])]
    return space, draw(st.sampled_from(DIVIDING)).format(*names, v=value)


@pytest.mark.filterwarnings("ignore::solverspace.core.errors.SolverspaceWarning")   # lint notes on generated spaces
def test_tune_finds_the_true_best_when_the_model_is_undefined_somewhere():
    """The true best over every valid configuration (a Python measurement of each), against
    tune's proven best; configurations with no bound are made the fastest half the time."""
    cases = []

    @settings(max_examples=40, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(undefined_models(), st.sampled_from([None, 0.5]))
    def check(case, undefined):
        if case is None:
            return
        space, model = case
        times = truth(space, model, undefined=undefined)
        result = space.tune(Counting(space, times), model)
        assert result.proven and result.time == min(times.values()), (model, space.model.source)
        cases.append(result.undefined)

    check()
    assert len(cases) >= 10 and sum(1 for n in cases if n) >= 10


# ---------------------------------------------------------------------------------- 3. identity
def _define(source: str, **values):
    """A function `measure` defined by `source` in a module named `bench` (as a redefinition in
    a notebook or a reloaded module makes it: same module, same qualified name)."""
    namespace = {"__name__": "bench", **values}
    exec(compile(source, "bench.py", "exec"), namespace)
    return namespace["measure"]


SMALL = "a = range(1, 4)\nb = range(1, 3)\n"


def test_a_redefined_function_is_measured_again(tmp_path):
    space = Space.from_source(SMALL)
    db = tmp_path / "t.sqlite"
    first = space.tune(_define("def measure(c):\n    return 1.0 + c['a']\n"), "0", db=db)
    assert first.measured == 6 and first.reused == 0
    fixed = space.tune(_define("def measure(c):\n    return 2.0 + c['a']\n"), "0", db=db)
    assert fixed.reused == 0 and fixed.measured == 6 and fixed.time == 3.0
    notes = []
    again = space.tune(_define("def measure(c):\n    return 2.0 + c['a']\n"), "0", db=db, progress=notes.append)
    assert again.reused == 6 and again.measured == 0 and again.time == 3.0
    assert any(f"reusing 6 stored measurement(s) of run {again.run}" in n for n in notes)
    assert f"6 reused from run {again.run}" in again.summary()


@pytest.mark.parametrize("before, after, values", [
    ("def measure(c, k=1):\n    return k + c['a']\n", "def measure(c, k=2):\n    return k + c['a']\n", {}),
    ("def make(k):\n    return lambda c: k + c['a']\nmeasure = make(1)\n",
     "def make(k):\n    return lambda c: k + c['a']\nmeasure = make(2)\n", {}),
    ("def measure(c):\n    f = lambda x: x + 1\n    return f(c['a'])\n",
     "def measure(c):\n    f = lambda x: x + 2\n    return f(c['a'])\n", {}),
    ("def helper(x):\n    return x + 1\ndef measure(c):\n    return helper(c['a'])\n",
     "def helper(x):\n    return x + 2\ndef measure(c):\n    return helper(c['a'])\n", {}),
    ("def measure(c):\n    return N + c['a']\n", "def measure(c):\n    return N + c['a']\n", "N"),
])
def test_code_defaults_closures_and_globals_are_the_identity(tmp_path, before, after, values):
    space = Space.from_source(SMALL)
    db = tmp_path / "t.sqlite"
    first = space.tune(_define(before, **({"N": 1} if values else {})), "0", db=db)
    second = space.tune(_define(after, **({"N": 2} if values else {})), "0", db=db)
    assert first.measured == 6 and second.reused == 0 and second.measured == 6


def test_a_closure_with_no_stable_text_is_never_reused(tmp_path):
    space = Space.from_source(SMALL)
    db = tmp_path / "t.sqlite"
    handle = object()
    notes = []
    first = space.tune(lambda c: 1.0 + (handle is not None), "0", db=db, progress=notes.append)
    again = space.tune(lambda c: 1.0 + (handle is not None), "0", db=db)
    assert first.identity_note and "object value" in first.identity_note and again.reused == 0
    assert any("will never be reused" in n for n in notes)
    assert "will not be reused" in first.summary() and first.as_dict()["reusable"] is False


# ---------------------------------------------------------------------------------- 8. the database
@pytest.fixture
def short_waits(monkeypatch):
    monkeypatch.setattr(tune_db, "BUSY_TIMEOUT", 0.05)
    monkeypatch.setattr(tune_db, "RETRY_TIMEOUT", 0.1)


def test_a_database_locked_mid_run_loses_no_measurement(tmp_path, short_waits):
    space = Space.from_source(SMALL)
    db = tmp_path / "t.sqlite"
    other = sqlite3.connect(db, isolation_level=None)
    calls = []

    def measure(config):
        calls.append(config)
        if len(calls) == 3:
            other.execute("BEGIN EXCLUSIVE")       # another program locks the file, and keeps it
        return 1.0 + config["a"] + config["b"] / 10

    measure.tune_identity = "1 + a + b / 10"       # its closure holds a connection: no stable text
    with pytest.raises(OutputError, match="cannot record a measurement") as stopped:
        space.tune(measure, "a", db=db)
    message = str(stopped.value)
    assert "the 0 measurement(s) of this run stored before it and the 2 it recorded" in message
    side = Path(str(db) + ".unsaved.jsonl")
    assert side.exists() and str(side) in message and json.dumps(calls[2]) in message
    other.execute("ROLLBACK")
    other.close()
    resumed = space.tune(measure, "a", db=db)       # the set-aside measurement is read back, not repeated
    assert resumed.reused >= 3 and not side.exists()
    assert len(calls) == len({json.dumps(c, sort_keys=True) for c in calls}) == resumed.reused + resumed.measured
    assert resumed.proven and resumed.time == 2.1


def test_a_second_tune_of_the_same_run_is_refused_while_the_first_runs(tmp_path, capsys):
    space = tmp_path / "small.py"
    space.write_text(SMALL)
    wait = tmp_path / "wait.py"
    wait.write_text("import pathlib, time\npathlib.Path('started').touch()\n"
                    "deadline = time.time() + 20\n"
                    "while not pathlib.Path('release').exists() and time.time() < deadline:\n    time.sleep(0.02)\n"
                    "print(1.0)\n")
    argv = [str(space), "--bound", "0", "--measure", f"{PYTHON} {wait}", "--db", str(tmp_path / "t.sqlite"), "-q"]
    first = subprocess.Popen([PYTHON, "-c", "import sys; from solverspace.cli import main; sys.exit(main(sys.argv[1:]))",
                              "tune", *argv], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 30
        while not (tmp_path / "started").exists() and time.time() < deadline and first.poll() is None:
            time.sleep(0.02)
        assert (tmp_path / "started").exists(), first.stderr.read() if first.poll() is not None else "not started"
        code = _tune(*argv)
        out, err = capsys.readouterr()
        assert code == 2 and f"being tuned now by process {first.pid}" in err and "Traceback" not in err, err
    finally:
        (tmp_path / "release").touch()
        assert first.wait(60) == 0
    again = Space.load(space).tune(f"{PYTHON} {wait}", "0", db=tmp_path / "t.sqlite")   # the lock was released
    assert again.reused == 6 and again.measured == 0


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path):
    space = Space.from_source(SMALL)
    db = tmp_path / "t.sqlite"
    space.tune(lambda c: 1.0, "0", db=db, max_measurements=0)
    gone = subprocess.Popen([PYTHON, "-c", "pass"])
    gone.wait()
    with sqlite3.connect(db) as connection:
        (run,) = connection.execute("SELECT run FROM runs").fetchone()
        connection.execute("INSERT INTO locks VALUES (?, ?, ?, ?, ?, ?)",
                           (run, gone.pid, os.uname().nodename, None, "gone", time.time()))
    assert space.tune(lambda c: 1.0, "0", db=db).proven


@pytest.mark.parametrize("where, fragment", [("dir", "is a directory"), ("missing/t.sqlite", "does not exist")])
def test_a_database_path_that_cannot_be_opened_says_why(tmp_path, capsys, where, fragment):
    (tmp_path / "dir").mkdir()
    path = tmp_path / "small.py"
    path.write_text(SMALL)
    code = _tune(str(path), "--bound", "0", "--measure", "echo 1", "--db", str(tmp_path / where))
    out, err = capsys.readouterr()
    assert code == 2 and fragment in err and "unable to open" not in err, err


# ---------------------------------------------------------------------------------- the "also" lines
def test_a_bound_past_the_float_range_is_exact(tmp_path, capsys):
    path = tmp_path / "big.py"
    path.write_text("x = range(6, 8)\n")
    code = _tune(str(path), "--bound", "x ** 400 / 7", "--measure", "echo 1", "--json", "-q")
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err and "not a lower bound" in err, err
    best = json.loads(out)["top"][0]
    assert best["bound"] is None and best["bound_exact"] == f"{6 ** 400}/7"
    with sqlite3.connect(tmp_path / "big.tune.sqlite") as db:
        assert db.execute("SELECT bound FROM measurements WHERE configuration = '{\"x\": 6}'").fetchone()[0] \
            == f"{6 ** 400}/7"
    code = _tune(str(path), "--bound", "x ** 400", "--measure", "echo 1", "-q")
    out, err = capsys.readouterr()
    assert code == 0 and "(bound 1.8218e+311)" in out, out    # 6 ** 400, printed from its exact value


def test_a_negative_time_is_invalid_output_never_the_best():
    space = Space.from_source("x = range(0, 3)\n")
    result = space.tune(lambda c: -1.0 if c["x"] == 0 else float(c["x"]), "0")
    assert result.best == {"x": 1} and result.time == 1.0
    assert [(m.configuration, m.status) for m in result.failed] == [({"x": 0}, "invalid output")]
    printed = Space.from_source("x = range(0, 2)\n").tune("sh -c 'x={x}; echo $((x - 1)).5'", "0")
    assert [m.status for m in printed.failed] == ["invalid output"] and printed.time == 0.5


def test_only_the_tail_of_a_long_output_is_read(tmp_path):
    space = Space.from_source("x = range(1, 3)\n")
    long_then_time = space.tune(f"{PYTHON} -c \"print('x ' * 2000000); print(0.25 * int(__import__('sys').argv[1]))\" "
                                "{x}", "0")
    assert long_then_time.time == 0.25 and long_then_time.proven
    time_then_long = Space.from_source("x = range(1, 2)\n").tune(
        f"{PYTHON} -c \"print(0.5); print('x' * {3 * TAIL})\"", "0")
    assert [m.status for m in time_then_long.failed] == ["invalid output"]   # the number is not in the tail


def _child_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


@linux
@pytest.mark.parametrize("how", [signal.SIGHUP, signal.SIGKILL])
def test_the_measured_command_dies_with_tune(tmp_path, how):
    (tmp_path / "small.py").write_text("x = range(0, 2)\n")
    (tmp_path / "child.py").write_text("import os, time\nopen('child.pid', 'w').write(str(os.getpid()))\n"
                                       "time.sleep(60)\nprint(1)\n")
    tune = subprocess.Popen([PYTHON, "-c", "import sys; from solverspace.cli import main; sys.exit(main(sys.argv[1:]))",
                             "tune", "small.py", "--bound", "0", "--measure", f"{PYTHON} child.py", "-q"],
                            cwd=tmp_path, stderr=subprocess.DEVNULL)
    pidfile = tmp_path / "child.pid"
    deadline = time.time() + 30
    while not (pidfile.exists() and pidfile.read_text()) and time.time() < deadline:
        time.sleep(0.02)
    child = int(pidfile.read_text())
    tune.send_signal(how)
    tune.wait(30)
    try:
        assert _child_gone(child)
    finally:
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("program, status, fragment", [
    ("./bench", 126, "a directory"), ("./no-such-bench", 127, "not found")])
def test_a_program_that_cannot_run_stops_early_with_the_fix(tmp_path, monkeypatch, capsys, program, status, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bench").mkdir()                   # as in the repository's root
    (tmp_path / "small.py").write_text("x = range(0, 20)\n")
    code = _tune("small.py", "--bound", "0", "--measure", f"{program} {{x}}", "-q")
    out, err = capsys.readouterr()
    assert code == 2 and "cannot run" in err and f"exit status {status}" in err and fragment in err, err
    assert "first 3 measurements" in err and "Traceback" not in err
    with sqlite3.connect("small.tune.sqlite") as db:   # not kept: a fixed program measures them
        assert db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 0


def test_the_readme_tune_example_runs_from_the_repository_root(monkeypatch, tmp_path):
    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "tutorial" / "tuning.md").read_text()
    block = text.split("## Measure\n", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    argv = shlex.split(block.replace("\\\n", " "))
    assert argv[:2] == ["solverspace", "tune"]
    monkeypatch.chdir(root)
    db = tmp_path / "readme.sqlite"
    code = main([*argv[1:], "--db", str(db), "-q", "--max-measurements", "3"])
    assert code == 0
    with sqlite3.connect(db) as connection:
        assert {s for (s,) in connection.execute("SELECT status FROM measurements")} == {"ok"}


def test_a_budget_that_leaves_unbounded_configurations_says_so():
    space = Space.from_source("x = range(0, 4)\ny = range(1, 3)\n")
    result = space.tune(lambda c: 1.0, "y / x", max_measurements=1)
    assert not result.proven and result.lower == float("-inf") and result.as_dict()["gap"] is None
    assert "no bound (the model is undefined there) are left unmeasured" in result.summary()
    json.dumps(result.as_dict(), allow_nan=False)       # valid JSON: no Infinity
