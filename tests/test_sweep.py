"""`solverspace sweep` / `Space.sweep`: the count of every combination of settings, equal to
counting each combination on its own."""
from __future__ import annotations

import json

import pytest

from solverspace import Space
from solverspace.cli import main
from solverspace.core.errors import OptionError
from solverspace.scale.sweep import parse_grid

pytestmark = pytest.mark.needs_cc


def test_sweep_equals_one_count_per_combination():
    grid = {"device": ["tiny"], "precision": ["single", "double"], "arithmetic": ["real", "complex"]}
    points = list(Space.sweep("gemm", grid, "c", threads=1))
    assert [p.settings for p in points] == [{"device": "tiny", "precision": p, "arithmetic": a}
                                           for p in ("single", "double") for a in ("real", "complex")]
    for point in points:
        assert point.count == Space.load("gemm", point.settings).count("reference") and point.exact


def test_sweep_command_prints_a_table_or_json_lines(capsys):
    assert main(["sweep", "gemm", "--set", "device=tiny", "--set", "precision=single,double", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["settings"]["precision"], line["count"]) for line in lines] == [("single", 2000), ("double", 336)]
    assert main(["sweep", "gemm", "--set", "device=tiny", "--set", "precision=single,double"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["device", "precision", "count", "(seconds)"] and out[1].split()[:3] == ["tiny", "single", "2000"]


def test_bad_grids_are_refused_with_a_hint(capsys):
    for bad in (["precision"], ["precision="], ["precision=single,,double"], ["a=1", "a=2"]):
        with pytest.raises(OptionError):
            parse_grid(bad)
    assert main(["sweep", "gemm", "--set", "device=nope"]) == 2
    captured = capsys.readouterr()
    assert "not one of the allowed values" in captured.err and captured.out == ""
    assert main(["sweep", "gemm"]) == 2 and "at least one --set" in capsys.readouterr().err
