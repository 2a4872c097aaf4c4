"""The reference backend: the Python walk over the literal plan behind the registry's
capabilities (`solverspace.registry.backends`), its positions over a listed space, and the Python walks
of `best` (`bnb-reference`, `exhaustive-reference`).

Exact and slow: the ground truth every other backend is validated against.
"""
from __future__ import annotations

import itertools

from solverspace.core.draws import Positions
from solverspace.core.errors import BackendUnavailableError, SpaceDefinitionError
from solverspace.core.formats import write_rows
from solverspace.core.results import Stats, listing_array
from solverspace.analysis.reference import ReferenceEnumerator
from solverspace.analysis.funnel import reference_funnel
from solverspace.analysis.search import best
from solverspace.analysis.check import check, orders_as_tuples


class ReferenceBackend:
    """Pure Python over the literal plan: exact, slow, the ground truth."""

    name = "reference"

    def count(self, plan, *, strict=False, progress=None) -> Stats:
        enumerator = ReferenceEnumerator(plan, strict=strict, progress=progress)
        enumerator.count()
        return enumerator.stats

    def enumerator(self, plan, *, strict=False, progress=None) -> ReferenceEnumerator:
        """The enumerator itself: its `rows()` and then its `stats` (validation reads both)."""
        return ReferenceEnumerator(plan, strict=strict, progress=progress)

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        return self.enumerator(plan, strict=strict, progress=progress).rows(with_derived)

    def array(self, plan, *, strict=False, with_derived=(), progress=None):
        rows = list(self.rows(plan, strict=strict, with_derived=with_derived, progress=progress))
        return listing_array(rows, plan, plan.model.parameter_names + tuple(with_derived))

    def write(self, plan, path, fmt="csv", *, strict=False, with_derived=(), progress=None, sep=",") -> int:
        if fmt not in ("csv", "jsonl"):
            raise SpaceDefinitionError("the reference backend writes CSV and JSON Lines only",
                                       hint="use --backend c for .npy and .parquet output")
        rows = self.rows(plan, strict=strict, with_derived=with_derived, progress=progress)
        return write_rows(path, plan.model.parameter_names + tuple(with_derived), rows, fmt, sep)

    def positions(self, plan) -> "ListedPositions":
        return ListedPositions(plan)

    def sampler(self, plan, method="reference", *, seed=0, progress=None) -> "ListedPositions":
        return self.positions(plan)   # samples are drawn positions

    def funnel(self, plan, *, progress=None):
        return reference_funnel(plan)

    def check(self, plan, assignment: dict):
        return check(plan, assignment)

    complete = check  # a partial assignment: the reference looks for a completion by listing


LISTED_LIMIT = 2_000_000   # rows `ListedPositions` holds in memory (4 columns: 340 MB measured)


class ListedPositions(Positions):
    """Positions of the canonical order over a space listed in Python (small spaces only)."""

    name = "reference"
    guarantee = "exactly uniform over the valid configurations (the whole space is listed)"

    def __init__(self, plan):
        self.plan, self.model = plan, plan.model
        self.columns = plan.model.parameter_names
        self.rows = list(itertools.islice(ReferenceEnumerator(plan).rows(()), LISTED_LIMIT + 1))
        if len(self.rows) > LISTED_LIMIT:
            self.rows = []
            raise BackendUnavailableError(
                f"the reference lists the whole space to draw positions, and it has more than {LISTED_LIMIT:,} "
                f"valid configurations", hint="use the compiled positions (sample --method exact, space[i]) "
                                              "or CP-SAT (sample --method cpsat)")
        self.position = {row: i for i, row in enumerate(self.rows)}

    def size(self) -> int:
        return len(self.rows)

    def rows_at(self, positions):
        return listing_array([self.rows[int(i)] for i in positions], self.plan, self.columns)

    def index(self, values: dict) -> int | None:
        values = orders_as_tuples(self.model, values)  # an order given as written in files (i>j>k) or as a list
        return self.position.get(tuple(values[c] for c in self.columns))


class ReferenceSearch:
    """`best` by the Python walks over the reference's loop nest (`solverspace.analysis.search`):
    `bnb-reference` cuts subtrees by sound bounds of the objective, `exhaustive-reference`
    evaluates every valid configuration (the ground truth of `best`)."""

    def __init__(self, engine: str, time_limit: float | None = None):
        self.name, self.time_limit = engine, time_limit

    def best(self, plan, objective: str, *, maximize: bool = True, top: int = 10, progress=None):
        result = best(plan, objective, maximize=maximize, top=top, engine=self.name.removesuffix("-reference"),
                      time_limit=self.time_limit, progress=progress)
        result.engine = self.name
        return result
