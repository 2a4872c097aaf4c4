"""One error hierarchy with one message grammar: what is wrong, where, and how to fix it.

User-input errors also subclass the matching builtin (`ValueError`, `TypeError`) so that
callers who do not know our hierarchy still catch them sensibly.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in a space file, for messages."""

    filename: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}" if self.line else self.filename


class SolverspaceError(Exception):
    """Base class of every error this library raises on purpose."""

    def __init__(self, message: str, *, where: Location | None = None, hint: str | None = None):
        self.message = message
        self.where = where
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class SpaceDefinitionError(SolverspaceError, ValueError):
    """The space file is wrong: unknown names, cycles, unsupported syntax, bad values."""


class SettingError(SolverspaceError, ValueError):
    """A setting override is unknown or outside its allowed values."""


class SpaceEvaluationError(SolverspaceError, ValueError):
    """Evaluating the space hit something that is not a value of the language
    (e.g. a non-integer range bound) or a runaway closure iterator."""


class UndefinedOperationError(SolverspaceError, ArithmeticError):
    """Strict mode: an operation was undefined (division or modulo by zero)."""


class BackendUnavailableError(SolverspaceError, ValueError):
    """The requested backend does not exist or cannot handle this space."""


class OptionError(SolverspaceError, ValueError):
    """A run option is out of range: a thread count, a CSV separator, a seed, a value given to
    `check` (checked once, in `solverspace.options`, for the CLI and the API alike)."""


class OutputError(SolverspaceError, OSError):
    """An output file cannot be written: a missing or read-only directory, a directory in place
    of the file, a full disk. Nothing is left under the file's name."""


def did_you_mean(name: str, known) -> str | None:
    """A hint naming the closest known names, or None."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    if not close:
        return None
    return "did you mean " + " or ".join(repr(c) for c in close) + "?"


class SolverspaceWarning(UserWarning):
    """Something legal that is probably a mistake (a categorical value a parameter never takes), or
    something that worked differently than asked (an unwritable compile cache)."""


class ClosureTableError(SpaceEvaluationError):
    """A closure iterator cannot be tabulated (an input has too many values, or too many
    combinations). Backends that need the table refuse the space with this message."""
