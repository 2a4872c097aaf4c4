"""Random spaces from `validation.generate.spaces()` through every backend, and the corpus of
spaces on which backends once disagreed (or crashed), replayed on every run.

Cost model: running a generated space is cheap everywhere (the reference enumerator and CP-SAT
take a few milliseconds); compiling it to C is not (about 0.4 s a module, and the optimized and
literal plans are two modules unless they print the same C). So the default run validates
`CI_EXAMPLES` spaces with the reference and CP-SAT, and some of them also with C optimized, C
literal and the sampler (drawn with probability `C_PERCENT`%; Hypothesis favours the small draws
that select C, so in practice about 40%, ~130 of 300 spaces, about two minutes on two cores), compiling in worker processes (`validation.parallel`) while
CP-SAT and the reference run; which spaces get C is part of the drawn example, so a failing
space keeps its C run while Hypothesis shrinks it. The examples are derandomized: every run
validates the same spaces. `-m slow` runs `SLOW_EXAMPLES` spaces with every backend on each,
including spaces that use `/` where the C backend refuses it.

A failing space is shrunk by Hypothesis; the smallest failing space of each kind of failure is
written to `tests/corpus/` (commit it), where `test_corpus_space` replays it on every run.
"""
from __future__ import annotations

import hashlib
import os
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solverspace import Space
from solverspace.validation.census import EVERY, PAST_CPSAT_DOMAINS, constructs
from solverspace.validation.generate import spaces
from solverspace.validation.minimize import signature
from solverspace.validation.validate import validate_source

pytest.importorskip("cffi")

CORPUS = Path(__file__).parent / "corpus"
CI_EXAMPLES = int(os.environ.get("SOLVERSPACE_VALIDATION_EXAMPLES", "300"))
SLOW_EXAMPLES = int(os.environ.get("SOLVERSPACE_VALIDATION_SLOW_EXAMPLES", "2000"))
C_PERCENT = 25
WIDE = 0.03   # share of spaces ending in a wide block (a count past 2**64: C and CP-SAT count, nothing lists)
PRODUCTS = 0.1   # share of spaces ending in a product equality (`a * b == c`: the C walks' divisor loops)
ALL = ("c", "c-literal", "cpsat", "reference", "sample")
WITHOUT_C = ("cpsat", "reference")
OPTIONS = {"cpsat_options": {"workers": 1}, "threads": 2}
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


@pytest.fixture(scope="module")
def builder(tmp_path_factory):
    """C modules go to a fresh cache (thousands of throwaway modules stay out of the user's
    cache, and the timing is a cold-cache CI's), compiled by two worker processes."""
    from solverspace.validation.parallel import Builder
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVERSPACE_CACHE", str(tmp_path_factory.mktemp("c-cache")))
        with Builder(workers=2) as pool:
            yield pool


class Run:
    """Validates generated spaces; remembers the smallest failing space of each kind."""

    def __init__(self, builder):
        self.builder = builder
        self.tally: Counter = Counter()
        self.census: Counter = Counter()   # how many spaces contain each construct of validation.census
        self.failures: dict[tuple, str] = {}
        self.involved: set[str] | None = None   # once a space fails: the backends it involves
        self.start = time.perf_counter()

    def __call__(self, source: str, backends) -> None:
        if self.involved is not None:  # shrinking: run only what the failure needs (C compiles are slow)
            backends = tuple(b for b in backends if b in self.involved)
        report = validate_source(source, backends=backends, builder=self.builder, **OPTIONS)
        self.tally["spaces"] += 1
        counts = [o.count for o in report.outcomes if o.ran and o.count is not None]
        self.census.update(constructs(Space.from_source(source).model, source, max(counts, default=None)))
        for o in report.outcomes:
            self.tally[f"{o.backend} {o.status}"] += 1
        listed = [o for o in report.outcomes if o.ran and o.digest is not None]
        if len(listed) >= 2:
            self.tally["sets compared"] += 1
            if listed[0].count:
                self.tally["non-empty sets compared"] += 1
        failed = [o for o in report.outcomes if o.status == "failed"]
        if report.status == 1 or failed:
            key = signature(report)
            if key not in self.failures or len(source) < len(self.failures[key]):
                self.failures[key] = source
            if self.involved is None:
                self.involved = _involved(report)
        assert report.status != 1, report.render()
        assert not failed, report.render()

    def save_failures(self) -> list[Path]:
        """Write the smallest failing space of each kind to the corpus."""
        saved = []
        CORPUS.mkdir(exist_ok=True)
        for key, source in self.failures.items():
            report = validate_source(source, **OPTIONS)
            kind = "disagree" if report.status == 1 else "crash"
            name = f"{kind}-{hashlib.sha1(source.encode()).hexdigest()[:10]}.py"
            path = CORPUS / name
            header = ["# Found by tests/test_validation_generated.py (validation.generate.spaces), shrunk by Hypothesis.",
                      f"# {report.verdict}"]
            header += [f"# {o.backend}: {o.status}" + (f" ({o.note})" if o.note else "")
                       + (f", count {o.count}" if o.count is not None else "") for o in report.outcomes]
            path.write_text("\n".join(_comment(h) for h in header) + "\n" + source)
            saved.append(path)
        return saved

    def summary(self) -> str:
        return f"{self.tally['spaces']} spaces in {time.perf_counter() - self.start:.1f} s: " + \
            ", ".join(f"{k} {v}" for k, v in sorted(self.tally.items()) if k != "spaces") + \
            "; spaces containing: " + ", ".join(f"{k} {self.census[k]}" for k in EVERY)


