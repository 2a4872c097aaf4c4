"""How `tune` measures a configuration: a Python callable, or a command run without a shell.

A command template is split into words the way a POSIX shell would split it (quotes and
backslashes), *before* any value is put in: each `{NAME}` field becomes part of exactly one
argument, whatever its value holds (`a; touch PWNED`, `$(...)`, quotes, a newline), and no
shell ever reads a value. What only a shell would do is refused, with the fix: shell syntax in
the template (`|`, `&&`, `;`, `>`, `$VAR`, backquotes, globs), a field inside quotes (the user's
own quoting around a value: ambiguous), a field with a conversion (`{x!r}`), a field naming the
program. A user who wants a shell writes `sh -c '...'` (or bash, dash, zsh, ksh): inside that
script each field becomes a reference to an environment variable holding the value
(`"${SOLVERSPACE_x}"`), so the shell expands the value and never parses it as code.

Which program finally reads an argument cannot be known (`timeout 5 sh -c {x}`, `env sh -c ...`,
`python3 -c print({x})`), so whether a value may be pasted into a word is decided by the value:
only a plain token (`PLAIN`: ASCII letters, digits and `_ . + - , : = / @ %`) is ever pasted. A
template that would paste anything else is refused when it is made, before anything runs, naming
the parameter and the value; the fix is the environment: every run has every parameter and
derived value in `SOLVERSPACE_<name>` (a field with a format spec inside a script: a variable of
its own, `SOLVERSPACE_<name>_<k>`), which a script reads as `"$SOLVERSPACE_<name>"`. Values that
cannot be listed when the template is made (a huge categorical domain, a format spec on a huge
integer range) are checked again before each run: one that is not plain stops `tune` before its
command starts.

The command runs in its own session (a timeout kills its whole process group), dies with `tune`
(Linux: `PR_SET_PDEATHSIG`; a hang-up of `tune` kills its process group), and only the tails of
its output are kept (`TAIL` bytes): the time is the last number in the tail of stdout.

The identity of a callable (what makes stored measurements reusable) is its code and the values
it closes over: the bytecode, constants and names of the function and of every code object
nested in it, its defaults, its closure's values, the plain values and same-module functions it
reads as globals. A value with no stable text (an object shown by its address) makes the run
non-reusable: its measurements are stored, never reused.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import math
import os
import re
import selectors
import signal
import subprocess
import sys
import threading
import time
import types
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from string import Formatter
from typing import Callable

from solverspace.core.errors import OptionError, did_you_mean
from solverspace.core.orders import format_value

TAIL = 1 << 16          # bytes of stdout (and of stderr) kept from a measurement's output
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "busybox"})
ENV_PREFIX = "SOLVERSPACE_"
CANNOT_RUN = {126: "found but cannot be executed", 127: "not found"}
_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b", re.IGNORECASE)
PLAIN = re.compile(r"[A-Za-z0-9_.+\-,:=/@%]*")
PLAIN_TEXT = "ASCII letters, digits and _ . + - , : = / @ %"
_SHELL_HINT = ("the command runs without a shell; for shell syntax write the shell yourself: "
               "--measure \"sh -c './bench {x} | tail -1'\" (fields become environment variables there)")


class DidNotRun(Exception):
    """A configuration's measurement failed; `cannot_run`: 126/127 when the program itself cannot
    be run (the same for every configuration: `tune` stops early). `kind`: the failure without
    the configuration's command line (the exit status and the last line on stderr, an
    exception's text), by which `tune` tells that its first measurements all failed the same way
    (`analysis.tune_failures`); None for a failure that says nothing of the others (a timeout,
    a time out of range, a failure a Kernel Tuner cache records)."""

    def __init__(self, status: str, message: str, cannot_run: int | None = None, kind: str | None = None):
        super().__init__(message)
        self.status, self.message, self.cannot_run, self.kind = status, message, cannot_run, kind


def time_of(value, text: str) -> float:
    """A measured time: a finite, non-negative number of seconds (anything else is invalid
    output, never the best)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise DidNotRun("invalid output", f"not a number: {text[:80]}")
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError):
        raise DidNotRun("invalid output", f"not a time in seconds: {text[:80]}") from None
    if not math.isfinite(number):
        raise DidNotRun("invalid output", f"not a finite time: {text[:80]}")
    if number < 0:
        raise DidNotRun("invalid output", f"a negative time: {text[:80]} (a time is not negative)")
    return number


