"""Order-valued parameters (issue 15): counts against plain-itertools brute force in every
backend, the seed's OA mixer and filter, output formats, bad input and refusals."""
from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest

from solverspace import Space
from solverspace.core.errors import BackendUnavailableError, SpaceDefinitionError, UndefinedOperationError
from solverspace.translators.errors import UnsupportedConstruct
from solverspace.validation.generate_orders import order_space

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "orders"
EPOD = ("thread_grouping", "loop_tiling", "loop_unroll")
ADAPTOR = ("peel_triangular", "padding_triangular")


def counts(space: Space, backends=("reference", "c", "cpsat")) -> dict:
    options = {"c": {"threads": 2}, "cpsat": {"workers": 1}}
    return {b: space.count(b, **options.get(b, {})) for b in backends}


def ordered(seq, items) -> bool:
    return all(seq.index(a) < seq.index(b) for a, b in zip(items, items[1:]))


# ------------------------------------------------------------------------------ the seed's mixer
def mixer_brute(gm_map: bool) -> list[tuple]:
    items = EPOD + ADAPTOR + (("GM_map",) if gm_map else ())
    found = []
    for length in range(3, 6):
        for seq in itertools.permutations(items, length):
            if not (set(EPOD) <= set(seq) and ordered(seq, EPOD)):
                continue
            if set(ADAPTOR) <= set(seq) or ("GM_map" in seq and seq[0] != "GM_map"):
                continue
            found.append(seq)
    return found


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_oa_mixer_gives_the_papers_nine_sequences():
    space = Space.load(EXAMPLES / "oa_mixer.py")
    paper = {EPOD} | {EPOD[:i] + (a,) + EPOD[i:] for a in ADAPTOR for i in range(4)}  # Sec. "Filter": 1)-9)
    assert len(paper) == 9
    assert {r[0] for r in space.rows("reference")} == paper == set(mixer_brute(False))
    assert {r[0] for r in space.rows("c")} == paper
    assert counts(space) == {"reference": 9, "c": 9, "cpsat": 9}


def test_oa_mixer_location_rule_for_gm_map():
    space = Space.load(EXAMPLES / "oa_mixer.py", {"gm_map": "yes"})
    rows = [r[0] for r in space.rows("reference")]
    assert sorted(rows) == sorted(mixer_brute(True))
    assert len(rows) == 18 and all(r[0] == "GM_map" for r in rows if "GM_map" in r)


def test_oa_filter_reproduces_the_papers_semi_output():
    """The filter (seed 002): sequences 2 and 6 degenerate into 1, 5 and 9 lose loop_unroll;
    the semi-output has seven sequences."""
    rows = {r[0] for r in Space.load(EXAMPLES / "oa_filter.py").rows("reference")}
    semi = {EPOD, EPOD[:2] + ("peel_triangular",), EPOD[:2] + ("padding_triangular",)}
    semi |= {EPOD[:i] + (a,) + EPOD[i:] for a in ADAPTOR for i in (1, 2)}    # 3, 4, 7, 8
    assert rows == semi and len(rows) == 7


# ------------------------------------------------------------------------------ the other examples
def matmul_brute() -> int:
    powers = [4, 8, 16, 32, 64, 128]
    total = 0
    for order in itertools.permutations(["i", "j", "k", "ii", "jj", "kk"]):
        if not all(order.index(a) < order.index(a + a) for a in "ijk"):
            continue
        tiles = [list(range(8, 129, 8)) if order[-1] == a + a else powers for a in "ijk"]
        for ti, tj, tk in itertools.product(*tiles):
            if ti * tk + tk * tj + ti * tj > 4096:
                continue
            if order[-1] == "kk" and ti * tj > 256:
                continue
            total += 1
    return total


def telamon_brute() -> int:
    total = 0
    for s in itertools.permutations(["d0", "d1", "d2", "load", "store"]):
        for unroll in (1, 2, 4):
            total += (s.index("load") < s.index("store") and s.index("d2") < s.index("store")
                      and s[0] != "d2" and not (unroll > 1 and s[-1] != "store"))
    return total


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
@pytest.mark.parametrize("name, brute", [("matmul_cpu.py", matmul_brute), ("telamon_pairs.py", telamon_brute)])
def test_examples_count_as_brute_force(name, brute):
    space = Space.load(EXAMPLES / name)
    expected = brute()
    assert expected > 0
    assert counts(space) == dict.fromkeys(("reference", "c", "cpsat"), expected)


