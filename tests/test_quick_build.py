"""Quick builds (issue 13): `auto` compiling a small space cold takes a quick (-O0) build of the
same generated source to answer now and leaves the optimized (-O2) module to the background
builder; the two are separate cache entries, each guarded by its size+SHA-256 sidecar; the
answers are the reference's; big spaces, `--backend c` and the opt-out get the optimized build."""
from __future__ import annotations

import json

import pytest

from solverspace import Space
from solverspace.registry import background
from solverspace.registry.auto import AUTO_QUICK_LIMIT, AUTO_QUICK_WORK, AutoBackend
from solverspace.registry.backends import get_backend
from solverspace.analysis.reference import ReferenceEnumerator, WorkBudgetExceeded
from solverspace.translators.c import build as c_build
from solverspace.translators.c.backend import CBackend, CEnumerator
from solverspace.translators.c.codegen import CDEF, CGenerator
from solverspace.translators.c.optimize import Options

from tests.helpers import CORPUS, SHAPES_SPACE
from tests.helpers import SMALL as _SMALL

pytestmark = pytest.mark.needs_cc

# the reference walks about 10**9 candidate values (estimated past AUTO_QUICK_WORK); C stops each
# `b` and `c` loop early (`break`/`tighten`), so the optimized module counts it at once
BIG_WALK = """
a = range(1, 1000)
b = range(1, 1000)
c = range(1, 1000)
require(a * b * c <= 1000)
"""


def small(tag: int) -> str:
    """SMALL with a constraint that holds everywhere: the same rows, a C source of its own (a module
    built by another test of this process is in `sys.modules`, which `is_built` trusts)."""
    return _SMALL + f"require(a < {1000 + tag})\n"


def _built(space, quick: bool) -> bool:
    return CBackend(quick=quick).is_built(space.plan)


def test_the_flags_are_part_of_the_key_and_each_build_has_its_sidecar(cache):
    source = CGenerator(Space.from_source(small(1)).plan, Options()).generate().source
    assert c_build.module_name(source, CDEF) != c_build.module_name(source, CDEF, quick=True)
    assert "-O0" in c_build.flags(True) and "-O2" in c_build.flags(False)
    c_build.build(source, CDEF, quick=True)
    assert c_build.is_built(source, CDEF, quick=True) and not c_build.is_built(source, CDEF)
    c_build.build(source, CDEF)
    quick, optimized = c_build.module_path(source, CDEF, quick=True), c_build.module_path(source, CDEF)
    for path in (quick, optimized):
        assert c_build.verified(path)
    assert quick.read_bytes() != optimized.read_bytes()


def test_an_altered_quick_module_is_not_trusted_and_is_rebuilt(cache):
    source = CGenerator(Space.from_source(small(2)).plan, Options()).generate().source + "/* quick sidecar */\n"
    path = c_build.module_path(source, CDEF, quick=True)
    path.write_bytes(b"not a shared object")                    # e.g. a quick build killed half-way
    c_build.write_atomically(c_build.digest_path(path), "19 " + "0" * 64 + "\n")
    assert not c_build.is_built(source, CDEF, quick=True)
    module = c_build.build(source, CDEF, quick=True)
    assert module.lib.ss_row_size() > 0 and c_build.verified(path) and path.stat().st_size > 1000


@pytest.mark.parametrize("path", sorted(p for p in CORPUS.glob("*.py") if "past-64-bits" not in p.name),
                         ids=lambda p: p.stem)
def test_quick_module_counts_and_rows_equal_the_reference(cache, path):
    space = Space.load(path)
    expected = space.stats("reference")
    quick = CBackend(quick=True)
    assert quick.count(space.plan).count == expected.count
    assert list(quick.rows(space.plan)) == list(space.rows("reference"))
    enumerator = quick.enumerator(space.plan)                  # the -O0 module of the same source ran
    assert enumerator.module.name == c_build.module_name(enumerator.generated.source, CDEF, quick=True)


def test_auto_answers_a_small_cold_space_quickly_then_runs_the_optimized_build(cache, spawned):
    space = Space.from_source(small(4))
    expected = space.count("reference")
    auto = AutoBackend(budget=40, build_behind=True)             # past the budget, estimated small
    assert space.count(auto) == expected
    assert auto.answered_by == "c" and auto.quick and auto.scheduled == 1 and spawned == [cache]
    assert _built(space, True) and not _built(space, False)
    CEnumerator.clear_cache()
    again = AutoBackend(budget=40, build_behind=True)           # the builder has not run yet: quick again,
    assert Space.from_source(small(4)).count(again) == expected    # without walking the reference
    assert again.answered_by == "c" and again.quick and again.scheduled == 0
    assert background.run(cache) == 1                            # the optimized module, behind the answer
    assert _built(space, False)
    CEnumerator.clear_cache()
    third = AutoBackend(budget=40, build_behind=True)
    rows = list(Space.from_source(small(4)).rows(third))
    assert third.answered_by == "c" and not third.quick
    assert rows == list(space.rows("reference"))


