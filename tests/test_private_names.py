"""No module uses another module's private name (issue 24).

A leading underscore says "this module's business": another module that reads it couples itself to
an implementation that may change without notice. Every module of the project is read with `ast` and
three statically visible uses are listed:

- `from x import _name` where `x` is another project module (or `_name` is a module of it);
- `m._name` where `m` is a name bound to another imported project module;
- `obj._name` (obj not `self`/`cls`) where `_name` is a private attribute, method or module-level
  name that only OTHER project modules define (e.g. `enumerator._prefixes` reaching into
  `CEnumerator`), or `obj._name = ...` setting a private attribute this module never defines;
- the same names spelled as strings: `setattr(obj, "_name", ...)` (also `getattr`, `hasattr`,
  `delattr` and `monkeypatch.setattr`) with `_name` as above, and a dotted string naming a
  project module's private name (`monkeypatch.setattr("solverspace.cli._load", ...)`).

The files outside the package that use it, `tests/`, `bench/` and `examples/`, are held to the same
rule against the project's modules (their own private helpers are theirs): a test that needs a
name makes it public in its module, or goes through the public API.

Dunder names (`__init__`, `__file__`) are not private.
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import PROJECT_ROOT, project_modules

OUTSIDE_FOLDERS = ("tests", "bench", "examples")   # checked against the project's modules too
NAMED_BY_STRING = {"setattr", "getattr", "hasattr", "delattr"}


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def resolve(name: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module name of a `from ... import`, relative levels resolved."""
    if not node.level:
        return node.module or ""
    parts = (name if path.stem == "__init__" else name.rsplit(".", 1)[0]).split(".")
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def defined_privates(tree: ast.AST) -> set[str]:
    """Private names a module defines: module-level names, methods, class attributes, `self._x = ...`
    (a store into another object, `other._x = ...`, defines nothing: it is a use)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and is_self(node.value):
            names.add(node.attr)
        elif isinstance(node, ast.alias) and node.asname is None and "." not in node.name:
            names.add(node.name)
        elif isinstance(node, ast.alias) and node.asname:
            names.add(node.asname)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if is_private(name)}


def bound_modules(name: str, path: Path, tree: ast.AST, known: dict[str, Path]) -> dict[str, str]:
    """Local names that stand for another project module (`import a.b as m`, `from a import b`)."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known and alias.asname:
                    bound[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = resolve(name, path, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
    return {local: target for local, target in bound.items() if target != name}


def private_uses(name: str, path: Path, known: dict[str, Path], owners: dict[str, set[str]]) -> list[str]:
    """Every use in `name` of a private name that belongs to another project module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = defined_privates(tree)
    bound = bound_modules(name, path, tree, known)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = resolve(name, path, node)
            if base in known and base != name:
                found += [f"{name}:{node.lineno}: from {base} import {alias.name}"
                          for alias in node.names if is_private(alias.name)]
        elif isinstance(node, ast.Attribute) and is_private(node.attr):
            value = node.value
            if isinstance(value, ast.Name) and value.id in bound:
                found.append(f"{name}:{node.lineno}: {bound[value.id]}.{node.attr}")
            elif is_self(value) or node.attr in own:
                continue
            elif owners.get(node.attr, set()) - {name}:
                found.append(f"{name}:{node.lineno}: ._{node.attr[1:]} of {', '.join(sorted(owners[node.attr]))}")
            elif isinstance(node.ctx, ast.Store):
                found.append(f"{name}:{node.lineno}: ._{node.attr[1:]} set on another module's object")
        elif isinstance(node, ast.Call) and called_name(node) in NAMED_BY_STRING:
            for text in (a.value for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)):
                module, _, attr = text.rpartition(".")
                if not is_private(attr) or attr in own and not module:
                    continue
                if module:
                    while module and module not in known:   # "pkg.mod.attr._name": the module part
                        module = module.rpartition(".")[0]
                    if module and module != name:
                        found.append(f"{name}:{node.lineno}: {text!r}")
                elif owners.get(attr, set()) - {name}:
                    found.append(f"{name}:{node.lineno}: {text!r} of {', '.join(sorted(owners[attr]))}")
    return found


def called_name(call: ast.Call) -> str | None:
    """`setattr` for `setattr(...)` and `monkeypatch.setattr(...)`."""
    function = call.func
    return function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) else None


def outside_files(root: Path = PROJECT_ROOT) -> dict[str, Path]:
    """Every Python file of `tests/`, `bench/` and `examples/`, under a dotted name of its path."""
    return {".".join(path.relative_to(root).with_suffix("").parts): path
            for folder in OUTSIDE_FOLDERS for path in sorted((root / folder).rglob("*.py"))}


def all_private_uses(known: dict[str, Path] | None = None, outside: dict[str, Path] | None = None) -> list[str]:
    """Every use, in every module of `known` (default: the project) and every file of `outside`
    (default: none), of a private name of another module of `known`."""
    known = project_modules() if known is None else known
    owners: dict[str, set[str]] = {}
    for name, path in known.items():
        for private in defined_privates(ast.parse(path.read_text(encoding="utf-8"))):
            owners.setdefault(private, set()).add(name)
    files = {**known, **(outside or {})}
    return sorted(use for name, path in files.items() for use in private_uses(name, path, known, owners))


def test_the_checker_sees_each_kind_of_use(tmp_path):
    """The check itself: a private import, a private module attribute, a private attribute of another
    module's object (read or set); a module's own privates, on any object of its own, and dunders pass."""
    (tmp_path / "owner.py").write_text(
        "class Box:\n    def __init__(self):\n        self._lib = 1\n"
        "    def same(self, other):\n        return other._lib\n"
        "_table = {}\n", encoding="utf-8")
    (tmp_path / "user.py").write_text(
        "from . import owner\nfrom .owner import _table, Box\n"
        "def f(box):\n    box._twin = box\n    return box._lib, owner._table, box.__init__, owner.__file__\n",
        encoding="utf-8")
    known = {"p.owner": tmp_path / "owner.py", "p.user": tmp_path / "user.py"}
    assert all_private_uses(known) == [
        "p.user:2: from p.owner import _table", "p.user:4: ._twin set on another module's object",
        "p.user:5: ._lib of p.owner", "p.user:5: p.owner._table"]


def test_the_checker_reads_every_folder():
    known = project_modules()
    assert {"solverspace.translators.c.partition", "solverspace.validation.snapshot",
            "solverspace.gemm", "solverspace.scale.sweep"} <= set(known)


def test_no_module_uses_another_modules_private_name():
    assert all_private_uses() == []


def test_the_checker_sees_names_in_strings_and_files_outside(tmp_path):
    """`setattr(obj, "_name")` and a dotted string naming a private name, in a project module or a
    test file; a test file's own private helpers, and strings that name none, pass."""
    (tmp_path / "owner.py").write_text("def _spawn():\n    pass\n_table = {}\n", encoding="utf-8")
    (tmp_path / "test_user.py").write_text(
        "from p import owner\n"
        "def _helper(monkeypatch):\n"
        "    monkeypatch.setattr(owner, '_spawn', None)\n"
        "    monkeypatch.setattr('p.owner._table', {})\n"
        "    return getattr(owner, '_helper', None), hasattr(owner, '__file__'), setattr(owner, 'x', '_spawn')\n"
        "def test_it():\n    owner._table.clear()\n",
        encoding="utf-8")
    known = {"p.owner": tmp_path / "owner.py"}
    assert all_private_uses(known, {"tests.test_user": tmp_path / "test_user.py"}) == [
        "tests.test_user:3: '_spawn' of p.owner", "tests.test_user:4: 'p.owner._table'",
        "tests.test_user:7: p.owner._table"]


def test_the_checker_reads_tests_bench_and_examples():
    assert {"tests.helpers", "tests.conftest", "tests.test_private_names"} <= set(outside_files())
    assert any(name.startswith("bench.") for name in outside_files())
    assert any(name.startswith("examples.") for name in outside_files())


def test_no_test_bench_or_example_uses_a_private_name_of_the_project():
    assert all_private_uses(outside=outside_files()) == []
