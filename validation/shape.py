"""The project's modules and the imports between them, read from the source with `ast`.

One reader for the two places that measure the package's shape: the layer test
(`tests/test_layers.py`: imports go down, never up, and no circle joins two files) and the
figures script `bench/shape.py` (import floors, chains, cycles). Both must resolve an import the
same way, or the figure and the rule would speak of different graphs:

- modules are named by their installed names: the `solverspace` folder and the folders
  `pyproject.toml`'s `[tool.setuptools.package-dir]` maps into the package; a package is its
  `__init__`;
- a relative import is resolved against the importing module's package; `from p import n` is
  `p.n` when that is a module, else `p`; an import of a name below a module is that module;
- imports inside functions (lazy) count unless asked otherwise (a lazy import is still a
  dependency); the parent packages Python runs on the way are not counted.

    >>> graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    >>> strongly_connected(graph)
    [['a', 'b'], ['c']]
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path


def project_folders(root: Path) -> dict[str, str]:
    """The checkout's folders of project code and their installed package names."""
    folders = {"solverspace": "solverspace"}
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        text = pyproject.read_text(encoding="utf-8")
        try:
            import tomllib
        except ImportError:   # Python 3.10: the `"package" = "folder"` lines of the package-dir table
            section = text.split("[tool.setuptools.package-dir]", 1)[1].split("\n[", 1)[0] if \
                "[tool.setuptools.package-dir]" in text else ""
            mapped = dict(re.findall(r'^"([\w.]+)"\s*=\s*"([^"]*)"', section, flags=re.M))
        else:
            mapped = tomllib.loads(text).get("tool", {}).get("setuptools", {}).get("package-dir", {})
        folders.update({folder: package for package, folder in mapped.items() if folder})
    return {folder: package for folder, package in folders.items() if (root / folder).is_dir()}


def project_modules(root: Path) -> dict[str, Path]:
    """Every project module of the checkout at `root` under its installed name (a package under its own name)."""
    found = {}
    for folder, package in project_folders(root).items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = [package, *path.relative_to(root / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def eager_nodes(tree: ast.AST):
    """The nodes that run when the module is imported: all but those inside functions."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node)
                     if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def imported_from(node: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` statement in `package` reads from (relative levels resolved)."""
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        parts = parts[:len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    return base


def imports(name: str, path: Path, tree: ast.AST, known: dict[str, Path], lazy: bool = True) -> set[str]:
    """The project modules `name` (the module at `path`, parsed as `tree`) imports, lazy imports
    (inside functions) included unless `lazy` is false; `known` is every project module."""
    package = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
    result = set()
    for node in ast.walk(tree) if lazy else eager_nodes(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = imported_from(node, package)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != name:
                result.add(target)
    return result


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components, each a sorted list of modules; a component comes after those it reaches."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return components
