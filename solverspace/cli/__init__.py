"""The `solverspace` command: a thin layer over the Python API (`Space`).

`main` parses the arguments (`solverspace.cli.parser`, which imports the module of the command
asked for: `solverspace.cli.count`, ...), runs the command and turns errors, SIGTERM and Ctrl-C
into messages and exit codes.

Answers go to standard output; messages go to standard error. The library's messages are log
records of the `solverspace` logger (and its children); for the run of a command `main` shows
them on standard error, one line each as the library wrote it (a long wait of
`solverspace.waits` as `solverspace: ...`): INFO and above by default, warnings and errors only
with `-q`/`--quiet`, DEBUG too with `-v`/`--verbose` (before the command's name or after it).
`-q` also turns off a command's progress bar, as the command's own `-q` does."""
from __future__ import annotations

import argparse
import functools
import logging
import os
import signal
import sys
import warnings

from solverspace.cli.files import check_files
from solverspace.cli.parser import LISTING_BACKENDS, LOG_OPTIONS, build_parser
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
    # the command's name: the first word after the options of `solverspace` itself (-q, -v)
    parser = build_parser(next((word for word in argv if word not in LOG_OPTIONS), ""))
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
    quiet = bool(getattr(args, "log_quiet", False) or getattr(args, "quiet", False))
    verbose = bool(getattr(args, "log_verbose", False))
    if quiet and verbose:
        parser.error("-q/--quiet and -v/--verbose: give one of them")
    if quiet and getattr(args, "quiet", None) is False:   # the command's own -q (no progress bar) follows
        args = argparse.Namespace(**{**vars(args), "quiet": True})
    quiet_again = _show_log(logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO)
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


class _Stderr(logging.StreamHandler):
    """A handler writing to whatever `sys.stderr` is when a record comes (a test's capture, a
    redirected stream), each line in one write (`logging.StreamHandler.emit` writes the text and
    its newline together, then flushes: lines of two processes sharing a stderr do not mix)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):   # StreamHandler.__init__ sets it; the property always answers sys.stderr
        pass


class _Lines(logging.Formatter):
    """A record as the library wrote it; a long wait (`solverspace.waits`) as `solverspace: ...`."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return f"solverspace: {text}" if record.name == "solverspace.waits" else text


def _show_log(level: int):
    """For one command: the `solverspace` logger's records at `level` and above on stderr (and
    only there: not also through the root logger's handlers). Returns the undo."""
    logger = logging.getLogger("solverspace")
    handler = _Stderr()
    handler.setFormatter(_Lines())
    saved = logger.level, logger.propagate
    logger.setLevel(level)
    logger.propagate = False
    logger.addHandler(handler)

    def undo() -> None:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
    return undo
