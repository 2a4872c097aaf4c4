"""The installed shape: one top-level import package, `solverspace`, and the built-in space
working from an installed wheel (not only from the checkout)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("solverspace", "translators", "gemm", "validation", "pyproject.toml", "README.md")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built from a copy of the sources (an in-tree build would leave
    build/ and *.egg-info in the checkout)."""
    pytest.importorskip("setuptools")
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)
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
    for module in ("translators/c/backend.py", "translators/cpsat/backend.py", "gemm/space.py", "gemm/devices.py",
                   "validation/validate.py"):
        assert f"solverspace/{module}" in names
    top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt")) if any(
        n.endswith("top_level.txt") for n in names) else None
    if top_level:
        assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["solverspace"]


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
