"""Sweeps over settings that switch rules and parameters on and off (a `require`, a derived value
or a parameter under a module-level `if` on a setting): every sweep engine gives each point the
answer of counting it alone. The engines: the one-pass lane walk (`translators/c/lanes.py`), the
top program over the base point's module after a count (`lanes.top_program`, `sweep._count_top`),
C point by point, the reference, and CP-SAT where it accepts the space. Points whose rules differ
never share a walk; a top program over a base point whose rules differ from the points' is
refused (it crashed, or counted the subtrees with the base point's rules)."""
from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import tempfile

import pytest
from hypothesis import given, strategies as st

from solverspace import Space
from solverspace.registry.backends import get_backend
from solverspace.core.errors import SolverspaceError
from solverspace.scale.sweep import sweep
from solverspace.translators.c.lanes import LaneWalk, NotLaneable, top_program
from solverspace.translators.errors import UnsupportedConstruct
from solverspace.validation.generate import spaces
from tests.helpers import generated

pytestmark = pytest.mark.needs_cc

# the hand-written sweep that crashed: `sweep --set strict=1 --set LIMIT=30,40 --backend c` after a
# `count` of the defaults (strict=0, whose model lacks the rule under the `if`): KeyError 'require_line10'
# (here the rule's name is require_line9: the text starts with an empty line)
STRICT_OFF = """
strict = setting(0, choices=[0, 1])
LIMIT = 40
a = range(1, 9)
b = range(1, 9)
c = range(1, 5)
require(a * b <= LIMIT)
if strict:
    require(a % 2 == 0)
require(b + c <= 10)
"""

# the other way round: the base point (strict=1) has a rule below the points' outer loops that the
# points lack; its module counted the points' subtrees with it (91 and 102 for 186 and 209)
STRICT_ON = STRICT_OFF.replace("setting(0,", "setting(1,").replace("a % 2 == 0", "c % 2 == 0")

# a parameter, a derived value and a rule that exist only under one value of the setting
SPLIT = """
split = setting(0, choices=[0, 1])
LIMIT = 40
a = range(1, 9)
b = range(1, 9)
if split:
    s = range(1, 4)
    t = a * s
    require(t <= 12)
else:
    t = a
require(t * b <= LIMIT)
"""

OPTIONS = {"threads": 1}
REFUSALS = ("UnsupportedConstruct", "CpSatRefusal")   # CP-SAT's refusals of a construct


def load(source):
    return lambda s: Space.from_source(source, s)


def run(source, grid, backend, **options) -> list[tuple] | str:
    """[(settings, count, undefined, method)] of a sweep, or the type of the error it raised."""
    try:
        return [(p.settings, p.count, p.undefined, p.method)
                for p in sweep(load(source), grid, backend, **{**(OPTIONS if backend == "c" else {}), **options})]
    except Exception as exc:   # every engine must raise the same
        return type(exc).__name__


def cpsat(source, grid) -> list[tuple | None] | str | None:
    """CP-SAT's sweep, or, where it refuses the space at some point, each point's count (None where
    refused); None without OR-Tools."""
    if importlib.util.find_spec("ortools") is None:
        return None
    found = run(source, grid, "cpsat", workers=1)
    if found not in REFUSALS:
        return found
    answers = []
    for point in [dict(zip(grid, values)) for values in _product(grid)]:
        try:
            stats = Space.from_source(source, point).stats("cpsat", workers=1)
            answers.append((point, int(stats.count), int(stats.undefined), "per-point"))
        except SolverspaceError as exc:
            if type(exc).__name__ not in REFUSALS:
                raise
            answers.append(None)
    return answers


def _product(grid):
    return itertools.product(*grid.values())


@contextlib.contextmanager
def empty_cache():
    """A module cache of its own (as the `cache` fixture, for one drawn example): the first
    one-pass sweep finds no base module, so it runs the whole lane walk."""
    from solverspace.translators.c.backend import CEnumerator
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVERSPACE_CACHE", folder)
        CEnumerator.clear_cache()
        try:
            yield
        finally:
            CEnumerator.clear_cache()


