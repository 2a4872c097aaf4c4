"""No module uses another module's private name (issue 24).

A leading underscore says "this module's business": another module that reads it couples itself to
an implementation that may change without notice. Every module of the project is read with `ast` and
three statically visible uses are listed:

- `from x import _name` where `x` is another project module (or `_name` is a module of it);
- `m._name` where `m` is a name bound to another imported project module;
- `obj._name` (obj not `self`/`cls`) where `_name` is a private attribute, method or module-level
  name that only OTHER project modules define (e.g. `enumerator._prefixes` reaching into
  `CEnumerator`), or `obj._name = ...` setting a private attribute this module never defines.

Dunder names (`__init__`, `__file__`) are not private.
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import project_modules


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
    return found


def all_private_uses(known: dict[str, Path] | None = None) -> list[str]:
    """Every use, in every module of `known` (default: the project), of another module's private name."""
    known = project_modules() if known is None else known
    owners: dict[str, set[str]] = {}
    for name, path in known.items():
        for private in defined_privates(ast.parse(path.read_text(encoding="utf-8"))):
            owners.setdefault(private, set()).add(name)
    return sorted(use for name, path in known.items() for use in private_uses(name, path, known, owners))


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
            "solverspace.gemm", "solverspace.sweep"} <= set(known)


def test_no_module_uses_another_modules_private_name():
    assert all_private_uses() == []
