"""The analysis of a model that more than one backend needs, computed once and shared.

`model.analysis` (and `plan.analysis`) holds it: the dependency DAG, interval bounds of every
value, the names whose values may be fractions (exact `/`), the kinds (int or categorical) of
every value, the closure tables, and one integer code per categorical string. Each part is
computed on first use (bounds need SymPy; a backend that never asks does not pay for it), and
every backend reads the same object, so no two backends can disagree about, say, the code of a
string or the range of a value.
"""
from __future__ import annotations

from functools import cached_property

from solverspace.lang import ir
from solverspace.core.errors import ClosureTableError
from solverspace.lang.bounds import Bounds
from solverspace.lang.dag import DAG
from solverspace.lang.rational import rational_names


class Analysis:
    """Facts about one model, each derived on first use."""

    def __init__(self, model):
        self.model = model

    @cached_property
    def dag(self):
        """Vertices, uses and level sets (`solverspace.lang.dag`)."""
        return DAG(self.model)

    @cached_property
    def bounds(self):
        """Interval bounds of every named value (`solverspace.lang.bounds`)."""
        return Bounds(self.model)

    @cached_property
    def rational(self) -> frozenset[str]:
        """Derived values that may hold a fraction (they use exact `/`)."""
        return frozenset(rational_names(self.model))

    @property
    def kinds(self):
        return self.model.kinds

    @property
    def closures(self):
        return self.model.closures

    @cached_property
    def codes(self) -> dict[str, int]:
        """One integer code per categorical string: string constants in order of first
        appearance, then the strings closure iterators yield (from their shared tables)."""
        model = self.model
        codes: dict[str, int] = {}
        nodes = model.trees
        for node in nodes:
            for n in ir.walk(node):
                if isinstance(n, ir.Const) and type(n.value) is str and n.value not in codes:
                    codes[n.value] = len(codes)
        for node in nodes:
            for n in ir.walk(node):
                if isinstance(n, ir.Closure):
                    try:
                        values = model.closures.table(n).values
                    except ClosureTableError:
                        continue  # refused where the table is needed
                    for v in values:
                        if type(v) is str:
                            codes.setdefault(v, len(codes))
        return codes
