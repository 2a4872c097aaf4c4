"""The test suite's own shape (issue 24): what test files share lives in one place, `tests/helpers.py`
(plain functions and constants) and `tests/conftest.py` (fixtures), so no test file imports another
test file (a copy of its helpers in a third file would go stale the same way); and a test checks
behaviour, never speed: no assert reads the clock except the few that test how soon a run stops
after a signal, a generous bound that is itself the behaviour."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent
#: Assertions on elapsed time that ARE the behaviour under test: a signal stops a run within seconds.
RESPONSIVENESS = {"test_signals.py", "test_c_backend.py"}
CLOCKS = {"perf_counter", "time", "monotonic", "process_time", "perf_counter_ns", "time_ns", "monotonic_ns"}


def is_import_module_call(node: ast.AST) -> bool:
    """Whether a node is `importlib.import_module("<a literal name>")` (or `import_module(...)`)."""
    return isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module" \
        and bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)


def imported_modules(tree: ast.AST, package: str = "tests") -> set[str]:
    """The modules an AST imports (`import_module("...")` with a literal name included), relative
    imports (`from .x import`) resolved against `package`."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package if node.level else ""
            module = ".".join(filter(None, [base, node.module or ""]))
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}   # `from tests import test_x`
        elif is_import_module_call(node):
            found.add(node.args[0].value)
    return found


def imports_of_test_files(source: str) -> set[str]:
    """The other test files (tests/test_*.py) a source imports, by module name."""
    found = set()
    for name in imported_modules(ast.parse(source)):
        parts = name.split(".")
        if parts[0].startswith("test_"):
            found.add(parts[0])
        elif parts[0] == "tests" and len(parts) > 1 and parts[1].startswith("test_"):
            found.add(".".join(parts[:2]))
    return found


def is_a_time(node: ast.AST, timed: set[str], timing: dict[str, set]) -> bool:
    """Whether an expression's value is a time: a clock reading (`time.perf_counter()`), a name
    holding one, what a timing function returns, or a sum or difference of those (a table of
    file dates holds times but is not one)."""
    if isinstance(node, ast.BinOp):
        return is_a_time(node.left, timed, timing) or is_a_time(node.right, timed, timing)
    if isinstance(node, ast.Name):
        return node.id in timed
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr in CLOCKS and isinstance(func.value, ast.Name) and func.value.id == "time"
    return isinstance(func, ast.Name) and None in timing.get(func.id, ())


def reads_clock(node: ast.AST, timed: set[str], timing: dict[str, set]) -> bool:
    """Whether a time appears anywhere in an expression."""
    return any(is_a_time(n, timed, timing) for n in ast.walk(node))


def clock_names(tree: ast.AST) -> tuple[set[str], dict[str, set]]:
    """Names that hold a time (`start = time.perf_counter()`, `_, seconds = timed(...)`) and the
    functions that return one (which tuple positions; None: the whole value), to a fixed point."""
    timed: set[str] = set()
    timing: dict[str, set] = {}
    for _ in range(4):
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for ret in (n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None):
                    if isinstance(ret.value, ast.Tuple):
                        timing.setdefault(node.name, set()).update(
                            i for i, e in enumerate(ret.value.elts) if is_a_time(e, timed, timing))
                    elif is_a_time(ret.value, timed, timing):
                        timing.setdefault(node.name, set()).add(None)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                if isinstance(target, ast.Name) and is_a_time(value, timed, timing):
                    timed.add(target.id)
                elif isinstance(target, ast.Tuple) and isinstance(value, ast.Call) \
                        and isinstance(value.func, ast.Name):
                    positions = timing.get(value.func.id, set())
                    timed.update(e.id for i, e in enumerate(target.elts)
                                 if isinstance(e, ast.Name) and (i in positions or None in positions))
    return timed, timing


def clock_asserts(source: str) -> list[int]:
    """Lines of the `assert` statements that read a clock, directly or through a name or a function."""
    tree = ast.parse(source)
    timed, timing = clock_names(tree)
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Assert) and reads_clock(node.test, timed, timing)]


def test_no_test_file_imports_another_test_file():
    offenders = {path.name: sorted(imports_of_test_files(path.read_text(encoding="utf-8")))
                 for path in sorted(TESTS.glob("*.py"))}
    offenders = {name: found for name, found in offenders.items() if found}
    assert offenders == {}, ("move what is shared into tests/helpers.py (functions, constants) or "
                             f"tests/conftest.py (fixtures) and import it from there: {offenders}")


def test_the_import_check_sees_every_form_of_importing_a_test_file():
    """The check can fail: each way of spelling an import of a test file is caught, helpers are not."""
    for source in ["from tests.test_auto import SMALL", "from .test_auto import SMALL", "import tests.test_auto",
                   "from tests import test_auto", "from . import test_auto", "import test_auto",
                   "importlib.import_module('tests.test_auto')"]:
        assert imports_of_test_files(source) <= {"tests.test_auto", "test_auto"}, source
        assert imports_of_test_files(source), source
    for source in ["from tests.helpers import space", "from .helpers import space", "import pytest",
                   "from solverspace.analysis import tune"]:
        assert not imports_of_test_files(source), source


def test_no_assert_reads_the_clock_outside_the_responsiveness_tests():
    found = {path.name: clock_asserts(path.read_text(encoding="utf-8")) for path in sorted(TESTS.glob("test_*.py"))}
    found = {name: lines for name, lines in found.items() if lines and name not in RESPONSIVENESS}
    assert found == {}, ("assert on work done (a stats field, a counter), never on elapsed time: "
                         f"{found}")


def test_the_clock_check_sees_an_assert_on_elapsed_time():
    """The check can fail: direct, through a name, through a timing function; counts pass."""
    direct = "import time\nstart = time.perf_counter()\nrun()\nassert time.perf_counter() - start < 5\n"
    named = "start = time.time()\nrun()\nseconds = time.time() - start\nassert seconds < 20\n"
    returned = ("def timed(s):\n    start = time.perf_counter()\n    result = run(s)\n"
                "    return result, time.perf_counter() - start\n\n"
                "result, seconds = timed(1)\nassert result.count == 5\nassert seconds < 20\n")
    assert clock_asserts(direct) == [4]
    assert clock_asserts(named) == [4]
    assert clock_asserts(returned) == [8]
    assert clock_asserts("with counting_work() as work:\n    run()\nassert work.calls < 5\n") == []
