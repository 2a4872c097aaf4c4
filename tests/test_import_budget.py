"""What a warm command-line process imports (issue 28: a warm count loads only what it needs), and
the IR node classes, written out with `__slots__` instead of made by `@dataclass(frozen=True,
slots=True)`, behaving as those dataclasses did (constructor, `==`, `hash`, `repr`, frozenness,
pickles). No timing: the checks are which modules a process holds, and what the nodes do."""
from __future__ import annotations

import copy
import dataclasses
import os
import pickle
import re
import subprocess
import sys

import pytest

from solverspace.lang import ir

PROGRAM = """
import sys
from solverspace.cli import main
status = main(sys.argv[1:])   # the command's whole run; then what the process holds
print("MODULES", " ".join(sorted(sys.modules)), file=sys.stderr)
sys.exit(status)
"""

#: Modules a warm `count`, `sweep` or `best` does not need: SymPy and cffi's C parser (generating and
#: compiling: the module and the plan are cached), NumPy (nothing is listed), compiling and
#: writing files (subprocess, shutil, tempfile, the compressors shutil brings), OR-Tools, and our
#: writers and checker. (sysconfig is needed: the compiler's name is part of the module's key.)
NOT_NEEDED = ("sympy", "pycparser", "cffi", "setuptools", "numpy", "ortools", "subprocess", "shutil", "tempfile",
              "bz2", "lzma", "zipfile", "solverspace.core.formats", "solverspace.core.output",
              "solverspace.analysis.check")

TINY = ["--set", "device=tiny"]
WARM_COMMANDS = {
    "count": ["count", "gemm", *TINY, "--quiet"],
    "sweep": ["sweep", "gemm", *TINY, "--set", "max_threads_per_block=32,48,64", "--json"],
    "best": ["best", "gemm", *TINY, "--maximize", "fmas_per_block - loads_per_block", "--top", "3"],
}


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One module cache for the three commands (each builds once, cold, then runs warm)."""
    return tmp_path_factory.mktemp("import_budget_cache")


def modules_of(cache, argv) -> tuple[str, set[str]]:
    """(stdout, the modules imported) of one command-line process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), SOLVERSPACE_CACHE=str(cache),
               SOLVERSPACE_BACKGROUND_BUILD="0")
    result = subprocess.run([sys.executable, "-c", PROGRAM, *argv], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stderr.splitlines() if line.startswith("MODULES "))
    return result.stdout, set(line.split()[1:])


def untimed(output: str) -> str:
    """A command's output without its timings (`0.03 s`, `"seconds": 0.2`)."""
    return re.sub(r'[0-9.]+ s\b|"seconds": [0-9.e-]+', "", output)


@pytest.mark.needs_cc
@pytest.mark.parametrize("command", list(WARM_COMMANDS))
def test_a_warm_process_imports_nothing_it_does_not_need(shared_cache, command):
    argv = WARM_COMMANDS[command]
    cold, cold_modules = modules_of(shared_cache, argv)   # builds what the command needs
    assert "solverspace.translators.c.backend" in cold_modules
    warm, modules = modules_of(shared_cache, argv)
    assert untimed(warm) == untimed(cold)   # the same answer
    imported = sorted(name for name in modules if name.split(".")[0] in NOT_NEEDED or name in NOT_NEEDED)
    assert not imported, f"a warm {command} imported {imported}"
    if command == "count":   # every record on its path written out (`core.records`): ~10 ms of a 0.15 s process
        assert not {"dataclasses", "inspect", "difflib"} & modules, sorted({"dataclasses", "inspect", "difflib"} & modules)


