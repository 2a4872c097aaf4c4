"""Order-independent digests of sets of configurations, identical in Python and in NumPy.

A *row* is a tuple of parameter values (ints and categorical strings) in column order. Each
value becomes a 64-bit word, the words of a row are folded into one 64-bit row hash, and:

- the **set digest** is the sum of the row hashes modulo 2**64: it does not depend on row order,
  and it changes when a row is added, dropped, duplicated or altered (up to 64-bit collisions);
- the **order digest** is the sum of `mix64(row_hash ^ mix64(position))`: it also depends on
  the position of every row, so two listings in different orders differ.

The same arithmetic is written twice: `row_hash` for one Python tuple (the reference
enumerator's rows) and `array_row_hashes` vectorised over a NumPy structured array (the C
enumerator's batches, categorical columns decoded to strings). `tests/test_validation_digest.py`
proves the two equal, on random rows and on real spaces.

Words: an integer `v` is `v mod 2**64` (two's complement, so NumPy's int64 view of a negative
value gives the same word); a string is `mix64(FNV-1a-64(utf-8 bytes) ^ STRING_TAG)`, hashed
once per distinct string on the NumPy side.

>>> d = Digest()
>>> d.add_rows([(1, "a"), (2, "b")])
>>> e = Digest()
>>> e.add_rows([(2, "b"), (1, "a")])
>>> d.value == e.value, d.order == e.order
(True, False)
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

MASK = (1 << 64) - 1
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_ROW_MULTIPLIER = 0x9E3779B97F4A7C15   # odd: folding words is injective per step
_ROW_SEED = 0x243F6A8885A308D3
STRING_TAG = 0x5EED5EED5EED5EED
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3


# ------------------------------------------------------------------------------ scalar (Python)
def mix64(x: int) -> int:
    """SplitMix64's finaliser: a bijection of 64-bit words with good avalanche."""
    x &= MASK
    x ^= x >> 30
    x = (x * _M1) & MASK
    x ^= x >> 27
    x = (x * _M2) & MASK
    x ^= x >> 31
    return x


def string_word(text: str) -> int:
    """The word of a categorical string: FNV-1a over its UTF-8 bytes, tagged and mixed."""
    h = _FNV_OFFSET
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * _FNV_PRIME) & MASK
    return mix64(h ^ STRING_TAG)


def value_word(value) -> int:
    """The word of one value (bools count as the integers 0/1)."""
    if isinstance(value, str):
        return string_word(value)
    if isinstance(value, (int, np.integer)):
        return int(value) & MASK
    raise TypeError(f"cannot digest value {value!r} of type {type(value).__name__}: "
                    "configuration values are integers or categorical strings")


def row_hash(row: Sequence) -> int:
    """The 64-bit hash of one row (a tuple of values in column order)."""
    h = _ROW_SEED
    for value in row:
        h = mix64((h * _ROW_MULTIPLIER + value_word(value)) & MASK)
    return h


def position_hash(row_hash_value: int, position: int) -> int:
    """The contribution of a row at a 0-based position to the order digest."""
    return mix64(row_hash_value ^ mix64(position))


