"""The files of one command, checked together before it runs: no output may name an input or
another output of the same run, under any name (a symbolic or hard link, `./x`), or the run would
replace what it reads or writes (`tune --db run.sqlite --t4 run.sqlite`). Refused with exit 2
before anything is written, naming both options (`solverspace.core.output.check_distinct`).

Inputs: the space file, `--measure-from` (a cache read), `--prior` (another device's measurements). Outputs: `-o`, `--plot`, `--t4`,
`--kt-cache`, the `tune` database (`--db`, or its default next to the space file: read and
written) and an SQLite `--optuna-storage` (a `sqlite:///PATH` URL)."""
from __future__ import annotations

from solverspace.core.errors import SolverspaceError

#: (attribute, option, what writing it would replace) of the outputs; a message names the later of
#: two outputs as the one that would replace the earlier (the database is the record that matters)
OUTPUTS = (("db", "--db", "the tune database and its measurements"),
           ("optuna_storage", "--optuna-storage", "the Optuna storage"),
           ("kt_cache", "--kt-cache", "the Kernel Tuner cache of --kt-cache"),
           ("output", "-o", "the output of -o"), ("plot", "--plot", "the picture of --plot"),
           ("t4", "--t4", "the T4 results"))


def check_files(args) -> None:
    """Raise `OutputError` when an output of `args` names an input or another output (a command
    without outputs imports nothing)."""
    tune = getattr(args, "command", None) == "tune"
    if not tune and all(getattr(args, name, None) is None for name, _, _ in OUTPUTS):
        return
    from solverspace.core.output import check_distinct
    space = _space_file(args)
    inputs = [("space file", space, "the space")]
    if getattr(args, "measure_from", None) is not None:
        inputs.append(("--measure-from", args.measure_from, "the cache --measure-from reads"))
    if getattr(args, "prior", None) is not None:
        inputs.append(("--prior", args.prior, "the measurements --prior reads"))
    paths = {"db": _tune_db(args, space) if tune else None,
             "optuna_storage": sqlite_path(getattr(args, "optuna_storage", None))}
    outputs = [(option, paths[name] if name in paths else getattr(args, name, None), what)
               for name, option, what in OUTPUTS]
    check_distinct(inputs, outputs)


def _space_file(args) -> str | None:
    """The space file the command reads (a built-in space's too), or None (it does not load: the
    command itself says why)."""
    if getattr(args, "space", None) is None:
        return None
    from solverspace.io.loader import resolve_space_path
    try:
        return str(resolve_space_path(args.space))
    except (SolverspaceError, OSError, ValueError, TypeError):
        return None


def _tune_db(args, space: str | None) -> str | None:
    """The database `tune` reads and writes: `--db`, or its default (`Space.default_tune_db`)."""
    if getattr(args, "db", None) is not None:
        return None if args.db == ":memory:" else args.db
    if space is None:
        return None
    from solverspace.analysis.tune_db import default_path
    from solverspace.io.loader import BUILTIN_SPACES
    path = default_path(space, args.space if args.space in BUILTIN_SPACES else None)
    return None if path == ":memory:" else path


def sqlite_path(url: str | None) -> str | None:
    """The file of an SQLite storage URL (`sqlite:///run.db`: relative, `sqlite:////tmp/run.db`:
    absolute; SQLAlchemy's form), None for any other URL or an in-memory database.

    >>> sqlite_path("sqlite:///run.db"), sqlite_path("sqlite:////tmp/run.db"), sqlite_path("mysql://h/db")
    ('run.db', '/tmp/run.db', None)
    """
    if not isinstance(url, str) or not url.startswith("sqlite:///"):
        return None
    path = url[len("sqlite:///"):].split("?", 1)[0]
    return path if path and path != ":memory:" else None
