"""The pruning funnel: C counters agree with the reference; counts are consistent; pictures."""
import json
import os
import shutil

import pytest

from solverspace import Space
from solverspace.analysis.funnel import reference_funnel

needs_cc = pytest.mark.skipif(shutil.which(os.environ.get("CC", "gcc")) is None, reason="no C compiler")
GEMM_CONSTRAINTS = 12


def c_funnel(space, threads=2):
    from solverspace.translators.c.backend import CEnumerator
    return CEnumerator(space.plan, threads=threads, funnel=True).funnel()


def assert_consistent(funnel, space):
    assert funnel.count == space.count("c") if shutil.which("gcc") else space.count("reference")
    for c in funnel.constraints:
        assert c.reached == c.kept + c.rejected + c.undefined
        assert 0 <= c.alone <= c.rejected
    # within a loop, the candidates that pass one constraint are those that reach the next
    by_level = {}
    for c in funnel.constraints:
        by_level.setdefault(c.level, []).append(c)
    for constraints in by_level.values():
        for first, second in zip(constraints, constraints[1:]):
            assert first.kept == second.reached


@needs_cc
@pytest.mark.parametrize("settings", [
    {"device": "tiny", "precision": "single"},
    {"device": "tiny", "precision": "double", "arithmetic": "complex", "trans_a": 1},
    {"device": "tiny", "precision": "single", "arithmetic": "complex", "trans_b": 1},
])
def test_c_funnel_equals_reference_on_scaled_down_gemm(settings):
    space = Space.load("gemm", settings)
    reference = reference_funnel(space.plan)
    assert json.loads(c_funnel(space).to_json()) == json.loads(reference.to_json())
    assert_consistent(reference, space)
    assert len(reference.constraints) == GEMM_CONSTRAINTS


SOURCE = """
a = range(-4, 6)
b = range(-3, 4)
require(b != 0)
require(a % b != 1)
reject_if(a // b > 2)
reject_if((a > 3) & (b > 0))
@require
def guarded(a, b):
    return 12 // (a - b) < 5
"""


@needs_cc
def test_undefined_and_redundancy_are_counted_like_the_reference():
    space = Space.from_source(SOURCE)
    reference = reference_funnel(space.plan)
    assert json.loads(c_funnel(space, threads=1).to_json()) == json.loads(reference.to_json())
    guarded = next(c for c in reference.constraints if c.name == "guarded")
    assert guarded.undefined > 0
    assert_consistent(reference, space)


@needs_cc
def test_k40c_funnel_lists_all_constraints_consistently():
    space = Space.load("gemm")
    funnel = c_funnel(space)
    assert sorted(c.name for c in funnel.constraints) == sorted(c.name for c in space.model.constraints)
    assert funnel.count == 1_207_600
    assert_consistent(funnel, space)
    redundant = {c.name for c in funnel.constraints if c.alone == 0}
    assert redundant == {"over_max_regs_per_block", "over_max_shmem"}


def test_funnel_cli_table_and_json(capsys):
    from solverspace.cli import main
    assert main(["funnel", "gemm", "--set", "device=tiny", "--backend", "reference", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["count"] == 336 and len(data["constraints"]) == GEMM_CONSTRAINTS
    assert main(["funnel", "gemm", "--set", "device=tiny", "--backend", "reference"]) == 0
    out = capsys.readouterr().out
    assert "redundant here" in out and "valid configurations: 336" in out


def test_pictures_name_every_parameter_and_constraint(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from solverspace.cli import main
    funnel_svg, dag_svg = tmp_path / "funnel.svg", tmp_path / "dag.svg"
    assert main(["funnel", "gemm", "--set", "device=tiny", "--backend", "reference", "--plot", str(funnel_svg)]) == 0
    assert main(["explain", "gemm", "--plot", str(dag_svg)]) == 0
    space = Space.load("gemm")
    funnel_text, dag_text = funnel_svg.read_text(), dag_svg.read_text()
    for c in space.model.constraints:
        assert c.name in funnel_text and c.name in dag_text
    for p in space.parameters:
        assert p in dag_text
    assert funnel_svg.stat().st_size > 10_000 and dag_svg.stat().st_size > 10_000
    png = tmp_path / "dag.png"
    assert main(["explain", "gemm", "--set", "device=tiny", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plotting_without_matplotlib_names_the_extra(monkeypatch, tmp_path):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    from solverspace.core.errors import SolverspaceError
    from solverspace.analysis.pictures import plot_dag
    with pytest.raises(SolverspaceError, match=r"solverspace\[plot\]"):
        plot_dag(Space.load("gemm").plan, tmp_path / "x.svg")
