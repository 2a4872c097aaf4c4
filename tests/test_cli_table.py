"""The command line as a table (`solverspace.cli.parser.COMMANDS`): each subcommand is a `Command` in
a module of its own that no other command's module imports, the parser imports only the module of
the command asked for, a command leaves the parsed arguments as they were, and `tune`'s integration
options (`solverspace.cli.tune_options`) open their files and close them through `Tune.run`.
Also `solverspace --version`."""
from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import solverspace
from solverspace.cli import build_parser, main
from solverspace.cli.commands import Command
from solverspace.cli.parser import COMMANDS
from solverspace.cli.tune_options import TUNE_OPTIONS, TuneOptions
from solverspace.core.lazy import resolve

CLI = Path(solverspace.__file__).parent / "cli"
#: the modules of the commands and of tune's integration options
COMMAND_MODULES = {target.split(":")[0] for target, _ in COMMANDS.values()}
OPTION_MODULES = {target.split(":")[0] for target in TUNE_OPTIONS}


def test_version_is_the_packages(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"solverspace {solverspace.__version__}\n"


def test_every_row_names_a_command_and_every_command_module_has_a_row():
    for name, (target, line) in COMMANDS.items():
        assert isinstance(resolve(target)(), Command) and line, name
    for target in TUNE_OPTIONS:
        assert isinstance(resolve(target)(), TuneOptions), target
    shared = {"__init__", "__main__", "commands", "files", "outputs", "parser", "reference", "tune_options"}
    modules = {f"solverspace.cli.{path.stem}" for path in CLI.glob("*.py") if path.stem not in shared}
    assert modules == COMMAND_MODULES | OPTION_MODULES


def test_no_command_module_imports_another_commands_module():
    """What two commands share is in `solverspace.cli.commands` (or `outputs`, `tune_options`); a
    command's module imports no other command's module, so no command can run another's `run`."""
    for module in sorted(COMMAND_MODULES | OPTION_MODULES):
        tree = ast.parse((CLI / f"{module.rsplit('.', 1)[1]}.py").read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {f"{node.module}.{alias.name}" for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module == "solverspace.cli" for alias in node.names}
        assert not (imported & (COMMAND_MODULES | OPTION_MODULES)) - {module}, module


PROGRAM = """
import sys
from solverspace.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("CLI", sorted(m for m in sys.modules if m.startswith("solverspace.cli.")), file=sys.stderr)
"""


@pytest.mark.parametrize("argv, expected", [
    (["--help"], set()), (["--version"], set()), (["cuont", "gemm"], set()),
    (["settings", "--help"], {"solverspace.cli.settings"}),
    (["tune", "--help"], {"solverspace.cli.tune"} | OPTION_MODULES),
])
def test_the_parser_imports_only_the_asked_commands_module(argv, expected):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run([sys.executable, "-c", PROGRAM, *argv], capture_output=True, text=True, env=env)
    line = next(line for line in result.stderr.splitlines() if line.startswith("CLI "))
    loaded = set(ast.literal_eval(line[4:]))
    assert loaded & (COMMAND_MODULES | OPTION_MODULES) == expected, loaded


def test_every_command_has_a_help_of_its_own():
    commands = build_parser()._subparsers._group_actions[0].choices
    assert list(commands) == list(COMMANDS)
    for name, parser in commands.items():
        assert COMMANDS[name][1] in " ".join(parser.format_help().split()), name


SPACE = "x = range(1, 4)\ny = iterator([1, 2])\nrequire(x + y < 5)\n"


def _run_leaving_args_alone(argv) -> int:
    """Parse `argv` as `main` does, run the command, and check that it left the arguments as parsed."""
    args = build_parser(argv[0]).parse_args(argv)
    run = args.func
    before = copy.deepcopy({name: value for name, value in vars(args).items() if name != "func"})
    code = run(args)
    assert vars(args) == {**before, "func": run}
    return code


def test_commands_leave_the_parsed_arguments_alone(tmp_path, capsys):
    path = tmp_path / "space.py"
    path.write_text(SPACE)
    assert _run_leaving_args_alone(["sample", str(path), "-n", "2", "--given", "x=1"]) == 0
    assert _run_leaving_args_alone(["sample", str(path), "-n", "2", "-o", str(tmp_path / "s.csv")]) == 0
    assert _run_leaving_args_alone(["check", str(path), "x=1"]) == 0
    assert _run_leaving_args_alone(["check", str(path), "x=3", "y=2"]) == 1
    script = tmp_path / "bench.py"
    script.write_text("import sys\nprint(int(sys.argv[1]) / 1000)\n")
    bench = f"{sys.executable} {script} {{x}}"
    kt_cache, t4 = tmp_path / "kt.json", tmp_path / "t4.json"
    code = _run_leaving_args_alone(["tune", str(path), "--measure", bench, "--bound", "x / 1000", "--json", "-q",
                                    "--db", str(tmp_path / "t.sqlite"), "--kt-cache", str(kt_cache), "--t4", str(t4)])
    assert code == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["proven"] and result["best"]["x"] == 1
    # both sinks got every measurement and were closed (a closed Kernel Tuner cache is whole JSON)
    assert len(json.loads(kt_cache.read_text())["cache"]) == result["measured"]
    assert len(json.loads(t4.read_text())["results"]) == result["measured"]


def test_tune_measures_with_exactly_one_option(tmp_path, capsys):
    """`--measure` and the options' measurers (`--measure-from`): none or two is refused before the
    space is loaded or any file opened."""
    path = tmp_path / "space.py"
    path.write_text(SPACE)
    kt_cache = tmp_path / "kt.json"
    assert main(["tune", str(path), "--kt-cache", str(kt_cache)]) == 2
    err = capsys.readouterr().err
    assert ("give exactly one of --measure CMD (run a command) and --measure-from CACHE (times from a Kernel "
            "Tuner cache)") in err and "e.g. --measure './bench {x}' or --measure-from brute_force.json" in err
    assert main(["tune", str(path), "--measure", "x", "--measure-from", str(kt_cache)]) == 2
    assert "tune: --measure and --measure-from both given: give one" in capsys.readouterr().err
    assert not kt_cache.exists()
