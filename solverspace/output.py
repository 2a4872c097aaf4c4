"""Output files: checked before the work, written under a temporary name, renamed when complete.

Every file the library writes goes through `atomic_output`: the data goes to a hidden
`.NAME.PID.partial` file in the same directory, created like `open(path, "w")` creates a file
(mode 0666 less the umask, not `tempfile`'s 0600), and is renamed to NAME only when complete.
A failure while writing (a full disk: ENOSPC, or the file size limit: EFBIG) removes the
temporary file, leaves NAME as it was, and raises `OutputError` saying what happened.
`check_output_path` refuses, before minutes of enumeration, a path that cannot be written.

A symbolic link is written through, as `open` would (the temporary file goes next to the file
it points to, and the rename replaces that file, not the link); an existing device, pipe or
socket (`/dev/null`, a named pipe) is written in place: renaming onto it would replace it.
"""
from __future__ import annotations

import errno
import io
import itertools
import os
import stat
from contextlib import contextmanager
from pathlib import Path

from .errors import OutputError

_SERIAL = itertools.count()
_NO_ROOM = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _temporary(path: Path) -> tuple[int, Path]:
    """Create the hidden temporary file next to `path` (O_EXCL: never another run's file)."""
    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{next(_SERIAL)}.partial")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), tmp
        except FileExistsError:
            continue


def _special(path: Path) -> bool:
    """An existing file that is not a regular file or directory: a device, a pipe, a socket."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _target(path: Path) -> Path:
    """The path a rename must replace: the file a symbolic link points to, or the path itself."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _refusal(path: Path, option: str) -> OutputError | None:
    """Why `path` cannot be an output file, judged without writing, or None."""
    shown = f"{option} {str(path)!r}" if option else repr(str(path))
    if not path.name or path.is_dir():
        return OutputError(f"{shown} is a directory, not a file name",
                           hint=f"name a file in it, e.g. {os.path.join(str(path) or '.', 'out.csv')}")
    parent = path.parent
    if not parent.exists():
        return OutputError(f"{shown}: directory {str(parent)!r} does not exist",
                           hint=f"create it first (mkdir -p {parent}) or write somewhere else")
    if not parent.is_dir():
        return OutputError(f"{shown}: {str(parent)!r} is not a directory", hint="write somewhere else")
    return None


def check_output_path(path, option: str = "") -> Path:
    """The output path, once it is known that a file can be created in its directory (a
    temporary file is created and removed there). `option` ("-o", "--plot") prefixes messages."""
    path = Path(path)
    refusal = _refusal(path, option)
    if refusal is not None:
        raise refusal
    if _special(path):
        if not os.access(path, os.W_OK):
            raise OutputError(f"{option} {str(path)!r}: not writable".lstrip())
        return path
    try:
        fd, tmp = _temporary(_target(path))
    except OSError as exc:
        raise _error(path, exc, option, writing=False) from None
    os.close(fd)
    tmp.unlink(missing_ok=True)
    return path


def _error(path: Path, exc: OSError, option: str = "", writing: bool = True) -> OutputError:
    shown = f"{option} {str(path)!r}" if option else repr(str(path))
    reason = exc.strerror or str(exc)
    if exc.errno in _NO_ROOM or (writing and exc.errno is None):  # None: a short write (NumPy, Arrow)
        return OutputError(f"writing {shown} failed: {reason}; nothing was written under that name",
                           hint="free some disk space (or raise the file size limit, ulimit -f) and run again")
    if isinstance(exc, IsADirectoryError):
        return _refusal(path, option) or OutputError(f"{shown} is a directory, not a file name")
    what = "writing" if writing else "cannot create"
    return OutputError(f"{what} {shown}: {reason} (in directory {str(path.parent)!r})",
                       hint="check the directory's permissions and that its file system is writable, "
                            "or write somewhere else")


@contextmanager
def atomic_output(path, mode: str = "wb", *, option: str = "", **open_args):
    """A file object for `path`'s temporary file; renamed to `path` when the block ends
    normally, removed otherwise. OSErrors become `OutputError`."""
    path = Path(path)
    refusal = _refusal(path, option)
    if refusal is not None:
        raise refusal
    if _special(path):
        try:
            with open(path, mode, **open_args) as handle:
                yield handle
        except (OutputError, BrokenPipeError):  # `-o /dev/stdout | head`: the CLI's quiet exit
            raise
        except OSError as exc:
            raise _error(path, exc, option) from exc
        return
    shown, path = path, _target(path)
    try:
        fd, tmp = _temporary(path)
    except OSError as exc:
        raise _error(shown, exc, option, writing=False) from None
    try:
        with os.fdopen(fd, mode, **open_args) as handle:
            yield handle
        os.replace(tmp, path)
    except OutputError:
        tmp.unlink(missing_ok=True)
        raise
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _error(shown, exc, option) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def npy_header(dtype, rows: int) -> bytes:
    """The `.npy` header for `rows` records of `dtype`: format 1.0 (NumPy's default), or 3.0
    (UTF-8, readable by NumPy >= 1.17) when a column name is not Latin-1, as `np.save` does.

    >>> import numpy as np
    >>> len(npy_header(np.dtype([("x", "<i2")]), 5)) % 64
    0
    """
    import numpy as np
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": (rows,)}
    buffer = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(buffer, header)
        return buffer.getvalue()
    except UnicodeEncodeError:
        pass
    text = "{" + "".join(f"{key!r}: {header[key]!r}, " for key in sorted(header)) + "}"
    body = text.encode("utf-8")
    prefix = 6 + 2 + 4  # magic, version, header length
    padding = 64 - (prefix + len(body) + 1) % 64
    body += b" " * (padding % 64) + b"\n"
    return b"\x93NUMPY\x03\x00" + len(body).to_bytes(4, "little") + body
