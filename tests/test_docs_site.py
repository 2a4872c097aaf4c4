"""The docs site's own code (docs/hooks/, run by `mkdocs build`): the nav's folder globs and the
doctest fences of the API reference; and mkdocs.yml's nav in its four parts. The build itself runs
in .ci/run (`mkdocs build --strict`)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def hook(name: str):
    """A module of docs/hooks/, loaded from its file (it is not a package of the project)."""
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_nav_glob_is_the_rest_of_the_folder(tmp_path):
    pytest.importorskip("mkdocs")
    for page in ("how-to/b.md", "how-to/a.md", "how-to/c.md", "ref/cli.md", "ref/x.md", "ref/api.md"):
        (tmp_path / page).parent.mkdir(exist_ok=True)
        (tmp_path / page).write_text("# t\n")
    nav = [{"How-to": ["how-to/*.md"]}, {"Ref": ["ref/cli.md", "ref/api.md", "ref/*.md"]}, {"Home": "index.md"}]
    config = hook("nav_glob").on_config({"nav": nav, "docs_dir": str(tmp_path)})
    assert config["nav"] == [{"How-to": ["how-to/a.md", "how-to/b.md", "how-to/c.md"]},
                             {"Ref": ["ref/cli.md", "ref/api.md", "ref/x.md"]}, {"Home": "index.md"}]


def test_nav_glob_that_matches_nothing_stops_the_build(tmp_path):
    pytest.importorskip("mkdocs")
    from mkdocs.exceptions import PluginError
    with pytest.raises(PluginError, match="'explanation/\\*.md' matches no page"):
        hook("nav_glob").on_config({"nav": [{"Explanation": ["explanation/*.md"]}], "docs_dir": str(tmp_path)})


def test_doctests_become_code_blocks():
    pytest.importorskip("griffe")
    text = ("Counts.\n\n    >>> space.count()\n    6\n    >>> [x\n    ... for x in y]\n    [('a', 1)]\n\nMore.\n\n"
            "```python\n>>> kept as written\n```")
    assert hook("griffe_docstrings").fenced_doctests(text) == (
        "Counts.\n\n    ```pycon\n    >>> space.count()\n    6\n    >>> [x\n    ... for x in y]\n    [('a', 1)]\n"
        "    ```\n\nMore.\n\n```python\n>>> kept as written\n```")


def test_grouped_arguments_become_one_line_each():
    pytest.importorskip("griffe")
    text = ("Does it.\n\nArgs:\n    backend: which.\n    strict, with_derived, **options: as `rows`,\n"
            "        at length.\n\n    seed: a seed; a, b: not an argument line.\n\nReturns:\n    x, y: kept.")
    assert hook("griffe_docstrings").split_grouped_arguments(text) == (
        "Does it.\n\nArgs:\n    backend: which.\n"
        "    strict: as `rows`,\n        at length.\n    with_derived: as `rows`,\n        at length.\n"
        "    **options: as `rows`,\n        at length.\n"
        "\n    seed: a seed; a, b: not an argument line.\n\nReturns:\n    x, y: kept.")


def test_nav_has_home_four_parts_and_benchmarks():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert [next(iter(item)) for item in config["nav"]] == [
        "Home", "Tutorial", "How-to guides", "Reference", "Explanation", "Benchmarks"]
    reference = next(item["Reference"] for item in config["nav"] if "Reference" in item)
    assert reference[:2] == ["reference/cli.md", "reference/api.md"]
    assert "docs/hooks/cli_reference.py" in config["hooks"]


def test_api_reference_documents_every_export():
    """docs/reference/api.md has a `::: path` entry for every name `solverspace` exports and for
    the integrations' entry points, so a new export cannot be left out of the reference."""
    import solverspace
    entries = [line[4:].strip() for line in (ROOT / "docs" / "reference" / "api.md").read_text().splitlines()
               if line.startswith("::: ")]
    documented = {entry.rsplit(".", 1)[-1] for entry in entries}
    missing = [name for name in solverspace.__all__ + ["SolverspaceSampler", "suggest", "tune_kernel", "run_kernel"]
               if name not in documented]
    assert not missing, f"add to docs/reference/api.md: {missing}"
