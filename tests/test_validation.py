"""`validate` and `solverspace validate`: agreement, refusals, exit statuses, and broken backends
caught with a correct counterexample."""
import shlex

import pytest

from solverspace import Space
from solverspace.lang import ir
from solverspace.cli import main
from solverspace.validation import validate, validate_source

pytest.importorskip("cffi")

FAST = {"cpsat_options": {"workers": 1}, "threads": 2}

SIGNED = """\
x = range(-7, 8)
y = iterator([-3, -2, 2, 3])
k = iterator(["tex", "ldg"])
q = x // y
require((q + x % y > -3) | (k == "tex"))
"""


def cpsat_available() -> bool:
    try:
        from solverspace.registry.backends import get_backend
        get_backend("cpsat")
        return True
    except Exception:
        return False


def test_all_backends_agree_on_a_small_space():
    report = validate_source(SIGNED, **FAST)
    assert report.status == 0, report.render()
    ran = {o.backend for o in report.outcomes if o.ran}
    assert {"c", "c-literal", "reference"} <= ran
    counts = {o.count for o in report.outcomes if o.ran and o.backend != "sample"}
    assert counts == {len(list(Space.from_source(SIGNED).rows("reference")))}
    digests = {o.digest for o in report.outcomes if o.digest is not None}
    assert len(digests) == 1
    text = report.render()
    assert text.splitlines()[1].split() == ["backend", "count", "undefined", "digest", "seconds", "status"]
    assert "verdict: AGREE" in text


def test_undefined_tallies_are_compared_along_the_literal_plan():
    report = validate_source("a = range(-2, 3)\nb = range(-2, 3)\nd = a // b\nrequire(d >= 0)\n", **FAST)
    assert report.status == 0, report.render()
    literal = {o.backend: o.undefined for o in report.outcomes if o.ran and o.plan_exact}
    assert set(literal.values()) == {5}   # b == 0 for each of the 5 values of a


def test_reference_is_skipped_above_the_limit():
    report = validate_source("x = range(300)\ny = range(300)\n", reference_limit=1000,
                             backends=("c", "reference"), **FAST)
    assert report.outcome("reference").status == "skipped"
    assert "90,000 configurations > reference limit 1,000" in report.outcome("reference").note
    assert report.status == 2  # only one backend counted


def test_a_refusal_is_declined_not_a_disagreement():
    # a fraction used as a loop bound (whole here, so Python accepts it): the C backend declines
    source = "x = range(1, 6)\ny = range(0, (2 * x) / 2)\nrequire(x + y < 6)\n"
    report = validate_source(source, **FAST)
    assert report.outcome("c").status == "declined"
    assert "fraction" in report.outcome("c").note
    assert report.status == 2, report.render()  # nothing to compare the reference with: not a disagreement


def test_a_language_error_everywhere_cannot_be_validated():
    report = validate_source("x = range(0, 3)\ny = range(0, 5, x)\n", backends=("reference", "c"), **FAST)
    assert [o.status for o in report.outcomes] == ["error", "error"]
    assert report.status == 2


def test_samples_are_checked():
    if not hasattr(Space, "sample"):
        pytest.skip("no sampler in this version")
    report = validate_source(SIGNED, samples=10, backends=("c", "reference", "sample"), **FAST)
    sample = report.outcome("sample")
    assert sample.status == "ok" and sample.note == "10/10 samples accepted by check"


def test_unknown_backend_is_refused():
    from solverspace.core.errors import BackendUnavailableError
    with pytest.raises(BackendUnavailableError, match="unknown validation backend 'gpu'"):
        validate_source("x = range(3)\n", backends=("gpu",))


