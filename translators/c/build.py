"""Compile generated C into a cached shared library, called through cffi (out-of-line ABI mode).

The module name is a hash of the generated source, the compiler and the flags, so a change in
any of them builds a new module. Cache directory: `$SOLVERSPACE_CACHE`, else
`$XDG_CACHE_HOME/solverspace`, else `~/.cache/solverspace` (`solverspace.core.cache`, which
also reports its size and clears it). Next to each module, `NAME.so.sha256` records the size and SHA-256 of the
module as built; it is written (atomically) only after the module is in place, and an entry is
imported only when both match: a truncated or altered module (which the dynamic loader would map
and then crash on with SIGBUS) is rebuilt, never loaded. An entry that fails to import is rebuilt
too. Builds of one entry take turns (a lock file, `NAME.lock`), so a module and its sidecar
always come from the same build. A missing or failing compiler raises `CompilerError` with the
compiler's output and the path of the generated source.

A build works in a directory of its own, `NAME.pidPID.XXXXXXXX` in the cache, which it removes
when it ends in any way (Ctrl-C, SIGTERM turned into an exception by the CLI) except a failed
compile, whose generated source the error names and is kept for reading. What a process killed
outright (SIGKILL, SIGTERM to a program with no handler) leaves behind is removed by the next
build in that cache: a build directory older than `STALE_AGE` whose process is gone (and a
half-written sidecar of that age).

The compiler is called directly on the generated C (one `cc -shared` call, no setuptools:
that saved ~0.45 s of each cold build), with the flags CPython builds extensions with that
matter for the generated code's meaning (`-fwrapv`, `-DNDEBUG`) and without `-g` (debug
information took a quarter of the compile time and nothing reads it). The library is plain C:
no `Python.h`, no cffi wrapper in the compiled text (they were 0.07-0.16 CPU-s of every compile,
a third of a sweep's one-pass module at -O2). cffi's declarations of its functions (`cdef`) are
written once, at build time, as a small Python module beside the library (`NAME.py`: cffi's
`emit_python_code`, type tables only, so loading needs no C parser), which opens the library
with `ffi.dlopen`; that module has a sidecar of its own (`NAME.py.sha256`), written before the
library's, and an entry is used only when both match. Calls through the ABI cost a few hundred
nanoseconds more than through a compiled wrapper; every call here runs a whole walk or query.

Long waits are said, never silent, but only to whoever listens: a compile and the
other waits of the C translators (`waiting`: generating a program, planning a search) are
announced to the callables in `WAITS` and to the logger `solverspace.waits` at INFO level (the
command line shows that logger's lines on stderr, unless `--quiet`). A Python program that calls
`Space` stays quiet unless it asks: `logging.basicConfig(level=logging.INFO)`, or
`WAITS.append(print)`. A wait whose
estimate (`compile_estimate`, from the source's size, calibrated on a 2-core machine) is at
least `ANNOUNCE_AFTER` seconds is said when it starts, with the estimate; a shorter one only if
it is still running after `ANNOUNCE_AFTER` seconds.
"""
from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import importlib.util
import json
import logging
import os
import re
import sys
import sysconfig
import threading
import time
import warnings
from pathlib import Path

from solverspace.core.errors import SolverspaceError, SolverspaceWarning
from solverspace.core.cache import cache_location, process_alive as _process_alive

# shutil and tempfile (with random, bz2, lzma: milliseconds a process) are imported where a file
# is written or a build runs: a warm count, sweep or best writes nothing here.

FLAGS = ["-O2", "-fPIC", "-fwrapv", "-DNDEBUG", "-fopenmp", "-std=gnu99", "-fno-strict-aliasing", "-Wno-unused-variable",
         "-Wno-unused-but-set-variable", "-Wno-unused-function", "-Wno-unused-label"]
QUICK_FLAGS = ["-O0", *FLAGS[1:]]   # a quick build: the same flags but no optimization (see `flags`)


