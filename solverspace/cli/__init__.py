"""The `solverspace` command: a thin layer over the Python API (`Space`).

`main` parses the arguments (`solverspace.cli.parser`, which imports the module of the command
asked for: `solverspace.cli.count`, ...), runs the command and turns errors, SIGTERM and Ctrl-C
into messages and exit codes."""
from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import warnings

from solverspace.cli.files import check_files
from solverspace.cli.parser import LISTING_BACKENDS, build_parser
from solverspace.core.errors import SolverspaceError, SolverspaceWarning
from solverspace.lang.evaluate import allow_integers_of_any_length
from solverspace.core.messages import say

__all__ = ["LISTING_BACKENDS", "Terminated", "build_parser", "main"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that the same paths cancel the C threads and remove
    temporary files; the command then exits with 128 + 15."""


def _raise_terminated(signum, frame):
    raise Terminated()


def _on_sigterm():
    """Install the SIGTERM handler for one `main()` call; returns the handler to restore (None
    when signals cannot be handled here, outside the main thread)."""
    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:
        return None


def _ignore_file_size_signal():
    """Past the file size limit (`ulimit -f`) the kernel sends SIGXFSZ, which kills by default;
    ignored, the write fails with EFBIG and the output code reports it (CPython usually ignores
    it already; this does not depend on that)."""
    if hasattr(signal, "SIGXFSZ"):
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        except ValueError:  # not the main thread: leave the disposition alone
            pass


def _warn_once(message, category, filename, lineno, file=None, line=None, *, seen: set, fallback):
    """showwarning for the command: each SolverspaceWarning once, as `solverspace: warning: ...`."""
    if not issubclass(category, SolverspaceWarning):
        return fallback(message, category, filename, lineno, file, line)
    if str(message) not in seen:
        seen.add(str(message))
        say(f"solverspace: warning: {message}")


def main(argv: list[str] | None = None) -> int:
    allow_integers_of_any_length()   # before argparse reads a position of 5,000 digits
    _ignore_file_size_signal()
    previous = _on_sigterm()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", SolverspaceWarning)
            warnings.showwarning = functools.partial(_warn_once, seen=set(), fallback=warnings.showwarning)
            return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv else "")
    args, extra = parser.parse_known_args(argv)
    # `check SPACE --set a=b k=v ...` (and neighbors, repair): argparse stops filling a positional
    # list at an option
    if extra and hasattr(args, "assignment") and all("=" in e and not e.startswith("-") for e in extra):
        args = argparse.Namespace(**{**vars(args), "assignment": args.assignment + extra})
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "engine", "dask") == "local":
        given = [o for o in ("scheduler", "partitions", "format") if getattr(args, o, None) is not None]
        if given:
            parser.error(f"--{given[0]} is an option of --engine dask")
    quiet_again = _say_waits(args)
    try:
        check_files(args)
        return args.func(args)
    except SolverspaceError as exc:
        say(f"solverspace: error: {exc}")
        return 2
    except Terminated:
        say("solverspace: terminated")
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        say("solverspace: interrupted")
        return 130
    except BrokenPipeError:  # `solverspace explain gemm | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        quiet_again()


#: The commands that may compile or generate a program (a wait of seconds on a cold cache).
COMPILING = frozenset({"count", "enumerate", "sample", "get", "best", "funnel", "sweep", "check", "validate",
                       "tune", "neighbors"})


def _say_waits(args):
    """For a command that may compile, without `--quiet`: each long wait (compiling, generating a
    program, planning a search; `solverspace.translators.c.build.waiting`) said in one line on
    stderr while the command runs. Returns the undo (the listener removed)."""
    if args.command not in COMPILING or getattr(args, "quiet", False):
        return lambda: None
    from solverspace.translators.c.build import WAITS

    def waiting(message: str) -> None:
        say(f"solverspace: {message}")

    WAITS.append(waiting)
    return lambda: WAITS.remove(waiting)

