"""The GEMM matrix: C and CP-SAT agree on the paper's space at every setting combination and on
every device; on the scaled-down device, C optimized, C literal and the reference list the same
configurations in the same order."""
import itertools

import pytest

from solverspace.gemm.devices import DEVICES
from solverspace.validation import validate

pytest.importorskip("cffi")

COMBOS = [dict(precision=p, arithmetic=a, trans_a=ta, trans_b=tb)
          for p, a, ta, tb in itertools.product(["single", "double"], ["real", "complex"], [0, 1], [0, 1])]
OPTIONS = {"threads": 2, "samples": 10}


def _id(combo: dict) -> str:
    return f"{combo['precision']}-{combo['arithmetic']}-{'NT'[combo['trans_a']]}{'NT'[combo['trans_b']]}"


def _cpsat():
    try:
        from solverspace.registry.backends import get_backend
        get_backend("cpsat")
    except Exception as exc:  # OR-Tools missing
        pytest.skip(f"CP-SAT backend unavailable: {exc}")


def _agree(report, backends):
    assert report.status == 0, report.render()
    ran = [o for o in report.outcomes if o.ran and o.backend != "sample"]
    assert sorted(o.backend for o in ran) == sorted(backends), report.render()
    return ran[0].count


@pytest.mark.parametrize("combo", [COMBOS[0], COMBOS[-1]], ids=_id)
def test_tiny_device_c_optimized_literal_and_reference_list_the_same(combo):
    report = validate("gemm", settings={"device": "tiny", **combo}, backends=("c", "c-literal", "reference"),
                      **OPTIONS)
    assert _agree(report, ("c", "c-literal", "reference")) > 0
    assert len({o.order for o in report.outcomes}) == 1  # same rows in the same order


@pytest.mark.slow
@pytest.mark.parametrize("combo", COMBOS, ids=_id)
def test_tiny_device_every_combination_all_backends(combo):
    _cpsat()
    report = validate("gemm", settings={"device": "tiny", **combo}, cpsat_options={"workers": 2}, **OPTIONS)
    assert _agree(report, ("c", "c-literal", "cpsat", "reference")) > 0
    assert len({o.digest for o in report.outcomes if o.digest is not None}) == 1


@pytest.mark.slow
@pytest.mark.parametrize("combo", COMBOS, ids=_id)
def test_k40c_c_and_cpsat_counts_agree(combo):
    _cpsat()
    report = validate("gemm", settings={"device": "k40c", **combo}, backends=("c", "cpsat"),
                      cpsat_options={"workers": 2}, listing=False, **OPTIONS)
    count = _agree(report, ("c", "cpsat"))
    if combo == COMBOS[8]:  # double-real-NN: the paper's space
        assert count == 1_207_600


@pytest.mark.slow
@pytest.mark.parametrize("device", sorted(DEVICES))
def test_every_device_double_real_nn_c_and_cpsat_counts_agree(device):
    _cpsat()
    report = validate("gemm", settings={"device": device}, backends=("c", "cpsat"),
                      cpsat_options={"workers": 2}, listing=False, **OPTIONS)
    _agree(report, ("c", "cpsat"))


@pytest.mark.slow
def test_cli_validate_gemm_k40c_prints_agreement_with_count_and_times(capsys):
    _cpsat()
    from solverspace.cli import main
    status = main(["validate", "gemm", "--threads", "2"])
    out = capsys.readouterr().out
    assert status == 0, out
    verdict = out.strip().splitlines()[-1]
    assert verdict.startswith("verdict: AGREE: c (") and "cpsat (" in verdict and "count 1,207,600" in verdict
    table = {line.split()[0]: line.split() for line in out.splitlines()[2:7]}
    assert table["c"][1] == table["cpsat"][1] == "1,207,600"
    assert float(table["c"][4]) > 0 and float(table["cpsat"][4]) > 0  # the seconds column