# ------------------------------------------------------------------------------ generated spaces
def test_generated_order_spaces_reference_equals_brute_force():
    for seed in range(150):
        generated = order_space(seed)
        assert Space.from_source(generated.source).count("reference") == generated.brute_count(), generated.source


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
@pytest.mark.parametrize("seed", [3, 14, 22])
def test_generated_order_spaces_every_backend(seed):
    generated = order_space(seed)
    space = Space.from_source(generated.source)
    expected = generated.brute_count()
    assert counts(space) == dict.fromkeys(("reference", "c", "cpsat"), expected), generated.source
    assert list(space.rows("c")) == list(space.rows("reference"))


@pytest.mark.slow
@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_generated_order_spaces_every_backend_many():
    for seed in range(1000, 2000):
        generated = order_space(seed, max_items=5)
        space = Space.from_source(generated.source)
        expected = generated.brute_count()
        found = counts(space)
        assert found == dict.fromkeys(found, expected), (seed, generated.source, found)
        assert space.count("c", literal=True) == expected, generated.source


# ------------------------------------------------------------------------------ semantics
SPACE = """
seq = permutation(["i", "j", "k"])
opt = sequence(["a", "b", "c"], 1, 2)
t = range(0, len(opt) + 1)
require(before(seq, "i", "j"))
require(position(opt, "b") <= t)
"""


def test_position_of_an_absent_item_is_undefined():
    space = Space.from_source(SPACE)
    stats = space.stats("reference")
    brute = sum(1 for seq in itertools.permutations("ijk") if seq.index("i") < seq.index("j")
                for n in (1, 2) for opt in itertools.permutations("abc", n) for t in range(len(opt) + 1)
                if "b" in opt and opt.index("b") <= t)
    assert stats.count == brute and stats.undefined > 0
    with pytest.raises(UndefinedOperationError, match="absent from the order"):
        space.count("reference", strict=True)


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_undefined_position_counts_alike_in_c_and_cpsat():
    space = Space.from_source(SPACE)
    assert counts(space) == dict.fromkeys(("reference", "c", "cpsat"), space.count("reference"))


def test_sequence_lengths_and_listing_order():
    space = Space.from_source('s = sequence(["a", "b", "c"], 0, 2)')
    assert list(space.rows("reference")) == [((),), (("a",),), (("a", "b"),), (("a", "c"),), (("b",),), (("b", "a"),),
                                  (("b", "c"),), (("c",),), (("c", "a"),), (("c", "b"),)]
    assert Space.from_source('s = sequence(["a", "b"], 3, 5)').count("reference") == 0
    assert Space.from_source('n = range(0, 4)\ns = sequence(["a", "b", "c"], n, n)').count("reference") == 1 + 3 + 6 + 6


def test_function_bodies_and_integer_items():
    source = """
loops = permutation([0, 1, 2, 3])
@iterator
def unroll(loops):
    if last(loops) == 3:
        return iterator([1, 2, 4])
    return iterator([1])
@require
def outer(loops):
    return position(loops, 0) < position(loops, 2) and contains(loops, 1) and len(loops) == 4
"""
    brute = sum(3 if p[-1] == 3 else 1 for p in itertools.permutations(range(4)) if p.index(0) < p.index(2))
    assert Space.from_source(source).count("reference") == brute


def test_orders_compare_with_equality_in_the_reference():
    space = Space.from_source('a = permutation(["x", "y"])\nb = permutation(["x", "y"])\nrequire(a == b)')
    assert space.count("reference") == 2


EQUAL = """
a = sequence(["x", "y", "z"], 0, 2)
e = permutation(["x", "y"])
c = sequence([1, 2], 0, 2)
d = sequence([2, 1, 3], 0, 3)
reject_if(c != d)
require(a == e)
"""


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_orders_compare_with_equality_in_every_backend():
    brute = 2 * (1 + 2 + 2)   # a == e: x>y or y>x; c == d: every selection of [1, 2]
    assert counts(Space.from_source(EQUAL)) == dict.fromkeys(("reference", "c", "cpsat"), brute)