def test_opting_out_builds_the_optimized_module_directly(cache, spawned, monkeypatch):
    monkeypatch.setenv(background.ENV, "0")
    space = Space.from_source(small(5))
    auto = get_backend("auto", "count", budget=40)
    assert space.count(auto) == space.count("reference")
    assert auto.answered_by == "c" and not auto.quick and auto.scheduled == 0 and spawned == []
    assert _built(space, False) and not _built(space, True)
    off = AutoBackend(budget=40, build_behind=False)
    CEnumerator.clear_cache()
    assert Space.from_source(small(5)).count(off) == space.count("reference") and not off.quick


def test_c_backend_builds_the_optimized_module(cache):
    space = Space.from_source(small(6))
    get_backend("c", "count").count(space.plan)
    assert _built(space, False) and not _built(space, True)


def test_a_big_walk_is_not_quick_built(cache, spawned):
    space = Space.from_source(BIG_WALK)
    auto = AutoBackend(build_behind=True)
    assert space.count(auto) == sum(min(999, 1000 // (a * b)) for a in range(1, 1000)
                                     for b in range(1, min(999, 1000 // a) + 1))
    assert auto.answered_by == "c" and not auto.quick and auto.scheduled == 0
    assert _built(space, False) and not _built(space, True)


def test_the_estimate_reads_the_deeper_loops():
    space = Space.from_source(BIG_WALK)
    enumerator = ReferenceEnumerator(space.plan, budget=40_000)
    with pytest.raises(WorkBudgetExceeded):
        enumerator.count()
    assert enumerator.fraction_done(1) == 0                                  # `a` is at its first value
    assert enumerator.estimated_work() > AUTO_QUICK_WORK
    done = ReferenceEnumerator(Space.from_source(small(8)).plan)
    done.count()
    assert done.estimated_work() is None                                      # never stopped


def test_the_json_answer_says_quick(cache, spawned, capsys, monkeypatch):
    from solverspace.cli import main
    monkeypatch.setenv(background.ENV, "1")
    source = cache.parent / "small.py"
    source.write_text(small(9))
    auto = AutoBackend(budget=40, build_behind=True)
    monkeypatch.setattr("solverspace.cli.commands.get_backend", lambda *a, **k: auto)
    assert main(["count", str(source), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert answer["backend"] == "c" and answer["quick_build"] is True


def test_a_cold_sweep_of_a_small_space_shares_quick_modules_by_shape(tmp_path, cache, spawned):
    path = tmp_path / "space.py"
    path.write_text(SHAPES_SPACE + "require(x < 1000 + 11)\n")             # a source of its own (see `small`)
    auto = AutoBackend(budget=60, build_behind=True)
    for limit in (17, 20, 23, 27, 31):
        space = Space.load(str(path), {"LIMIT": str(limit)})
        assert space.count(auto) == space.count("reference") and auto.quick
    assert len(list(cache.glob("_ss_*.so"))) == 2                  # the first program, then one shared module
    assert auto.scheduled == 5                                       # each point's optimized module ...
    assert background.run(cache) == 5 and len(list(cache.glob("_ss_*.so"))) == 4   # ... the same two, -O2
    CEnumerator.clear_cache()
    space = Space.load(str(path), {"LIMIT": "23"})
    assert space.count(auto) == space.count("reference") and not auto.quick


def test_with_quick_builds_the_reference_goes_on_less_far(cache, spawned):
    medium = "a = range(1, 550)\nb = range(1, 550)\nrequire((a * b) % 7 == 1)\n"   # about 300,000 values
    space = Space.from_source(medium)
    expected = space.count("reference")
    off = AutoBackend(build_behind=False)                 # no quick build: the reference goes on (700,000)
    assert space.count(off) == expected and off.answered_by == "reference"
    auto = AutoBackend(build_behind=True)                 # past AUTO_QUICK_LIMIT: the quick build answers
    assert auto.quick_limit == AUTO_QUICK_LIMIT < auto.limit
    assert Space.from_source(medium).count(auto) == expected and auto.quick and auto.scheduled == 1
