"""Floats in performance models: a float constant of `cost(...)`, of an objective or a bound,
and a float Python computes from constants when the file is loaded, is the exact rational of its
shortest decimal text (`Fraction(repr(x))`), said once; every engine of `best` ranks by those
exact values identically. (Floats in constraints and iterators stay refused:
tests/test_language_forms.py, tests/test_errors.py.)"""
from __future__ import annotations

import json
import re
import shutil
import warnings
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solverspace import Space, SpaceDefinitionError
from solverspace.core.errors import BackendUnavailableError, SolverspaceNote
from solverspace.lang.printing import to_source
from solverspace.validation.float_models import float_models

BEST_PAGE = Path(__file__).parents[1] / "docs" / "how-to" / "best.md"
ENGINES = ("bnb", "exhaustive", "bnb-reference", "cpsat")   # each compared with exhaustive-reference
needs_cc = pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None,
                              reason="needs a C compiler")


def ranked(result):
    return [(r.objective, r.configuration) for r in result.ranked]


def all_engines_agree(space: Space, objective: str, *, maximize: bool, top: int) -> list:
    """Every engine's top `top` equals the Python exhaustive walk's (CP-SAT where it accepts the
    model: it refuses coefficients past its 64-bit range, with a message); the truth."""
    truth = ranked(space.best(objective, maximize=maximize, top=top, backend="exhaustive-reference"))
    for engine in ENGINES:
        try:
            result = space.best(objective, maximize=maximize, top=top, backend=engine)
        except BackendUnavailableError as refused:
            assert engine == "cpsat" and "64-bit" in str(refused), (engine, str(refused))
            continue
        assert ranked(result) == truth, (engine, objective)
    return truth


def readme_roofline() -> tuple[str, str]:
    """The docs' two `cost` space files (docs/how-to/best.md): the roofline space, and the
    function form of its model (the second file's lines from `@cost` on)."""
    files = dict(re.findall(r"cat > (\S+) <<'EOF'\n(.*?\n)EOF\n", BEST_PAGE.read_text(), re.S))
    function = files["roofline_function.py"]
    return files["roofline.py"], function[function.index("@cost"):]


def quiet_load(path) -> Space:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverspaceNote)
        return Space.load(str(path))


@needs_cc
@pytest.mark.parametrize("maximize", [False, True])
def test_the_readme_roofline_runs_as_written_and_every_engine_ranks_it_alike(tmp_path, maximize):
    space_text, _ = readme_roofline()
    path = tmp_path / "roofline.py"
    path.write_text(space_text)
    space = quiet_load(path)
    compute = Fraction(repr(2 * 4096 ** 3 / 1.43e3))        # the float Python computes at load time
    assert compute == Fraction(9611115627412587, 100000000)
    truth = all_engines_agree(space, to_source(space.model.cost), maximize=maximize, top=300)
    assert len(truth) == 284   # the whole space: `top` past its size is cut to it
    for objective, c in truth:   # the README's formula with its floats as exact decimals
        memory = Fraction(4096 ** 3 * (c["blk_m"] + c["blk_n"]) * 8, c["blk_m"] * c["blk_n"] * 288)
        assert objective == max(compute, memory)
    if not maximize:   # 216 tie at the compute roof (in the tie order), then the memory-bound ones
        assert [o for o, _ in truth[:216]] == [compute] * 216 and truth[216][0] > compute


