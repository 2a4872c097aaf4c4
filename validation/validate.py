"""Cross-validation: run every backend that accepts a space and check that they agree.

`validate(space)` runs, in this order:

- ``c``: the compiled C enumerator with every optimization, listing every row (counting only
  above `VISIT_LIMIT` rows: counts are exact at any size, listings are not feasible);
- ``c-literal``: the same with every optimization off (the literal plan), unless the count is
  above `VISIT_LIMIT` (it visits every configuration: spaces of 2**64 cannot be walked);
- ``cpsat``: the CP-SAT backend, which counts (and tallies undefined operations) but does not list;
- ``reference``: the pure-Python enumerator over the literal plan, the ground truth, when the
  space is small enough (estimated from the C or CP-SAT count; `reference_limit` rows at most);
- ``sample``: the sampler (`Space.sample`), when this version of solverspace has one.

and compares:

- counts (every backend that counted);
- set digests of the listings (`validation.digest`: order-independent, computed the same way on
  Python tuples and on the C enumerator's NumPy batches);
- row order: the order digest of the reference against each C mode (same plan, same order), or of
  C against C-literal when the reference did not run;
- files: the bytes of the CSV and JSON Lines files C and the reference write (each with its own
  writer: the C formatter, the Python writer; C literal prints the same formatter as C), where
  the listing is small enough for the reference (`reference_limit` rows): the same
  configurations written with different bytes (a value cut, quoted or escaped differently)
  disagree too;
- undefined-operation tallies of the backends that follow the literal plan exactly (reference,
  C literal, CP-SAT; the optimized C visits fewer candidates by design);
- samples: every sampled configuration is accepted by `solverspace.analysis.check.check` (the reference
  evaluator of every rule), is distinct, and belongs to the listed set when one is known; and
  `space.index` and `space[i]` invert each other on the first few (positions at any size).

On disagreement it finds a configuration on which two backends differ: the set difference of the
listings, or, for a count-only backend, a bisection that fixes one parameter after another by
counting restricted spaces (the space's source with `require(...)` lines added), and reports it as
a ready-to-run `solverspace check SPACE k=v ...` line with each backend's verdict and the value of
every derived value and constraint.

A backend that refuses a space (the C translator's `UnsupportedConstruct`, a CP-SAT refusal) has
*declined*: that is not a disagreement. `Report.status` is 0 when the backends that ran agree,
1 when two disagree, 2 when the comparison could not be made (fewer than two backends ran, or
one failed unexpectedly).
"""
from __future__ import annotations

import os
import shlex
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from solverspace.registry.backends import get_backend
from solverspace.translators.order_slots import OrderSlots
from solverspace.analysis.check import CheckResult, check
from solverspace.core.errors import BackendUnavailableError, SolverspaceError
from solverspace.lang.evaluate import Undefined, compile_expr
from solverspace.core.orders import format_row
from solverspace.lang.printing import to_source
from solverspace.core.formats import write_rows
from solverspace.space import Space

from solverspace.validation.digest import Digest, multiset_difference, row_hash
from solverspace.io.loader import read_text, resolve_space_path
from solverspace.moves.value_lists import ValueListError
from solverspace.validation.moves import check_moves

DEFAULT_REFERENCE_LIMIT = 100_000   # rows; the reference lists about 100k rows a second at best
DEFAULT_KEEP_LIMIT = 5_000_000      # rows kept in memory for set differences and bisection
VISIT_LIMIT = 2 ** 40               # rows C lists (and the literal plan visits one by one) at most:
                                    # beyond, C counts only and C literal is skipped (it would not finish)
DEFAULT_SAMPLES = 20
FILE_FORMATS = {"csv": "CSV", "jsonl": "JSON Lines"}   # the files whose bytes are compared
POSITION_CHECKS = 3                 # sampled rows whose positions are checked both ways
ALL_BACKENDS = ("c", "c-literal", "cpsat", "reference", "sample")

# statuses of one backend's run
OK = "ok"
DECLINED = "declined"          # the backend refuses this space (a legitimate, named refusal)
UNAVAILABLE = "unavailable"    # not installed here (no compiler, no OR-Tools)
SKIPPED = "skipped"            # not run (too large for the reference, no sampler)
ERROR = "error"                # evaluating the space raised a language error
FAILED = "failed"              # an unexpected exception: a bug somewhere


# ------------------------------------------------------------------------------ results
MOVES_LIMIT = 2_000   # the largest listed space whose search moves validate checks (validation/moves.py)
MOVES_CONFIGS = 5     # random configurations whose neighbours it checks, by every method


