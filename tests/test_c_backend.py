"""The compiled C/OpenMP enumerator agrees with the reference exactly (same rows, same order),
with every optimization on, off, and each alone; output is identical for any thread count."""
import itertools
import os
import subprocess

import numpy as np
import pytest

from solverspace import Space, SpaceEvaluationError, UndefinedOperationError
from solverspace.translators.c.backend import CBackend
from solverspace.translators.c.optimize import ALL_OPTIMIZATIONS, Options
from solverspace.translators.errors import UnsupportedConstruct

pytestmark = pytest.mark.needs_cc

MODES = {"optimized": Options(), "literal": Options.literal(),
         **{f"only-{o}": Options(frozenset({o})) for o in ALL_OPTIMIZATIONS}}
VARIANTS = list(itertools.product(["double", "single"], ["real", "complex"], [0, 1], [0, 1]))


def gemm(precision, arithmetic, trans_a, trans_b, **extra):
    return Space.load("gemm", {"device": "tiny", "precision": precision, "arithmetic": arithmetic,
                               "trans_a": trans_a, "trans_b": trans_b, **extra})


def assert_same(space, options, threads=2):
    backend = CBackend(threads=threads, options=options)
    reference = list(space.rows("reference"))
    assert list(backend.rows(space.plan)) == reference
    stats, expected = backend.count(space.plan), space.stats("reference")
    assert stats.count == expected.count == len(reference)
    if not options.enabled:  # literal mode visits exactly the reference's candidates
        assert stats.undefined == expected.undefined


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(map(str, v)))
def test_gemm_tiny_all_variants_optimized(variant):
    assert_same(gemm(*variant), Options())


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("variant", [("single", "real", 0, 1)], ids=lambda v: "-".join(map(str, v)))
def test_gemm_tiny_each_optimization_mode(variant, mode):
    assert_same(gemm(*variant), MODES[mode])


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: "-".join(map(str, v)))
def test_gemm_tiny_full_matrix(variant, mode):
    assert_same(gemm(*variant), MODES[mode])


def test_gemm_scaled_device_with_overrides():
    space = gemm("single", "complex", 1, 1, max_threads_dim_x=48, max_threads_dim_y=40, max_threads_per_block=96,
                 warp_size=8, min_threads_per_multi_processor=128, max_registers_per_thread=40)
    assert_same(space, Options())


SPACES = {
    "negative steps and empty ranges": """
a = range(6, -7, -3)
b = range(a, -4, -2)
c = range(b, b + 3) | iterator([a, 0, -1])
require(a + b + c != 1)
""",
    "floor division and modulo with negative operands": """
a = range(-7, 8)
b = range(-4, 5)
q = a // b
m = a % b
reject_if(q + m > 5)
require((b == 0) | (a // b >= -3))
""",
    "exact division": """
a = range(-6, 7)
b = range(-3, 4)
c = range(1, 4)
require(a / b < c)
require(a / b != b / c)
""",
    "fractions inside comparisons, floor divisions and modulo": """
a = range(-6, 7)
b = range(-3, 4)
c = range(1, 5)
r = (a / b) * 2 - 1 / c
q = (a / c) // (b / 3)
require(r < c)
require(min(a / c, abs(b) / 2) <= 1 + b / c)
reject_if(((a * 3) / c) % (c / 2) == c / (2 * c))
require(q != 1)
""",
    "categorical values and lists": """
kind = iterator(["tex", "ldg", "tex", "shared"])
width = iterator([4, 1, 2, 4, 8])
@require
def fits(kind, width):
    if kind == "tex":
        return width <= 4
    elif kind == "shared":
        return width != 1
    return True
""",
    "closure iterators": """
MAX = 30
@iterator
def fib():
    k = n = 1
    while n <= MAX:
        yield n
        n, k = n + k, n
@iterator
def multiples(fib):
    for i in range(1, 4):
        yield fib * i
outer = range(1, 5)
require((fib + multiples) % outer == 0)
""",
    "iterator algebra and conditionals": """
x = range(0, 12) - iterator([3, 4]) 
y = (range(0, 20, 5) & range(0, 20, 2)) | iterator([7])
@iterator
def z(x, y):
    if x < 4:
        return range(x, y + 1)
    return iterator([x, y, x])
require(if_then_else(x > y, x - y, y - x) < 9)
require((min(x, y, z) >= 0) & (max(x, z) <= 15) & ~(abs(x - z) == 2))
""",
    "division by zero, undefined": """
a = range(-3, 4)
b = range(-2, 3)
d = a // b
require(d + a % b < 3)
require((b * b - 1 == 0) | (12 % (b * b - 1) == 0))
""",
    "bounds the optimizer tightens": """
x = range(1, 20)
y = range(-3, 12)
z = range(0, 40, 3)
d = x * y
require(y * x < 17)
reject_if(d * 2 > x + 30)
require(3 * z <= x + 4 * y - 10)
""",
    "equalities the optimizer solves": """
t = range(1, 40)
p = range(1, 13)
q = range(1, 13)
r = range(12, 0, -1)
require(p * q == t)
require(r == t // 3)
reject_if(p * q * r > 200)
""",
}


