"""Trust, round four, the bounds: the safe evaluator of Kernel Tuner restriction strings is bounded
by the size of what it builds (nested sizes counted) and by its work, not by the length of a list's
top level; a restriction past `MAX_TEXT` is refused before it is read; long chains of operators run
as Python runs them and deep nesting is refused by name (no `RecursionError`); data files are read
through one bounded reader (`core.sources`) that refuses FIFOs, devices and files past their kind's
limit; a cache nested too deeply or holding a time past the float range is refused or an invalid
measurement, named; `cache-check` reports keys given twice and entries whose fields are not their key.

The hostile cases that would take the machine's memory or hours without a bound run in a child
process under a memory and CPU-time limit (a guard, not a timing assert): a regression fails there
instead of taking the test run down."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from solverspace import Space
from solverspace.cli import main
from solverspace.core import manifest
from solverspace.core.errors import OptionError, SolverspaceError
from solverspace.core.sources import LIMIT_VARIABLE, MAX_BYTES, read_limit
from solverspace.integrations.kernel_tuner.cache import CacheMeasure, cache_key, check_cache
from solverspace.io.t1.predicates import MAX_DEPTH, MAX_LENGTH, MAX_TEXT, UnsafeExpression, compile_predicate

ROOT = Path(__file__).resolve().parent.parent
SPACE = "a = range(1, 5)\nb = iterator([1, 2, 4])\nrequire(a * b <= 8)\n"      # 10 configurations
PARAMS = {"x": [1, 2, 3, 4], "tile": [0, 1, 2], "kind": ["ab", "b"]}


def _child(code: str, *args: str, env: dict | None = None, memory_gib: float = 1.5, cpu_s: int = 60):
    """Run `code` in a child Python under a memory (address space) and CPU-time limit; (rc, out, err)."""
    limits = (f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({int(memory_gib * 2 ** 30)},) * 2); "
              f"resource.setrlimit(resource.RLIMIT_CPU, ({cpu_s}, {cpu_s}))")
    done = subprocess.run([sys.executable, "-c", f"{limits}\n{code}", *args], capture_output=True, text=True,
                          timeout=cpu_s * 3, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    return done.returncode, done.stdout, done.stderr


# ---------------------------------------------------------------------------------- the safe evaluator: sizes and work
HOSTILE = [     # (restriction, the bound its refusal names)
    ("len(str([[[0]*10000]*10000]*10000)) > x", "MAX_LENGTH"),
    ("[[[0]*10000]*10000]*10000 == [[[0]*10000]*10000]*10000", "MAX_LENGTH"),
    ("len(str([[0]*10000]*10000)) > x", "MAX_LENGTH"),
    ("len(str([[[x]*10000]*10000]*10000)) > x", "MAX_LENGTH"),
    ("[[[x]*10000]*10000]*10000 == [[[tile]*10000]*10000]*10000", "MAX_LENGTH"),
    ("len(str([[x]*10000]*10000)) > 0", "MAX_LENGTH"),
    (" and ".join(["str([x] * 2000) == str([x] * 2000)"] * 100), "MAX_WORK"),
    ("pow(x + 1, 2 ** 65000, 3 ** 40000) & 1 == 1", "MAX_WORK"),
    ("x in [" + ",".join(str(i) for i in range(1_500_000)) + "]", "MAX_TEXT"),      # a 10 MB restriction
]


def test_the_issues_restrictions_are_refused_at_once_naming_the_bound():
    code = """
import json, sys
from solverspace.integrations.kernel_tuner.searchspace import build_space
from solverspace.io.t1.predicates import UnsafeExpression
outcomes = []
for text in json.loads(sys.stdin.read()):
    try:
        space, predicates, _ = build_space({"x": [1, 2, 3, 4], "tile": [0, 1, 2], "kind": ["ab", "b"]}, [text])
        for predicate in predicates:
            predicate({"x": 1, "tile": 0, "kind": "ab"})
        outcomes.append("ran")
    except UnsafeExpression as exc:
        outcomes.append(exc.message[-300:])
