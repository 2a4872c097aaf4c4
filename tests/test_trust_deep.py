"""Issue 23, deep expressions and huge numbers: long sums and products (hundreds of operands) in
space files, function bodies, T1 conditions and objectives work in every backend; integers past
Python's 4,300-digit string limit load and print; huge objective values print exactly; `best
--top` is capped; an empty objective says so."""
from __future__ import annotations

import itertools
import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from solverspace import Space
from solverspace.lang import ir
from solverspace.cli import main

# --------------------------------------------------------------------------------- long sums

X_Y = "x = iterator(range(1, 4))\ny = iterator(range(0, 3))\n"


def _python_count(predicate) -> int:
    return sum(1 for x, y in itertools.product(range(1, 4), range(0, 3)) if predicate(x, y))


def _counts(space: Space, backends=("reference", "c", "cpsat")) -> dict:
    return {b: space.count(b) for b in backends}


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_a_module_level_sum_of_400_operands_counts_in_every_backend():
    space = Space.from_source(X_Y + "require(" + " + ".join(["x"] * 400) + " > 300 * y)\n")
    assert set(_counts(space).values()) == {_python_count(lambda x, y: 400 * x > 300 * y)}


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_a_function_body_with_1000_mixed_terms_counts_in_every_backend():
    plus = " + ".join("x" if i % 3 else "y" for i in range(1000))       # 666 x, 334 y
    minus = " - ".join(["y"] * 600)
    source = X_Y + f"@require\ndef big(x, y):\n    return {plus} - {minus} > 300 * x\n"
    expected = _python_count(lambda x, y: 666 * x + 334 * y - 600 * y > 300 * x)
    assert set(_counts(Space.from_source(source)).values()) == {expected}


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_a_sum_built_at_run_time_and_a_long_product_count_in_every_backend():
    source = X_Y + "total = sum([x, y] * 300)\nrequire(total - " + " - ".join(["y"] * 500) + " > 250 * x)\n"
    expected = _python_count(lambda x, y: 300 * x + 300 * y - 500 * y > 250 * x)
    assert set(_counts(Space.from_source(source)).values()) == {expected}
    product = Space.from_source(X_Y + "require(" + " * ".join(["x", "(y + 1)"] * 18) + " > 2 ** 40)\n")
    expected = _python_count(lambda x, y: x ** 18 * (y + 1) ** 18 > 2 ** 40)
    assert set(_counts(product).values()) == {expected}


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_a_t1_condition_of_400_terms(tmp_path):
    problem = {"General": {"FormatVersion": 1}, "ConfigurationSpace": {
        "TuningParameters": [{"Name": "a", "Type": "int", "Values": "[1, 2, 3]"},
                             {"Name": "b", "Type": "int", "Values": "[0, 1, 2]"}],
        "Conditions": [{"Parameters": ["a", "b"], "Expression": " + ".join(["a"] * 400) + " > 400 * b"}]}}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(problem))
    assert set(_counts(Space.load(str(path))).values()) == {6}


P12 = "".join(f"p{i} = iterator(range(0, 3))\n" for i in range(6)) + "require(p0 + p1 != 7)\n"
OBJECTIVE_1000 = " + ".join(f"p{i % 6} * {i % 7 - 3}" for i in range(1000))


def _objective_value(config: dict) -> int:
    return sum(config[f"p{i % 6}"] * (i % 7 - 3) for i in range(1000))


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
@pytest.mark.parametrize("engine", ["bnb", "exhaustive", "bnb-reference", "exhaustive-reference", "cpsat"])
def test_an_objective_of_1000_terms_in_every_engine(engine):
    space = Space.from_source(P12)
    configurations = [dict(zip((f"p{i}" for i in range(6)), values))
                      for values in itertools.product(range(3), repeat=6) if values[0] + values[1] != 7]
    truth = sorted(_objective_value(c) for c in configurations)[:3]
    result = space.best(OBJECTIVE_1000, maximize=False, top=3, backend=engine)
    assert [r.objective for r in result.ranked] == truth
    assert all(_objective_value(r.configuration) == r.objective for r in result.ranked)


