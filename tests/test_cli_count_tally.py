"""The command line's strict mode answers as `Space.count(strict=True)` does, whatever is already
built: `--strict` under auto is the literal plan's walk in `count`, `enumerate`, `sweep` and the
Dask engine (C's optimized plan may never meet the undefined operation the literal plan meets, so
once the module was built a strict run passed where a first one failed); `count`'s undefined tally
says which walk it counts (`tally` in `--json`)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from solverspace import Space
from solverspace.cli import main
from solverspace.core.errors import SolverspaceError
from solverspace.translators.errors import UnsupportedConstruct
from solverspace.validation.generate import spaces

pytest.importorskip("cffi")

# the reference meets two divisions by zero; C's optimized plan meets neither (a generated space)
MISSED_BY_THE_OPTIMIZED_PLAN = """\
S = 1
p0 = range(2, max(6, 3), 2)
require(p0 != 4)
r0 = p0 / if_then_else(abs(p0) / (p0 - 4) < p0 / (p0 - 4), p0, p0) + 0
c1 = require(p0 < 2)
d1 = S
d1 = d1 + p0
if S > 0:
    d1 = d1 * 0
r2 = ((1 < p0) + 2) / (min(p0, 2) - 2) + 0
c2 = require(d1 > p0)
"""


def count(capsys, *argv) -> tuple[int, dict | None]:
    code = main(["count", *map(str, argv)])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(out[-1]) if code == 0 and "--json" in argv else None


def strict_answer(call):
    try:
        return call()
    except SolverspaceError as error:
        return type(error).__name__


def test_strict_fails_before_and_after_the_module_is_built(tmp_path, capsys):
    path = tmp_path / "space.py"
    path.write_text(MISSED_BY_THE_OPTIMIZED_PLAN)
    space = Space.load(str(path))
    assert space.stats("reference").undefined == 2 and space.stats("c").undefined == 0   # the two walks differ
    assert count(capsys, path, "--strict")[0] == 2
    space.to_array("c")                                                                  # the module is built now
    assert count(capsys, path, "--strict")[0] == 2
    code, answer = count(capsys, path, "--json")
    assert code == 0 and answer["count"] == 0
    assert (answer["undefined"], answer["tally"]) in ((2, "literal plan"), (0, "optimized plan"))
    assert count(capsys, path, "--literal", "--json")[1]["undefined"] == 2


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                                 HealthCheck.function_scoped_fixture])
@given(spaces())
def test_count_strict_answers_as_the_api_with_the_module_built(tmp_path, capsys, source):
    path = tmp_path / "generated.py"
    path.write_text(source)
    try:
        space = Space.load(str(path))
        expected = strict_answer(lambda: space.count("reference", strict=True))
        space.to_array("c")
    except (SolverspaceError, UnsupportedConstruct):   # refused at load or by C: not this test's concern
        return
    code = main(["count", str(path), "--strict", "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    if isinstance(expected, str):
        assert code == 2, out
    else:
        assert code == 0 and json.loads(out[-1])["count"] == expected


def test_enumerate_strict_fails_with_the_module_built(tmp_path, capsys):
    path = tmp_path / "space.py"
    path.write_text(MISSED_BY_THE_OPTIMIZED_PLAN)
    Space.load(str(path)).to_array("c")
    assert main(["enumerate", str(path), "--strict", "-o", str(tmp_path / "rows.csv")]) == 2
    assert "undefined operation" in capsys.readouterr().err


def test_sweep_strict_fails_with_the_module_built(tmp_path, capsys):
    path = tmp_path / "space.py"
    path.write_text(MISSED_BY_THE_OPTIMIZED_PLAN)
    Space.load(str(path)).to_array("c")
    Space.load(str(path), {"S": 1}).to_array("c")
    assert main(["sweep", str(path), "--set", "S=1", "--strict"]) == 2
    assert "undefined operation" in capsys.readouterr().err
    for backend, walk in (("c", "optimized plan"), ("reference", "literal plan")):
        assert main(["sweep", str(path), "--set", "S=1,2", "--backend", backend, "--json"]) == 0
        points = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [p["tally"] for p in points] == [walk, walk]
        assert [p["undefined"] for p in points] == ([0, 0] if backend == "c" else [2, 2])


def test_dask_engine_strict_fails_with_the_module_built(tmp_path, capsys):
    pytest.importorskip("distributed")
    path = tmp_path / "space.py"
    path.write_text(MISSED_BY_THE_OPTIMIZED_PLAN)
    Space.load(str(path)).to_array("c")
    assert main(["count", str(path), "--engine", "dask", "--workers", "1", "--strict", "-q"]) == 2
    assert "undefined operation" in capsys.readouterr().err
