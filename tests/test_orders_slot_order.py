"""The slot model of a space with orders keeps the order plan's loop order.

Found by the generated spaces with orders (the slow `test_generated_spaces_with_orders_every_backend_agrees_many`):
`len(p0)` of a permutation folds to a constant in the slot model, so `p1`'s iterator no longer read `p0`, the
slot plan put `p1` first, and C listed the same rows in another order than the reference: `space[i]`, `index`
and samples disagreed between backends."""
from __future__ import annotations

import pytest

from tests.helpers import space

SOURCE = """
@iterator
def p1(p0_i):
    if p0_i > 0:
        yield 'a'
        yield 'bb'
    else:
        return
p0 = permutation(['p0a', 'p0b', 'p0c'])
p0_i = len(p0)
require(before(p0, 'p0a', 'p0b'))
"""


@pytest.mark.needs_cc
def test_c_lists_an_order_space_in_the_reference_order():
    s = space(SOURCE)
    def text(rows):   # an order as written in files (the C array holds its text)
        return [tuple(">".join(v) if isinstance(v, tuple) else v for v in row) for row in rows.tolist()]
    reference = [tuple(r) for r in s.to_array("reference").tolist()]
    assert text(s.to_array("c")) == text(s.to_array("reference"))
    assert text(s.to_array("reference"))[:2] == [("a", "p0a>p0b>p0c"), ("bb", "p0a>p0b>p0c")]
    assert [tuple(">".join(v) if isinstance(v, tuple) else v for v in s[i]) for i in range(len(reference))] \
        == text(s.to_array("reference"))
    assert [s.index(row) for row in reference] == list(range(len(reference)))
