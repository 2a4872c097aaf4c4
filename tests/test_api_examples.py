"""The examples of the Python API's docstrings run, as written: every public member of `Space`
and every name `solverspace` exports has one (the docs site renders them), and each gives what
it shows. Small spaces only (from source text, the tiny GEMM), counted through the API's
defaults."""
from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import solverspace
from solverspace import Space

MODULES = ["solverspace", "solverspace.space", "solverspace.core.results", "solverspace.registry.auto",
           "solverspace.io.loader", "solverspace.io.t1.read", "solverspace.io.t1.write", "solverspace.core.npy",
           "solverspace.core.cache", "solverspace.core.errors"]
NEEDS = {"to_frame": "pandas"}   # a member whose example needs an extra


def public_members() -> dict[str, object]:
    members = {name: member for name, member in vars(Space).items()
               if not name.startswith("_") or name in ("__init__", "__len__", "__getitem__")}
    return {name: (m.fget if isinstance(m, property) else getattr(m, "__func__", m)) for name, m in members.items()}


def test_every_public_member_of_space_shows_an_example():
    members = public_members()
    assert {"count", "stats", "rows", "to_array", "best", "sample", "parameters"} <= set(members)
    assert [name for name, member in members.items() if ">>>" not in (member.__doc__ or "")] == []


def test_every_exported_function_shows_an_example():
    functions = [name for name in solverspace.__all__ if inspect.isfunction(getattr(solverspace, name))]
    assert "load" in functions and "read_npy" in functions
    assert [name for name in functions if ">>>" not in (getattr(solverspace, name).__doc__ or "")] == []


@pytest.mark.parametrize("module", MODULES)
def test_the_examples_run(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # examples that write files write them here
    tests = doctest.DocTestFinder().find(importlib.import_module(module))
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = 0
    for test in tests:
        needs = NEEDS.get(test.name.rsplit(".", 1)[-1])
        if needs and importlib.util.find_spec(needs) is None:
            continue
        runner.run(test)
        ran += len(test.examples)
    assert ran and runner.summarize(verbose=False).failed == 0
