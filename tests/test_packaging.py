"""The installed shape: one top-level import package, `solverspace`, and the built-in space
working from an installed wheel (not only from the checkout); and what a user installing the
package expects: a LICENSE matching the declared license, `py.typed` shipped with the package,
classifiers, and one version, written once (solverspace/__init__.py) and read from there by the
build without importing the package, so a checkout without install and an installed copy say
the same."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import solverspace

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("solverspace", "translators", "gemm", "validation", "pyproject.toml", "README.md", "LICENSE")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def copy_sources(target: Path) -> None:
    """The files a build reads, copied to `target` (a build in the checkout would leave
    build/ and *.egg-info there)."""
    target.mkdir(exist_ok=True)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, target / name)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built from a copy of the sources (an in-tree build would leave
    build/ and *.egg-info in the checkout)."""
    pytest.importorskip("setuptools")
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    copy_sources(source)
    try:  # setuptools builds wheels itself since 70.1; an older one builds in an isolated environment
        import setuptools.command.bdist_wheel  # noqa: F401
        isolation = ["--no-build-isolation"]
    except ImportError:
        isolation = []
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation,
                            "-w", str(work / "dist"), str(source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = (work / "dist").glob("solverspace-*.whl")
    return found


def test_the_wheel_has_one_top_level_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"solverspace"}
    for module in ("py.typed", "translators/c/backend.py", "translators/cpsat/backend.py", "gemm/space.py", "gemm/devices.py",
                   "validation/validate.py"):
        assert f"solverspace/{module}" in names
    top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt")) if any(
        n.endswith("top_level.txt") for n in names) else None
    if top_level:
        assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["solverspace"]
    version = solverspace.__version__
    assert wheel.name.startswith(f"solverspace-{version}-")
    assert any(n.endswith(".dist-info/LICENSE") or n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_builtin_space_counts_from_the_installed_wheel(wheel, tmp_path):
    """`Space.load("gemm")` and the space file's own import of its device table, from the
    installed files alone (run outside the checkout; dependencies from this environment)."""
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=str(target), SOLVERSPACE_CACHE=str(tmp_path / "cache"))
    where = subprocess.run([sys.executable, "-c", "import solverspace.translators, solverspace.gemm.devices as d; "
                            "print(d.__file__)"], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert where.stdout.strip().startswith(str(target))
    backend = "c" if shutil.which(os.environ.get("CC", "gcc")) else "cpsat"
    result = subprocess.run([sys.executable, "-m", "solverspace", "count", "gemm", "--set", "device=tiny",
                             "--backend", backend, "--json"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert '"count": ' in result.stdout.splitlines()[-1]


def literal_version() -> str:
    """`__version__` as written in solverspace/__init__.py (a literal the build reads statically)."""
    tree = ast.parse((ROOT / "solverspace" / "__init__.py").read_text())
    found = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
             and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
             and isinstance(node.value, ast.Constant)]
    assert len(found) == 1, "one literal __version__ in solverspace/__init__.py"
    return found[0]


def test_the_license_file_is_the_declared_bsd_3_clause():
    text = (ROOT / "LICENSE").read_text()
    assert PYPROJECT["project"]["license"] == "BSD-3-Clause"        # an SPDX expression (PEP 639)
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    assert text.startswith("BSD 3-Clause License") and "the solverspace developers" in text
    assert "Neither the name of the copyright holder nor the names of its" in text   # clause 3
    # PEP 639: with a license expression, a License classifier is an error for the build
    assert not [c for c in PYPROJECT["project"]["classifiers"] if c.startswith("License ::")]


def test_the_version_is_written_once_and_read_from_the_package():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "solverspace.__version__"}
    assert solverspace.__version__ == literal_version()          # from a checkout, without install
    assert literal_version() in (ROOT / "CHANGELOG.md").read_text()


def test_the_package_is_typed_and_classified():
    assert (ROOT / "solverspace" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["solverspace"]
    classifiers = PYPROJECT["project"]["classifiers"]
    assert "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3 :: Only" in classifiers
    for extra in ("test", "dask", "optuna", "kerneltuner", "parquet"):
        assert extra in PYPROJECT["project"]["optional-dependencies"]


def test_a_source_distribution_ships_the_license_the_marker_and_the_version(tmp_path):
    """The build backend itself (setuptools), on a copy of the package's files: the version it
    reads, the license file and `py.typed` in the archive."""
    copy_sources(tmp_path)
    program = ("import warnings; warnings.simplefilter('ignore')\n"
               "from setuptools import build_meta\n"
               "print(build_meta.build_sdist('dist'))\n")
    (tmp_path / "dist").mkdir()
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    archive = tmp_path / "dist" / done.stdout.split()[-1]
    version = solverspace.__version__
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        info = tar.extractfile(f"solverspace-{version}/PKG-INFO").read().decode()
    assert {f"solverspace-{version}/LICENSE", f"solverspace-{version}/solverspace/py.typed"} <= names
    assert f"Version: {version}\n" in info and "License-File: LICENSE" in info
    assert "Classifier: Typing :: Typed" in info and "Author: the solverspace developers" in info