# ------------------------------------------------------------------------------ output
def test_output_joins_items(tmp_path):
    space = Space.from_source('seq = permutation(["i", "j"])\nopt = sequence(["a"], 0, 1)')
    space.write(tmp_path / "o.csv", "reference")
    with open(tmp_path / "o.csv", newline="") as handle:
        assert list(csv.reader(handle)) == [["seq", "opt"], ["i>j", ""], ["i>j", "a"], ["j>i", ""], ["j>i", "a"]]
    space.write(tmp_path / "o.jsonl", "reference")
    first = json.loads((tmp_path / "o.jsonl").read_text().splitlines()[0])
    assert first == {"seq": "i>j", "opt": ""}
    assert space.to_array("reference")["seq"].tolist() == ["i>j", "i>j", "j>i", "j>i"]


@pytest.mark.needs_cc
def test_c_writes_what_the_reference_writes(tmp_path):
    from solverspace import read_npy
    space = Space.from_source('seq = permutation(["i", "j", "k"])\nx = range(position(seq, "k"), 3)\n'
                              'require(before(seq, "k", "i"))')
    for fmt in ("csv", "jsonl"):
        space.write(tmp_path / f"r.{fmt}", "reference")
        space.write(tmp_path / f"c.{fmt}", "c")
        assert (tmp_path / f"r.{fmt}").read_bytes() == (tmp_path / f"c.{fmt}").read_bytes()
    space.write(tmp_path / "c.npy", "c")
    assert read_npy(tmp_path / "c.npy")["seq"].tolist() == [r[0] for r in space.to_array("reference").tolist()]
    assert [space[i] for i in range(len(space))] == [tuple(r) for r in space.to_array("reference").tolist()]
    assert space.index({"seq": ("k", "i", "j"), "x": 2}) == 4          # after j>k>i's two rows
    assert space.index({"seq": ("k", "j", "i"), "x": 2}) == len(space) - 1


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("source, message", [
    ('s = permutation(["a", "b", "a"])', "appears twice"),
    ('s = permutation([])', "permutation of no items"),
    ('s = interleave(["a", "b"], ["b"])', "appears twice"),
    ('s = permutation(["a", 1])', "mix strings and integers"),
    ('s = permutation(["a>b", "c"])', "separator"),
    ('s = permutation(["a", "b"])\nrequire(position(s, "z") == 0)', "never in"),
    ('s = permutation(["a", "b"])\nt = permutation(["a", "b"])\nrequire(s < t)', "orders an order value"),
    ('s = permutation(["a", "b"])\nx = s + 1', "in arithmetic"),
    ('s = permutation(["a", "b"])\nrequire(s == 1)', "not an order"),
    ('s = permutation(["a", "b"])\nrequire(position(s, 1) == 0)', "kind of the order's items"),
    ('x = range(3)\nrequire(first(x) == 0)', "is not an order"),
    ('x = range(3)\ns = permutation(["a", x])', "not a string or integer constant"),
])
def test_bad_input_is_refused_at_load(source, message):
    with pytest.raises(SpaceDefinitionError, match=message):
        Space.from_source(source)


# ------------------------------------------------------------------------------ refusals
CONDITIONAL = """
adaptor = iterator(["none", "peel"])
@iterator
def seq(adaptor):
    if adaptor == "peel":
        return interleave(["tg", "lt", "lu"], ["peel"])
    return interleave(["tg", "lt", "lu"])
"""


def test_conditional_order_iterators_work_in_the_reference():
    assert Space.from_source(CONDITIONAL).count("reference") == 1 + 4


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
@pytest.mark.parametrize("source, message", [
    (CONDITIONAL, "must be permutation"),
    ('a = permutation(["x", "y"])\nb = a\nrequire(first(a) == "x")', "cannot hold an order"),
])
def test_c_and_cpsat_refuse_what_the_slots_cannot_express(source, message):
    space = Space.from_source(source)
    for backend, options in (("c", {"threads": 1}), ("cpsat", {"workers": 1})):
        with pytest.raises(UnsupportedConstruct, match=message) as info:
            space.count(backend, **options)
        assert "--backend reference" in str(info.value)


