"""What test files share: plain functions and constants (fixtures live in `tests/conftest.py`).

A test file imports from here (and gets fixtures from conftest), never from another test file:
`tests/test_suite_shape.py` fails on such an import. A helper moves here once a second file needs it.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import itertools
import json
import operator
import os
import random
import sys
import textwrap
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from scipy import stats

from solverspace import Space, SolverspaceError
from solverspace.analysis.objective import parse_objective
from solverspace.analysis.plan import make_plan
from solverspace.analysis.reference import ReferenceEnumerator
from solverspace.lang.evaluate import Undefined, compile_expr
from solverspace.io.loader import load_source
from solverspace.lang.printing import to_source
from solverspace.validation import shape

#: The test suite's own folder (corpus/, data/).
TESTS = Path(__file__).parent
#: Space files of every shape, one per file (tests/corpus/).
CORPUS = TESTS / "corpus"


def space(source: str, settings: dict | None = None, **options) -> Space:
    """A space from an indented triple-quoted string (dedented, so it may sit inside a test)."""
    return Space.from_source(textwrap.dedent(source), settings, **options)


def space_file(tmp_path: Path, text: str, name: str = "space.py") -> str:
    """Write a space file into a test's folder; its path as text (what `Space.load` and the CLI take)."""
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def readme_tour() -> str:
    """The docs' language tour (docs/reference/language.md: the space file its first block writes)."""
    text = (TESTS.parent / "docs" / "reference" / "language.md").read_text()
    return text.split("cat > tour.py <<'EOF'\n", 1)[1].split("\nEOF\n", 1)[0] + "\n"


# ------------------------------------------------------------------------ small spaces
#: Dependent ranges, a categorical parameter, a derived value and a constraint: small enough for
#: the reference, rich enough for the compiled enumerator (tests of `auto` and of building).
SMALL = """
a = range(1, 9)
b = range(a, 17, a)
c = ["x", "y", "z"]
s = a * b
reject_if((s % 3 == 0) & (c == "y"))
"""

#: Small spaces of different shapes, for per-configuration uniformity tests of samplers.
UNIFORMITY_SPACES = {
    "dependent ranges and guards": """
a = range(-3, 5)
b = range(a, 6, 2)
c = iterator([1, 2, 3, 2])
require((b - a) % c == 0)
reject_if(a * c > 6)
""",
    "categorical and closure": """
kind = iterator(["x", "y", "z"])
@iterator
def odd():
    n = 1
    while n < 12:
        yield n
        n += 2
w = range(1, 5)
@require
def fit(kind, odd, w):
    if kind == "x":
        return odd % w == 1
    return odd > w
""",
}

#: Settings as runtime inputs: programs differing only in settings share one compiled module.
SHAPES_SPACE = """\
LIMIT = setting(9, choices=range(4, 40))
STEP = setting(2, choices=[1, 2, 3])
x = range(1, LIMIT)
y = range(x, LIMIT + 3, STEP)
z = iterator(['a', 'b'])
w = x * y % (LIMIT - 1)
require(x + y < LIMIT + 2)
reject_if((w == 3) & (z == 'b'))
"""


def per_configuration_p(space, drawn_configs) -> float:
    """The chi-square p-value of drawn rows against the uniform distribution over all of `space`'s rows."""
    rows = list(space.rows("reference"))
    index = {row: i for i, row in enumerate(rows)}
    observed = np.bincount([index[row] for row in drawn_configs], minlength=len(rows))
    return stats.chisquare(observed).pvalue


# ------------------------------------------------------------------------ the BEAST paper's figures
#: Seed 004, Figs. 1-6, as space files (tests/test_paper_examples.py tells their story).
FIG1 = """
N = setting(4)
r = range(N)
fibonacci = iterator([1, 1, 2, 3, 5, 8, 13])
"""

FIG2_HEADER = """
Fermi, Kepler, Maxwell = "fermi", "kepler", "maxwell"
architecture = setting("fermi", choices=["fermi", "kepler", "maxwell"])
"""

FIG2_INNER = """
@iterator
def inner():
    return range(outer)
"""

FIG2_OUTER = """
@iterator
def outer():
    if architecture == Fermi: return range(32)
    elif architecture == Kepler: return range(192)
    elif architecture == Maxwell: return range(256)
"""

FIG2_EXPRESSIONS = """
ex_outer = range(100)
ex_inner = range(ex_outer)
"""

FIG3_INTENT = """
MAX = setting(20)

@iterator
def primes():
    yield 1
    yield 2
    n = 3
    old_primes = list()
    while n <= MAX:
        for i in old_primes:
            if n % i == 0:
                break
        else:
            yield n
            old_primes.append(n)
        n += 2
"""

