"""Trust in `tune`, round four: a value that is not a plain token is never pasted into a command
word, whatever program reads it (`timeout 5 sh -c {kind}`, `python3 -c print({kind})`); it
reaches the command only as `SOLVERSPACE_<name>`, and a template that would paste one is refused
before anything runs. A comment's quote does not confuse a script's quoting. No output of a
command names an input or another output (`--t4` over the database, `-o` over the space). A
`--db` where no file can be created says so."""
from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from solverspace import Space
from solverspace.analysis.tune_measure import Command
from solverspace.cli import main
from solverspace.core.errors import OptionError
from tests.helpers import needs_permission_bits, read_only_directory, skip_unless_sys_refuses_new_files

PYTHON = sys.executable
HOSTILE = ["a; touch PWNED", "$(touch PWNED)", "`touch PWNED`", "a\ntouch PWNED", "a && touch PWNED",
           "a | touch PWNED", "a > PWNED", "b)+__import__('os').system('touch PWNED')+(1", "x y", "*"]
PLAIN = ["a", "b-1", "x/y.z", "k=v", "u@h:1,2", "50%", "+3"]
PROBE = """import json, sys
with open("probe.log", "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
print(1.0)
"""


def _t1(path: Path, values: list) -> Path:
    path.write_text(json.dumps({"ConfigurationSpace": {"TuningParameters": [
        {"Name": "kind", "Type": "string", "Values": values},
        {"Name": "n", "Type": "int", "Values": "[1]"}], "Conditions": []}}))
    return path


def _tune(*argv: str) -> int:
    try:
        return main(["tune", *argv])
    except SystemExit as exc:
        return exc.code


def _received(tmp_path: Path) -> list:
    return [json.loads(line) for line in (tmp_path / "probe.log").read_text().splitlines()]


def _nothing_measured(db: Path) -> bool:
    if not db.exists():
        return True
    with sqlite3.connect(db) as connection:
        return not connection.execute("SELECT name FROM sqlite_master WHERE name = 'measurements'").fetchall()


# ---------------------------------------------------------------------------------- 1. values never pasted
@pytest.mark.parametrize("template", [
    "timeout 5 sh -c {kind}",                          # the shell behind another program
    "env sh -c echo\\ {kind}",
    "nice sh -c echo\\ {kind}",
    "{py} -c print\\({kind}\\)",                       # a value in Python source
    "perl -e print\\({kind}\\)",
    "node -e console.log\\({kind}\\)",
    "bash --rcfile F -c {kind}",                       # `--rcfile` is no `-c`: the value is an argument
    "{py} probe.py {kind} {n}",                        # a plain argument too: which program reads it is unknown
    "{py} probe.py x{kind}y",
    "bash -c 'exec \"$0\" probe.py \"$1\"' {py} {kind}",   # a script's argument
])
def test_a_value_that_is_not_a_plain_token_is_refused_before_anything_runs(tmp_path, monkeypatch, capsys, template):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probe.py").write_text(PROBE)
    code = _tune(str(_t1(tmp_path / "t1.json", HOSTILE)), "--bound", "0", "--measure", template.replace("{py}", PYTHON),
                 "--db", str(tmp_path / "t.sqlite"))
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert "parameter 'kind'" in err and repr(HOSTILE[0]) in err and "not a plain token" in err
    assert '"$SOLVERSPACE_kind' in err.replace("\\", "")      # the fix: the environment variable
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "probe.log").exists()
    assert _nothing_measured(tmp_path / "t.sqlite")


