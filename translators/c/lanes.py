"""One counting walk for many settings at once: the *lanes* of a sweep (`solverspace sweep`).

A sweep over the values of a setting often generates, for every value, the same C program up to
some `INT64_C` literals (`translators.c.shapes`). Counting each program on its own repeats the
whole walk V times. Here the V programs are run as one: the lane walk is the counting nest of the
first point's plan, and every statement is written once per lane (from that lane's own plan and
printer) and compared. A statement whose V texts are equal and that reads no lane-varying value is
run once for all lanes; one whose texts differ only in literals (or that reads a lane-varying
value) is run once per alive lane, its differing literals read from a runtime table (`LK(j)`,
`ss_lane_set`), lane-varying derived values kept in per-lane arrays (`lv_NAME[lane__]`).

Each iteration of the walk carries a bitmask of the lanes still alive there (at most 64 lanes per
pass). A rejection or an undefined operation clears a lane's bit, exactly where that lane's own
program would have gone on to the next value (`continue`); an early `break` of a lane clears its
bit for the rest of the loop (the loop ends when no lane is left); a loop whose length differs per
lane (a stop tightened by a lane-varying constraint) runs to the longest and each lane leaves it at
its own length. The leaf adds its multiplier to every alive lane's count; undefined operations are
tallied per lane. So lane l visits exactly the candidates its own program visits, in the same
order, and gets the same count and the same undefined tally (the one exception is shared with the
per-point walk itself: a memoised independent group's undefined operations are tallied when the
group is walked, not on memo hits, which depend on which keys the walk has seen). A loop whose
next loop solves `v * w == e` visits only the divisors of `e`, as in the per-point walks
(`LoopNest.divisor_loop`), where that is sound for every lane (`LaneWalk.divisor`).

What the lanes cannot do is refused while generating (`NotLaneable`, with the reason), and the
sweep counts those points one by one: plans whose structure differs (loop order, breaks, hoisted
parameters, independent groups, closure tables, categorical codes, which derived values and rules
are computed and tested where: a setting that switches a rule on or off), statements whose texts differ
in more than literals, a lane-varying domain other than a range, a lane-varying solved level or
hoisted parameter, a lane-varying statement inside an independent group (the group's memoised
count is shared by all lanes), orders. At run time, a lane-varying range whose start or step
differs between lanes, a range step of 0 and a count that passes 63 bits end the pass with an
error code, and the sweep counts those points one by one (which reports the step error, or counts
wide).
"""
from __future__ import annotations

import hashlib
import os
import re
import time

from solverspace.lang import ir
from solverspace.core.errors import SolverspaceError
from solverspace.core.records import MutableRecord

from .build import LANES_LEVEL, build, read_entry, write_entry
from .codegen import CGenerator
from .expr import C_HELPERS, c_name
from .nest import LoopNest, divisors_declaration
from .rational import rational_pair
from .runtime import CANCEL_C, MEMO_BITS, MEMO_C
from .shapes import split_literals

MAX_LANES = 64
FORMAT = 2   # 2: a program's `top`
ERROR_LANES_DIVERGE = 3   # a lane-varying range whose start or step differs between lanes
ERROR_TOP_ONLY = 4        # a top program asked for more than its prefixes (never, see `run_top`)

LANE_CDEF = """
typedef struct { int64_t count[64]; int64_t und[64]; int64_t full; int64_t nprefix; int64_t und_any;
                 int32_t error; int32_t undef_item; uint64_t all; } ss_lstats;
void ss_lane_set(const int64_t *k, int nlanes);
int64_t ss_lane_prefixes(int s, int64_t *out, uint64_t *masks, int64_t cap, ss_lstats *st, uint64_t all);
int ss_lane_count(int s, const int64_t *prefixes, const uint64_t *masks, int64_t nunits, ss_lstats *total,
                  int nthreads, volatile int *cancel, uint64_t all);
int ss_lane_max_prefix_depth(void);
int ss_row_size(void);
void ss_set_cancel(volatile int *cancel);
"""


class NotLaneable(SolverspaceError):
    """These points cannot share one walk (the reason says why); count them one by one."""


class LaneProgram(MutableRecord):
    """A lane walk's C `source`; per lane, the values of its lane literals LK(0), LK(1), ...
    (`literals`); `top` > 0: a top program (`run_top`), whose loops stop at that depth."""

    __match_args__ = ("source", "literals", "max_prefix_depth", "items", "top")

    def __init__(self, source: str, literals: list[list[int]], max_prefix_depth: int, items: list[str], top: int = 0):
        self.source, self.literals, self.max_prefix_depth, self.items, self.top = \
            source, literals, max_prefix_depth, items, top


class LaneResult(MutableRecord):
    """Per lane, its count and its undefined tally."""

    __match_args__ = ("counts", "undefined")

    def __init__(self, counts: list[int], undefined: list[int]):
        self.counts, self.undefined = counts, undefined


LANES_BEGIN = "for (uint64_t lr__ = ({mask}); lr__; lr__ &= lr__ - 1) {{ int lane__ = __builtin_ctzll(lr__); " \
              "const uint64_t lbit__ = 1ULL << lane__; (void)lbit__;"