def every_engine(source, grid) -> dict[str, object]:
    """Each engine's sweep, in an empty module cache: the one-pass walk (before any count of the
    base settings), C point by point, the one-pass sweep after a count of the base settings (the
    top program where it applies), the reference, CP-SAT; and C along the literal plan, one pass
    and point by point (whose undefined tallies are the reference's)."""
    with empty_cache():
        return _every_engine(source, grid)


def _every_engine(source, grid) -> dict[str, object]:
    found = {"one-pass": run(source, grid, "c"), "per-point": run(source, grid, "c", one_pass=False)}
    try:
        Space.from_source(source).count("c", **OPTIONS)   # the base module: a sweep after it tries a top program
    except Exception:   # the per-point counts say it
        pass
    found["after a count"] = run(source, grid, "c")
    found["reference"] = run(source, grid, "reference")
    if (answers := cpsat(source, grid)) is not None:
        found["cpsat"] = answers
    found["literal one-pass"] = run(source, grid, "c", literal=True)
    found["literal per-point"] = run(source, grid, "c", literal=True, one_pass=False)
    return found


def check_agree(found: dict[str, object]) -> None:
    """Counts equal in every engine; undefined tallies equal between the C engines of one plan, and
    along the literal plan equal to the reference's; an error the same in every engine."""
    alone = found["per-point"]
    if isinstance(alone, str):   # e.g. a range step of 0 at some point: the same error in every C engine
        for name in ("one-pass", "after a count", "reference", "literal one-pass", "literal per-point"):
            assert found[name] == alone, (name, found)
        return
    for name, answers in found.items():
        assert not isinstance(answers, str), (name, found)
    counts = [(s, c) for s, c, _, _ in alone]
    for name, answers in found.items():
        assert [(s, c) for s, c, _, _ in (a for a in answers if a is not None)] == \
            [p for p, a in zip(counts, answers) if a is not None], name
    tallies = lambda name: [a[:3] for a in found[name]]   # noqa: E731
    assert tallies("one-pass") == tallies("per-point")
    if "after a count" in found:
        assert tallies("after a count") == tallies("per-point")
    assert tallies("literal one-pass") == tallies("literal per-point") == tallies("reference")


def test_the_hand_written_sweep_after_a_count_answers(cache):
    grid = {"strict": ["1"], "LIMIT": ["30", "40"]}
    Space.from_source(STRICT_OFF).count("c", **OPTIONS)
    found = list(sweep(load(STRICT_OFF), grid, "c", **OPTIONS))
    assert [(p.count, p.method) for p in found] == [(88, "one-pass"), (102, "one-pass")]
    assert [p.count for p in found] == [Space.from_source(STRICT_OFF, p.settings).count("reference") for p in found]


def test_the_hand_written_sweep_from_the_command_line(cache, tmp_path, capsys):
    from solverspace.cli import main
    path = tmp_path / "strict.py"
    path.write_text(STRICT_OFF, encoding="utf-8")
    assert main(["count", str(path), "--backend", "c"]) == 0
    capsys.readouterr()
    assert main(["sweep", str(path), "--set", "strict=1", "--set", "LIMIT=30,40", "--backend", "c", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["count"], line["method"]) for line in lines] == [(88, "one-pass"), (102, "one-pass")]


def test_a_base_point_with_a_rule_the_points_lack_counts_nothing_for_them(cache):
    grid = {"strict": ["0"], "LIMIT": ["30", "40"]}
    Space.from_source(STRICT_ON).count("c", **OPTIONS)
    found = list(sweep(load(STRICT_ON), grid, "c", **OPTIONS))
    assert [(p.count, p.method) for p in found] == [(186, "one-pass"), (209, "one-pass")]


@pytest.mark.parametrize("source, strict", [(STRICT_OFF, "1"), (STRICT_ON, "0")])
def test_a_top_program_over_a_base_point_whose_rules_differ_is_refused(source, strict):
    c = get_backend("c", **OPTIONS)
    plans = [Space.from_source(source, {"strict": strict, "LIMIT": v}).plan for v in ("30", "40")]
    with pytest.raises(NotLaneable, match=r"rules or derived values differ \(require_line9 in some points only"):
        top_program(plans, Space.from_source(source).plan, c.options)