@dataclass
class Outcome:
    """What one backend answered."""

    backend: str
    status: str
    count: int | None = None
    undefined: int | None = None
    digest: int | None = None
    order: int | None = None
    seconds: float = 0.0
    note: str = ""
    plan_exact: bool = False          # its undefined tally follows the literal plan
    first_undefined: tuple | None = None   # (where, values) of the first undefined operation seen
    listing: "Listing | None" = field(default=None, repr=False)
    hashes: np.ndarray | None = field(default=None, repr=False)
    counter: Callable | None = field(default=None, repr=False)   # count of a restricted Space
    samples: list | None = field(default=None, repr=False)
    writer: Callable | None = field(default=None, repr=False)   # writer(path, fmt): its files (`_files`)
    files: dict[str, bytes] | None = field(default=None, repr=False)   # format -> bytes, once written

    @property
    def ran(self) -> bool:
        return self.status == OK


@dataclass
class Counterexample:
    """A configuration on which backends differ, with what each says about it."""

    assignment: dict
    verdicts: dict[str, str]
    command: str
    check: CheckResult | None
    derived: dict
    constraints: list[tuple[str, str, str]]   # (name, rule text, value and effect)
    reason: str = ""

    def render(self) -> str:
        lines = [f"counterexample ({self.reason}):" if self.reason else "counterexample:", f"  {self.command}"]
        for backend, verdict in self.verdicts.items():
            lines.append(f"    {backend:<12} {verdict}")
        if self.derived:
            lines.append("  derived values: " + ", ".join(f"{k} = {_show(v)}" for k, v in self.derived.items()))
        if self.constraints:
            lines.append("  constraints:")
            lines += [f"    {name}: {text}  ->  {value}" for name, text, value in self.constraints]
        return "\n".join(lines)

    def as_dict(self) -> dict:
        """The counterexample as plain data (`validate --json`); values as `render` shows them."""
        return {"reason": self.reason, "command": self.command, "verdicts": dict(self.verdicts),
                "derived": {k: _show(v) for k, v in self.derived.items()},
                "constraints": [{"name": name, "text": text, "value": value} for name, text, value in self.constraints]}


@dataclass
class Report:
    """Every backend's outcome, the problems found and a verdict (`status` 0, 1 or 2)."""

    space: str
    settings: dict
    outcomes: list[Outcome]
    problems: list[str]
    counterexamples: list[Counterexample]
    status: int
    verdict: str
    columns: tuple[str, ...] = ()

    def outcome(self, backend: str) -> Outcome | None:
        return next((o for o in self.outcomes if o.backend == backend), None)

    @property
    def agree(self) -> bool:
        return self.status == 0

    def table(self) -> str:
        header = ("backend", "count", "undefined", "digest", "seconds", "status")
        rows = []
        for o in self.outcomes:
            rows.append((o.backend, _num(o.count), _num(o.undefined),
                         f"{o.digest:016x}" if o.digest is not None else "-",
                         f"{o.seconds:.2f}" if o.status not in (SKIPPED, UNAVAILABLE) else "-",
                         o.status + (f": {o.note}" if o.note else "")))
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(5)]
        out = []
        for r in [header] + rows:
            cells = [r[0].ljust(widths[0])] + [r[i].rjust(widths[i]) for i in range(1, 4)] + \
                    [r[4].rjust(widths[4]), r[5]]
            out.append("  ".join(cells).rstrip())
        return "\n".join(out)

    def as_dict(self) -> dict:
        """The report as plain data (`validate --json`): the verdict, each backend's outcome
        (`digest` as `table` shows it, 16 hex digits), the problems and the counterexamples."""
        return {"space": self.space, "settings": dict(self.settings), "status": self.status, "agree": self.agree,
                "verdict": self.verdict, "problems": list(self.problems),
                "backends": [{"backend": o.backend, "status": o.status, "count": o.count, "undefined": o.undefined,
                              "digest": f"{o.digest:016x}" if o.digest is not None else None,
                              "seconds": round(o.seconds, 6), "note": o.note} for o in self.outcomes],
                "counterexamples": [c.as_dict() for c in self.counterexamples]}

    def render(self) -> str:
        title = f"validate {self.space}"
        if self.settings:
            title += " (" + ", ".join(f"{k}={v}" for k, v in self.settings.items()) + ")"
        parts = [title, self.table()]
        if self.problems:
            parts.append("problems:\n" + "\n".join(f"  - {p}" for p in self.problems))
        parts += [c.render() for c in self.counterexamples]
        parts.append(f"verdict: {self.verdict}")
        return "\n".join(parts)


def _num(value) -> str:
    return "-" if value is None else f"{value:,}"


def _show(value) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    return repr(value)