FIG4 = """
WARP_SIZE = 32
MAX_THREADS = 256
MAX_M = 64
dim_m = range(8, 33, 8)
dim = range(WARP_SIZE, MAX_THREADS+1, WARP_SIZE)
blk_m = range(dim_m, MAX_M+1, dim_m)
"""

#: FIG4 with a deferred iterator (`blk_k`) and a closure iterator (`unroll`) that read its global
#: names, and a constraint over both: global names must be visible in every scope.
FIG4_IN_EVERY_SCOPE = FIG4 + """
@iterator
def blk_k():
    if blk_m >= 32:
        return iterator([dim // 32, blk_m // 8])
    return blk_m // 8

@iterator
def unroll():
    u = 1
    while u <= blk_k:
        yield u
        u *= 2

require(blk_m * blk_k <= dim)
"""

FIG5 = """
trans_a = setting(0, choices=[0, 1])
blk_m = range(1, 5)
blk_k = range(1, 4)
x = iterator([100, 200])

@iterator
def blk_n_a(blk_m, blk_k):
    x = blk_k
    if trans_a != 0:
        x = blk_m
    return range(x, 0, -1)
"""

FIG6 = """
MAX = setting(20)

@iterator
def fibonacci():
    k = n = 1
    while n <= MAX:
        yield n
        n, k = n+k, n
"""

MULTIPLES = """
MAX = setting(12)
step = range(1, 4)

@iterator
def multiples():
    v = step
    while v <= MAX:
        yield v
        v += step
"""


# ------------------------------------------------------------------------ CP-SAT
# Hotspot's shape: `u` is read only by `t % u == 0`, so held at each `t` the rest splits off.
HOTSPOT_LIKE = """
bx = iterator([1, 2, 4, 8, 16, 32, 64])
by = iterator([1, 2, 4, 8, 16])
tx = range(1, 9)
ty = range(1, 9)
t = range(1, 11)
u = range(1, 11)
sh = iterator([0, 1])
require(bx * by >= 8)
require(t % u == 0)
require((bx * tx + 2 * t) * (by * ty + 2 * t) * (2 + sh) <= 2000)
"""


def assert_cpsat_matches_reference(source: str) -> None:
    """CP-SAT counts what the reference counts (a refusal or evaluation error is checked elsewhere)."""
    space = Space.from_source(source)
    try:
        expected = space.count("reference")
        got = space.count("cpsat")
    except SolverspaceError:    # a refusal or an evaluation error: test_validation_generated checks those
        return
    assert got == expected, source


# ------------------------------------------------------------------------ objectives and search
ROOFLINE = """
N = 64
tile = range(1, 17)
unroll = iterator([1, 2, 4, 8])
kind = iterator(["tex", "ldg"])
loads = N * N // tile + if_then_else(kind == "tex", 0, N)
require(tile % unroll == 0)
cost(max(N * N * N / (tile * unroll * 8), loads / 3) + if_then_else(kind == "tex", 2, 1))
"""


#: Property tests that evaluate in Python: 60 examples, no deadline, no health checks.
FAST = hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def generated(max_examples: int):
    """The settings of a property test over generated spaces: `max_examples` of them, the same ones
    on every run (derandomized, no example database), slow or large examples allowed."""
    return hypothesis_settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
                               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def load_generated(source: str):
    """A generated space's model (its lint warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_source(source, "generated.py")


def generated_with_cost(source: str):
    """A generated space's (model, plan, cost as source text), or None when the generator gave it no cost."""
    model = load_generated(source)
    if model.cost is None:
        return None
    return model, make_plan(model), to_source(model.cost)


def ranked(result) -> list:
    """A `best` result's ranking as (objective, configuration) pairs: what two engines must agree on."""
    return [(r.objective, r.configuration) for r in result.ranked]


def walk_prefixes(plan, expr, at_prefix) -> None:
    """Walk every admitted prefix of the loop nest (the reference's levels): `at_prefix(index,
    env)` is called there, before the deeper loops change `env`, and returns a function that is
    given the objective's values on the prefix's valid completions (where it is defined)."""
    enumerator = ReferenceEnumerator(plan)
    levels = enumerator.levels
    objective = compile_expr(expr)

    def walk(index: int, env: dict) -> list:
        if index == len(levels):
            try:
                return [objective(env)]
            except Undefined:
                return []
        level = levels[index]
        try:
            values = level.domain(env)
        except Undefined:
            return []
        found = []
        for value in values:
            env[level.name] = value
            if enumerator.admit(level, env):
                check = at_prefix(index, env)
                below = walk(index + 1, env)
                check(below)
                found += below
        return found

    env: dict = {}
    if enumerator.admit(enumerator.prelude, env):
        check = at_prefix(-1, env)
        check(walk(0, env))