# ------------------------------------------------------------------------------ broken backends
def test_truncating_division_in_c_is_caught_with_a_counterexample(monkeypatch, tmp_path, capsys):
    """Break the C printer's `//` (C's `/` truncates toward zero; Python floors): validate must
    say so and name a configuration on which the reference and C differ."""
    from solverspace.translators.c.expr import CExpressionPrinter
    original = CExpressionPrinter.visit

    def truncating(self, n, *args):   # every node the printer visits: `//` printed as C's `/`
        if isinstance(n, ir.BinOp) and n.op == "//":
            return f"({self.visit(n.left)} / {self.visit(n.right)})"
        return original(self, n, *args)

    monkeypatch.setattr(CExpressionPrinter, "visit", truncating)
    path = tmp_path / "signed.py"
    path.write_text(SIGNED)
    report = validate(str(path), backends=("c", "reference"), **FAST)
    assert report.status == 1, report.render()
    assert any("sets of configurations differ" in p for p in report.problems)
    [example] = report.counterexamples
    assert example.command.startswith(f"solverspace check {path} x=")
    assignment = example.assignment
    assert (assignment["x"] // assignment["y"]) != int(assignment["x"] / assignment["y"])  # a negative quotient
    reference_says = example.verdicts["check"]
    c_says = example.verdicts["c"]
    assert (reference_says == "valid") == (c_says == "does not list it") or \
        (reference_says != "valid") == (c_says == "lists it")
    assert example.derived["q"] == assignment["x"] // assignment["y"]
    text = report.render()
    assert "counterexample" in text and example.command in text and "q = " in text
    # the printed line runs, and the command line agrees with the reference verdict
    monkeypatch.setattr(CExpressionPrinter, "visit", original)
    capsys.readouterr()
    status = main(["check", str(path), *shlex.split(example.command)[3:]])
    out = capsys.readouterr().out
    assert (status == 0) == (reference_says == "valid"), out


def test_broken_c_literal_mode_alone_is_caught(monkeypatch):
    """Only the literal plan broken: C optimized, the reference and C literal still compared."""
    from solverspace.translators.c.expr import CExpressionPrinter
    from solverspace.translators.c import codegen as c_codegen
    original = CExpressionPrinter.visit

    def wrong_modulo(self, n, *args):
        if isinstance(n, ir.BinOp) and n.op == "%" and not getattr(self, "printing_optimized", True):
            return f"({self.visit(n.left)} % {self.visit(n.right)})"  # C's remainder: sign of the dividend
        return original(self, n, *args)

    original_init = c_codegen.CGenerator.__init__

    def init(self, plan, options, *args, **kwargs):
        original_init(self, plan, options, *args, **kwargs)
        self.printer.printing_optimized = bool(options.enabled)

    monkeypatch.setattr(c_codegen.CGenerator, "__init__", init)
    monkeypatch.setattr(CExpressionPrinter, "visit", wrong_modulo)
    report = validate_source("x = range(-6, 7)\ny = iterator([-4, 3])\nrequire(x % y == 1)\n",
                             backends=("c", "c-literal", "reference"), **FAST)
    assert report.status == 1, report.render()
    assert report.outcome("c").digest == report.outcome("reference").digest
    assert report.outcome("c-literal").digest != report.outcome("reference").digest
    [example] = report.counterexamples
    assert example.verdicts["c"] in ("lists it", "does not list it")
    assert example.verdicts["c-literal"] != example.verdicts["c"]


@pytest.mark.skipif(not cpsat_available(), reason="OR-Tools (CP-SAT) is not installed")
def test_broken_cpsat_subtraction_is_found_by_bisection(monkeypatch, tmp_path):
    """CP-SAT only counts; a broken lowering of `-` is located by fixing one parameter after
    another on restricted copies of the space."""
    from solverspace.translators.cpsat.backend import Lowering
    original = Lowering.visit

    def swapped(self, n, *args):   # every node the lowering visits: `a - b` lowered as `b - a`
        if isinstance(n, ir.BinOp) and n.op == "-":
            n = ir.BinOp("-", n.right, n.left)
        return original(self, n, *args)

    monkeypatch.setattr(Lowering, "visit", swapped)
    # `c` is a sink with a default ('u'): a count that summed it in Python would leave the
    # constraint, and the broken `-`, out of the CP-SAT enumeration; validate counts with sinks off
    source = "a = range(0, 6)\nb = range(0, 4)\nc = iterator(['u', 'v'])\nrequire((a - b > 1) | (c == 'u'))\n"
    path = tmp_path / "minus.py"
    path.write_text(source)
    report = validate(str(path), backends=("reference", "cpsat"), **FAST)
    assert report.status == 1, report.render()
    [example] = report.counterexamples
    a, b, c = (example.assignment[k] for k in "abc")
    assert c == "v" and (a - b > 1) != (b - a > 1)
    assert "bisection" in example.reason
    assert example.verdicts["cpsat"].startswith("counts ")
    assert example.command == f"solverspace check {path} a={a} b={b} c=v"


# ------------------------------------------------------------------------------ the command line
def test_cli_validate_agrees_and_exits_0(tmp_path, capsys):
    path = tmp_path / "signed.py"
    path.write_text(SIGNED)
    status = main(["validate", str(path), "--backends", "c,c-literal,reference", "--threads", "2"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "verdict: AGREE: c (" in out and "count " in out


def test_cli_validate_with_settings_and_limit(tmp_path, capsys):
    path = tmp_path / "set.py"
    path.write_text("N = 5\nx = range(N)\ny = range(x, N)\n")
    status = main(["validate", str(path), "--set", "N=40", "--reference-limit", "100",
                   "--backends", "c,reference"])
    out = capsys.readouterr().out
    assert status == 2 and "820 configurations > reference limit 100" in out and "(N=40)" in out


def test_cli_validate_bad_backend_is_bad_input(tmp_path, capsys):
    path = tmp_path / "x.py"
    path.write_text("x = range(3)\n")
    assert main(["validate", str(path), "--backends", "c,gpu"]) == 2
    assert "unknown validation backend 'gpu'" in capsys.readouterr().err


@pytest.mark.skipif(not cpsat_available(), reason="OR-Tools (CP-SAT) is not installed")
def test_cli_validate_gemm_tiny(capsys):
    status = main(["validate", "gemm", "--set", "device=tiny", "--threads", "2", "--workers", "2"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "verdict: AGREE" in out and "cpsat (" in out


def test_a_different_row_order_is_caught(monkeypatch):
    """Same rows, another order (as a C enumerator that ignored the plan's loop order would list
    them): the set digests agree, the order digests do not, and the first differing row is named."""
    from solverspace.translators.c.backend import CEnumerator
    original = CEnumerator.batches

    def reversed_batches(self, *args, **kwargs):
        for batch in original(self, *args, **kwargs):
            yield batch[::-1].copy()

    monkeypatch.setattr(CEnumerator, "batches", reversed_batches)
    report = validate_source("x = range(3)\ny = range(x, 3)\n", backends=("c", "reference"), **FAST)
    assert report.status == 1, report.render()
    assert report.outcome("c").digest == report.outcome("reference").digest
    [problem] = report.problems
    assert problem == ("the row order differs between reference and c: row 0 is x=0 y=0 in reference "
                       "and x=2 y=2 in c")