@pytest.mark.parametrize("mode", ["optimized", "literal"])
@pytest.mark.parametrize("name", list(SPACES))
def test_constructs_agree_with_reference(name, mode):
    space = Space.from_source(SPACES[name])
    assert_same(space, MODES[mode])


@pytest.mark.slow
@pytest.mark.parametrize("mode", [m for m in MODES if m.startswith("only-")])
@pytest.mark.parametrize("name", list(SPACES))
def test_constructs_agree_with_each_optimization_alone(name, mode):
    assert_same(Space.from_source(SPACES[name]), MODES[mode])


def test_categorical_values_are_decoded(tmp_path):
    space = Space.from_source(SPACES["categorical values and lists"])
    backend = CBackend(threads=2)
    array = backend.array(space.plan)
    assert array.dtype["kind"].kind == "U" and set(array["kind"]) == {"tex", "ldg", "shared"}
    target = tmp_path / "out.csv"
    backend.write(space.plan, target, "csv")
    assert target.read_text().splitlines()[1:] == [",".join(map(str, row)) for row in space.rows("reference")]


def test_output_is_byte_identical_for_any_thread_count(tmp_path):
    space = gemm("single", "real", 0, 0)
    outputs = {}
    for threads in (1, 2, 3):
        for fmt in ("csv", "npy"):
            target = tmp_path / f"t{threads}.{fmt}"
            CBackend(threads=threads).write(space.plan, target, fmt)
            outputs.setdefault(fmt, set()).add(target.read_bytes())
    assert len(outputs["csv"]) == 1 and len(outputs["npy"]) == 1


def test_small_batches_stream_the_same_bytes(tmp_path):
    space = gemm("single", "complex", 0, 0)
    backend = CBackend(threads=2)
    enumerator = backend.enumerator(space.plan)
    whole, pieces = tmp_path / "whole.npy", tmp_path / "pieces.npy"
    enumerator.write(whole, "npy")
    lister = enumerator.write(pieces, "npy", batch_rows=7)
    assert whole.read_bytes() == pieces.read_bytes() and lister == space.count("reference")
    loaded = np.load(pieces)
    assert [tuple(int(v) for v in row) for row in loaded.tolist()] == list(space.rows("reference"))


def test_tightening_lowers_loop_stops_in_the_generated_code():
    from solverspace.translators.c.codegen import CGenerator
    source = CGenerator(Space.load("gemm").plan, Options(frozenset({"tighten"}))).generate().source
    assert source.count("int64_t cap_ =") >= 4  # dim_n and blk_k, in both nests
    plain = CGenerator(Space.load("gemm").plan, Options.literal()).generate().source
    assert "cap_" not in plain


def test_dtypes_are_the_smallest_that_hold_the_proven_range():
    space = Space.from_source("a = range(0, 100)\nb = range(-200, 200, 50)\nc = range(0, 70000, 7000)\nd = a * 100000\n")
    array = CBackend().array(space.plan, with_derived=("d",))
    assert [array.dtype[n].name for n in ("a", "b", "c", "d")] == ["int8", "int16", "int32", "int32"]


def test_strict_mode_and_step_zero_are_errors():
    with pytest.raises(UndefinedOperationError, match="division or modulo by zero"):
        CBackend().count(Space.from_source(SPACES["division by zero, undefined"]).plan, strict=True)
    space = Space.from_source("a = range(-2, 3)\nb = range(0, 5, a)\n")
    with pytest.raises(SpaceEvaluationError, match="step is 0"):
        CBackend().count(space.plan)


def test_overflow_and_unsupported_division_are_refused_with_the_line():
    big = Space.from_source("a = range(1, 2**40)\nb = range(1, 2**40)\nc = a * b * a\nrequire(c > 3)\n")
    with pytest.raises(UnsupportedConstruct, match=r"<space>:3.*may not fit in 64-bit"):
        CBackend().count(big.plan)
    fraction_bound = Space.from_source("a = range(1, 5)\nb = range(0, a / 2)\n")
    with pytest.raises(UnsupportedConstruct, match=r"<space>:2.*its value is a fraction"):
        CBackend().count(fraction_bound.plan)


