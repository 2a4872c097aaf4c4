"""Order-valued parameters: permutations, interleavings and optional steps.

An *order* is a value like the others (DESIGN.md): in Python a tuple of its items (strings, or
small integers), never a string, so `position`, `first`, ... read it directly. This module is
the one meaning of orders: the values of the three order iterators, in their documented order,
and the order functions.

- `permutation(items)`: every order of the items, in `itertools.permutations` order.
- `interleave(a, b, ...)`: every merge of the sequences keeping each one's internal order (the OA
  framework's mixer), ordered by the sequence of parts taken, part 0 first.
- `sequence(items, min_len, max_len)`: ordered selections without repetition of `min_len` to
  `max_len` items, depth first (each selection, then its extensions by each unused item in item
  order: `()`, `a`, `a>b`, `a>b>c`, `a>c`, ...); lengths outside 0..len(items) simply have no
  selections (as an empty range).

The values of an order iterator are an `OrderDomain`, never a list: its size is a formula (n!,
a multinomial, a sum of falling factorials), it iterates lazily in the order above, and tests
membership on the tuple, so 13 items (6,227,020,800 permutations) cost no memory.

Functions: `position(o, x)` (0-based; *undefined* when `x` is not in `o`, like a division by
zero: the configuration is invalid and counted as undefined), `before(o, a, b)` (both in `o` and
`a` earlier: total, never undefined), `first(o)` and `last(o)` (undefined on an empty order),
`contains(o, x)`, `len(o)`. Two orders compare only with `==` and `!=`.

Items are distinct constants of one kind (strings without `SEPARATOR`, or integers); a
duplicate item, an empty permutation, or an item that is not a constant is refused when the
space loads. In files an order is one column: its items joined by `SEPARATOR` (`i>j>k`; the
empty sequence is the empty string).
"""
from __future__ import annotations

import itertools
import math

from solverspace.core.errors import SpaceDefinitionError
from solverspace.core.value_text import integer_refusal, integer_text

SEPARATOR = ">"
ITEM_HINT = "order items are distinct constants, all strings or all integers, e.g. permutation(['i', 'j', 'k'])"


class AbsentItem(Exception):
    """`position`/`first`/`last` asked of an order that lacks the item (evaluate turns this
    into its `Undefined`)."""


# ------------------------------------------------------------------------------ values
LISTED = 50_000   # an order domain of at most this many values is listed at its first walk (a constant
                  # domain is one object for the whole enumeration: later walks read the list)


class OrderDomain:
    """The values of an order iterator without listing them: `size` is computed arithmetically
    (n!, a multinomial, a sum of falling factorials), iteration is a generator in the documented
    order, and membership is tested on the tuple itself. A permutation of 13 items holds
    6,227,020,800 orders; listing them would exhaust the machine, so nothing here lists a domain
    of more than `LISTED` values. `len()` works like `range`'s (Python's own OverflowError past
    `sys.maxsize`); code that may meet such sizes reads `size` (or `domain_size`)."""

    __slots__ = ("size", "_listed")

    def __init__(self, size: int):
        self.size, self._listed = size, None

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __iter__(self):
        if self._listed is None:
            if self.size > LISTED:
                return self._generate()
            self._listed = list(self._generate())
        return iter(self._listed)

    def _generate(self):
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def _key(self) -> tuple:
        raise NotImplementedError


class Permutations(OrderDomain):
    """Every order of `items`, in `itertools.permutations` order; n! of them."""

    __slots__ = ("items",)

    def __init__(self, items: tuple):
        self.items = tuple(items)
        super().__init__(math.factorial(len(self.items)))

    def _generate(self):
        return itertools.permutations(self.items)

    def __contains__(self, order) -> bool:
        return (type(order) is tuple and len(order) == len(self.items)
                and len(set(order)) == len(order) and set(order) == set(self.items))

    def _key(self) -> tuple:
        return self.items

    def __repr__(self) -> str:
        return f"permutation({list(self.items)!r})"


