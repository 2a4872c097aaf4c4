"""Run options checked in one place, for the API and the CLI alike.

Each `check_*` returns the value it accepts or raises `OptionError` (a `ValueError`) saying what
was given, what is expected and how to fix it. The CLI's argparse `type=` functions wrap them, so
`--threads -2` is refused by the same rule as `Space.count("c", threads=-2)`.
"""
from __future__ import annotations

import argparse
import operator
import os
from collections.abc import Mapping

from solverspace.core.errors import ArgumentTypeError, OptionError

MAX_THREADS = 4096  # more only oversubscribes the cores; far more makes OpenMP abort the process


def check_threads(threads, name: str = "threads"):
    """None (every core) or a whole number from 1 to `MAX_THREADS`.

    >>> check_threads(None), check_threads(4)
    (None, 4)
    >>> check_threads(-2)
    Traceback (most recent call last):
    ...
    solverspace.core.errors.OptionError: threads=-2: expected a whole number from 1 to 4096
      hint: leave it out to use every core
    """
    if threads is None:
        return None
    number = check_whole(threads, name, f"a whole number from 1 to {MAX_THREADS}")
    if not 1 <= number <= MAX_THREADS:
        raise OptionError(f"{name}={threads!r}: expected a whole number from 1 to {MAX_THREADS}",
                          hint="leave it out to use every core")
    return number


def check_whole(value, name: str, expected: str = "a whole number") -> int:
    """`value` as an int where it is one (Python's or NumPy's, not a bool); otherwise an
    `ArgumentTypeError` naming the argument (`n="10"` is not read as 10: say what you mean).

    >>> check_whole("10", "n")
    Traceback (most recent call last):
    ...
    solverspace.core.errors.ArgumentTypeError: n='10': expected a whole number, not str
      hint: pass an int, e.g. n=10
    """
    number = _whole(value)
    if number is None:
        example = f", e.g. {name}={int(float(value))}" if isinstance(value, (str, float)) and _reads_as_int(value) else ""
        raise ArgumentTypeError(f"{name}={value!r}: expected {expected}, not {type(value).__name__}",
                                hint=f"pass an int{example}")
    return number


def _reads_as_int(value) -> bool:
    try:
        return float(value).is_integer()
    except (ValueError, OverflowError):
        return False


def check_path(value, name: str = "path", example: str = "out.csv"):
    """A file path argument: a `str` or a path object (`pathlib.Path`), else `ArgumentTypeError`."""
    return check_kind(value, name, (str, os.PathLike), "a file path (str or pathlib.Path)", f"{name}={example!r}")


def check_settings(settings, name: str = "settings") -> dict:
    """Setting overrides: None or a mapping of setting names to values, else `ArgumentTypeError`."""
    if settings is None:
        return {}
    return check_kind(settings, name, Mapping, "a dict of setting names to values", f"{name}={{'device': 'k40c'}}")


def check_kind(value, name: str, kind: type | tuple, expected: str, example: str):
    """`value` where it is an instance of `kind`, else `ArgumentTypeError` naming the argument,
    `expected` and an `example` call (`name=...`)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):   # True is no number
        raise ArgumentTypeError(f"{name}={value!r}: expected {expected}, not {type(value).__name__}",
                                hint=f"e.g. {example}")
    return value


def _whole(value) -> int | None:
    """An integer (Python's or NumPy's, not a bool) as an int, else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def check_separator(sep) -> str:
    """A CSV field separator: one ASCII character that cannot occur in a written number and is
    not CSV's quote or a line break (the C formatter writes one byte per separator).

    >>> check_separator(";")
    ';'
    >>> check_separator("::")
    Traceback (most recent call last):
    ...
    solverspace.core.errors.OptionError: separator '::': expected exactly one character
      hint: e.g. --sep ';' or --sep $'\\t'
    """
    hint = "e.g. --sep ';' or --sep $'\\t'"
    if not isinstance(sep, str) or len(sep) != 1:
        raise OptionError(f"separator {sep!r}: expected exactly one character", hint=hint)
    if not sep.isascii():
        raise OptionError(f"separator {sep!r}: expected an ASCII character", hint=hint)
    if sep in '"\r\n' or sep.isdigit() or sep in "-+.":
        raise OptionError(f"separator {sep!r}: it would make the CSV unreadable (a quote, a line break, "
                          "or a character of a number)", hint=hint)
    return sep


def check_seed(seed) -> int:
    """A random seed: a non-negative whole number (NumPy's generators take no negative seeds)."""
    number = check_whole(seed, "seed", "a non-negative whole number")
    if number < 0:
        raise OptionError(f"seed={seed!r}: expected a non-negative whole number", hint="e.g. seed=7 (--seed 7 on the command line)")
    return number


def _argparse_type(check, convert=int, kind="a whole number"):
    """An argparse `type=` function: convert the text, then apply `check`; an OptionError
    becomes argparse's usage error (exit status 2) with the same message."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        try:
            return check(value)
        except OptionError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None
    return parse


def at_least(minimum):
    """A check for whole numbers >= minimum (counts and limits: -n, --samples, --top)."""
    def check_number(value):
        if value < minimum:
            raise OptionError(f"{value}: expected at least {minimum}")
        return value
    return check_number


def positive_float(value: float) -> float:
    """A time limit or tolerance: a finite number greater than 0."""
    if not value > 0 or value == float("inf"):
        raise OptionError(f"{value}: expected a number greater than 0")
    return value


def probability(value: float) -> float:
    """A failure probability: strictly between 0 and 1."""
    if not 0 < value < 1:
        raise OptionError(f"{value}: expected a number between 0 and 1 (exclusive)")
    return value


THREADS = _argparse_type(check_threads)
WORKERS = _argparse_type(lambda value: check_threads(value, "workers"))
SEED = _argparse_type(check_seed)
SEPARATOR = _argparse_type(check_separator, convert=str, kind="a character")
POSITIVE = _argparse_type(at_least(1))
NON_NEGATIVE = _argparse_type(at_least(0))
POSITIVE_FLOAT = _argparse_type(positive_float, convert=float, kind="a number")
PROBABILITY = _argparse_type(probability, convert=float, kind="a number")
