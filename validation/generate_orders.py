"""Random spaces with order parameters, each with an independent brute-force count.

`order_space(seed)` returns an `OrderSpace`: the source of a space file (permutations,
interleavings and sequences mixed with integer parameters whose ranges may depend on an order,
and constraints using every order function) and `brute_count()`, which counts it with plain
`itertools` and Python predicates written separately from the language (no solverspace code),
so the backends are checked against an independent oracle. `validate` cross-checks the backends
on such spaces too (`solverspace validate FILE`): the reference lists, C and CP-SAT count.

`big_order_space(seed)` draws order domains past the reference's listing budget (a permutation
of up to 16 items, interleavings of up to 40, sequences of up to 14: up to 2 * 10**13 values),
beside small integer parameters, with a count computed arithmetically (`math.factorial` over the
items, not the language's code): nothing may list such a domain, so a backend either counts
it exactly (the reference multiplies by a free order's size; auto goes on from there) or
refuses it with a message; a test runs them under a memory limit. With `constrained=True` the
order is read by a precedence rule over at most 9 items (8! = 40,320 is past auto's budget of
40,000), and the count is halved: the walk is still feasible, in constant memory.
"""
from __future__ import annotations

import itertools
import math
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


@dataclass
class BigOrderSpace:
    """A generated space with an order domain past the listing budget and its exact count."""

    seed: int
    source: str
    expected: int
    order_size: int   # the number of values of the order parameter alone


def _order_size(kind: str, n: int, cut: int, lo: int, hi: int) -> int:
    """The values of the order iterator, by formula: n!; a multinomial; falling factorials."""
    if kind == "permutation":
        return math.factorial(n)
    if kind == "interleave":
        return math.factorial(n) // (math.factorial(cut) * math.factorial(n - cut))
    return sum(math.factorial(n) // math.factorial(n - k) for k in range(max(lo, 0), min(hi, n) + 1))


def big_order_space(seed: int, *, constrained: bool = False) -> BigOrderSpace:
    """A random space whose order parameter has more values than auto's reference budget (see
    the module docstring); `expected` is its exact count."""
    rng = random.Random(seed)
    kind = "permutation" if constrained else rng.choice(("permutation", "interleave", "sequence"))
    n = rng.randint(8, 9) if constrained else {"permutation": rng.randint(9, 16), "interleave": rng.randint(20, 40),
                                               "sequence": rng.randint(9, 14)}[kind]
    items = [f"s{i}" for i in range(n)]
    cut, lo, hi = rng.randint(n // 2 - 2, n // 2 + 2), rng.randint(0, 2), rng.randint(n - 3, n + 1)
    if kind == "permutation":
        line = f"o = permutation({items!r})"
    elif kind == "interleave":
        line = f"o = interleave({items[:cut]!r}, {items[cut:]!r})"
    else:
        line = f"o = sequence({items!r}, {lo}, {hi})"
    size = _order_size(kind, n, cut, lo, hi)
    lines = [line] if rng.random() < 0.5 else []
    a, b = rng.randint(1, 6), rng.randint(1, 6)
    lines += [f"a = range(0, {a})", f"b = range(-2, {b})", "require(a + b != 1)"]
    small = sum(1 for x in range(a) for y in range(-2, b) if x + y != 1)
    if line not in lines:
        lines.append(line)
    expected = size * small
    if constrained:
        lines.append(f"require(before(o, {items[0]!r}, {items[-1]!r}))")
        expected //= 2
    return BigOrderSpace(seed, "\n".join(lines) + "\n", expected, size)