def lanes(mask: str) -> str:
    """The head of a loop over the lanes set in `mask` (closed with a brace)."""
    return LANES_BEGIN.format(mask=mask)


class LaneWalk:
    """The lane walk of the V plans' counting nests (see the module)."""

    def __init__(self, plans, options):
        if len(plans) > MAX_LANES:
            raise NotLaneable(f"more than {MAX_LANES} lanes")
        from solverspace.lang.order_domains import order_nodes   # constructs the lane walk does not write,
        if any(order_nodes(p.model) for p in plans):              # as closures below
            raise NotLaneable("the space has orders")
        if any(isinstance(n, ir.Closure) for p in plans for tree in p.model.trees for n in ir.walk(tree)):
            raise NotLaneable("the space has a closure iterator")
        self.gens = [CGenerator(p, options) for p in plans]
        self.items_before = [len(g.items) for g in self.gens]   # a second walk numbers its items afresh
        self.varying: dict[int, set[str]] = {}   # level (-1: before the loops) -> what varies by lane there
        g0 = self.gens[0]
        for g in self.gens[1:]:
            if (list(g.plan.order) != list(g0.plan.order) or g.count_order != g0.count_order
                    or list(g.hoisted) != list(g0.hoisted)
                    or g.max_prefix_depth != g0.max_prefix_depth or g.codes != g0.codes
                    or g.rational != g0.rational or g.checked != g0.checked):
                raise NotLaneable("the points' plans differ (loop order, hoisted parameters or codes)")
        self.nests = [LoopNest(g.plan, g.options, g.printer, g.domains, g.item, levels=g.levels, hoisted=g.hoisted,
                               max_prefix_depth=g.max_prefix_depth, count_words=1, checked=g.checked, columns=[])
                      for g in self.gens]
        self.model = g0.model
        self.order = list(g0.count_order)
        self.literal_index: dict[tuple, int] = {}
        self.lane_vars: set[str] = set()
        self.by_name = {level.parameter.name: i for i, level in enumerate(g0.plan.levels)}
        for name in self.order:
            breaks = {tuple(sorted(c.name for c in g.levels[self.by_name[name]].breaks)) for g in self.gens}
            solved = {g.levels[self.by_name[name]].solve is None for g in self.gens}
            if len(breaks) > 1 or len(solved) > 1:
                raise NotLaneable(f"the points' plans differ at {name}")
        self.check_same_rules()

    def check_same_rules(self) -> None:
        """NotLaneable unless every lane computes the same derived values and tests the same rules,
        at the same places in the same order: the walk writes the first lane's slots (`slots`), so
        a rule or derived value that a setting adds to or removes from some points (one under an
        `if` on a setting) must not share it. (A top program's base point is a lane too: its
        module counts the subtrees below the prefixes with its own rules.)"""
        first = self.slots(self.gens[0].plan)
        names0 = {at: ([d.name for d in ds], [c.name for c in cs]) for at, (ds, cs) in first.items()}
        for g in self.gens[1:]:
            names = {at: ([d.name for d in ds], [c.name for c in cs]) for at, (ds, cs) in self.slots(g.plan).items()}
            if names != names0:
                only = sorted(set(_all_names(names)) ^ set(_all_names(names0)))
                raise NotLaneable("the points' rules or derived values differ"
                                  + (f" ({', '.join(only)} in some points only)" if only else " in where they are tested"))

    def slots(self, plan) -> dict[int, tuple[list, list]]:
        """Each loop's derived values and rules in `plan` (by the lane walk's loop order; -1: before
        the loops), each at the innermost loop of the parameters it reads."""
        position = {p: i for i, p in enumerate(self.order)}
        slots: dict[int, tuple[list, list]] = {i: ([], []) for i in range(-1, len(self.order))}
        inputs = plan.analysis.dag.parameter_inputs
        for d in [*plan.prelude_derived, *(d for lv in plan.levels for d in lv.derived)]:
            slots[max((position[q] for q in inputs[d.name]), default=-1)][0].append(d)
        for c in [*plan.prelude_constraints, *(c for lv in plan.levels for c in lv.constraints)]:
            slots[max((position[q] for q in inputs[c.name]), default=-1)][1].append(c)
        return slots

    # ------------------------------------------------------------------------------ texts
    def item(self, name: str) -> int:
        """One entry in every lane's item list (their numbers stay equal)."""
        numbers = {g.item(name) for g in self.gens}
        return numbers.pop()

    def unify(self, texts: list[str]) -> tuple[str, bool]:
        """The lanes' texts of one statement as one text (literals that differ as LK(j)), and
        whether the statement varies by lane (differing literals, or a lane-varying value read)."""
        shapes = [split_literals(t) for t in texts]
        parts, first = shapes[0]
        if any(p != parts or len(v) != len(first) for p, v in shapes[1:]):
            raise NotLaneable("a statement differs in more than integer constants between the points")
        out, varying = [], False
        for position, text in enumerate(parts):
            out.append(text)
            if position < len(first):
                values = tuple(v[position] for _, v in shapes)
                if len(set(values)) > 1:
                    varying = True
                    j = self.literal_index.setdefault(values, len(self.literal_index))
                    out.append(f"LK({j})")
                else:
                    out.append(f"INT64_C({values[0]})")
        text = "".join(out)
        if self.reads_lane_vars(text):
            varying = True
        return text, varying

    def reads_lane_vars(self, text: str) -> bool:
        return any(re.search(rf"\b{re.escape(c_name(n))}\b", text) for n in self.lane_vars)

    def per_lane(self, text: str, mask: str) -> str:
        """A text run for one lane: lane-varying values from their arrays, undefined tallied for it."""
        for name in self.lane_vars:
            text = re.sub(rf"\b{re.escape(c_name(name))}\b", f"lv_{name}[lane__]", text)
        return text.replace("st->undefined++", "ss_und(st, lbit__)")

    @staticmethod
    def shared(text: str, mask: str) -> str:
        return text.replace("st->undefined++", f"ss_und(st, {mask})")

    # ------------------------------------------------------------------------------ statements
    def vary(self, name: str, at: int, what: str, shared_only: bool) -> None:
        """Record that slot `at` holds a `what` ("derived", "test") that differs between lanes;
        inside an independent group (`shared_only`) that cannot be laned."""
        if shared_only:
            raise NotLaneable(f"{name} varies by lane inside an independent group")
        self.varying.setdefault(at, set()).add(what)

    def statements(self, slot, breaks, ind, mask, loop_mask, on_reject, guard, shared_only, at: int) -> list[str]:
        """Slot `at`'s derived values and tests (`at`: its loop, -1 before the loops)."""
        derived, constraints = slot
        lines = []
        for d in derived:
            item = self.item(f"{d.name} = {_source(d.expr)}")
            texts = []
            for g in self.gens:   # each lane's own definition, printed by its own printer
                own = g.model.derived_value[d.name]
                if d.name in g.rational:
                    num, den = rational_pair(own.expr, g.model, g.rational)
                    texts.append(f"(void)({g.printer.print(num, own)}); (void)({g.printer.print(den, own)});")
                else:
                    texts.append(f"{c_name(d.name)} = {g.printer.print(own.expr, own)};")
            text, varying = self.unify(texts)
            if not varying:
                lines.append(f"{ind}{text}")
                lines.append(f"{ind}{_undefined_shared(mask, item, on_reject)}")
                continue
            self.vary(d.name, at, "derived", shared_only)
            if d.name not in self.gens[0].rational:
                self.lane_vars.add(d.name)
            lines.append(f"{ind}{lanes(mask)} {self.per_lane(text, mask)}")
            lines.append(f"{ind}    {_undefined_lane(item, mask)} }}")
            lines.append(f"{ind}if (!{mask}) {on_reject}")
        ordered = [c for c in constraints if c.name in breaks] + [c for c in constraints if c.name not in breaks]
        tests = []
        for c in ordered:
            item = self.item(f"{c.name}: {_source(c.expr)}")
            owns = [g.model.constraint[c.name] for g in self.gens]
            if len({own.rejects for own in owns}) > 1:
                raise NotLaneable(f"the points' constraint {c.name} differs")
            texts = [g.printer.print(own.expr if own.rejects else ir.Not(own.expr), own) for g, own in zip(self.gens, owns)]
            text, varying = self.unify(texts)
            is_break = c.name in breaks
            if not varying:
                action = f"{{ {loop_mask} &= ~{mask}; if (!{loop_mask}) break; continue; }}" if is_break else on_reject
                tests.append(f"{ind}{{ int r = ({text}) != 0;")
                tests.append(f"{ind}  {_undefined_shared(mask, item, on_reject)}")
                tests.append(f"{ind}  if (r) {action} }}")
                continue
            self.vary(c.name, at, "test", shared_only)
            leave = f" {loop_mask} &= ~lbit__;" if is_break else ""
            tests.append(f"{ind}{lanes(mask)} int r = ({self.per_lane(text, mask)}) != 0;")
            tests.append(f"{ind}    {_undefined_lane(item, mask)}")
            tests.append(f"{ind}    else if (r) {{ {mask} &= ~lbit__;{leave} }} }}")
            after = f"{{ if (!{loop_mask}) break; continue; }}" if is_break else on_reject
            tests.append(f"{ind}if (!{mask}) {after}")
        guarded = [f"{ind}if ({guard}) {{", *("    " + t for t in tests), f"{ind}}}"] if tests and guard else tests
        return lines + guarded

    # ------------------------------------------------------------------------------ loops
    def level(self, i, slots, buffers, ind, entry, shared_only, following=None,
              quotient=None) -> tuple[list[str], str, tuple[str, str] | None]:
        """The head of loop i (up to its body's statements); the name of its alive mask; where
        loop i is a divisor loop over a range (`divisor`), the quotient (flag, value) that the
        next loop's solve reads (`DomainCode.setup`). `following`: the next loop of the nest;
        `quotient`: the one loop i's solve reads."""
        name = self.order[i]
        index = self.by_name[name]
        parameter = self.model.parameter[name]
        g0 = self.gens[0]
        lp = g0.levels[index]
        solve = lp.solve if "solve" in g0.options else None
        buffered = not isinstance(parameter.domain, ir.Range)
        if buffered:
            buffers.append((i, max(g.domains.buffer_size(g.model.parameter[name]) for g in self.gens)))
        texts = []
        item_state = [len(g.items) for g in self.gens]
        for g in self.gens:
            glp = g.levels[index]
            texts.append("\n".join(g.domains.setup(i, g.model.parameter[name], glp.solve if "solve" in g.options else None,
                                                   "", tighten=glp.tighten if "tighten" in g.options else (),
                                                   quotient=quotient)))
        if len({len(g.items) - s for g, s in zip(self.gens, item_state)}) > 1:
            raise NotLaneable(f"the points' domains of {name} differ")
        text, varying = self.unify(texts)
        mask, loop_mask = f"a_{i}", f"lm_{i}"
        lines = [f"{ind}/* level {i}: {name} */", f"{ind}{{",
                 f"{ind}    int64_t n_{i} = 0, start_{i} = 0, step_{i} = 1; (void)start_{i}; (void)step_{i};",
                 f"{ind}    uint64_t {loop_mask} = {entry};"]
        setup = [f"{ind}        {line}" for line in text.split("\n")]
        if not varying:
            lines.append(f"{ind}    if (plen > {i}) {{ n_{i} = 1; }} else {{")
            lines += [self.shared(x, loop_mask) for x in setup]
            lines.append(f"{ind}    }}")
        else:
            if shared_only or buffered or solve:
                raise NotLaneable(f"the domain of {name} varies by lane" +
                                  (" inside an independent group" if shared_only else " and is not a plain range"))
            self.varying.setdefault(i, set()).add("domain")
            lines += [f"{ind}    int64_t ln_{i}[64];",
                      f"{ind}    if (plen > {i}) {{ n_{i} = 1; {lanes(loop_mask)} ln_{i}[lane__] = 1; }} }} else {{",
                      f"{ind}        int64_t s0_ = 0, p0_ = 0, nmax_ = 0; int first_ = 1;",
                      f"{ind}        {lanes(loop_mask)} n_{i} = 0;"]
            lines += [self.per_lane(x, loop_mask) for x in setup]
            lines += [f"{ind}        ln_{i}[lane__] = n_{i}; if (n_{i} > nmax_) nmax_ = n_{i};",
                      f"{ind}        if (n_{i} > 0) {{ if (first_) {{ s0_ = start_{i}; p0_ = step_{i}; first_ = 0; }}",
                      f"{ind}            else if (s0_ != start_{i} || p0_ != step_{i}) {{ st->error = {ERROR_LANES_DIVERGE}; goto done; }} }} }}",
                      f"{ind}        n_{i} = nmax_; start_{i} = s0_; step_{i} = p0_;",
                      f"{ind}    }}"]
        body = self.statements(slots[i], {c.name for c in lp.breaks}, ind + "        ", mask, loop_mask, "continue;",
                               f"plen <= {i}", shared_only, i)
        e = None if varying else self.divisor(i, following, body)
        if e is None:
            lines += self.nests[0].cancel_checks(i, name, ind)
        else:
            if not buffered:
                buffers.append((("divisors", i), 0))
            lines += self.nests[0].divisor_checks(i, name, ind, buffered, e)
        lines.append(f"{ind}        uint64_t {mask} = {loop_mask};")
        if varying:
            lines.append(f"{ind}        {lanes(loop_mask)} if (k_{i} >= ln_{i}[lane__]) {{ {mask} &= ~lbit__; {loop_mask} &= ~lbit__; }} }}")
            lines.append(f"{ind}        if (!{loop_mask}) break;")
        value = f"buf_{i}[k_{i}]" if buffered or solve else f"start_{i} + k_{i} * step_{i}"
        lines.append(f"{ind}        {c_name(name)} = (plen > {i}) ? prefix[{i}] : {value};")
        lines += body
        if i < g0.max_prefix_depth and not shared_only:
            lines.append(f"{ind}        if (stop == {i + 1}) {{")
            lines.append(f"{ind}            if (st->nprefix < cap) {{ " +
                         " ".join(f"prefix_out[st->nprefix * {i + 1} + {j}] = {c_name(self.order[j])};" for j in range(i + 1))
                         + f" mask_out[st->nprefix] = {mask}; }}")
            lines.append(f"{ind}            st->nprefix++; continue;")
            lines.append(f"{ind}        }}")
        return lines, mask, None if e is None or buffered else (f"dz_{i}", f"ds_{i}.q")

    def divisor(self, i, following, body: list[str]) -> str | None:
        """The C of `e` where loop i may visit only the divisors of `e` for every lane
        (`LoopNest.divisor_loop`), else None: every lane's own nest must find that it
        applies, with the same text of `e`, reading no lane-varying value, and the loop's body
        (`body`: its statements as the lane walk runs them) must hold no possible undefined
        operation. The caller makes sure loop i's domain does not vary by lane."""
        texts = [n.divisor_loop(i, following, self.order, body, False) for n in self.nests]
        if any(t is None for t in texts) or len(set(texts)) > 1 or self.reads_lane_vars(texts[0]):
            return None
        return texts[0]

    def nest(self, indices, slots, buffers, entry, leaf, shared_only) -> list[str]:
        lines, closes, mask, quotient = [], [], entry, None
        for depth, i in enumerate(indices):
            ind = "    " * depth
            following = indices[depth + 1] if depth + 1 < len(indices) else None
            head, mask, quotient = self.level(i, slots, buffers, ind, mask, shared_only, following, quotient)
            lines += head
            closes.append(ind)
        ind = "    " * len(indices)
        lines += [f"{ind}    {x}" for x in leaf(mask)]
        for ind in reversed(closes):
            lines += [f"{ind}    }}", f"{ind}}}"]
        return lines

    def same_text(self, make) -> str:
        """A block every lane must write identically (no lane-varying part)."""
        text, varying = self.unify([make(n) for n in self.nests])
        if varying:
            raise NotLaneable("a hoisted parameter's domain varies by lane")
        return text

    def walk(self, top: int = 0) -> str:
        """The lane walk's C function; `top` > 0: only its first `top` loops (a top program: it is
        only ever asked for the prefixes at depth `top`, see `run_top`)."""
        for g, before in zip(self.gens, self.items_before):
            del g.items[before:]
        self.literal_index.clear()
        self.lane_vars.clear()
        self.varying.clear()
        g0, nest0 = self.gens[0], self.nests[0]
        order = self.order
        slots = self.slots(g0.plan)
        splits = {repr(n.component_split(order)) for n in self.nests}
        if len(splits) > 1:
            raise NotLaneable("the points' independent groups differ")
        split = nest0.component_split(order)
        buffers: list[tuple[int, int]] = []
        body = ["uint64_t a_p = mask0;"]
        body += self.statements(slots[-1], set(), "", "a_p", "a_p", "return;", "plen == 0", False, -1)
        outer = list(range(len(order))) if split is None else list(range(split[0]))
        self.outer_loops = len(outer)
        memo_widths: list[int] = []

        def leaf(mask):
            lines = self.same_text(lambda n: "\n".join(n.hoisted_multiplier("", into="prod_"))).split("\n")
            if split is not None:
                keys = nest0.component_keys(order, split[1], slots)
                for number, (component, key) in enumerate(zip(split[1], keys)):
                    inner = self.nest(component, slots, buffers, mask, lambda _m: ["cnt_++;"], True)
                    names = ", ".join(c_name(k) for k in key) or "0"
                    lines += [f"if (prod_) {{ int64_t cnt_ = 0, key_[{max(len(key), 1)}] = {{{names}}};",
                              f"    int64_t *hit_ = memo ? ss_memo_find(&memo[{number}], key_) : NULL;",
                              "    if (hit_) cnt_ = *hit_; else {"]
                    lines += ["        " + x for x in inner]
                    lines += [f"        if (memo) ss_memo_put(&memo[{number}], key_, cnt_); }}",
                              "    if (__builtin_mul_overflow(prod_, cnt_, &prod_)) { st->error = 2; goto done; } }"]
                    memo_widths.append(max(len(key), 1))
            lines.append(f"ss_ladd(st, {mask}, prod_); }}")
            return [self.shared(x, mask) for x in lines]

        if top:
            body += self.nest(outer[:top], slots, buffers, "a_p", lambda _m: [f"st->error = {ERROR_TOP_ONLY}; goto done;"],
                              False)
        else:
            body += self.nest(outer, slots, buffers, "a_p", leaf, False)
        decls = [f"int64_t {c_name(n)} = 0;" for n in (*self.model.parameter_names, *(d.name for d in self.model.derived))
                 if n not in g0.rational]
        decls += [f"int64_t lv_{n}[64];" for n in sorted(self.lane_vars)]
        lines = ["static void lane_walk(const int64_t *prefix, int plen, int stop, uint64_t mask0, int64_t *prefix_out,",
                 "                      uint64_t *mask_out, int64_t cap, ss_lstats *st, ss_memo *memo) {",
                 "    int uflag = 0; int *u = &uflag; (void)u; (void)prefix_out; (void)mask_out; (void)cap;",
                 "    uint64_t tick_ = 0; (void)tick_;", "    " + " ".join(decls)]
        for i, size in buffers:
            if isinstance(i, tuple):   # a divisor loop's kept divisors (`LoopNest.divisor_checks`)
                lines.append("    " + divisors_declaration(i[1]))
            else:
                lines.append(f"    int64_t *buf_{i} = (int64_t *)malloc(sizeof(int64_t) * {size});")
        for i in nest0.solved_levels(order):
            if i not in dict(buffers):
                lines.append(f"    int64_t buf_{i}[1] = {{0}};")
        lines += ["    " + x for x in body]
        lines.append("    done: ;")
        lines += [f"    free(buf_{i});" for i, _ in buffers if not isinstance(i, tuple)]
        lines.append("}")
        self.memo_widths = memo_widths
        return "\n".join(lines).replace("return; /*abort*/", "goto done;")

    def top_depth(self) -> int:
        """After a whole walk (`walk()`): the depth of a top program for these lanes, whose last
        lane is the base point, or NotLaneable. Below it nothing varies by lane (no domain, test or
        derived value differs from the base point's), so the base point's own module counts every
        prefix's subtree for every lane (`run_top`); above it only the loops' domains and tests may
        vary: a derived value computed there, and a test before the loops, would be the base
        point's in its module's walk (which tests a loop's rules only where the prefix does not
        fix the loop, and the rules before the loops in every unit)."""
        if any("derived" in kinds for kinds in self.varying.values()):
            name = next(at for at, kinds in self.varying.items() if "derived" in kinds)
            raise NotLaneable(f"a derived value varies by lane at level {name}")
        if -1 in self.varying:   # the count walk tests these in every work unit, its prefix fixed or not
            raise NotLaneable("a rule before the loops varies by lane")
        top = max(1, 1 + max(self.varying, default=-1))
        if top > min(self.gens[0].max_prefix_depth, self.outer_loops):
            raise NotLaneable(f"the lanes vary below the work units' depth ({top} loops)")
        return top

    def generate(self, top: int = 0) -> LaneProgram:
        walk = self.walk(top)
        tables = {"\n".join(g.domains.tables) for g in self.gens}
        if len(tables) > 1:
            raise NotLaneable("the points' closure tables differ")
        nlit = len(self.literal_index)
        literals = [[0] * nlit for _ in self.gens]
        for values, j in self.literal_index.items():
            for lane, v in enumerate(values):
                literals[lane][j] = v
        source = "\n".join(["#include <stdint.h>", "#include <stdlib.h>", "#include <string.h>", "#include <omp.h>",
                            C_HELPERS,
                            "static int ss_member(int64_t x, const int64_t *buf, int64_t n);",
                            MEMO_C, CANCEL_C, LANE_CDEF.split("void ss_lane_set")[0],
                            f"static int64_t ss_lk[64 * {max(nlit, 1)}];",
                            f"#define LK(j) ss_lk[lane__ * {max(nlit, 1)} + (j)]",
                            LANE_HELPERS, tables.pop(), walk,
                            lane_drivers(self.gens[0].max_prefix_depth, self.memo_widths, nlit)])
        return LaneProgram(source + "\n", literals, self.gens[0].max_prefix_depth, list(self.gens[0].items), top)


