"""The import paths of the modules that moved into folders keep working for one release: each warns
(`FutureWarning`, naming the new path) and is the module at the new path; nothing in the checkout
imports an old path (a shim is for other people's code)."""
from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from solverspace.core.moved import MOVED
from tests.helpers import project_modules

ROOT = Path(__file__).resolve().parents[1]


def old_paths_imported(source: str) -> list[str]:
    """The old paths (keys of `MOVED`) an source imports, in any spelling of an import."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name in MOVED]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module in MOVED:
                found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in MOVED]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in MOVED:
            found.append(node.value)     # importlib.import_module("..."), `python -m ...`
    return found


def test_every_old_path_names_a_module_that_is_there_and_no_file():
    known = project_modules()
    assert [new for new in MOVED.values() if new not in known] == []
    assert [old for old in MOVED if old in known] == []


def test_the_checker_sees_every_spelling_of_an_old_import():
    for source in ["import solverspace.kt_cache", "from solverspace import background", "from solverspace.t1_read import MAX_WORK",
                   "import solverspace.optuna as o", "importlib.import_module('solverspace.sweep')"]:
        assert old_paths_imported(source), source
    assert not old_paths_imported("from solverspace.registry import background\nimport solverspace.io.t1")


def test_nothing_in_the_checkout_imports_an_old_path():
    folders = ["solverspace", "translators", "gemm", "validation", "tests", "bench", "examples"]
    found = {str(path.relative_to(ROOT)): old
             for folder in folders for path in sorted((ROOT / folder).rglob("*.py"))
             if path.name != "moved.py" and path.name != Path(__file__).name
             for old in [old_paths_imported(path.read_text(encoding="utf-8"))] if old}
    assert found == {}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_is_the_new_module(old):
    """In a fresh process (this one may hold the old name already): the warning names the new path,
    `import old`, `from package import leaf` and the attribute all give the new module."""
    package, leaf = old.rsplit(".", 1)
    program = (f"import warnings, importlib\nwarnings.simplefilter('error')\n"
               f"import {MOVED[old]} as new\n"
               f"try:\n    import {old}\nexcept FutureWarning as w:\n    print('warned:', w)\n"
               f"with warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
               f"    import {old} as again\n    from {package} import {leaf} as by_name\n"
               f"print(again is new is by_name)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"warned: {old} has moved to {MOVED[old]}; import it from there (the old "
                                          f"path goes in the next release)", "True"]


def test_a_name_set_through_the_old_path_is_set_on_the_new_module(monkeypatch):
    new = importlib.import_module("solverspace.io.t1.read")
    with pytest.warns(FutureWarning, match="solverspace.t1_read has moved to solverspace.io.t1.read"):
        monkeypatch.delitem(sys.modules, "solverspace.t1_read", raising=False)
        old = importlib.import_module("solverspace.t1_read")
    monkeypatch.setattr(old, "MAX_WORK", 7)
    assert new.MAX_WORK == 7
