"""The `auto` backend: the policy that picks, per question, the reference or the compiled
enumerator (and, past the reference's budget where C refuses, CP-SAT), so that small spaces
wait for no compiler; and for a large or wide model, whose module would take long to build,
the backend estimated cheapest from the model (`Shape`, `Costs`), said with its
reason. Registered as ``"auto"`` in `solverspace.registry.backends`.
"""
from __future__ import annotations

import importlib.util
import math
import time
from solverspace.core.errors import BackendUnavailableError, SolverspaceError
from solverspace.core.orders import domain_size as exact_domain_size
from solverspace.core.records import Record
from solverspace.core.results import Stats, listing_array
from solverspace.lang import ir
from solverspace.analysis.reference import WALK_LIMIT, DomainTooLargeError, ReferenceEnumerator, WorkBudgetExceeded
from solverspace.registry.factories import c_backend, cpsat_backend


class BeyondBudgetError(BackendUnavailableError):
    """`auto` has no backend for a space: one of its domains is larger than the reference's
    budget and the C backend (and, for counts, CP-SAT) refuses the space."""


class EstimatedTooLongError(BackendUnavailableError):
    """`auto` chose by cost, and the cheapest backend that may answer is estimated at
    `AUTO_REFUSE_AFTER` CPU seconds or more: refused before anything runs, with the estimates,
    rather than a silent wait of hours (an explicit `--backend` runs it anyway)."""


class TallyBeyondBudgetError(BackendUnavailableError):
    """`auto` asked for the undefined-operation tally (or a strict walk) of a space where an
    operation may be undefined: only the literal plan's walk gives that answer the same whoever
    answers, and the reference did not finish it within auto's budget."""


_STOPPED = object()   # `AutoBackend._probe`: the reference stopped


def _unsupported():
    """The translators' refusal class (imported late: asking `auto` imports no translator)."""
    from solverspace.translators.errors import UnsupportedConstruct
    return UnsupportedConstruct


AUTO_REFERENCE_BUDGET = 40_000  # candidate values: about 0.05-0.3 s of the reference (0.14-0.9 M/s, T1 spaces)
AUTO_REFERENCE_LIMIT = 700_000  # ... and at most this many when the walk so far says the whole fits:
                                # 0.6-1.2 s of the reference, about what generating and compiling cost
AUTO_BUILD_WORK = 40_000        # a reference answer past this many candidate values leaves the module
                                # to be built in the background (solverspace/registry/background.py): below it,
                                # the reference is about as fast as a warm compiled call
AUTO_QUICK_WORK = 20_000_000    # a space compiled cold whose reference walk is estimated at most this
                                # many candidate values gets the quick (-O0) build now and the -O2 one
                                # in the background: on the T1 files (0.005-1.8 M values) -O0 compiles
                                # in 0.2 CPU-s against 0.5-0.75 and counts in 0.005-0.03 s as -O2 does;
                                # the GEMM space (estimated 1.4 G) is compiled -O2 directly
AUTO_QUICK_LIMIT = 200_000      # AUTO_REFERENCE_LIMIT where a quick build is the alternative: it costs
                                # about 0.25-0.3 CPU-s, 200,000-400,000 values of the reference


# ------------------------------------------------------------------------------ the cost model
# Before it compiles anything, `auto` estimates what each backend would cost on this space, from
# the model alone (nothing generated, compiled or walked): `Shape` reads the domain sizes, the
# constraints, the listed values and the independent groups; `Costs` turns them into CPU seconds
# with the constants below, fitted by hand on this project's 2-core machine (`python
# bench/auto_cost.py` prints what each backend then costs on the four large models). Where C's cold cost (generating and
# compiling the module) is estimated at `COST_CHOICE_AFTER` seconds or more, `auto` takes the
# cheapest backend that can answer and says which and why (`AutoBackend.reason`, and one line
# through the waits of `translators/c/build.py`: stderr on the command line); below it, the
# choice is the one before (the reference within its budget, else a quick or optimized build).
# Estimates choose, never answer: every backend gives the same count and rows.
COST_CHOICE_AFTER = 2.0       # seconds of C's estimated generate + compile: past this, choose by cost
REFERENCE_COST = (0.8e-6, 0.3e-6)   # the reference: s per candidate value, s per constraint or derived
                                    # value evaluated (0.7-1.3 us and 0.14-0.75 us measured)