def truth(space: Space, model: str, noise: float = 0.5, seed: int = 0, undefined: float | None = None):
    """Every valid configuration's synthetic time by parameter tuple: the model plus a shift that
    makes every time non-negative (a time is never negative) plus seeded noise; where the model is
    undefined (no bound), `undefined` times the smallest time (default: slower than any other)."""
    derived = tuple(space.model.derived_value)
    names = space.parameters + derived
    value = compile_expr(parse_objective(space.model, model))
    exact, missing = {}, []
    for row in space.rows("reference", with_derived=derived):
        key = row[:len(space.parameters)]
        try:
            exact[key] = float(value(dict(zip(names, row))))
        except Undefined:
            missing.append(key)
    shift = max(0.0, -min(exact.values(), default=0.0))
    times = {key: v + shift + random.Random(f"{seed}{key!r}").random() * noise for key, v in exact.items()}
    for key in missing:
        noisy = random.Random(f"{seed}{key!r}").random()
        times[key] = (min(times.values(), default=1.0) * undefined * noisy if undefined is not None
                      else max(times.values(), default=0.0) + 1 + noisy)
    return times


class Counting:
    """A measurement callable over a table of times that counts its calls. Its state (a space,
    its calls) has no stable text: `tune_identity` names what it measures, the table, so that a
    second instance over the same table reuses the first one's measurements."""

    def __init__(self, space: Space, times: dict, stop_after: int | None = None):
        self.space, self.times, self.calls, self.stop_after = space, times, [], stop_after

    @property
    def tune_identity(self) -> str:
        return f"table {sorted(self.times.items())!r}"

    def __call__(self, config: dict) -> float:
        if self.stop_after is not None and len(self.calls) == self.stop_after:
            raise KeyboardInterrupt
        key = tuple(config[p] for p in self.space.parameters)
        self.calls.append(key)
        return self.times[key]


# ------------------------------------------------------------------------ work, not time
@dataclasses.dataclass
class Work:
    """What a block of code did: Python function calls made and the most memory it held at once
    (bytes allocated through Python's allocators, as `tracemalloc` traces them)."""
    calls: int = 0
    peak_bytes: int = 0


@contextlib.contextmanager
def counting_work():
    """Count the work done inside the `with` block (tests bound work, never elapsed time): a loop
    that runs away shows in `calls`, a huge number or list built before a refusal in `peak_bytes`."""
    work = Work()

    def profile(frame, event, arg):
        if event == "call":
            work.calls += 1

    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    sys.setprofile(profile)
    try:
        yield work
    finally:
        sys.setprofile(None)
        work.peak_bytes = max(0, tracemalloc.get_traced_memory()[1] - base)
        if not tracing:
            tracemalloc.stop()


# ------------------------------------------------------------------------------ unwritable places
#: Root ignores permission bits: a test of a read-only directory made by `chmod` is skipped as root.
needs_permission_bits = pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                                           reason="root ignores permission bits")


