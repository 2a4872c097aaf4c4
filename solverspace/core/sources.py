"""Read a space file's or a T1 file's text from disk (UTF-8, refusals naming file, line and byte).

The lowest layer of loading: both `loader` (space files) and `t1.read` (T1 files) read through
here, so neither has to import the other.
"""
from __future__ import annotations

from pathlib import Path

from solverspace.core.errors import Location, SpaceDefinitionError


def read_text(path: Path, what: str) -> str:
    """A space or T1 file's text: UTF-8 (a leading byte order mark is dropped); anything else
    is refused naming the file, the line and the byte."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpaceDefinitionError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpaceDefinitionError(
            f"the {what} is not UTF-8 text: byte {data[exc.start]:#04x} at line {line}, column {column} "
            f"(byte offset {exc.start})", where=Location(str(path), line),
            hint="save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE)") from None
