"""CP-SAT counts against the reference enumerator: GEMM on the scaled-down device in all 16
variants, the paper's iterator examples, and small spaces for every construct of the language.
The undefined-operation tally (which depends on the plan) must match the reference too."""
from __future__ import annotations

import itertools

import pytest

pytest.importorskip("ortools")

from tests.helpers import FIG1, FIG2_EXPRESSIONS, FIG2_HEADER, FIG2_INNER, FIG2_OUTER, FIG3_INTENT, \
    FIG4, FIG4_IN_EVERY_SCOPE, FIG5, FIG6, MULTIPLES, readme_tour, space  # noqa: E402

from solverspace import Space, UndefinedOperationError  # noqa: E402
from solverspace.registry.backends import get_backend  # noqa: E402
from solverspace.translators.cpsat.backend import CpSatBackend, LowerBound, count  # noqa: E402
from solverspace.translators.cpsat.count import Counter, Options  # noqa: E402

VARIANTS = list(itertools.product(["single", "double"], ["real", "complex"], [0, 1], [0, 1]))


def assert_matches_reference(s: Space, **options):
    expected = s.stats("reference")  # the reference enumerator
    got = count(s, **options)
    assert (got.count, got.undefined, got.undefined_by) == (expected.count, expected.undefined, expected.undefined_by)
    assert got.exact
    return got


# ------------------------------------------------------------------------------------ GEMM
@pytest.mark.parametrize("precision, arithmetic, trans_a, trans_b", VARIANTS)
def test_gemm_on_the_scaled_down_device_matches_the_reference(precision, arithmetic, trans_a, trans_b):
    s = Space.load("gemm", {"device": "tiny", "precision": precision, "arithmetic": arithmetic,
                            "trans_a": trans_a, "trans_b": trans_b})
    assert_matches_reference(s, workers=1)


def test_gemm_structure_is_read_from_the_dag():
    """The switches and vec_mul are summed out in Python; the A and B reader pairs are the groups
    that become independent given their separators (found from the DAG, not from names)."""
    s = Space.load("gemm", {"device": "tiny"})
    counter = Counter(s.model, s.plan, Options(workers=1))
    structure = counter.structure(counter.full_problem())
    assert {w.param: w.scope for w in structure.weights} == {
        "vec_mul": ("dim_vec",), "tex_a": (), "tex_b": (), "shmem_l1": (), "shmem_banks": ()}
    assert [c.params for c in structure.components] == [
        ("dim_m", "dim_n", "blk_m", "blk_n", "blk_k", "dim_vec", "dim_m_a", "dim_n_a", "dim_m_b", "dim_n_b")]
    assert structure.groups == [
        (("dim_m_a", "dim_n_a"), ("dim_m", "dim_n", "blk_m", "blk_k", "dim_vec")),
        (("dim_m_b", "dim_n_b"), ("dim_m", "dim_n", "blk_n", "blk_k", "dim_vec"))]


def test_registered_backend_and_worker_counts_agree():
    s = Space.load("gemm", {"device": "tiny", "precision": "single"})
    assert s.stats("cpsat").count == 2000
    assert isinstance(get_backend("cpsat", workers=1).inner, CpSatBackend)   # in the orders wrapper (OrderSlots)
    assert count(s, workers=1).count == count(s, workers=2).count == count(s, workers=3).count == 2000


def test_a_time_limit_gives_a_marked_lower_bound():
    s = Space.load("gemm")  # K40c: far more than a few milliseconds of search
    stats = count(s, time_limit=0.3, workers=1, undefined=False)
    assert not stats.exact and isinstance(stats.count, LowerBound)
    assert 0 <= stats.count < 1_207_600
    assert str(stats.count).startswith("at least ") and "lower bound" in str(stats.count)


def test_strict_mode_reports_an_undefined_operation_like_the_reference():
    s = Space.load("gemm", {"device": "tiny", "precision": "single"})
    with pytest.raises(UndefinedOperationError, match=r"(?s)low_fmas.*fmas_per_block / loads_per_block.*dim_vec=4"):
        count(s, strict=True)
    assert count(Space.load("gemm", {"device": "tiny"}), strict=True).count == 336


