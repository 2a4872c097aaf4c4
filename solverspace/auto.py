"""The `auto` backend: the policy that picks, per question, the reference or the compiled
enumerator (and, past the reference's budget where C refuses, CP-SAT), so that small spaces
wait for no compiler. Registered as ``"auto"`` in `solverspace.backends`.
"""
from __future__ import annotations

from solverspace.core.errors import BackendUnavailableError
from solverspace.core.formats import write_rows
from solverspace.core.results import Stats, rows_to_array
from solverspace.analysis.reference import WALK_LIMIT, ReferenceEnumerator, WorkBudgetExceeded
from solverspace.factories import c_backend, cpsat_backend


class BeyondBudgetError(BackendUnavailableError):
    """`auto` has no backend for a space: one of its domains is larger than the reference's
    budget and the C backend (and, for counts, CP-SAT) refuses the space."""


def _unsupported():
    """The translators' refusal class (imported late: asking `auto` imports no translator)."""
    from solverspace.translators.errors import UnsupportedConstruct
    return UnsupportedConstruct


AUTO_REFERENCE_BUDGET = 40_000  # candidate values: about 0.05-0.3 s of the reference (0.14-0.9 M/s, T1 spaces)
AUTO_REFERENCE_LIMIT = 700_000  # ... and at most this many when the walk so far says the whole fits:
                                # 0.6-1.2 s of the reference, about what generating and compiling cost
AUTO_BUILD_WORK = 40_000        # a reference answer past this many candidate values leaves the module
                                # to be built in the background (solverspace/background.py): below it,
                                # the reference is about as fast as a warm compiled call
AUTO_QUICK_WORK = 20_000_000    # a space compiled cold whose reference walk is estimated at most this
                                # many candidate values gets the quick (-O0) build now and the -O2 one
                                # in the background: on the T1 files (0.005-1.8 M values) -O0 compiles
                                # in 0.2 CPU-s against 0.5-0.75 and counts in 0.005-0.03 s as -O2 does;
                                # the GEMM space (estimated 1.4 G) is compiled -O2 directly
AUTO_QUICK_LIMIT = 200_000      # AUTO_REFERENCE_LIMIT where a quick build is the alternative: it costs
                                # about 0.25-0.3 CPU-s, 200,000-400,000 values of the reference