print(json.dumps(outcomes))
"""
    limits = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 29,) * 2); "
              "resource.setrlimit(resource.RLIMIT_CPU, (120, 120))")
    done = subprocess.run([sys.executable, "-c", f"{limits}\n{code}"], input=json.dumps([t for t, _ in HOSTILE]),
                          capture_output=True, text=True, timeout=360, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = json.loads(done.stdout)
    assert len(outcomes) == len(HOSTILE)
    for (text, bound), outcome in zip(HOSTILE, outcomes):
        assert bound in outcome, (text[:80], outcome)


def test_sizes_count_nested_items_and_shared_references():
    names = list(PARAMS)
    config = {"x": 2, "tile": 1, "kind": "ab"}
    assert compile_predicate("len([[x] * 10] * 10) == 10", names)(config)          # size 110: within
    for text in ("len([[x] * 100] * 100) > 0",                  # 100 + 100 * 100 items: one inner list, shared
                 "len([kind * 5000, kind * 5000]) > 0",         # 2 items + 20,000 characters
                 "len(str([x] * 5000)) > 0"):                   # 15,000 characters of text
        with pytest.raises(UnsafeExpression, match="MAX_LENGTH") as caught:
            compile_predicate(text, names)(config)
        assert "at {" in caught.value.message and "'x': 2" in caught.value.message      # the configuration named
    with pytest.raises(UnsafeExpression, match="same for every configuration.*MAX_LENGTH"):
        compile_predicate("len([[0] * 100] * 100) > x", names)           # no parameter in it: refused when read
    assert MAX_LENGTH == 10_000 and MAX_TEXT == 10_000


def test_a_restriction_past_max_text_is_refused_before_it_is_read():
    from solverspace.integrations.kernel_tuner.searchspace import Searchspace
    text = "x in [" + ",".join(["1"] * MAX_TEXT) + "]"
    for build in (lambda: compile_predicate(text, list(PARAMS)), lambda: Searchspace(PARAMS, [text], 1024)):
        with pytest.raises(UnsafeExpression, match=rf"is {len(text):,} characters long, more than MAX_TEXT=10,000"):
            build()


@pytest.mark.parametrize("text, form", [
    ("ｅval('1') == x", r"a call to eval\(\)"),                # look-alike letters: read as Python reads them
    ("ᵉval('1') == x", r"a call to eval\(\)"),
    ("__import__('os').system('true') == 0", r"attribute access"),
    ("__builtins__ == x", r"unknown name '__builtins__'"),
    ("().__class__ == x", r"attribute access"),
    ("x.__class__.__bases__ == 0", r"attribute access"),
    ("getattr(x, 'real') == 1", r"a call to getattr\(\)"),
    ("type(x) == int", r"a call to type\(\)"),
    ("globals() == x", r"a call to globals\(\)"),
    ("breakpoint() == x", r"a call to breakpoint\(\)"),
    ("(lambda: 1)() == x", r"a lambda"),
    ("[c for c in kind] == x", r"a comprehension"),
    ("(y := x) > 1", r"assignment expression"),
    ("f'{x}' == '1'", r"f-string"),
    ("'{}'.format(x) == '1'", r"attribute access"),
    ("'%s' % x == '1'", r"formatting"),
    ("str(x)[0:1] * x == '1'", r"indexing something other than"),
])
def test_escape_attempts_stay_refused_by_name_when_read(text, form):
    with pytest.raises(UnsafeExpression, match=form) as caught:
        compile_predicate(text, list(PARAMS))
    assert "at {" not in caught.value.message        # refused when read, before any configuration


# ---------------------------------------------------------------------------------- chains and nesting: no RecursionError
def test_a_1000_term_sum_runs_as_python_does():
    """Kernel Tuner (Python) accepts a 1,000-term sum: the safe evaluator gives Python's answer,
    float rounding included (the chain is grouped to the left, as Python groups it)."""
    from solverspace.integrations.kernel_tuner.searchspace import Searchspace
    terms = " + ".join(["x", "tile", "x * tile", "3"] * 250)
    text = f"({terms}) & 2 == 0"                         # `&`: the T1 reader refuses it, Python runs it
    space = Searchspace(PARAMS, [text], 1024)
    code = compile(text, "<oracle>", "eval")
    configs = [dict(zip(PARAMS, values)) for values in __import__("itertools").product(*PARAMS.values())]
    expected = {tuple(c.values()) for c in configs if eval(code, {"__builtins__": {}}, dict(c))}   # noqa: S307
    assert set(space.list) == expected and 0 < len(expected) < len(configs)
    floats = "+".join(f"x/{k}" for k in range(1, 1001))
    for config in configs[:4]:
        value = eval(compile(floats, "<oracle>", "eval"), {"__builtins__": {}}, dict(config))   # noqa: S307
        assert compile_predicate(f"{floats} == {value!r}", list(PARAMS))(config)      # bit for bit
        assert not compile_predicate(f"{floats} == {value!r} + 1e-9", list(PARAMS))(config)


def test_nesting_past_the_bounds_is_refused_by_name():
    from solverspace.integrations.kernel_tuner.searchspace import build_space
    deep = "abs(" * (MAX_DEPTH + 20) + "x" + ")" * (MAX_DEPTH + 20) + " & 1 == 0"
    with pytest.raises(UnsafeExpression, match=f"nested more than MAX_DEPTH={MAX_DEPTH} levels deep"):
        compile_predicate(deep, list(PARAMS))
    for text in ("-" * 5000 + "x > 0", "+".join(["x"] * 3000) + " & 1 == 0"):     # past Python's own parser
        with pytest.raises(UnsafeExpression, match="cannot be parsed.*nested too deeply"):
            build_space(PARAMS, [text])
    chain = " if x else ".join(["tile"] * 600) + " if x else 0"         # 600 levels to the right, flattened
    assert compile_predicate(chain, list(PARAMS))({"x": 1, "tile": 2})
    assert compile_predicate("-" * 600 + "x == x", list(PARAMS))({"x": 1, "tile": 2})


# ---------------------------------------------------------------------------------- data files: bounded, regular
def _cache_text(space: Space, entries: dict | None = None, *, names=None) -> str:
    names = list(names or space.parameters)
    header = {"device_name": "d", "kernel_name": "k", "problem_size": [1], "tune_params_keys": names,
              "tune_params": {n: list(v) for n, v in space.value_lists().items()}, "objective": "time", "cache": {}}
    text = json.dumps(header, indent="")[:-3]
    if entries is None:
        entries = {cache_key(row): {**dict(zip(names, row)), "time": 1.0 + sum(row), "times": [1.0]}
                   for row in space.rows("reference")}
    lines = [json.dumps({key: entry})[1:-1] for key, entry in entries.items()]
    return text + "\n" + ",\n".join(lines) + "}\n}"


def test_cache_commands_refuse_a_device_and_fifos_for_reading_and_writing(tmp_path):
    space_file = tmp_path / "s.py"
    space_file.write_text(SPACE)
    zero, fifo, out_fifo, good = tmp_path / "zero.json", tmp_path / "fifo.json", tmp_path / "out.json", tmp_path / "c.json"
    zero.symlink_to("/dev/zero")
    os.mkfifo(fifo)
    os.mkfifo(out_fifo)
    good.write_text(_cache_text(Space.load(space_file)))
    db = str(tmp_path / "t.sqlite")
    runs = [(["cache-check", str(space_file), str(zero)], "is a character device, not a regular file"),
            (["tune", str(space_file), "--measure-from", str(zero), "--bound", "a", "--db", db],
             "is a character device, not a regular file"),
            (["cache-check", str(space_file), str(fifo)], "is a FIFO (named pipe), not a regular file"),
            (["tune", str(space_file), "--measure-from", str(fifo), "--bound", "a", "--db", db],
             "is a FIFO (named pipe), not a regular file"),
            (["tune", str(space_file), "--measure-from", str(good), "--bound", "a", "--db", db, "--kt-cache",
              str(out_fifo)], "--kt-cache '" + str(out_fifo) + "' is a FIFO (named pipe), not a regular file")]
    for argv, message in runs:
        code, out, err = _child("import sys; from solverspace.cli import main; sys.exit(main(sys.argv[1:]))",
                                *argv, cpu_s=40)
        assert code == 2 and message in err and "Traceback" not in err, (argv, code, err[-1500:])


def test_t1_files_manifests_and_space_files_are_regular_files_read_with_a_bound(tmp_path):
    fifo_t1, fifo_dir = tmp_path / "p.json", tmp_path / "shards"
    os.mkfifo(fifo_t1)
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / manifest.NAME)
    code = """