# ------------------------------------------------------------------------------------ the paper
@pytest.mark.parametrize("source, settings", [
    (FIG1, {}), (FIG1, {"N": 7}),
    (FIG2_HEADER + FIG2_INNER + FIG2_OUTER, {"architecture": "kepler"}),
    (FIG2_HEADER + FIG2_OUTER + FIG2_INNER, {"architecture": "maxwell"}),
    (FIG2_EXPRESSIONS, {}),
    (FIG3_INTENT, {}), (FIG3_INTENT, {"MAX": 97}),
    (FIG4, {}), (FIG4, {"WARP_SIZE": 64, "MAX_M": 48}),
    (FIG5, {"trans_a": 0}), (FIG5, {"trans_a": 1}),
    (FIG6, {}), (FIG6, {"MAX": 1000}),
    (MULTIPLES, {}), (MULTIPLES, {"MAX": 5}),
])
def test_paper_examples(source, settings):
    assert_matches_reference(space(source, settings), workers=1)


def test_paper_fig4_with_deferred_and_closure_iterators_in_every_scope():
    s = space(FIG4_IN_EVERY_SCOPE)
    assert_matches_reference(s)


# ------------------------------------------------------------------------------------ constructs
SMALL_SPACES = {
    "negative steps": """
        a = range(-3, 4)
        b = range(-3, 4)
        c = iterator([-2, -1, 1, 3])
        x = range(a, b, c)
        """,
    "countdown": "k = range(1, 4)\nn = range(k, 0, -1)\nm = range(n * 2, -n - 1, -n)",
    "empty ranges": "a = range(0, 4)\nx = range(a, 2)\ny = range(3, a, 1)\nz = range(5, 5)",
    "empty constant domain": "a = range(0, 4)\nx = range(3, 3)",
    "value lists": "v = iterator([4, 1, 4, 2, 1])\nw = iterator([v, v * 2, 4, v])\nrequire(w != 8)",
    "iterator algebra": """
        a = range(1, 6)
        u = range(0, a) | iterator([7, 2, a * 3])
        i = range(0, 10, 2) & range(a, 12)
        d = range(0, 8) - iterator([a, 2 * a])
        """,
    "categorical": """
        kind = iterator(["tex", "ldg", "ro"])
        mode = iterator(["a", kind, "b"])
        x = range(1, 5)
        require(if_then_else(kind == "tex", x > 2, x < 3))
        reject_if((mode == kind) & (x == 1))
        """,
    "conditional domains": """
        mode = setting("fast", choices=["fast", "slow"])
        a = range(-2, 5)
        @iterator
        def b(a):
            if a > 1:
                return range(a, 10, a)
            elif a == 0:
                return iterator([0, 5])
            return range(3)
        """,
    "closure iterators": """
        LIMIT = 30
        base = range(1, 5)
        twice = base * 2

        @iterator
        def powers(base, twice):
            p = base
            while p <= LIMIT + twice:
                yield p
                p *= 2

        @iterator
        def tags():
            yield "x"
            yield "y"

        reject_if(powers % 3 == 1)
        below = range(0, powers, 3)
        require((tags == "x") | (below > 0))
        """,
    "division by zero in a derived value": """
        x = range(-3, 4)
        y = range(-2, 3)
        q = x // y
        r = x % (y + 1)
        require(q + r > -3)
        """,
    "division by zero in a domain": "x = range(-2, 3)\ny = range(0, 12 // x)\nz = range(0, 6 % (x + 1))",
    "division by zero in a constraint": """
        x = range(-3, 4)
        y = range(-3, 4)
        reject_if(x / y < 1)
        require((y == 0) | (x // y >= 0))
        """,
    "guards": """
        x = range(-4, 5)
        y = range(-2, 3)
        @require
        def c(x, y):
            return y == 0 or x // y < 2 and x % y != 1
        @reject_if
        def d(x, y):
            if y != 0:
                return x / y > 1
            return x > 2
        """,
    "exact fractions": """
        a = range(1, 7)
        b = range(1, 7)
        r = a / b
        s = r * r - a / 3
        require(2 * s >= 1)
        reject_if(max(r, b / 4) * 2 == 3)
        require(r / (a - b) != -1)
        """,
    "min max abs pow": """
        a = range(-4, 5)
        b = range(-3, 4)
        require(abs(a - b) ** 2 <= max(a, b, 1) * 3)
        reject_if(min(a, -b) ** 3 < -20)
        """,
    "derived values in domains": """
        a = range(1, 5)
        b = range(1, 5)
        area = a * b
        c = range(area, 20, a + b)
        require(c % 2 == 0)
        """,
    "free parameters with dependent domains": """
        a = range(0, 4)
        b = range(a, 6)
        free = range(0, b)
        deep = range(free, 4)
        other = iterator([1, 2, 3])
        require(a + b < 7)
        """,
    "independent groups": """
        a = range(1, 10)
        b = range(1, 10)
        c = range(1, 10)
        d = range(1, 10)
        require(a * b % 3 == 0)
        require(c + d < 9)
        """,
    "constant constraint": "x = range(3)\nlimit = 4\nrequire(limit > 2)",
    "booleans as numbers": "x = range(-2, 3)\nflag = x > 0\nrequire(flag + (x < 1) * 2 >= 1)",
}


