"""`**` with a huge exponent (issue 11): every backend computes the exact answer or refuses with a
typed error naming the expression, its line and the backend that can do it; nothing computes a
4,772-digit bound or lets SymPy expand `(x + 1) ** 10000`."""
from __future__ import annotations

import os
import shutil

import pytest

from solverspace.lang import ir
from solverspace.registry.backends import get_backend
from solverspace.lang.bounds import Bounds, Interval
from solverspace.cli import main
from solverspace.lang.symbolic import simplify
from tests.helpers import counting_work, space

HUGE = "x = range(1, 4)\nrequire(x ** 10000 > 5)\n"
UNIT = "x = range(-1, 2)\ny = range(3)\nrequire(x ** 10000 + x ** 10001 * y <= 1)\n"  # |x| <= 1: fits
FITS = ("x = range(-40, 41)\n@require\ndef p(x):\n    return x ** 10 % 7 == 1 or x ** 5 > 10**9\n")  # 40**10 < 2**60

has_c = shutil.which(os.environ.get("CC", "gcc")) is not None
pytest.importorskip("ortools")


@pytest.mark.parametrize("source", [UNIT, FITS], ids=["unit-base", "fits-64-bits"])
@pytest.mark.parametrize("backend", ["reference", "cpsat"] + (["c"] if has_c else []))
def test_a_power_that_fits_is_exact_in_every_backend(source, backend):
    s = space(source)
    expected = s.stats("reference")
    assert s.stats(backend=get_backend(backend)).count == expected.count


@pytest.mark.parametrize("backend, name", [("c", "C"), ("cpsat", "CP-SAT")])
@pytest.mark.parametrize("command", ["count", "enumerate", "sample"])
def test_a_huge_power_is_refused_naming_expression_line_and_backend(tmp_path, capsys, backend, name, command):
    if backend == "c" and not has_c:
        pytest.skip("no C compiler")
    path = tmp_path / "power.py"
    path.write_text(HUGE)
    argv = {"count": ["count", str(path), "--backend", backend],
            "enumerate": ["enumerate", str(path), "-o", str(tmp_path / "out.csv"), "--backend", backend],
            "sample": ["sample", str(path), "-n", "2"] + (["--method", "cpsat"] if backend == "cpsat" else [])}[command]
    if command == "enumerate" and backend == "cpsat":
        pytest.skip("CP-SAT does not enumerate")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"the {name} backend cannot" in err and "`x ** 10000`" in err and f"{path}:2" in err
    assert "reference backend" in err and "Traceback" not in err


def test_reference_counts_a_huge_power_exactly():
    assert space(HUGE).stats("reference").count == 2


def test_best_with_a_huge_power_objective(capsys, tmp_path):
    path = tmp_path / "unit.py"
    path.write_text(UNIT)
    assert main(["best", str(path), "--maximize", "x ** 10000", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[1] for line in out.splitlines()[1:]] == ["1", "1", "1"]
    assert main(["best", str(path), "--maximize", "(x - 2) ** 10000", "--engine", "cpsat"]) == 2
    err = capsys.readouterr().err
    assert "`(x - 2) ** 10000`" in err and "objective" in err and "reference backend" in err
    # the compiled search refuses it too, says so, and searches in Python (exact, every digit printed)
    assert main(["best", str(path), "--maximize", "(x - 2) ** 10000", "--top", "1"]) == 0
    captured = capsys.readouterr()
    assert "C search refused" in captured.err and "63 bits" in captured.err
    best_line = captured.out.splitlines()[1].split()
    assert best_line[1].startswith("1") and len(best_line[1]) == 4772 and best_line[2] == "x=-1"   # 3 ** 10000


def test_partial_check_with_a_huge_power_falls_back_to_the_reference(capsys, tmp_path):
    path = tmp_path / "huge.py"
    path.write_text("x = range(1, 4)\ny = range(2)\nrequire(x ** 10000 > 5 + y)\n")
    assert main(["check", str(path), "y=1"]) == 0
    assert main(["check", str(path), "x=1"]) == 1
    assert main(["explain", str(path)]) == 0


def test_bounds_and_simplification_do_bounded_work():
    """Bounds of huge powers are infinite, never computed: (10**6) ** (10**9) alone would be
    2.5 GB (and hours); the whole check holds well under 10 MB."""
    with counting_work() as work:
        check_huge_powers_are_bounded_not_computed()
    assert work.peak_bytes < 10 * 2**20 and work.calls < 100_000
    assert str(Interval(3 ** 10000, 3 ** 10001)) == "[about 2**15849, about 2**15851]"


def check_huge_powers_are_bounded_not_computed():
    s = space("x = range(2, 10**6)\nd = (x + 1) ** 10000\ne = x ** (10**9)\nrequire(d > e)\n")
    b = Bounds(s.model)
    assert b.of("d").hi == float("inf") and b.of("e").hi == float("inf")
    expr = ir.BinOp("**", ir.BinOp("+", ir.Ref("x"), ir.Const(1)), ir.Const(10000))
    assert simplify(expr) == expr
