"""Kernel Tuner restriction strings the T1 reader cannot translate (issue 26): run by the safe
evaluator (`solverspace.io.t1.predicates`) as Python predicates, said once on stderr, never dropped;
compared with Kernel Tuner 1.5's own Searchspace on the same strings; what the safe evaluator
does not run is refused by name; its values are bounded; its meaning is Python's (an oracle test
against Python itself on random expressions)."""
from __future__ import annotations

import random

import pytest

from solverspace.core.errors import OptionError
from solverspace.io.t1.predicates import CALLS, MAX_INT_BITS, UnsafeExpression, compile_predicate
from tests.helpers import logged

TUNE_PARAMS = {"block_size_x": [16, 32, 48, 64, 96, 128], "block_size_y": [1, 2, 3, 4, 8], "tile": [0, 1, 2, 3],
               "kind": ["ab", "b", "abc"]}
MAX_THREADS = 1024

# strings Kernel Tuner runs and the T1 reader refuses (each is checked to be refused by it below)
RUN_IN_PYTHON = [
    "block_size_x & (block_size_x - 1) == 0",
    "(block_size_x | block_size_y) % 3 != 0",
    "block_size_x ^ tile > 40",
    "~tile & 1 == 0 or block_size_y > 2",
    "len(kind) >= 2",
    "'a' in kind",
    "kind[0] == 'a'",
    "kind[-1:] == 'b' and tile != 2",
    "[1, 2, 4, 8][tile] <= block_size_y",
    "len(str(block_size_x)) == 2",
    "pow(block_size_y, tile, 5) == 1",
    "block_size_y ** (tile * block_size_x // 16) < 100",
    "kind * tile != 'bb'",
]
# strings Kernel Tuner 1.5 itself cannot build (its restriction parser takes `round` for a parameter;
# its rewrite of `<<` is not Python), which we run: checked against Python's own answer
KERNEL_TUNER_FAILS = ["round(block_size_x / 10) % 2 == 0", "round(block_size_x / 7, 1) > 5",
                      "(block_size_y << tile) & 12 == 0"]


def _configurations():
    import itertools
    names = list(TUNE_PARAMS)
    for values in itertools.product(*TUNE_PARAMS.values()):
        yield dict(zip(names, values))


def _python(text: str) -> set:
    """The configurations where Python's own evaluation of `text` holds (the oracle; test data only)."""
    code = compile(text, "<restriction>", "eval")
    return {tuple(c.values()) for c in _configurations()
            if c["block_size_x"] * c["block_size_y"] <= MAX_THREADS
            and eval(code, {"__builtins__": {}, **{n: f for n, (f, _, _) in CALLS.items()}}, c)}   # noqa: S307


@pytest.mark.parametrize("text", RUN_IN_PYTHON + KERNEL_TUNER_FAILS)
def test_the_t1_reader_refuses_these_and_they_run_in_python_said_once(text, caplog):
    from solverspace.integrations.kernel_tuner.searchspace import Searchspace
    ours = Searchspace(TUNE_PARAMS, [text, "tile < 3 or block_size_y < 8"], MAX_THREADS)
    said = logged(caplog)
    assert said.count(f"restriction {text!r} runs in Python") == 1 and "T1 reader cannot translate" in said
    expected = {c for c in _python(text) if c[2] < 3 or c[1] < 8}
    assert set(ours.list) == expected and ours.size == len(expected)
    assert all(ours.is_param_config_valid(c) == (c in expected) for c in map(lambda d: tuple(d.values()),
                                                                             _configurations()))


@pytest.mark.parametrize("text", RUN_IN_PYTHON)
def test_the_same_strings_give_kernel_tuners_own_space(text):
    kt = pytest.importorskip("kernel_tuner.searchspace")
    from solverspace.integrations.kernel_tuner.searchspace import Searchspace
    theirs = kt.Searchspace(TUNE_PARAMS, [text], MAX_THREADS)
    ours = Searchspace(TUNE_PARAMS, [text], MAX_THREADS)
    assert ours.size == theirs.size and set(ours.list) == set(map(tuple, theirs.list))


@pytest.mark.filterwarnings("ignore::SyntaxWarning")     # Kernel Tuner's own compile of its rewrite
def test_kernel_tuner_itself_cannot_build_these():
    kt = pytest.importorskip("kernel_tuner.searchspace")
    for text in KERNEL_TUNER_FAILS:
        with pytest.raises((ValueError, SyntaxError)):
            kt.Searchspace(TUNE_PARAMS, [text], MAX_THREADS)