# --- the IR nodes and the frozen slots dataclasses they replace ----------------------------------
#: Each node class's fields, in the order of its constructor (as its dataclass declared them).
FIELDS = {
    ir.Const: ("value",), ir.Float: ("value",), ir.Ref: ("name",), ir.BinOp: ("op", "left", "right"), ir.Neg: ("operand",),
    ir.Not: ("operand",), ir.Compare: ("op", "left", "right"), ir.And: ("operands",), ir.Or: ("operands",),
    ir.IfExp: ("cond", "then", "orelse"), ir.Min: ("operands",), ir.Max: ("operands",), ir.Abs: ("operand",),
    ir.Range: ("start", "stop", "step"), ir.Values: ("items",), ir.SetOp: ("op", "left", "right"),
    ir.IfDomain: ("cond", "then", "orelse"), ir.Closure: ("name", "func", "deps", "line"),
    ir.Permutation: ("items",), ir.Interleave: ("parts",), ir.Sequence: ("items", "min_len", "max_len"),
    ir.OrderFn: ("fn", "args"),
}

A, B, ONE, TWO = ir.Ref("a"), ir.Ref("b"), ir.Const(1), ir.Const(2)
NODES = [
    ONE, ir.Const("x"), ir.Const(True), ir.Float(0.1), A, ir.BinOp("+", A, ONE), ir.BinOp("//", ir.BinOp("*", A, B), TWO),
    ir.Neg(A), ir.Not(ir.Compare("<", A, B)), ir.Compare("!=", A, ir.Const("x")), ir.And((A, B)), ir.Or((A, B)),
    ir.IfExp(ir.Compare("==", A, ONE), B, TWO), ir.Min((A, B, ONE)), ir.Max((A, B)), ir.Abs(ir.Neg(B)),
    ir.Range(ONE, ir.BinOp("+", A, TWO), ONE), ir.Values((ONE, TWO, A)),
    ir.SetOp("union", ir.Values((ONE,)), ir.Range(ONE, A, ONE)), ir.IfDomain(A, ir.Values((ONE,)), ir.Values((TWO,))),
    ir.Closure("c", len, ("a", "b"), 7), ir.Closure("c", len, ("a",)), ir.Permutation((ONE, TWO)),
    ir.Interleave((ir.Values((ONE,)), ir.Values((TWO,)))), ir.Sequence((ONE, TWO), ONE, A),
    ir.OrderFn("position", (A, ONE)),
]


def twin_classes() -> dict[type, type]:
    """For each node class, a frozen slots dataclass of the same name and fields (what it was)."""
    return {cls: dataclasses.make_dataclass(cls.__name__, [(f, object) for f in fields], frozen=True, slots=True)
            for cls, fields in FIELDS.items()}


def twin(node, classes):
    """The same tree made of the dataclass twins."""
    if isinstance(node, tuple):
        return tuple(twin(v, classes) for v in node)
    if not isinstance(node, ir.Node):
        return node
    return classes[type(node)](*(twin(getattr(node, f), classes) for f in FIELDS[type(node)]))


def test_every_node_class_is_listed_and_sampled():
    classes = {c for c in vars(ir).values() if isinstance(c, type) and issubclass(c, ir.Node)}
    assert classes - {ir.Node, ir.Expr, ir.Domain} == set(FIELDS)
    assert {type(n) for n in NODES} == set(FIELDS)
    for cls, fields in FIELDS.items():
        assert cls.__match_args__ == fields and cls.__slots__ == fields


@pytest.mark.parametrize("node", NODES, ids=lambda n: type(n).__name__)
def test_a_node_reads_hashes_and_pickles_as_its_dataclass(node):
    classes = twin_classes()
    other = twin(node, classes)
    assert repr(node) == repr(other)
    assert hash(node) == hash(other)
    assert node.__getstate__() == [getattr(node, f) for f in FIELDS[type(node)]]
    assert not hasattr(node, "__dict__")
    for copied in (pickle.loads(pickle.dumps(node)), copy.copy(node), copy.deepcopy(node)):
        assert type(copied) is type(node) and copied == node and hash(copied) == hash(node)
        assert repr(copied) == repr(node)
    # by position and by name, as the dataclass's __init__
    fields = {f: getattr(node, f) for f in FIELDS[type(node)]}
    assert type(node)(*fields.values()) == node == type(node)(**fields)
    assert node.__eq__(other) is NotImplemented   # another class: not equal, as between two dataclasses


