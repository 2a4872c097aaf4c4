"""The large shape of a checkout, in the figures issue 24's note asks for before and after.

    python bench/shape.py [CHECKOUT]      (default: the checkout this script is in)

Prints, for the project's modules (the `solverspace` folder and the folders `pyproject.toml`'s
`[tool.setuptools.package-dir]` maps into the package: translators/, gemm/, validation/; every
`.py` file under them, as `solverspace.validation.shape` reads them; both the flat layout of
commit 5b00030 and the folders per layer are read the same way):

- files per folder: the `.py` files directly in each folder that holds any;
- the 10 longest modules, in lines;
- the import floors: floor(m) = 1 + the largest floor of the project modules m imports (a module
  that imports none is on floor 1). Imports are read with `ast`, the ones inside functions (lazy)
  included, resolved by `solverspace.validation.shape`, the reader `tests/test_layers.py` uses
  (relative levels; `from p import n` is `p.n` when that is a module, else `p`; a package is its
  `__init__`; the parent packages that Python runs on the way are not counted). Modules that
  import each other in a circle share one floor (the circle counts as one step) and are listed
  as cycles. Printed: the highest floor,
  the modules on each floor, one longest chain, the cycles; then the highest floor of the graph
  of the `solverspace/` folder's modules alone (the figure issue 24 counted at 5b00030: 17) and
  the floors without the lazy imports (what importing a module runs); then one line with the longest
  chain's length (lazy imports included), the number of lazy imports (pairs of project modules that
  only an import inside a function joins; and how many such statements there are) and of cycles;
- `isinstance` domain ladders: the `isinstance(x, C)` calls in project modules where C (or a
  member of a tuple C) is one of the IR's domain classes (Range, Values, SetOp, IfDomain,
  Closure, Permutation, Interleave, Sequence, Domain), spelled through the IR module (`ir.Range`)
  or imported from it (`from ...ir import Range`), or bare inside the IR module itself; a
  `typing`/`collections.abc` `Sequence` is not the IR's and is not counted. Printed: the calls,
  and per class its occurrences and the files they are in;
- `duplicates` pairs: the first line of `duplicates --repo CHECKOUT --most 1` (the whole tree git
  tracks, tests included), when the tool is on PATH; otherwise a line saying it was skipped.
"""
from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solverspace.validation.shape import (eager_nodes, imported_from, imports,  # noqa: E402
                                          project_modules, strongly_connected)

DOMAIN_CLASSES = ("Range", "Values", "SetOp", "IfDomain", "Closure", "Permutation", "Interleave", "Sequence",
                  "Domain")


def files_per_folder(root: Path, modules: dict[str, Path]) -> dict[str, int]:
    counts = Counter(path.parent.relative_to(root).as_posix() + "/" for path in modules.values())
    return dict(sorted(counts.items()))


def lazy_import_nodes(tree: ast.AST):
    """The import statements inside functions (lazy: they run when the function is called)."""
    eager = {id(node) for node in eager_nodes(tree)}
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in eager]


def floors(graph: dict[str, set[str]]) -> tuple[dict[str, int], list[list[str]], list[str]]:
    """(floor of every module, the import cycles, one longest chain from its top to floor 1)."""
    components = strongly_connected(graph)
    component_of = {member: i for i, component in enumerate(components) for member in component}
    floor_of: dict[int, int] = {}
    below: dict[int, int | None] = {}
    for i, component in enumerate(components):   # Tarjan emits a component after all it reaches
        reached = {component_of[t] for member in component for t in graph[member]} - {i}
        best = max(reached, key=lambda j: (floor_of[j], components[j]), default=None)
        floor_of[i] = 1 + (floor_of[best] if best is not None else 0)
        below[i] = best
    top = max(range(len(components)), key=lambda i: (floor_of[i], components[i]), default=None)
    chain = []
    while top is not None:
        chain.append(" = ".join(components[top]) if len(components[top]) > 1 else components[top][0])
        top = below[top]
    cycles = [component for component in components if len(component) > 1]
    return {member: floor_of[component_of[member]] for member in graph}, cycles, chain


def ir_module(trees: dict[str, ast.AST]) -> str | None:
    """The module that defines the IR's domain classes (`class Domain` and `class Range`)."""
    for name, tree in trees.items():
        classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
        if {"Domain", "Range"} <= classes:
            return name
    return None


