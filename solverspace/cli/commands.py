"""What the `solverspace` subcommands share: `Command` (a subcommand's arguments and its run), the
argument groups several commands take (`add_common`, `add_running`, `add_engine`,
`add_optimizations`), `load_space` (the space a command names, with its `--set` settings),
`Progress` (the bar on stderr), the backend a command runs with its options (`backend_for`) and the
options of the Dask engine (`dask_options`).

Each command is a `Command` in a module of its own (`solverspace.cli.count`, ...), named in the
table of `solverspace.cli.parser`. The commands call `commands.load_space(args)` through this
module, so that a test replacing `load_space` here replaces it for every command."""
from __future__ import annotations

import argparse
import sys

from solverspace.registry.backends import BACKENDS, get_backend
from solverspace.core.errors import SolverspaceError
from solverspace.core.options import POSITIVE, POSITIVE_FLOAT, THREADS, WORKERS
from solverspace.space import Space

# core.output and core.formats (shutil, tempfile, bz2, lzma) and analysis.check are imported by
# the modules of the commands that write a file or check an assignment: `count`, `sweep` and
# `best` need none.

class Command:
    """One subcommand: `add_arguments` declares what it takes on its sub-parser, `run` does it with
    the parsed arguments (read, never changed) and returns the exit code: 0 done, 1 a negative
    answer; bad input is raised as a `SolverspaceError`, which `main` prints with exit code 2.
    No command runs another's `run`: what two commands share is a function of this module.
    `example`: one command line that uses it, shown at the end of its `--help`."""

    example = ""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the command's arguments to `parser`, its sub-parser."""

    def run(self, args: argparse.Namespace) -> int:
        raise NotImplementedError


# --- argument groups -----------------------------------------------------------------------------
def add_common(p):
    p.add_argument("space", help="a space file, or a built-in space name (gemm)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a setting (repeatable)")
    p.add_argument("--max-closure-values", type=POSITIVE, default=100_000, metavar="N",
                   help="stop a closure (generator) iterator that yields more than N values (default 100000)")


def add_optimizations(p):
    p.add_argument("--literal", action="store_true",
                   help="C backend: every optimization off (the benchmark baseline)")
    p.add_argument("--disable", action="append", metavar="OPT", choices=["break", "tighten", "solve", "hoist", "split"],
                   help="C backend: switch one optimization off (break, tighten, solve, hoist, split; "
                        "repeatable)")


def add_engine(p, listing=False):
    p.add_argument("--engine", default="local", choices=["local", "dask"],
                   help="local (this process, default) or dask (partitions run on dask.distributed: a local "
                        "cluster, or --scheduler; needs the dask extra; C backend only)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="--engine dask: an existing Dask scheduler (tcp://HOST:8786) instead of a local cluster")
    p.add_argument("--partitions", type=POSITIVE, default=None, metavar="N",
                   help="--engine dask: how many partitions (default: 4 per worker, at least one per 4Mi rows)")
    if listing:
        p.add_argument("--format", choices=["parquet", "npy"], default=None,
                       help="--engine dask: the shards' format (-o names a directory)")


def add_running(p, backends):
    named = {"auto": "auto (default: c when compiled already or the space is big, else reference)",
             "c": "c (compiled C/OpenMP)", "reference": "reference (pure Python)", "cpsat": "cpsat"}
    p.add_argument("--backend", default="auto", choices=backends,
                   help=", ".join(named.get(b, b) for b in backends))
    p.add_argument("--threads", type=THREADS, default=None, metavar="N", help="C backend threads (default: all cores)")
    p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS",
                   help="CP-SAT backend: stop after SECONDS (a count stopped early is a lower bound)")
    p.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                   help="CP-SAT backend: solver threads (default: all cores); --engine dask: worker processes "
                        "of the local cluster (default: all cores)")
    add_optimizations(p)
    p.add_argument("--strict", action="store_true", help="make an undefined operation an error")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar; only warnings and errors on stderr")


