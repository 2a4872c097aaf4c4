"""Wide ranges in the CP-SAT backend: a range is an interval, never a table (issue 11).

`range(10**12)` must be counted, checked and sampled without listing its values; a wide parameter
that constraints use only modulo a constant is counted by residue classes (`cpsat_wide`). The
residue path is also checked against the reference on small ranges, with its threshold lowered.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, given, settings

pytest.importorskip("ortools")

from solverspace.analysis.check import check as check_config  # noqa: E402
from solverspace.translators.cpsat.samplers import CpSatSampler  # noqa: E402
from solverspace.translators.cpsat import wide as cpsat_wide  # noqa: E402
from solverspace.translators.cpsat.backend import complete, count  # noqa: E402
from solverspace.validation.generate import wide_spaces  # noqa: E402
from solverspace.validation.validate import validate_source  # noqa: E402

from tests.helpers import per_configuration_p, space  # noqa: E402


@pytest.mark.parametrize("n", [10**8, 10**12, 10**30])  # 10**30: len() of it overflows
def test_an_unconstrained_wide_range_is_counted_as_its_length(n):
    """Counted, not enumerated: one CP-SAT solution (before, range(10**8) took minutes and 4 GB:
    one solution per value; range(10**12) never ended)."""
    result = count(space(f"p = range({n})\nq = range(3)\nrequire(q != 1)"), workers=1)
    assert (result.count, result.exact) == (2 * n, True)
    assert result.solutions <= 3


def test_a_wide_range_constrained_modulo_a_constant_is_counted_by_residue_classes():
    """At most one CP-SAT solution per residue class of 7, never one per value of `p`."""
    result = count(space("p = range(10**12)\nq = range(3)\nrequire(p % 7 == q)"), workers=1)
    assert result.count == sum(len(range(r, 10**12, 7)) for r in range(3))
    assert result.exact and result.solutions <= 7 and result.strategy.startswith("residues of p mod 7")


def test_counts_beyond_64_bits_stay_exact():
    s = space("a = range(10**12)\nb = range(-10**12, 10**12, 3)\nrequire(a % 2 == b % 2)")
    # every `a` has one parity class of `b` (half of it, by alternation): 5*10**11 * len(b)
    expected = 5 * 10**11 * len(range(-10**12, 10**12, 3))
    result = count(s, workers=1)
    assert result.count == expected and expected > 2**64 and result.exact


def test_a_constrained_range_beyond_64_bits_is_refused_by_name():
    from solverspace.translators.cpsat.backend import CpSatRefusal
    with pytest.raises(CpSatRefusal, match=r"range\(0, 10{30}\)` in parameter 'p'.*64-bit"):
        count(space("p = range(10**30)\nq = range(3)\nrequire(p % 7 == q)"), workers=1)


def test_a_wide_range_with_a_bound_constraint_is_not_listed():
    """Used directly (`p < 5`) it stays in the enumeration: 5 solutions, the range never listed."""
    result = count(space("p = range(10**12)\nrequire(p < 5)"), workers=1)
    assert result.count == 5 and result.solutions == 5


SMALL_WIDE = {
    "residue": "p = range(3, 200)\nq = range(10)\nrequire(p % 7 == q)",
    "two moduli": "p = range(-50, 120, 3)\nq = range(5)\nd = p % 4\nrequire(d != q)\nrequire(p % 6 > q)",
    "dependent domain": "p = range(500)\nr = range(p % 5)\nrequire(r + p % 3 > 2)",
    "negative modulus": "p = range(400, 0, -1)\nq = range(-3, 1)\nrequire(p % -4 == q)",
    "undefined": "p = range(300)\nq = range(4)\nd = q // (p % 3)\nrequire(d < 2)",
    "nested": "a = range(120)\nb = range(90)\nrequire(a % 2 == b % 3)",
}


@pytest.mark.parametrize("name", list(SMALL_WIDE))
def test_residue_counting_matches_the_reference(monkeypatch, name):
    monkeypatch.setattr(cpsat_wide, "WIDE_VALUES", 10)
    s = space(SMALL_WIDE[name])
    expected = s.stats("reference")
    got = count(s, workers=1)
    assert (got.count, got.undefined, got.undefined_by) == (expected.count, expected.undefined, expected.undefined_by)
    assert "residues" in got.strategy


@pytest.mark.parametrize("name", ["residue", "two moduli", "dependent domain"])
def test_residue_sampling_is_uniform(monkeypatch, name):
    monkeypatch.setattr(cpsat_wide, "WIDE_VALUES", 10)
    s = space(SMALL_WIDE[name])
    size = s.count("reference")
    sampler = CpSatSampler(s, threads=1, table_limit=0)
    assert sampler.size() == size
    configs = [tuple(r) for r in sampler.draw(30 * size, seed=3, replace=True).tolist()]
    assert set(configs) <= set(s.rows("reference"))
    assert per_configuration_p(s, configs) > 0.01


def test_sampling_a_wide_space_draws_without_listing():
    s = space("p = range(10**12)\nq = range(10)\nrequire(p % 7 == q)\nw = range(10**15)")
    drawn = CpSatSampler(s, threads=1).draw(20, seed=1, replace=False).tolist()
    assert len(drawn) == 20
    for p, q, w in drawn:
        assert p % 7 == q and 0 <= p < 10**12 and 0 <= w < 10**15
        assert check_config(s.plan, {"p": p, "q": q, "w": w}).valid


def test_partial_check_of_a_wide_space():
    s = space("p = range(10**12)\nq = range(10)\nrequire(p % 7 == q)")
    assert complete(s, {"q": 3}).feasible
    assert complete(s, {"p": 10**12 - 1}).completion["q"] == (10**12 - 1) % 7
    assert complete(s, {"q": 8}).feasible is False


#: Generated wide spaces validated by default (each compiles one C module: a few seconds).
WIDE_EXAMPLES = int(os.environ.get("SOLVERSPACE_WIDE_EXAMPLES", "20"))


@pytest.mark.needs_cc
@settings(max_examples=WIDE_EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate])  # no shrinking: each example compiles C
@given(wide_spaces())
def test_generated_wide_spaces_cpsat_counts_agree_with_c(tmp_path_factory, source):
    """Too big for the reference: C counts them (hoisting an untouched wide parameter, enumerating
    one used modulo a constant near 10**6 values), CP-SAT by summing out and residue classes."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVERSPACE_CACHE", str(tmp_path_factory.mktemp("c-cache")))
        report = validate_source(source, backends=("c", "cpsat"), listing=False,
                                 cpsat_options={"workers": 1, "time_limit": 120}, threads=2)
    outcomes = {o.backend: o for o in report.outcomes}
    assert report.status == 0, report
    assert outcomes["c"].count == outcomes["cpsat"].count


def test_describe_names_the_residue_classes():
    from solverspace.translators.cpsat.count import describe
    s = space("p = range(10**12)\nq = range(10)\nrequire(p % 7 == q)\nrequire(p % 3 != q % 3)")
    assert describe(s.plan) == "counted by residue classes: p (a wide range read only modulo 21): 21 sub-counts of q"
