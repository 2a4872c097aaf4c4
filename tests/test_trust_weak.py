"""Issue 23, the weak lines: a compile stopped by a signal leaves no build directory (and what a
killed build left is removed by the next one); `-o -` is standard output; `-o` onto the space
file is refused; API arguments of the wrong type are typed errors naming the argument; a Space
pickles as its source and settings."""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solverspace import Space
from solverspace.cli import main
from solverspace.errors import SolverspaceError

ROOT = Path(__file__).resolve().parent.parent
SMALL = "x = range(1, 7)\ny = range(x, 7)\nrequire(x + y < 8)\n"   # 12 configurations
SMALL_ROWS = [(1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (2, 2), (2, 3), (2, 4), (2, 5), (3, 3), (3, 4)]


def _env(cache: Path, **extra) -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "SOLVERSPACE_CACHE": str(cache), **extra}


def _space_file(tmp_path: Path, text: str = SMALL, name: str = "s.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ----------------------------------------------------------------------------------- build directories
def _slow_compiler(tmp_path: Path) -> tuple[Path, Path]:
    """A C compiler that says it started (a marker file), then takes a minute before compiling."""
    marker = tmp_path / "compiling"
    script = tmp_path / "slowcc"
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\nsleep 60\nexec gcc \"$@\"\n")
    script.chmod(0o755)
    return script, marker


def _build_dirs(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if p.is_dir()) if cache.exists() else []


@pytest.mark.needs_cc
def test_sigterm_during_a_compile_leaves_no_build_directory(tmp_path):
    cache = tmp_path / "cache"
    script, marker = _slow_compiler(tmp_path)
    space = _space_file(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "solverspace", "count", str(space), "--backend", "c"],
                            env=_env(cache, CC=str(script)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not marker.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()
    assert _build_dirs(cache), "the build works in a directory of its own in the cache"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert _build_dirs(cache) == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.needs_cc
def test_the_next_build_removes_what_a_killed_build_left(tmp_path, monkeypatch):
    """SIGKILL cannot be handled: a build directory stays. The next build removes those older than
    an hour whose process is gone, and only those."""
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(tmp_path / "cache"))
    cache = tmp_path / "cache"
    cache.mkdir()
    hour_ago = time.time() - 2 * 3600
    name = "_ss_" + "0123456789abcdef01234567"
    left = {
        "dead, old": (f"{name}.pid{_dead_pid()}.k3b9x_2q", hour_ago),
        "from before pids, old": (f"{name}.ez3gnr8h", hour_ago),
        "alive, old": (f"{name}.pid{os.getpid()}.abcdefgh", hour_ago),
        "dead, fresh": (f"{name}.pid{_dead_pid()}.zzzzzzzz", time.time()),
        "not a build": ("my_notes", hour_ago),
    }
    for folder, mtime in left.values():
        (cache / folder).mkdir()
        (cache / folder / f"{name}.c").write_text("/* generated */\n")
        os.utime(cache / folder, (mtime, mtime))
    partial = cache / f".{name}.so.sha256.abc.partial"
    partial.write_text("12 ")
    os.utime(partial, (hour_ago, hour_ago))
    space = Space.from_source(SMALL + "require(y != 6)\n")   # a source no earlier test compiled
    assert space.count("c") == 11
    kept = _build_dirs(cache)
    assert kept == sorted(left[k][0] for k in ("alive, old", "dead, fresh", "not a build"))
    assert not partial.exists()


@pytest.mark.needs_cc
def test_a_failed_compile_keeps_the_source_it_names(tmp_path, monkeypatch):
    from solverspace.translators.c_build import CompilerError
    cache = tmp_path / "cache"
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(cache))
    failing = tmp_path / "failcc"
    failing.write_text("#!/bin/sh\necho 'cc: out of coffee' >&2\nexit 3\n")
    failing.chmod(0o755)
    monkeypatch.setenv("CC", str(failing))
    with pytest.raises(CompilerError, match="out of coffee") as caught:
        Space.from_source(SMALL).count("c")
    source = caught.value.hint.split("generated source: ")[1].split(";")[0]
    assert Path(source).is_file() and Path(source).parent.parent == cache