def domain_isinstance(name: str, path: Path, tree: ast.AST, ir: str, known: dict[str, Path]) -> list[list[str]]:
    """For each `isinstance` call of the module that names a domain class: the classes it names."""
    package = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
    module_names: set[str] = set()      # local names of the IR module
    class_names: dict[str, str] = {}    # local name -> domain class
    if name == ir:
        class_names.update({c: c for c in DOMAIN_CLASSES})
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == ir and alias.asname:
                    module_names.add(alias.asname)
        elif isinstance(node, ast.ImportFrom):
            base = imported_from(node, package)
            for alias in node.names:
                if f"{base}.{alias.name}" == ir:
                    module_names.add(alias.asname or alias.name)
                elif base == ir and alias.name in DOMAIN_CLASSES:
                    class_names[alias.asname or alias.name] = alias.name

    def named(node: ast.AST) -> str | None:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in module_names:
            return node.attr if node.attr in DOMAIN_CLASSES else None
        if isinstance(node, ast.Name):
            return class_names.get(node.id)
        return None

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and len(node.args) == 2:
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            classes = [c for c in map(named, kinds) if c is not None]
            if classes:
                found.append(classes)
    return found


def duplicates_line(root: Path) -> str:
    tool = shutil.which("duplicates")
    if tool is None:
        return "duplicates: not on PATH, skipped"
    result = subprocess.run([tool, "--repo", str(root), "--most", "1", "--seconds", "120"],
                            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    lines = result.stdout.splitlines()
    first = lines[0] if lines else "(no output)"
    match = re.match(r"(\d+) pairs?\b", first)
    pairs = int(match.group(1)) if match else 0 if first.startswith("no duplicates") else None
    notes = [line for line in lines if line.startswith("incomplete:")]
    return (f"duplicates pairs: {pairs if pairs is not None else '?'}  ({first})"
            + "".join(f"\n  {note}" for note in notes))


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else Path(__file__).resolve().parents[1]).resolve()
    known = project_modules(root)
    if not known:
        print(f"no project modules under {root}", file=sys.stderr)
        return 2
    trees = {name: ast.parse(path.read_text(encoding="utf-8"), filename=str(path)) for name, path in known.items()}
    head = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %cd", "--date=short"],
                          capture_output=True, text=True).stdout.strip()
    print(f"checkout {root}" + (f" at {head}" if head else ""))
    total_lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in known.values())
    print(f"{len(known)} project modules, {total_lines} lines")

    print("\nfiles per folder (.py files directly in it)")
    for folder, count in files_per_folder(root, known).items():
        print(f"  {count:4d}  {folder}")

    print("\nthe 10 longest modules (lines)")
    lengths = sorted(((len(path.read_text(encoding="utf-8").splitlines()), path.relative_to(root).as_posix())
                      for path in known.values()), key=lambda item: (-item[0], item[1]))
    for lines, where in lengths[:10]:
        print(f"  {lines:5d}  {where}")

    graph = {name: imports(name, known[name], trees[name], known) for name in known}
    floor, cycles, chain = floors(graph)
    print(f"\nimport floors: {max(floor.values())} (floor(m) = 1 + the highest floor m imports; "
          f"{sum(len(t) for t in graph.values())} import edges)")
    by_floor = defaultdict(list)
    for name, level in floor.items():
        by_floor[level].append(name)
    for level in sorted(by_floor):
        print(f"  floor {level:2d}: {len(by_floor[level]):3d} modules")
    print("  one longest chain, top down: " + " -> ".join(chain))
    print(f"  import cycles: {len(cycles)}" + "".join(f"\n    {' <-> '.join(c)}" for c in cycles))
    inside = {name: {t for t in targets if known[t].is_relative_to(root / "solverspace")}
              for name, targets in graph.items() if known[name].is_relative_to(root / "solverspace")}
    print(f"  the solverspace/ folder's modules alone (imports among them): {max(floors(inside)[0].values())} floors")
    eager = {name: imports(name, known[name], trees[name], known, lazy=False) for name in known}
    eager_floor, eager_cycles, eager_chain = floors(eager)
    print(f"  without the lazy imports (what importing a module runs): {max(eager_floor.values())} floors, "
          f"{len(eager_cycles)} cycles; chain: " + " -> ".join(eager_chain))
    lazy_pairs = {(name, target) for name in known for target in graph[name] - eager[name]}
    statements = sum(1 for name in known for node in lazy_import_nodes(trees[name])
                     if imports(name, known[name], ast.Module(body=[node], type_ignores=[]), known))
    print(f"longest import chain (lazy imports included): {len(chain)} modules; lazy imports: {len(lazy_pairs)} "
          f"(pairs of modules joined only by an import inside a function; {statements} such import statements); "
          f"import cycles: {len(cycles)}")

    ir = ir_module(trees)
    print(f"\nisinstance domain ladders (domain classes of {ir})")
    if ir is None:
        print("  no module defines the IR's Domain and Range classes")
    else:
        calls = {name: domain_isinstance(name, known[name], trees[name], ir, known) for name in known}
        total = sum(len(found) for found in calls.values())
        print(f"  {total} isinstance calls name a domain class, in {sum(1 for f in calls.values() if f)} modules")
        for cls in DOMAIN_CLASSES:
            where = Counter(name for name, found in calls.items() for classes in found if cls in classes)
            print(f"  {cls:12s} {sum(where.values()):3d} in {len(where):2d} files")

    print()
    print(duplicates_line(root))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
