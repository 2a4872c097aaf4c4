"""Output files: checked before the work, written under a temporary name, renamed when complete.

Every file the library writes goes through `atomic_output`: the data goes to a hidden
`.NAME.PID.partial` file in the same directory, created like `open(path, "w")` creates a file
(mode 0666 less the umask, not `tempfile`'s 0600), and is renamed to NAME only when complete.
A failure while writing (a full disk: ENOSPC, or the file size limit: EFBIG) removes the
temporary file, leaves NAME as it was, and raises `OutputError` saying what happened.
`check_output_path` refuses, before minutes of enumeration, a path that cannot be written.

A symbolic link is written through, as `open` would (the temporary file goes next to the file
it points to, and the rename replaces that file, not the link). The path `-` is standard output
(`./-` is the same path: a file named `-` is given with another directory, `/tmp/-`). Standard
output and an existing pipe, device or socket (a named pipe, `/dev/stdout`) cannot be renamed
onto: their output is held in an unnamed temporary file until it is complete, then copied there,
so that an interrupted run, or one that `auto` restarts on the compiled backend, writes nothing
rather than a partial or doubled listing (the null device is written in place: nothing to double).
`check_not_input` refuses an output that is the input file under any name; `check_distinct`, an
output that is an input or another output of the same run (`same_file`: the same file under any
name, existing or not).
"""
from __future__ import annotations

import errno
import io
import itertools
import os
import shutil
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from solverspace.core.errors import OutputError

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


STDOUT = "-"


def is_stdout(path) -> bool:
    """Whether an output path is `-`, standard output.

    >>> is_stdout("-"), is_stdout("out.csv"), is_stdout("/tmp/-")
    (True, False, False)
    """
    return isinstance(path, (str, os.PathLike)) and os.fspath(path) in (STDOUT, f".{os.sep}{STDOUT}")


def is_standard_output(path) -> bool:
    """Whether writing `path` writes this process's standard output: `-`, or `/dev/stdout` and
    other names of the same file (where a command's own messages must not go)."""
    if is_stdout(path):
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError, TypeError):   # no such file; a stdout without a descriptor
        return False


def same_file(a, b) -> bool:
    """Whether two paths name one file: the same file (device and inode: a relative or absolute
    path, a symbolic or hard link) when both exist, else the same resolved path (`./x` and `x`, a
    dangling link and where it points). `-` is standard output: the same only as `-`.

    >>> same_file("out.json", "./out.json"), same_file("-", "./-"), same_file("-", "out.json")
    (True, True, False)
    """
    if is_stdout(a) or is_stdout(b):
        return is_stdout(a) and is_stdout(b)
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError, TypeError):   # one of them is no file (yet)
        pass
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError, TypeError):
        return False


def check_distinct(inputs: list, outputs: list) -> None:
    """Refuse (`OutputError`, before anything is written) an output that names an input or
    another output of the same run under any name (`same_file`). `inputs` and `outputs` are
    (option, path, what) triples, e.g. ("--db", "run.sqlite", "the tune database"), an option
    not starting with `-` being a positional's name ("space file"); a path of None is skipped,
    and so is the null device (any number of outputs may discard)."""
    outputs = [o for o in outputs if o[1] is not None]
    for index, (option, path, _) in enumerate(outputs):
        for other, other_path, what in [*outputs[:index], *(i for i in inputs if i[1] is not None)]:
            if not same_file(path, other_path) or (not is_stdout(path) and _discards(Path(path))):
                continue
            shown = f"{option} {os.fspath(path)!r}"
            if not other.startswith("-"):       # a positional: the space file
                raise OutputError(f"{shown} is the {other} {os.fspath(other_path)!r}: writing it would replace {what}",
                                  hint="write the output to another file")
            raise OutputError(f"{shown} and {other} {os.fspath(other_path)!r} are the same file: writing {option} "
                              f"would replace {what}", hint=f"give {option} another file name")


def check_not_input(path, source, option: str = "-o") -> None:
    """Refuse to write the input file (a space or T1 file) under any of its names: a relative
    or absolute path, a symbolic or hard link; writing it would replace what the run reads."""
    if is_stdout(path) or source is None or not os.path.exists(source):
        return
    check_distinct([("space file", source, "the space")], [(option, path, None)])


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
    if is_stdout(path):
        return Path(STDOUT)
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
    refusal = None if is_stdout(path) else _refusal(path, option)
    if refusal is not None:
        raise refusal
    if is_stdout(path) or _special(path):
        with _streamed(path, mode, option, **open_args) as handle:
            yield handle
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


def _discards(path: Path) -> bool:
    """Whether `path` is the null device."""
    try:
        mode, device = os.stat(path), os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(mode.st_mode) and mode.st_rdev == device.st_rdev


@contextmanager
def _streamed(path: Path, mode: str, option: str, **open_args):
    """Standard output, a pipe or a device, written when the output is complete (the module
    docstring says why); the null device in place."""
    if not is_stdout(path) and _discards(path):
        with open(path, mode, **open_args) as handle:
            yield handle
        return
    try:
        spool = tempfile.TemporaryFile(mode="w+b")   # unnamed: nothing is left behind, even by kill -9
    except OSError as exc:
        raise _held(path, exc, option) from None
    handle = spool if "b" in mode else io.TextIOWrapper(spool, **open_args)
    with handle:
        try:
            yield handle
            handle.flush()
        except (OutputError, BrokenPipeError):
            raise
        except OSError as exc:
            raise _held(path, exc, option) from exc
        spool.seek(0)
        try:
            _deliver(spool, path)
        except (OutputError, BrokenPipeError):  # `-o - | head`: the CLI's quiet exit
            raise
        except OSError as exc:
            raise _error(path, exc, option) from exc


def _held(path: Path, exc: OSError, option: str) -> OutputError:
    """The temporary file that holds output for standard output, a pipe or a device failed."""
    shown = "standard output" if is_stdout(path) else repr(str(path))
    return OutputError(f"{option} {shown}: holding the output in the temporary directory {tempfile.gettempdir()!r} "
                       f"failed: {exc.strerror or exc}; nothing was written".lstrip(),
                       hint="free space there or set TMPDIR to a directory with room, or write to a file")


def _deliver(spool, path: Path) -> None:
    """Copy the complete output to standard output or to the pipe or device `path`."""
    if not is_stdout(path):
        with open(path, "wb") as target:
            shutil.copyfileobj(spool, target, 1 << 20)
        return
    sys.stdout.flush()
    target = getattr(sys.stdout, "buffer", None)
    if target is not None:
        shutil.copyfileobj(spool, target, 1 << 20)
        target.flush()
        return
    decoder = io.TextIOWrapper(spool, encoding="utf-8", errors="replace", newline="")  # a text-only stdout
    shutil.copyfileobj(decoder, sys.stdout, 1 << 20)
    decoder.detach()
    sys.stdout.flush()