@pytest.mark.parametrize("node", NODES, ids=lambda n: type(n).__name__)
def test_a_node_is_frozen(node):
    field = FIELDS[type(node)][0]
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{field}'"):
        setattr(node, field, getattr(node, field))
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{field}'"):
        delattr(node, field)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.extra = 1


def test_equality_between_nodes_is_the_dataclasses_equality():
    classes = twin_classes()
    twins = [twin(n, classes) for n in NODES]
    # Const(True) == Const(1) (True == 1), Neg(a) != Not(a) (another class): as the dataclasses decided
    pairs = [(ir.Const(True), ONE), (ir.Neg(A), ir.Not(A)), (ir.Min((A, B)), ir.Max((A, B))),
             (ir.BinOp("+", A, ONE), ir.BinOp("+", ir.Ref("a"), ir.Const(1)))]
    for left, right in pairs + [(x, y) for x in NODES for y in NODES]:
        assert (left == right) == (twin(left, classes) == twin(right, classes)), (left, right)
        assert (left != right) == (twin(left, classes) != twin(right, classes)), (left, right)
    assert len(set(NODES)) == len(set(twins))


@pytest.mark.parametrize("make, error", [
    (lambda: ir.Const(1.5), TypeError), (lambda: ir.Const(None), TypeError),
    (lambda: ir.BinOp("<", A, B), ValueError), (lambda: ir.Compare("+", A, B), ValueError),
    (lambda: ir.SetOp("xor", A, B), ValueError), (lambda: ir.OrderFn("sum", (A,)), ValueError),
    (lambda: ir.BinOp("+", A), TypeError), (lambda: ir.Ref(), TypeError), (lambda: ir.Ref("a", name="b"), TypeError),
])
def test_the_constructors_refuse_what_the_dataclasses_refused(make, error):
    with pytest.raises(error):
        make()


def test_a_closure_line_defaults_to_none():
    assert ir.Closure("c", len, ("a",)).line is None
    assert ir.Closure("c", len, ("a",)) == ir.Closure(name="c", func=len, deps=("a",), line=None)


# --- the other records (solverspace.core.records): the model, the plan, a location --------------
def model_records():
    """One of each record class of the model and the plan, from a small space."""
    from solverspace import Space
    from solverspace.core.errors import Location
    space = Space.from_source("s = setting(3, choices=[3, 4])\nx = range(1, s + 2)\ny = x * 2\nrequire(y < 7)\n")
    model, plan = space.model, space.plan
    return [model, model.parameters[0], model.derived[0], model.constraints[0], model.settings[0], plan,
            plan.levels[0], Location("space.py", 3), Location("space.py")]


def test_a_record_reads_hashes_pickles_and_replaces_as_a_frozen_dataclass():
    for record in model_records():
        cls, names = type(record), type(record).__match_args__
        values = {name: getattr(record, name) for name in names}
        frozen = dataclasses.make_dataclass(cls.__name__, [(n, object) for n in names], frozen=True)(**values)
        assert repr(record) == repr(frozen)
        assert record == cls(**values) == cls(*values.values()) and record.__eq__(frozen) is NotImplemented
        if type(record).__name__ not in ("Model", "Plan"):   # a model's closure_globals may hold a dict
            assert hash(record) == hash(frozen)
        copied = pickle.loads(pickle.dumps(record))
        assert type(copied) is cls and copied == record
        assert record.replace() == record and dataclasses.replace(frozen) == frozen
        changed = record.replace(**{names[-1]: "other"})
        assert getattr(changed, names[-1]) == "other" and changed != record
        assert all(getattr(changed, n) is getattr(record, n) for n in names[:-1])
        with pytest.raises(TypeError):
            record.replace(no_such_field=1)
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{names[0]}'"):
            setattr(record, names[0], None)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(record, names[0])


