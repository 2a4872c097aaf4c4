"""The compiled enumerator on spaces with order parameters: the slot model's rows, joined.

The C enumerator runs the slot model (`order_slots`: one parameter per position), whose loops
list orders in the reference's order, so rows, files, positions and samples are those of the
order model once each order's slots are joined back into a tuple (`SlotLayout.rows`). Joining
is a Python step per row, and files are written from the joined rows (`formats.write_rows`: CSV
and JSON Lines byte-identical to the reference's; `.npy` and Parquet held in memory until the
whole table is known): listing a space with orders is slower than listing one without. The
funnel is not offered (its constraints would be the slot model's parts).
"""
from __future__ import annotations

from solverspace.core.draws import Positions
from solverspace.core.results import rows_to_array

from ..order_slots import slots


def rows(backend, plan, *, strict=False, with_derived=(), progress=None):
    slot, layout = slots(plan, "C")
    enumerator = backend.enumerator(slot, with_derived)
    for batch in enumerator.batches(strict, progress):
        yield from layout.rows(enumerator.decode(batch), with_derived)


def array(backend, plan, *, strict=False, with_derived=(), progress=None):
    return rows_to_array(list(rows(backend, plan, strict=strict, with_derived=with_derived, progress=progress)),
                         plan.model.parameter_names + tuple(with_derived))


def write(backend, plan, path, fmt="csv", *, strict=False, with_derived=(), progress=None, sep=",") -> int:
    from solverspace.core.formats import write_rows   # the writers' module: only where a file is written
    columns = plan.model.parameter_names + tuple(with_derived)
    listed = rows(backend, plan, strict=strict, with_derived=with_derived, progress=progress)
    return write_rows(path, columns, listed, fmt, sep)   # .npy and Parquet: held, typed from the whole table


class OrderPositions(Positions):
    """Positions of the canonical order (the C order of the slot model, the reference's order)."""

    name = "exact"
    guarantee = "exactly uniform over the valid configurations (positions drawn uniformly)"

    def __init__(self, inner: Positions, plan):
        """`inner`: the positions of the slot plan (`slots(plan)[0]`)."""
        self.layout = slots(plan, "C")[1]
        self.inner = inner
        self.columns = plan.model.parameter_names

    def size(self) -> int:
        return self.inner.size()

    def rows_at(self, positions):
        decoded = self.inner.rows_at(positions)
        return rows_to_array(self.layout.rows(decoded), self.columns)

    def index(self, values: dict) -> int | None:
        mapped = self.layout.slot_values(values)
        return None if mapped is None else self.inner.index(mapped)