def test_every_value_reaches_a_wrapped_shell_as_its_environment_variable(tmp_path, monkeypatch, capsys):
    """The fix the refusal gives: the shell behind `timeout` reads "$SOLVERSPACE_kind" (every
    parameter is in the environment of every run)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probe.py").write_text(PROBE)
    template = f"timeout 60 sh -c '{PYTHON} probe.py \"$SOLVERSPACE_kind\" \"$SOLVERSPACE_n\"'"
    code = _tune(str(_t1(tmp_path / "t1.json", HOSTILE)), "--bound", "0", "--measure", template,
                 "--db", str(tmp_path / "t.sqlite"), "-q")
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    assert not (tmp_path / "PWNED").exists()
    assert sorted(_received(tmp_path)) == sorted([v, "1"] for v in HOSTILE)


@pytest.mark.parametrize("template", ["{py} probe.py {kind} {n}", "timeout 60 {py} probe.py x{kind}y {n}",
                                      "env {py} probe.py {kind:>4} {n}"])
def test_plain_tokens_are_pasted_as_before(tmp_path, monkeypatch, capsys, template):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probe.py").write_text(PROBE)
    code = _tune(str(_t1(tmp_path / "t1.json", PLAIN)), "--bound", "0", "--measure", template.replace("{py}", PYTHON),
                 "--db", str(tmp_path / "t.sqlite"), "-q")
    err = capsys.readouterr().err
    if ":>4" in template:           # padding makes a space: not a plain token, refused by its spec
        assert code == 2 and "{kind:>4}" in err and "'   a'" in err, err
        return
    assert code == 0, err
    wrapped = "x{}y" if "x{kind}y" in template else "{}"
    assert sorted(r[0] for r in _received(tmp_path)) == sorted(wrapped.format(v) for v in PLAIN)


@pytest.mark.parametrize("script", [
    "true # a \"quote in a comment\n{py} probe.py {{kind}}",
    "true # it's\n{py} probe.py {{kind}}",
    "true;# \"\n{py} probe.py {{kind}}",
    "echo x#\"\" >/dev/null\n{py} probe.py {{kind}}",     # `x#` is no comment: its quotes count
])
def test_a_quote_in_a_shell_comment_does_not_confuse_the_quoting(tmp_path, monkeypatch, capsys, script):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "probe.py").write_text(PROBE)
    template = "sh -c " + "'" + script.format(py=PYTHON).replace("'", "'\\''") + "'"
    code = _tune(str(_t1(tmp_path / "t1.json", HOSTILE)), "--bound", "0", "--measure", template,
                 "--db", str(tmp_path / "t.sqlite"), "-q")
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    assert not (tmp_path / "PWNED").exists()
    assert sorted(_received(tmp_path)) == sorted([v] for v in HOSTILE)


def test_values_that_cannot_be_listed_are_checked_before_each_run():
    """A format spec on a range too long to list: checked when the configuration comes, refused
    before its command starts."""
    space = Space.from_source("x = range(0, 10**9)\nk = iterator(['a', 'b c'])\n")
    command = Command(f"{PYTHON} -c pass {{x:>12}}", space.model, None)
    with pytest.raises(OptionError, match=r"\{x:>12\}.*'           5'.*not a plain token"):
        command.arguments({"x": 5, "k": "a"})
    plain = Command(f"{PYTHON} -c pass {{x:012d}}", space.model, None)
    assert plain.arguments({"x": 5, "k": "a"})[0][-1] == "000000000005"
    with pytest.raises(OptionError, match="derived value 'd'"):
        Command("./bench {d}", Space.from_source("x = range(3)\nd = if_then_else(x > 1, 'a b', 'c')\n").model, None)
    orders = Space.from_source(f"o = permutation({list(range(12))})\n").model     # 12! orders: not listed
    with pytest.raises(OptionError, match="an order .its items joined by `>`. of parameter 'o'"):
        Command("./bench {o}", orders, None)
    assert Command("sh -c './bench {o}'", orders, None).arguments({"o": (0, 1)})[1]["SOLVERSPACE_o"] == "0>1"


def test_every_parameter_is_in_the_environment_and_a_format_spec_has_its_own_variable():
    space = Space.from_source("n = range(5, 8)\nk = iterator(['a;b', 'c'])\nd = n * 2\n")
    command = Command("sh -c 'echo {n:03d} {n} {k}'", space.model, None)
    argv, variables = command.arguments({"n": 7, "k": "a;b", "d": 14})
    assert variables == {"SOLVERSPACE_n": "7", "SOLVERSPACE_k": "a;b", "SOLVERSPACE_d": "14", "SOLVERSPACE_n_1": "007"}
    assert argv[-1] == 'echo "${SOLVERSPACE_n_1}" "${SOLVERSPACE_n}" "${SOLVERSPACE_k}"'
    clash = Space.from_source("n = range(5, 8)\nn_1 = range(2)\n")
    with pytest.raises(OptionError, match="SOLVERSPACE_n_1"):
        Command("sh -c 'echo {n:03d}'", clash.model, None)


# ---------------------------------------------------------------------------------- 2. outputs never replace
@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sp.py").write_text("x = range(1, 4)\ny = range(1, 3)\n")
    assert _tune("sp.py", "--bound", "0", "--measure", "echo 1", "--db", "run.sqlite", "-q") == 0
    cache = {"device_name": "d", "kernel_name": "sp", "problem_size": [], "tune_params_keys": ["x", "y"],
             "tune_params": {"x": [1, 2, 3], "y": [1, 2]}, "objective": "time",
             "cache": {f"{x},{y}": {"x": x, "y": y, "time": 1.0} for x in (1, 2, 3) for y in (1, 2)}}
    (tmp_path / "brute.json").write_text(json.dumps(cache))
    os.symlink("sp.py", tmp_path / "link.py")
    os.symlink("sp.py", tmp_path / "link.svg")
    os.link(tmp_path / "run.sqlite", tmp_path / "hard.sqlite")
    return tmp_path


TUNE = ["tune", "sp.py", "--bound", "0", "-q"]
MEASURE = ["--measure", "echo 1"]


@pytest.mark.parametrize("argv, first, second", [
    ([*TUNE, *MEASURE, "--db", "run.sqlite", "--t4", "run.sqlite"], "--t4", "--db"),
    ([*TUNE, *MEASURE, "--db", "run.sqlite", "--t4", "hard.sqlite"], "--t4", "--db"),        # a hard link
    ([*TUNE, *MEASURE, "--t4", "sp.py"], "--t4", "the space file"),
    ([*TUNE, *MEASURE, "--t4", "link.py"], "--t4", "the space file"),                        # a symbolic link
    ([*TUNE, *MEASURE, "--t4", "./sp.tune.sqlite"], "--t4", "--db"),                         # the default database
    ([*TUNE, *MEASURE, "--db", "run.sqlite", "--kt-cache", "./run.sqlite"], "--kt-cache", "--db"),
    ([*TUNE, "--measure-from", "brute.json", "--kt-cache", "brute.json"], "--kt-cache", "--measure-from"),
    ([*TUNE, "--measure-from", "brute.json", "--db", "brute.json"], "--db", "--measure-from"),
    ([*TUNE, *MEASURE, "--kt-cache", "new.json", "--t4", "./new.json"], "--t4", "--kt-cache"),  # neither exists yet
    (["sample", "sp.py", "-n", "2", "-o", "link.py"], "-o", "the space file"),
    (["enumerate", "sp.py", "-o", "./sp.py"], "-o", "the space file"),
    (["design", "sp.py", "-n", "2", "-o", str(Path("..") / "sp.py")], "-o", None),
    (["explain", "sp.py", "--plot", "link.svg"], "--plot", "the space file"),              # written through the link
])
def test_no_output_names_an_input_or_another_output(files, monkeypatch, capsys, argv, first, second):
    if second is None:          # `../sp.py` from a directory below: the same file by another path
        (files / "below").mkdir()
        monkeypatch.chdir(files / "below")
        second = "the space file"
        argv = [argv[0], str(files / "sp.py"), *argv[2:]]
    before = {p.name: p.read_bytes() for p in files.iterdir() if p.is_file() and not p.is_symlink()}
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert f"{first} " in err and second in err and ("are the same file" in err or "is the space file" in err)
    after = {p.name: p.read_bytes() for p in files.iterdir() if p.is_file() and not p.is_symlink()}
    assert after == before and not (files / "new.json").exists()


def test_outputs_that_are_different_files_still_run(files, capsys):
    code = main([*TUNE, *MEASURE, "--db", "run.sqlite", "--t4", "t4.json", "--kt-cache", "kt.json"])
    assert code == 0, capsys.readouterr().err
    assert json.loads((files / "t4.json").read_text())["results"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_t4_into_a_pipe_writes_into_it_never_replaces_it(files, capsys):
    """A device or a pipe named by --t4 (`/dev/null`) is written, never replaced by a file."""
    os.mkfifo(files / "pipe")
    reader = os.open(files / "pipe", os.O_RDONLY | os.O_NONBLOCK)
    try:
        code = main([*TUNE, *MEASURE, "--db", "run.sqlite", "--t4", "pipe"])
        assert code == 0, capsys.readouterr().err
        assert (files / "pipe").is_fifo()
        received = b""
        while chunk := _read(reader):
            received += chunk
    finally:
        os.close(reader)
    assert len(json.loads(received)["results"]) == 6


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return b""


# ---------------------------------------------------------------------------------- 3. --db not writable
def _tune_db(db: str, capsys) -> tuple[int, str]:
    code = _tune("gemm", "--set", "device=tiny", "--bound", "0", "--measure", "echo 1", "--db", db, "-q")
    return code, capsys.readouterr().err


@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.path.isdir("/sys"),
                    reason="needs Linux's /sys, where no file can be created (even by root)")
def test_a_database_in_a_directory_that_cannot_be_written_says_so(capsys):
    skip_unless_sys_refuses_new_files()   # (root ignores permission bits, not /sys's refusal)
    code, err = _tune_db("/sys/solverspace-test.sqlite", capsys)
    assert code == 2 and "the directory '/sys' is not writable" in err, err
    assert "created when missing" not in err and "Traceback" not in err


@needs_permission_bits
def test_a_database_in_a_read_only_directory_says_so(tmp_path, capsys):
    with read_only_directory(tmp_path) as locked:
        code, err = _tune_db(str(locked / "t.sqlite"), capsys)
    assert code == 2 and "is not writable" in err and "created when missing" not in err, err


@needs_permission_bits
def test_a_read_only_database_says_so(tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    assert _tune_db(str(db), capsys)[0] == 0
    db.chmod(0o400)
    code, err = _tune_db(str(db), capsys)
    assert code == 2 and "the file is not writable" in err and "created when missing" not in err, err


def test_a_database_below_a_file_says_the_file_is_no_directory(tmp_path, capsys):
    (tmp_path / "plain").write_text("")
    code, err = _tune_db(str(tmp_path / "plain" / "t.sqlite"), capsys)
    assert code == 2 and "'plain' is not a directory" in err.replace(str(tmp_path) + os.sep, ""), err
    assert "does not exist" not in err
