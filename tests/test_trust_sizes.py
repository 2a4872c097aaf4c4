"""Domain sizes before listing (issue 23, item 7, and the range past 2**63 of "Tracebacks").

An order parameter of 13 items has 6,227,020,800 values; the reference used to list them
(`list(itertools.permutations(items))`) before `auto`'s budget could act, and grew until the
kernel killed it. `range(10**20)` crashed the reference and `auto` with `len()`'s OverflowError.
Now order domains are sized arithmetically and iterated lazily (`solverspace.core.orders`), the
reference counts a loop nothing reads by a multiply, refuses a walk of more than 2**63 values of
one domain, and `auto` sends a domain larger than its budget to C (or CP-SAT), or refuses naming
the parameter and its size.

Every test that could allocate without bound on a regression runs in a child process whose
address space is limited (`_bounded`), so a regression fails the test instead of the machine.
"""
from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings

from solverspace import Space
from solverspace.core import orders
from solverspace.registry.backends import get_backend
from solverspace.core.errors import SolverspaceError
from solverspace.analysis.reference import ReferenceEnumerator
from solverspace.validation.generate import spaces
from solverspace.validation.generate_orders import big_order_space

MEMORY = 2 * 2**30   # the child's address space: Python, NumPy, cffi, OR-Tools and OpenMP fit in 1 GiB
LETTERS = "abcdefghijklm"


def _bounded(code: str, timeout: float = 120) -> dict:
    """Run `code` in a child Python whose address space is limited to `MEMORY`; it prints one
    JSON object as its last line, returned here (a MemoryError or a kill fails the test)."""
    prelude = f"import json, resource\nresource.setrlimit(resource.RLIMIT_AS, ({MEMORY}, {MEMORY}))\n"
    done = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _limit_memory() -> None:
    """In a child before it runs: the same address-space limit as `_bounded`."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


# ------------------------------------------------------------------------------ the lazy domains
def _oracle_interleavings(parts):
    """Merges keeping each part's order, in the documented order: depth first, taking from the
    lowest part first (= sorted by the part each position takes from)."""
    items = [x for p in parts for x in p]
    part_of = {x: i for i, p in enumerate(parts) for x in p}
    found = [o for o in itertools.permutations(items)
             if all(o.index(p[i]) < o.index(p[i + 1]) for p in parts for i in range(len(p) - 1))]
    return sorted(found, key=lambda o: [part_of[x] for x in o])


def _oracle_sequences(items, lo, hi):
    found = [s for k in range(max(lo, 0), min(hi, len(items)) + 1) for s in itertools.permutations(items, k)]
    return sorted(found, key=lambda s: [items.index(x) for x in s])   # depth first = item-index order


def _probes(items):
    return {o for k in range(len(items) + 2) for o in itertools.permutations((*items, "z"), k)}


@pytest.mark.parametrize("items", [("a",), ("a", "b"), ("b", "a", "c"), (3, 1, 2, 0)])
def test_permutations_size_order_and_membership(items):
    domain = orders.permutations(items)
    listed = list(itertools.permutations(items))
    assert list(domain) == listed and domain.size == len(listed) == len(domain)
    assert all((o in domain) == (o in listed) for o in _probes(items))


@pytest.mark.parametrize("parts", [(), (("a",),), (("a", "b"), ("c",)), (("a",), (), ("b", "c"), ("d",)),
                                   ((1, 2), (3, 4, 5)), (("a",), ("b",), ("c",))])
def test_interleavings_size_order_and_membership(parts):
    domain = orders.interleavings(parts)
    listed = _oracle_interleavings([p for p in parts if p])
    assert list(domain) == listed and domain.size == len(listed)
    items = tuple(x for p in parts for x in p)
    assert all((o in domain) == (o in listed) for o in _probes(items))


@pytest.mark.parametrize("items,lo,hi", [(("a", "b", "c"), 0, 3), (("a", "b", "c", "d"), 1, 2),
                                         (("a", "b"), 3, 5), (("a", "b", "c"), -1, 1), (("a", "b"), 2, 1),
                                         ((), 0, 0), (("a", "b", "c"), 3, 9)])
def test_sequences_size_order_and_membership(items, lo, hi):
    domain = orders.sequences(items, lo, hi)
    listed = _oracle_sequences(items, lo, hi)
    assert list(domain) == listed and domain.size == len(listed)
    assert all((o in domain) == (o in listed) for o in _probes(items))


def test_sizes_are_arithmetic_past_the_machine():
    got = _bounded("""
        from solverspace.core import orders
        print(json.dumps([str(orders.permutations(tuple(range(30))).size),
                          str(orders.interleavings((tuple(range(30)), tuple(range(30, 60)))).size),
                          str(orders.sequences(tuple(range(20)), 0, 20).size),
                          str(orders.domain_size(range(10**20))), str(orders.domain_size(range(10**20, -10**20, -7))),
                          [orders.domain_size(r) for r in (range(5, -7, -3), range(0), range(3, 1), range(1, 10, 4),
                                                           range(-4, 9, 2))]]))
    """, timeout=60)
    assert got[:5] == [str(math.factorial(30)), str(math.comb(60, 30)), str(sum(math.perm(20, k) for k in range(21))),
                       str(10**20), str(-(-2 * 10**20 // 7))]   # ceil(2e20 / 7)
    assert got[5] == [len(r) for r in (range(5, -7, -3), range(0), range(3, 1), range(1, 10, 4), range(-4, 9, 2))]


# ------------------------------------------------------------------------------ item 7: orders
def test_count_of_permutation_of_13_in_bounded_memory():
    got = _bounded(f"""
        from solverspace import Space
        s = Space.from_source("p = permutation(list({LETTERS!r}))")
        rows = s.rows("reference")   # lazy: the first row at once, in bounded memory
        print(json.dumps([s.count("auto"), s.count("reference"), "".join(next(iter(rows))[0])]))
    """)
    assert got == [math.factorial(13)] * 2 + [LETTERS]


def test_interleave_of_two_30_item_lists_and_long_sequences():
    got = _bounded("""
        from solverspace import Space
        a, b = [f"a{i}" for i in range(30)], [f"b{i}" for i in range(30)]
        s = Space.from_source(f"p = interleave({a!r}, {b!r})\\nq = sequence(list('abcdefghijkl'), 2, 9)")
        print(json.dumps([s.count("auto"), s.count("reference")]))
    """)
    expected = math.comb(60, 30) * sum(math.perm(12, k) for k in range(2, 10))
    assert got == [expected, expected]


def test_check_of_a_permutation_of_13_does_not_list_it():
    got = _bounded(f"""
        from solverspace import Space
        s = Space.from_source("p = permutation(list({LETTERS!r}))\\nrequire(before(p, 'a', 'b'))")
        good, bad = s.check({{"p": ">".join({LETTERS[::-1]!r}[::-1])}}), s.check({{"p": ">".join({LETTERS[::-1]!r})}})
        print(json.dumps([good.valid, bad.valid, s.check({{"p": "a>b"}}).valid]))
    """)
    assert got == [True, False, False]


def test_auto_refuses_a_big_order_that_c_and_cpsat_refuse_naming_it():
    """An order passed to a closure: C and CP-SAT refuse the space, and the order alone is past
    the reference's budget: a refusal naming the parameter, its size and what to do."""
    got = _bounded(f"""
        from solverspace import Space
        from solverspace.core.errors import SolverspaceError
        s = Space.from_source("p = permutation(list({LETTERS!r}))\\n@iterator\\ndef t(p):\\n    yield p[0]\\n")
        found = []
        for ask in (lambda: s.count("auto"), lambda: list(s.rows("auto"))):
            try:
                ask()
            except SolverspaceError as exc:
                found.append([type(exc).__name__, str(exc), isinstance(exc, ValueError)])
        print(json.dumps(found))
    """)
    assert len(got) == 2
    for kind, message, typed in got:
        assert kind == "BeyondBudgetError" and typed and "'p'" in message and "6,227,020,800" in message
        assert "closure" in message and "--backend reference" in message