# ------------------------------------------------------------------------------ listings
class Listing:
    """Every row a backend listed, as NumPy columns, for set differences and counting the rows
    that match a partial assignment."""

    def __init__(self, columns: Sequence[str], arrays: dict[str, np.ndarray]):
        self.columns = tuple(columns)
        self.arrays = arrays

    @classmethod
    def from_rows(cls, columns, rows: list[tuple]) -> "Listing":
        arrays = {}
        for i, name in enumerate(columns):
            values = [r[i] for r in rows]
            if all(type(v) is int for v in values):
                arrays[name] = np.array(values, dtype=object if values and max(map(abs, values)) >= 2 ** 62
                                        else np.int64)
            else:
                arrays[name] = np.array(values, dtype=object)
        return cls(columns, arrays)

    @classmethod
    def from_arrays(cls, columns, batches: list[np.ndarray]) -> "Listing":
        whole = np.concatenate(batches) if len(batches) > 1 else (batches[0] if batches else None)
        if whole is None:
            return cls(columns, {c: np.zeros(0, dtype=np.int64) for c in columns})
        return cls(columns, {c: whole[c] for c in columns})

    def __len__(self) -> int:
        return len(self.arrays[self.columns[0]]) if self.columns else 0

    def mask(self, fixed: dict, name: str | None = None, values=None) -> np.ndarray:
        m = np.ones(len(self), dtype=bool)
        for k, v in fixed.items():
            m &= self.arrays[k] == v
        if name is not None:
            m &= np.isin(self.arrays[name], list(values))
        return m

    def count(self, fixed: dict, name: str | None = None, values=None) -> int:
        return int(self.mask(fixed, name, values).sum())

    def row(self, index: int) -> tuple:
        return tuple(_py(self.arrays[c][index]) for c in self.columns)



def _py(value):
    return value.item() if hasattr(value, "item") else value


