"""Where compiled modules and the facts about them are kept, how much is there, and clearing it.

The cache directory holds what the C backend compiles (`_ss_<hash>.so` with its cffi module and
sidecars, `translators/c/build.py`) and what it remembers beside it (plans, searches, shapes,
lanes, Kernel Tuner work units, the builds left behind an answer). Its place:

1. `$SOLVERSPACE_CACHE`, when set (used as it is);
2. else `$XDG_CACHE_HOME/solverspace`, when `XDG_CACHE_HOME` is set to an absolute path (the XDG
   Base Directory specification: a relative one is ignored);
3. else `~/.cache/solverspace`.

Everything there is derived (content-hashed) and rebuilt on demand, so clearing it is always
safe; it only costs the next runs their compiles. `clear_cache` removes only the entries this
package writes (a directory shared with other files keeps them), and leaves alone what a live
process is using: a build directory whose process runs, a lock another process holds, a file
being written (`.partial`, younger than a minute).
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

from solverspace.core.records import MutableRecord

ENV = "SOLVERSPACE_CACHE"
XDG = "XDG_CACHE_HOME"

#: What each kind of entry is called (for `cache_info`): the first pattern that matches an entry's
#: name gives its kind. Anything that matches none is not ours and is never touched.
KINDS: tuple[tuple[str, re.Pattern], ...] = (
    ("modules", re.compile(r"_ss_[0-9a-f]{24}(\.so|\.py|\.so\.sha256|\.py\.sha256)")),
    ("locks and builds", re.compile(r"_ss_[0-9a-f]{24}\..+")),             # locks, work directories
    ("plans", re.compile(r"plan_[0-9a-f]+\.json")),
    ("searches", re.compile(r"search_[0-9a-f]+\.json")),
    ("shapes", re.compile(r"shape_[0-9a-f]+\.json")),
    ("lanes", re.compile(r"lanes_[0-9a-f]+\.json")),
    ("kernel tuner units", re.compile(r"kt_units_[0-9a-f]+\.json")),
    ("other", re.compile(r"version_[0-9a-f]+|simplified_[0-9a-f]+\.pickle|pending_[0-9a-f]+\.job"
                         r"|background\.(log|lock)|__pycache__")),
    ("partial writes", re.compile(r"\.(_ss_|plan_|search_|shape_|lanes_|kt_units_|version_|simplified_|pending_)"
                                  r".*\.partial")),
)
PARTIAL_AGE = 60.0   # seconds: a `.partial` file younger than this may still be being written


def cache_location() -> Path:
    """The cache directory this process uses (it may not exist yet): `$SOLVERSPACE_CACHE`, else
    `$XDG_CACHE_HOME/solverspace`, else `~/.cache/solverspace`.

    >>> cache_location().is_absolute()
    True
    """
    configured = os.environ.get(ENV)
    if configured:
        return Path(configured)
    xdg = os.environ.get(XDG)
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "solverspace"
    return Path.home() / ".cache" / "solverspace"


def kind_of(name: str) -> str | None:
    """The kind of a cache entry by its name (None: not an entry this package writes)."""
    return next((kind for kind, pattern in KINDS if pattern.fullmatch(name)), None)


def _size(path: Path) -> int:
    """Bytes of a file, or of every file under a directory (what cannot be read counts 0)."""
    try:
        if path.is_symlink() or not path.is_dir():
            return path.lstat().st_size
        return sum(_size(child) for child in path.iterdir())
    except OSError:
        return 0


class CacheInfo(MutableRecord):
    """What the cache directory holds: its `path`, whether it `exists`, and per kind of entry
    (`KINDS`) how many entries and bytes (`kinds`: kind -> (entries, bytes)); `entries` and
    `bytes` are the totals."""

    __match_args__ = ("path", "exists", "kinds")

    def __init__(self, path: Path, exists: bool, kinds: dict[str, tuple[int, int]] | None = None):
        self.path, self.exists, self.kinds = path, exists, {} if kinds is None else kinds

    @property
    def entries(self) -> int:
        return sum(count for count, _ in self.kinds.values())

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.kinds.values())

    def describe(self) -> str:
        """One line per kind, after the directory and the totals (what `solverspace cache` prints)."""
        if not self.exists:
            return f"{self.path}: no cache yet (nothing compiled)"
        lines = [f"{self.path}: {self.entries:,} entries, {_megabytes(self.bytes)}"]
        lines += [f"  {kind}: {count:,} ({_megabytes(size)})" for kind, (count, size) in self.kinds.items() if count]
        return "\n".join(lines)


class Cleared(MutableRecord):
    """What `clear_cache` did: the directory, entries and bytes removed, and entries kept because
    a live process is using them."""

    __match_args__ = ("path", "removed", "bytes", "kept")

    def __init__(self, path: Path, removed: int = 0, bytes: int = 0, kept: int = 0):
        self.path, self.removed, self.bytes, self.kept = path, removed, bytes, kept

    def describe(self) -> str:
        kept = f"; kept {self.kept:,} in use by a running process" if self.kept else ""
        return f"{self.path}: removed {self.removed:,} entries, {_megabytes(self.bytes)}{kept}"


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _entries(path: Path):
    try:
        with os.scandir(path) as scan:
            return [(entry.name, Path(entry.path)) for entry in scan]
    except OSError:
        return []


def cache_info(path: str | Path | None = None) -> CacheInfo:
    """How many entries of each kind the cache directory (`path`, default `cache_location()`)
    holds, and their size; entries that are not this package's are not counted.

    >>> import tempfile
    >>> info = cache_info(tempfile.mkdtemp())
    >>> info.entries, info.bytes
    (0, 0)
    """
    folder = Path(path) if path is not None else cache_location()
    info = CacheInfo(folder, folder.is_dir(), {kind: (0, 0) for kind, _ in KINDS})
    for name, entry in _entries(folder):
        kind = kind_of(name)
        if kind is not None:
            count, size = info.kinds[kind]
            info.kinds[kind] = (count + 1, size + _size(entry))
    return info


_BUILD_PID = re.compile(r"_ss_[0-9a-f]{24}\.pid(\d+)\..+")


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists (one of another user's: it cannot be told apart)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _lock_held(path: Path) -> bool:
    """Whether another process holds the lock file `path` (an exclusive `flock`)."""
    try:
        import fcntl
    except ImportError:   # no flock here: treat every lock as held
        return True
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)   # closing releases a lock taken here
    return False


def _in_use(name: str, path: Path, now: float) -> bool:
    """Whether a live process is using the entry: a build directory of a running process, a held
    lock, a `.partial` file being written."""
    match = _BUILD_PID.fullmatch(name)
    if match is not None and path.is_dir():
        return process_alive(int(match.group(1)))
    if name.endswith(".lock"):
        return _lock_held(path)
    if name.endswith(".partial"):
        try:
            return now - path.lstat().st_mtime < PARTIAL_AGE
        except OSError:
            return False
    return False


def clear_cache(path: str | Path | None = None) -> Cleared:
    """Remove every entry this package wrote in the cache directory (`path`, default
    `cache_location()`) that no running process is using; the next runs compile again. Files
    that are not this package's stay.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "plan_0123abcd.json").write_text("{}"), (folder / "notes.txt").write_text("mine")
    >>> clear_cache(folder).removed, sorted(p.name for p in folder.iterdir())
    (1, ['notes.txt'])
    """
    import shutil
    folder = Path(path) if path is not None else cache_location()
    result, now = Cleared(folder), time.time()
    for name, entry in _entries(folder):
        if kind_of(name) is None:
            continue
        if _in_use(name, entry, now):
            result.kept += 1
            continue
        size = _size(entry)
        try:
            if name == "__pycache__":   # Python's, for the cffi modules: only their compiled files
                for child in entry.glob("_ss_*"):
                    child.unlink()
                entry.rmdir()           # (kept where something else is in it)
            elif entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except FileNotFoundError:   # removed meanwhile (another clear, a build's own cleanup)
            continue
        except OSError:
            result.kept += 1
            continue
        result.removed += 1
        result.bytes += size
    return result
