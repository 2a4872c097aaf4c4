"""The package's shape, from one table: every module belongs to one layer, imports go down (or
stay within a layer), never up, and no import circle joins two files.

Imports are read from the source with `ast` (imports inside functions included, since a lazy
import is still a dependency), resolved to the project's modules under their installed names by
`solverspace.validation.shape` (the reader `bench/shape.py` measures with).
The docs' "Where things are" (docs/explanation/architecture.md) is drawn from `LAYERS` (a test checks they say the same).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from solverspace.validation.shape import imports, strongly_connected
from tests.helpers import project_modules

ROOT = Path(__file__).resolve().parents[1]

# Bottom to top: a module may import its own layer and the layers below it. A layer is a list of
# folders (packages, by their installed names); a module belongs to the layer of the nearest folder
# that holds it, so `solverspace` is the package's loose modules, and `solverspace.io` is io/ and the
# folders inside it. One rule more: a `__main__` module (a program's entry) is the command line.
LAYERS: list[tuple[str, list[str], str]] = [
    ("core", ["solverspace.core"],
     "errors, option checks, output paths and formats, order values: shared by everything"),
    ("language", ["solverspace.lang"],
     "the expression IR, lowering, evaluation, the DSL, the model and its facts"),
    ("analysis", ["solverspace.analysis"],
     "the plan, the reference walk, check, funnel, objectives, bounds, best and tune"),
    ("backends", ["solverspace.translators"],
     "translators/: the C backend (c/) and the CP-SAT backend (cpsat/), and what they share"),
    ("registry", ["solverspace.registry"],
     "the one way to a backend (the table, the factories), the `auto` policy, the builds left behind an answer"),
    ("API", ["solverspace", "solverspace.io", "solverspace.moves", "solverspace.scale"],
     "`Space`; space files and T1 files (io/); value lists, neighbours, designs, repair (moves/); sweeps, "
     "sampling, the Dask engine (scale/)"),
    ("integrations", ["solverspace.integrations"],
     "other tuners on the valid set: Optuna (sampler, suggest, tune records), Kernel Tuner (caches, Searchspace)"),
    ("strategies", ["solverspace.strategies", "solverspace.integrations.kernel_tuner.strategy"],
     "search strategies of our own over the valid set (model-based, uniform), a rank prior, `tune` without a bound; "
     "the same strategies as Kernel Tuner strategies (integrations/kernel_tuner/strategy/: above the integrations "
     "layer, since it runs them)"),
    ("validation", ["solverspace.validation"],
     "validation/: cross-validation of every backend, the space generators, snapshots"),
    ("command line", ["solverspace.cli", "*.__main__"], "the `solverspace` command"),
    ("spaces", ["solverspace.gemm"], "gemm/: the built-in GEMM space and its device table"),
]
# Families of one layer that must not import each other.
SIBLINGS = [("solverspace.translators.c.*", "solverspace.translators.cpsat.*")]


def matches(name: str, pattern: str) -> bool:
    return name.startswith(pattern[:-1]) if pattern.endswith(".*") else name == pattern


def holds(folder: str, name: str) -> bool:
    """Whether the folder (a package) `folder` holds the module `name` (itself, or anything below it)."""
    return name == folder or name.startswith(folder + ".")


def layer_of(name: str) -> int | None:
    """The layer of the nearest folder that holds `name` (a `__main__` module: the command line's)."""
    if name.rsplit(".", 1)[-1] == "__main__":
        return next(i for i, (_, folders, _) in enumerate(LAYERS) if "*.__main__" in folders)
    nearest = max((folder for _, folders, _ in LAYERS for folder in folders if holds(folder, name)),
                  key=len, default=None)
    return None if nearest is None else next(i for i, (_, folders, _) in enumerate(LAYERS) if nearest in folders)


def file_imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules the file at `path` (the module `name`) imports."""
    return imports(name, path, ast.parse(path.read_text(encoding="utf-8")), known)


def graph() -> dict[str, set[str]]:
    known = project_modules()
    return {name: file_imports(name, path, known) for name, path in known.items()}


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Every import that runs from a layer to one above it, as 'a (layer) -> b (layer)'."""
    found = []
    for name in sorted(edges):
        for target in sorted(edges[name]):
            if layer_of(target) > layer_of(name):
                found.append(f"{name} ({LAYERS[layer_of(name)][0]}) -> {target} ({LAYERS[layer_of(target)][0]})")
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module."""
    return [component for component in strongly_connected(edges) if len(component) > 1]


def test_the_checker_finds_modules_and_imports():
    edges = graph()
    assert "solverspace.translators.c.backend" in edges and "solverspace.registry.backends" in edges
    assert "solverspace.core.results" in edges["solverspace.translators.c.backend"]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def unplaced_folders(modules) -> list[str]:
    """The packages among `modules` that no row names and that lie in no named folder but the
    package's root (`solverspace`): a new folder needs a row (or a place in one) of its own."""
    named = {folder for _, folders, _ in LAYERS for folder in folders}
    packages = {name.rsplit(".", 1)[0] for name in modules if "." in name} | {
        name for name in modules if project_path(name).stem == "__init__"}
    return sorted(p for p in packages if p not in named
                  and max((f for f in named if holds(f, p)), key=len, default="solverspace") == "solverspace")


def project_path(name: str) -> Path:
    return project_modules().get(name, Path(name.replace(".", "/") + ".py"))


def test_every_module_is_in_one_layer_and_every_folder_in_a_row():
    modules = graph()
    assert [name for name in modules if layer_of(name) is None] == []
    assert unplaced_folders(modules) == []
    rows = [folder for _, folders, _ in LAYERS for folder in folders]
    assert len(rows) == len(set(rows)), "a folder named in two rows"
    assert all("*" not in folder or folder == "*.__main__" for folder in rows), "rows name folders, not files"


def test_imports_never_run_up_a_layer():
    assert upward(graph()) == []


def test_a_wrong_import_is_caught():
    """The check itself: the language importing the registry, core importing the CLI, the registry
    or the API importing an integration, are named; a folder of its own inside another layer's folder
    is that layer; a `__main__` is the command line's."""
    edges = {"solverspace.lang.model": {"solverspace.registry.backends"}, "solverspace.core.errors": {"solverspace.cli"},
             "solverspace.registry.backends": {"solverspace.lang.model", "solverspace.integrations.optuna.sampler"},
             "solverspace.scale.sweep": {"solverspace.integrations.kernel_tuner.cache", "solverspace.registry.auto"},
             "solverspace.io.t1.read": {"solverspace.space"}, "solverspace.__main__": {"solverspace.cli"},
             "solverspace.cli": set(), "solverspace.registry.auto": set(), "solverspace.space": set(),
             "solverspace.integrations.optuna.sampler": set(), "solverspace.integrations.kernel_tuner.cache": set()}
    assert upward(edges) == [
        "solverspace.core.errors (core) -> solverspace.cli (command line)",
        "solverspace.lang.model (language) -> solverspace.registry.backends (registry)",
        "solverspace.registry.backends (registry) -> solverspace.integrations.optuna.sampler (integrations)",
        "solverspace.scale.sweep (API) -> solverspace.integrations.kernel_tuner.cache (integrations)"]
    assert layer_of("solverspace.translators.c.backend") == layer_of("solverspace.translators")
    assert unplaced_folders(["solverspace.storage.rdb", "solverspace.io.t1.read", "solverspace.space"]) == [
        "solverspace.storage"]


def test_the_checker_fails_on_a_wrong_import_in_a_file(tmp_path):
    """A real file, read as the checker reads the project: `lang/` importing the registry is caught."""
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def f():\n    from solverspace.registry.backends import get_backend\n    return get_backend\n")
    known = dict(project_modules(), **{"solverspace.lang.wrong": wrong})
    edges = {"solverspace.lang.wrong": file_imports("solverspace.lang.wrong", wrong, known)}
    edges.update({target: set() for target in edges["solverspace.lang.wrong"]})
    assert upward(edges) == ["solverspace.lang.wrong (language) -> solverspace.registry.backends (registry)"]


def test_sibling_backends_do_not_import_each_other():
    edges = graph()
    crossing = [f"{a} -> {b}" for a, targets in edges.items() for b in targets for left, right in SIBLINGS
                if (matches(a, left) and matches(b, right)) or (matches(a, right) and matches(b, left))]
    assert crossing == []


def test_no_import_circle_between_files():
    assert cycles(graph()) == []


def test_the_readme_lists_every_layer_in_order():
    text = (ROOT / "docs" / "explanation" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"^\| (\w[\w ]*) \|", section, flags=re.M)
    assert named[1:] == [name for name, _, _ in LAYERS]   # after the header row


def absolute_self_imports(source: str, package: str = "solverspace.translators") -> list[int]:
    """Lines of `source` that import `package` (or below it) by its installed name."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if (isinstance(node, ast.ImportFrom) and not node.level and holds(package, node.module or ""))
            or (isinstance(node, ast.Import) and any(holds(package, alias.name) for alias in node.names))]


def test_translators_import_their_siblings_relatively():
    """translators/ is installed as `solverspace.translators` and found under that name from a checkout;
    its modules import each other relatively (`from .codegen import`, `from ..errors import`)."""
    assert absolute_self_imports("from solverspace.translators.c.build import waiting\nimport solverspace.translators") == [1, 2]
    assert absolute_self_imports("from .build import waiting\nfrom ..errors import X\nfrom solverspace.core import options") == []
    found = {str(path.relative_to(ROOT)): lines for path in sorted((ROOT / "translators").rglob("*.py"))
             for lines in [absolute_self_imports(path.read_text(encoding="utf-8"))] if lines}
    assert found == {}
