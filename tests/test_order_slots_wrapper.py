"""Orders are decided in one place: `translators/order_slots.py` (the `OrderSlots` wrapper the
registry applies) is the only module that asks `has_orders` or makes a `slot_plan`; the C and
CP-SAT backends come wrapped and answer spaces with orders as the reference does."""
from __future__ import annotations

import re
from pathlib import Path

from solverspace.registry.backends import get_backend
from solverspace.translators.order_slots import OrderSlots
from tests.helpers import space

ROOT = Path(__file__).resolve().parents[1]
WRAPPER = ROOT / "translators" / "order_slots.py"
DEFINITION = ROOT / "solverspace" / "lang" / "order_domains.py"
CALL = re.compile(r"\b(has_orders|slot_plan)\(")
DEFINED = re.compile(r"^\s*def (has_orders|slot_plan)\(")

ORDERS = """
seq = permutation([1, 2, 3])
x = range(3)
require(first(seq) != x)
"""


def calls_outside_the_wrapper() -> list[str]:
    found = []
    for folder in ("solverspace", "translators", "validation", "gemm", "bench", "examples", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path in (WRAPPER, Path(__file__).resolve()):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if CALL.search(line) and not (path == DEFINITION and DEFINED.match(line)):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_no_module_outside_the_wrapper_asks_for_orders():
    assert calls_outside_the_wrapper() == []


def test_the_grep_sees_a_call():
    line = "    if has_orders(plan.model):"
    assert CALL.search(line) and not DEFINED.match(line)
    assert DEFINED.match("def has_orders(model) -> bool:")


def test_c_and_cpsat_come_wrapped_and_answer_orders_as_the_reference():
    s = space(ORDERS)
    c, cpsat = get_backend("c", "count"), get_backend("cpsat", "count")
    assert isinstance(c, OrderSlots) and isinstance(cpsat, OrderSlots)
    assert not isinstance(get_backend("reference", "count"), OrderSlots)
    assert OrderSlots.through_slots(s.plan) and not OrderSlots.through_slots(space("x = range(3)").plan)
    want = list(s.rows("reference"))
    assert list(c.rows(s.plan)) == want
    assert c.count(s.plan).count == cpsat.count(s.plan).count == len(want)
    positions = c.positions(s.plan)
    listed = get_backend("reference", "positions").positions(s.plan)
    assert positions.size() == listed.size() == len(want)
    assert positions.rows_at(range(len(want))).tolist() == listed.rows_at(range(len(want))).tolist()
    assert all(positions.index(dict(zip(s.parameters, row))) == i for i, row in enumerate(want))
    assert not c.is_built(s.plan)   # auto tries the reference first on a space with orders
