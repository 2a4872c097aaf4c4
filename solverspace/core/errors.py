"""One error hierarchy with one message grammar: what is wrong, where, and how to fix it.

User-input errors also subclass the matching builtin (`ValueError`, `TypeError`) so that
callers who do not know our hierarchy still catch them sensibly.
"""
from __future__ import annotations

import unicodedata
from solverspace.core.records import Record


class Location(Record):
    """A place in a space file, for messages (a record: a frozen dataclass written out)."""

    __match_args__ = ("filename", "line")
    filename: str
    line: int | None

    def __init__(self, filename: str, line: int | None = None):
        object.__setattr__(self, "filename", filename)
        object.__setattr__(self, "line", line)

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}" if self.line else self.filename


class SolverspaceError(Exception):
    """Base class of every error this library raises on purpose: `message` (what), `where`
    (the space file's line, when known), `hint` (how to fix it). Errors of user input also
    subclass `ValueError` or `TypeError`.

    >>> from solverspace import Space
    >>> try:
    ...     Space.from_source("x = range(1, 4)").count(backend="fast")
    ... except SolverspaceError as error:
    ...     print(type(error).__name__, "|", error.message, "|", error.hint.split(":")[0])
    BackendUnavailableError | unknown backend 'fast' | available backends
    """

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
    `check` (checked once, in `solverspace.core.options`, for the CLI and the API alike)."""


class ArgumentTypeError(OptionError, TypeError):
    """An API argument of the wrong type (`count(threads="2")`, `space[1.5]`): names the argument,
    what was given and what is expected. Also an `OptionError` (a ValueError), as the same
    argument out of range is, so callers catching either see it."""


class OutputError(SolverspaceError, OSError):
    """An output file cannot be written: a missing or read-only directory, a directory in place
    of the file, a full disk. Nothing is left under the file's name."""


def python_name(name: str) -> str:
    """`name` as Python reads it in source: identifiers are NFKC-normalised when parsed (PEP 3131,
    `ﬁ` is `fi`), so every name given as a string (a T1 `Name`, a `check` or `--set` argument) is
    normalised the same way before it is looked up, or it would not mean what it means in an
    expression.

    >>> python_name("ﬁ"), python_name("x²")
    ('fi', 'x2')
    """
    return unicodedata.normalize("NFKC", name)


def check_text(value: str, owner: str, *, error: type | None = None, where: Location | None = None) -> str:
    """A categorical string as a value of the language: any text but NUL (U+0000). A NUL cannot
    travel: C strings (the compiled enumerator's tables) end at it, NumPy's `<U` columns drop it
    at the end, a command line (`tune`) cannot carry it; refused wherever a value is read (space
    files, T1 files, closure iterators) rather than written differently by each backend.

    >>> check_text("a,b", "parameter 'k'")
    'a,b'
    """
    if "\0" in value:
        raise (error or SpaceDefinitionError)(
            f"{owner}: value {value!r} contains a NUL character (U+0000), which no output keeps",
            where=where, hint="categorical values are text without NUL: remove the character or replace it")
    return value


def did_you_mean(name: str, known) -> str | None:
    """A hint naming the closest known names, or None. A name that is a known one once
    normalised (`python_name`) is said to be exactly that, never offered as a look-alike."""
    known = list(known)
    same = python_name(name)
    if same != name and same in known:
        return (f"{name!r} is {same!r} as Python reads names (Unicode NFKC normalisation, "
                f"{_spelled(name)}); write {same!r}")
    import difflib   # here: only a misspelled name needs it
    close = difflib.get_close_matches(same, [k for k in known if python_name(k) != same], n=3, cutoff=0.6)
    if not close:
        return None
    return "did you mean " + " or ".join(repr(c) for c in close) + "?"


def _spelled(name: str) -> str:
    """The characters of `name` that normalisation changes, with their code points."""
    changed = [ch for ch in dict.fromkeys(name) if python_name(ch) != ch]
    return ", ".join(f"{ch!r} U+{ord(ch):04X} reads as {python_name(ch)!r}" for ch in changed)


class SolverspaceWarning(UserWarning):
    """Something legal that is probably a mistake (a categorical value a parameter never takes), or
    something that worked differently than asked (an unwritable compile cache)."""


class SolverspaceNote(SolverspaceWarning):
    """How something legal was read, said once (floats of a performance model read as exact
    decimals): not a mistake, but worth knowing."""


class ClosureTableError(SpaceEvaluationError):
    """A closure iterator cannot be tabulated (an input has too many values, or too many
    combinations). Backends that need the table refuse the space with this message."""