CPSAT_COST = (0.6, 0.2e-3, 4e-8)    # CP-SAT: s fixed (OR-Tools, the model), s per candidate of a group's
                                    # walk, s per candidate and constraint of that group (a 3-parameter
                                    # group of 32,768 candidates and 10,000 constraints: 21 CPU-s)
C_SOURCE = (40_000, 165, 570, 195)  # bytes of generated C: fixed, per (loop depth)**2, per constraint
                                    # or derived value, per listed value (48 binary loops: 435 kB;
                                    # 2,500 constraints: 1.43 MB; 2,000 listed values: 394 kB)
C_COMPILE = (1.2e-5, 1.0e-3, 1.05e-10, 1.25e-5)  # s of gcc -O2: per byte of the loops' code; per
                                    # constraint or derived value and per such count cubed (300, 1,000,
                                    # 2,500, 10,000 constraints: 0.9, 1.45, 3.9, 115 CPU-s); per squared
                                    # length of a value list (each listed value is a statement of its
                                    # own: 2,000 values took 50 CPU-s)
C_GENERATE = (2e-4, 2e-6)           # s of generating per constraint or derived value (10,000: 2.1 CPU-s),
                                    # per listed value
C_DEPTH = 28                        # gcc's time per byte grows with the loop depth d as 1 + (d / C_DEPTH)**3
                                    # (16, 32, 48 nested loops: 0.7, 2.6, 14 CPU-s at -O2)
WARM_CHECK_VALUES = 100_000         # a model listing more values than this is estimated before its module
COST_NEVER_BUILT = 3600.0           # is looked for (the cache key writes every value out: 7 CPU-s for 8.4
                                    # million), and not looked for where C's estimate is past an hour: such
                                    # a module is not built (`--backend c` finds it, if it was)
AUTO_REFUSE_AFTER = 3600.0          # where auto chooses by cost: a backend estimated at this many CPU
                                    # seconds or more is not started (`EstimatedTooLongError`, exit 2 at
                                    # once); the estimates are rough (a factor of a few), an hour is
                                    # far past every model `bench/auto_cost.py` answers (44 s at most)
PROBE_SECONDS = 0.5                 # where the reference's cost is unknown: its probe's budget in seconds
C_RUN = 3.5e-8                      # s per candidate value of a compiled walk, -O2, one thread (-O0: 4.1e-8)


def domain_size(domain) -> int | None:
    """The number of values of a domain when it does not depend on other parameters (a value
    list: its length, duplicates included; a range of constants), else None."""
    if isinstance(domain, ir.Values):
        return len(domain.items)
    if isinstance(domain, ir.Range):
        ends = (domain.start, domain.stop, domain.step)
        if all(isinstance(e, ir.Const) and type(e.value) is int for e in ends) and domain.step.value:
            return exact_domain_size(range(*(e.value for e in ends)))   # len() stops at 2**63
    return None


def may_be_undefined(plan) -> bool:
    """Whether an operation of the model may be undefined on some candidate: a division or modulo
    whose divisor's proven interval (`solverspace.lang.bounds`) holds 0, or an order function (the
    position of an absent item). False proves that every backend's undefined tally is empty
    (`Stats.undefined` 0, `undefined_by` {}, `first_undefined` None) and that strict mode raises
    nowhere, whatever plan a backend walks; True says only that it may not be.

    >>> from solverspace import Space
    >>> may_be_undefined(Space.from_source("x = range(1, 5)\\ny = range(1, 3)\\nrequire(x // y > 1)").plan)
    False
    >>> may_be_undefined(Space.from_source("x = range(1, 5)\\ny = range(0, 3)\\nrequire(x // y > 1)").plan)
    True
    """
    model = plan.model
    trees = [p.domain for p in model.parameters if not _constants(p.domain)] + \
            [d.expr for d in model.derived] + [c.expr for c in model.constraints]
    risky = [n for tree in trees for n in ir.walk(tree)
             if isinstance(n, ir.OrderFn) or (isinstance(n, ir.BinOp) and n.op in ("//", "%", "/")
                                               and not (isinstance(n.right, ir.Const) and n.right.value != 0))]
    if any(isinstance(n, ir.OrderFn) for n in risky):
        return True
    if not risky:
        return False
    try:
        bounds = model.analysis.bounds   # SymPy: only where a divisor is not a constant
        return any(0 in bounds.expr(n.right) for n in risky)
    except SolverspaceError:             # no bound (a closure's table refused): nothing proven
        return True


