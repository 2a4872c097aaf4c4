"""Order iterators as language: their item nodes, the load-time checks of their items, and
whether a model has order-valued parameters (the values themselves are `solverspace.core.orders`)."""
from __future__ import annotations

from solverspace.core.errors import SpaceDefinitionError
from solverspace.core.orders import ITEM_HINT, SEPARATOR
from solverspace.lang import ir
from solverspace.lang.printing import to_source


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
    """The order iterators and order functions of a model (empty: the model has no orders). A
    list of constants holds none and is not walked (a T1 file's 8 million values: 3.5 CPU-s)."""
    return [n for tree in model.trees
            if not (type(tree) is ir.Values and all(type(item) is ir.Const for item in tree.items))
            for n in ir.walk(tree) if isinstance(n, (*ir.ORDER_DOMAINS, ir.OrderFn))]


def has_orders(model) -> bool:
    return bool(order_nodes(model))