class AutoBackend:
    """The default: no compiler wait for small spaces. The compiled enumerator when its module is
    already built (nothing to generate or compile); otherwise the reference, stopped after
    `budget` candidate values (`WorkBudgetExceeded`), and the compiled enumerator when the space
    needs more. At the budget, the share of the walk done so far estimates the whole walk: when
    that is within `limit` candidate values, the reference goes on (up to `limit`: an estimate
    can be wrong), since finishing costs less than compiling. Both give the same rows in the same
    order, so the answer does not depend on the choice; `answered_by` names the backend that gave
    the last answer.

    After a reference answer that tried more than `build_work` candidate values, the module is
    left to be built in a detached background process (`solverspace.background`), so that the
    next call of the same space runs compiled; the answer now is not delayed or changed by it.
    `build_behind`: None follows `$SOLVERSPACE_BACKGROUND_BUILD` (on unless 0), False is off.
    `scheduled` counts the builds this object left behind.

    Quick builds: when the reference stopped and the walk is estimated at most `quick_work`
    candidate values (`ReferenceEnumerator.estimated_work`), and builds behind the answer are on,
    the module is compiled quickly (-O0, `c_build.flags`: a quarter of the compile time, C that
    runs a few times slower, which a small space does not notice) to answer now (and with the
    default budget the reference goes on only up to `quick_limit`, since the quick build costs
    less than the -O2 one), and the
    optimized module is left to the background builder; later calls run the optimized module
    once it is built, the quick one until then. Same source, so the same answers; `quick` says
    whether the last compiled answer came from a quick build. A big space, a space with orders,
    an estimate that says nothing, or builds behind turned off: the optimized module, as
    `--backend c` builds it."""

    name = "auto"

    def __init__(self, budget: int = AUTO_REFERENCE_BUDGET, limit: int | None = None, *,
                 build_behind: bool | None = None, build_work: int = AUTO_BUILD_WORK,
                 quick_work: int = AUTO_QUICK_WORK, **c_options):
        defaults = limit is None and budget == AUTO_REFERENCE_BUDGET
        if limit is None:   # the default budget goes on to the default limit; a budget given alone is firm
            limit = AUTO_REFERENCE_LIMIT if budget == AUTO_REFERENCE_BUDGET else budget
        self.budget, self.limit = budget, max(limit, budget)
        # with the defaults, the reference goes on less far when a quick build would follow it
        self.quick_limit = max(AUTO_QUICK_LIMIT, budget) if defaults else self.limit
        self._limit = self.limit
        self.build_behind, self.build_work, self.quick_work = build_behind, build_work, quick_work
        self.c_options = c_options
        self.answered_by: str | None = None
        self.quick = False
        self.scheduled = 0

    def _answer(self, plan, with_derived, by_reference, by_c, by_cpsat=None):
        """`by_reference(enumerator)` within the budget when nothing is compiled, else `by_c(backend)`
        (the quick build of a small space, see the class); `by_cpsat(backend)` where C refuses a
        space with a domain larger than the budget (`_beyond_budget`)."""
        compiled = c_backend(**self.c_options)
        self.quick = False
        self.stopped = None
        if not compiled.is_built(plan, with_derived):
            quick = self._quick_backend(compiled, plan)
            if quick is not None and quick.is_built(plan, with_derived):   # built by an earlier cold call
                self.answered_by, self.quick = "c", True
                return by_c(quick)
            self._limit = self.limit if quick is None else self.quick_limit
            enumerator = ReferenceEnumerator(plan, budget=self.budget, on_budget=self._go_on)
            try:
                answer = by_reference(enumerator)
                self.answered_by = "reference"
            except WorkBudgetExceeded:
                self.stopped = enumerator.stopped_domain
                estimate = enumerator.estimated_work()
                if quick is not None and estimate is not None and estimate <= self.quick_work:
                    self.answered_by, self.quick = "c", True
                    answer = by_c(quick)
                    self._leave_build(plan, with_derived)    # the optimized module, for the next calls
                    return answer
            else:
                if enumerator.work > self.build_work and not compiled.through_slots(plan):
                    self._leave_build(plan, with_derived)
                return answer
        self.answered_by = "c"
        try:
            return by_c(compiled)
        except _unsupported() as refusal:
            return self._beyond_budget(refusal, by_cpsat)

    def _beyond_budget(self, refusal, by_cpsat):
        """C refused after the reference stopped at its budget. Where one domain alone holds more
        values than the budget (an order of 13 items, `range(10**20)` under a constraint): CP-SAT
        when it can answer (`by_cpsat`: counts only), else a refusal naming the parameter, its
        size and what to do; otherwise C's own refusal (it points to the reference)."""
        if self.stopped is None or self.stopped[1] <= self.budget:
            raise refusal
        name, size = self.stopped
        why = [f"the C backend refuses the space ({str(refusal).splitlines()[0]})"]
        if by_cpsat is not None:
            try:
                backend = cpsat_backend()
                answer = by_cpsat(backend)
                self.answered_by = "cpsat"
                return answer
            except (_unsupported(), BackendUnavailableError) as exc:
                why.append(f"so does CP-SAT ({str(exc).splitlines()[0]})")
        if size > WALK_LIMIT:
            hint = (f"narrow the domain of {name!r}: no backend walks more than 2**63 values of one domain "
                    f"(a parameter that nothing reads or tests is counted by a multiply at any size)")
        else:
            hint = (f"--backend reference walks it in Python ({size:,} values in this loop alone: exact "
                    f"and slow), or narrow the domain of {name!r}")
        raise BeyondBudgetError(f"auto: parameter {name!r} has {size:,} values, more than the reference's "
                                f"budget of {self.budget:,} candidate values, and {'; '.join(why)}", hint=hint)

    def _refused_lazily(self, rows):
        """C's rows, a generator that raises its refusal only when iterated (see `_beyond_budget`)."""
        try:
            yield from rows
        except _unsupported() as refusal:
            self._beyond_budget(refusal, None)

    def _builds_behind(self) -> bool:
        from solverspace import background
        return self.build_behind is not False and (self.build_behind is not None or background.enabled())

    def _quick_backend(self, compiled, plan):
        """The quick-build twin of `compiled`, or None where quick builds are not taken (builds
        behind the answer off, or a space answered through its slot model: orders)."""
        if self.quick_work <= 0 or compiled.through_slots(plan) or not self._builds_behind():
            return None
        return c_backend(quick=True, **self.c_options)

    def _leave_build(self, plan, with_derived) -> None:
        """The module of this plan, built behind the answer (never raises, never waits)."""
        if not self._builds_behind():
            return
        from solverspace import background
        self.scheduled += background.schedule(plan, self.c_options, with_derived)

    def _go_on(self, work: int, fraction: float) -> int | None:
        """At the budget: the limit when `work / fraction` (the whole walk, estimated) is within it."""
        return self._limit if fraction > 0 and work / fraction <= self._limit else None

    def count(self, plan, *, strict=False, progress=None) -> Stats:
        def by_reference(enumerator):
            enumerator.strict = strict
            enumerator.count()
            return enumerator.stats
        return self._answer(plan, (), by_reference, lambda c: c.count(plan, strict=strict, progress=progress),
                            lambda cpsat: cpsat.count(plan, strict=strict, progress=progress))

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        def by_reference(enumerator):
            enumerator.strict = strict
            return list(enumerator.rows(with_derived))   # whole within the budget, then handed out
        return iter(self._answer(plan, with_derived, by_reference, lambda c: self._refused_lazily(
            c.rows(plan, strict=strict, with_derived=with_derived, progress=progress))))

    def array(self, plan, *, strict=False, with_derived=(), progress=None):
        def by_reference(enumerator):
            enumerator.strict = strict
            rows = list(enumerator.rows(with_derived))
            return rows_to_array(rows, plan.model.parameter_names + tuple(with_derived))
        return self._answer(plan, with_derived, by_reference,
                            lambda c: c.array(plan, strict=strict, with_derived=with_derived, progress=progress))

    def write(self, plan, path, fmt="csv", *, strict=False, with_derived=(), progress=None, sep=",") -> int:
        def by_reference(enumerator):
            if fmt not in ("csv", "jsonl"):  # the reference writes these two; the others go to C
                raise WorkBudgetExceeded(0)
            enumerator.strict = strict
            columns = plan.model.parameter_names + tuple(with_derived)
            return write_rows(path, columns, enumerator.rows(with_derived), fmt, sep)  # no file if stopped
        return self._answer(plan, with_derived, by_reference,
                            lambda c: c.write(plan, path, fmt, strict=strict, with_derived=with_derived,
                                              progress=progress, sep=sep))


def auto_backend(*, threads: int | None = None, optimizations=None, literal: bool = False, disable=(),
          budget: int = AUTO_REFERENCE_BUDGET, limit: int | None = None, build_behind: bool | None = None,
          build_work: int = AUTO_BUILD_WORK, quick_work: int = AUTO_QUICK_WORK) -> AutoBackend:
    return AutoBackend(budget, limit, build_behind=build_behind, build_work=build_work, quick_work=quick_work,
                       threads=threads, optimizations=optimizations, literal=literal, disable=disable)