import sys
from solverspace.core import manifest
from solverspace.core.errors import SolverspaceError
from solverspace.io.t1.read import load_t1
for read in (lambda: load_t1(sys.argv[1]), lambda: manifest.read(sys.argv[2])):
    try:
        read()
        print("read")
    except SolverspaceError as exc:
        print(exc.message)
"""
    rc, out, err = _child(code, str(fifo_t1), str(fifo_dir), cpu_s=30)
    assert rc == 0, err[-1500:]
    assert out.splitlines() == [f"T1 file {str(fifo_t1)!r} is a FIFO (named pipe), not a regular file",
                                f"manifest {str(fifo_dir / manifest.NAME)!r} is a FIFO (named pipe), not a regular file"]


def test_files_past_their_kinds_limit_are_refused_naming_the_variable(tmp_path, monkeypatch):
    assert read_limit("space file") == MAX_BYTES["space file"] == 16 << 20      # the documented defaults
    assert MAX_BYTES["T1 file"] == 256 << 20 and MAX_BYTES["Kernel Tuner cache"] == 1 << 30
    space_file = tmp_path / "s.py"
    space_file.write_text(SPACE)
    space = Space.load(space_file)
    cache = tmp_path / "c.json"
    cache.write_text(_cache_text(space))
    (tmp_path / manifest.NAME).write_text(json.dumps({"format": manifest.FORMAT, "pad": "x" * 500}))
    monkeypatch.setenv(LIMIT_VARIABLE, "50")
    for read, what in ((lambda: Space.load(space_file), "space file"),
                       (lambda: check_cache(space, cache), "Kernel Tuner cache"),
                       (lambda: manifest.read(tmp_path), "manifest")):
        with pytest.raises(SolverspaceError, match=rf"{what} '.*' is \d+ bytes, more than the 50 bytes") as caught:
            read()
        assert LIMIT_VARIABLE in caught.value.hint
    monkeypatch.setenv(LIMIT_VARIABLE, "100000")
    assert check_cache(space, cache).ok


# ---------------------------------------------------------------------------------- cache contents
def test_a_cache_nested_too_deeply_is_refused_by_both_cache_commands(tmp_path, capsys):
    space_file = tmp_path / "s.py"
    space_file.write_text(SPACE)
    cache = tmp_path / "deep.json"
    cache.write_text('{"tune_params_keys": ["a", "b"], "cache": {"1,1": {"a": 1, "b": 1, "time": '
                     + "[" * 200_000 + "]" * 200_000 + "}}}")
    for argv in (["cache-check", str(space_file), str(cache)],
                 ["tune", str(space_file), "--measure-from", str(cache), "--bound", "a", "--db",
                  str(tmp_path / "t.sqlite")]):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and "is JSON nested too deeply to read" in err, err


def test_a_time_past_the_float_range_is_an_invalid_measurement_named(tmp_path, capsys):
    from solverspace.analysis.tune_measure import DidNotRun
    space_file = tmp_path / "s.py"
    space_file.write_text(SPACE)
    space = Space.load(space_file)
    rows = list(space.rows("reference"))
    entries = {cache_key(row): {"a": row[0], "b": row[1],
                                "time": 10 ** 400 if row == rows[0] else 5.0 + row[0] + row[1] / 10}
               for row in rows}
    cache = tmp_path / "c.json"
    cache.write_text(_cache_text(space, entries))
    with pytest.raises(DidNotRun, match="past the range of a float") as caught:
        CacheMeasure(space, cache).once(dict(zip(space.parameters, rows[0])))
    assert caught.value.status == "invalid output" and "an integer of 1,329 bits" in str(caught.value)
    code = main(["tune", str(space_file), "--measure-from", str(cache), "--bound", "a / 100000", "--db",
                 str(tmp_path / "t.sqlite"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert cache_key(json.loads(out)["best"].values()) == cache_key(rows[1]) != cache_key(rows[0])


def test_cache_check_reports_repeated_keys_and_fields_that_are_not_their_key(tmp_path, capsys):
    space_file = tmp_path / "s.py"
    space_file.write_text(SPACE)
    space = Space.load(space_file)
    rows = list(space.rows("reference"))
    text = _cache_text(space)
    first, second = cache_key(rows[0]), cache_key(rows[1])
    twice = json.dumps({first: {"a": rows[0][0], "b": rows[0][1], "time": 99.0}})[1:-1]
    swapped = json.dumps({second: {"a": rows[2][0], "b": rows[2][1], "time": 2.0}})[1:-1]
    text = text[:-3] + ",\n" + twice + ",\n" + swapped + "}\n}"      # the key `first` again; `second` again, other fields
    cache = tmp_path / "c.json"
    cache.write_text(text)
    result = check_cache(space, cache)
    assert not result.ok and not result.missing and not result.invalid
    assert result.repeated == [(first, [1.0 + sum(rows[0]), 99.0]), (second, [1.0 + sum(rows[1]), 2.0])]
    assert result.disagreeing == [(second, cache_key(rows[2]))]
    code, (out, _) = main(["cache-check", str(space_file), str(cache)]), capsys.readouterr()
    assert code == 1 and f"repeated: {first} ({1.0 + sum(rows[0])!r}, 99.0)" in out
    assert f"key {second} holds the fields {cache_key(rows[2])}" in out
    code, (out, _) = main(["cache-check", str(space_file), str(cache), "--json"]), capsys.readouterr()
    document = json.loads(out)
    assert code == 1 and [r["key"] for r in document["repeated"]] == [first, second]
    assert document["disagreeing"] == [{"key": second, "fields": cache_key(rows[2])}]
    measure = CacheMeasure(space, cache)
    for row in rows[:2]:                   # a time is not taken from either
        with pytest.raises(OptionError, match=f"key {cache_key(row)} is given 2 times with different entries"):
            measure.once(dict(zip(space.parameters, row)))
    assert measure.once(dict(zip(space.parameters, rows[3]))) == pytest.approx((1.0 + sum(rows[3])) / 1000)


def test_t1_value_lists_count_the_words_of_large_integers():
    """A `Values` string of 1,000,000 integers of 60,000 bits each (7.5 GB) is refused by its work,
    one of 80,000 bits by its size; ordinary value lists of a million small integers still read."""
    from solverspace.io.t1.read import load_t1_text

    def values(text: str) -> int:
        document = {"ConfigurationSpace": {"TuningParameters": [{"Name": "x", "Type": "int", "Values": text}]}}
        return len(load_t1_text(json.dumps(document)).parameters[0].domain.items)
    product = "*".join(["2**2000"] * 30)
    with pytest.raises(SolverspaceError, match="takes more than 2000000 steps.*64-bit words of large integers"):
        values(f"[{product} + i for i in range(1000000)]")
    with pytest.raises(SolverspaceError, match="the product is too large"):
        values("[" + "*".join(["2**2000"] * 40) + "]")
    assert values("[2**2000 * 2**2000 + i for i in range(1000)]") == 1000       # 4,000-bit values
    assert values("[i * 3 for i in range(200000)]") == 200_000
