"""One surface for every command: `--json` on each command that prints an answer (one JSON
document on standard output, its keys in `--help`), answers on standard output and messages on
standard error (what was written to a file is said on standard error), an unknown output
extension refused before anything is written, and `solverspace cache`."""
from __future__ import annotations

import json
import logging
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import solverspace
from solverspace.cli import build_parser, main
from solverspace.cli.parser import COMMANDS

SMALL = "x = range(1, 7)\ny = range(x, 7)\nrequire(x + y < 8)\n"   # 12 configurations
#: commands whose --json prints one JSON object per line (their format before the others had one)
JSON_LINES = {"best", "sweep"}


@pytest.fixture
def space(tmp_path):
    path = tmp_path / "s.py"
    path.write_text(SMALL)
    return str(path)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _options(command: str) -> dict:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {option: action for action in sub._actions for option in action.option_strings}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_takes_json_and_its_help_names_the_keys(command):
    options = _options(command)
    assert "--json" in options, f"{command} has no --json"
    assert options["--json"].help and ("JSON" in options["--json"].help or "json" in options["--json"].help)


#: command -> (arguments after the space file, keys its JSON document has)
JSON_ANSWERS = {
    "count": (["--backend", "reference"], {"count", "exact", "undefined", "backend"}),
    "get": (["0", "-1"], None),
    "explain": ([], {"space", "settings", "parameters", "derived", "constraints", "level_sets", "loop_plan"}),
    "settings": ([], None),
    "check": (["x=1", "y=2"], {"valid", "complete", "assignment", "completion", "rejections", "conflict", "minimal"}),
    "repair": (["x=6", "y=6"], {"configuration", "distance"}),
    "neighbors": (["x=1", "y=2"], None),
    "sample": (["-n", "3", "--method", "reference"], {"configurations", "method", "seed", "n", "space_size"}),
    "design": (["-n", "3"], {"configurations", "method", "seed", "n"}),
    "funnel": (["--backend", "reference"], {"count", "levels", "constraints"}),
    "validate": (["--backends", "reference,cpsat"], {"space", "status", "agree", "verdict", "backends", "counterexamples"}),
}


@pytest.mark.parametrize("command", list(JSON_ANSWERS))
def test_json_is_one_document_on_stdout(capsys, space, command):
    rest, keys = JSON_ANSWERS[command]
    code, out, _ = run(capsys, command, space, *rest, "--json")
    assert code == 0, out
    document = json.loads(out)   # the whole of standard output is one document
    if keys is not None:
        assert keys <= set(document), sorted(document)
    if command == "get":
        assert document == [{"position": 0, "configuration": {"x": 1, "y": 1}},
                            {"position": -1, "configuration": {"x": 3, "y": 4}}]
    elif command == "settings":
        assert document == []
    elif command == "check":
        assert document["valid"] is True and document["complete"] is True and document["rejections"] == []
    elif command == "repair":
        assert document["distance"] > 0 and document["configuration"]["x"] + document["configuration"]["y"] < 8
    elif command in ("sample", "design"):
        assert len(document["configurations"]) == 3
        assert all(c["x"] + c["y"] < 8 and c["x"] <= c["y"] for c in document["configurations"])
    elif command == "explain":
        assert [p["name"] for p in document["parameters"]] == ["x", "y"]
        assert [loop["parameter"] for loop in document["loop_plan"]["loops"]] == ["x", "y"]


def test_check_json_names_the_rejecting_rule_and_keeps_the_exit_code(capsys, space):
    code, out, _ = run(capsys, "check", space, "x=4", "y=5", "--json")
    document = json.loads(out)
    assert code == 1 and document["valid"] is False
    assert [r["rule"] for r in document["rejections"]] == ["require_line3"]
    assert document["rejections"][0]["values"] == {"x": 4, "y": 5}


def test_settings_json_lists_values_and_choices(capsys):
    code, out, _ = run(capsys, "settings", "gemm", "--set", "device=tiny", "--json")
    settings = {s["name"]: s for s in json.loads(out)}
    assert code == 0 and settings["device"]["value"] == "tiny" and settings["device"]["default"] == "k40c"
    assert "tiny" in settings["device"]["choices"]


# --- answers on stdout, what was written on stderr -----------------------------------------------
#: command -> its arguments after the space file, besides -o (every command that takes -o)
WRITERS = {
    "enumerate": ["--backend", "reference"],
    "sample": ["-n", "3", "--method", "reference"],
    "design": ["-n", "3"],
    "export-t1": [],
}


