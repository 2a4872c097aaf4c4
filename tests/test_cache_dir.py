"""The module cache directory: `$SOLVERSPACE_CACHE`, else `$XDG_CACHE_HOME/solverspace`, else
`~/.cache/solverspace`; `cache_info` reports what it holds and `clear_cache` removes this
package's entries only, and none that a running process is using."""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

import solverspace
from solverspace import Space, cache_info, cache_location, clear_cache
from solverspace.core.cache import kind_of


@pytest.fixture
def env(monkeypatch, tmp_path):
    """No cache variable set, and a home of the test's own."""
    monkeypatch.delenv("SOLVERSPACE_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return monkeypatch


def test_the_location_is_solverspace_cache_then_xdg_then_home(env, tmp_path):
    assert cache_location() == tmp_path / "home" / ".cache" / "solverspace"
    env.setenv("XDG_CACHE_HOME", "relative/cache")       # not absolute: ignored, as the XDG spec says
    assert cache_location() == tmp_path / "home" / ".cache" / "solverspace"
    env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_location() == tmp_path / "xdg" / "solverspace"
    env.setenv("SOLVERSPACE_CACHE", str(tmp_path / "mine"))
    assert cache_location() == tmp_path / "mine"


@pytest.mark.needs_cc
def test_compiled_modules_go_to_xdg_cache_home_and_clearing_them_costs_a_compile(env, tmp_path):
    from solverspace.translators.c.backend import CEnumerator
    from solverspace.translators.c.build import cache_dir
    env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "solverspace"
    assert cache_dir() == folder and folder.is_dir()
    assert cache_info().entries == 0
    (folder / "notes.txt").write_text("not ours")
    CEnumerator.clear_cache()
    try:
        space = Space.from_source("x = range(1, 40)\ny = range(x, 40)\nrequire(x * y % 7 == 3)\n")
        count = space.count("c")
        info = cache_info()
        assert info.path == folder and info.exists
        assert info.kinds["modules"][0] >= 2 and info.bytes > 0     # the library and its cffi module
        assert str(folder) in info.describe() and "modules:" in info.describe()
        cleared = clear_cache()
        assert cleared.removed == info.entries and cleared.bytes == info.bytes and cleared.kept == 0
        assert [p.name for p in folder.iterdir()] == ["notes.txt"]
        assert cache_info().entries == 0
        CEnumerator.clear_cache()
        assert Space.from_source("x = range(1, 40)\ny = range(x, 40)\nrequire(x * y % 7 == 3)\n").count("c") == count
        assert cache_info().kinds["modules"][0] >= 2                   # compiled again
    finally:
        CEnumerator.clear_cache()


def test_entries_a_running_process_uses_are_kept(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    held = folder / f"_ss_{'a' * 24}.lock"
    free = folder / f"_ss_{'b' * 24}.lock"
    held.write_text(""), free.write_text("")
    building = folder / f"_ss_{'c' * 24}.pid{os.getpid()}.abc123"       # this process's build
    building.mkdir()
    (building / "x.c").write_text("int x;")
    dead = folder / f"_ss_{'d' * 24}.pid999999999.abc123"               # no such process
    dead.mkdir()
    young = folder / f".plan_{'e' * 8}.json.xyz.partial"
    old = folder / f".plan_{'f' * 8}.json.xyz.partial"
    young.write_text("{"), old.write_text("{")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    fd = os.open(held, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        cleared = clear_cache(folder)
    finally:
        os.close(fd)
    assert sorted(p.name for p in folder.iterdir()) == sorted([held.name, building.name, young.name])
    assert cleared.kept == 3 and cleared.removed == 3
    assert "kept 3 in use" in cleared.describe()


def test_only_this_packages_entries_are_counted_or_removed(tmp_path):
    names = {f"_ss_{'0' * 24}.so": "modules", f"_ss_{'0' * 24}.py.sha256": "modules", "plan_12ab.json": "plans",
             "search_12ab.json": "searches", "shape_12ab.json": "shapes", "lanes_12ab.json": "lanes",
             "kt_units_12ab.json": "kernel tuner units", "pending_12ab.job": "other", "background.log": "other",
             "simplified_12ab.pickle": "other", "version_12ab": "other"}
    foreign = ["notes.txt", "plan.json", "_ss_short.so", "background.txt", "data.partial"]
    for name in [*names, *foreign]:
        (tmp_path / name).write_text("12345")
    assert {name: kind_of(name) for name in names} == names
    assert [kind_of(name) for name in foreign] == [None] * len(foreign)
    info = cache_info(tmp_path)
    assert info.entries == len(names) and info.bytes == 5 * len(names)
    assert clear_cache(tmp_path).removed == len(names)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(foreign)


def test_a_cache_that_does_not_exist_yet(tmp_path):
    info = cache_info(tmp_path / "none")
    assert not info.exists and info.entries == 0 and "no cache yet" in info.describe()
    assert clear_cache(tmp_path / "none").removed == 0


def test_the_functions_are_the_packages():
    assert solverspace.cache_info is cache_info and solverspace.clear_cache is clear_cache
