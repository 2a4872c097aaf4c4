"""Closure iterators tabulated once, over the values their inputs can actually take.

A closure iterator (a generator `@iterator`) is Python code: the C and CP-SAT backends cannot
run it, so they look its values up in a table computed here, in Python, for every combination
of its inputs' values. Every backend (and the bounds analysis) reads the same `Table` from
`model.closures`, so they cannot disagree about what a closure yields.

- An input's values are the *set of values it can take* (`ValueSets.of`): a parameter's
  domain evaluated for every combination of its own inputs' values, a derived value's expression
  likewise. This is a superset of what occurs in valid configurations (correlations between
  inputs are dropped), never the interval hull of codes: `a = iterator([1, 1000000])` has two
  values, and a categorical input has its strings.
- The closure always receives values as the user sees them (strings as strings, never codes).
- Limits: at most `MAX_COMBINATIONS` input combinations; an input whose values cannot be listed
  within that limit makes the table impossible (`ClosureTableError`, which the backends turn into
  their own refusals). A closure that yields both strings and integers is refused here
  (`solverspace.lang.kinds` says why and how to fix it).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from solverspace.lang import ir
from solverspace.core.errors import ClosureTableError, Location, SpaceEvaluationError
from solverspace.lang.evaluate import Undefined, compile_domain, compile_expr
from solverspace.lang.kinds import MIX_HINT, KindError

#: Closure iterators are tabulated for at most this many input combinations; a value set is
#: listed from at most this many combinations of its own inputs.
MAX_COMBINATIONS = 100_000


@dataclass(frozen=True)
class Table:
    """What a closure yields for every combination of its inputs' values.

    `inputs[i]` lists the values of input `deps[i]`; `rows` maps a combination (values as the
    user sees them) to the ordered, duplicate-free values yielded for it."""

    node: ir.Closure
    inputs: tuple[tuple, ...]
    rows: dict

    @property
    def deps(self) -> tuple[str, ...]:
        return self.node.deps

    @property
    def values(self) -> tuple:
        """Every value yielded for some combination, in order of first appearance."""
        return tuple(dict.fromkeys(v for vals in self.rows.values() for v in vals))


class ValueSets:
    """The values each parameter and derived value can take, and the closure tables built from
    them; memoised (one instance per model: `model.closures`)."""

    def __init__(self, model, limit: int = MAX_COMBINATIONS):
        self.model = model
        self.limit = limit
        self.memo: dict[str, tuple | None] = {}
        self.tables: dict[str, Table | ClosureTableError] = {}
        self.globals = dict(model.closure_globals)
        self._bounds = None

    # ------------------------------------------------------------------------------ value sets
    def of(self, name: str) -> tuple | None:
        """Every value `name` can take (a superset, in order of first appearance), or None when
        they cannot be listed within the limit."""
        if name not in self.memo:
            self.memo[name] = None  # an acyclic model never re-enters; guard anyway
            exact = self._exact(name)
            self.memo[name] = exact if exact is not None else self._hull(name)
        return self.memo[name]

    def _exact(self, name: str) -> tuple | None:
        if name in self.model.parameter:
            p = self.model.parameter[name]
            if isinstance(p.domain, ir.Closure):
                try:
                    return self.table(p.domain).values
                except ClosureTableError:
                    return None
            fn = compile_domain(p.domain, name, closure_globals=self.globals,
                                max_closure_values=self.model.max_closure_values)
            return self._collect(ir.refs(p.domain), fn, many=True)
        d = self.model.derived_value[name]
        return self._collect(ir.refs(d.expr), compile_expr(d.expr), many=False)

    def _collect(self, names, fn, many: bool) -> tuple | None:
        envs = self.environments(sorted(names))
        if envs is None:
            return None
        seen: dict = {}
        for env in envs:
            try:
                result = fn(env)
            except (Undefined, SpaceEvaluationError):
                continue  # no value here (the backends count or report it where it happens)
            if many and (isinstance(result, range) and not _shorter(result, self.limit) or len(result) > self.limit):
                return None
            for v in (result if many else (result,)):
                seen[v] = None
            if len(seen) > self.limit:
                return None
        return tuple(seen)

    def _hull(self, name: str) -> tuple | None:
        """An integer value's interval, listed, when it is small (a sound superset)."""
        try:
            b = self.model.analysis.bounds.of(name)
        except (ValueError, SpaceEvaluationError):
            return None
        if b.empty:
            return ()
        if (not b.finite or b.hi - b.lo + 1 > self.limit or self.model.kinds.of(name) != "int"
                or name in self.model.analysis.rational):
            return None  # (a categorical value's interval is one of codes, not of values)
        return tuple(range(math.ceil(b.lo), math.floor(b.hi) + 1))

    def environments(self, names: list[str]):
        """Every combination of the values of `names` (dicts), or None beyond the limit."""
        sets = [self.of(n) for n in names]
        if any(s is None for s in sets) or math.prod(len(s) for s in sets) > self.limit:
            return None
        return (dict(zip(names, combo)) for combo in itertools.product(*sets))

    # ------------------------------------------------------------------------------ tables
    def table(self, node: ir.Closure) -> Table:
        """The closure's table (memoised; a `ClosureTableError` is raised again each time)."""
        if node.name not in self.tables:
            try:
                self.tables[node.name] = self._tabulate(node)
            except ClosureTableError as exc:
                self.tables[node.name] = exc
        found = self.tables[node.name]
        if isinstance(found, ClosureTableError):
            raise found
        return found

    def _tabulate(self, node: ir.Closure) -> Table:
        where = Location(self.model.source, node.line)
        inputs = []
        for dep in node.deps:
            values = self.of(dep)
            if values is None:
                raise ClosureTableError(
                    f"closure iterator {node.name!r}: its input {dep!r} takes too many values to tabulate "
                    f"(more than {self.limit:,}, or unbounded)", where=where,
                    hint=f"give {dep!r} a smaller domain, or use the reference backend")
            inputs.append(values)
        size = math.prod(len(v) for v in inputs)
        if size > self.limit:
            raise ClosureTableError(
                f"closure iterator {node.name!r}: {size:,} input combinations to tabulate (limit {self.limit:,})",
                where=where, hint="narrow the domains of its inputs, or use the reference backend")
        fn = compile_domain(node, node.name, closure_globals=self.globals,
                            max_closure_values=self.model.max_closure_values)
        rows = {}
        for combo in itertools.product(*inputs):
            try:
                rows[combo] = tuple(fn(dict(zip(node.deps, combo))))
            except Undefined:
                continue
            except KindError as exc:  # one call yielded both kinds: say where the closure is
                raise KindError(exc.message, where=where, hint=exc.hint) from None
        table = Table(node, tuple(inputs), rows)
        check_one_kind(table, self.model)
        return table


def _shorter(values: range, limit: int) -> bool:
    """len(values) <= limit, also for ranges longer than `sys.maxsize` (where len() raises)."""
    try:
        return len(values) <= limit
    except OverflowError:
        return False


def check_one_kind(table: Table, model) -> None:
    """Refuse a closure that yields both strings and integers (naming one of each)."""
    text = next((v for v in table.values if type(v) is str), None)
    number = next((v for v in table.values if type(v) is not str), None)
    if text is not None and number is not None:
        raise KindError(
            f"closure iterator {table.node.name!r} yields both strings and integers "
            f"(e.g. {text!r} and {number!r})", where=Location(model.source, table.node.line),
            hint=MIX_HINT)