LANES_LEVEL = "-O1"   # a sweep's one-pass module (`lanes`): compiled once per sweep shape, run once per sweep


def flags(quick: bool | str = False) -> list[str]:
    """The compiler flags of a build: `FLAGS` (-O2), or for a quick build `QUICK_FLAGS` (-O0),
    which compiles a T1 space's module in about a third of the time (0.08-0.16 against 0.24-0.62
    CPU-s) and runs it about 1-3x slower: `auto` takes it for a small space compiled cold and
    leaves the -O2 module to the background builder. `quick` may also name the optimization
    level itself (`LANES_LEVEL`: a sweep's one-pass walk at -O1 compiles in 0.15-0.23 CPU-s
    against 0.25-0.30 at -O2 and runs about 8% slower). The flags are part of the module's name,
    so two builds of one source are two cache entries, each with its own sidecar."""
    if isinstance(quick, str):
        return [quick, *FLAGS[1:]]
    return QUICK_FLAGS if quick else FLAGS


ANNOUNCE_AFTER = 1.0   # seconds: a wait expected (or found) to take this long is said
WAITS: list = []       # callables told of a long wait (one line of text, no newline); see the module docstring
_WAITS_LOG = logging.getLogger("solverspace.waits")
_log = logging.getLogger(__name__)

# Seconds of CPU per compile and per byte of the generated source, at -O0 (True), -O2 (False)
# and -O1, measured on this project's 2-core machine under a load of 2 (T1 modules 30-91 kB:
# 0.08-0.16 s at -O0, 0.24-0.62 s at -O2; a GEMM sweep's one-pass module, 39 kB: 0.15-0.23 s at
# -O1). An estimate to say, never a limit.
COMPILE_COST = {True: (0.04, 1.4e-6), False: (0.05, 6e-6), LANES_LEVEL: (0.04, 3.5e-6)}


def compile_estimate(source: str, quick: bool | str = False) -> float:
    """Roughly how many seconds compiling this generated source takes (`COMPILE_COST`)."""
    fixed, per_byte = COMPILE_COST[quick if isinstance(quick, str) else bool(quick)]
    return fixed + per_byte * len(source)


def announce(message: str) -> None:
    """Tell the listeners (`WAITS`, and the `solverspace.waits` logger) of a long wait."""
    for listener in list(WAITS):
        listener(message)
    _WAITS_LOG.info(message)


def duration(seconds: float) -> str:
    """`about 0.4 s`, `about 12 s`, `about 3 min`: an estimate in words (tenths below 10 s, so
    that a build of a third of a second is not announced as one of a second)."""
    if seconds < 10:
        return f"about {max(0.1, round(seconds, 1)):g} s"
    if seconds < 90:
        return f"about {round(seconds)} s"
    return f"about {round(seconds / 60)} min"


def space_name(source: str) -> str:
    """A space file as a message names it: relative to the working directory when under it."""
    try:
        relative = os.path.relpath(source)
    except ValueError:   # another drive
        return source
    return source if relative.startswith("..") else relative