def _constants(domain) -> bool:
    """A value list of constants (a T1 file's millions of values): nothing in it divides."""
    return type(domain) is ir.Values and all(type(item) is ir.Const for item in domain.items)


class Shape(Record):
    """What the cost model reads of a plan: `loops` (parameters that something reads or tests),
    `tests` (constraints and derived values), `values` (listed domain values), `walk` and
    `evaluations` (the reference's candidate values and constraint or derived-value evaluations,
    an upper bound that ignores pruning; None where a domain's size depends on another
    parameter), `groups` (per independent group of parameters that share no constraint, derived
    value or domain: its candidate values, an upper bound or None, and its tests)."""

    __match_args__ = ("loops", "tests", "values", "squares", "walk", "evaluations", "groups")

    def __init__(self, loops: int, tests: int, values: int, squares: int, walk: float | None,
                 evaluations: float | None, groups: tuple[tuple[float | None, int], ...]):
        for name, value in zip(self.__match_args__, (loops, tests, values, squares, walk, evaluations, groups)):
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, plan) -> "Shape":
        model = plan.model
        parent = {name: name for name in (*model.parameter_names, *(d.name for d in model.derived))}

        def root(name):
            while parent[name] != name:
                parent[name] = parent[parent[name]]
                name = parent[name]
            return name

        read: set[str] = set()
        anchors = []   # one name per constraint and derived value: its group
        for p in model.parameters:
            if not isinstance(p.domain, ir.Values):   # a value list reads nothing (and may be long)
                for name in ir.refs(p.domain) & parent.keys():
                    parent[root(name)] = root(p.name)
                    read.add(name)
        for item in (*model.derived, *model.constraints):
            names = sorted(ir.refs(item.expr) & parent.keys())
            anchor = item.name if item.name in parent else (names[0] if names else None)
            for name in names:
                parent[root(name)] = root(anchor)
            read.update(names)
            if anchor is not None:
                anchors.append(anchor)
        sizes = {p.name: domain_size(p.domain) for p in model.parameters}
        members: dict[str, list[str]] = {}
        for name in model.parameter_names:
            members.setdefault(root(name), []).append(name)
        tests: dict[str, int] = {}
        for anchor in anchors:
            tests[root(anchor)] = tests.get(root(anchor), 0) + 1
        groups = []
        for key, names in members.items():
            if len(names) == 1 and not tests.get(key) and names[0] not in read:
                continue   # a free parameter: every backend multiplies by its size
            known = all(sizes[n] is not None for n in names)
            groups.append((float(math.prod(sizes[n] for n in names)) if known else None, tests.get(key, 0)))
        walk, evaluations, product = 0.0, 0.0, 1.0
        for level in plan.levels:
            name = level.parameter.name
            if sizes[name] is None:
                walk = evaluations = None
                break
            if name not in read and not level.constraints and not level.derived:
                continue   # the reference multiplies by a loop nothing reads or tests
            product *= sizes[name]
            walk += product
            evaluations += product * (len(level.constraints) + len(level.derived))
        lists = [len(p.domain.items) for p in model.parameters if isinstance(p.domain, ir.Values)]
        loops = sum(1 for name in model.parameter_names if name in read or tests.get(root(name)))
        return cls(loops, len(anchors), sum(lists), sum(n * n for n in lists), walk, evaluations, tuple(groups))