# what the safe evaluator does not run: refused when the string is read (the form), or while it
# runs (a value past the bounds, a Python error other than an arithmetic one: the configuration named)
@pytest.mark.parametrize("text, match, when", [
    ("block_size_x.bit_length() > 4", r"attribute access", "read"),
    ("np.prod([block_size_x, tile]) < 100", r"attribute access", "read"),
    ("sum([x for x in [1, 2]]) < tile", r"comprehension", "read"),
    ("(lambda: 1)() == tile", r"a lambda", "read"),
    ("__import__('os') == tile", r"a call to __import__\(\) is not run here", "read"),
    ("open('f') == tile", r"a call to open\(\)", "read"),
    ("eval('1') == tile", r"a call to eval\(\)", "read"),
    ("tile is 1", r"`is` compares object identity", "read"),
    ("min(tile, default=1) > 0", r"plain positional arguments", "read"),
    ("(y := tile) > 1", r"assignment expression", "read"),
    ("f'{tile}' == '1'", r"f-string", "read"),
    ("{'a': tile}['a'] > 1", r"indexing something other than", "read"),
    ("{'a': tile} == tile", r"a dict", "read"),
    ("'%s' % tile == '1'", r"formatting", "read"),
    ("max(tile, block_size_x)(1) > 0", r"this call is not run", "read"),
    ("tile(1) > 0", r"called like a function", "read"),
    ("blocksize_x > 1", r"unknown name 'blocksize_x'.*\n.*did you mean 'block_size_x'", "read"),
    ("min > 1", r"min is a function here", "read"),
    ("abs(tile, tile) > 1", r"abs\(\) takes 1 arguments, got 2", "read"),
    ("b'x' == tile", r"the constant b'x'", "read"),
    ("sum(range(10)) > tile", r"a call to range\(\)", "read"),
    ("divmod(tile, 2)[0] == 1", r"indexing something other than", "read"),
    ("2 ** (tile * 40000) & 1 == 1", r"MAX_INT_BITS", "run"),
    ("1 << (tile * 40000) & 1 == 1", r"MAX_INT_BITS", "run"),
    ("(block_size_x ** 999) ** 999 & 1 == 1", r"MAX_INT_BITS", "run"),
    ("len(kind * (block_size_x * 1000)) & 1 == 0", r"MAX_LENGTH", "run"),
    ("len([tile] * 10 ** 9) & 1 == 0", r"MAX_LENGTH", "run"),
    ("round(tile, -10 ** 8) & 1 == 0", r"MAX_ROUND_DIGITS", "run"),
    ("len(sum([[tile] * 10] * 10, [])) > 0", r"concatenates sequences", "run"),
    ("kind % 2 == tile", r"formatting", "run"),
    ("kind < tile or tile & 1", r"TypeError", "run"),
])
def test_what_the_safe_evaluator_does_not_run_is_refused_by_name(text, match, when):
    from solverspace.integrations.kernel_tuner.searchspace import build_space
    with pytest.raises(UnsafeExpression, match=match) as caught:
        space, predicates, _ = build_space(TUNE_PARAMS, [text], MAX_THREADS)
        for config in _configurations():
            predicates[0](config)
    assert ("the T1 reader cannot translate it either" in caught.value.message) == (when == "read")
    assert ("at {" in caught.value.message) == (when == "run")       # the configuration is named


def test_an_arithmetic_error_makes_the_configuration_invalid_and_is_said(caplog):
    from solverspace.integrations.kernel_tuner.searchspace import Searchspace
    text = "(block_size_x // (tile - 1)) & 1 == 0"
    ours = Searchspace(TUNE_PARAMS, [text], MAX_THREADS)
    err = logged(caplog)
    assert "is undefined" in err and "'tile': 1" in err
    assert not any(c[2] == 1 for c in ours.list)
    expected = _python(f"tile != 1 and ({text})")
    assert set(ours.list) == expected


def _random_expression(rng: random.Random, depth: int) -> str:
    leaves = ["block_size_x", "block_size_y", "tile", str(rng.randint(-3, 9)), "2.5", "True"]
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(leaves)
    a, b = _random_expression(rng, depth - 1), _random_expression(rng, depth - 1)
    forms = [
        lambda: f"({a} {rng.choice(['+', '-', '*', '//', '%', '/', '&', '|', '^'])} {b})",
        lambda: f"({a} {rng.choice(['<', '<=', '==', '!=', '>', '>='])} {b} {rng.choice(['<', '!='])} 5)",
        lambda: f"({a} {rng.choice(['and', 'or'])} {b})",
        lambda: f"({a} if {b} else {rng.choice(leaves)})",
        lambda: f"{rng.choice(['min', 'max'])}({a}, {b})",
        lambda: f"{rng.choice(['abs', 'int', 'round', 'bool'])}({a})",
        lambda: f"({rng.choice(['-', 'not ', '~'])}{a})",
    ]
    return forms[rng.randrange(len(forms))]()


def test_meaning_is_pythons_on_random_expressions():
    """The oracle: Python evaluating the same text, on every configuration (an arithmetic error is
    False here; any other Python error must be raised by both)."""
    rng = random.Random(5)
    configs = [c for c in _configurations() if c["kind"] == "b"]
    functions = {n: f for n, (f, _, _) in CALLS.items()}
    checked = 0
    for _ in range(150):
        text = _random_expression(rng, 3)
        code = compile(text, "<oracle>", "eval")
        predicate = compile_predicate(text, list(TUNE_PARAMS))
        for config in configs:
            try:
                expected = bool(eval(code, {"__builtins__": {}, **functions}, dict(config)))   # noqa: S307
            except ArithmeticError:
                expected = False
            except (TypeError, ValueError):
                with pytest.raises(UnsafeExpression):
                    predicate(config)
                continue
            assert predicate(config) == expected, (text, config)
            checked += 1
    assert checked > 5_000


def test_a_parameter_named_like_a_call_and_integers_within_the_bound():
    predicate = compile_predicate("2 ** n > 10 ** 300", ["n"])
    assert predicate({"n": 1000}) and not predicate({"n": 900})
    with pytest.raises(UnsafeExpression, match="MAX_INT_BITS"):
        predicate({"n": MAX_INT_BITS + 2})
    assert compile_predicate("len + 1 > 2", ["len"])({"len": 2})


def test_the_safe_evaluator_never_calls_eval_exec_or_compile():
    import ast
    import inspect
    import solverspace.io.t1.predicates as module
    tree = ast.parse(inspect.getsource(module))
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not called & {"eval", "exec", "compile", "__import__", "globals", "vars", "setattr"}