@pytest.mark.parametrize("seed", range(8))
def test_generated_big_order_domains_counted_exactly(seed):
    generated = big_order_space(seed)
    assert generated.order_size > 40_000   # past auto's reference budget
    got = _bounded(f"""
        from solverspace import Space
        s = Space.from_source({generated.source!r})
        print(json.dumps([s.count("auto"), s.count("reference")]))
    """)
    assert got == [generated.expected] * 2


@pytest.mark.parametrize("seed", range(3))
def test_generated_big_orders_under_a_rule_go_to_c(seed):
    """The order is read by a precedence rule: the reference would walk it; auto's budget stops
    the walk at once and the C backend counts it."""
    generated = big_order_space(seed, constrained=True)
    got = _bounded(f"""
        from solverspace import Space
        from solverspace.registry.backends import get_backend
        s = Space.from_source({generated.source!r})
        auto = get_backend("auto", "count")
        print(json.dumps([auto.count(s.plan).count, auto.answered_by, s.count("c")]))
    """, timeout=300)
    assert got == [generated.expected, "c", generated.expected]


def test_generated_big_orders_under_a_rule_cpsat_and_reference():
    generated = big_order_space(1, constrained=True)   # 8 items
    got = _bounded(f"""
        from solverspace import Space
        s = Space.from_source({generated.source!r})
        print(json.dumps([s.count("cpsat"), s.count("reference")]))
    """, timeout=600)
    assert got == [generated.expected] * 2


