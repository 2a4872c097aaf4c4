"""Results: the bottom layer every backend and the API share.

`Stats` (what a count saw) and NumPy structured arrays from Python rows (a sample, positions,
`Space.to_array`). Files of rows, in every format, are written by `solverspace.core.formats`.
"""
from __future__ import annotations

from solverspace.core.errors import SolverspaceError
from solverspace.core.orders import format_row
from solverspace.core.records import MutableRecord


class Stats(MutableRecord):
    """What a count saw: `count` valid configurations; `undefined` candidates lost to an
    undefined operation (counted where the failing expression is evaluated, so the number
    depends on the plan walked: `Space.stats()` gives the literal plan's), `undefined_by` the
    same per rule (derived value or constraint name), `first_undefined` (where: the rule and the
    failing expression, the configuration bound so far) of the first one met, or None.

    >>> from solverspace import Space
    >>> stats = Space.from_source("x = range(0, 3)\\nrequire(6 // x > 2)").stats()
    >>> stats.count, stats.undefined, stats.undefined_by, stats.first_undefined
    (2, 1, {'require_line2': 1}, ('require_line2: 6 // x', {'x': 0}))
    """

    __match_args__ = ("count", "undefined", "first_undefined", "undefined_by")

    def __init__(self, count: int = 0, undefined: int = 0, first_undefined: tuple[str, dict] | None = None,
                 undefined_by: dict[str, int] | None = None):
        self.count, self.undefined, self.first_undefined = count, undefined, first_undefined
        self.undefined_by = {} if undefined_by is None else undefined_by


def rows_to_array(rows: list[tuple], columns):
    """Python rows as a structured array: int64 columns, or str columns for categorical values
    and orders (`i>j>k`)."""
    import numpy as np
    rows = [format_row(r) for r in rows]  # an order is one string column: its items joined (orders.SEPARATOR)
    fields = []
    for j, name in enumerate(columns):
        values = [r[j] for r in rows]
        if any(isinstance(v, str) for v in values):
            fields.append((name, f"<U{max(len(str(v)) for v in values)}"))
        elif any(not isinstance(v, int) or not -(2 ** 63) <= v < 2 ** 63 for v in values):
            fields.append((name, object))  # fractions, and integers beyond 64 bits, as Python objects
        else:
            fields.append((name, np.int64))
    return np.array([tuple(r) for r in rows], dtype=fields)


def listing_array(rows: list[tuple], plan, columns):
    """Python rows of `plan` as the structured array of a listing, the same whichever backend
    listed them (`Space.to_array`): integer columns the smallest signed type (int8 .. int64) that
    holds the column's proven interval (`plan.analysis.bounds`), categorical columns `<U` the
    longest string of the model, as the compiled enumerator types them; `rows_to_array`'s types
    where no such type exists (a space with orders, a fraction-valued column, an interval past
    64 bits or unbounded: the compiled enumerator refuses those columns).

    >>> from solverspace import Space
    >>> space = Space.from_source("x = range(1, 300)\\nk = iterator(['a', 'bb'])")
    >>> listing_array([(1, "a"), (299, "bb")], space.plan, space.parameters).dtype.descr
    [('x', '<i2'), ('k', '<U2')]
    """
    array = rows_to_array(rows, columns)
    model, analysis = plan.model, plan.analysis
    if any(model.kinds.of(name) == "order" for name in model.parameter_names):
        return array
    fields = []
    for name in columns:
        if model.kinds.of(name) == "str":
            fields.append((name, f"<U{max(len(text) for text in analysis.codes)}"))
            continue
        if name in analysis.rational:
            return array
        try:
            interval = analysis.bounds.of(name)
        except SolverspaceError:   # no bound (a closure's table refused): the values' own types
            return array
        bits = next((b for b in (8, 16, 32, 64) if -(2 ** (b - 1)) <= interval.lo and interval.hi < 2 ** (b - 1)), None)
        if bits is None:
            return array
        fields.append((name, f"int{bits}"))
    return array.astype(fields)