# ---------------------------------------------------------------------------------- a callable
class Function:
    """A Python callable: configuration dict -> seconds; an exception is a failed configuration."""

    def __init__(self, function: Callable, model):
        self.function = function
        self.names = model.parameter_names
        module = getattr(function, "__module__", None) or ""
        self.describe = f"python:{module}.{getattr(function, '__qualname__', type(function).__name__)}"
        self.identity, self.unstable = callable_identity(function)

    def once(self, env: dict) -> float:
        try:
            value = self.function({n: env[n] for n in self.names})
        except Exception as exc:   # the measured code's failure is a result, not the search's
            raise DidNotRun("failed", f"{type(exc).__name__}: {exc}", kind=f"{type(exc).__name__}: {exc}") from None
        return time_of(value, repr(value))


class _Unstable(Exception):
    """A value with no stable text (its repr would change from one process to the next)."""


def callable_identity(function) -> tuple[str, str | None]:
    """(digest, None) from the callable's code and the values it closes over; (a fresh random
    digest, what could not be represented) when some value has no stable text. A `tune_identity`
    string on the callable replaces all that: its author vouches that it names the measurement."""
    given = getattr(function, "tune_identity", None)
    if given is not None:
        if not isinstance(given, str) or not given:
            raise OptionError(f"tune_identity={given!r} of the measurement callable: expected a non-empty string",
                              hint="name what the callable measures, e.g. tune_identity = 'matmul.c v3, -O3'")
        return hashlib.sha256(f"given:{given}".encode("utf-8", "surrogatepass")).hexdigest()[:20], None
    try:
        text = _stable(function, set(), getattr(function, "__module__", None))
    except _Unstable as exc:
        return uuid.uuid4().hex, str(exc)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20], None


_PLAIN = (type(None), bool, int, float, complex, str, bytes, Fraction, Decimal)


def _stable(value, seen: set, module: str | None) -> str:
    """A text for `value` that is the same in every process where it means the same."""
    if isinstance(value, _PLAIN):
        return f"{type(value).__name__}:{_long_repr(value)}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}[" + ",".join(_stable(v, seen, module) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        return f"{type(value).__name__}{{" + ",".join(sorted(_stable(v, seen, module) for v in value)) + "}"
    if isinstance(value, dict):
        items = sorted(f"{_stable(k, seen, module)}={_stable(v, seen, module)}" for k, v in value.items())
        return "dict{" + ",".join(items) + "}"
    if isinstance(value, types.FunctionType):
        return _function(value, seen, module)
    if isinstance(value, types.MethodType):
        return f"method({_stable(value.__func__, seen, module)},{_stable(value.__self__, seen, module)})"
    if isinstance(value, functools.partial):
        return (f"partial({_stable(value.func, seen, module)},{_stable(value.args, seen, module)},"
                f"{_stable(value.keywords, seen, module)})")
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, (type, types.BuiltinFunctionType)):
        return f"{type(value).__name__}:{getattr(value, '__module__', '')}.{value.__qualname__}"
    if isinstance(value, types.CodeType):
        return _code(value, seen, module)
    call = getattr(type(value), "__call__", None)
    if isinstance(call, types.FunctionType) and hasattr(value, "__dict__"):   # a callable object
        return f"object:{_stable(type(value), seen, module)}({_function(call, seen, module)},{_stable(vars(value), seen, module)})"
    raise _Unstable(f"{type(value).__name__} value {_short(value)}")


def _long_repr(value) -> str:
    try:
        return repr(value)
    except ValueError:      # an int past Python's 4,300-digit text limit
        return f"int:{value.to_bytes((value.bit_length() + 8) // 8, 'little', signed=True).hex()}"


