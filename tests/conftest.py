"""Markers and fixtures every test file shares (plain helpers live in `tests/helpers.py`): a test
marked `needs_cc`, `needs_cpsat` or `needs_pyarrow` is skipped, with the reason, where this machine
lacks a C compiler, OR-Tools or pyarrow; the `cache` fixture gives a test an empty module cache.

    pytestmark = pytest.mark.needs_cc          # a whole file
    @pytest.mark.needs_cpsat                   # one test
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

# No detached background builds from the tests (solverspace/registry/background.py): they would outlive the
# test and its temporary cache directory. tests/test_background.py turns them on where it means to.
os.environ["SOLVERSPACE_BACKGROUND_BUILD"] = "0"

AVAILABLE = {
    "needs_cc": (lambda: shutil.which(os.environ.get("CC", "gcc")) is not None, "no C compiler"),
    "needs_cpsat": (lambda: importlib.util.find_spec("ortools") is not None, "OR-Tools is not installed"),
    "needs_pyarrow": (lambda: importlib.util.find_spec("pyarrow") is not None,
                      "pyarrow (the `parquet` extra) is not installed"),
}


# Generated spaces (validation/generate.py, and the corpus it fills) compare categorical parameters
# with values they never take on purpose: that such an `==` is always False is part of what they
# test. The loader's note about it (`lint.categorical_typos`, a SolverspaceWarning) is expected in
# the test files that draw them, and only there: everywhere else it is still shown.
GENERATED_SPACE_NOTE = pytest.mark.filterwarnings(
    r"ignore:.*never takes \((==|!=) is always:solverspace.core.errors.SolverspaceWarning")


def draws_generated_spaces(module) -> bool:
    """Whether a test module takes spaces from the generator (imports from `validation.generate`)."""
    try:
        return "validation.generate import" in Path(module.__file__).read_text(encoding="utf-8")
    except (AttributeError, TypeError, OSError):
        return False


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty module cache of the test's own (`SOLVERSPACE_CACHE`), and no compiled module held in
    memory from an earlier test: nothing is built or loaded until the test does it. A whole file
    asks for it with `pytestmark = pytest.mark.usefixtures("cache")`."""
    from solverspace.translators.c.backend import CEnumerator  # loaded only where a test asks
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(tmp_path / "cache"))
    CEnumerator.clear_cache()
    yield tmp_path / "cache"
    CEnumerator.clear_cache()


@pytest.fixture
def spawned(monkeypatch):
    """Background builders are recorded, not started: the test runs `background.run` itself."""
    from solverspace.registry import background
    calls = []
    monkeypatch.setattr(background, "spawn_builder", lambda folder: calls.append(folder))
    return calls


def pytest_collection_modifyitems(config, items):
    drawn: dict = {}
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and drawn.setdefault(module.__name__, draws_generated_spaces(module)):
            item.add_marker(GENERATED_SPACE_NOTE)


def pytest_configure(config):
    for name, (_, reason) in AVAILABLE.items():
        config.addinivalue_line("markers", f"{name}: skipped where {reason.replace('no ', 'there is no ')}")


def pytest_runtest_setup(item):
    for name, (available, reason) in AVAILABLE.items():
        if item.get_closest_marker(name) is not None and not available():
            pytest.skip(reason)


@pytest.fixture(scope="module")
def toy_cache(tmp_path_factory):
    """A complete Kernel Tuner cache of the toy space (simulation mode: max_threads 1e9), times from a
    model with seeded noise."""
    import json
    import random

    from solverspace.integrations.kernel_tuner.searchspace import build_space
    from tests.helpers import TOY, TOY_RESTRICTIONS
    space, _, _ = build_space(TOY, TOY_RESTRICTIONS, 10 ** 9)
    rng = random.Random(0)
    names = list(TOY)
    cache = {}
    for row in space.rows("reference"):
        c = dict(zip(names, row))
        t = 1 + abs(c["block_size_x"] * c["block_size_y"] - 256) / 100 + 1 / c["tile_x"] + rng.random() * 0.1
        cache[",".join(map(str, row))] = {**c, "time": t, "times": [t], "compile_time": 1.0, "verification_time": 0,
                                          "benchmark_time": t}
    path = tmp_path_factory.mktemp("kt") / "toy.json"
    path.write_text(json.dumps({"device_name": "Simulation", "kernel_name": "toy", "problem_size": [1024],
                                "tune_params_keys": names, "tune_params": TOY, "objective": "time", "cache": cache}))
    return path, space, {k: v["time"] for k, v in cache.items()}
