"""The package's shape, from one table: every module belongs to one layer, imports go down (or
stay within a layer), never up, and no import circle joins two files.

Imports are read from the source with `ast` (imports inside functions included, since a lazy
import is still a dependency), resolved to the project's modules under their installed names.
The README's "Where things are" is drawn from `LAYERS` (a test checks they say the same).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import project_modules

ROOT = Path(__file__).resolve().parents[1]

# Bottom to top: a module may import its own layer and the layers below it. A layer is a list of
# module names; a name ending in ".*" is a package with everything under it.
LAYERS: list[tuple[str, list[str], str]] = [
    ("core", ["solverspace.core", "solverspace.core.*"],
     "errors, option checks, output paths and formats, order values: shared by everything"),
    ("language", ["solverspace.lang", "solverspace.lang.*"],
     "the expression IR, lowering, evaluation, the DSL, the model and its facts"),
    ("analysis", ["solverspace.analysis", "solverspace.analysis.*"],
     "the plan, the reference walk, check, funnel, objectives, bounds, best and tune"),
    ("backends", ["solverspace.translators", "solverspace.translators.*"],
     "translators/: the C backend (c/) and the CP-SAT backend (cpsat/), and what they share"),
    ("registry", ["solverspace.backends", "solverspace.factories", "solverspace.auto", "solverspace.background"],
     "the one way to a backend (the table, the factories), the `auto` policy, the builds left behind an answer"),
    ("API", ["solverspace", "solverspace.loader", "solverspace.t1", "solverspace.t1_read", "solverspace.t1_write",
             "solverspace.t1_format", "solverspace.t1_conditions", "solverspace.t1_python", "solverspace.sampling", "solverspace.space", "solverspace.sweep",
             "solverspace.dask_engine", "solverspace.dask_tasks", "solverspace.designs", "solverspace.repair"],
     "space files and T1 files, `Space`, sampling, sweeps, the Dask engine"),
    ("integrations", ["solverspace.optuna", "solverspace.kt_cache", "solverspace.kernel_tuner"],
     "other tuners on the valid set: Optuna (sampler, suggest, tune records), Kernel Tuner (caches, Searchspace)"),
    ("strategies", ["solverspace.strategies", "solverspace.strategies.*"],
     "search strategies of our own over the valid set (model-based, uniform), a rank prior, `tune` without a bound"),
    ("validation", ["solverspace.validation", "solverspace.validation.*"],
     "validation/: cross-validation of every backend, the space generators, snapshots"),
    ("command line", ["solverspace.cli", "solverspace.cli.*", "solverspace.__main__"], "the `solverspace` command"),
    ("spaces", ["solverspace.gemm", "solverspace.gemm.*"], "gemm/: the built-in GEMM space and its device table"),
]
# Families of one layer that must not import each other.
SIBLINGS = [("solverspace.translators.c.*", "solverspace.translators.cpsat.*")]


def matches(name: str, pattern: str) -> bool:
    return name.startswith(pattern[:-1]) if pattern.endswith(".*") else name == pattern


def layer_of(name: str) -> int | None:
    found = [i for i, (_, patterns, _) in enumerate(LAYERS) if any(matches(name, p) for p in patterns)]
    return found[0] if len(found) == 1 else None


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
    known = project_modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Every import that runs from a layer to one above it, as 'a (layer) -> b (layer)'."""
    found = []
    for name in sorted(edges):
        for target in sorted(edges[name]):
            if layer_of(target) > layer_of(name):
                found.append(f"{name} ({LAYERS[layer_of(name)][0]}) -> {target} ({LAYERS[layer_of(target)][0]})")
    return found


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


def test_the_checker_finds_modules_and_imports():
    edges = graph()
    assert "solverspace.translators.c.backend" in edges and "solverspace.backends" in edges
    assert "solverspace.core.results" in edges["solverspace.translators.c.backend"]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_every_module_is_in_exactly_one_layer():
    assert [name for name in graph() if layer_of(name) is None] == []


def test_imports_never_run_up_a_layer():
    assert upward(graph()) == []


def test_a_wrong_import_is_caught():
    """The check itself: the language importing the registry, or core importing the CLI, is named."""
    edges = {"solverspace.lang.model": {"solverspace.backends"}, "solverspace.core.errors": {"solverspace.cli"},
             "solverspace.backends": {"solverspace.lang.model"}, "solverspace.cli": set()}
    assert upward(edges) == ["solverspace.core.errors (core) -> solverspace.cli (command line)",
                             "solverspace.lang.model (language) -> solverspace.backends (registry)"]


def test_sibling_backends_do_not_import_each_other():
    edges = graph()
    crossing = [f"{a} -> {b}" for a, targets in edges.items() for b in targets for left, right in SIBLINGS
                if (matches(a, left) and matches(b, right)) or (matches(a, right) and matches(b, left))]
    assert crossing == []


def test_no_import_circle_between_files():
    assert cycles(graph()) == []


def test_the_readme_lists_every_layer_in_order():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"^\| (\w[\w ]*) \|", section, flags=re.M)
    assert named[1:] == [name for name, _, _ in LAYERS]   # after the header row
