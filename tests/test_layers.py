"""The package's shape: no import circle between files, and nothing below the backend registry
imports the layers above it (the CLI, `Space`, the loader, sampling, T1, validation).

Imports are read from the source with `ast` (imports inside functions included, since a lazy
import is still a dependency), resolved to the project's modules under their installed names.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"solverspace": "solverspace", "translators": "solverspace.translators", "gemm": "solverspace.gemm",
           "validation": "solverspace.validation"}
# above the registry: what may use it (and each other)
ABOVE = ("solverspace.cli", "solverspace.__main__", "solverspace.space", "solverspace.sampling",
         "solverspace.loader", "solverspace.t1", "solverspace.sweep", "solverspace.validation", "solverspace.gemm",
         "solverspace.dask_engine", "solverspace.dask_tasks")
REGISTRY = "solverspace.backends"


def modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).glob("*.py")):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules `name` imports (a package's own `__init__` counts as the package)."""
    package = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
    result = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != name:
                result.add(target)
    return result


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _above(name: str) -> bool:
    return name == "solverspace" or any(name == a or name.startswith(a + ".") or name.startswith(a + "_")
                                        for a in ABOVE)


def test_the_checker_finds_modules_and_imports():
    edges = graph()
    assert "solverspace.translators.c_backend" in edges and "solverspace.backends" in edges
    assert "solverspace.results" in edges["solverspace.translators.c_backend"]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_no_import_circle_between_files():
    assert cycles(graph()) == []


def test_nothing_below_the_registry_imports_the_layers_above_it():
    edges = graph()
    below = [name for name in edges if not _above(name) and name != REGISTRY]
    offending = {name: sorted(t for t in edges[name] if _above(t) or t == REGISTRY) for name in below}
    assert {name: targets for name, targets in offending.items() if targets} == {}
