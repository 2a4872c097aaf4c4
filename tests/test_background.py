"""Builds behind the answer (solverspace/registry/background.py): after `auto` answered with the
reference, the module is built in the background so that the next call runs compiled, with the
same answers; never for small walks, never when switched off, and a failure costs nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from solverspace import Space
from solverspace.registry import background
from solverspace.registry.auto import AutoBackend
from solverspace.registry.backends import get_backend

from tests.helpers import CORPUS, SMALL

pytestmark = pytest.mark.needs_cc

# about 62,000 candidate values: past AUTO_BUILD_WORK, within the reference's limit
MEDIUM = """
a = range(1, 250)
b = range(1, 250)
require((a * b) % 7 == 1)
"""


def _log(cache):
    return [json.loads(line) for line in (cache / background.LOG).read_text().splitlines()]


def test_a_reference_answer_leaves_a_build_and_the_next_call_runs_compiled(cache, spawned):
    space = Space.from_source(SMALL)
    auto = AutoBackend(build_behind=True, build_work=0)
    expected = space.count("reference")
    assert space.count(auto) == expected and auto.answered_by == "reference" and auto.scheduled == 1
    assert spawned == [cache] and len(background.pending(cache)) == 1
    assert not list(cache.glob("*.so"))                      # nothing compiled by the command itself
    assert background.run(cache) == 1
    assert background.pending(cache) == [] and _log(cache)[-1]["ok"]
    again = AutoBackend(build_behind=True, build_work=0)
    assert Space.from_source(SMALL).count(again) == expected
    assert again.answered_by == "c" and again.scheduled == 0


@pytest.mark.parametrize("path", sorted(p for p in CORPUS.glob("*.py") if "past-64-bits" not in p.name),
                         ids=lambda p: p.stem)
def test_corpus_rows_built_behind_agree_with_the_reference(cache, spawned, path):
    space = Space.load(path)
    first = AutoBackend(build_behind=True, build_work=0)
    rows = list(space.rows(first))
    assert rows == list(space.rows("reference"))
    if first.answered_by == "reference" and first.scheduled:
        background.run(cache)
        assert all(record["ok"] for record in _log(cache)), _log(cache)
    second = AutoBackend(build_behind=False)
    assert list(Space.load(path).rows(second)) == rows
    if first.scheduled:
        assert second.answered_by == "c"


def test_small_walks_and_opting_out_leave_nothing(cache, spawned, monkeypatch):
    space = Space.from_source(SMALL)
    default = get_backend("auto", "count", build_behind=True)    # the walk is far below AUTO_BUILD_WORK
    space.count(default)
    assert default.answered_by == "reference" and default.scheduled == 0
    monkeypatch.setenv(background.ENV, "0")
    off = AutoBackend(build_work=0)                                # follows the environment
    space.count(off)
    assert off.scheduled == 0 and spawned == [] and background.pending(cache) == []
    monkeypatch.setenv(background.ENV, "1")
    on = AutoBackend(build_work=0)
    space.count(on)
    assert on.scheduled == 1 and len(spawned) == 1


def test_a_running_builder_is_not_started_twice(cache, spawned):
    cache.mkdir(parents=True)
    held = background.try_lock(cache)
    try:
        assert background.schedule(Space.from_source(SMALL).plan, {})
        assert spawned == [] and len(background.pending(cache)) == 1
        assert background.run(cache) == 0                          # the lock is held: another builder's job
    finally:
        background.release_lock(held)
    assert background.run(cache) == 1 and background.pending(cache) == []


def test_failures_are_logged_and_never_reach_the_command(cache, spawned, monkeypatch):
    cache.mkdir(parents=True)
    (cache / "pending_broken.job").write_bytes(b"not a pickle")
    assert background.run(cache) == 0
    (record,) = _log(cache)
    assert not record["ok"] and "Error" in record["error"] and background.pending(cache) == []

    def no_cache():
        raise OSError("read-only")
    monkeypatch.setattr("solverspace.translators.c.build.cache_dir", no_cache)
    space = Space.from_source(SMALL)
    auto = AutoBackend(build_behind=True, build_work=0)
    assert space.count(auto) == space.count("reference") and auto.scheduled == 0


def test_the_command_line_leaves_a_detached_build(tmp_path):
    """The real thing: a `count` answered by the reference starts a builder and exits; the
    builder compiles the module; the next `count` is answered by C with the same count."""
    source = tmp_path / "medium.py"
    source.write_text(MEDIUM)
    cache = tmp_path / "cache"
    env = dict(os.environ, SOLVERSPACE_CACHE=str(cache), PYTHONPATH=os.pathsep.join(sys.path))
    env[background.ENV] = "always"    # MEDIUM's walk is too short for the build to pay (issue 28)
    command = [sys.executable, "-m", "solverspace", "count", str(source), "--json"]
    first = json.loads(subprocess.run(command, capture_output=True, text=True, env=env, check=True)
                       .stdout.splitlines()[-1])
    assert first["backend"] == "reference"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not ((cache / background.LOG).exists() and not background.pending(cache)):
        time.sleep(0.2)
    assert _log(cache)[-1]["ok"], _log(cache)
    second = json.loads(subprocess.run(command, capture_output=True, text=True, env=env, check=True)
                        .stdout.splitlines()[-1])
    assert second["backend"] == "c" and second["count"] == first["count"]
    env[background.ENV] = "0"
    other = tmp_path / "other.py"
    other.write_text(MEDIUM.replace("% 7", "% 11"))
    subprocess.run(command[:4] + [str(other)], capture_output=True, text=True, env=env, check=True)
    assert background.pending(cache) == [] and len(_log(cache)) == 1    # switched off: nothing left