def _involved(report) -> set[str]:
    """The backends a failing report needs to fail again: the reference, those that failed, and
    those whose count, digest or undefined tally differ from the reference's."""
    ref = report.outcome("reference")
    involved = {"reference"} | {o.backend for o in report.outcomes if o.status == "failed"}
    for o in report.outcomes:
        if o.ran and ref is not None and ref.ran and o.backend != "sample" and (
                o.count != ref.count or (o.digest is not None and o.digest != ref.digest)
                or (o.plan_exact and o.undefined != ref.undefined)):
            involved.add(o.backend)
    if any("sampler" in p for p in report.problems):
        involved |= {"sample", "c"}
    return involved


def _comment(line: str) -> str:
    return "# " + re.sub(r"\s+", " ", line.lstrip("# "))


def _drive(run: Run, test) -> None:
    try:
        test()
    finally:
        saved = run.save_failures() if run.failures else []
        print(run.summary())
        for path in saved:
            print(f"saved {path}")


def test_generated_spaces_agree(builder):
    run = Run(builder)

    @settings(max_examples=CI_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=HEALTH)
    @given(source=spaces(c_compatible=True, wide=WIDE, products=PRODUCTS),
           with_c=st.integers(0, 99).map(lambda v: v < C_PERCENT))
    def check(source, with_c):
        run(source, ALL if with_c else WITHOUT_C)

    _drive(run, check)
    # the run really compared something: reference against CP-SAT on most spaces, and full sets
    # of rows (reference, C optimized, C literal) on about a quarter of them
    # (the reference lists every space but the wide blocks', which it skips with a reason)
    assert run.tally["reference ok"] + run.tally["reference skipped"] == run.tally["spaces"]
    assert run.tally["cpsat ok"] >= 0.9 * run.tally["spaces"]
    assert run.tally["sets compared"] >= 0.15 * run.tally["spaces"]
    assert run.tally["non-empty sets compared"] >= 0.05 * run.tally["spaces"]
    # and the constructs that once hid wrong answers are still generated (validation.census)
    if run.tally["spaces"] >= 300:
        missing = [c for c in EVERY if run.census[c] < 3]
        assert not missing, f"the generator no longer produces: {missing}; {run.summary()}"


HUGE_EXAMPLES = 40


def test_generated_spaces_with_values_past_cpsat_domains_agree(builder):
    """Spaces ending in a derived value and a constraint past 2**60 (`spaces(huge=1)`): the
    reference answers with exact integers; CP-SAT, and C past its 64-bit types, refuse by name
    (declined), or answer as the reference does; never a crash (once a `min` of such a product
    crashed OR-Tools)."""
    run = Run(builder)

    @settings(max_examples=HUGE_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=HEALTH)
    @given(source=spaces(c_compatible=True, huge=1.0), with_c=st.integers(0, 99).map(lambda v: v < C_PERCENT))
    def check(source, with_c):
        run(source, ALL if with_c else WITHOUT_C)

    _drive(run, check)
    assert run.census[PAST_CPSAT_DOMAINS] >= HUGE_EXAMPLES // 2, run.summary()
    assert run.tally["cpsat declined"] >= HUGE_EXAMPLES // 4, run.summary()


@pytest.mark.slow
def test_thousands_of_generated_spaces_agree(builder):
    run = Run(builder)

    @settings(max_examples=SLOW_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=HEALTH)
    @given(source=spaces(max_parameters=5, max_candidates=4000, c_compatible=False, wide=WIDE, products=PRODUCTS))
    def check(source):
        run(source, ALL)

    _drive(run, check)
    assert run.tally["sets compared"] >= 0.7 * run.tally["spaces"]


CORPUS_FILES = sorted(CORPUS.glob("*.py")) if CORPUS.is_dir() else []


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_corpus_space(path):
    """A space on which backends once disagreed or crashed: every backend that runs now agrees."""
    report = validate_source(path.read_text(), label=str(path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd())
                                                       else path), **OPTIONS)
    assert report.status != 1, report.render()
    assert not [o for o in report.outcomes if o.status == "failed"], report.render()
    assert report.status == 0, report.render()
