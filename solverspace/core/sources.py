"""Read the files a command is given: space files, T1 files, Kernel Tuner caches, shard manifests
and category tables, each with a size bound, refusing anything that is not a regular file.

Every data file is read here (`read_bytes`, `read_text`, `read_json`), so that none is read without a
bound: a path that is a FIFO (which blocks until someone writes), a device (`/dev/zero` never ends),
a directory or a socket is refused before a byte is read, naming what it is; a regular file larger
than its kind's limit (`MAX_BYTES`) is refused from its size, before it is read (and a file that
grows past the limit while it is read, at the limit). `SOLVERSPACE_MAX_READ_BYTES`, when set,
replaces every kind's limit (a larger cache, or a small limit in a test). `check_output_target`
refuses an output path that exists and is not a regular file (writing to a FIFO blocks until a
reader comes; writing to a device is not writing a file). JSON nested deeper than Python's parser
goes is refused by name (`read_json`), never a `RecursionError`.

The lowest layer of loading: both `loader` (space files) and `t1.read` (T1 files) read through
here, so neither has to import the other.
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from solverspace.core.errors import Location, OutputError, SolverspaceError, SpaceDefinitionError

__all__ = ["LIMIT_VARIABLE", "MAX_BYTES", "check_output_target", "check_regular", "read_bytes", "read_json",
           "read_limit", "read_text", "space_kind"]

LIMIT_VARIABLE = "SOLVERSPACE_MAX_READ_BYTES"
MiB = 1 << 20
MAX_BYTES = {            # the largest file of each kind that is read
    "space file": 16 * MiB,
    "T1 file": 256 * MiB,
    "Kernel Tuner cache": 1024 * MiB,
    "manifest": 64 * MiB,
    "category table": 64 * MiB,
}
_DEFAULT_LIMIT = 256 * MiB       # a kind not in the table
_KINDS = [(stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]


def space_kind(path) -> str:
    """What a space path holds: a T1 file (`.json`) or a space file (Python)."""
    return "T1 file" if Path(path).suffix.lower() == ".json" else "space file"


def read_limit(what: str) -> int:
    """The largest number of bytes read for a file of kind `what` (`SOLVERSPACE_MAX_READ_BYTES`
    replaces every kind's limit when set)."""
    text = os.environ.get(LIMIT_VARIABLE)
    if text is not None:
        try:
            value = int(text.strip().replace("_", ""))
        except ValueError:
            value = -1
        if value < 0:
            raise SolverspaceError(f"{LIMIT_VARIABLE}={text!r} is not a number of bytes",
                                   hint=f"set it to a whole number of bytes, e.g. {LIMIT_VARIABLE}=2000000000, "
                                        "or unset it")
        return value
    return MAX_BYTES.get(what, _DEFAULT_LIMIT)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(path, what: str, mode: int, error: type, hint: str | None) -> SolverspaceError:
    return error(f"{what} {str(path)!r} is {_kind(mode)}, not a regular file",
                 hint=hint or "give the path of a regular file (a pipe or a device may never end or never answer)")


def check_regular(path, what: str, *, error: type = SpaceDefinitionError, hint: str | None = None) -> None:
    """Refuse `path` unless it is a regular file (or a link to one), before anything opens it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise error(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}", hint=hint) from None
    if not stat.S_ISREG(mode):
        raise _not_regular(path, what, mode, error, hint)


def read_bytes(path, what: str, *, error: type = SpaceDefinitionError, limit: int | None = None,
               hint: str | None = None) -> bytes:
    """The bytes of the regular file `path` (a file of kind `what`: a key of `MAX_BYTES`), at most
    `limit` (default `read_limit(what)`); anything else is refused with `error` naming the file."""
    limit = read_limit(what) if limit is None else limit
    check_regular(path, what, error=error, hint=hint)     # a FIFO or a device is refused before it is opened
    chunks, total = [], 0
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_size <= limit:
                while total <= limit and (chunk := os.read(fd, min(1 << 24, limit + 1 - total))):
                    chunks.append(chunk)
                    total += len(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        raise error(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}", hint=hint) from None
    if not stat.S_ISREG(info.st_mode):        # replaced between the two looks
        raise _not_regular(path, what, info.st_mode, error, hint)
    if info.st_size > limit or total > limit:
        raise _too_large(path, what, f"{info.st_size:,} bytes" if info.st_size > limit else "still growing",
                         limit, error)
    return b"".join(chunks)


def _too_large(path, what: str, size: str, limit: int, error: type) -> SolverspaceError:
    return error(f"{what} {str(path)!r} is {size}, more than the {limit:,} bytes read for a {what}",
                 hint=f"set {LIMIT_VARIABLE} to a larger number of bytes if the file is meant to be this large")


def read_text(path: Path, what: str, *, error: type = SpaceDefinitionError, limit: int | None = None,
              hint: str | None = None) -> str:
    """A file's text (`read_bytes`, then UTF-8; a leading byte order mark is dropped); anything
    else is refused naming the file, the line and the byte."""
    data = read_bytes(path, what, error=error, limit=limit, hint=hint)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(
            f"the {what} is not UTF-8 text: byte {data[exc.start]:#04x} at line {line}, column {column} "
            f"(byte offset {exc.start})", where=Location(str(path), line),
            hint="save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE)") from None


def read_json(text: str, path, what: str, *, error: type = SpaceDefinitionError, hint: str | None = None,
              invalid: str = "is not valid JSON", **options):
    """`json.loads(text, **options)`; JSON that is not valid (the message says the file `invalid`),
    or nested deeper than Python's parser goes, is refused with `error` naming the file."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise error(f"{what} {str(path)!r} is JSON nested too deeply to read",
                    hint=hint or f"a {what} is a few levels deep; this one is not one") from None
    except ValueError as exc:            # JSONDecodeError, or a number past Python's digit limit
        raise error(f"{what} {str(path)!r} {invalid}: {exc}", hint=hint) from None


def check_output_target(path, option: str) -> None:
    """Refuse an output path that exists and is not a regular file (a FIFO blocks the writer until
    someone reads it; a device or a socket is not a file), before anything is written."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return                 # absent (or unreachable: the write says why)
    if not stat.S_ISREG(mode):
        raise OutputError(f"{option} {str(path)!r} is {_kind(mode)}, not a regular file",
                          hint="give the name of a regular file (new or existing)")