def test_listed_positions_refuse_past_their_limit(monkeypatch):
    from solverspace.analysis import reference_backend
    monkeypatch.setattr(reference_backend, "LISTED_LIMIT", 10)
    space = Space.from_source("x = range(4)\ny = range(3)")
    with pytest.raises(SolverspaceError, match="more than 10 valid configurations"):
        get_backend("reference", "positions").positions(space.plan)
    small = Space.from_source("x = range(2)\ny = range(5)")
    assert get_backend("reference", "positions").positions(small.plan).size() == 10


# ------------------------------------------------------------------------------ ranges past 2**63
def test_range_past_2_63_counts_by_a_multiply():
    got = _bounded("""
        from solverspace import Space
        space = Space.from_source("x = range(10**20)\\ny = range(3)\\nrequire(y > 0)\\nz = range(-10**30, 10**30, 3)")
        print(json.dumps([str(Space.from_source("x = range(10**20)").count(b)) for b in ("reference", "auto")]
                         + [str(space.count("reference")), str(space.count("auto"))]))
    """, timeout=60)
    assert got == [str(10**20)] * 2 + [str(10**20 * 2 * -(-2 * 10**30 // 3))] * 2


def test_range_past_2_63_walked_is_refused_naming_it():
    got = _bounded("""
        from solverspace import Space
        from solverspace.core.errors import SolverspaceError
        space = Space.from_source("x = range(10**20)\\nrequire(x % 7 == 0)")
        found = []
        for ask in (lambda: space.count("reference"), lambda: space.count("auto"), lambda: list(space.rows("auto"))):
            try:
                ask()
            except SolverspaceError as exc:
                found.append([type(exc).__name__, isinstance(exc, ValueError), str(exc)])
        print(json.dumps(found))
    """, timeout=60)
    assert [kind for kind, _, _ in got] == ["DomainTooLargeError", "BeyondBudgetError", "BeyondBudgetError"]
    assert all(typed for _, typed, _ in got)
    assert "'x'" in got[0][2] and str(10**20) in got[0][2]
    assert "parameter 'x' has 100,000,000,000,000,000,000 values" in got[1][2]
    assert "parameter 'x' has 100,000,000,000,000,000,000 values" in got[2][2]


def test_cli_range_past_2_63_and_sweep_point(tmp_path):
    path = tmp_path / "big.py"
    path.write_text("N = setting(4)\nx = range(N)\ny = range(3)\nrequire(y > 0)\n")

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "solverspace", *args], capture_output=True, text=True,
                              timeout=120, preexec_fn=_limit_memory)
    done = cli("count", str(path), "--set", f"N={10**20}", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["count"] == 2 * 10**20
    done = cli("sweep", str(path), "--set", f"N=5,{10**20 - 1}")
    assert done.returncode == 0, done.stderr
    assert str(2 * (10**20 - 1)) in done.stdout and "10  " in done.stdout
    walked = tmp_path / "walked.py"
    walked.write_text("x = range(10**20)\nrequire(x % 7 == 0)\n")
    for backend in ("auto", "reference"):
        done = cli("count", str(walked), "--backend", backend)
        assert done.returncode == 2 and "Traceback" not in done.stderr and "'x'" in done.stderr, done.stderr


# ------------------------------------------------------------------------------ the multiply is the walk
def _walked(plan):
    """The stats of walking every row (no multiply)."""
    enumerator = ReferenceEnumerator(plan)
    for _ in enumerator.rows():
        pass
    return enumerator.stats


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(spaces(orders=0.3))
def test_count_with_multiplies_equals_the_walk(text):
    """Counting multiplies free loops; the count and every undefined tally equal the walk's."""
    space = Space.from_source(text)
    counter = ReferenceEnumerator(space.plan)
    counter.count()
    walked = _walked(space.plan)
    assert (counter.stats.count, counter.stats.undefined, counter.stats.undefined_by,
            counter.stats.first_undefined) == (walked.count, walked.undefined, walked.undefined_by,
                                               walked.first_undefined)


def test_multiply_scales_undefined_tallies():
    """`a` is free (nothing reads it) and outermost: the undefined `c // b` below it is tallied
    once per value of `a`, as the walk tallies it."""
    space = Space.from_source("a = range(4)\nb = range(-1, 2)\nc = range(3)\nrequire(c // b >= 0)")
    assert space.plan.order == ("a", "b", "c")
    counter = ReferenceEnumerator(space.plan, budget=10**6)   # a budget never reached: it counts the work
    assert counter.count() == 4 * 4 == _walked(space.plan).count   # b = -1 keeps c = 0, b = 1 all three
    assert counter.stats.undefined == _walked(space.plan).undefined == 4 * 3
    assert counter.stats.undefined_by == _walked(space.plan).undefined_by
    assert counter.work == 1 + 3 + 3 * 3   # `a` multiplied (walked: 4 + 4 * (3 + 3 * 3) candidate values)
