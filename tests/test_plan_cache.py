"""The generated-C cache (translators.c_plan_cache): a warm call skips code generation and SymPy,
and an entry is never used for a space, setting, option or generator it was not made for."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from solverspace import Space
from solverspace.translators.c import plan_cache as c_plan_cache
from solverspace.translators.c.codegen import CGenerator
from solverspace.translators.c.optimize import Options

pytestmark = [pytest.mark.needs_cc, pytest.mark.usefixtures("cache")]


def _entries(cache):
    return sorted(cache.glob("plan_*.json"))


def _key(space, options=Options()):
    return c_plan_cache.generation_key(space.plan, options, (), False, False)


def test_an_entry_is_exactly_what_the_generator_writes(cache):
    space = Space.load("gemm", {"device": "tiny"})
    fresh = CGenerator(space.plan, Options()).generate()
    assert space.count("c") == space.count("reference")
    assert c_plan_cache.load_generated(_key(space)) == fresh
    again = Space.load("gemm", {"device": "tiny"})   # a new process would see this entry
    assert _key(again) == _key(space) and again.count("c") == space.count("c")
    assert len(_entries(cache)) == 1


def test_a_changed_file_or_setting_is_a_new_entry_with_the_right_answer(tmp_path, cache):
    path = tmp_path / "space.py"
    path.write_text("limit = 7\nx = range(1, limit)\ny = range(x, 9)\nz = iterator(['a', 'b'])\n"
                    "require(x + y < limit + 2)\n")
    first = Space.load(str(path))
    assert first.count("c") == first.count("reference") == 32
    path.write_text("limit = 7\nx = range(1, limit)\ny = range(x, 9)\nz = iterator(['a', 'b'])\n"
                    "require(x + y <= limit + 2)\n")     # one character: < became <=
    edited = Space.load(str(path))
    assert _key(edited) != _key(first)
    assert edited.count("c") == edited.count("reference") == 40
    settings_file = tmp_path / "settings.py"
    settings_file.write_text("LIMIT = setting(7, choices=range(3, 12))\nx = range(1, LIMIT)\ny = range(x, 9)\n"
                             "require(x + y < LIMIT + 2)\n")
    seven, nine = Space.load(str(settings_file)), Space.load(str(settings_file), {"LIMIT": 9})
    assert _key(seven) != _key(nine)
    assert seven.count("c") == seven.count("reference") and nine.count("c") == nine.count("reference")
    assert seven.count("c") != nine.count("c")
    assert len(_entries(cache)) == 4


def test_options_and_the_generator_version_are_part_of_the_key(monkeypatch):
    space = Space.load("gemm", {"device": "tiny"})
    assert _key(space) != _key(space, Options.literal())
    assert _key(space) == _key(space, Options())
    space.count("c")
    assert c_plan_cache.load_generated(_key(space)) is not None
    monkeypatch.setattr(c_plan_cache, "generator_version", lambda: "another generator")
    assert c_plan_cache.load_generated(_key(space)) is None   # an edited or upgraded tool misses


def test_a_damaged_or_foreign_entry_is_a_miss(cache):
    space = Space.load("gemm", {"device": "tiny"})
    expected = space.count("c")
    (entry,) = _entries(cache)
    document = json.loads(entry.read_text())
    entry.write_text(json.dumps(dict(document, key="0" * 64)))
    assert c_plan_cache.load_generated(_key(space)) is None
    entry.write_text(entry.read_text()[:100])
    assert c_plan_cache.load_generated(_key(space)) is None
    assert Space.load("gemm", {"device": "tiny"}).count("c") == expected   # regenerated
    assert c_plan_cache.load_generated(_key(space)) is not None


def test_closure_iterators_are_not_cached():
    space = Space.from_source("x = range(4)\n@iterator\ndef y(x):\n    for i in range(x):\n        yield i * i\n")
    assert _key(space) is None
    assert space.count("c") == space.count("reference") == 6


def test_a_warm_count_imports_no_sympy(tmp_path, cache):
    env = dict(os.environ, SOLVERSPACE_CACHE=str(cache), PYTHONPATH=os.pathsep.join(sys.path))
    program = ("import sys\nfrom solverspace import Space\n"
               "print(Space.load('gemm', {'device': 'tiny'}).count('c'), 'sympy' in sys.modules)")
    cold = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
    warm = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
    assert cold.stdout.split()[0] == warm.stdout.split()[0]
    assert warm.stdout.split()[1] == "False", warm.stdout