def _short(value) -> str:
    try:
        text = repr(value)
    except Exception:       # a broken __repr__ is its own answer
        text = object.__repr__(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _function(function: types.FunctionType, seen: set, module: str | None) -> str:
    """A function's code, defaults, closure values, and the plain values and same-module
    functions it reads as globals (other globals by name: modules, classes, library code)."""
    if id(function) in seen:
        return f"recursive:{function.__qualname__}"
    seen = seen | {id(function)}
    code = function.__code__
    cells = [_cell(c, seen, module) for c in (function.__closure__ or ())]
    parts = [_code(code, seen, module), "defaults", _stable(function.__defaults__, seen, module),
             _stable(function.__kwdefaults__, seen, module), "closure", ",".join(cells), "globals"]
    namespace = function.__globals__
    for name in sorted(_global_names(code)):
        if name not in namespace:
            continue
        value = namespace[name]
        if isinstance(value, types.FunctionType) and value.__module__ != module:
            parts.append(f"{name}=function:{value.__module__}.{value.__qualname__}")
            continue
        try:
            parts.append(f"{name}={_stable(value, seen, module)}")
        except _Unstable:       # a global object: by name (documented)
            parts.append(f"{name}=<{type(value).__name__}>")
    return "function(" + ";".join(parts) + ")"


def _cell(cell, seen: set, module: str | None) -> str:
    try:
        contents = cell.cell_contents
    except ValueError:          # a cell not yet filled
        return "<empty>"
    try:
        return _stable(contents, seen, module)
    except _Unstable as exc:
        raise _Unstable(f"its closure holds a {exc}") from None


def _code(code: types.CodeType, seen: set, module: str | None) -> str:
    consts = ",".join(_code(c, seen, module) if isinstance(c, types.CodeType) else _stable(c, seen, module)
                      for c in code.co_consts)
    return (f"code({code.co_name};{code.co_argcount};{code.co_kwonlyargcount};{code.co_flags};"
            f"{code.co_code.hex()};[{consts}];{code.co_names};{code.co_varnames};{code.co_freevars};"
            f"{code.co_cellvars})")


def _global_names(code: types.CodeType) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


# ---------------------------------------------------------------------------------- a command
@dataclass(frozen=True)
class _Field:
    name: str
    spec: str
    quoted: str | None          # the template's quote around it: None, "'" or '"'


class _Words:
    """The template split into words as a POSIX shell splits them: each word a list of literal
    strings and fields. Shell syntax no shell will see is refused."""

    def __init__(self, template: str):
        self.template = template
        self.words: list[list] = []
        self.current: list | None = None
        self.quote: str | None = None
        self.escaped = False

    def split(self, parsed) -> list[list]:
        for literal, name, spec, conversion in parsed:
            for char in literal:
                self._char(char)
            if name is not None:
                self._field(name, spec or "", conversion)
        if self.quote or self.escaped:
            what = f"an unclosed {self.quote}" if self.quote else "a backslash at the end"
            raise OptionError(f"--measure {self.template!r}: {what}", hint="close the quote (or escape it)")
        self._end()
        return self.words

    def _append(self, item) -> None:
        if self.current is None:
            self.current = []
        if isinstance(item, str) and self.current and isinstance(self.current[-1], str):
            self.current[-1] += item
        else:
            self.current.append(item)

    def _end(self) -> None:
        if self.current is not None:
            self.words.append(self.current)
            self.current = None

    def _refuse(self, what: str) -> None:
        raise OptionError(f"--measure {self.template!r}: {what}", hint=_SHELL_HINT)

    def _char(self, char: str) -> None:
        if self.escaped:
            self.escaped = False
            if self.quote == '"' and char not in '$`"\\\n':
                self._append("\\")
            if char != "\n":
                self._append(char)
            return
        if self.quote == "'":
            if char == "'":
                self.quote = None
            else:
                self._append(char)
            return
        if char == "\\":
            self.escaped = True
            return
        if self.quote == '"':
            if char == '"':
                self.quote = None
            elif char in "$`":
                self._refuse(f"`{char}` inside double quotes is shell syntax (an expansion)")
            else:
                self._append(char)
            return
        if char in "'\"":
            self.quote = char
            self._append("")        # `''` is an (empty) word
        elif char in " \t":
            self._end()
        elif char in "|&;<>()$`\n":
            self._refuse(f"{char!r} is shell syntax")
        elif char in "*?[" or (char in "~#" and self.current is None):
            self._refuse(f"{char!r} is shell syntax (a glob, `~` or a comment)")
        else:
            self._append(char)

    def _field(self, name: str, spec: str, conversion: str | None) -> None:
        if self.escaped:
            raise OptionError(f"--measure {self.template!r}: a backslash before {{{name}}}",
                              hint="remove the backslash: a field is always one argument")
        if conversion not in (None, "s"):
            raise OptionError(f"--measure {self.template!r}: the field {{{name}!{conversion}}} has a conversion",
                              hint=f"write {{{name}}}: the value is passed as one argument, no quoting needed "
                                   "(no shell runs; for a shell write sh -c '...' yourself)")
        self._append(_Field(name, spec, self.quote))


class Command:
    """A command template: `{NAME}` fields are parameter (or derived value) names; run without a
    shell (see the module's documentation)."""

    def __init__(self, template: str, model, timeout: float | None):
        self.template, self.timeout = template, timeout
        self.describe = template
        if not isinstance(template, str) or not template.strip():
            raise OptionError("--measure: the command is empty", hint='e.g. --measure "./bench {dim_m} {dim_n}"')
        try:
            parsed = list(Formatter().parse(template))
        except ValueError as exc:
            raise OptionError(f"--measure {template!r}: {exc}",
                              hint="fields are {NAME} with a parameter's name; write {{ and }} for braces") from None
        known = [*model.parameter_names, *model.derived_value]
        for _, name, _, _ in parsed:
            if name is not None and name not in known:
                raise OptionError(f"--measure {template!r}: unknown field {{{name}}}",
                                  hint=did_you_mean(name, known)
                                  or f"fields are parameters or derived values: {', '.join(known)}")
        self.words = _Words(template).split(parsed)
        self.script = _script_index(self.words)
        self._check_fields()
        self.fields = sorted({i.name for w in self.words for i in w if isinstance(i, _Field)})
        self.names, self.derived = tuple(known), frozenset(model.derived_value)
        self.variables = self._variables()
        self.unchecked = self._check_values(model)

    def _check_fields(self) -> None:
        if any(isinstance(i, _Field) for i in self.words[0]):
            raise OptionError(f"--measure {self.template!r}: a field in the program's name",
                              hint="name the program in the template; a value would choose which program runs")
        for index, word in enumerate(self.words):
            for item in word:
                if isinstance(item, _Field) and item.quoted and index != self.script:
                    raise OptionError(
                        f"--measure {self.template!r}: the field {{{item.name}}} is inside quotes",
                        hint="remove the quotes: the command runs without a shell and each field is one argument "
                             "whatever its value holds; for a shell write sh -c '... {x} ...' yourself (fields "
                             "become environment variables there)")

    def _pasted(self):
        """The fields whose text goes into a command word (all but those of a shell script)."""
        for index, word in enumerate(self.words):
            if index != self.script:
                yield from (item for item in word if isinstance(item, _Field))

    def _variables(self) -> dict:
        """The environment variable of each (name, format spec): `SOLVERSPACE_<name>` for the value
        as it is (every parameter and derived value, in every run), `SOLVERSPACE_<name>_<k>` for a
        field of the shell script with a format spec. Two that would share a variable are refused."""
        chosen = {(name, ""): variable(name) for name in self.names}
        if self.script is not None:
            for item in self.words[self.script]:
                if isinstance(item, _Field) and (item.name, item.spec) not in chosen:
                    k = sum(1 for name, spec in chosen if name == item.name and spec)
                    chosen[(item.name, item.spec)] = f"{variable(item.name)}_{k + 1}"
        owner: dict = {}
        for (name, spec), var in chosen.items():
            if var in owner:
                other = owner[var]
                shown = [f"{{{n}:{f}}}" if f else repr(n) for n, f in (other, (name, spec))]
                raise OptionError(f"--measure {self.template!r}: {shown[0]} and {shown[1]} would both be the "
                                  f"environment variable {var}",
                                  hint="rename one of them in the space (or drop the format spec in the script)")
            owner[var] = (name, spec)
        return chosen

    def _check_values(self, model) -> list:
        """Refuse a template that would paste a value that is not a plain token into a command word
        (every value each pasted field can take, formatted as the field says); the fields whose
        values cannot be listed are returned, to be checked before each run."""
        unchecked, seen = [], set()
        for item in self._pasted():
            if (item.name, item.spec) in seen:
                continue
            seen.add((item.name, item.spec))
            kind = model.kinds.of(item.name)
            if kind == "int" and not item.spec:
                continue            # integers, exact fractions, booleans: plain text
            values = model.closures.of(item.name)
            if values is None and kind == "order":
                self._refuse(item, "an order (its items joined by `>`)")    # too many to list; `>` is in them
            if values is None:
                unchecked.append(item)
                continue
            for value in values:
                self._plain(item, _format(item, value))
        return unchecked

    def _plain(self, item: _Field, text: str) -> None:
        """Raise `OptionError` unless `text`, the field's text for one value, is a plain token."""
        if not PLAIN.fullmatch(text):
            self._refuse(item, f"the value {text!r}")

    def _refuse(self, item: _Field, value: str) -> None:
        var = self.variables[(item.name, "")]
        field = f"{{{item.name}:{item.spec}}}" if item.spec else f"{{{item.name}}}"
        raise OptionError(
            f"--measure {self.template!r}: {field} would paste {value} of {self._kind(item.name)} "
            f"{item.name!r} into a command word, and it is not a plain token ({PLAIN_TEXT}): whatever program "
            "reads that word (a shell behind timeout or env, python -c, ...) could run it as code",
            hint=f"read the value from the environment: every run has it in {var}, e.g. --measure "
                 f"\"timeout 60 sh -c './bench \\\"\\${var}\\\"'\" (or start the template with the shell, "
                 f"sh -c './bench {field}', where the field becomes that variable)")

    def _kind(self, name: str) -> str:
        return "derived value" if name in self.derived else "parameter"

    # ------------------------------------------------------------------------------ one run
    def arguments(self, env: dict) -> tuple[list[str], dict]:
        """The argv and the environment variables of one configuration: a field's text goes into
        its word (a plain token), or, in a shell script, into an environment variable the script
        references; every parameter and derived value is in `SOLVERSPACE_<name>`."""
        variables = {self.variables[(name, "")]: _format(None, env[name]) for name in self.names if name in env}
        argv = []
        for index, word in enumerate(self.words):
            parts = []
            for item in word:
                if isinstance(item, str):
                    parts.append(item)
                elif index == self.script:
                    var = self.variables[(item.name, item.spec)]
                    variables[var] = _text(item, env)
                    parts.append(_Reference(var))
                else:
                    text = _text(item, env)
                    if item in self.unchecked:
                        self._plain(item, text)
                    parts.append(text)
            argv.append(_script_text(parts) if index == self.script else "".join(parts))
        return argv, variables

    def once(self, env: dict) -> float:
        argv, variables = self.arguments(env)
        shown = " ".join(_shown(a) for a in argv)
        for text in (*argv, *variables.values()):
            if "\0" in text:
                raise DidNotRun("failed", f"a value holds a NUL byte, which no command argument can: {shown}")
        code, out, err = run(argv, variables, self.timeout, shown)
        if code != 0:
            last = (err.decode("utf-8", "replace").strip().splitlines() or [""])[-1][-200:]
            why = f" (the program was {CANNOT_RUN[code]})" if code in CANNOT_RUN and self.script is not None else ""
            raise DidNotRun("failed", f"exit status {code}{why}: {shown}" + (f": {last}" if last else ""),
                            cannot_run=code if code in CANNOT_RUN else None,
                            kind=f"exit status {code}{why}" + (f": {last}" if last else ""))
        numbers = _NUMBER.findall(out)
        if not numbers:
            tail = out.decode("utf-8", "replace").strip()[-80:]
            raise DidNotRun("invalid output", f"no number on stdout ({tail!r}): {shown}",
                            kind=f"no number on stdout ({tail!r})")
        text = numbers[-1].decode("ascii")
        return time_of(float(text), text)


class _Reference(str):
    """A field inside a shell script: the name of the environment variable replacing it."""


def variable(name: str) -> str:
    """The environment variable holding a field's value in a shell script: SOLVERSPACE_<name>
    (a non-ASCII name by its code points, which a shell variable name cannot hold)."""
    if name.isascii():
        return ENV_PREFIX + name
    return ENV_PREFIX + "_".join(f"{ord(c):x}" if not c.isascii() else c for c in name)


_WORD_BREAK = frozenset(" \t\n;&|()<>")    # after one of these (or at the start) a `#` starts a comment


def _script_text(parts: list) -> str:
    """The script with each field as a reference to its variable, quoted for where it stands in
    the script: outside quotes "${V}", inside double quotes ${V}, inside single quotes '"${V}"'.
    A comment (`#` starting a word, outside quotes, to the end of the line) holds no quote."""
    out, quote, escaped, comment, previous = [], None, False, False, None
    for part in parts:
        if isinstance(part, _Reference):
            name = "${" + part + "}"
            out.append({None: f'"{name}"', '"': name, "'": f"'\"{name}\"'"}[quote])
            escaped, previous = False, "$"
            continue
        for char in part:
            out.append(char)
            if comment:
                comment = char != "\n"
            elif escaped:
                escaped, char = False, "a"      # an escaped character is part of a word
            elif char == "\\" and quote != "'":
                escaped = True
            elif char in "'\"" and quote in (None, char):
                quote = None if quote == char else char
            elif char == "#" and quote is None and (previous is None or previous in _WORD_BREAK):
                comment = True
            previous = char
    return "".join(out)


def _script_index(words: list[list]) -> int | None:
    """Which word is the script of `sh -c SCRIPT` (None: not a shell, or a shell reading a file)."""
    first = words[0][0] if len(words[0]) == 1 and isinstance(words[0][0], str) else ""
    if Path(first).name not in SHELLS:
        return None
    dash_c, skip = False, False
    for index, word in enumerate(words[1:], 1):
        text = word[0] if len(word) == 1 and isinstance(word[0], str) else None
        if skip:
            skip = False
        elif text in ("-o", "+o"):
            skip = True
        elif text == "--":
            continue
        elif text is not None and len(text) > 1 and text[0] in "-+":
            dash_c = dash_c or (text[0] == "-" and "c" in text[1:])
        else:
            return index if dash_c else None
    return None


def _text(field: _Field, env: dict) -> str:
    return _format(field, env[field.name])


def _format(field: _Field | None, value) -> str:
    """A value's text as a field writes it (None: as it is, an order joined by `>`)."""
    value = format_value(value) if type(value) is tuple else value
    if field is None:
        return format(value, "")
    try:
        return format(value, field.spec)
    except (ValueError, TypeError) as exc:
        raise OptionError(f"--measure: the field {{{field.name}:{field.spec}}} cannot format {value!r}: {exc}",
                          hint=f"fix the format spec, or write {{{field.name}}}") from None


def _shown(argument: str) -> str:
    """An argument as a message shows it (quoted when it needs it; NUL shown as \\0)."""
    import shlex
    return shlex.quote(argument.replace("\0", "\\0"))


# ---------------------------------------------------------------------------------- the process
def run(argv: list[str], variables: dict, timeout: float | None, shown: str) -> tuple[int, bytes, bytes]:
    """Run a measurement: (exit status, stdout tail, stderr tail); 126/127 when the program
    cannot be run (as a shell says); a timeout raises `DidNotRun`."""
    environment = {**os.environ, **variables} if variables else None
    deadline = None if timeout is None else time.monotonic() + timeout
    with _hangup_kills() as holder:
        try:
            process = subprocess.Popen(argv, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_die_with_us())
        except FileNotFoundError:
            return 127, b"", f"{argv[0]}: no such file (relative paths start at {os.getcwd()})".encode()
        except PermissionError:
            what = "is a directory" if os.path.isdir(argv[0]) else "is not executable"
            return 126, b"", f"{argv[0]}: {what}".encode()
        except (OSError, ValueError) as exc:    # an argument the system refuses (too long, not encodable)
            raise DidNotRun("failed", f"cannot start: {exc}: {shown}", kind=f"cannot start: {exc}") from None
        holder.append(process)
        try:
            out, err = _tails(process, deadline)
            process.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill(process)
            raise DidNotRun("timeout", f"no answer within {timeout} s: {shown}") from None
        except BaseException:   # Ctrl-C, SIGTERM: the command (in its own session) goes too
            kill(process)
            raise
    return process.returncode, out, err


def _tails(process, deadline) -> tuple[bytes, bytes]:
    """The last `TAIL` bytes of stdout and of stderr (a 300 MB output is never held whole); a
    tail that was cut starts at its first whitespace (no number cut in half)."""
    buffers = {process.stdout.fileno(): bytearray(), process.stderr.fileno(): bytearray()}
    cut = dict.fromkeys(buffers, False)
    with selectors.DefaultSelector() as selector:
        for pipe in (process.stdout, process.stderr):
            selector.register(pipe.fileno(), selectors.EVENT_READ)
        while selector.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(process.args, 0)
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                buffer = buffers[key.fd]
                buffer += chunk
                if len(buffer) > 2 * TAIL:
                    del buffer[:-TAIL]
                    cut[key.fd] = True
    process.stdout.close()
    process.stderr.close()
    out, err = (bytes(_trim(buffers[f], cut[f])) for f in buffers)
    return out, err


def _trim(buffer: bytearray, cut: bool) -> bytearray:
    if not cut:
        return buffer
    tail = buffer[-TAIL:]
    space = re.search(rb"\s", tail)
    return tail[space.start():] if space else bytearray()


def kill(process) -> None:
    """Kill the command's whole process group (it runs in its own session) and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pipe in (process.stdout, process.stderr):
        if pipe is not None and not pipe.closed:
            pipe.close()
    process.wait()


_LIBC = None


def _die_with_us():
    """A `preexec_fn` that makes the command die when `tune` dies, even by `kill -9` (Linux's
    PR_SET_PDEATHSIG; elsewhere None). Its own children are killed with its process group on a
    timeout or a hang-up, not on `kill -9` of `tune`."""
    global _LIBC
    if not sys.platform.startswith("linux"):
        return None
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _LIBC = False
    if not _LIBC:
        return None
    return functools.partial(_pdeathsig, _LIBC.prctl, os.getpid())


def _pdeathsig(prctl, parent: int) -> None:
    prctl(1, signal.SIGKILL)        # PR_SET_PDEATHSIG
    if os.getppid() != parent:      # `tune` died before the call
        os._exit(1)


@contextmanager
def _hangup_kills():
    """While a command runs: a hang-up of `tune` kills the command's process group, then ends
    `tune` as a hang-up does. Left alone where SIGHUP is ignored (nohup) or handled by the caller,
    and outside the main thread."""
    holder: list = []
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGHUP) is not signal.SIG_DFL:
        yield holder
        return

    def hangup(signum, frame):
        for process in holder:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGHUP)

    signal.signal(signal.SIGHUP, hangup)
    try:
        yield holder
    finally:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


__all__ = ["Function", "Command", "DidNotRun", "TAIL", "callable_identity", "kill", "run", "time_of", "variable"]