@pytest.mark.needs_cpsat
def test_cpsat_best_through_the_slots():
    space = Space.from_source(SPACE)
    ranked = space.best("position(seq, 'k') * 10 - t + len(opt)", top=4).ranked
    values = sorted((r[0].index("k") * 10 - r[2] + len(r[1]) for r in space.rows("reference")), reverse=True)
    assert [r.objective for r in ranked] == values[:4]
    assert all(space.check(r.configuration).valid for r in ranked)


@pytest.mark.needs_cc
def test_c_refuses_the_funnel_of_orders_and_the_reference_measures_it():
    space = Space.from_source('s = permutation(["a", "b", "c"])\nrequire(before(s, "a", "b"))')
    with pytest.raises(BackendUnavailableError, match="cannot measure the funnel") as info:
        space.funnel("c")
    assert "--backend reference" in str(info.value)
    assert space.funnel("reference").table()


@pytest.mark.needs_cpsat
def test_cpsat_approximate_count_and_check_take_orders():
    space = Space.from_source('s = permutation(["a", "b", "c"])\nrequire(before(s, "a", "b"))')
    assert space.approximate_count(seed=1).estimate == 3   # small: counted exactly
    assert space.check({"s": ("a", "c", "b")}).valid and not space.check({"s": "b>a>c"}).valid


# ------------------------------------------------------------------------------ validate on generated spaces
def _validate_generated(backends, examples: int):
    """`validation.generate.spaces(orders=...)` through `validate`: the backends must agree."""
    from hypothesis import HealthCheck, given, settings
    from solverspace.validation.generate import spaces
    from solverspace.validation.validate import validate_source
    seen = []

    @settings(max_examples=examples, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(spaces(orders=0.6, max_candidates=2000, max_constraints=1, max_derived=2))  # most non-empty
    def check(source):
        report = validate_source(source, backends=backends, cpsat_options={"workers": 1}, threads=2)
        assert report.status == 0 or (report.status == 2 and "declined" in report.render()), report.render()
        assert not [o for o in report.outcomes if o.status == "failed"], report.render()
        seen.append("permutation(" in source or "interleave(" in source or "sequence(" in source)

    check()
    assert sum(seen) >= examples // 3   # orders were drawn


@pytest.mark.needs_cpsat
def test_generated_spaces_with_orders_cpsat_and_reference_agree():
    _validate_generated(("cpsat", "reference"), 40)


@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_generated_spaces_with_orders_every_backend_agrees():
    _validate_generated(("c", "cpsat", "reference", "sample"), 3)


@pytest.mark.slow
@pytest.mark.needs_cc
@pytest.mark.needs_cpsat
def test_generated_spaces_with_orders_every_backend_agrees_many():
    _validate_generated(("c", "c-literal", "cpsat", "reference", "sample"), 300)


def test_t1_export_refuses_orders():
    from solverspace.io.t1 import export_t1
    from solverspace.io.t1.write import T1ExportError
    with pytest.raises(T1ExportError, match="is an order"):
        export_t1(Space.from_source('s = permutation(["a", "b"])').model)


@pytest.mark.needs_cpsat
def test_cpsat_completes_and_samples_through_the_slots():
    space = Space.from_source(SPACE)
    done = space.complete({"seq": ("k", "j", "i")})
    assert done.feasible is False and done.conflict == ["require_line5"]
    done = space.complete({"seq": "i>k>j", "opt": ("b",)})
    assert done.feasible and space.check(done.completion).valid
    done = space.complete({"opt": ("a", "c")})          # b absent: position(opt, "b") is undefined
    assert done.feasible is False and done.undefined == ["require_line6"]
    everything = {tuple(r) for r in space.to_array("reference").tolist()}
    drawn = space.sample(len(everything), seed=3, method="cpsat")
    assert {tuple(r) for r in drawn.tolist()} == everything


def test_helpers_named_like_order_functions_still_win():
    source = ("def first(a, b):\n    return a * 10 + b\nx = range(3)\ny = range(3)\n"
              "@require\ndef r(x, y):\n    return first(x, y) > 5\nz = first(x, 1)\n")
    assert Space.from_source(source).count("reference") == 6
