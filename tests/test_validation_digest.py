"""The set digest is computed identically in Python (reference rows) and in NumPy (C batches)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from solverspace import Space
from solverspace.validation.digest import (
    MASK, Digest, array_row_hashes, digest_array, digest_rows, multiset_difference, row_hash, string_word,
    value_word)

INT_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4"]
_LIMITS = {d: (int(np.iinfo(d).min), int(np.iinfo(d).max)) for d in INT_DTYPES}
# NumPy's fixed-width str drops trailing NULs, so no NUL (a categorical value never has one)
STRINGS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00"),
                  min_size=0, max_size=6)


@st.composite
def tables(draw):
    """(rows as Python tuples, the same rows as a structured array with random column dtypes)."""
    kinds = draw(st.lists(st.sampled_from(INT_DTYPES + ["U", "O"]), min_size=1, max_size=5))
    n = draw(st.integers(0, 30))
    columns = []
    for kind in kinds:
        if kind in ("U", "O"):
            columns.append(draw(st.lists(STRINGS, min_size=n, max_size=n)))
        else:
            lo, hi = _LIMITS[kind]
            columns.append(draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)))
    rows = list(zip(*columns)) if n else []
    dtype = []
    for i, kind in enumerate(kinds):
        if kind == "U":
            width = max([len(s) for s in columns[i]] + [1])
            dtype.append((f"c{i}", f"<U{width}"))
        else:
            dtype.append((f"c{i}", object if kind == "O" else kind))
    array = np.array(rows, dtype=dtype) if n else np.empty(0, dtype=dtype)
    return rows, array


@settings(max_examples=150, deadline=None)
@given(tables())
def test_python_and_numpy_row_hashes_are_equal(table):
    rows, array = table
    assert [int(h) for h in array_row_hashes(array)] == [row_hash(r) for r in rows]
    assert digest_rows(rows) == digest_array(array)


@settings(max_examples=60, deadline=None)
@given(tables(), st.randoms(use_true_random=False), st.integers(1, 7))
def test_digest_ignores_order_and_batching_but_order_digest_does_not(table, rnd, batch):
    rows, array = table
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    assert digest_rows(shuffled) == digest_rows(rows)
    whole, batched, python = Digest(), Digest(), Digest()
    whole.add_array(array)
    for start in range(0, len(array), batch):
        batched.add_array(array[start:start + batch])
    python.add_rows(rows)
    assert (whole.value, whole.order, whole.count) == (batched.value, batched.order, batched.count) \
        == (python.value, python.order, python.count)
    if len(set(rows)) > 1 and shuffled != rows:
        reordered = Digest()
        reordered.add_rows(shuffled)
        assert reordered.order != python.order


def test_words_of_values():
    assert value_word(-1) == MASK and value_word(True) == 1 and value_word(5) == 5
    assert value_word("a") == string_word("a") != string_word("b")
    assert string_word("ü") != string_word("u")
    with pytest.raises(TypeError, match="integers or categorical strings"):
        value_word(1.5)


def test_digest_sees_a_changed_a_missing_and_a_duplicated_row():
    rows = [(1, "a"), (2, "bb"), (-3, "a")]
    base = digest_rows(rows)
    assert digest_rows(rows[:2]) != base
    assert digest_rows(rows + [rows[0]]) != base
    assert digest_rows([(1, "a"), (2, "bb"), (-3, "bb")]) != base
    assert digest_rows([(1, "a"), (2, "bb"), (3, "a")]) != base
    assert digest_rows([]) == 0


def test_multiset_difference():
    a = np.array([1, 2, 2, 3], dtype=np.uint64)
    b = np.array([2, 3, 4], dtype=np.uint64)
    assert multiset_difference(a, b).tolist() == [1, 2]
    assert multiset_difference(b, a).tolist() == [4]
    assert multiset_difference(a, np.zeros(0, dtype=np.uint64)).tolist() == [1, 2, 3]


C_SPACES = {
    "categorical": 'k = iterator(["tex", "ldg", "ü"])\nx = range(-3, 4)\ny = range(x, 5, 2)\n'
                   'require((k != "ldg") | (x * y < 0))\n',
    "negative": "x = range(5, -6, -2)\ny = iterator([x, -x, 100000, -100000])\nreject_if(x // 3 == y % 4)\n",
}


@pytest.mark.parametrize("name", sorted(C_SPACES))
def test_reference_rows_and_c_arrays_have_the_same_digest(name):
    pytest.importorskip("cffi")
    from solverspace.translators.c.backend import CBackend
    from solverspace.translators.c.optimize import Options
    space = Space.from_source(C_SPACES[name])
    rows = list(space.rows("reference"))
    for options in (Options(), Options.literal()):
        array = CBackend(threads=2, options=options).array(space.plan)
        python, vectorised = Digest(), Digest()
        python.add_rows(rows)
        vectorised.add_array(array, space.parameters)
        assert len(rows) > 3
        assert (python.value, python.order) == (vectorised.value, vectorised.order)


def test_gemm_tiny_digest_python_equals_numpy():
    pytest.importorskip("cffi")
    from solverspace.translators.c.backend import CBackend
    space = Space.load("gemm", {"device": "tiny", "precision": "single"})
    array = CBackend(threads=2).array(space.plan)
    assert digest_rows(list(space.rows("reference"))) == digest_array(array, space.parameters)
