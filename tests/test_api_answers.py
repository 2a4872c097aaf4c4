"""An answer of the Python API does not depend on the backend that gives it: under the default
`auto` (the reference for a small space, the compiled enumerator once it is built), `count`,
`stats` (with its undefined-operation tally), `to_array` (values and column types) and strict
mode answer as the reference does, on generated spaces of the whole language; where no operation
can be undefined every backend's tally is empty; a space too big for the reference's tally is
answered by C's walk of the literal plan where that tally is empty, and refused with what
answers instead where it is not, never answered with another plan's tally."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from solverspace import Space
from solverspace.core.errors import SolverspaceError, UndefinedOperationError
from solverspace.registry.auto import TallyBeyondBudgetError, may_be_undefined
from solverspace.translators.errors import UnsupportedConstruct
from solverspace.validation.generate import spaces

pytest.importorskip("cffi")

HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


def tally(stats) -> tuple:
    return stats.count, stats.undefined, stats.undefined_by, stats.first_undefined


def answer(call):
    """What `call()` answers, or the type of error it raises (an answer too)."""
    try:
        return call()
    except SolverspaceError as error:
        return type(error)


def loaded(source: str) -> Space | None:
    try:
        return Space.from_source(source)
    except SolverspaceError:   # refused at load, before any backend: not this test's concern
        return None


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=HEALTH)
@given(spaces())
def test_auto_answers_as_the_reference(source):
    space = loaded(source)
    if space is None:
        return
    reference = answer(lambda: tally(space.stats("reference")))
    if isinstance(reference, type):
        return
    assert tally(space.stats()) == reference
    assert answer(lambda: space.count(strict=True)) == answer(lambda: space.count("reference", strict=True))
    try:
        compiled = space.to_array("c")      # the module is built now: auto may answer compiled
    except (UnsupportedConstruct, SolverspaceError):
        compiled = None
    assert tally(space.stats()) == reference                     # ... and its tally is still the reference's
    assert space.count() == reference[0]
    assert answer(lambda: space.count(strict=True)) == answer(lambda: space.count("reference", strict=True))
    array = space.to_array()
    assert array.tolist() == space.to_array("reference").tolist()
    if compiled is not None:
        assert array.dtype == compiled.dtype == space.to_array("reference").dtype
        assert array.tolist() == compiled.tolist()
    if not may_be_undefined(space.plan):   # proven: every backend's tally is empty
        assert reference[1:] == (0, {}, None)
        for backend in ("c", "cpsat"):
            stats = answer(lambda: space.stats(backend))
            if not isinstance(stats, type):
                assert tally(stats)[:4] == reference


# 4 million candidates; undefined where a = 1999 only, the last value of the outer loop
BIG_DIVIDING = "a = range(0, 2000)\nb = range(0, 2000)\nrequire(b // (1999 - a) > 1)\n"


def test_a_tally_past_the_budget_is_refused_with_what_answers_instead():
    space = Space.from_source(BIG_DIVIDING)
    assert may_be_undefined(space.plan)
    with pytest.raises(TallyBeyondBudgetError) as refusal:
        space.stats()
    assert "may be undefined" in refusal.value.message and "space.count()" in refusal.value.hint
    assert f"{space.count('c'):,} valid configurations and 2,000 candidates lost" in refusal.value.message
    with pytest.raises(UndefinedOperationError):   # strict: the literal plan's walk meets one, compiled
        space.count(strict=True)


def test_past_the_budget_a_literal_walk_without_undefined_operations_answers_in_full():
    """A divisor that may be 0 but is guarded: C's literal walk (past the reference's budget)
    tallies nothing, so its answer is the reference's, field for field."""
    space = Space.from_source("a = range(0, 1000)\nb = range(0, 1000)\n"
                              "@require\ndef guarded(a, b):\n    return a == 0 or b // a > 1\n")
    assert may_be_undefined(space.plan)
    assert tally(space.stats()) == tally(space.stats("reference")) == (space.count("c"), 0, {}, None)


def test_the_count_needs_no_tally():
    """`count()` answers a space where an operation may be undefined at any size (the count is
    the same on every plan), as the command line's auto; `exact_tally=False` gives stats so."""
    space = Space.from_source(BIG_DIVIDING)
    expected = sum(1 for a in range(1999) for b in range(2000) if b // (1999 - a) > 1)
    assert space.count() == expected == space.stats(exact_tally=False).count


def test_a_strict_error_is_the_literal_plans():
    space = Space.from_source("x = range(0, 3)\ny = range(0, 3)\nrequire(x > y)\nrequire(6 // y > 1)\n")
    with pytest.raises(UndefinedOperationError, match="6 // y"):
        space.count(strict=True)
    with pytest.raises(UndefinedOperationError):
        space.stats(strict=True)


def test_a_space_with_divisors_proven_nonzero_is_proven_defined():
    assert not may_be_undefined(Space.from_source("x = range(1, 5)\ny = range(x, 9)\nrequire(y % x == 0)").plan)
    assert may_be_undefined(Space.from_source("x = range(-1, 5)\ny = range(1, 9)\nrequire(y % x == 0)").plan)
    orders = Space.from_source('p = permutation(["a", "b", "c"])\nrequire(position(p, "a") < 2)\n')
    assert may_be_undefined(orders.plan)


def test_strict_after_a_plain_count_still_raises():
    """The compiled enumerator keeps its counts: a strict count after a plain one raises as a
    first strict count does (it answered the cached count before)."""
    space = Space.from_source("a = range(0, 20)\nb = range(0, 20)\nrequire(b // (19 - a) > 1)\n")
    assert space.stats("c").undefined == 20
    with pytest.raises(UndefinedOperationError, match=r"b // \(19 - a\)"):
        space.count("c", strict=True)