class Interleavings(OrderDomain):
    """Every merge of `parts` keeping each part's order, taking from the lowest part first;
    (sum of lengths)! / (product of each length!) of them (empty parts are dropped)."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[tuple, ...]):
        self.parts = tuple(tuple(p) for p in parts if p)
        total, size = 0, 1
        for part in self.parts:
            total += len(part)
            size *= math.comb(total, len(part))
        super().__init__(size)

    def _generate(self):
        """Depth first without recursion: `heads[i]` items of part i are placed; `taken[d]` is
        the part that gave the item at depth d; `k` the next part to try at the current depth."""
        parts = self.parts
        sizes = [len(p) for p in parts]
        length, m = sum(sizes), len(parts)
        if length == 0:
            yield ()
            return
        heads, prefix, taken = [0] * m, [None] * length, [0] * length
        depth = k = 0
        while True:
            while k < m and heads[k] == sizes[k]:
                k += 1
            if k < m:
                prefix[depth] = parts[k][heads[k]]
                heads[k] += 1
                taken[depth] = k
                depth += 1
                if depth < length:
                    k = 0
                    continue
                yield tuple(prefix)
            elif depth == 0:
                return
            depth -= 1             # backtrack: undo the last placement, try the next part there
            k = taken[depth]
            heads[k] -= 1
            k += 1

    def __contains__(self, order) -> bool:
        if type(order) is not tuple or len(order) != sum(map(len, self.parts)):
            return False
        where = {item: i for i, part in enumerate(self.parts) for item in part}
        if set(order) != set(where) or len(set(order)) != len(order):
            return False
        return all(tuple(x for x in order if where[x] == i) == part for i, part in enumerate(self.parts))

    def _key(self) -> tuple:
        return self.parts

    def __repr__(self) -> str:
        return f"interleave({', '.join(repr(list(p)) for p in self.parts)})"


class Sequences(OrderDomain):
    """Ordered selections without repetition of `min_len` to `max_len` of `items`, depth first
    (each selection, then its extensions by each unused item in item order); the sum over the
    lengths k of n! / (n - k)!."""

    __slots__ = ("items", "min_len", "max_len")

    def __init__(self, items: tuple, min_len: int, max_len: int):
        self.items, self.min_len, self.max_len = tuple(items), min_len, max_len
        n = len(self.items)
        super().__init__(sum(math.perm(n, k) for k in range(max(min_len, 0), min(max_len, n) + 1)))

    def _generate(self):
        """Depth first without recursion: `nexts[d]` is the next item index to try at depth d."""
        items, low, high = self.items, self.min_len, min(self.max_len, len(self.items))
        if high < 0 or low > high:
            return
        n = len(items)
        if low <= 0:
            yield ()
        if high == 0:
            return
        used, prefix, chosen, nexts = [False] * n, [], [], [0] * (high + 1)
        depth = 0
        while depth >= 0:
            k = nexts[depth]
            while k < n and used[k]:
                k += 1
            if k == n:                 # this depth is exhausted: drop the item placed above it
                depth -= 1
                if depth >= 0:
                    used[prefix.pop()] = False
                    chosen.pop()
                continue
            nexts[depth] = k + 1
            used[k] = True
            prefix.append(k)
            chosen.append(items[k])
            if len(prefix) >= low:
                yield tuple(chosen)
            if len(prefix) < high:
                depth += 1
                nexts[depth] = 0
            else:
                used[prefix.pop()] = False
                chosen.pop()

    def __contains__(self, order) -> bool:
        return (type(order) is tuple and self.min_len <= len(order) <= self.max_len
                and len(set(order)) == len(order) and set(order) <= set(self.items))

    def _key(self) -> tuple:
        return self.items, self.min_len, self.max_len

    def __repr__(self) -> str:
        return f"sequence({list(self.items)!r}, {self.min_len}, {self.max_len})"


def permutations(items: tuple) -> Permutations:
    return Permutations(items)


def interleavings(parts: tuple[tuple, ...]) -> Interleavings:
    """Every merge of `parts` keeping each part's order; taking from the lowest part first."""
    return Interleavings(parts)


def sequences(items: tuple, min_len: int, max_len: int) -> Sequences:
    """Depth first: a selection, then its extensions by each unused item in item order."""
    return Sequences(items, min_len, max_len)


def domain_size(values) -> int:
    """The number of values of an evaluated domain (a list, a `range`, an `OrderDomain`) without
    `len()`, which stops at `sys.maxsize` (`range(10**20)` has 10**20 values)."""
    if type(values) is range:
        step = values.step
        span = values.stop - values.start
        return max(0, (span + step - (1 if step > 0 else -1)) // step)
    if isinstance(values, OrderDomain):
        return values.size
    return len(values)


# ------------------------------------------------------------------------------ functions
def position(order: tuple, item) -> int:
    try:
        return order.index(item)
    except ValueError:
        raise AbsentItem(item) from None


def before(order: tuple, a, b) -> bool:
    return a in order and b in order and order.index(a) < order.index(b)


def first(order: tuple):
    if not order:
        raise AbsentItem(None)
    return order[0]


def last(order: tuple):
    if not order:
        raise AbsentItem(None)
    return order[-1]


FUNCTIONS = {"position": position, "before": before, "first": first, "last": last,
             "contains": lambda order, item: item in order, "len": len}
ARITY = {"position": 2, "before": 3, "first": 1, "last": 1, "contains": 2, "len": 1}
INT_RESULT = ("position", "len")          # the kind of the result: an integer
BOOL_RESULT = ("before", "contains")      # a boolean (an integer 0/1)
ITEM_RESULT = ("first", "last")           # an item of the order (its items' kind)


def format_order(order: tuple) -> str:
    """An order as one output field: `i>j>k`."""
    return SEPARATOR.join(map(str, order))


def format_value(value):
    """A value for CSV/JSON Lines/arrays: an order joined by `SEPARATOR`, anything else as is."""
    return format_order(value) if type(value) is tuple else value


def format_row(row: tuple) -> tuple:
    return tuple(format_value(v) for v in row) if any(type(v) is tuple for v in row) else row


def parse_order(text: str, items: tuple) -> tuple:
    """`i>j>k` back to a tuple of items (integers when the items are integers)."""
    if text == "":
        return ()
    parts = text.split(SEPARATOR)
    if items and all(type(i) is int for i in items):
        numbers = tuple(integer_text(p) for p in parts)   # the one rule of core.value_text
        if None in numbers:
            bad = parts[numbers.index(None)]
            message, hint = integer_refusal(f"order {text!r}: items are integers, and {bad!r} is not one", bad, "1>0>2")
            raise SpaceDefinitionError(message, hint=f"{hint}; the items joined by {SEPARATOR!r}")
        return numbers
    return tuple(parts)