def test_every_command_with_an_output_file_is_in_the_walk():
    takes_o = {name for name in COMMANDS if "-o" in _options(name)}
    assert takes_o == set(WRITERS)


@pytest.mark.parametrize("command", list(WRITERS))
def test_a_command_writing_a_file_says_so_on_stderr_and_prints_nothing(capsys, space, tmp_path, command):
    target = tmp_path / ("t1.json" if command == "export-t1" else "rows.csv")
    code, out, err = run(capsys, command, space, *WRITERS[command], "-o", target)
    assert code == 0 and target.exists()
    assert out == "", out
    assert err.startswith("wrote ") and str(target) in err and len(err.splitlines()) == 1, err
    code, out, err = run(capsys, command, space, *WRITERS[command], "-o", target, "--json")
    report = json.loads(out)
    assert code == 0 and report["output"] == str(target) and err == ""


@pytest.mark.parametrize("command", ["sample", "design"])
def test_without_o_the_rows_are_the_answer_on_stdout(capsys, space, command):
    code, out, err = run(capsys, command, space, *WRITERS[command])
    assert code == 0 and out.splitlines()[0] == "x,y" and len(out.splitlines()) == 4 and "wrote" not in err


@pytest.mark.parametrize("command", list(WRITERS))
def test_json_with_rows_on_stdout_is_refused(capsys, space, command):
    code, out, err = run(capsys, command, space, *WRITERS[command], "-o", "-", "--json")
    assert code == 2 and out == "" and "--json with -o -" in err


# --- unknown output extensions -------------------------------------------------------------------
@pytest.mark.parametrize("command", ["enumerate", "sample", "design"])
def test_an_unknown_output_extension_is_refused_before_anything_is_written(capsys, space, tmp_path, command):
    target = tmp_path / "out.xyz"
    code, out, err = run(capsys, command, space, *WRITERS[command], "-o", target)
    assert code == 2 and out == "" and not target.exists()
    assert "unknown output extension '.xyz'" in err and ".csv" in err and ".parquet" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.py"]


def test_a_name_without_an_extension_is_still_csv(capsys, space, tmp_path):
    target = tmp_path / "rows"
    code, _, _ = run(capsys, "enumerate", space, "--backend", "reference", "-o", target)
    assert code == 0 and target.read_text().splitlines()[0] == "x,y"


# --- solverspace cache ----------------------------------------------------------------------------
def test_cache_info_and_clear(capsys, tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "plan_0123abcd.json").write_text("{}")
    (folder / "notes.txt").write_text("not ours")
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(folder))
    code, out, _ = run(capsys, "cache")
    assert code == 0 and out.startswith(f"{folder}: 1 entries") and "plans: 1" in out
    code, out, _ = run(capsys, "cache", "info", "--json")
    info = json.loads(out)
    assert info["path"] == str(folder) and info["exists"] and info["entries"] == 1 and info["bytes"] == 2
    assert info["kinds"]["plans"] == {"entries": 1, "bytes": 2}
    code, out, _ = run(capsys, "cache", "clear", "--json")
    assert code == 0 and json.loads(out) == {"path": str(folder), "removed": 1, "bytes": 2, "kept": 0}
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    code, out, _ = run(capsys, "cache", "clear")
    assert code == 0 and out.strip() == f"{folder}: removed 0 entries, 0.0 MB"


