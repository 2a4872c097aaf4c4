"""Issue 25, moves (first half): value lists, parameter indices, the fast validity check and
Kernel Tuner's five neighbour methods, against brute force over the listed space
(`validation.moves`), on the corpus, tiny GEMM variants and generated spaces."""
from __future__ import annotations

import pytest

from solverspace import SolverspaceError
from tests.helpers import space


def test_value_lists_documented_order_and_indices():
    s = space("""
        x = range(1, 5)
        y = range(x, 5)
        k = iterator(["b", "a"])
        require(x + y < 6)
        require((k == "a") | (x < 4))
    """)
    assert s.value_lists() == {"x": (1, 2, 3, 4), "y": (1, 2, 3, 4), "k": ("b", "a")}
    assert s.param_indices({"x": 2, "y": 3, "k": "a"}) == (1, 2, 1)
    assert s.from_param_indices((1, 2, 0)) == (2, 3, "b")
    assert s.is_valid((2, 3, "a")) and not s.is_valid((2, 4, "a")) and not s.is_valid((3, 2, "a"))
    with pytest.raises(SolverspaceError, match="not in parameter 'y'"):
        s.param_indices((1, 9, "a"))
    with pytest.raises(SolverspaceError, match="out of range"):
        s.from_param_indices((0, 4, 0))
    with pytest.raises(SolverspaceError, match="not a parameter"):
        s.is_valid({"x": 1, "y": 1, "k": "a", "w": 2})