def _words(seconds: float) -> str:
    """An estimate of CPU time in words: `0.4 s`, `3 min`, `2 h`, `forever` (past a year)."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h" if seconds < 3.2e7 else "more than a year"


class Costs(Record):
    """Estimated CPU seconds of one cold answer per backend (`Shape`, the constants above): None
    where the model says nothing (a domain's size depends on another parameter)."""

    __match_args__ = ("shape", "reference", "c", "cpsat", "c_source")

    def __init__(self, shape: Shape, reference: float | None, c: float, cpsat: float | None, c_source: float):
        for name, value in zip(self.__match_args__, (shape, reference, c, cpsat, c_source)):
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, plan) -> "Costs":
        shape = Shape.of(plan)
        reference = None if shape.walk is None else \
            REFERENCE_COST[0] * shape.walk + REFERENCE_COST[1] * shape.evaluations
        loops = C_SOURCE[0] + C_SOURCE[1] * shape.loops ** 2
        source = loops + C_SOURCE[2] * shape.tests + C_SOURCE[3] * shape.values
        from solverspace.translators.c.build import COMPILE_COST     # imported by every compiled answer anyway
        compile_seconds = COMPILE_COST[False][0] + C_COMPILE[0] * loops * (1 + (shape.loops / C_DEPTH) ** 3) + \
            C_COMPILE[1] * shape.tests + C_COMPILE[2] * shape.tests ** 3 + C_COMPILE[3] * shape.squares
        generate = C_GENERATE[0] * shape.tests + C_GENERATE[1] * shape.values
        walk = sum(size for size, _ in shape.groups) if all(size is not None for size, _ in shape.groups) else 0.0
        cpsat = None
        if all(size is not None for size, _ in shape.groups):
            cpsat = CPSAT_COST[0] + sum(size * (CPSAT_COST[1] + CPSAT_COST[2] * tests) for size, tests in shape.groups)
        return cls(shape, reference, generate + compile_seconds + C_RUN * walk, cpsat, source)

    def ranked(self, counting: bool) -> list[tuple[str, float | None]]:
        """The backends that may answer, cheapest first (an unknown estimate last)."""
        known = [("reference", self.reference), ("c", self.c)] + ([("cpsat", self.cpsat)] if counting else [])
        return sorted(known, key=lambda item: (item[1] is None, item[1] or 0.0))

    def why(self, name: str, counting: bool) -> str:
        """The reason for choosing `name`, in one line: its estimate against the others'."""
        said = {"reference": lambda s: f"the reference {_words(s)} ({self.shape.walk:.3g} candidate values)",
                "c": lambda s: f"C {_words(s)} (generating and compiling about {self.c_source / 1e6:.2g} MB of C)",
                "cpsat": lambda s: f"CP-SAT {_words(s)} ({len(self.shape.groups)} independent group"
                                   f"{'' if len(self.shape.groups) == 1 else 's'})"}
        others = [said[other](seconds) if seconds is not None else f"the {other} cost unknown"
                  for other, seconds in self.ranked(counting) if other != name]
        mine = dict(self.ranked(counting))[name]
        return f"estimated {said[name](mine) if mine is not None else name + ', cost unknown'}; " + \
            ", ".join(others)


