"""The `auto` backend (issue 13): the compiled enumerator when its module is built or the space is
big, the reference (within a work budget) when nothing is compiled yet; the same answers either
way, and `answered_by` says which one answered."""
from __future__ import annotations

from pathlib import Path

import pytest

from solverspace import Space
from solverspace.registry.auto import AutoBackend
from solverspace.registry.backends import get_backend
from solverspace.analysis.reference import ReferenceEnumerator, WorkBudgetExceeded
from tests.helpers import CORPUS, SMALL

pytestmark = pytest.mark.needs_cc


def test_small_space_without_a_module_is_answered_by_the_reference(cache):
    space = Space.from_source(SMALL)
    auto = get_backend("auto", "count")
    assert space.count(auto) == space.count("reference")
    assert auto.answered_by == "reference"
    assert not list(cache.glob("*.so"))          # nothing was compiled


def test_built_module_is_used(cache):
    space = Space.from_source(SMALL)
    expected = space.count("c")                  # builds the module
    auto = get_backend("auto", "count")
    assert space.count(auto) == expected
    assert auto.answered_by == "c"


def test_space_past_the_budget_is_compiled(cache):
    space = Space.from_source(SMALL)
    auto = get_backend("auto", "count", budget=10)
    assert space.count(auto) == space.count("reference")
    assert auto.answered_by == "c"


def test_budget_counts_candidate_values():
    space = Space.from_source(SMALL)
    enumerator = ReferenceEnumerator(space.plan, budget=10 ** 9)
    enumerator.count()
    with pytest.raises(WorkBudgetExceeded):
        ReferenceEnumerator(space.plan, budget=enumerator.work - 1).count()
    assert ReferenceEnumerator(space.plan, budget=enumerator.work).count() == space.count("reference")


def test_at_the_budget_the_share_done_decides_whether_the_reference_goes_on(cache):
    """The walk so far estimates the whole: within the limit the reference finishes, past it C."""
    space = Space.from_source("a = range(1, 9)\nb = range(1, 9)\nc = range(1, 9)\nrequire((a + b * c) % 3 != 0)\n")
    whole = ReferenceEnumerator(space.plan, budget=10 ** 9)
    whole.count()
    seen = []

    def record(work, fraction):
        seen.append((work, fraction))
        return None

    with pytest.raises(WorkBudgetExceeded):
        ReferenceEnumerator(space.plan, budget=whole.work // 2, on_budget=record).count()
    (work, fraction), = seen
    assert 0 < fraction < 1 and whole.work / 4 < work / fraction < 4 * whole.work   # rough, not absurd
    fits = AutoBackend(budget=whole.work // 2, limit=4 * whole.work)
    assert space.count(fits) == space.count("reference") and fits.answered_by == "reference"
    too_big = AutoBackend(budget=whole.work // 2, limit=whole.work // 2 + 1)
    assert space.count(too_big) == space.count("reference") and too_big.answered_by == "c"


def test_an_estimate_that_was_too_low_still_stops_at_the_limit():
    space = Space.from_source(SMALL)
    whole = ReferenceEnumerator(space.plan, budget=10 ** 9)
    whole.count()
    with pytest.raises(WorkBudgetExceeded):
        ReferenceEnumerator(space.plan, budget=10, on_budget=lambda work, fraction: whole.work - 1).count()


@pytest.mark.parametrize("budget", [0, 10 ** 9], ids=["compiled", "reference"])
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "npy"])
def test_written_files_do_not_depend_on_the_choice(cache, tmp_path, budget, fmt):
    space = Space.load("gemm", {"device": "tiny"})
    auto = AutoBackend(budget)
    target, expected = tmp_path / f"auto.{fmt}", tmp_path / f"c.{fmt}"
    assert space.write(target, auto) == space.write(expected, "c")
    assert target.read_bytes() == expected.read_bytes()
    assert auto.answered_by == ("reference" if budget and fmt != "npy" else "c")


def test_a_write_stopped_by_the_budget_leaves_only_the_compiled_file(cache, tmp_path):
    space = Space.load("gemm", {"device": "tiny"})
    target = tmp_path / "rows.csv"
    auto = AutoBackend(budget=50)
    space.write(target, auto)
    assert auto.answered_by == "c"
    assert [p.name for p in tmp_path.iterdir() if p.name != "cache"] == ["rows.csv"]  # no partial file
    assert target.read_text().count("\n") == space.count("reference") + 1


@pytest.mark.parametrize("path", sorted(p for p in CORPUS.glob("*.py") if "past-64-bits" not in p.name),
                         ids=lambda p: p.stem)
@pytest.mark.parametrize("budget", [0, 10 ** 9], ids=["compiled", "reference"])
def test_corpus_counts_and_rows_agree_with_the_reference(cache, path, budget):
    space = Space.load(path)
    expected = space.stats("reference")
    auto = AutoBackend(budget)
    stats = space.stats(auto)
    assert stats.count == expected.count
    assert (stats.undefined > 0) == (expected.undefined > 0)  # the tally itself depends on the plan (README)
    assert list(space.rows(AutoBackend(budget))) == list(space.rows("reference"))


def test_cli_names_the_choice(cache, capsys):
    from solverspace.cli import main
    source = Path(cache.parent / "small.py")
    source.write_text(SMALL)
    assert main(["count", str(source)]) == 0
    assert "(auto: reference backend" in capsys.readouterr().out
    assert main(["count", str(source), "--backend", "c"]) == 0
    assert main(["count", str(source), "--json"]) == 0
    assert '"backend": "c"' in capsys.readouterr().out.splitlines()[-1]