@pytest.mark.needs_cc
def test_check_explain_funnel_and_emit_c_take_a_long_sum(tmp_path, capsys):
    path = tmp_path / "long.py"
    path.write_text(X_Y + "require(" + " + ".join(["x"] * 500) + " > 400 * y)\n"
                    + "cost(" + " + ".join(["x * y"] * 500) + ")\n")
    for argv in (["check", str(path), "x=1", "y=1"], ["explain", str(path)], ["funnel", str(path)],
                 ["emit-c", str(path)], ["best", str(path), "--top", "2"]):
        assert main(argv) == 0, argv
    assert "require" in capsys.readouterr().out


def test_a_long_chain_is_balanced_and_keeps_its_value_and_operand_order():
    names = [f"v{i}" for i in range(1000)]
    deep = ir.Ref(names[0])
    for i, name in enumerate(names[1:], 1):
        deep = ir.BinOp("-" if i % 4 == 0 else "+", deep, ir.Ref(name))
    balanced = ir.regroup(deep)
    depth = max(_depths(balanced))
    assert depth <= 12
    assert [n.name for n in ir.walk(balanced) if isinstance(n, ir.Ref)] == names
    env = {name: (i * 7919) % 1000 - 500 for i, name in enumerate(names)}
    from solverspace.lang.evaluate import evaluate
    assert evaluate(balanced, env) == sum(-env[n] if i % 4 == 0 and i else env[n] for i, n in enumerate(names))
    from solverspace.lang.printing import to_source
    assert to_source(deep).count("v") == 1000       # a message about the deep tree itself prints
    short = ir.BinOp("+", ir.BinOp("-", ir.Ref("a"), ir.Ref("b")), ir.Ref("c"))
    assert ir.regroup(short) == short   # short chains keep the user's grouping (and generated code)


def _depths(node, depth=1):
    yield depth
    for child in node.children():
        yield from _depths(child, depth + 1)


@st.composite
def long_sum_spaces(draw):
    """A space of three small parameters and one constraint: a sum (or a product of small
    factors) of 500 to 700 operands, each a parameter or constant, with signs."""
    n = draw(st.integers(500, 700))
    names = ("a", "b", "c")
    operands = draw(st.lists(st.sampled_from([*names, "1", "2", "a * b", "c - a"]), min_size=n, max_size=n))
    signs = draw(st.lists(st.sampled_from(["+", "-"]), min_size=n - 1, max_size=n - 1))
    text = operands[0] + "".join(f" {s} {o}" for s, o in zip(signs, operands[1:]))
    threshold = draw(st.integers(-300, 300))
    source = "a = iterator(range(0, 3))\nb = iterator(range(-2, 2))\nc = iterator([1, 5, 3])\n"
    if draw(st.booleans()):   # factors in [-1, 1], so that the product provably fits in 64 bits
        factors = draw(st.lists(st.sampled_from(["min(a, 1)", "max(-1, min(b, 1))", "-1", "1", "min(c, 1)"]),
                                min_size=500, max_size=520))
        source += f"require(({' * '.join(factors)} == 1) | ({text} > {threshold}))\n"
    else:
        source += f"require({text} > {threshold})\n"
    return source


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(long_sum_spaces())
def test_generated_sums_and_products_of_500_operands_agree_across_backends(source):
    space = Space.from_source(source)
    reference = space.count("reference")
    assert space.count("c") == reference
    assert space.count("cpsat") == reference


# ----------------------------------------------------------------- integers past 4,300 digits

BIG_TEXT = "1" + "0" * 4998 + "3"          # 10**4999 + 3, built as text (no int conversion)


@pytest.fixture
def python_digit_limit():
    """Python's default limit on int <-> text conversion, as a fresh process has it (an earlier
    test or command in this process may have lifted it)."""
    if not hasattr(sys, "set_int_max_str_digits"):
        pytest.skip("this Python converts integers of any length")
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(4300)
    yield
    sys.set_int_max_str_digits(previous)