def _all_names(slots: dict) -> list[str]:
    return [name for derived, constraints in slots.values() for name in (*derived, *constraints)]


def _source(expr) -> str:
    from solverspace.lang.printing import to_source
    return to_source(expr)


LANE_HELPERS = r"""
static int ss_member(int64_t x, const int64_t *buf, int64_t n) {
    for (int64_t j = 0; j < n; j++) if (buf[j] == x) return 1;
    return 0;
}
/* an undefined operation for every lane in m; whether one was tallied before (for the first item) */
static int ss_und(ss_lstats *st, uint64_t m) {
    int64_t before = st->und_any++;
    for (; m; m &= m - 1) st->und[__builtin_ctzll(m)]++;
    return before != 0;
}
/* the leaf: v configurations for every lane in m (all lanes: one sum, spread at the end) */
static inline void ss_ladd(ss_lstats *st, uint64_t m, int64_t v) {
    if (m == st->all) { if (__builtin_add_overflow(st->full, v, &st->full)) st->error = 2; return; }
    for (; m; m &= m - 1) { int l = __builtin_ctzll(m); if (__builtin_add_overflow(st->count[l], v, &st->count[l])) st->error = 2; }
}
"""


def lane_drivers(max_prefix_depth: int, memo_widths: list[int], nlit: int) -> str:
    return r"""
void ss_lane_set(const int64_t *k, int nlanes) { memcpy(ss_lk, k, sizeof(int64_t) * NLIT * nlanes); }
int ss_lane_max_prefix_depth(void) { return MAX_PREFIX_DEPTH; }
int ss_row_size(void) { return 0; }   /* c.build's load check calls it: a lane walk writes no rows */
int64_t ss_lane_prefixes(int s, int64_t *out, uint64_t *masks, int64_t cap, ss_lstats *st, uint64_t all) {
    memset(st, 0, sizeof *st); st->all = all;
    lane_walk(NULL, 0, s, all, out, masks, cap, st, NULL);
    return st->nprefix;
}
static const int memo_widths[] = {MEMO_WIDTHS};
#define MEMO_COUNT MEMO_N
#define MEMO_SIZE (1u << MEMO_BITS_)
static void lane_memo(ss_memo *m, int width) {
    m->width = width;
    m->keys = (int64_t *)malloc(sizeof(int64_t) * MEMO_SIZE * width);
    m->vals = (int64_t *)malloc(sizeof(int64_t) * MEMO_SIZE);
    m->used = (unsigned char *)calloc(MEMO_SIZE, 1);
}
int ss_lane_count(int s, const int64_t *prefixes, const uint64_t *masks, int64_t nunits, ss_lstats *total,
                  int nthreads, volatile int *cancel, uint64_t all) {
    ss_cancel_flag = cancel;
    memset(total, 0, sizeof *total); total->all = all;
    #pragma omp parallel num_threads(nthreads)
    {
        ss_memo memo[MEMO_COUNT > 0 ? MEMO_COUNT : 1];   /* one per independent group, per thread */
        for (int c = 0; c < MEMO_COUNT; c++) lane_memo(&memo[c], memo_widths[c]);
        ss_lstats acc; memset(&acc, 0, sizeof acc); acc.all = all;
        #pragma omp for schedule(dynamic, 1)
        for (int64_t unit = 0; unit < nunits; unit++) {
            if (*cancel || acc.error) continue;
            lane_walk(s ? prefixes + unit * s : NULL, s, -1, s ? masks[unit] : all, NULL, NULL, 0, &acc,
                      MEMO_COUNT > 0 ? memo : NULL);
        }
        #pragma omp critical
        {
            for (int l = 0; l < 64; l++) {
                int64_t add = acc.count[l];
                if (((all >> l) & 1) && __builtin_add_overflow(add, acc.full, &add)) total->error = 2;
                if (__builtin_add_overflow(total->count[l], add, &total->count[l])) total->error = 2;
                total->und[l] += acc.und[l];
            }
            if (acc.und_any && !total->und_any) total->undef_item = acc.undef_item;
            total->und_any += acc.und_any;
            if (acc.error && !total->error) total->error = acc.error;
        }
        for (int c = 0; c < MEMO_COUNT; c++) { free(memo[c].keys); free(memo[c].vals); free(memo[c].used); }
    }
    ss_cancel_flag = NULL;
    return *cancel ? 1 : 0;
}
""".replace("MAX_PREFIX_DEPTH", str(max_prefix_depth)).replace("NLIT", str(max(nlit, 1))).replace(
        "MEMO_WIDTHS", ", ".join(map(str, memo_widths)) or "0").replace("MEMO_N", str(len(memo_widths))).replace(
        "MEMO_BITS_", str(MEMO_BITS))