def sample_size(text: str) -> int:
    """`-n`: an integer in digits only (1e11 is refused, not rounded: a sample size is exact)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        digits = f" (-n {int(float(text))})" if float(text).is_integer() else ""
    except (ValueError, OverflowError):
        digits = ""
    raise argparse.ArgumentTypeError(f"{text!r} is not an integer: write the sample size out in digits{digits}")


# --- running -------------------------------------------------------------------------------------
def parse_settings(pairs: list[str]) -> dict:
    """The `--set NAME=VALUE` pairs as a dict."""
    result = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SolverspaceError(f"--set {pair!r}: expected NAME=VALUE", hint="e.g. --set precision=single")
        result[name.strip()] = value
    return result


def load_space(args) -> Space:
    return Space.load(args.space, parse_settings(args.set), max_closure_values=args.max_closure_values)


class Progress:
    """A tqdm bar on stderr, only for a terminal and without --quiet; fed by the backend."""

    def __init__(self, enabled: bool, desc: str):
        self.bar = None
        self.enabled = enabled and sys.stderr.isatty()
        self.desc = desc

    def __call__(self, done: int, total: int):
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm
            # miniters=0: redraw every half second whatever moved (tqdm's dynamic miniters, set from
            # the first jump, held a funnel's bar at 85% for its last 12 s)
            self.bar = tqdm(total=total, desc=self.desc, unit="unit", file=sys.stderr, mininterval=0.5, delay=1.0,
                            miniters=0)
        self.bar.n = done
        self.bar.refresh() if done == total else self.bar.update(0)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def backend_options(args, backend: str) -> dict:
    """The options of `backend` given on the command line (--threads, --literal, --disable,
    --time-limit, --workers): each backend gets those it takes (`BACKENDS[name].options`)."""
    given = {"threads": getattr(args, "threads", None), "time_limit": getattr(args, "time_limit", None),
             "workers": getattr(args, "workers", None), "literal": getattr(args, "literal", None) or None,
             "disable": tuple(getattr(args, "disable", None) or ()) or None}
    return {name: value for name, value in given.items() if name in BACKENDS[backend].options and value is not None}


def backend_for(args, capability: str):
    """The backend object a command runs, with the options given for it."""
    return get_backend(args.backend, capability, **backend_options(args, args.backend))


def tally_walk(args, answered_by: str) -> str:
    """Which walk an undefined-operation tally counts: "literal plan" (the reference, CP-SAT, C with
    --literal, and strict mode under auto, which walks it) or "optimized plan" (C's: it visits
    fewer candidates, so its tally may differ, never its count)."""
    literal = bool(getattr(args, "literal", False)) or (getattr(args, "strict", False) and args.backend == "auto")
    return "optimized plan" if answered_by == "c" and not literal else "literal plan"


def answered(backend) -> str:
    """Which backend answered, for messages: `auto` names its choice."""
    chosen = getattr(backend, "answered_by", None)
    if chosen and getattr(backend, "quick", False):
        chosen += ", quick -O0 build; the optimized one is built behind"
    return f"auto: {chosen}" if chosen else backend.name


def dask_options(args) -> dict:
    """`--engine dask`: the Dask engine's options (`solverspace.scale.dask_engine.DaskOptions`) given
    on this command line. A command imports the engine itself, when it is asked for (it imports the
    C backend and the file writers, which a count on another backend does not need)."""
    return dict(space=args.space, settings=parse_settings(args.set), max_closure_values=args.max_closure_values,
                backend=getattr(args, "backend", "auto"), method=getattr(args, "method", "exact"),
                literal=bool(getattr(args, "literal", False)), disable=tuple(getattr(args, "disable", None) or ()),
                scheduler=args.scheduler, workers=args.workers, threads=args.threads,
                partitions=args.partitions, strict=getattr(args, "strict", False), progress=not args.quiet)
