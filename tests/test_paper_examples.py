"""The BEAST paper's iterator examples (seed 004, sections V-VIII, Figs. 1-6) as runnable spaces.

Every figure is written as a space file, with the names the figure leaves open (settings such as
`MAX` or `architecture`, the iterator `dim_m` of Fig. 4) defined around it. Expected values come
from hand computation or from the same logic run as plain Python in the test.
"""
from __future__ import annotations


import pytest

from solverspace import Space
from tests.helpers import FIG1, FIG2_EXPRESSIONS, FIG2_HEADER, FIG2_INNER, FIG2_OUTER, FIG3_INTENT, FIG4, \
    FIG4_IN_EVERY_SCOPE, FIG5, FIG6, MULTIPLES, space


def values(s: Space, name: str) -> list:
    """The values a one-parameter space (or the first column) takes, in output order."""
    column = s.parameters.index(name)
    return [row[column] for row in s.rows("reference")]


def as_dicts(s: Space) -> list[dict]:
    return [dict(zip(s.parameters, row)) for row in s.rows("reference")]


# ------------------------------------------------------------------------------------ Fig. 1


@pytest.mark.parametrize("n", [1, 4, 7])
def test_fig1_expression_iterators(n):
    s = space(FIG1, {"N": n})
    assert s.parameters == ("r", "fibonacci")
    # the value list drops the duplicate 1, keeping the first; range(N) is Python's range
    expected = [(i, f) for i in range(n) for f in [1, 2, 3, 5, 8, 13]]
    assert list(s.rows("reference")) == expected
    assert s.count("reference") == 6 * n


def test_fig1_single_value_and_default_setting():
    s = space(FIG1)
    assert s.settings == {"N": 4}
    assert s.count("reference") == 24
    assert values(space("only = iterator(5)"), "only") == [5]


# ------------------------------------------------------------------------------------ Fig. 2
OUTER_SIZE = {"fermi": 32, "kepler": 192, "maxwell": 256}


def test_fig2_literal_figure_loads_with_its_dependency_structure():
    """The figure as printed (inner defined before outer, no `else`: the setting decides the branch)."""
    s = space(FIG2_HEADER + FIG2_INNER + FIG2_OUTER + FIG2_EXPRESSIONS)
    assert s.parameters == ("inner", "outer", "ex_outer", "ex_inner")
    order = s.plan.order
    assert order.index("outer") < order.index("inner")
    assert order.index("ex_outer") < order.index("ex_inner")
    levels = [sorted(level["parameters"]) for level in s.dag.level_sets]
    assert levels == [["ex_outer", "outer"], ["ex_inner", "inner"]]
    # 496 * 4950 configurations: too many to list here, so check single configurations
    assert s.check({"inner": 30, "outer": 31, "ex_outer": 99, "ex_inner": 98}).valid
    assert not s.check({"inner": 31, "outer": 31, "ex_outer": 5, "ex_inner": 0}).valid
    assert not s.check({"inner": 0, "outer": 32, "ex_outer": 5, "ex_inner": 0}).valid  # 32 not in range(32)


@pytest.mark.parametrize("architecture", ["fermi", "kepler", "maxwell"])
def test_fig2_deferred_iterators_follow_the_setting(architecture):
    s = space(FIG2_HEADER + FIG2_INNER + FIG2_OUTER, {"architecture": architecture})
    size = OUTER_SIZE[architecture]
    assert s.plan.order == ("outer", "inner")
    assert s.count("reference") == sum(range(size))  # inner takes `outer` values for each outer value
    rows = as_dicts(s)
    assert rows == [{"inner": i, "outer": o} for o in range(size) for i in range(o)]


@pytest.mark.parametrize("architecture", ["fermi", "kepler"])
def test_fig2_definition_order_does_not_matter(architecture):
    """Deferred iterators may be defined in any order: same plan, same configurations, same order."""
    inner_first = space(FIG2_HEADER + FIG2_INNER + FIG2_OUTER, {"architecture": architecture})
    outer_first = space(FIG2_HEADER + FIG2_OUTER + FIG2_INNER, {"architecture": architecture})
    assert inner_first.parameters == ("inner", "outer")
    assert outer_first.parameters == ("outer", "inner")  # columns follow definition order
    assert inner_first.plan.order == outer_first.plan.order == ("outer", "inner")
    assert as_dicts(inner_first) == as_dicts(outer_first)
    assert inner_first.count("reference") == outer_first.count("reference") == sum(range(OUTER_SIZE[architecture]))


def test_fig2_expression_iterators_in_their_required_order():
    s = space(FIG2_EXPRESSIONS)
    assert list(s.rows("reference")) == [(o, i) for o in range(100) for i in range(o)]
    assert s.count("reference") == 4950


def test_fig2_expression_iterators_in_the_wrong_order_fail_like_the_paper_says():
    """The paper: expression iterators in the other order raise NameError; ours names the line."""
    with pytest.raises(ValueError, match=r"<space>:1: unknown name.*ex_outer"):
        space("ex_inner = range(ex_outer)\nex_outer = range(100)\n")


# ------------------------------------------------------------------------------------ Fig. 3


def plain_primes(limit: int) -> list[int]:
    """1, 2 and the odd primes <= limit, by trial division in plain Python."""
    return [1, 2] + [n for n in range(3, limit + 1, 2) if all(n % d for d in range(2, n))]