def test_a_model_keeps_its_cached_facts_apart_from_its_fields():
    model = model_records()[0]
    assert model.parameter["x"] is model.parameters[0]   # a cached_property, kept in the instance
    assert model.replace(source=model.source) == model and "parameter" not in vars(model.replace())


def warm_path_records():
    """One of each record a warm count makes besides the model's (frozen, then mutable ones)."""
    from solverspace.registry.auto import Costs, Shape
    from solverspace.core.results import Stats
    from solverspace.gemm.devices import DEVICES, PEAK_RATES
    from solverspace.lang.bounds import Interval
    from solverspace.lang.dsl import ConstraintDecl, CostDecl, DeclKind, Deferred, SettingDecl
    from solverspace.translators.c.codegen import Column, Generated
    from solverspace.translators.c.optimize import LevelPlan, Options
    from solverspace.translators.cpsat.run import CpSatStats
    shape = Shape(3, 4, 5, 6, 7.0, None, ((8.0, 1),))

    def helper(x):
        return x
    frozen = [shape, Costs(shape, None, 1.5, 2.0, 3.0), Interval(1, 2), Options(), DEVICES["k40c"], PEAK_RATES["k40c"]]
    mutable = [Stats(3, 1, ("x", {"a": 1}), {"x": 1}), CpSatStats(4, exact=False, strategy="joint"),
               LevelPlan(2, ["c"], [], None), Column("a", "int16", "int16_t"), Generated("int x;", [], ["i"], 2),
               Deferred(DeclKind.ITERATOR, helper, 7), CostDecl(ir.Const(1), None),
               ConstraintDecl(True, ir.Const(1), 3), SettingDecl(1, (1, 2), None)]
    return frozen, mutable


def test_the_warm_path_records_behave_as_their_dataclasses():
    frozen, mutable = warm_path_records()
    for record in frozen + mutable:
        cls, names = type(record), type(record).__match_args__
        values = {name: getattr(record, name) for name in names}
        twin = dataclasses.make_dataclass(cls.__qualname__, [(n, object) for n in names],
                                          frozen=record in frozen)(**values)
        assert repr(record) == repr(twin)
        assert record == cls(**values) and record.__eq__(twin) is NotImplemented
        copied = pickle.loads(pickle.dumps(record)) if cls.__name__ != "Deferred" else record   # (a local function)
        assert type(copied) is cls and copied == record
    for record in frozen:
        cls, names = type(record), type(record).__match_args__
        assert hash(record) == hash(tuple(getattr(record, n) for n in names))
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, names[0], None)
    for record in mutable:
        with pytest.raises(TypeError):
            hash(record)
        setattr(record, type(record).__match_args__[-1], "changed")   # assignable, as a plain dataclass
        assert getattr(record, type(record).__match_args__[-1]) == "changed"


def test_the_mutable_records_defaults_are_not_shared():
    from solverspace.core.results import Stats
    from solverspace.lang.dsl import DeclKind, Deferred
    from solverspace.translators.c.codegen import Generated
    from solverspace.translators.c.optimize import LevelPlan
    a, b = Stats(), Stats()
    a.undefined_by["x"] = 1
    assert b.undefined_by == {} and Stats() == Stats(0, 0, None, {})
    first, second = LevelPlan(0), LevelPlan(1)
    first.breaks.append("c")
    assert second.breaks == [] and second.tighten == [] and second.solve is None
    assert Generated("s", [], [], 0).codes == {} and Generated("s", [], [], 0).count_words == 1

    def named(x):
        return x
    assert Deferred(DeclKind.REQUIRE, named, 3, name="ignored").name == "named"   # as the __post_init__ did

