"""Issue 28: no silent waits, and a warm `best` like a warm `count`.

A compile (and generating a program, planning a search) is said in one line on stderr by the
command line, never on stdout and never with `--quiet`; a `Space` call stays quiet unless its
caller listens (`build.WAITS`, or the `solverspace.waits` logger). A compiled search's generated
program is cached with the module (`plan_cache.search_key`): a warm `best` generates nothing,
answers the same, and an entry is never used for another objective, direction or generator."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest

from solverspace import Space
from solverspace.cli import main
from solverspace.translators.c import best as c_best
from solverspace.translators.c import build as c_build
from solverspace.translators.c import plan_cache

from tests.helpers import SMALL, space_file

pytestmark = [pytest.mark.needs_cc, pytest.mark.usefixtures("cache")]

OBJECTIVE = "a * b - a"


@pytest.fixture
def say_every_wait(monkeypatch):
    """Every wait said at once (a small space compiles in well under the second that makes a wait long)."""
    monkeypatch.setattr(c_build, "ANNOUNCE_AFTER", 0.0)


def test_a_cold_compile_is_said_on_stderr_never_on_stdout(tmp_path, capsys, say_every_wait, cache):
    path = space_file(tmp_path, SMALL)
    assert main(["count", path, "--backend", "c"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("42 valid configurations") and len(out.splitlines()) == 1
    lines = [line for line in err.splitlines() if line.startswith("solverspace: compiling ")]
    assert len(lines) == 1, err
    assert "kB of generated C at -O2 into the cache" in lines[0] and str(cache) in lines[0]
    assert lines[0].endswith(" s)") and "(about " in lines[0]
    assert f"solverspace: analysing {path} and generating its C program" in err
    assert main(["count", path, "--backend", "c"]) == 0   # warm: nothing to say
    out, err = capsys.readouterr()
    assert out.startswith("42 valid configurations") and err == ""


def test_json_quiet_and_standard_output_stay_clean(tmp_path, capsys, say_every_wait):
    path = space_file(tmp_path, SMALL)
    assert main(["count", path, "--backend", "c", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["count"] == 42 and "solverspace: compiling " in err
    assert main(["best", path, "--minimize", OBJECTIVE, "--top", "3", "--json", "-q"]) == 0   # quiet: nothing said
    out, err = capsys.readouterr()
    assert [json.loads(line)["objective"] for line in out.splitlines()] == [0, 1, 2]
    assert "solverspace: " not in err
    assert main(["best", path, "--maximize", OBJECTIVE, "--top", "2", "--json"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line)["objective"] for line in out.splitlines()] == [120, 91]
    assert f"solverspace: planning the search of {path} (" in err and "solverspace: compiling " in err
    assert c_build.WAITS == []   # the command's listener is gone when it returns


def test_a_long_wait_is_said_at_once_and_a_short_one_only_when_it_lasts(monkeypatch):
    heard = []
    monkeypatch.setattr(c_build, "WAITS", [heard.append])
    with c_build.waiting("compiling a lot", 95.0):
        assert heard == ["compiling a lot (about 2 min)"]
    with c_build.waiting("a quick thing", 0.01):
        pass
    assert heard == ["compiling a lot (about 2 min)"]   # over before ANNOUNCE_AFTER: not said
    monkeypatch.setattr(c_build, "ANNOUNCE_AFTER", 0.05)
    import time
    with c_build.waiting("generating"):
        time.sleep(0.5)
    assert heard[1:] == ["generating (this may take a few seconds)"]
    assert c_build.compile_estimate("x" * 800_000) > c_build.compile_estimate("x" * 800_000, quick=True) > 1


def test_the_api_is_quiet_unless_its_caller_listens(tmp_path, capsys, caplog, say_every_wait):
    path = space_file(tmp_path, SMALL)
    assert Space.load(path).count("c") == 42
    out, err = capsys.readouterr()
    assert out == "" and err == ""   # nobody listens: nothing said
    assert all(r.name != "solverspace.waits" for r in caplog.records)   # INFO is below the default level
    heard = []
    c_build.WAITS.append(heard.append)
    try:
        with caplog.at_level(logging.INFO, logger="solverspace.waits"):
            assert Space.load(path).best(OBJECTIVE, maximize=False, top=2).ranked[0].objective == 0
    finally:
        c_build.WAITS.remove(heard.append)
    assert any(m.startswith(f"planning the search of {path} (") for m in heard)
    assert any(m.startswith("compiling ") for m in heard)
    assert [r.getMessage() for r in caplog.records if r.name == "solverspace.waits"] == heard
    assert capsys.readouterr().err == ""


# ------------------------------------------------------------------------------ warm best
def _ranked(result):
    return [(r.objective, r.configuration) for r in result.ranked]


def test_a_warm_search_generates_nothing_and_answers_the_same(tmp_path, monkeypatch, cache):
    space = Space.load(space_file(tmp_path, SMALL))
    cold = space.best(OBJECTIVE, top=5)
    assert len(list(cache.glob("search_*.json"))) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("a warm search generated its program again")

    monkeypatch.setattr(c_best.CompiledBest, "generate", staticmethod(refuse))
    again = Space.load(space_file(tmp_path, SMALL))
    assert _ranked(again.best(OBJECTIVE, top=5)) == _ranked(cold)
    assert _ranked(again.best(OBJECTIVE, top=5)) == _ranked(again.best(OBJECTIVE, top=5, backend="bnb-reference"))
    with pytest.raises(AssertionError, match="generated its program again"):   # another direction: a miss
        again.best(OBJECTIVE, maximize=False, top=5)
    with pytest.raises(AssertionError, match="generated its program again"):   # another objective: a miss
        again.best("a + b", top=5)


def test_the_search_key_follows_objective_direction_model_and_generator(tmp_path, monkeypatch):
    from solverspace.analysis.search import objective_expr
    space = Space.load(space_file(tmp_path, SMALL))
    expr = objective_expr(space.model, OBJECTIVE, 1)
    key = plan_cache.search_key(space.plan, expr, True)
    assert key == plan_cache.search_key(Space.load(space_file(tmp_path, SMALL)).plan, expr, True)
    assert key != plan_cache.search_key(space.plan, expr, False)
    assert key != plan_cache.search_key(space.plan, objective_expr(space.model, "a * b - b", 1), True)
    edited = Space.load(space_file(tmp_path, SMALL.replace("range(1, 9)", "range(1, 10)"), "other.py"))
    assert plan_cache.search_key(edited.plan, expr, True) != key
    monkeypatch.setattr(plan_cache, "generator_version", lambda: "another generator")
    assert plan_cache.search_key(space.plan, expr, True) != key


def test_a_damaged_or_foreign_entry_is_a_miss(tmp_path, cache):
    space = Space.load(space_file(tmp_path, SMALL))
    truth = _ranked(space.best(OBJECTIVE, top=4, backend="bnb-reference"))
    assert _ranked(space.best(OBJECTIVE, top=4)) == truth
    (entry,) = cache.glob("search_*.json")
    data = json.loads(entry.read_text())
    levels = data["fields"]["levels"]
    data["key"] = "0" * 64
    entry.write_text(json.dumps(data))
    assert _ranked(Space.load(space_file(tmp_path, SMALL)).best(OBJECTIVE, top=4)) == truth
    entry.write_text("{not json")
    assert _ranked(Space.load(space_file(tmp_path, SMALL)).best(OBJECTIVE, top=4)) == truth
    assert json.loads(entry.read_text())["fields"]["levels"] == levels   # rewritten whole


PROGRAM = """
import sys
from solverspace.cli import main
main(sys.argv[1:])
print("HEAVY", sorted(m for m in ("sympy", "numpy", "ortools") if m in sys.modules), file=sys.stderr)
"""


def test_a_warm_command_line_best_imports_no_sympy(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), SOLVERSPACE_CACHE=str(tmp_path))
    command = [sys.executable, "-c", PROGRAM, "best", "gemm", "--set", "device=tiny", "--maximize",
               "fmas_per_block - loads_per_block", "--top", "3", "-q"]
    cold = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert "'sympy'" in cold.stderr   # the cold call analysed the space
    warm = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert warm.stdout.splitlines()[1:] == cold.stdout.splitlines()[1:] and len(warm.stdout.splitlines()) == 4
    line = next(line for line in warm.stderr.splitlines() if line.startswith("HEAVY"))
    assert "sympy" not in line, line