def test_a_lane_walk_over_points_whose_rules_differ_is_refused():
    c = get_backend("c", **OPTIONS)
    plans = [Space.from_source(STRICT_OFF, {"strict": v}).plan for v in ("0", "1")]
    with pytest.raises(NotLaneable, match="require_line9 in some points only"):
        LaneWalk(plans, c.options)
    plans = [Space.from_source(SPLIT, {"split": v}).plan for v in ("0", "1")]
    with pytest.raises(NotLaneable):
        LaneWalk(plans, c.options)


@pytest.mark.parametrize("source, grid", [
    (STRICT_ON, {"strict": ["0", "1"], "LIMIT": ["30", "40"]}),
    (SPLIT, {"split": ["1", "0"], "LIMIT": ["30", "40"]}),
])
def test_hand_written_switches_in_every_engine(source, grid):
    found = every_engine(source, grid)
    check_agree(found)
    assert {m for _, _, _, m in found["after a count"]} == {"one-pass"}   # each value of the switch: one walk


def check_generated(source, values, t_values):
    check_agree(every_engine(source, {"S": [str(v) for v in values], "T": t_values}))


@generated(4)
@given(source=spaces(c_compatible=True, swept=True, switches=1.0),
       values=st.lists(st.integers(-3, 5), min_size=2, max_size=3, unique=True),
       t_values=st.sampled_from([["0", "1"], ["1"], ["0"]]))
def test_generated_switches_in_every_engine(source, values, t_values):
    check_generated(source, values, t_values)


def check_after_a_count(source, values):
    """The switch `T` at the value its default is not, with the values of `S`, swept after a count
    of the defaults (whose module a top program counts on): each point as C, one by one, and the
    reference count it (the base point's rules differ from every point's)."""
    grid = {"S": [str(v) for v in values], "T": ["0" if "T = setting(1" in source else "1"]}
    with empty_cache():
        alone = run(source, grid, "c", one_pass=False)
        try:
            Space.from_source(source).count("c", **OPTIONS)
        except Exception:   # the per-point counts say it
            pass
        after = run(source, grid, "c")
        reference = run(source, grid, "reference")
    if isinstance(alone, str):
        assert after == reference == alone
        return
    assert [a[:3] for a in after] == [a[:3] for a in alone]
    assert [a[:2] for a in reference] == [a[:2] for a in alone]


@generated(5)
@given(source=spaces(c_compatible=True, swept=True, switches=1.0),
       values=st.lists(st.integers(-3, 5), min_size=2, max_size=4, unique=True))
def test_generated_switches_after_a_count_of_the_other_value(source, values):
    check_after_a_count(source, values)


@generated(60)
@given(source=spaces(c_compatible=True, swept=True, switches=1.0),
       values=st.lists(st.integers(-3, 5), min_size=2, max_size=4, unique=True))
def test_generated_top_programs_over_the_other_value_generate_or_refuse(source, values):
    """Generating alone (nothing compiles, so many spaces): a top program of points at the value of
    the switch its default is not, over the base point, is written or refused with a reason
    (`NotLaneable`), never a crash (it was a KeyError where a point had a rule the base lacks)."""
    other = "0" if "T = setting(1" in source else "1"
    try:
        plans = [Space.from_source(source, {"S": str(v), "T": other}).plan for v in values]
        base = Space.from_source(source).plan
    except SolverspaceError:   # a setting value the space refuses: the sweep reports it
        return
    try:
        top_program(plans, base, get_backend("c", **OPTIONS).options)
    except (NotLaneable, UnsupportedConstruct):
        pass


@pytest.mark.slow
@generated(150)
@given(source=spaces(c_compatible=True, swept=True, switches=1.0, products=0.2),
       values=st.lists(st.integers(-3, 5), min_size=1, max_size=5, unique=True),
       t_values=st.sampled_from([["0", "1"], ["1"], ["0"], ["1", "0"]]))
def test_many_generated_switches_in_every_engine(source, values, t_values):
    check_generated(source, values, t_values)


@pytest.mark.slow
@generated(200)
@given(source=spaces(c_compatible=True, swept=True, switches=1.0, products=0.2),
       values=st.lists(st.integers(-3, 5), min_size=2, max_size=6, unique=True))
def test_many_generated_switches_after_a_count_of_the_other_value(source, values):
    check_after_a_count(source, values)