# ------------------------------------------------------------------------------ the validator
class _Validator:
    def __init__(self, space: Space, text: str | None, label: str, settings: dict, *,
                 reference_limit: int, keep_limit: int, threads: int | None, samples: int, seed: int,
                 cpsat_options: dict, builder=None, listing: bool = True):
        self.builder = builder
        self.listing = listing
        self.space = space
        self.text = text
        self.label = label
        self.settings = settings
        self.reference_limit = reference_limit
        self.keep_limit = keep_limit
        self.threads = threads
        self.samples = samples
        self.seed = seed
        self.cpsat_options = cpsat_options
        self.columns = space.parameters
        self.outcomes: list[Outcome] = []
        self.own_problems: list[str] = []   # a backend contradicting itself

    # -------------------------------------------------------------------------- helpers
    def known_count(self) -> int | None:
        for o in self.outcomes:
            if o.ran and o.count is not None and o.backend != "sample":
                return o.count
        return None

    def restricted(self, lines: list[str]) -> Space:
        """The space with extra `require(...)` lines (for counting a partial assignment)."""
        if self.text is None:
            raise BackendUnavailableError("the space's source text is not known, so it cannot be restricted")
        return Space.from_source(self.text.rstrip("\n") + "\n" + "\n".join(lines) + "\n", self.settings,
                                 filename=self.label, max_closure_values=self.space.model.max_closure_values)

    def run(self, name: str, fn: Callable[[Outcome], None], plan_exact=False) -> Outcome:
        outcome = Outcome(name, OK, plan_exact=plan_exact)
        start = time.perf_counter()
        try:
            fn(outcome)
        except Exception as exc:  # classified, and shown in the table
            _classify(outcome, exc)
        outcome.seconds = time.perf_counter() - start
        self.outcomes.append(outcome)
        return outcome

    # -------------------------------------------------------------------------- backends
    def run_c(self, literal: bool) -> Outcome:
        def body(o: Outcome):
            backend = get_backend("c", "list", threads=self.threads, literal=literal or None)
            if backend.through_slots(self.space.plan):   # orders (translators/order_slots.OrderSlots)
                return self.run_c_orders(o, backend)
            enumerator = backend.enumerator(self.space.plan)
            stats = enumerator.stats()
            o.count, o.undefined, o.first_undefined = stats.count, stats.undefined, stats.first_undefined
            if not self.listing:
                o.note = "counted only"
                return
            if o.count > VISIT_LIMIT:
                o.note = f"counted only: {o.count:,} configurations are too many to list (limit 2**40)"
                return
            keep = o.count <= self.keep_limit
            digest = Digest(keep_hashes=keep)
            batches = []
            for batch in enumerator.batches():
                decoded = enumerator.decode(batch)
                digest.add_array(decoded, self.columns)
                if keep:
                    batches.append(decoded)
            if digest.count != o.count:
                self.own_problems.append(f"{o.backend} listed {digest.count:,} rows but counted {o.count:,}")
            o.digest, o.order = digest.value, digest.order
            if keep:
                o.hashes = digest.hashes
                o.listing = Listing.from_arrays(self.columns, batches)
            if o.count <= self.reference_limit and not literal:   # C literal: the same formatter as C's
                o.writer = enumerator.write
        return self.run("c-literal" if literal else "c", body,   # orders: the slot plan's tally
                        plan_exact=literal and not OrderSlots.through_slots(self.space.plan))

    def run_c_orders(self, o: Outcome, backend) -> None:
        """C on a space with orders: it runs the slot model (translators/order_slots.py), whose
        undefined tally is its own plan's; rows are joined back into orders in Python."""
        stats = backend.count(self.space.plan)
        o.count, o.undefined, o.first_undefined = stats.count, stats.undefined, stats.first_undefined
        if not self.listing or o.count > self.keep_limit:
            o.note = "counted only" if not self.listing else f"counted only: {o.count:,} rows with orders"
            return
        rows = [format_row(r) for r in backend.rows(self.space.plan)]
        digest = Digest(keep_hashes=True)
        digest.add_rows(rows)
        if digest.count != o.count:
            self.own_problems.append(f"{o.backend} listed {digest.count:,} rows but counted {o.count:,}")
        o.digest, o.order, o.hashes = digest.value, digest.order, digest.hashes
        o.listing = Listing.from_rows(self.columns, rows)
        if o.count <= self.reference_limit:
            o.writer = lambda path, fmt: backend.write(self.space.plan, path, fmt)

    def run_cpsat(self) -> Outcome:
        def body(o: Outcome):
            # sinks off: a sink's constraints counted by the reference's evaluator would check
            # the reference against itself (translators/cpsat/sinks.py)
            backend = get_backend("cpsat", "count", **{"sinks": False, **self.cpsat_options})
            stats = backend.count(self.space.plan)
            if getattr(stats, "exact", True) is False:
                o.note = "time limit: count is a lower bound"
                o.status = DECLINED
            o.count, o.undefined = int(stats.count), stats.undefined
            o.first_undefined = getattr(stats, "first_undefined", None)

            def counter(space):  # restricted spaces: the count alone (no undefined tally)
                return int(backend.count(space.plan, undefined=False).count)
            o.counter = counter
        return self.run("cpsat", body, plan_exact=not OrderSlots.through_slots(self.space.plan))  # orders: slot plan's

    def run_reference(self) -> Outcome:
        estimate = self.known_count()
        if estimate is not None and estimate > self.reference_limit:
            o = Outcome("reference", SKIPPED, note=f"{estimate:,} configurations > reference limit "
                                                   f"{self.reference_limit:,}")
            self.outcomes.append(o)
            return o

        def body(o: Outcome):
            enumerator = get_backend("reference", "list").enumerator(self.space.plan)
            rows = []
            for row in enumerator.rows():
                rows.append(format_row(row))   # orders as written in files (i>j>k), as C's rows
                if len(rows) > self.reference_limit:
                    o.status, o.note = SKIPPED, f"more than {self.reference_limit:,} configurations"
                    return
            digest = Digest(keep_hashes=True)
            digest.add_rows(rows)
            o.count, o.undefined = len(rows), enumerator.stats.undefined
            o.first_undefined = enumerator.stats.first_undefined
            o.digest, o.order, o.hashes = digest.value, digest.order, digest.hashes
            o.listing = Listing.from_rows(self.columns, rows)
            o.writer = lambda path, fmt: write_rows(path, self.columns, rows, fmt)   # its writer
        return self.run("reference", body, plan_exact=True)

    def run_sample(self) -> Outcome:
        def body(o: Outcome):
            known = self.known_count()
            n = self.samples if known is None else min(self.samples, known)
            array = self.space.sample(n, seed=self.seed, method="exact")
            names = array.dtype.names or ()
            rows = [tuple(_py(v) for v in r) for r in array.tolist()] if len(array) else []
            if names and tuple(names[:len(self.columns)]) != self.columns:
                raise AssertionError(f"sample columns {names} are not the parameters {self.columns}")
            rows = [r[:len(self.columns)] for r in rows]
            o.count, o.samples = len(rows), rows
            self.check_positions(rows[:POSITION_CHECKS])
        return self.run("sample", body)

    def check_positions(self, rows: list[tuple]) -> None:
        """`space.index` and `space[i]` invert each other on sampled rows (positions are exact at
        any size: this is what checks them where the space is too large to list)."""
        for row in rows:
            try:
                position = self.space.index(row)
            except ValueError:
                continue  # an invalid sample: check_samples reports it
            back = tuple(_py(v) for v in self.space[position])
            if back != row:
                self.own_problems.append(f"space.index gives position {position:,} for {self.format_row(row)}, "
                                         f"but space[{position}] is {self.format_row(back)}")

    # -------------------------------------------------------------------------- comparing
    def compare(self) -> tuple[list[str], list[Counterexample]]:
        problems: list[str] = list(self.own_problems)
        examples: list[Counterexample] = []
        ran = [o for o in self.outcomes if o.ran and o.backend != "sample"]
        listed = [o for o in ran if o.digest is not None]

        # a language error on one side and a result on the other
        errors = [o for o in self.outcomes if o.status == ERROR and o.plan_exact]
        if errors and any(o.plan_exact for o in ran):
            problems.append(f"{errors[0].backend} raised an error ({errors[0].note}) where "
                            + ", ".join(f"{o.backend} counted {o.count:,}" for o in ran if o.plan_exact))

        # counts
        counts = {o.backend: o.count for o in ran}
        if len(set(counts.values())) > 1:
            problems.append("counts differ: " + ", ".join(f"{b} {c:,}" for b, c in counts.items()))
        lower = next((o for o in self.outcomes if o.backend == "cpsat" and o.status == DECLINED
                      and o.count is not None), None)
        if lower is not None and ran and lower.count > ran[0].count:
            problems.append(f"cpsat's lower bound {lower.count:,} exceeds {ran[0].backend}'s count {ran[0].count:,}")

        # set digests, then the rows that differ
        reference = next((o for o in listed if o.backend == "reference"), None)
        base = reference or (listed[0] if listed else None)
        for other in listed:
            if other is base:
                continue
            if other.digest != base.digest:
                problems.append(f"the sets of configurations differ: {base.backend} digest {base.digest:016x}, "
                                f"{other.backend} digest {other.digest:016x}")
                example = self.set_difference(base, other)
                if example is not None and all(e.assignment != example.assignment for e in examples):
                    examples.append(example)
            elif other.order != base.order and other.count == base.count:
                if base.backend == "reference" or {base.backend, other.backend} == {"c", "c-literal"}:
                    problems.append(self.order_difference(base, other))
            elif other.order == base.order:
                problems += _file_differences(base, other)

        # a count-only backend against a listing
        listing = next((o for o in ([reference] if reference else []) + listed if o.listing is not None), None)
        for o in ran:
            if o.counter is not None and listing is not None and o.count != listing.count and not examples:
                example = self.bisect(listing, o)
                if example is not None:
                    examples.append(example)

        # undefined tallies along the literal plan
        exact = [o for o in ran if o.plan_exact and o.undefined is not None]
        if len({o.undefined for o in exact}) > 1:
            problems.append("undefined-operation tallies along the literal plan differ: "
                            + ", ".join(f"{o.backend} {o.undefined:,}" for o in exact)
                            + "; first undefined: " + "; ".join(f"{o.backend} {_first(o)}" for o in exact))

        # samples
        sample = next((o for o in self.outcomes if o.backend == "sample" and o.ran), None)
        if sample is not None:
            problems += self.check_samples(sample, listing, examples)
        return problems, examples

    def order_difference(self, base: Outcome, other: Outcome) -> str:
        text = f"the row order differs between {base.backend} and {other.backend}"
        if base.hashes is not None and other.hashes is not None and len(base.hashes) == len(other.hashes):
            where = np.flatnonzero(base.hashes != other.hashes)
            if len(where):
                i = int(where[0])
                text += (f": row {i} is {self.format_row(base.listing.row(i))} in {base.backend} and "
                         f"{self.format_row(other.listing.row(i))} in {other.backend}")
        return text

    def format_row(self, row: tuple) -> str:
        return " ".join(f"{k}={v}" for k, v in zip(self.columns, row))

    def set_difference(self, a: Outcome, b: Outcome) -> Counterexample | None:
        if a.hashes is None or b.hashes is None:
            return None
        only_a = multiset_difference(a.hashes, b.hashes)
        only_b = multiset_difference(b.hashes, a.hashes)
        for side, hashes, reason in ((a, only_a, f"{a.backend} lists it, {b.backend} does not"),
                                     (b, only_b, f"{b.backend} lists it, {a.backend} does not")):
            if len(hashes):
                where = np.flatnonzero(np.isin(side.hashes, hashes[:16]))
                if len(where):
                    row = side.listing.row(int(where[0]))
                    return self.counterexample(dict(zip(self.columns, row)), reason)
        return None

    def bisect(self, listing: Outcome, counting: Outcome) -> Counterexample | None:
        """Fix one parameter after another (in loop order), halving its candidate values, keeping
        a restriction on which the two backends' counts still differ."""
        model = self.space.model
        bounds = model.analysis.bounds
        fixed: dict = {}
        counts_made = 0

        def lines(extra_name=None, extra_values=None) -> list[str]:
            out = [f"require({k} == {v!r})" for k, v in fixed.items()]
            if extra_name is not None:
                out.append(f"require({_membership(extra_name, extra_values)})")
            return out

        def differs(name, values) -> bool:
            nonlocal counts_made
            counts_made += 1
            mine = listing.listing.count(fixed, name, values)
            theirs = counting.counter(self.restricted(lines(name, values)))
            return mine != theirs

        try:
            for p in self.space.plan.order:
                candidates = _candidates(model, bounds, p, listing.listing.arrays[p])
                if candidates is None:
                    return None
                while len(candidates) > 1:
                    half = candidates[: len(candidates) // 2]
                    candidates = half if differs(p, half) else candidates[len(half):]
                if not candidates or not differs(p, candidates):
                    return None
                fixed[p] = candidates[0]
        except SolverspaceError:
            return None
        mine = listing.listing.count(fixed)
        reason = (f"{listing.backend} has {mine} configuration(s) here, {counting.backend} counts "
                  f"{'more' if mine == 0 else 'fewer'} (found by bisection with {counts_made} restricted counts)")
        return self.counterexample(fixed, reason)

    def check_samples(self, sample: Outcome, listing: Outcome | None, examples) -> list[str]:
        problems = []
        if len(set(sample.samples)) != len(sample.samples):
            problems.append("the sampler returned the same configuration twice (sampling without replacement)")
        known = set(int(h) for h in listing.hashes) if listing is not None and listing.hashes is not None else None
        rejected = 0
        for row in sample.samples:
            assignment = dict(zip(self.columns, row))
            result = check(self.space.plan, assignment)
            outside = known is not None and row_hash(row) not in known
            if not result.valid or outside:
                rejected += 1
                if rejected == 1:
                    why = "check rejects it" if not result.valid else f"{listing.backend} does not list it"
                    problems.append(f"the sampler returned {self.format_row(row)}, but {why}")
                    examples.append(self.counterexample(assignment, f"sampled, but {why}"))
        sample.note = f"{len(sample.samples) - rejected}/{len(sample.samples)} samples accepted by check"
        return problems

    # -------------------------------------------------------------------------- reporting a configuration
    def counterexample(self, assignment: dict, reason: str) -> Counterexample:
        plan = self.space.plan
        model = plan.model
        result = check(plan, assignment)
        verdicts = {"check": "valid" if result.valid else
                    "invalid: " + "; ".join(r.rule for r in result.rejections)}
        row = tuple(assignment[c] for c in self.columns)
        h = row_hash(row)
        for o in self.outcomes:
            if not o.ran or o.backend == "sample":
                continue
            if o.hashes is not None:
                n = int((o.hashes == np.uint64(h)).sum())
                verdicts[o.backend] = "lists it" if n == 1 else ("does not list it" if n == 0 else f"lists it {n} times")
            elif o.counter is not None and self.text is not None:
                try:
                    n = o.counter(self.restricted([f"require({k} == {v!r})" for k, v in assignment.items()]))
                    verdicts[o.backend] = f"counts {n} configuration(s) with these values"
                except SolverspaceError as exc:
                    verdicts[o.backend] = f"could not count the restricted space: {exc.message}"
        env = dict(assignment)
        env.update({k: v for k, v in result.derived.items()})
        constraints = []
        for c in model.constraints:
            text = f"{c.polarity} {to_source(c.expr)}"
            if any(env.get(n, 0) is None for n in c.depends_on):
                constraints.append((c.name, text, "not evaluated (an input is undefined)"))
                continue
            try:
                value = compile_expr(c.expr)(env)
                effect = "rejects" if bool(value) == c.rejects else "accepts"
                constraints.append((c.name, text, f"{_show(value)} ({effect})"))
            except Undefined as exc:
                constraints.append((c.name, text, f"undefined: division or modulo by zero in `{to_source(exc.expr)}`"))
            except SolverspaceError as exc:
                constraints.append((c.name, text, f"error: {exc.message}"))
        for r in result.rejections:
            if r.rule.startswith("domain of"):
                constraints.insert(0, (r.rule, r.reason, "value outside the domain" if not r.undefined else r.reason))
        return Counterexample(assignment, verdicts, self.command(assignment), result, dict(result.derived),
                              constraints, reason)

    def command(self, assignment: dict) -> str:
        words = ["solverspace", "check", self.label]
        words += [f"{k}={v}" for k, v in assignment.items()]
        for k, v in self.settings.items():
            words += ["--set", f"{k}={v}"]
        return " ".join(shlex.quote(str(w)) for w in words)

    # -------------------------------------------------------------------------- the whole run
    def check_moves(self) -> list[str]:
        """The search moves (value lists, parameter indices, the five neighbour methods)
        against brute force over the reference's listing (`validation/moves.py`), on a space of
        at most `MOVES_LIMIT` configurations; a space whose value lists are refused is skipped."""
        self.moves_checked = False
        listed = next((o for o in self.outcomes if o.backend == "reference" and o.ran), None)
        if listed is None or listed.count is None or listed.count > MOVES_LIMIT:
            return []
        try:
            problems = check_moves(self.space, configs=MOVES_CONFIGS, seed=self.seed)
        except ValueListError:
            return []
        self.moves_checked = not problems
        return [f"search moves: {problem}" for problem in problems]

    def report(self, backends: Iterable[str]) -> Report:
        wanted = list(backends)
        unknown = [b for b in wanted if b not in ALL_BACKENDS]
        if unknown:
            raise BackendUnavailableError(f"unknown validation backend {unknown[0]!r}",
                                          hint=f"known: {', '.join(ALL_BACKENDS)}")
        order = list(ALL_BACKENDS)  # C first: its count sizes the reference run
        builds = []
        if self.builder is not None:  # compile C elsewhere meanwhile; CP-SAT's count sizes the reference
            builds = [self.builder.submit(self.space.plan, literal)
                      for literal, name in ((False, "c"), (True, "c-literal")) if name in wanted]
            order = ["cpsat", "reference", "c", "c-literal", "sample"]
        for name in order:
            if name not in wanted:
                continue
            if name == "c":
                _wait(builds)
                self.run_c(False)
            elif name == "c-literal":
                known = self.known_count()
                if known is not None and known > VISIT_LIMIT:
                    self.outcomes.append(Outcome("c-literal", SKIPPED, note=f"{known:,} configurations: the literal "
                                                 f"plan visits each one (limit 2**40)"))
                else:
                    self.run_c(True)
            elif name == "cpsat":
                self.run_cpsat()
            elif name == "reference":
                self.run_reference()
            else:
                self.run_sample()
        self.outcomes.sort(key=lambda o: ALL_BACKENDS.index(o.backend))
        problems, examples = self.compare()
        problems += self.check_moves()
        ran = [o for o in self.outcomes if o.ran and o.backend != "sample"]
        failed = [o for o in self.outcomes if o.status == FAILED]
        if problems:
            status, verdict = 1, "DISAGREE: " + problems[0]
        elif failed:
            status, verdict = 2, f"could not run: {failed[0].backend} failed ({failed[0].note})"
        elif len(ran) < 2:
            status = 2
            verdict = ("could not run: fewer than two backends accepted the space"
                       + (f" (only {ran[0].backend})" if ran else ""))
        else:
            names = [f"{o.backend} ({o.seconds:.2f} s)" for o in ran]
            verdict = f"AGREE: {_join(names)} count {ran[0].count:,}"
            digests = [o.backend for o in ran if o.digest is not None]
            if len(digests) > 1:
                verdict += f"; {_join(digests)} list the same configurations"
            if self.moves_checked:
                verdict += "; value lists, parameter indices and neighbours agree with brute force"
            written = [o.backend for o in ran if o.files is not None]   # where two were compared
            if len(written) > 1:
                verdict += f"; {_join(written)} write the same CSV and JSON Lines bytes"
            status = 0
        return Report(self.label, self.settings, self.outcomes, problems, examples, status, verdict, self.columns)


def _files(o: Outcome) -> dict[str, bytes] | None:
    """The bytes of every format of `FILE_FORMATS` as the backend's writer writes them (in a
    temporary directory: its own writer, atomic rename included); written once, when first
    compared (a backend with nothing to be compared with writes nothing)."""
    if o.files is None and o.writer is not None:
        with tempfile.TemporaryDirectory(prefix="solverspace-validate-") as tmp:
            files = {}
            for fmt in FILE_FORMATS:
                path = Path(tmp) / f"rows.{fmt}"
                o.writer(path, fmt)
                files[fmt] = path.read_bytes()
        o.files = files
    return o.files


def _file_differences(base: Outcome, other: Outcome) -> list[str]:
    """The formats in which two backends that list the same rows in the same order write
    different bytes, each with the first line that differs."""
    try:
        if _files(base) is None or _files(other) is None:
            return []
    except Exception as exc:   # the listing ran, writing it did not: say so, as a problem
        return [f"writing the listing as CSV and JSON Lines failed: {type(exc).__name__}: {exc}"]
    problems = []
    for fmt, label in FILE_FORMATS.items():
        mine, theirs = base.files[fmt], other.files[fmt]
        if mine == theirs:
            continue
        at = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
        line = mine.count(b"\n", 0, at)
        shown = [data.split(b"\n")[line][:120] for data in (mine, theirs)]
        problems.append(f"the {label} files differ: {base.backend} and {other.backend} list the same configurations "
                        f"but write different bytes, from byte {at} (line {line + 1}): {base.backend} writes "
                        f"{shown[0]!r}, {other.backend} writes {shown[1]!r}")
    return problems


def _first(o: Outcome) -> str:
    if o.first_undefined is None:
        return "none"
    where, values = o.first_undefined
    bound = " ".join(f"{k}={v!r}" for k, v in (values or {}).items())
    return f"`{where}`" + (f" at {bound}" if bound else "")


def _wait(futures) -> None:
    """Wait for background builds; their errors are raised again, and reported, by the C run."""
    for f in futures:
        try:
            f.result()
        except Exception:
            pass


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _membership(name: str, values: list) -> str:
    if all(type(v) is int for v in values):
        lo, hi = min(values), max(values)
        if hi - lo + 1 == len(values):
            return f"({name} >= {lo}) & ({name} <= {hi})" if lo != hi else f"{name} == {lo}"
    return " | ".join(f"({name} == {v!r})" for v in values)


def _candidates(model, bounds, name: str, listed: np.ndarray) -> list | None:
    """Every value `name` can take (interval of its bounds, or its categorical constants), plus
    what the listing holds; None when that is not a small finite set."""
    from solverspace.lang import ir
    param = model.parameter[name]
    strings = sorted({n.value for n in ir.walk(param.domain) if isinstance(n, ir.Const) and type(n.value) is str})
    seen = {_py(v) for v in np.unique(listed)} if len(listed) else set()
    if strings or any(isinstance(v, str) for v in seen):
        return sorted(set(strings) | {v for v in seen if isinstance(v, str)}) + \
            sorted(v for v in seen if not isinstance(v, str))
    interval = bounds.of(name)
    if interval.empty:
        return sorted(seen)
    if not interval.finite or interval.hi - interval.lo > 10_000_000:
        return None
    return list(range(int(interval.lo), int(interval.hi) + 1))


def _classify(outcome: Outcome, exc: Exception) -> None:
    """Sort an exception from a backend into declined / unavailable / error / failed."""
    name = type(exc).__name__
    message = getattr(exc, "message", None) or str(exc)
    message = message.splitlines()[0] if message else name
    if name in ("UnsupportedConstruct", "CpSatRefusal"):
        outcome.status, outcome.note = DECLINED, message
    elif isinstance(exc, BackendUnavailableError) or name == "CompilerError" or isinstance(exc, ImportError):
        outcome.status, outcome.note = UNAVAILABLE, message
    elif isinstance(exc, SolverspaceError):
        outcome.status, outcome.note = ERROR, f"{name}: {message}"
    else:
        where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        outcome.status = FAILED
        outcome.note = f"{name}: {message}" + (f" at {Path(where.filename).name}:{where.lineno}" if where else "")


# ------------------------------------------------------------------------------ the API
def validate(space: "Space | str | os.PathLike", *, settings: dict | None = None, source: str | None = None,
             label: str | None = None, backends: Sequence[str] = ALL_BACKENDS,
             reference_limit: int = DEFAULT_REFERENCE_LIMIT, keep_limit: int = DEFAULT_KEEP_LIMIT,
             threads: int | None = None, samples: int = DEFAULT_SAMPLES, seed: int = 0,
             cpsat_options: dict | None = None, max_closure_values: int = 100_000, builder=None,
             listing: bool = True) -> Report:
    """Run every backend on a space and compare them (see the module docstring).

    `space`: a `Space`, a space file path or a built-in name (`"gemm"`). `settings` overrides
    settings when loading. `source` is the space's text when `space` is a `Space` made with
    `Space.from_source` (needed to restrict the space while bisecting a count-only backend);
    `label` names it in the counterexample's `solverspace check` line. `backends` chooses among
    "c", "c-literal", "cpsat", "reference", "sample". The reference runs when the C (or CP-SAT)
    count is at most `reference_limit`. `cpsat_options` go to the CP-SAT backend (time_limit=,
    workers=). `builder` (a `validation.parallel.Builder`) compiles the two C modules in worker
    processes while CP-SAT and the reference run. `listing=False` only counts with C (no
    digests): for spaces of hundreds of millions of configurations.
    """
    settings = dict(settings or {})
    if isinstance(space, Space):
        loaded = space
        if source is None:
            path = Path(loaded.model.source)
            source = read_text(path, "space file") if path.is_file() else None
        label = label or loaded.model.source
        overridden = {s.name: s.value for s in loaded.model.settings if s.overridden}
        settings = {**overridden, **settings}
    else:
        path = resolve_space_path(space)
        source = source or read_text(path, "space file")
        label = label or str(space)
        loaded = Space.load(space, settings, max_closure_values=max_closure_values)
    validator = _Validator(loaded, source, label, settings, reference_limit=reference_limit, keep_limit=keep_limit,
                           threads=threads, samples=samples, seed=seed, cpsat_options=dict(cpsat_options or {}),
                           builder=builder, listing=listing)
    return validator.report(backends)


def validate_source(source: str, *, settings: dict | None = None, label: str = "SPACE.py", **options) -> Report:
    """`validate` for a space given as source text (generated spaces, tests)."""
    space = Space.from_source(source, settings, filename=label)
    return validate(space, source=source, label=label, settings=settings, **options)