# ------------------------------------------------------------------------------ vectorised (NumPy)
def _mix64_array(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(_M1)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(_M2)
    return x ^ (x >> np.uint64(31))


def column_words(column: np.ndarray) -> np.ndarray:
    """The words of one column of a structured array (any integer, bool, str or object dtype)."""
    kind = column.dtype.kind
    if kind in "iu":
        return column.astype(np.int64, copy=False).view(np.uint64) if kind == "i" else column.astype(np.uint64)
    if kind == "b":
        return column.astype(np.uint64)
    if kind in "UO":  # few distinct values: hash each once
        unique, inverse = np.unique(column, return_inverse=True)
        words = np.array([value_word(v.item() if hasattr(v, "item") else v) for v in unique], dtype=np.uint64)
        return words[inverse.reshape(-1)] if len(unique) else np.zeros(0, dtype=np.uint64)
    raise TypeError(f"cannot digest a column of dtype {column.dtype}")


def array_row_hashes(rows: np.ndarray, columns: Sequence[str] | None = None) -> np.ndarray:
    """`row_hash` of every row of a structured array, as uint64 (columns in the given order,
    by default the array's field order)."""
    columns = list(columns if columns is not None else rows.dtype.names)
    with np.errstate(over="ignore"):
        h = np.full(len(rows), _ROW_SEED, dtype=np.uint64)
        for name in columns:
            h = _mix64_array(h * np.uint64(_ROW_MULTIPLIER) + column_words(rows[name]))
    return h


def array_position_hashes(hashes: np.ndarray, start: int) -> np.ndarray:
    """`position_hash` of hashes at positions start, start+1, ..."""
    with np.errstate(over="ignore"):
        positions = np.arange(start, start + len(hashes), dtype=np.uint64)
        return _mix64_array(hashes ^ _mix64_array(positions))


def _sum64(words: np.ndarray) -> int:
    with np.errstate(over="ignore"):
        return int(words.sum(dtype=np.uint64))


# ------------------------------------------------------------------------------ accumulating
class Digest:
    """Running set digest, order digest and row count over rows added in output order.

    `keep_hashes=True` keeps every row hash (8 bytes a row), which lets `difference` find the
    rows one listing has and another lacks."""

    def __init__(self, keep_hashes: bool = False):
        self.value = 0
        self.order = 0
        self.count = 0
        self.keep_hashes = keep_hashes
        self._parts: list[np.ndarray] = []

    def add_rows(self, rows: Iterable[Sequence]) -> None:
        """Add Python tuples (the reference enumerator's rows)."""
        hashes = []
        for row in rows:
            h = row_hash(row)
            self.value = (self.value + h) & MASK
            self.order = (self.order + position_hash(h, self.count)) & MASK
            self.count += 1
            if self.keep_hashes:
                hashes.append(h)
        if self.keep_hashes and hashes:
            self._parts.append(np.array(hashes, dtype=np.uint64))

    def add_array(self, rows: np.ndarray, columns: Sequence[str] | None = None) -> None:
        """Add a structured array of consecutive rows (a batch of the C enumerator)."""
        hashes = array_row_hashes(rows, columns)
        self.value = (self.value + _sum64(hashes)) & MASK
        self.order = (self.order + _sum64(array_position_hashes(hashes, self.count))) & MASK
        self.count += len(rows)
        if self.keep_hashes:
            self._parts.append(hashes)

    @property
    def hashes(self) -> np.ndarray:
        """Every row hash in output order (only with `keep_hashes`)."""
        if not self.keep_hashes:
            raise ValueError("this Digest was made without keep_hashes=True")
        return np.concatenate(self._parts) if self._parts else np.zeros(0, dtype=np.uint64)

    def hex(self) -> str:
        return f"{self.value:016x}"


def digest_rows(rows: Iterable[Sequence]) -> int:
    """The set digest of Python rows."""
    d = Digest()
    d.add_rows(rows)
    return d.value


def digest_array(rows: np.ndarray, columns: Sequence[str] | None = None) -> int:
    """The set digest of a structured array."""
    d = Digest()
    d.add_array(rows, columns)
    return d.value


def multiset_difference(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Hashes occurring more often in `left` than in `right` (each once)."""
    lu, lc = np.unique(left, return_counts=True)
    ru, rc = np.unique(right, return_counts=True)
    index = np.searchsorted(ru, lu)
    index = np.minimum(index, max(len(ru) - 1, 0))
    present = (len(ru) > 0) & (ru[index] == lu) if len(ru) else np.zeros(len(lu), dtype=bool)
    right_counts = np.where(present, rc[index] if len(ru) else 0, 0)
    return lu[lc > right_counts]