@needs_cc
def test_the_readme_roofline_from_the_command_line(tmp_path, capsys):
    from solverspace.cli import main
    space_text, _ = readme_roofline()
    path = tmp_path / "roofline.py"
    path.write_text(space_text)
    assert main(["best", str(path), "--top", "5", "--json", "-q"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["objective_exact"] for r in rows] == ["9611115627412587/100000000"] * 5
    assert err.count("read as the exact rationals") == 1     # said once, not per use


@needs_cc
def test_the_readme_function_form_of_the_model_runs_in_place_of_the_expression(tmp_path):
    space_text, function = readme_roofline()
    lines = [line for line in space_text.splitlines() if not line.startswith("cost(")]
    path = tmp_path / "roofline_function.py"
    path.write_text("\n".join(lines) + "\n" + function)
    space = Space.load(str(path))
    truth = all_engines_agree(space, to_source(space.model.cost), maximize=False, top=8)
    c = truth[0][1]
    assert (c["blk_m"], c["blk_n"], c["tex_a"]) == (128, 128, 1)   # the squarest largest tile, halved by tex_a
    assert truth[0][0] == Fraction(1, 128)


@needs_cc
def test_sums_that_binary_floats_round_are_exact_ties_in_every_engine():
    """(x + 2y) * 0.1 - x * 0.1 - y * 0.2 is 0 everywhere with exact decimals (in binary doubles
    it is not: 0.30000000000000004 - 0.1 - 0.2), so every engine ranks by the tie order alone."""
    source = "x = range(0, 5)\ny = range(0, 5)\ncost((x + 2 * y) * 0.1 - x * 0.1 - y * 0.2)\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverspaceNote)
        space = Space.from_source(source)
    for maximize in (False, True):
        truth = all_engines_agree(space, to_source(space.model.cost), maximize=maximize, top=25)
        assert [o for o, _ in truth] == [0] * 25
        assert [(c["x"], c["y"]) for _, c in truth] == [(x, y) for x in range(5) for y in range(5)]


FLOAT_MODELS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


@needs_cc
@FLOAT_MODELS
@given(float_models(max_candidates=300, c_compatible=True), st.integers(1, 6), st.booleans())
def test_generated_float_models_rank_alike_in_every_engine_by_their_exact_values(drawn, top, maximize):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        space = Space.from_source(drawn.source)
    truth = all_engines_agree(space, to_source(space.model.cost), maximize=maximize, top=top)
    for objective, configuration in truth:
        assert objective == drawn.value(configuration), (drawn.oracle, configuration)


@given(float_models(max_candidates=300))
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_same_floats_in_a_constraint_are_refused(drawn):
    constant = next(iter(drawn.constants), "0.5")
    source = drawn.source + f"require({drawn.names[0]} * {constant} < 3)\n"
    with pytest.raises(SpaceDefinitionError, match="floating-point value"):
        Space.from_source(source)


def test_a_float_objective_or_bound_is_its_exact_decimal():
    space = Space.load("gemm", {"device": "tiny"})
    from solverspace.analysis.objective import parse_objective
    with pytest.warns(SolverspaceNote, match=r"1000\.0 as 1000, 0\.25 as 1/4"):
        floats = parse_objective(space.model, "fmas_per_block / 1e3 + loads_per_block * 0.25", "bound")
    exact = parse_objective(space.model, "fmas_per_block / 1000 + loads_per_block * (1 / 4)", "bound")
    assert floats == exact
    with pytest.warns(SolverspaceNote):
        by_floats = space.best("blk_m * blk_n / 1e3 - dim_m * 0.1", maximize=True, top=3, backend="bnb-reference")
    by_fractions = space.best("blk_m * blk_n / 1000 - dim_m / 10", maximize=True, top=3, backend="bnb-reference")
    assert ranked(by_floats) == ranked(by_fractions)


def test_floats_are_said_once_per_model():
    source = ("peak = 1.43e3\nx = range(1, 9)\ny = range(1, 9)\nt = x * 0.5 + y * 0.5\n"
              "cost(max(x * 2.5 / peak, t / peak, y * 0.5))\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        space = Space.from_source(source)
    notes = [str(w.message) for w in caught if issubclass(w.category, SolverspaceNote)]
    assert len(notes) == 1, notes
    assert "0.5 as 1/2" in notes[0] and "1430.0 as 1430" in notes[0] and "2.5 as 5/2" in notes[0]
    assert space.model.derived_value["t"].expr is not None
    assert "." not in to_source(space.model.cost)   # no float is left for a backend to see


@pytest.mark.parametrize("source, fragment", [
    ("x = range(1, 4)\ncost(x * float('inf'))\n", "not a finite number"),
    ("x = range(1, 4)\n@cost\ndef c(x):\n    return x * 1e999\n", "not a finite number"),
    ("x = range(1, 4)\ncost(x * (1 + 2j))\n", "complex"),
])
def test_a_float_that_is_not_a_number_is_refused(source, fragment):
    with pytest.raises(SpaceDefinitionError, match=fragment):
        Space.from_source(source)


# Drawn by the generator above: CP-SAT met values past its 64-bit range inside a `min` (OR-Tools
# raised a TypeError) and a coefficient past it (OR-Tools turned it into a float, then failed).
PAST_64_BITS = [
    "S = -1\np0 = range(S, S + 1)\nr0 = p0 / 1\np1 = iterator([3, 0])\nrequire(((-4) ** 3) > r0)\n"
    "F1 = 409600.0\nFC = F1 * 3 / 7\nfd = min((p0 + FC), FC / (p1 * p1 + 1), (p1 + FC))\ncost(fd + p1 * 5080000.0)\n",
    "S = 1\np0 = range(S, S + 1)\nq1 = iterator([-1000000])\n@iterator\ndef p1(q1):\n    yield q1 % 2\n"
    "    if q1 > 0:\n        yield -1\nc0 = reject_if(p0 < p1)\nF0 = 1.0\nFC = F0 * 3 / 7\n"
    "cost(q1 * FC + p0 * 1.0 + 1.0 / (p0 * p0 + 1))\n",
    "x = range(0, 10)\ncost(x * 8083600889853077504 + 8083600889853077504)\n",
]


@needs_cc
@pytest.mark.parametrize("source", PAST_64_BITS)
@pytest.mark.parametrize("maximize", [False, True])
def test_values_past_64_bits_are_refused_by_cpsat_and_ranked_alike_by_the_others(source, maximize):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        space = Space.from_source(source)
    with pytest.raises(BackendUnavailableError, match="64-bit"):
        space.best(to_source(space.model.cost), maximize=maximize, top=2, backend="cpsat")
    all_engines_agree(space, to_source(space.model.cost), maximize=maximize, top=2)