def test_a_t1_file_with_a_5000_digit_value_loads_and_counts(tmp_path, python_digit_limit):
    path = tmp_path / "big.json"
    path.write_text('{"General": {"FormatVersion": 1}, "ConfigurationSpace": {"TuningParameters": ['
                    '{"Name": "a", "Type": "int", "Values": [1, 2]}, '
                    f'{{"Name": "b", "Type": "int", "Values": [0, {BIG_TEXT}]}}], "Conditions": []}}}}')
    space = Space.load(str(path))
    assert space.count("reference") == 4
    assert str(max(row[1] for row in space.rows("reference"))) == BIG_TEXT


def test_a_5000_digit_value_is_listed_counted_and_written(tmp_path, python_digit_limit, capsys):
    path = tmp_path / "big.py"
    path.write_text("a = iterator(range(0, 3))\nb = iterator([1, 10**4999 + 3])\nrequire(b > a)\n")
    space = Space.from_source(path.read_text())
    assert space.count("reference") == 4
    out = tmp_path / "rows.csv"
    sys.set_int_max_str_digits(4300)
    assert main(["enumerate", str(path), "-o", str(out), "--backend", "reference"]) == 0
    assert out.read_text().count(BIG_TEXT) == 3


@pytest.mark.needs_cpsat
def test_a_count_of_5001_digits_is_printed_and_a_long_position_is_read(tmp_path, python_digit_limit, capsys):
    path = tmp_path / "wide.py"
    path.write_text("a = iterator(range(0, 3))\nb = range(0, 10**5000)\n")
    assert main(["count", str(path), "--backend", "cpsat"]) == 0
    assert "3" + "0" * 5000 in capsys.readouterr().out
    sys.set_int_max_str_digits(4300)
    main(["get", str(path), "1" + "0" * 4400])       # answered or refused by a backend, not by argparse
    assert "invalid int value" not in capsys.readouterr().err


# --------------------------------------------------------------- exact objectives, --top, ""

@pytest.mark.parametrize("engine", ["bnb", "exhaustive-reference"])
def test_an_objective_past_a_floats_range_prints_exactly_in_json(tmp_path, capsys, engine):
    path = tmp_path / "power.py"
    path.write_text("x = iterator(range(1, 40))\n")
    assert main(["best", str(path), "--maximize", "x**400/3", "--top", "2", "--json", "--engine", engine]) == 0
    first, second = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert first["x"] == 39 and first["objective"] == 39 ** 400 // 3          # whole: an exact integer
    assert second["x"] == 38 and second["objective"] is None                # past float: null, exact beside
    assert second["objective_exact"] == f"{38 ** 400}/3"


@pytest.mark.needs_cc
@pytest.mark.parametrize("engine", ["bnb", "exhaustive"])
def test_a_top_larger_than_the_space_is_cut_to_it(tmp_path, engine):
    space = Space.from_source("x = iterator(range(1, 40))\n")
    result = space.best("x", maximize=False, top=100_000_000_000, backend=engine)
    assert result.engine == engine and not result.note
    assert [r.objective for r in result.ranked] == list(range(1, 40))


@pytest.mark.needs_cc
def test_a_top_whose_lists_cannot_fit_is_refused_by_the_compiled_search_with_a_message():
    from solverspace.translators.c.best import best_compiled
    from solverspace.translators.errors import UnsupportedConstruct
    space = Space.from_source("".join(f"p{i} = iterator(range(0, 1000))\n" for i in range(4)))
    with pytest.raises(UnsupportedConstruct, match=r"--top 50000000 keeps up to 50000000 .* GiB") as refusal:
        best_compiled(space.plan, "p0 + p1", maximize=False, top=50_000_000, threads=2)
    assert "bnb-reference" in refusal.value.hint     # Space.best then searches in Python and says so


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_objective_says_it_is_empty(tmp_path, capsys, text):
    path = tmp_path / "s.py"
    path.write_text("x = iterator(range(1, 4))\n")
    assert main(["best", str(path), "--minimize", text]) == 2
    err = capsys.readouterr().err
    assert "objective is empty" in err and "iterator" not in err
