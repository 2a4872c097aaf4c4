"""Emit the C99 + OpenMP enumerator for a plan.

The generated file has two loop nests over the same first levels: `walk_list` in the plan's
order (writes rows) and `walk_count` (counts; hoisted parameters last, multiplied in). Both run
from a *prefix*: the values of the first `plen` loops, fixed. Work is split into units, one per
prefix of depth `s` (found by running the nest with `stop = s`), and OpenMP hands units to
threads dynamically. Each unit's rows go to its own offset (from a counting pass), so the output
is identical for any number of threads.

`CGenerator` coordinates the parts, each in its own module: `c.expr` (expressions),
`c.domains` (domains, loop headers, closure tables), `c.nest` (the loop nests), `c.funnel`
(funnel counters), `c.runtime` (the fixed C text: declarations, drivers, CSV formatter), and
`c.optimize` (which optimizations apply where).

Exported functions (see CDEF): `ss_prefixes`, `ss_count_units`, `ss_fill_units`, `ss_format_csv`.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from solverspace.core.records import MutableRecord
from solverspace.lang import ir
from solverspace.lang.kinds import STR
from solverspace.analysis.plan import Plan

from .domains import MAX_BUFFER, DomainCode
from .expr import CExpressionPrinter
from .funnel import CDEF_FUNNEL, FunnelCounters, funnel_layout
from .nest import LoopNest
from .optimize import Options, analyse, hoistable
from .runtime import (
    CANCEL_C, CANCEL_EVERY, CDEF, ERROR_COUNT_OVERFLOW, ERROR_STEP_ZERO, MEMO_BITS, MEMO_C, csv_formatter,
    drivers, preamble, wide_count_c)
from ..errors import UnsupportedConstruct

if TYPE_CHECKING:  # NumPy is imported where used: a count imports none
    import numpy as np


__all__ = ["CANCEL_C", "CANCEL_EVERY", "CDEF", "CDEF_FUNNEL", "ERROR_COUNT_OVERFLOW", "ERROR_STEP_ZERO", "MAX_BUFFER",
           "MEMO_BITS", "MEMO_C", "CGenerator", "Column", "Generated", "count_words", "funnel_layout",
           "smallest_int", "wide_count_c"]


class Column(MutableRecord):
    """An output column: `dtype` (NumPy's name, e.g. "int16"), `ctype` (e.g. "int16_t"),
    `categorical` (the decoded strings by code, for categorical columns)."""

    __match_args__ = ("name", "dtype", "ctype", "categorical")

    def __init__(self, name: str, dtype: str, ctype: str, categorical: tuple | None = None):
        self.name, self.dtype, self.ctype, self.categorical = name, dtype, ctype, categorical


class Generated(MutableRecord):
    """A generated program: `items` (undefined-item id -> name, for messages), `count_words`
    (64-bit words per unit count: 1 is int64; more: see wide_count_c), `hoisted` (parameters the
    counting nest multiplies in, not in its loops)."""

    __match_args__ = ("source", "columns", "items", "max_prefix_depth", "codes", "count_words", "hoisted")

    def __init__(self, source: str, columns: list[Column], items: list[str], max_prefix_depth: int,
                 codes: dict[str, int] | None = None, count_words: int = 1, hoisted: tuple[str, ...] = ()):
        self.source, self.columns, self.items, self.max_prefix_depth = source, columns, items, max_prefix_depth
        self.codes = {} if codes is None else codes
        self.count_words, self.hoisted = count_words, hoisted

    @property
    def key(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:20]

    @property
    def dtype(self) -> "np.dtype":
        import numpy as np  # listing only: a count imports no NumPy
        return np.dtype([(c.name, c.dtype) for c in self.columns])


def smallest_int(lo, hi) -> tuple[str, str]:
    for bits in (8, 16, 32, 64):
        if -(2 ** (bits - 1)) <= lo and hi <= 2 ** (bits - 1) - 1:
            return f"int{bits}", f"int{bits}_t"
    raise ValueError("value range exceeds 64 bits")


def count_words(bound: int) -> int:
    """64-bit words for counts below `bound`: 1 (int64) while the bound proves 63 bits suffice."""
    return 1 if bound < 2 ** 63 else max(2, -(-bound.bit_length() // 64))



class CGenerator:
    """The C source of one build: `generate()` puts together the runtime text, the closures'
    tables and the walks (`walk_list`, `walk_count`, and `walk_funnel` in a funnel build)."""

    def __init__(self, plan: Plan, options: Options, with_derived: tuple[str, ...] = (), funnel: bool = False,
                 wide: bool = False):
        self.plan = plan
        self.model = plan.model
        self.funnel = funnel  # a funnel build: literal plan, counters compiled in
        options = Options.literal() if funnel else options
        self.options = options
        analysis = plan.analysis
        self.bounds = analysis.bounds
        self.codes = analysis.codes
        self.rational = analysis.rational
        self.printer = CExpressionPrinter(self.model, self.bounds, self.codes, self.rational)
        self.levels = analyse(plan, options)
        self.hoisted = hoistable(plan, options)
        self.with_derived = with_derived
        self.items: list[str] = []
        self.domains = DomainCode(self.model, self.bounds, self.printer, self.codes, self.item)
        order = list(plan.order)
        self.count_order = [p for p in order if p not in self.hoisted]
        common = 0
        while common < len(self.count_order) and self.count_order[common] == order[common]:
            common += 1
        self.max_prefix_depth = min(common, len(self.count_order))
        # counts: int64 where the bound proves 63 bits; else int64 checked for overflow (the
        # bound is loose: GEMM's is 2**97), which CEnumerator answers by rebuilding with `wide`
        words = count_words(self.count_bound())
        self.count_words = words if wide else 1
        self.checked = words > 1 and not wide

    def item(self, name: str) -> int:
        """The number of a new entry of the item list (messages name undefined items by number)."""
        self.items.append(name)
        return len(self.items) - 1

    def count_bound(self) -> int:
        """An upper bound on the number of configurations, and so on every unit's count and on
        every partial product of the counting nest: the product of the largest domain sizes."""
        bound = 1
        for parameter in self.model.parameters:
            bound *= self.domains.size_bound(parameter.domain, parameter)
        return bound

    def generate(self) -> Generated:
        for parameter in self.model.parameters:  # refuse a closure that cannot be tabulated, first
            for node in ir.walk(parameter.domain):
                if isinstance(node, ir.Closure):
                    self.domains.closure_table(node, parameter)
        columns = self.columns()
        body = preamble(self.count_words, columns)
        nest = LoopNest(self.plan, self.options, self.printer, self.domains, self.item, levels=self.levels,
                        hoisted=self.hoisted, max_prefix_depth=self.max_prefix_depth, count_words=self.count_words,
                        checked=self.checked, columns=columns)
        walk_list = nest.walk("walk_list", list(self.plan.order), listing=True)
        walk_count = nest.walk("walk_count", self.count_order, listing=False)
        walk_funnel = ""
        counters = FunnelCounters(self.plan, self.printer, self.item) if self.funnel else None
        if counters:
            walk_funnel = nest.walk("walk_funnel", list(self.plan.order), listing=False, funnel=counters)
        body += self.domains.tables
        body += [walk_list, walk_count, walk_funnel, drivers(self.max_prefix_depth, nest.memo_widths, self.count_words),
                 csv_formatter(columns)]
        if counters:
            body.append(counters.driver())
        return Generated("\n".join(body) + "\n", columns, self.items, self.max_prefix_depth, self.codes,
                         self.count_words, tuple(self.hoisted))

    def columns(self) -> list[Column]:
        """The row's fields: the parameters, then the derived values asked for; each the smallest
        integer type that holds its values (categorical values as codes)."""
        strings = {code: s for s, code in self.codes.items()}
        result = []
        for name in (*self.model.parameter_names, *self.with_derived):
            if name in self.rational:
                raise UnsupportedConstruct("C", ir.Ref(name), "a fraction-valued derived value cannot be an output column",
                                           owner=self.model.definition(name), model=self.model)
            interval = self.bounds.of(name)
            dtype, ctype = self.column_int(name, interval)
            categorical = None
            if self.model.kinds.of(name) == STR:
                categorical = tuple(strings[i] for i in range(len(strings)))
                dtype, ctype = smallest_int(0, max(len(strings) - 1, 0))
            result.append(Column(name, dtype, ctype, categorical))
        return result

    def column_int(self, name: str, interval) -> tuple[str, str]:
        """The smallest integer column type for a value range, or a refusal naming the value
        (C holds values in int64; the reference backend computes with Python ints)."""
        try:
            return smallest_int(interval.lo, interval.hi)
        except ValueError:
            owner = self.model.definition(name)
            node = owner.domain if name in self.model.parameter else owner.expr
            raise UnsupportedConstruct("C", node, f"its values {interval} do not fit in 64 bits", owner=owner,
                                       model=self.model,
                                       hint="the reference backend computes with Python ints of any size "
                                            "(--backend reference, sample --method reference)") from None