class AutoBackend:
    """The default: no compiler wait for small spaces. The compiled enumerator when its module is
    already built (nothing to generate or compile); otherwise the reference, stopped after
    `budget` candidate values (`WorkBudgetExceeded`), and the compiled enumerator when the space
    needs more. At the budget, the share of the walk done so far estimates the whole walk: when
    that is within `limit` candidate values, the reference goes on (up to `limit`: an estimate
    can be wrong), since finishing costs less than compiling. Both give the same rows in the same
    order, so the answer does not depend on the choice; `answered_by` names the backend that gave
    the last answer.

    After a reference answer that tried more than `AUTO_BUILD_WORK` candidate values and took
    long enough that the build pays (`background.pays`), the module is left to be built in a
    detached background process (`solverspace.registry.background`), so that the next call of the same
    space runs compiled; the answer now is not delayed or changed by it. `build_work` given: past
    that many candidate values, paying or not. `build_behind`: None follows
    `$SOLVERSPACE_BACKGROUND_BUILD` (on unless 0; `always`: paying or not), True builds behind
    every answer past the threshold, paying or not, False is off.
    `scheduled` counts the builds this object left behind.

    Costs (`by_cost`, on by default): before compiling anything cold, `Costs` estimates from the
    model what C (generating and compiling), CP-SAT (counts only) and the reference would cost;
    where C's estimate is `COST_CHOICE_AFTER` seconds or more, the cheapest backend that answers
    runs, said beforehand in one line with the estimates (`reason`; the waits' listeners of
    `translators/c/build.py`, so stderr on the command line). Otherwise the choice below.

    Quick builds: when the reference stopped and the walk is estimated at most `quick_work`
    candidate values (`ReferenceEnumerator.estimated_work`), and builds behind the answer are on,
    the module is compiled quickly (-O0, `c.build.flags`: a quarter of the compile time, C that
    runs a few times slower, which a small space does not notice) to answer now (and with the
    default budget the reference goes on only up to `quick_limit`, since the quick build costs
    less than the -O2 one), and the
    optimized module is left to the background builder where it pays (`background.pays`: the walk
    is long enough that later calls gain; `build_behind=True`: always); later calls run the
    optimized module once it is built, the quick one until then. Same source, so the same answers; `quick` says
    whether the last compiled answer came from a quick build. A big space, a space with orders,
    an estimate that says nothing, or builds behind turned off: the optimized module, as
    `--backend c` builds it.

    Exact tallies (`exact_tally=True`, what `Space.stats()` asks for) and strict mode (always):
    the count is the same whoever answers, but the undefined-operation tally (`Stats.undefined`,
    `undefined_by`, `first_undefined`) and strict mode's first error follow the plan a backend
    walks (C's optimized plan visits fewer candidates, and C does not attribute per rule). Where
    `may_be_undefined(plan)` proves no operation can be undefined, every tally is empty and the
    choice above stands; otherwise the literal plan's walk answers: the reference within `budget`
    (and up to `limit` where the walk so far says the whole fits), past it C with every
    optimization off where its tally is 0 (then every field is the reference's), and otherwise
    `TallyBeyondBudgetError` says what answers instead."""

    name = "auto"

    def __init__(self, budget: int = AUTO_REFERENCE_BUDGET, limit: int | None = None, *,
                 build_behind: bool | None = None, build_work: int | None = None,
                 quick_work: int = AUTO_QUICK_WORK, by_cost: bool = True, exact_tally: bool = False, **c_options):
        defaults = limit is None and budget == AUTO_REFERENCE_BUDGET
        if limit is None:   # the default budget goes on to the default limit; a budget given alone is firm
            limit = AUTO_REFERENCE_LIMIT if budget == AUTO_REFERENCE_BUDGET else budget
        self.budget, self.limit = budget, max(limit, budget)
        # with the defaults, the reference goes on less far when a quick build would follow it
        self.quick_limit = max(AUTO_QUICK_LIMIT, budget) if defaults else self.limit
        self._limit = self.limit
        self.build_behind, self.build_work, self.quick_work = build_behind, build_work, quick_work
        self.c_options = c_options
        self.by_cost = by_cost
        self.exact_tally = exact_tally
        self.answered_by: str | None = None
        self.reason: str | None = None   # why the last answer came from `answered_by`, where costs chose
        self.costs: Costs | None = None
        self.quick = False
        self.scheduled = 0

    def _answer(self, plan, with_derived, by_reference, by_c, by_cpsat=None, strict=False):
        """`by_reference(enumerator)` within the budget when nothing is compiled, else `by_c(backend)`
        (the quick build of a small space, see the class); `by_cpsat(backend)` where C refuses a
        space with a domain larger than the budget (`_beyond_budget`). Strict mode, as an exact
        tally, is the literal plan's walk wherever an operation may be undefined: its first error
        is the literal plan's, whoever answers (C's optimized plan may never meet it)."""
        compiled = c_backend(**self.c_options)
        self.quick = False
        self.stopped = None
        self.reason = self.costs = None
        if (self.exact_tally or strict) and may_be_undefined(plan):
            return self._literal_walk(plan, by_reference, by_c)
        if self.by_cost and sum(len(p.domain.items) for p in plan.model.parameters
                                if isinstance(p.domain, ir.Values)) > WARM_CHECK_VALUES:
            self.costs = Costs.of(plan)   # first: looking for a built module costs seconds here
        unbuilt = self.costs is not None and self.costs.c >= COST_NEVER_BUILT
        if unbuilt or not compiled.is_built(plan, with_derived):
            slots = compiled.through_slots(plan)   # once: it reads every node of the model
            quick = self._quick_backend(compiled, plan, slots)
            if quick is not None and not unbuilt and quick.is_built(plan, with_derived):   # an earlier cold call's
                self.answered_by, self.quick = "c", True
                return by_c(quick)
            if self.by_cost and not slots:
                self.costs = self.costs or Costs.of(plan)
                if self.costs.c >= COST_CHOICE_AFTER:
                    return self._by_cost(plan, compiled, by_reference, by_c, by_cpsat)
            self._limit = self.limit if quick is None else self.quick_limit
            enumerator = ReferenceEnumerator(plan, budget=self.budget, on_budget=self._go_on)
            start = time.process_time()
            try:
                answer = by_reference(enumerator)
                self.answered_by = "reference"
            except WorkBudgetExceeded:
                self.stopped = enumerator.stopped_domain
                estimate = enumerator.estimated_work()
                if quick is not None and estimate is not None and estimate <= self.quick_work:
                    self.answered_by, self.quick = "c", True
                    answer = by_c(quick)
                    if self._forced() or self._pays(estimate, quick=True):   # the optimized module, for later
                        self._leave_build(plan, with_derived)
                    return answer
            else:
                past = enumerator.work > (AUTO_BUILD_WORK if self.build_work is None else self.build_work)
                if past and not slots and \
                        (self._forced() or self.build_work is not None or self._pays(time.process_time() - start)):
                    self._leave_build(plan, with_derived)
                return answer
        self.answered_by = "c"
        try:
            return by_c(compiled)
        except _unsupported() as refusal:
            return self._beyond_budget(refusal, by_cpsat)

    def _literal_walk(self, plan, by_reference, by_c):
        """The literal plan's answer (`exact_tally` on a space where an operation may be undefined):
        the reference's within the budget (and up to the limit where the walk so far says the
        whole fits); past it, C's walk of the literal plan, whose tally is the reference's total
        (validation compares the two): where that is 0 the whole tally is empty and the answer is
        the reference's, field for field. Where C's literal walk finds undefined operations (it
        attributes none per rule), refuses the space or answers a slot plan (orders), a refusal
        that says what answers instead."""
        self._limit = self.limit
        enumerator = ReferenceEnumerator(plan, budget=self.budget, on_budget=self._go_on)
        try:
            answer = by_reference(enumerator)
            self.answered_by = "reference"
            self.reason = "an operation may be undefined: the literal plan's walk"
            return answer
        except WorkBudgetExceeded:
            pass
        why = f"the reference did not finish it within auto's budget of {self.limit:,} candidate values"
        literal = c_backend(**{**self.c_options, "literal": True})
        if literal.through_slots(plan):
            raise self._no_tally(plan, why + ", and C answers a space with orders on its slot plan")
        try:
            answer = by_c(literal)
        except _unsupported() as refusal:
            raise self._no_tally(plan, f"{why}, and the C backend refuses the space "
                                       f"({str(refusal).splitlines()[0]})") from None
        if isinstance(answer, Stats) and answer.undefined:
            raise self._no_tally(plan, f"{why}; C's walk of the literal plan counts {answer.count:,} valid "
                                       f"configurations and {answer.undefined:,} candidates lost to undefined "
                                       f"operations, but attributes none to its rule")
        self.answered_by = "c"
        self.reason = "an operation may be undefined: the literal plan's walk, compiled"
        return answer

    def _no_tally(self, plan, why: str) -> TallyBeyondBudgetError:
        return TallyBeyondBudgetError(
            f"auto: an operation of {plan.model.source} may be undefined (a division or modulo whose divisor can "
            f"be 0, or an order function), so its undefined-operation tally and strict mode are the literal plan's "
            f"walk, and {why}",
            hint="space.count() and stats(exact_tally=False) answer the count at once, C's tally being that of "
                 "its optimized plan (a total, not per rule); stats('reference') walks the whole space in Python "
                 "(exact, slow); stats('cpsat') tallies per rule by counting")

    def _by_cost(self, plan, compiled, by_reference, by_c, by_cpsat):
        """The cheapest backend by `self.costs` that answers (C's cold cost is past
        `COST_CHOICE_AFTER`): said, with the reason, before it runs. A backend that refuses the
        space (or is not installed) passes to the next. Where the reference's cost is unknown (a
        domain depends on another parameter), the reference first walks a probe, and goes on
        while its estimate of the whole walk costs less than the cheapest other backend."""
        costs, counting = self.costs, by_cpsat is not None
        ranked = costs.ranked(counting)
        largest = max(((size, p.name) for p in plan.model.parameters
                       if (size := domain_size(p.domain)) is not None), default=None)
        if largest is not None and largest[0] > self.budget:   # as if the reference had stopped there
            self.stopped = (largest[1], largest[0])             # (C's lazy refusal names it: _beyond_budget)
        refusals: list[str] = []
        if costs.reference is None:
            answer = self._probe(plan, by_reference, min(s for n, s in ranked if s is not None), refusals)
            if answer is not _STOPPED:
                return answer
            ranked = [(n, s) for n, s in ranked if n != "reference"] + [("reference", None)]
        for index, (name, seconds) in enumerate(ranked):
            if name == "cpsat" and importlib.util.find_spec("ortools") is None:
                refusals.append("CP-SAT is not installed (pip install ortools)")
                continue
            if name == "reference" and costs.reference is None:
                break   # stopped by the probe: it would cost more than the others, which refused
            if seconds is not None and seconds >= AUTO_REFUSE_AFTER:
                if self.stopped is not None:   # one domain past the budget: name it, the sharper reason
                    raise self._too_large(*self.stopped, [*refusals, "every backend is estimated at an hour or "
                                                          f"more ({self.costs.why(name, counting)})"])
                raise self._too_long(plan, name, counting, refusals)
            self.reason = "; ".join([costs.why(name, counting), *refusals])
            self._say(plan, name)
            try:
                if name == "reference":
                    answer = by_reference(ReferenceEnumerator(plan))
                elif name == "cpsat":
                    answer = by_cpsat(cpsat_backend())
                else:
                    answer = by_c(compiled)
            except (_unsupported(), BackendUnavailableError, WorkBudgetExceeded, DomainTooLargeError) as exc:
                refusals.append(f"{name} could not: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
                if index == len(ranked) - 1:
                    if self.stopped is not None:
                        raise self._too_large(*self.stopped, refusals) from exc
                    raise
                continue
            self.answered_by = name
            return answer
        raise BackendUnavailableError(f"auto: no backend answers {plan.model.source}: {'; '.join(refusals)}")

    def _too_long(self, plan, name: str, counting: bool, refusals: list[str]) -> EstimatedTooLongError:
        """The refusal when the cheapest backend left (`name`) is estimated past `AUTO_REFUSE_AFTER`."""
        from solverspace.translators.c.build import space_name
        flags = {"reference": "--backend reference", "c": "--backend c", "cpsat": "--backend cpsat"}
        return EstimatedTooLongError(
            f"auto: {space_name(str(plan.model.source))} is estimated at an hour or more with every backend, "
            f"so nothing was started: {'; '.join([self.costs.why(name, counting), *refusals])}",
            hint=f"{flags[name]} runs the cheapest estimate anyway (estimates are rough: a factor of a few); "
                 f"or make the space smaller (narrower domains, or --set to settings that give fewer values)")

    def _probe(self, plan, by_reference, others: float, refusals: list):
        """The reference's answer when its walk turns out cheaper than `others` seconds, else
        `_STOPPED` (the walk stopped; its estimate is added to `refusals`)."""
        shape = self.costs.shape
        per_candidate = REFERENCE_COST[0] + REFERENCE_COST[1] * shape.tests
        start = time.process_time()

        def go_on(work: int, fraction: float) -> int | None:
            if fraction <= 0:
                return None
            whole = work / fraction
            seconds = (time.process_time() - start) / work * whole
            if seconds > min(others, AUTO_REFUSE_AFTER):
                return None
            if enumerator.budget == budget:   # the first time: said (the walk may take a while)
                self.reason = (f"its walk estimated at about {whole:.3g} candidate values ({_words(seconds)}) "
                               f"against {_words(others)} for the cheapest other backend")
                self._say(plan, "reference")
            return int(2 * whole) + 1

        budget = max(1_000, min(self.budget, int(PROBE_SECONDS / per_candidate)))
        enumerator = ReferenceEnumerator(plan, budget=budget, on_budget=go_on)
        try:
            answer = by_reference(enumerator)
        except WorkBudgetExceeded:
            estimate = enumerator.estimated_work()
            spent = time.process_time() - start
            refusals.append(f"the reference stopped after {enumerator.work:,} candidate values ({spent:.1f} s)"
                            + (f" of about {estimate:.3g}" if estimate else ""))
            return _STOPPED
        self.answered_by = "reference"
        self.reason = f"the reference walked the whole space within the cost of the others (estimated {_words(others)})"
        return answer

    def _say(self, plan, name: str) -> None:
        """One line, before a backend chosen by cost runs: which, and why (the listeners of
        `translators/c/build.py`'s waits: stderr on the command line, unless --quiet)."""
        from solverspace.translators.c.build import announce, space_name
        label = {"c": "the C backend", "cpsat": "CP-SAT", "reference": "the reference"}[name]
        announce(f"auto: {space_name(str(plan.model.source))} goes to {label}: {self.reason}")

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
        raise self._too_large(name, size, why)

    def _too_large(self, name: str, size: int, why: list[str]) -> BeyondBudgetError:
        """No backend answers a space with a domain past the reference's budget: which, and why."""
        if size > WALK_LIMIT:
            hint = (f"narrow the domain of {name!r}: no backend walks more than 2**63 values of one domain "
                    f"(a parameter that nothing reads or tests is counted by a multiply at any size)")
        else:
            hint = (f"--backend reference walks it in Python ({size:,} values in this loop alone: exact "
                    f"and slow), or narrow the domain of {name!r}")
        return BeyondBudgetError(f"auto: parameter {name!r} has {size:,} values, more than the reference's "
                                 f"budget of {self.budget:,} candidate values, and {'; '.join(why)}", hint=hint)

    def _refused_lazily(self, rows):
        """C's rows, a generator that raises its refusal only when iterated (see `_beyond_budget`)."""
        try:
            yield from rows
        except _unsupported() as refusal:
            self._beyond_budget(refusal, None)

    def _builds_behind(self) -> bool:
        from solverspace.registry import background
        return self.build_behind is not False and (self.build_behind is not None or background.enabled())

    def _quick_backend(self, compiled, plan, slots: bool):
        """The quick-build twin of `compiled`, or None where quick builds are not taken (builds
        behind the answer off, or a space answered through its slot model (`slots`): orders)."""
        if self.quick_work <= 0 or slots or not self._builds_behind():
            return None
        return c_backend(quick=True, **self.c_options)

    @staticmethod
    def _pays(seconds: float, quick: bool = False) -> bool:
        """Whether a build behind the answer pays (`background.pays`): behind a reference answer,
        each later call saves its `seconds`; behind a quick one (`seconds`: the estimated walk),
        what -O2 saves on that walk."""
        from solverspace.registry import background
        return background.pays(seconds * background.O0_SAVING if quick else seconds)

    def _forced(self) -> bool:
        """Builds behind every answer past the threshold, paying or not (`build_behind=True`, or
        `SOLVERSPACE_BACKGROUND_BUILD=always`)."""
        from solverspace.registry import background
        return self.build_behind is True or background.always()

    def _leave_build(self, plan, with_derived) -> None:
        """The module of this plan, built behind the answer (never raises, never waits)."""
        if not self._builds_behind():
            return
        from solverspace.registry import background
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
                            lambda cpsat: cpsat.count(plan, strict=strict, progress=progress), strict=strict)

    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        def by_reference(enumerator):
            enumerator.strict = strict
            return list(enumerator.rows(with_derived))   # whole within the budget, then handed out
        return iter(self._answer(plan, with_derived, by_reference, lambda c: self._refused_lazily(
            c.rows(plan, strict=strict, with_derived=with_derived, progress=progress)), strict=strict))

    def array(self, plan, *, strict=False, with_derived=(), progress=None):
        def by_reference(enumerator):
            enumerator.strict = strict
            rows = list(enumerator.rows(with_derived))
            return listing_array(rows, plan, plan.model.parameter_names + tuple(with_derived))
        return self._answer(plan, with_derived, by_reference,
                            lambda c: c.array(plan, strict=strict, with_derived=with_derived, progress=progress),
                            strict=strict)

    def write(self, plan, path, fmt="csv", *, strict=False, with_derived=(), progress=None, sep=",") -> int:
        def by_reference(enumerator):
            if fmt not in ("csv", "jsonl"):  # the reference writes these two; the others go to C
                raise WorkBudgetExceeded(0)
            enumerator.strict = strict
            from solverspace.core.formats import write_rows   # only where a file is written
            columns = plan.model.parameter_names + tuple(with_derived)
            return write_rows(path, columns, enumerator.rows(with_derived), fmt, sep)  # no file if stopped
        return self._answer(plan, with_derived, by_reference,
                            lambda c: c.write(plan, path, fmt, strict=strict, with_derived=with_derived,
                                              progress=progress, sep=sep), strict=strict)


def auto_backend(*, threads: int | None = None, optimizations=None, literal: bool = False, disable=(),
          budget: int = AUTO_REFERENCE_BUDGET, limit: int | None = None, build_behind: bool | None = None,
          build_work: int | None = None, quick_work: int = AUTO_QUICK_WORK, exact_tally: bool = False) -> AutoBackend:
    return AutoBackend(budget, limit, build_behind=build_behind, build_work=build_work, quick_work=quick_work,
                       exact_tally=exact_tally, threads=threads, optimizations=optimizations, literal=literal, disable=disable)