def skip_unless_sys_refuses_new_files() -> None:
    """Skip the test unless /sys refuses a new file (EACCES even to root, as a read-only directory does)."""
    try:
        os.close(os.open("/sys/solverspace-probe", os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        os.unlink("/sys/solverspace-probe")
        pytest.skip("/sys takes new files here")
    except OSError:
        pass


@contextlib.contextmanager
def read_only_directory(tmp_path: Path):
    """A directory below `tmp_path` that its owner may read but not write (made writable again after)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        yield locked
    finally:
        locked.chmod(0o700)


# ------------------------------------------------------------------------------ the package's modules
PROJECT_ROOT = Path(__file__).resolve().parents[1]


def project_modules() -> dict[str, Path]:
    """Every project module of this checkout under its installed name (a package under its own name)."""
    return shape.project_modules(PROJECT_ROOT)


#: A small space with a dependent range, a categorical and a free parameter: the search-move tests'
#: hand-checked example (designs, repair, conditional samples).
MOVES_SPACE = """
    x = range(1, 5)
    y = range(x, 5)
    k = iterator(["b", "a"])
    h = range(1, 4)
    require(x + y < 6)
    require((k == "a") | (x < 4))
"""


def corpus_space(path: Path) -> Space:
    """A corpus space file loaded as `Space` (its lint warnings silenced: the corpus means them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Space.from_source(path.read_text(), filename=path.name)


def generated_examples(count: int):
    """The Hypothesis settings of a test over generated spaces: `count` examples, derandomized,
    no deadline, no example database, no health checks."""
    from hypothesis import HealthCheck, settings
    return settings(max_examples=count, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


#: The 16 precision/arithmetic/transpose variants of the BEAST GEMM space.
TINY_VARIANTS = list(itertools.product(["double", "single"], ["real", "complex"], [0, 1], [0, 1]))


def tiny_gemm(variant):
    """The GEMM space on the scaled-down `tiny` device, in one of `TINY_VARIANTS`."""
    from solverspace import Space
    precision, arithmetic, trans_a, trans_b = variant
    return Space.load("gemm", {"device": "tiny", "precision": precision, "arithmetic": arithmetic,
                               "trans_a": trans_a, "trans_b": trans_b})


# ------------------------------------------------ Kernel Tuner's form: the peer T1 files and the toy space
PEER_SPACES = TESTS / "data" / "peer_spaces"
FAST_FILES = ["benchmark_hub_T1/convolution_milo", "benchmark_hub_T1/dedispersion_milo",
              "benchmark_hub_T1/unused_pnpoly", "benchmark_hub_T1/unused_convolution",
              "willemsen2025/dedispersion", "willemsen2025/atf_prl2",
              "willemsen2025/atf_prl4"]
MAX_THREADS = 1024


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}


def _values(text: str) -> list:
    """A T1 `Values` string as Kernel Tuner reads it (it calls eval): read here by walking the
    expression, never run (literals, `+ - * // **`, `range`, `list`, one-generator list
    comprehensions); anything else fails the test that reads the file."""
    return list(_value_of(ast.parse(text, mode="eval").body, {}))


def _value_of(node, names: dict):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value_of(item, names) for item in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value_of(node.operand, names)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_value_of(node.left, names), _value_of(node.right, names))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("range", "list") \
            and not node.keywords:
        return {"range": range, "list": list}[node.func.id](*(_value_of(a, names) for a in node.args))
    if isinstance(node, ast.ListComp) and len(node.generators) == 1 and not node.generators[0].ifs \
            and isinstance(node.generators[0].target, ast.Name):
        loop = node.generators[0]
        return [_value_of(node.elt, {**names, loop.target.id: item}) for item in _value_of(loop.iter, names)]
    raise ValueError(f"a T1 Values expression the test helper does not read: {ast.unparse(node)}")


def t1_arguments(path: Path) -> tuple[dict, list]:
    """A T1 file as Kernel Tuner's arguments: `tune_params` and restriction strings."""
    space = json.loads(path.read_text())["ConfigurationSpace"]
    tune_params = {p["Name"]: _values(p["Values"]) for p in space["TuningParameters"]}
    return tune_params, [c["Expression"] for c in space.get("Conditions", [])]


def peer_file(name: str) -> Path:
    """A T1 file of tests/data/peer_spaces by its name without `.json`."""
    path = PEER_SPACES / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    return path


TOY = {"block_size_x": [16, 32, 64, 128, 256], "block_size_y": [1, 2, 4, 8, 16], "tile_x": [1, 2, 3, 4],
       "tile_y": [1, 2, 4], "unroll": [0, 1]}
TOY_RESTRICTIONS = ["block_size_x * tile_x <= 512", "tile_x * tile_y < 12", "unroll == 0 or tile_x > 1"]

#: A space past the reference's 100,000 candidate values (its neighbour queries go through the
#: compiled engine) whose valid set is small enough to list for brute force.
COMPILED_MOVES_SPACE = """
    x = range(0, 400)
    y = range(0, 400)
    k = iterator(["p", "q"])
    require(x + y < 40)
    require((x * y) % 7 == 0)
    reject_if((k == "q") & (x == 3))
"""


def run(tune, cache, strategy, options=None, **extra):
    """`tune` (Kernel Tuner's `tune_kernel` or ours) on the toy space in simulation mode from `cache`."""
    return tune("toy", "", (1024,), [], dict(TOY), restrictions=list(TOY_RESTRICTIONS), cache=str(cache),
                simulation_mode=True, strategy=strategy, strategy_options=options, quiet=True, verbose=False, **extra)


def logged(caplog) -> str:
    """What the library logged through its `solverspace` loggers since the last call, one message
    a line (the records are then cleared): its notices are log records, not lines on stderr."""
    said = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("solverspace."))
    caplog.clear()
    return said