@pytest.mark.parametrize("limit", [3, 4, 20, 97, 100])
def test_fig3_prime_closure_iterator(limit):
    s = space(FIG3_INTENT, {"MAX": limit})
    assert values(s, "primes") == plain_primes(limit)


def test_fig3_primes_by_hand():
    assert values(space(FIG3_INTENT), "primes") == [1, 2, 3, 5, 7, 11, 13, 17, 19]


def test_fig3_as_printed_runs_as_python_would():
    """The printed figure attaches `else` to the `if` inside the loop; over the initially empty
    `old_primes` the loop body never runs, so Python yields only 1 and 2. The closure is real
    Python, so the space reproduces exactly that (which is why the tests use the for/else intent)."""
    printed = FIG3_INTENT.replace("                break\n        else:", "                break\n            else:")
    printed = printed.replace("            yield n\n            old_primes.append(n)",
                              "                yield n\n                old_primes.append(n)")
    assert "            else:\n                yield n" in printed
    assert values(space(printed), "primes") == [1, 2]


# ------------------------------------------------------------------------------------ Fig. 4


@pytest.mark.parametrize("settings", [{}, {"WARP_SIZE": 64, "MAX_M": 48}])
def test_fig4_global_scope(settings):
    s = space(FIG4, settings)
    warp = settings.get("WARP_SIZE", 32)
    max_m = settings.get("MAX_M", 64)
    expected = [(dm, d, b)
                for dm in range(8, 33, 8)
                for d in range(warp, 256 + 1, warp)
                for b in range(dm, max_m + 1, dm)]
    assert list(s.rows("reference")) == expected
    assert s.count("reference") == len(expected)


def test_fig4_global_names_are_visible_in_every_scope():
    """Global-scope iterators are usable in expressions, deferred (local) and closure scopes."""
    s = space(FIG4_IN_EVERY_SCOPE)
    expected = []
    for dm in range(8, 33, 8):
        for d in range(32, 257, 32):
            for b in range(dm, 65, dm):
                ks = list(dict.fromkeys([d // 32, b // 8])) if b >= 32 else [b // 8]
                for k in ks:
                    if b * k > d:
                        continue
                    u = 1
                    while u <= k:
                        expected.append((dm, d, b, k, u))
                        u *= 2
    assert list(s.rows("reference")) == expected
    assert s.count("reference") == len(expected) > 0


# ------------------------------------------------------------------------------------ Fig. 5


@pytest.mark.parametrize("trans_a", [0, 1])
def test_fig5_local_scope(trans_a):
    s = space(FIG5, {"trans_a": trans_a})
    assert s.parameters == ("blk_m", "blk_k", "x", "blk_n_a")  # the local `x` is no parameter
    expected = [(m, k, x, n)
                for m in range(1, 5)
                for k in range(1, 4)
                for x in (100, 200)
                for n in range(m if trans_a else k, 0, -1)]
    assert list(s.rows("reference")) == expected
    # the local `x` hides the global iterator `x`: blk_n_a depends on blk_k (or blk_m) only
    deps = s.model.parameter["blk_n_a"].depends_on
    assert deps == ({"blk_m"} if trans_a else {"blk_k"})
    assert s.dag.level_sets[1]["parameters"] == ["blk_n_a"]


# ------------------------------------------------------------------------------------ Fig. 6


def plain_fibonacci(limit):
    k = n = 1
    while n <= limit:
        yield n
        n, k = n + k, n


@pytest.mark.parametrize("limit", [1, 2, 20, 1000])
def test_fig6_fibonacci_closure(limit):
    s = space(FIG6, {"MAX": limit})
    assert values(s, "fibonacci") == list(plain_fibonacci(limit))


def test_fig6_by_hand():
    assert values(space(FIG6), "fibonacci") == [1, 2, 3, 5, 8, 13]


def test_fig6_closure_scope_hides_its_state():
    """`n` and `k` are the generator's own state: a global iterator `n` is not a dependency."""
    s = space("n = iterator([7, 9])\n" + FIG6)
    assert s.parameters == ("n", "fibonacci")
    assert s.model.parameter["fibonacci"].depends_on == frozenset()
    assert list(s.rows("reference")) == [(n, f) for n in (7, 9) for f in (1, 2, 3, 5, 8, 13)]


# ------------------------------------------------------------- closures with dependencies


@pytest.mark.parametrize("limit", [12, 5])
def test_closure_depends_on_a_setting_and_a_parameter(limit):
    s = space(MULTIPLES, {"MAX": limit})
    assert s.plan.order == ("step", "multiples")
    assert s.model.parameter["multiples"].depends_on == {"step"}
    expected = [(st, m) for st in range(1, 4) for m in range(st, limit + 1, st)]
    assert list(s.rows("reference")) == expected
    assert s.count("reference") == len(expected)


def test_closure_with_arguments_derived_inputs_and_constraints():
    s = space("""
        LIMIT = setting(10)
        base = range(1, 4)
        twice = base * 2

        @iterator
        def powers(base, twice):
            p = base
            while p <= LIMIT + twice:
                yield p
                p *= 2

        @reject_if
        def odd_power(powers):
            return powers % 2 == 1

        below = range(0, powers, 3)
        """, {"LIMIT": 6})
    expected = []
    for base in range(1, 4):
        p = base
        while p <= 6 + 2 * base:
            if p % 2 == 0:
                expected.extend((base, p, b) for b in range(0, p, 3))
            p *= 2
    assert list(s.rows("reference")) == expected
    assert s.plan.order == ("base", "powers", "below")