@contextlib.contextmanager
def waiting(what: str, seconds: float | None = None):
    """Say `what` is happening if it takes `ANNOUNCE_AFTER` seconds or more: at once with the
    estimate where `seconds` (an estimate) is that long, else only once that time has passed
    ("this may take a few seconds" where there is no estimate). Silent with nobody listening."""
    if not WAITS and not _WAITS_LOG.isEnabledFor(logging.INFO):
        yield
        return
    message = f"{what} ({duration(seconds) if seconds is not None else 'this may take a few seconds'})"
    if seconds is not None and seconds >= ANNOUNCE_AFTER:
        announce(message)
        yield
        return
    timer = threading.Timer(ANNOUNCE_AFTER, announce, (message,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


class CompilerError(SolverspaceError, RuntimeError):
    """The C compiler is missing or failed. `keep_workdir`: the build directory holds the
    generated source the message names, so it stays (a later build removes it once stale)."""

    def __init__(self, message: str, *, keep_workdir: bool = False, **kwargs):
        super().__init__(message, **kwargs)
        self.keep_workdir = keep_workdir


_FALLBACK: dict[str, Path] = {}  # unusable cache directory -> this process's temporary one


def cache_dir() -> Path:
    """`$SOLVERSPACE_CACHE`, else `$XDG_CACHE_HOME/solverspace`, else `~/.cache/solverspace`
    (`solverspace.core.cache.cache_location`), created if needed; when it cannot be created or
    written (a read-only place, a file in the way), a temporary directory for this process,
    removed at exit, with one warning naming the directory and the variable."""
    path = cache_location()
    if str(path) in _FALLBACK:
        return _FALLBACK[str(path)]
    try:
        path.mkdir(parents=True, exist_ok=True)
        if os.access(path, os.W_OK | os.X_OK):
            return path
        reason = "not writable"
    except OSError as exc:
        reason = "a file is in the way" if path.exists() else exc.strerror or str(exc)
    import shutil
    import tempfile
    fallback = Path(tempfile.mkdtemp(prefix="solverspace-cache-"))
    atexit.register(shutil.rmtree, fallback, ignore_errors=True)
    _FALLBACK[str(path)] = fallback
    warnings.warn(f"cannot use the compile cache {str(path)!r} ({reason}); compiling into {fallback}, "
                  f"removed at exit, so every run compiles again: set SOLVERSPACE_CACHE to a writable directory",
                  SolverspaceWarning, stacklevel=2)
    return fallback


SHARED = ["-shared", "-Wl,-Bsymbolic"] if sys.platform.startswith("linux") else ["-shared"]  # own symbols bound inside
LIBRARY_SUFFIX = ".so"


def compiler() -> str:
    return os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"


def compile_command(c_path: Path, target: Path, quick: bool | str = False) -> list[str]:
    """The one compiler call that turns the generated C into a shared library (no Python headers)."""
    import shlex   # shlex and subprocess only where a compile runs: a warm process loads the module
    return [*shlex.split(compiler()), *flags(quick), *SHARED, str(c_path), "-o", str(target)]


LINKAGE = "abi-1"   # how a library is called (bumped when that changes: the old entries are not read)


def module_name(source: str, cdef: str, quick: bool | str = False) -> str:
    """Cache key: the generated source, the compiler, the flags, the linkage and the Python version."""
    key = hashlib.sha256("\0".join([source, cdef, compiler(), " ".join(flags(quick) + SHARED), sys.version,
                                    LINKAGE]).encode()).hexdigest()[:24]
    return f"_ss_{key}"


def module_path(source: str, cdef: str, quick: bool | str = False) -> Path:
    """The compiled library of a generated source in the cache."""
    return cache_dir() / (module_name(source, cdef, quick) + LIBRARY_SUFFIX)


def declarations_path(library: Path) -> Path:
    """The Python module beside a library that declares its functions to cffi (`NAME.py`)."""
    return library.with_name(library.name[: -len(LIBRARY_SUFFIX)] + ".py")


def digest_path(path: Path) -> Path:
    """The sidecar beside a cached module that vouches for it (`SIZE SHA256`)."""
    return path.with_name(path.name + ".sha256")


def _fingerprint(path: Path) -> str:
    """`SIZE SHA256` of a file: what its sidecar must say for the entry to be trusted."""
    sha = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
            size += len(block)
    return f"{size} {sha.hexdigest()}"


def verified(path: Path) -> bool:
    """Whether a cached module is whole: its size and digest match its sidecar."""
    try:
        return digest_path(path).read_text().strip() == _fingerprint(path)
    except OSError:
        return False


def write_atomically(path: Path, text: str | bytes) -> None:
    """A small file (a sidecar, a cache entry, a build job) in place whole or not at all."""
    import tempfile
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_entry(kind: str, key: str, format: int):
    """The JSON cache entry remembered as `kind` for `key` beside the compiled modules, or None when
    it is another key's (its file is named by the key's first 40 digits) or of another format.
    Raises OSError or ValueError where it is absent or unreadable: the caller, which reads its
    fields too, treats that as a miss."""
    entry = json.loads(_entry_path(kind, key).read_text(encoding="utf-8"))
    return entry if isinstance(entry, dict) and entry.get("key") == key and entry.get("format") == format else None


def write_entry(kind: str, key: str, format: int, fields: dict) -> None:
    """Remember `fields` as the `kind` entry for `key` (atomically). A cache that cannot be written
    only makes the next run slower, so an OSError is let pass."""
    try:
        write_atomically(_entry_path(kind, key), json.dumps({"format": format, "key": key, **fields}))
    except OSError:
        pass


def _entry_path(kind: str, key: str) -> Path:
    return cache_dir() / f"{kind}_{key[:40]}.json"


def is_built(source: str, cdef: str, quick: bool | str = False) -> bool:
    """Whether the module for a generated source is compiled and whole in the cache (loading it
    compiles nothing); `quick`: its quick (-O0) build."""
    name = module_name(source, cdef, quick)
    path = cache_dir() / f"{name}{LIBRARY_SUFFIX}"
    return name in _LOADED or (path.exists() and verified(path) and verified(declarations_path(path)))


def build(source: str, cdef: str, quick: bool | str = False):
    """The compiled module (`.lib`, `.ffi`) for a generated source, from cache when possible;
    `quick`: compiled with `QUICK_FLAGS` (a cache entry of its own), or at the level it names (`flags`)."""
    name = module_name(source, cdef, quick)
    directory = cache_dir()
    module = _import(directory, name)
    if module is not None:
        _log.debug(f"compiled module {name} from the cache {directory}")
        return module
    with _build_lock(directory, name):  # one build per entry at a time: a module and its sidecar agree
        module = _import(directory, name)  # built by another process while we waited
        if module is not None:
            return module
        return _compile(directory, name, source, cdef, quick)


@contextlib.contextmanager
def _build_lock(directory: Path, name: str):
    with open(directory / f"{name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Library:
    """A loaded library: `lib` (its functions), `ffi` (cffi's types for them) and its cache `name`."""

    def __init__(self, name: str, ffi, lib):
        self.name, self.ffi, self.lib = name, ffi, lib


_LOADED: dict[str, Library] = {}   # name -> library, once per process (a library is mapped once)


def _import(directory: Path, name: str):
    path = directory / f"{name}{LIBRARY_SUFFIX}"
    declarations = declarations_path(path)
    if not path.exists() or not declarations.exists():   # in this cache directory (another may have loaded it)
        return None
    if name in _LOADED:
        return _LOADED[name]
    if not (verified(declarations) and verified(path)):  # truncated, altered, half-built: never run; rebuilt
        return None
    try:
        spec = importlib.util.spec_from_file_location(name, declarations)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        # RTLD_NODELETE: the library (and libgomp, which only it loads) stays mapped when the process
        # exits; unmapped at exit while OpenMP's idle threads still spin in libgomp, it crashed
        # (SIGSEGV after the answer was printed, the sooner the exit the likelier)
        library = Library(name, module.ffi, module.ffi.dlopen(str(path), module.ffi.RTLD_NOW | module.ffi.RTLD_NODELETE))
        library.lib.ss_row_size()  # a corrupt entry fails here
    except Exception:  # stale or corrupt: the rebuild replaces it
        return None
    _LOADED[name] = library
    return library


STALE_AGE = 3600.0   # seconds: a build directory this old whose process is gone is debris (a build takes seconds)
_BUILD_DIR = re.compile(r"_ss_[0-9a-f]{24}\.(?:pid(\d+)\.)?[a-z0-9_]+")  # NAME.pidPID.XXX (NAME.XXX: before pids)


def _stale(entry: os.DirEntry, now: float, age: float) -> bool:
    """A build directory or a half-written sidecar left by a build that was killed: older than
    `age` and, where the name records its process, that process gone."""
    try:
        if now - entry.stat(follow_symlinks=False).st_mtime < age:
            return False
        if entry.is_dir(follow_symlinks=False):
            match = _BUILD_DIR.fullmatch(entry.name)
            return match is not None and not (match.group(1) and _process_alive(int(match.group(1))))
    except OSError:   # removed meanwhile
        return False
    return entry.name.startswith("._ss_") and entry.name.endswith(".partial") and entry.is_file(follow_symlinks=False)


def remove_stale_builds(directory: Path, age: float = STALE_AGE) -> list[Path]:
    """Remove what killed builds left in a cache directory (see the module docstring); returns
    the paths removed. Called by every build, before it compiles."""
    now = time.time()
    try:
        with os.scandir(directory) as entries:
            stale = [Path(entry.path) for entry in entries if _stale(entry, now, age)]
    except OSError:
        return []
    import shutil
    for path in stale:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return stale


def _compile(directory: Path, name: str, source: str, cdef: str, quick: bool | str = False):
    import shutil
    import tempfile
    remove_stale_builds(directory)
    workdir = Path(tempfile.mkdtemp(prefix=f"{name}.pid{os.getpid()}.", dir=directory))
    try:
        return _compile_in(workdir, directory, name, source, cdef, quick)
    except CompilerError as exc:
        if not exc.keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    except BaseException:   # Ctrl-C, SIGTERM (the CLI raises it), anything unexpected: nothing left behind
        shutil.rmtree(workdir, ignore_errors=True)
        raise


def _compile_in(workdir: Path, directory: Path, name: str, source: str, cdef: str, quick: bool | str):
    """Compile `source` in `workdir` and move the module into `directory`."""
    import shlex
    import shutil
    import subprocess
    import cffi
    from cffi.recompiler import make_py_source
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.set_source(name, None)   # out-of-line ABI mode: the declarations as a Python module, the library plain C
    source_path = workdir / f"{name}.c"
    built = workdir / f"{name}{LIBRARY_SUFFIX}"
    declarations = workdir / f"{name}.py"
    command = compile_command(source_path, built, quick)
    try:
        source_path.write_text(source, encoding="utf-8")
        make_py_source(ffi, name, str(declarations), verbose=False)   # ffi.emit_python_code, silently
    except OSError as exc:   # a full disk, a file size limit: said, not a traceback
        raise CompilerError(f"cannot write the generated enumerator's source under {directory}: "
                            f"{exc.strerror or exc}",
                            hint="free space there, raise the file size limit, or set SOLVERSPACE_CACHE to "
                                 "another directory") from None
    hint = (f"generated source: {source_path}; command: {shlex.join(command)} "
            "(install gcc with OpenMP, set CC, or use --backend reference)")
    what = f"compiling {len(source) // 1000 or 1} kB of generated C at {flags(quick)[0]} into the cache {directory}"
    try:
        with waiting(what, compile_estimate(source, quick)):
            proc = subprocess.run(command, capture_output=True, text=True)
    except OSError as exc:  # no such compiler
        raise CompilerError(f"cannot run the C compiler {command[0]!r}: {exc.strerror or exc}", hint=hint,
                            keep_workdir=True) from None
    if proc.returncode:
        output = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-20:])
        raise CompilerError(f"compiling the generated enumerator failed (exit status {proc.returncode}):\n{output}",
                            hint=hint, keep_workdir=True)
    target = directory / f"{name}{LIBRARY_SUFFIX}"
    for made, place in ((declarations, declarations_path(target)), (built, target)):  # the library's sidecar last
        fingerprint = _fingerprint(made)
        os.replace(made, place)  # atomic: other processes see a whole file or none
        write_atomically(digest_path(place), fingerprint + "\n")  # after the file: a sidecar vouches for it
    shutil.rmtree(workdir, ignore_errors=True)
    module = _import(directory, name)
    if module is None:
        raise CompilerError(f"the compiled enumerator {target} cannot be loaded")
    return module
