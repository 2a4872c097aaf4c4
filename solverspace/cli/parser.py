"""The `solverspace` command line parser: the table of commands (`COMMANDS`) and `build_parser`.

Each subcommand is a `Command` (`solverspace.cli.commands`) in a module of its own, which owns its
arguments (`add_arguments`) and its run (`run`), and imports what it runs at its top. The table
names it as a `"module:Class"` string, so the parser imports only the module of the command asked
for (Kernel Tuner's `_STRATEGY_IMPORTS`, Optuna's `_COMMANDS`, lazily).

To add a subcommand:

1. write its `Command` in a module of the `solverspace.cli` package (`solverspace/cli/NAME.py`):
   `add_arguments(p)` adds its arguments to its sub-parser (the shared groups `add_common(p)`,
   `add_running(p, backends)`, `add_engine(p)`, `add_optimizations(p)` of
   `solverspace.cli.commands` as it needs); `run(args) -> int` returns the exit code (0 done, 1 a
   negative answer, errors raised as `SolverspaceError`, which `main` prints and turns into exit
   code 2), reads `args` and never changes it, and runs no other command; its answer goes to
   standard output (with `--json`, one JSON document: `solverspace.cli.outputs`), its messages to
   standard error; `example` is one command line using it (the end of its `--help`);
2. add its row to `COMMANDS` below: its name, the class, the line `solverspace --help` shows for it.
   `solverspace --help` lists the commands in the table's order.
"""
from __future__ import annotations

import argparse
import os
import sys

from solverspace.core.lazy import resolve
from solverspace.registry.backends import backends_with

LOG_OPTIONS = ("-q", "--quiet", "-v", "--verbose")   # options of `solverspace` itself before the command
LISTING_BACKENDS = backends_with("write")  # the backends that write configurations (CP-SAT counts only)

#: name -> (its `Command` as "module:Class", imported only when its parser is built; its line in
#: `solverspace --help`, also the description of `solverspace NAME --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "count": ("solverspace.cli.count:Count", "number of valid configurations"),
    "sweep": ("solverspace.cli.sweep:Sweep", "count the space for every combination of settings, in one process"),
    "enumerate": ("solverspace.cli.enumeration:Enumerate", "write every valid configuration to a file"),
    "sample": ("solverspace.cli.sample:Sample", "uniform random valid configurations, reproducible by seed"),
    "export-t1": ("solverspace.cli.export_t1:ExportT1", "write the space as a T1 tuning-problem JSON file"),
    "get": ("solverspace.cli.get:Get", "the configuration(s) at the given position(s) of the canonical order"),
    "emit-c": ("solverspace.cli.emit_c:EmitC", "print the generated C/OpenMP enumerator"),
    "funnel": ("solverspace.cli.funnel:Funnel",
               "per constraint: candidates reached, rejected, undefined, kept; redundancy"),
    "explain": ("solverspace.cli.explain:Explain", "settings, parameters, DAG level sets and the loop plan"),
    "settings": ("solverspace.cli.settings:Settings", "list the settings with their allowed values"),
    "check": ("solverspace.cli.check:Check", "is a configuration valid? which rules reject it?"),
    "design": ("solverspace.cli.design:Design",
               "a space-filling design of valid configurations (conditional quantiles)"),
    "repair": ("solverspace.cli.repair:Repair",
               "the valid configuration nearest to a point (L1 distance in parameter indices)"),
    "neighbors": ("solverspace.cli.neighbors:Neighbors",
                  "the valid neighbours of a valid configuration (Kernel Tuner's methods)"),
    "best": ("solverspace.cli.best:Best", "the K best configurations by an objective (branch and bound, CP-SAT)"),
    "tune": ("solverspace.cli.tune:Tune", "the fastest configuration by measurement, measuring only what a "
                                          "lower-bound model cannot rule out (proven best)"),
    "cache-check": ("solverspace.cli.kernel_tuner:CacheCheck", "which valid configurations a Kernel Tuner cache "
                                                               "lacks, and its entries the space calls invalid "
                                                               "(exit 1 when any)"),
    "validate": ("solverspace.cli.validate:Validate", "run every backend that accepts the space; do they agree?"),
    "cache": ("solverspace.cli.cache:Cache", "where compiled modules are kept and how much is there; clear it "
                                             "(cache clear)"),
}


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, without importing shutil (with bz2 and lzma, about 2 ms
    of every command): `$COLUMNS`, else the terminal's width, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter with the default width found as argparse finds it, without
    shutil: argparse makes a formatter for every `add_argument` (to check its metavar). An
    epilog that starts with `example:` is kept as written (a command line is not reflowed)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)

    def _fill_text(self, text, width, indent):
        if text.startswith("example:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def _version() -> str:
    """The package's version (`solverspace.__version__`), read from the package, which Python has
    imported before any of its modules: an `import solverspace` here would make the parser depend
    on the whole API (`Space` and what it imports), which it does not need."""
    return sys.modules["solverspace"].__version__


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser. Without `command`: every command with its arguments (each command's
    module imported). With `command`, what parsing a command line that starts with that word needs:
    when it names a command, that command's sub-parser alone (its module the only one imported; the
    parser then knows no other command); otherwise (`--help`, `--version`, a misspelt command) every
    command's name and line without their arguments, enough to list them or to refuse the word."""
    parser = argparse.ArgumentParser(prog="solverspace", description="Count, list and explain autotuning search spaces.",
                                     formatter_class=_Formatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    add_log_options(parser, argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (target, line) in COMMANDS.items():
        if command is not None and command in COMMANDS and name != command:
            continue
        handler = resolve(target)() if command is None or name == command else None
        epilog = f"example:\n  {handler.example}" if handler is not None and handler.example else None
        p = sub.add_parser(name, help=line, description=line, epilog=epilog, formatter_class=_Formatter)
        if handler is not None:
            handler.add_arguments(p)
            add_log_options(p, argparse.SUPPRESS)
            p.set_defaults(func=handler.run)
    return parser


def add_log_options(p, default) -> None:
    """`-q`/`--quiet` and `-v`/`--verbose`, how much the command says on stderr: given before the
    command's name or after it (`solverspace -q count ...`, `solverspace count ... -q`). A command
    with a `-q` of its own (no progress bar) keeps it: the two mean the same. Their defaults are
    `argparse.SUPPRESS`, so that a sub-parser does not overwrite what the main parser read."""
    taken = {option for action in p._actions for option in action.option_strings}
    if "-q" not in taken:
        p.add_argument("-q", "--quiet", dest="log_quiet", action="store_true", default=default,
                       help="say only warnings and errors on stderr (no progress, no waits)")
    if "-v" not in taken:
        p.add_argument("-v", "--verbose", dest="log_verbose", action="store_true", default=default,
                       help="say debug messages too on stderr")
