"""Warm paths (issue 28): after a count, a `sample`, `check`, `get` or `sweep` process imports no
SymPy and compiles nothing it compiled before; the first sweep after a count generates its
points' programs from the remembered simplifications (no SymPy); the simplifications are
remembered per generator version, and a damaged, foreign or outdated file is a miss."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest

from solverspace import Space
from solverspace.lang import bounds, ir
from solverspace.lang.symbolic import simplify
from solverspace.translators.c import plan_cache

pytestmark = [pytest.mark.needs_cc, pytest.mark.usefixtures("cache")]

PROGRAM = """
import sys
from solverspace.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    if exc.code:
        raise
print("SYMPY", "sympy" in sys.modules, file=sys.stderr)
"""

TINY = ["--set", "device=tiny"]
SWEEP = ["sweep", "gemm", *TINY, "--set", "max_threads_per_block=32,48,64", "--json"]


def run(cache, *argv) -> tuple[str, bool, set[str]]:
    """(stdout, whether SymPy was imported, the files the run added to the cache) of one process."""
    before = set(os.listdir(cache)) if cache.exists() else set()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), SOLVERSPACE_CACHE=str(cache),
               SOLVERSPACE_BACKGROUND_BUILD="0")
    result = subprocess.run([sys.executable, "-c", PROGRAM, *argv], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stderr.splitlines() if line.startswith("SYMPY"))
    added = {name for name in set(os.listdir(cache)) - before if not name.endswith(".lock")}
    return result.stdout, line == "SYMPY True", added


def counts(out: str) -> list[int]:
    """The counts of a `sweep --json` output, in order."""
    return [json.loads(line)["count"] for line in out.splitlines()]


def test_after_a_count_sweep_sample_check_and_get_import_no_sympy(cache):
    out, sympy, added = run(cache, "count", "gemm", *TINY, "--backend", "c")
    assert "336 valid configurations" in out and sympy
    assert any(name.startswith("simplified_") for name in added)   # the count left its simplifications
    # the first sweep after the count: three programs generated from the remembered simplifications
    first, sympy, added = run(cache, *SWEEP)
    assert not sympy, "the first sweep after a count imported SymPy"
    assert {line["method"] for line in map(json.loads, first.splitlines())} == {"one-pass"}
    # warm: the same sweep again, and the other questions after their first call
    second, sympy, added = run(cache, *SWEEP)
    assert counts(second) == counts(first) and not sympy and not added
    row = "dim_m=2 dim_n=16 blk_m=32 blk_n=64 blk_k=8 dim_vec=2 vec_mul=0".split()
    for argv in (["sample", "gemm", *TINY, "-n", "5", "--seed", "7"], ["get", "gemm", *TINY, "7", "300"],
                 ["check", "gemm", *TINY, *row]):
        cold, _, _ = run(cache, *argv)
        warm, sympy, added = run(cache, *argv)
        assert warm == cold, argv
        assert not sympy, f"a warm {argv[0]} imported SymPy"
        assert not added, f"a warm {argv[0]} wrote {sorted(added)} (compiled or generated again)"


def test_per_point_sweep_counts_equal_one_pass_after_a_count(cache):
    run(cache, "count", "gemm", *TINY, "--backend", "c")
    one_pass, _, _ = run(cache, *SWEEP)
    per_point, _, _ = run(cache, *SWEEP, "--per-point")
    assert counts(one_pass) == counts(per_point) == [
        Space.load("gemm", {"device": "tiny", "max_threads_per_block": v}).count("reference") for v in (32, 48, 64)]


SOURCE = "x = range(1, 9)\ny = range(1, 9)\nd = x + y - x\ne = x * 2 + 1\nrequire(d + e < 15)\n"


def test_remembered_simplifications_are_sympys_and_follow_the_generator_version(cache, monkeypatch):
    space = Space.from_source(SOURCE)
    expected = space.count("reference")
    assert space.count("c") == expected
    plan_cache.flush_simplifications()
    (path,) = cache.glob("simplified_*.pickle")
    entries = plan_cache.SimplificationStore.read(path)
    assert entries, "no simplification remembered"
    derived = {repr(space.model.derived_value[name].expr): space.model.derived_value[name].expr for name in "de"}
    for (text, rational), value in entries.items():
        if text in derived:
            fresh = simplify(derived[text], frozenset(rational))
            assert value == (None if fresh is derived[text] else fresh), text
    assert entries[(repr(space.model.derived_value["d"].expr), ())] == ir.Ref("y")   # x + y - x
    # another version of the tool reads another file: nothing is shared with it
    monkeypatch.setattr(plan_cache, "generator_version", lambda: "f" * 64)
    assert plan_cache.SimplificationStore().get(next(iter(entries))) is bounds.MISSING
    monkeypatch.undo()


def test_a_damaged_foreign_or_outdated_file_is_a_miss(cache, monkeypatch):
    Space.from_source(SOURCE).count("c")
    plan_cache.flush_simplifications()
    (path,) = cache.glob("simplified_*.pickle")
    key = next(iter(plan_cache.SimplificationStore.read(path)))
    good = path.read_bytes()
    document = pickle.loads(good)
    for damaged in (good[:20], b"not a pickle", pickle.dumps(dict(document, version="0" * 64)),
                    pickle.dumps(dict(document, format=99)), pickle.dumps(["entries"])):
        path.write_bytes(damaged)
        assert plan_cache.SimplificationStore().get(key) is bounds.MISSING
    # a miss is computed again (SymPy), and written back whole
    monkeypatch.setattr(bounds, "SIMPLIFIED", {})
    path.write_bytes(b"not a pickle")
    store = plan_cache.SimplificationStore()
    monkeypatch.setattr(bounds, "STORES", [store])
    model = Space.from_source(SOURCE).model
    for name in ("d", "e"):
        assert bounds.Bounds(model).of(name) == Space.from_source(SOURCE).plan.analysis.bounds.of(name)
    store.flush()
    assert plan_cache.SimplificationStore.read(path) == document["entries"]


def test_the_file_keeps_its_newest_entries_past_its_limit(cache, monkeypatch):
    monkeypatch.setattr(plan_cache.SimplificationStore, "MAX_ENTRIES", 3)
    store = plan_cache.SimplificationStore()
    for i in range(5):
        store.put((f"x + {i}", ()), ir.Const(i))
    store.flush()
    store.put(("x + 5", ()), None)
    store.flush()
    assert plan_cache.SimplificationStore.read(store.path()) == {
        ("x + 3", ()): ir.Const(3), ("x + 4", ()): ir.Const(4), ("x + 5", ()): None}
    assert plan_cache.SimplificationStore().get(("x + 0", ())) is bounds.MISSING
