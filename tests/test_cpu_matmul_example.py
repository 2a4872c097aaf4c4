"""examples/cpu_matmul: the space loads and counts the same in every backend, the kernel computes
correct products, measure.py's command line works, the micro-kernel ceilings are measured for
every shape the space has, and the roofline bound parses and evaluates to positive exact values.
No test here looks at a wall-clock time."""
from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from solverspace import Space

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cpu_matmul"
SPACE = str(EXAMPLE / "space.py")
sys.path.insert(0, str(EXAMPLE))

import bound  # noqa: E402
import kernel  # noqa: E402
import measure  # noqa: E402
import peak  # noqa: E402

SMALL = {"N": 48}      # 48 = 2**4 * 3: every unroll factor still has tiles


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    # one build per test session, outside the checkout's build/ directory
    monkeypatch.setenv("CPU_MATMUL_CACHE", str(tmp_path_factory.getbasetemp() / "cpu_matmul"))


def test_space_loads_and_counts():
    reference = Space.load(SPACE).count("reference")
    assert reference > 1000
    assert 0 < Space.load(SPACE, SMALL).count("reference") < reference


@pytest.mark.needs_cc
def test_space_counts_agree_reference_and_c():
    for settings in ({}, SMALL, {"REGISTERS": 16}):
        space = Space.load(SPACE, settings)
        assert space.count("c", threads=2) == space.count("reference"), settings


@pytest.mark.needs_cpsat
def test_space_counts_agree_cpsat():
    space = Space.load(SPACE)
    assert space.count("cpsat", workers=1) == space.count("reference")


def test_every_configuration_is_one_the_kernel_runs():
    # the space's rules imply the kernel's: no configuration that measure.py would refuse
    for n in (48, 384):
        space = Space.load(SPACE, {"N": n})
        for row in space.rows("reference"):
            config = dict(zip(space.parameters, row))
            assert kernel.check_configuration(n, config["tile_i"], config["tile_j"], config["tile_k"],
                                              config["unroll_i"], config["unroll_j"]) is None, config
            kernel.order_indices(config["order"])


CONFIGS = [  # tile_i, tile_j, tile_k, unroll_i, unroll_j, order
    (48, 48, 48, 1, 1, "ijk"),
    (24, 48, 48, 8, 3, "k>j>i"),
    (12, 16, 48, 6, 2, "jki"),
    (48, 32, 48, 4, 4, "ikj"),
]


@pytest.mark.needs_cc
@pytest.mark.parametrize("config", CONFIGS)
def test_kernel_computes_the_product(config):
    n = 96
    m = kernel.load()
    A, B = measure.operands(n, seed=3)
    assert kernel.check_configuration(n, *config[:5]) is None
    C = np.full((n, n), np.nan, np.float32)
    kernel.multiply(m, A, B, C, *config)
    assert measure.error(A, B, C) <= 1.0
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-4, atol=1e-4)


@pytest.mark.needs_cc
def test_kernel_refuses_what_it_cannot_run():
    m = kernel.load()
    A, B = measure.operands(48)
    C = np.zeros((48, 48), np.float32)
    with pytest.raises(ValueError, match="tile_i=5 does not divide"):
        kernel.multiply(m, A, B, C, 5, 48, 48, 1, 1, "ijk")
    with pytest.raises(ValueError, match="not compiled"):
        kernel.multiply(m, A, B, C, 48, 48, 48, 3, 1, "ijk")
    with pytest.raises(ValueError, match="loop order"):
        kernel.multiply(m, A, B, C, 48, 48, 48, 1, 1, "iik")


@pytest.mark.needs_cc
def test_measure_command_prints_a_time_last(tmp_path):
    run = subprocess.run([sys.executable, str(EXAMPLE / "measure.py"), "24", "48", "48", "8", "3", "ikj",
                          "--n", "48", "--repeat", "2", "--min-seconds", "0"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert float(run.stdout.split()[-1]) > 0
    bad = subprocess.run([sys.executable, str(EXAMPLE / "measure.py"), "5", "48", "48", "1", "1", "ijk", "--n", "48"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "does not divide" in bad.stderr


def test_bound_parses_and_is_positive():
    space, terms = bound.evaluator(SMALL)
    rows = list(space.rows("reference"))
    assert rows
    for row in rows[:: max(1, len(rows) // 25)]:
        t = terms(dict(zip(space.parameters, row)))
        assert all(isinstance(v, Fraction) and v > 0 for v in t.values())
        assert t["bound"] == max(t[name] for name in bound.TERMS)
    # the flop term is the same for every configuration: 2 N^3 / peak
    settings = {s.name: s.value for s in space.model.settings}
    assert t["flops"] == Fraction(2 * 48 ** 3, settings["PEAK_FLOPS"] * 10 ** 6)


def test_bound_text_is_what_the_readme_shows():
    readme = (EXAMPLE / "README.md").read_text()
    assert bound.BOUND in readme


def test_the_declared_cost_is_the_bound_of_bound_py():
    from solverspace.analysis.objective import parse_objective
    space = Space.load(str(SPACE))
    assert space.model.cost == parse_objective(space.model, bound.BOUND)


def test_the_reference_machine_has_a_ceiling_for_every_shape_and_k_tile():
    import json
    record = json.loads((EXAMPLE / "reference_machine.json").read_text())
    table = {(mr, nr, tk): rate for mr, nr, tk, rate in record["kernel_rates"]}
    raw = {(mr, nr, tk): rate for mr, nr, tk, rate in record["kernel_ceilings"]}
    assert set(table) == {(mr, nr, tk) for mr, nr in kernel.UNROLLS for tk in (48, 96, 192, 384)}
    assert set(raw) == set(table)
    for key, rate in table.items():      # raised by the headroom and rounded up: never below
        assert isinstance(rate, int) and rate >= raw[key] * (1 + record["headroom_percent"] / 100)
        assert 0 < raw[key] <= record["figures"]["peak_flops_per_us"] * 1.05, key


def test_the_kernel_term_reads_the_ceiling_of_its_shape_and_k_tile():
    # a (unroll_i, unroll_j, tile_k) the table has: its rate; a k tile it has not (N = 48 has k
    # tiles of 6-48): the FMA peak, which bounds every shape
    space, terms = bound.evaluator(SMALL)
    settings = {s.name: s.value for s in space.model.settings}
    ceilings = {}
    seen = set()
    for row in space.rows("reference"):
        config = dict(zip(space.parameters, row))
        key = (config["unroll_i"], config["unroll_j"], config["tile_k"])
        if key in seen:
            continue
        seen.add(key)
        rate = space.check(config).derived["kernel_rate"]
        ceilings[key] = rate
        assert terms(config)["kernel"] == Fraction(2 * 48 ** 3, rate * 10 ** 6)
    import json
    path = EXAMPLE / "machine.json"
    record = json.loads((path if path.exists() else EXAMPLE / "reference_machine.json").read_text())
    table = {(mr, nr, tk): rate for mr, nr, tk, rate in record["kernel_rates"]}
    for (mr, nr, tk), rate in ceilings.items():
        assert rate == table.get((mr, nr, tk), settings["PEAK_FLOPS"]), (mr, nr, tk)
    assert any(key in table for key in ceilings) and any(key not in table for key in ceilings)


@pytest.mark.needs_cc
def test_peak_measures_a_ceiling_for_every_shape():
    ceilings = peak.kernel_ceilings([16], repeat=1, min_seconds=0)
    assert set(ceilings) == {(mr, nr, 16) for mr, nr in kernel.UNROLLS}
    assert all(rate > 0 for rate in ceilings.values())