def test_cache_follows_xdg_cache_home(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("SOLVERSPACE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    code, out, _ = run(capsys, "cache", "--json")
    assert code == 0 and json.loads(out)["path"] == str(tmp_path / "xdg" / "solverspace")
    assert not json.loads(out)["exists"]


# --- messages through logging --------------------------------------------------------------------
ROOT = Path(solverspace.__file__).resolve().parent.parent


def test_the_library_writes_no_message_to_stderr_itself():
    """Outside the command line (and `core.messages`, its one writer), no module prints to
    stderr or imports the writer: the library's messages are log records."""
    offenders = []
    for folder in ("solverspace", "translators"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("solverspace/cli/") or relative == "solverspace/core/messages.py":
                continue
            text = path.read_text(encoding="utf-8")
            if re.search(r"file\s*=\s*sys\.stderr|sys\.stderr\.write|core\.messages import", text):
                offenders.append(relative)
    assert offenders == []


def test_the_package_adds_a_null_handler_only_and_main_leaves_logging_as_it_was(capsys, space):
    logger = logging.getLogger("solverspace")
    before = (list(logger.handlers), logger.level, logger.propagate)
    assert [type(h) for h in before[0]] == [logging.NullHandler]
    assert run(capsys, "count", space, "--backend", "reference")[0] == 0
    assert (list(logger.handlers), logger.level, logger.propagate) == before


@pytest.fixture
def every_wait_said(monkeypatch, tmp_path):
    """Every wait said at once, and a cold cache: a count on the C backend has waits to say."""
    from solverspace.translators.c import build
    monkeypatch.setattr(build, "ANNOUNCE_AFTER", 0.0)
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(tmp_path / "cache"))


@pytest.mark.needs_cc
@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_before_or_after_the_command_says_nothing(capsys, space, every_wait_said, where):
    argv = ["-q", "count", space, "--backend", "c"] if where == "before" else ["count", space, "--backend", "c", "-q"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and out.startswith("12 valid configurations") and err == ""


@pytest.mark.needs_cc
def test_waits_are_said_by_default_and_verbose_adds_debug(capsys, space, every_wait_said):
    code, out, err = run(capsys, "count", space, "--backend", "c")
    assert code == 0 and "solverspace: compiling " in err and "from the cache" not in err
    code, out, err = run(capsys, "-v", "count", space, "--backend", "c")     # warm: the module comes from the cache
    assert code == 0 and f"from the cache {Path(os.environ['SOLVERSPACE_CACHE'])}" in err
    code, _, err = run(capsys, "settings", space, "--verbose")
    assert code == 0


def test_quiet_and_verbose_together_are_refused(capsys, space):
    with pytest.raises(SystemExit) as exit_:
        main(["-q", "count", space, "-v"])
    assert exit_.value.code == 2 and "give one of them" in capsys.readouterr().err


def test_a_local_dask_cluster_says_nothing_of_a_port_in_use(tmp_path, space):
    """Dask's 'Port 8787 is already in use' warning (its HTTP server's default port) does not leak:
    the local cluster listens on any free port."""
    pytest.importorskip("distributed")
    holder = socket.socket()
    try:
        holder.bind(("", 8787))
        holder.listen()
    except OSError:
        pass   # taken already: all the better
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT), SOLVERSPACE_CACHE=str(tmp_path / "cache"))
        done = subprocess.run([sys.executable, "-m", "solverspace", "count", space, "--engine", "dask", "--workers", "1"],
                              capture_output=True, text=True, env=env, timeout=300)
    finally:
        holder.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("12 valid configurations")
    assert "already in use" not in done.stderr and "Warning" not in done.stderr, done.stderr


# --- an example in every --help -------------------------------------------------------------------
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_help_ends_with_an_example_the_parser_reads(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert text.count("\nexample:\n  solverspace ") == 1, text[-300:]
    example = text.rsplit("example:\n", 1)[1].strip()
    assert example.startswith(f"solverspace {command} ")
    words = shlex.split(re.sub(r"\$\(.*\)", "", example).split(" > ")[0])[1:]   # no command substitution, no redirection
    args, extra = build_parser(command).parse_known_args(words)
    assert args.command == command and all("=" in e for e in extra), extra


ORDERS = ('seq = permutation(["i", "j", "k"])\nopt = sequence(["a", "b", "c"], 1, 2)\nt = range(0, len(opt) + 1)\n'
          'require(before(seq, "i", "j"))\nrequire(position(opt, "b") <= t)\n')


def test_an_order_is_its_text_in_every_json_answer(capsys, tmp_path):
    """As in CSV and JSON Lines files: `i>j>k`, whichever command prints the configuration."""
    path = tmp_path / "orders.py"
    path.write_text(ORDERS)
    answers = {
        "get": [c["configuration"] for c in json.loads(run(capsys, "get", path, "0", "--json")[1])],
        "sample": json.loads(run(capsys, "sample", path, "-n", "3", "--json")[1])["configurations"],
        "check": [json.loads(run(capsys, "check", path, "seq=i>j>k", "--json")[1])["completion"]],
        "neighbors": json.loads(run(capsys, "neighbors", path, "seq=i>j>k", "opt=b", "t=1", "--json")[1]),
    }
    for command, configurations in answers.items():
        assert configurations, command
        for configuration in configurations:
            assert isinstance(configuration["seq"], str) and sorted(configuration["seq"].split(">")) == ["i", "j", "k"]
            assert isinstance(configuration["opt"], str), command