# ---------------------------------------------------------------------------------- remembered
def program_shape(plan, options) -> str | None:
    """The shape key of the plan's generated program (its text between `INT64_C` literals), from
    the plan cache or generated now (and remembered); None when the C backend refuses the plan."""
    from .codegen import CDEF
    from .plan_cache import generation_key, load_generated, store_generated
    from .shapes import shape_key
    from solverspace.lang.order_domains import order_nodes
    if order_nodes(plan.model):   # the C backend runs the slot model's program, not this plan's
        return None
    key = generation_key(plan, options, (), False, False)
    generated = load_generated(key) if key else None
    if generated is None:
        try:
            generated = CGenerator(plan, options).generate()
        except SolverspaceError:   # a refusal: the per-point count reports it
            return None
        if key:
            store_generated(key, generated)
    return shape_key(split_literals(generated.source)[0], CDEF)


def lanes_key(generation_keys: list[str]) -> str | None:
    """The key of a pass over exactly these points' programs (their plan-cache keys), or None."""
    if any(k is None for k in generation_keys):
        return None
    return hashlib.sha256(("lanes\0%d\0" % FORMAT + "\0".join(generation_keys)).encode()).hexdigest()


def load_program(key: str):
    """(LaneProgram or None, the reason remembered for points that cannot share a walk), or None when absent."""
    try:
        entry = read_entry("lanes", key, FORMAT)
        if entry is None:
            return None
        if entry.get("never") is not None:
            return None, str(entry["never"])
        return LaneProgram(entry["source"], [[int(v) for v in lane] for lane in entry["literals"]],
                           int(entry["max_prefix_depth"]), list(entry["items"]), int(entry["top"])), None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def store_program(key: str, program: LaneProgram | None, never: str | None = None) -> None:
    entry = {}
    if program is None:
        entry["never"] = never
    else:
        entry.update(source=program.source, literals=program.literals, max_prefix_depth=program.max_prefix_depth,
                     items=program.items, top=program.top)
    write_entry("lanes", key, FORMAT, entry)