def test_a_corrupt_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(tmp_path))
    space = Space.from_source("a = range(1, 9)\nrequire(a % 3 != 0)\n")
    from solverspace.translators.c import build as c_build
    from solverspace.translators.c.codegen import CDEF, CGenerator
    source = CGenerator(space.plan, Options()).generate().source + "/* corrupt-cache test */\n"
    path = c_build.module_path(source, CDEF)
    path.write_bytes(b"not a shared object")  # e.g. a build killed half-way by another process
    module = c_build.build(source, CDEF)
    assert module.lib.ss_row_size() > 0 and path.stat().st_size > 1000


def test_a_missing_compiler_gives_a_clear_message(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLVERSPACE_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    space = Space.from_source("a = range(1, 9)\nrequire(a % 5 != 0)\n")
    from solverspace.translators.c.build import CompilerError
    with pytest.raises(CompilerError, match="cannot run the C compiler '/nonexistent/cc'") as info:
        CBackend().count(space.plan)
    assert "generated source:" in str(info.value)


def test_cli_emit_c_prints_compilable_source(tmp_path):
    from solverspace.cli import main
    import contextlib, io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["emit-c", "gemm", "--set", "device=tiny"]) == 0
    source = out.getvalue()
    assert "#pragma omp parallel for schedule(dynamic, 1)" in source and "ss_fdiv" in source
    path = tmp_path / "gemm.c"
    path.write_text(source)
    assert subprocess.run(["gcc", "-fsyntax-only", "-fopenmp", "-w", str(path)]).returncode == 0


def _paper_examples():
    from tests import helpers as paper
    fig2 = paper.FIG2_HEADER + paper.FIG2_INNER + paper.FIG2_OUTER + paper.FIG2_EXPRESSIONS
    return {"fig1": paper.FIG1, "fig2": fig2, "fig3": paper.FIG3_INTENT, "fig4": paper.FIG4, "fig5": paper.FIG5,
            "fig6": paper.FIG6, "closure-with-setting": paper.MULTIPLES}


@pytest.mark.parametrize("name", list(_paper_examples()))
def test_seed_iterator_examples_agree_with_reference(name):
    import textwrap
    assert_same(Space.from_source(textwrap.dedent(_paper_examples()[name])), Options())


def test_ctrl_c_stops_a_long_run_and_leaves_no_file(tmp_path):
    import signal
    import sys
    import time
    target = tmp_path / "h100.npy"
    command = [sys.executable, "-m", "solverspace", "enumerate", "gemm", "--set", "device=h100", "--set",
               "precision=single", "--set", "shared_memory=opt-in", "-o", str(target), "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    deadline = time.time() + 120
    while time.time() < deadline and not any(tmp_path.glob(".h100.npy.*.partial")):
        time.sleep(0.05)  # wait until writing has started (after the build)
    assert proc.poll() is None, proc.communicate()
    time.sleep(0.3)
    sent = time.time()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.time() - sent < 2.0
    assert proc.returncode == 130, (proc.returncode, out, err)
    assert list(tmp_path.iterdir()) == []


def test_a_truncated_cache_entry_is_rebuilt_not_loaded(tmp_path):
    """A cached module cut short (a full disk, a copy interrupted) must not be mapped: the
    dynamic loader would crash the process with SIGBUS. Run in subprocesses, where a crash
    cannot take pytest down with it."""
    import sys
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "SOLVERSPACE_CACHE": str(cache)}
    space = tmp_path / "s.py"
    space.write_text("a = range(1, 2000)\nb = range(a, 2000)\nrequire((a * b) % 7 == 3)\n")
    expected = Space.load(space).count("reference")
    command = [sys.executable, "-m", "solverspace", "count", str(space), "--json", "--quiet"]

    def count():
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
        return int(done.stdout.strip().splitlines()[-1].split('"count": ')[1].split(",")[0])

    assert count() == expected
    (module,) = cache.glob("_ss_*.so")
    data = module.read_bytes()
    module.write_bytes(data[: len(data) // 2])
    assert count() == expected
    assert module.stat().st_size > len(data) // 2  # rebuilt whole
    assert count() == expected  # and the rebuilt entry is trusted again


def test_a_division_by_an_always_undefined_value_is_flagged_not_run():
    # `p // (min(p, 1) - 1)` is always undefined: its bounds are empty, which the printer once took
    # for a proven non-zero divisor, writing C's `/` by the helper's 0: SIGFPE at -O0 (found by a
    # generated sweep; `validation/generate.py` now draws such divisors)
    space = Space.from_source("p = range(1, 5)\nq = range(0, 3)\nd = q // (p // (min(p, 1) - 1))\nrequire(d + q < 4)\n")
    assert "(v_q / " not in CBackend().emit(space.plan)
    reference = space.stats("reference")
    for backend in (CBackend(threads=1, quick=True), CBackend(threads=1)):
        stats = backend.count(space.plan)
        assert (stats.count, stats.undefined) == (reference.count, reference.undefined) == (0, 12)