@pytest.mark.parametrize("name", sorted(SMALL_SPACES))
def test_small_space_matches_the_reference(name):
    assert_matches_reference(space(SMALL_SPACES[name]))


def test_readme_tour_matches_the_reference_counting_its_groups_per_separator():
    """`unroll` (given `dim`) and `tile, fib` (given `blk, vec, kind`) are counted once per
    separator assignment: the outer part has few solutions and reuses them. GEMM's reader pairs
    are not worth it (almost every outer solution has its own separator assignments, and most
    have no reader pair): they are enumerated jointly."""
    stats = assert_matches_reference(Space.from_source(readme_tour(), {"MAX": 8}))
    assert stats.strategy == "separated" and stats.solutions < stats.count / 10
    assert count(Space.load("gemm", {"device": "tiny"})).strategy == "joint"


# ------------------------------------------------------------------------------------ random spaces
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


CONSTANTS = range(-3, 4)


def _constant(k: int) -> str:
    """A one-value parameter for the constant k: module-level Python would fold `0 // 0` itself."""
    return f"k{k}" if k >= 0 else f"km{-k}"


def _expressions(names, division=True):
    leaves = st.one_of(st.sampled_from(names), st.sampled_from(CONSTANTS).map(_constant))
    ops = ["+", "-", "*", "//", "%"] + (["/"] if division else [])

    def extend(children):
        return st.one_of(
            st.tuples(st.sampled_from(ops), children, children).map(lambda t: f"({t[1]} {t[0]} {t[2]})"),
            st.tuples(st.sampled_from(["min", "max"]), children, children).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
            children.map(lambda c: f"abs({c})"),
            st.tuples(children, children, children).map(lambda t: f"if_then_else({t[1]} > 0, {t[0]}, {t[2]})"))
    return st.recursive(leaves, extend, max_leaves=4)


@st.composite
def random_spaces(draw):
    xs = draw(st.lists(st.integers(-4, 4), min_size=1, max_size=5, unique=True))
    bound = _expressions(["x"], division=False)
    if draw(st.booleans()):
        y = f"range({draw(bound)}, {draw(bound)}, {draw(st.sampled_from([-2, -1, 1, 2, 3]))})"
    else:
        y = f"iterator([{draw(bound)}, {draw(bound)}, 2])"
    derived = draw(_expressions(["x", "y"]))
    left, right = draw(_expressions(["x", "y", "d"])), draw(_expressions(["x", "y", "d"]))
    cmp = draw(st.sampled_from(["<", "<=", "==", "!=", ">"]))
    joiner = draw(st.sampled_from(["and", "or"]))
    guard = draw(st.sampled_from(["y != 0", "x > y", "d >= 0"]))
    constants = "".join(f"{_constant(k)} = iterator([{k}])\n" for k in CONSTANTS)
    source = (f"{constants}x = iterator({xs})\ny = {y}\nd = x + 0 * y + {derived}\n"
              f"@require\ndef c(x, y, d):\n    return {guard} {joiner} {left} {cmp} {right}\n")
    if draw(st.booleans()):  # a group (z) independent of y given x, and a free parameter (w)
        source += (f"z = range({draw(bound)}, {draw(bound)} + 4)\n"
                   f"@reject_if\ndef e(x, z):\n    return {draw(_expressions(['x', 'z']))} > {draw(_expressions(['x', 'z']))}\n"
                   f"w = range(0, abs({draw(_expressions(draw(st.sampled_from([['x'], ['y', 'z']])), division=False))}) % 4)\n")
    return source


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spaces())
def test_random_spaces_match_the_reference(source):
    assert_matches_reference(Space.from_source(source), workers=1)


@pytest.mark.parametrize("body", ["return [] if x > 0 else [1, 2]", "return [x, 7] if x == 1 else []"])
def test_a_dependent_domain_that_may_be_an_empty_list(body):
    """An empty value list is an empty domain (CP-SAT once raised KeyError on it); every backend
    counts the same."""
    space = Space.from_source(f"x = range(3)\n@iterator\ndef y(x):\n    {body}\n")
    expected = space.count("reference")
    assert count(space, workers=1).count == expected
    assert space.count("c") == expected
