"""Random spaces with order parameters, each with an independent brute-force count.

`order_space(seed)` returns an `OrderSpace`: the source of a space file (permutations,
interleavings and sequences mixed with integer parameters whose ranges may depend on an order,
and constraints using every order function) and `brute_count()`, which counts it with plain
`itertools` and Python predicates written separately from the language (no solverspace code),
so the backends are checked against an independent oracle. `validate` cross-checks the backends
on such spaces too (`solverspace validate FILE`): the reference lists, C and CP-SAT count.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Callable

ITEMS = ("a", "b", "c", "d", "e", "f")


class _Absent(Exception):
    """An order function asked about an item the order lacks: the configuration is invalid."""


def _index(order, item):
    if item not in order:
        raise _Absent
    return order.index(item)


def _first(order):
    if not order:
        raise _Absent
    return order[0]


def _last(order):
    if not order:
        raise _Absent
    return order[-1]


def _before(order, a, b):
    return a in order and b in order and order.index(a) < order.index(b)


def _interleavings(parts):
    items = [x for p in parts for x in p]
    return [o for o in itertools.permutations(items)
            if all(o.index(p[i]) < o.index(p[i + 1]) for p in parts for i in range(len(p) - 1))]


@dataclass
class OrderSpace:
    """A generated space: its source and an independent brute-force count."""

    seed: int
    lines: list[str] = field(default_factory=list)
    params: list[tuple[str, Callable[[dict], list]]] = field(default_factory=list)
    rules: list[Callable[[dict], bool]] = field(default_factory=list)

    @property
    def source(self) -> str:
        return "\n".join(self.lines) + "\n"

    def brute_count(self) -> int:
        """Every combination of values (each parameter's values from the ones before it), kept
        when every rule holds; a rule that asks an order about an absent item rejects."""
        total = 0

        def walk(i, env):
            nonlocal total
            if i == len(self.params):
                try:
                    total += all(rule(env) for rule in self.rules)
                except _Absent:
                    pass
                return
            name, values = self.params[i]
            for v in values(env):
                env[name] = v
                walk(i + 1, env)
            env.pop(name, None)

        walk(0, {})
        return total


def order_space(seed: int, *, max_items: int = 4) -> OrderSpace:
    """A random space with one or two order parameters (see the module docstring)."""
    rng = random.Random(seed)
    space = OrderSpace(seed)
    orders = []   # (name, items it can hold, optional)
    for k in range(rng.choice((1, 1, 2))):
        name = f"o{k}"
        n = rng.randint(2, max_items)
        items = list(rng.sample(ITEMS, n))
        kind = rng.choice(("permutation", "interleave", "sequence"))
        if kind == "permutation":
            space.lines.append(f"{name} = permutation({items!r})")
            space.params.append((name, lambda env, items=tuple(items): list(itertools.permutations(items))))
            orders.append((name, items, False))
        elif kind == "interleave":
            cut = rng.randint(1, n - 1)
            parts = (tuple(items[:cut]), tuple(items[cut:]))
            space.lines.append(f"{name} = interleave({list(parts[0])!r}, {list(parts[1])!r})")
            space.params.append((name, lambda env, parts=parts: _interleavings(parts)))
            orders.append((name, items, False))
        else:
            if orders and rng.random() < 0.4:   # lengths that depend on another order
                other = orders[-1][0]
                space.lines.append(f"{name} = sequence({items!r}, 0, len({other}))")
                space.params.append((name, lambda env, items=tuple(items), other=other: [
                    s for length in range(0, min(len(env[other]), len(items)) + 1)
                    for s in itertools.permutations(items, length)]))
            else:
                lo, hi = sorted(rng.sample(range(0, n + 2), 2))
                lo = rng.choice((lo, 0))
                space.lines.append(f"{name} = sequence({items!r}, {lo}, {hi})")
                space.params.append((name, lambda env, items=tuple(items), lo=lo, hi=hi: [
                    s for length in range(max(lo, 0), min(hi, len(items)) + 1)
                    for s in itertools.permutations(items, length)]))
            orders.append((name, items, True))
    # an integer parameter whose range may depend on an order
    name, items, optional = rng.choice(orders)
    if optional:
        space.lines.append(f"t = range(0, len({name}) + 1)")
        space.params.append(("t", lambda env, o=name: range(0, len(env[o]) + 1)))
    else:
        x = rng.choice(items)
        space.lines.append(f"t = range(0, position({name}, {x!r}) + 2)")
        space.params.append(("t", lambda env, o=name, x=x: range(0, env[o].index(x) + 2)))
    for _ in range(rng.randint(1, 3)):
        _add_rule(rng, space, rng.choice(orders))
    return space


def _add_rule(rng, space: OrderSpace, order) -> None:
    name, items, optional = order
    a, b = rng.sample(items, 2)
    c = rng.choice((*items, "z"))   # "z": never in the order
    choice = rng.randrange(7)
    if choice == 0:
        space.lines.append(f"require(before({name}, {a!r}, {b!r}))")
        space.rules.append(lambda env: _before(env[name], a, b))
    elif choice == 1:
        space.lines.append(f"reject_if(contains({name}, {c!r}) & (first({name}) != {c!r}))")
        space.rules.append(lambda env: not (c in env[name] and _first(env[name]) != c))
    elif choice == 2:
        space.lines.append(f"require(last({name}) != {a!r})")
        space.rules.append(lambda env: _last(env[name]) != a)
    elif choice == 3:
        space.lines.append(f"require(position({name}, {a!r}) <= t)")
        space.rules.append(lambda env: _index(env[name], a) <= env["t"])
    elif choice == 4:
        space.lines.append(f"reject_if(len({name}) == t)")
        space.rules.append(lambda env: len(env[name]) != env["t"])
    elif choice == 5:
        space.lines.append(f"@require\ndef r{len(space.rules)}({name}, t):\n"
                           f"    if contains({name}, {a!r}):\n        return position({name}, {a!r}) != t\n"
                           f"    return not before({name}, {b!r}, {c!r})")
        space.rules.append(lambda env: (_index(env[name], a) != env["t"]) if a in env[name]
                           else not _before(env[name], b, c))
    else:
        space.lines.append(f"require((first({name}) == {a!r}) | contains({name}, {c!r}))")
        space.rules.append(lambda env: _first(env[name]) == a or c in env[name])