# ---------------------------------------------------------------------------------- running
MIN_UNITS = 4096
UNITS_PER_THREAD = 512


class LaneError(SolverspaceError):
    """The pass stopped (see ERROR_*): count these points one by one."""


def _call(fn, cancel):
    """Run `fn()` on the C thread; Ctrl-C sets the walk's cancel flag and waits for it to stop."""
    from .backend import C_THREAD
    job = C_THREAD.submit(fn, ())
    try:
        while not job.done.is_set():
            time.sleep(0.0005)
    except KeyboardInterrupt:
        cancel[0] = 1
        while not job.done.is_set():
            time.sleep(0.01)
        raise
    if job.error is not None:
        raise job.error
    return job.value


def _lane_table(program: LaneProgram) -> list[int]:
    return [v for lane in program.literals for v in (lane or [0])] or [0]


def run_program(program: LaneProgram, threads: int | None = None) -> LaneResult:
    """Count every lane of a lane program in one pass (parallel over work units, like a count)."""
    module = build(program.source, LANE_CDEF, quick=LANES_LEVEL)   # -O1: see `build.flags`
    lib, ffi = module.lib, module.ffi
    nlanes = len(program.literals)
    threads = threads or os.cpu_count() or 1
    all_mask = (1 << nlanes) - 1
    cancel = ffi.new("int[1]")

    def go():
        lib.ss_lane_set(ffi.new("int64_t[]", _lane_table(program)), nlanes)
        st = ffi.new("ss_lstats *")
        target = max(MIN_UNITS, UNITS_PER_THREAD * threads)
        depth, n = 0, 1
        for s in range(1, program.max_prefix_depth + 1):
            n = lib.ss_lane_prefixes(s, ffi.NULL, ffi.NULL, 0, st, all_mask)
            if st.error:
                return st.error, None, None
            depth = s
            if n >= target:
                break
        prefixes = ffi.new("int64_t[]", max(n, 1) * max(depth, 1))
        masks = ffi.new("uint64_t[]", max(n, 1))
        und_prefix = [0] * 64
        if depth:
            lib.ss_lane_prefixes(depth, prefixes, masks, n, st, all_mask)
            if st.error:
                return st.error, None, None
            und_prefix = list(st.und)
        total = ffi.new("ss_lstats *")
        lib.ss_lane_count(depth, prefixes, masks, n if depth else 1, total, threads, cancel, all_mask)
        if total.error:
            return total.error, None, None
        return 0, list(total.count), [a + b for a, b in zip(total.und, und_prefix)]

    error, counts, undefined = _call(go, cancel)
    if error:
        raise LaneError(f"the one-pass walk stopped (error {error})")
    return LaneResult(counts[:nlanes], undefined[:nlanes])


