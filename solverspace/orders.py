"""Order-valued parameters: permutations, interleavings and optional steps (issue 15).

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

from . import ir
from .errors import SpaceDefinitionError

SEPARATOR = ">"
ITEM_HINT = "order items are distinct constants, all strings or all integers, e.g. permutation(['i', 'j', 'k'])"


class AbsentItem(Exception):
    """`position`/`first`/`last` asked of an order that lacks the item (evaluate turns this
    into its `Undefined`)."""


# ------------------------------------------------------------------------------ values
def permutations(items: tuple) -> list[tuple]:
    return list(itertools.permutations(items))


def interleavings(parts: tuple[tuple, ...]) -> list[tuple]:
    """Every merge of `parts` keeping each part's order; taking from the lowest part first."""
    parts = tuple(p for p in parts if p)
    result: list[tuple] = []

    def merge(heads: list[int], prefix: list):
        done = True
        for i, part in enumerate(parts):
            if heads[i] < len(part):
                done = False
                prefix.append(part[heads[i]])
                heads[i] += 1
                merge(heads, prefix)
                heads[i] -= 1
                prefix.pop()
        if done:
            result.append(tuple(prefix))

    merge([0] * len(parts), [])
    return result


def sequences(items: tuple, min_len: int, max_len: int) -> list[tuple]:
    """Depth first: a selection, then its extensions by each unused item in item order."""
    result: list[tuple] = []

    def extend(prefix: tuple):
        if min_len <= len(prefix) <= max_len:
            result.append(prefix)
        if len(prefix) < max_len:
            for item in items:
                if item not in prefix:
                    extend(prefix + (item,))

    extend(())
    return result


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
        try:
            return tuple(int(p) for p in parts)
        except ValueError:
            raise SpaceDefinitionError(f"order {text!r}: items are integers",
                                       hint=f"write the items joined by {SEPARATOR!r}, e.g. 1>0>2") from None
    return tuple(parts)


# ------------------------------------------------------------------------------ load-time checks
def order_items(node: ir.Domain) -> tuple[ir.Expr, ...]:
    """Every item node of an order domain."""
    if isinstance(node, ir.Interleave):
        return tuple(i for part in node.parts for i in part.items)
    return node.items


def check_items(node: ir.Domain, what: str) -> tuple:
    """The constant items of an order iterator, refusing non-constants, mixed kinds, duplicates,
    the separator inside a string and an empty permutation (a `SpaceDefinitionError` without a
    location; the loader adds it)."""
    nodes = order_items(node)
    values = []
    for n in nodes:
        if not isinstance(n, ir.Const) or type(n.value) is bool:
            from .printing import to_source
            raise SpaceDefinitionError(f"{what}: item `{to_source(n)}` is not a string or integer constant",
                                       hint=ITEM_HINT)
        if type(n.value) is str and (SEPARATOR in n.value or n.value == ""):
            raise SpaceDefinitionError(f"{what}: item {n.value!r} is empty or contains the separator {SEPARATOR!r}",
                                       hint=f"orders are written as items joined by {SEPARATOR!r}; rename the item")
        values.append(n.value)
    if len({type(v) for v in values}) > 1:
        raise SpaceDefinitionError(f"{what}: items mix strings and integers", hint=ITEM_HINT)
    seen = set()
    for v in values:
        if v in seen:
            raise SpaceDefinitionError(f"{what}: item {v!r} appears twice", hint=ITEM_HINT)
        seen.add(v)
    if isinstance(node, ir.Permutation) and not values:
        raise SpaceDefinitionError(f"{what}: permutation of no items",
                                   hint="a permutation needs at least one item; "
                                        "sequence(items, 0, n) allows empty orders")
    return tuple(values)


def order_nodes(model) -> list[ir.Node]:
    """The order iterators and order functions of a model (empty: the model has no orders)."""
    return [n for tree in model.trees for n in ir.walk(tree) if isinstance(n, (*ir.ORDER_DOMAINS, ir.OrderFn))]


def has_orders(model) -> bool:
    return bool(order_nodes(model))
