"""One surface for every command: `--json` on each command that prints an answer (one JSON
document on standard output, its keys in `--help`), answers on standard output and messages on
standard error (what was written to a file is said on standard error), an unknown output
extension refused before anything is written, and `solverspace cache`."""
from __future__ import annotations

import json

import pytest

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