def top_program(plans, base_plan, options) -> LaneProgram:
    """The top program of these points over the base point's (its last lane; see `run_top`), or
    NotLaneable with the reason."""
    if len(plans) >= MAX_LANES:
        raise NotLaneable(f"more than {MAX_LANES - 1} lanes beside the base point")
    walk = LaneWalk([*plans, base_plan], options)
    walk.walk()   # the whole walk: where the points differ
    return walk.generate(walk.top_depth())


MAX_TOP_UNITS = 1 << 20   # prefixes a top program may hand to the base module (8 bytes per loop each)
MEMO_LOOKUP = "ss_cmemo_find(&memo["   # in a count program that memoises an independent group (`LoopNest.split_leaf`)


def run_top(program: LaneProgram, base) -> LaneResult | None:
    """Count the lanes of a top program (`LaneWalk.top_depth`), all but its last lane (the base
    point), with the base point's compiled module `base` (a `CEnumerator`, already built): the
    top program walks the loops above `program.top` once for all lanes and writes each prefix
    alive in some lane, with the lanes it is alive in (and each lane's undefined operations up
    there); `base` counts each prefix's subtree once, in parallel, as the work units of its own
    count; each lane adds the subtrees of its prefixes. None where that could differ from the
    lanes' own counts or is too big: more than `MAX_TOP_UNITS` prefixes, or an undefined
    operation below the prefixes of a module that memoises independent groups (a memo hit
    skips the tally, so a lane's tally would depend on the other lanes' prefixes)."""
    from .backend import Units
    from solverspace.core.results import Stats
    module = build(program.source, LANE_CDEF, quick=True)   # -O0: a few loops, walked once (the subtrees are base's)
    lib, ffi = module.lib, module.ffi
    nlanes, top = len(program.literals), program.top
    all_mask = (1 << (nlanes - 1)) - 1   # the base lane is there for its texts only: it is not walked
    cancel = ffi.new("int[1]")

    def go():
        lib.ss_lane_set(ffi.new("int64_t[]", _lane_table(program)), nlanes)
        lib.ss_set_cancel(cancel)
        try:
            st = ffi.new("ss_lstats *")
            n = lib.ss_lane_prefixes(top, ffi.NULL, ffi.NULL, 0, st, all_mask)
            if st.error or n > MAX_TOP_UNITS or cancel[0]:
                return st.error or cancel[0], n, None, None, None
            prefixes = ffi.new("int64_t[]", max(n, 1) * top)
            masks = ffi.new("uint64_t[]", max(n, 1))
            lib.ss_lane_prefixes(top, prefixes, masks, n, st, all_mask)
            return st.error or cancel[0], n, prefixes, masks, list(st.und)
        finally:
            lib.ss_set_cancel(ffi.NULL)

    error, n, prefixes, masks, undefined = _call(go, cancel)
    if error:
        raise LaneError(f"the one-pass walk stopped (error {error})")
    if n > MAX_TOP_UNITS:
        return None
    counts = [0] * 64
    if n:
        buffer = base.ffi.new("int64_t[]", n * top)
        base.ffi.memmove(buffer, ffi.buffer(prefixes, n * top * 8), n * top * 8)
        units = base.with_units(Units(top, n, buffer, base.ffi.buffer(buffer), Stats(undefined=0))).count_units()
        if any(units.unit_undefined) and MEMO_LOOKUP in base.generated.source:
            return None
        by_mask: dict[int, list[int]] = {}
        for mask, count, und in zip(ffi.unpack(masks, n), units.unit_counts, units.unit_undefined):
            sums = by_mask.setdefault(mask, [0, 0])
            sums[0] += count
            sums[1] += und
        for mask, (count, und) in by_mask.items():
            while mask:
                lane = (mask & -mask).bit_length() - 1
                counts[lane] += count
                undefined[lane] += und
                mask &= mask - 1
    return LaneResult(counts[:nlanes - 1], undefined[:nlanes - 1])


def _undefined_shared(mask: str, item: int, action: str) -> str:
    """After a statement run once for every alive lane: an undefined operation in it is tallied
    for those lanes (the first place noted), then `action`."""
    return f"if (uflag) {{ uflag = 0; if (!ss_und(st, {mask})) st->undef_item = {item}; {action} }}"


def _undefined_lane(item: int, mask: str) -> str:
    """After a statement run for one lane (`lbit__`): an undefined operation is tallied for that
    lane and takes it out of `mask`."""
    return f"if (uflag) {{ uflag = 0; if (!ss_und(st, lbit__)) st->undef_item = {item}; {mask} &= ~lbit__; }}"
