"""Validity of many configurations in one C call, and the walks of the neighbour queries.

The Python check (`solverspace.analysis.config_check.ConfigChecker`) is the reference; this is
the same decision compiled from the same plan with the C enumerator's own emitters (domains from
`translators.c.domains`, derived values and constraints from `translators.c.nest`, expressions
from `translators.c.expr`), so the semantics are those of every C answer:

- `ss_eval` decides one configuration: the prelude, then each loop of the plan's order: the
  domain at that point (an undefined domain has no values), the value's membership, the derived
  values and constraints placed there (an undefined operation rejects), stopping at the first
  rejection, as the reference does (so a `range` step of 0 met before any rejection is the same
  error). It can start at any loop from a saved state (the parameters and derived values of a
  valid configuration): whatever is placed before loop k reads only parameters bound before it.
- `ss_check_rows`: many full configurations, one flag each.
- `ss_check_changes`: a valid configuration and, per parameter, candidate values (its value list):
  which single-parameter changes are valid (every other parameter pinned), each evaluated from
  its parameter's loop on. This is the Hamming query.
- `ss_walk`: every valid configuration whose value-list indices lie in a box (per parameter a
  window `lo..hi`), the plan's loops over each window's values with each loop's constraints
  pruning; with an L1 budget around a centre (`budget`), and optionally keeping only those at
  the smallest distance found, the budget tightening as closer ones are found (`closest`). The
  centre itself is never reported.
- `ss_mark_units`: per parameter, the value-list indices that some valid configuration takes
  (what Kernel Tuner's `adjacent` reads), by one parallel walk of the space in the counting
  order: the parameters nothing depends on (`hoist`) are not looped over, their whole domain is
  marked at each leaf where every one of them has a value.

Values go to C as the enumerator holds them (categorical strings as their codes, booleans as
0/1); value lists are passed at each call (int64 codes, concatenated, with offsets). Refused by
construct (`UnsupportedConstruct`, the caller then uses the Python reference): spaces with
order-valued parameters, anything the C enumerator refuses, a value-list value C cannot hold.
"""
from __future__ import annotations

import numbers

from solverspace.lang import ir
from solverspace.lang.kinds import STR
from solverspace.core.errors import SolverspaceError

from .backend import call_c
from .build import space_name, waiting
from .codegen import CGenerator
from .expr import C_HELPERS, c_name
from .nest import LoopNest
from .optimize import Options
from .plan_cache import generation_key, load_search, store_search
from .runtime import (
    CANCEL_C, CANCEL_EVERY, DOMAIN_LOOKUPS_C, ERROR_STEP_ZERO, MEMO_BITS, MEMO_C)
from .shapes import build_shaped
from ..errors import UnsupportedConstruct
from ..order_slots import refuse_orders

__all__ = ["CDEF_CHECK", "CheckGenerator", "CompiledChecker", "UNITS_PER_THREAD"]

FORMAT = 1               # of the remembered generated fields
UNITS_PER_THREAD = 16    # work units of the marking walk per thread (dynamic scheduling evens them out)
DENSE_SPAN = 1 << 22     # a parameter's codes spanning at most this many integers are looked up in a table
SHORT_STEPS = 1 << 20    # loop steps a walk may take from the calling thread before it moves to the C thread
ERROR_WALK_LONG = 3      # st->error of a walk that gave up after its steps (run again on the C thread)

CDEF_CHECK = """
typedef struct { int64_t count; int64_t undefined; int32_t error; int32_t undef_item; } ss_stats;
int ss_check_rows(const int64_t *rows, int64_t n, uint8_t *out, ss_stats *st);
int ss_check_changes(const int64_t *base, const int64_t *cands, const int64_t *offsets, uint8_t *out, ss_stats *st);
int64_t ss_walk(const int64_t *vals, const int64_t *voff, const int64_t *lo, const int64_t *hi,
                const int64_t *centre, int64_t budget, int closest, int32_t *out, int64_t cap, int64_t *best,
                ss_stats *st, volatile int *cancel, int64_t max_steps);
int64_t ss_mark_prefixes(int s, int64_t *out, int64_t cap, ss_stats *st);
int ss_mark_units(int s, const int64_t *prefixes, int64_t nunits, const int64_t *lut, const int64_t *lut_off,
                  const int64_t *lut_lo, const int64_t *lut_n, const int64_t *sorted, const int64_t *sorted_ix,
                  const int64_t *sorted_off, uint8_t *marks, int64_t nmarks, const int64_t *moff,
                  ss_stats *stats, int nthreads, volatile int *cancel, int64_t *done);
int ss_max_prefix_depth(void);
int ss_row_size(void);
"""


class CheckGenerator:
    """The C source of one plan's compiled check and walks."""

    def __init__(self, plan):
        refuse_orders(plan, "C", "check configurations of")
        self.plan, self.model = plan, plan.model
        base = CGenerator(plan, Options())     # the enumerator's printer, domains, levels and hoisting
        self.base = base
        self.names = list(self.model.parameter_names)
        self.column = {name: j for j, name in enumerate(self.names)}
        rational = plan.analysis.rational
        self.state = [*self.names, *(d.name for d in self.model.derived if d.name not in rational)]
        self.literal = LoopNest(plan, Options.literal(), base.printer, base.domains, base.item,
                                levels=base.levels, hoisted=(), max_prefix_depth=0, count_words=1, checked=False,
                                columns=[])

    # ------------------------------------------------------------------------------ pieces
    def domain(self, i: int, parameter, ind: str) -> list[str]:
        """Set n_i (and start_i/step_i, or buf_i) for loop i's domain, no optimization."""
        return self.base.domains.setup(i, parameter, None, ind)

    def member(self, i: int, parameter) -> str:
        """C: `c_` is among loop i's domain values (n_i 0 where the domain is undefined or empty)."""
        return f"(n_{i} > 0 && {self.base.domains.membership(i, parameter.domain)})"

    def buffered(self) -> list[tuple[int, int]]:
        """(loop, buffer size) for the loops whose domain is not a plain range."""
        return [(i, self.base.domains.buffer_size(level.parameter)) for i, level in enumerate(self.plan.levels)
                if not isinstance(level.parameter.domain, ir.Range)]

    def eval_function(self) -> str:
        """`ss_eval(S, from, save, st, scratch)`: 1 valid, 0 not, -1 an error (st->error); the state S
        (parameters then derived values, `self.state`) holds the configuration and, below loop
        `from`, what a valid configuration computed there; `save` writes the state back."""
        order = list(self.plan.order)
        slots = self.literal.slots(order)
        levels = self.plan.levels
        lines = ["static int ss_eval(int64_t *S, int from, int save, ss_stats *st, int64_t *scratch) {",
                 "    int uflag = 0; int *u = &uflag; (void)u; (void)scratch;",
                 "    " + " ".join(f"int64_t {c_name(n)} = S[{k}];" for k, n in enumerate(self.state))]
        offset = 0
        for i, size in self.buffered():
            lines.append(f"    int64_t *buf_{i} = scratch + {offset};")
            offset += size
        self.scratch_size = max(offset, 1)
        lines.append("    " + " ".join(f"int64_t n_{i} = 0, start_{i} = 0, step_{i} = 1; (void)start_{i}; (void)step_{i};"
                                     for i in range(len(levels))))
        lines.append("    switch (from) { " + " ".join(f"case {i}: goto L{i};" for i in range(1, len(levels)))
                     + " default: break; }")
        lines += self.literal.derived_and_constraints(slots[-1], set(), "    ", on_reject="return 0;")
        for i, level in enumerate(levels):
            parameter = level.parameter
            lines.append(f"  L{i}: ; /* {parameter.name} */")
            lines += self.domain(i, parameter, "    ")
            lines.append(f"    {{ int64_t c_ = {c_name(parameter.name)}; if (!{self.member(i, parameter)}) return 0; }}")
            lines += self.literal.derived_and_constraints(slots[i], set(), "    ", on_reject="return 0;")
        lines.append("    if (save) { " + " ".join(f"S[{k}] = {c_name(n)};" for k, n in enumerate(self.state)) + " }")
        lines.append("    return 1;")
        lines.append("}")
        return "\n".join(lines).replace("return; /*abort*/", "return -1;")

    def walk_function(self) -> str:
        """`walk_box`: the plan's loops over each parameter's window of value-list indices."""
        order = list(self.plan.order)
        slots = self.literal.slots(order)
        levels = self.plan.levels
        decls = [" ".join(f"int64_t {c_name(n)} = 0;" for n in self.state)]
        lines = ["static void walk_box(const int64_t *vals, const int64_t *voff, const int64_t *lo, const int64_t *hi,",
                 "                     const int64_t *centre, int closest, int32_t *out, int64_t cap, int64_t *best,",
                 "                     ss_stats *st, int64_t *scratch, int64_t max_steps) {",
                 "    int uflag = 0; int *u = &uflag; (void)u; uint64_t tick_ = 0; int64_t spent_ = 0;",
                 f"    int64_t ix_[{max(len(self.names), 1)}]; int64_t dist_ = 0; (void)dist_;",
                 "    " + " ".join(decls)]
        offset = 0
        for i, size in self.buffered():
            lines.append(f"    int64_t *buf_{i} = scratch + {offset};")
            offset += size
        lines += self.literal.derived_and_constraints(slots[-1], set(), "    ", on_reject="return;")
        closes = []
        for i, level in enumerate(levels):
            parameter = level.parameter
            col = self.column[parameter.name]
            ind = "    " * (i + 1)
            previous = f"d_{i - 1}" if i else "0"
            lines += [f"{ind}/* loop {i}: {parameter.name} */",
                      f"{ind}{{ int64_t n_{i} = 0, start_{i} = 0, step_{i} = 1; (void)start_{i}; (void)step_{i};"]
            lines += self.domain(i, parameter, ind + "  ")
            lines += [f"{ind}  int64_t a_{i} = lo[{col}], b_{i} = hi[{col}], r_{i} = *best - {previous};",
                      f"{ind}  if (a_{i} < centre[{col}] - r_{i}) a_{i} = centre[{col}] - r_{i};",
                      f"{ind}  if (b_{i} > centre[{col}] + r_{i}) b_{i} = centre[{col}] + r_{i};",
                      f"{ind}  for (int64_t j_{i} = a_{i}; j_{i} <= b_{i}; j_{i}++) {{",
                      f"{ind}    if (__builtin_expect(++tick_ >= {CANCEL_EVERY}u, 0)) {{ tick_ = 0; spent_ += {CANCEL_EVERY};",
                      f"{ind}      if (ss_cancelled()) goto done;",
                      f"{ind}      if (max_steps > 0 && spent_ >= max_steps) {{ st->error = {ERROR_WALK_LONG}; goto done; }} }}",
                      f"{ind}    int64_t d_{i} = {previous} + (j_{i} > centre[{col}] ? j_{i} - centre[{col}] : centre[{col}] - j_{i});",
                      f"{ind}    if (d_{i} > *best) continue;",
                      f"{ind}    {{ int64_t c_ = vals[voff[{col}] + j_{i}]; if (!{self.member(i, parameter)}) continue;",
                      f"{ind}      {c_name(parameter.name)} = c_; }}",
                      f"{ind}    ix_[{col}] = j_{i};"]
            lines += self.literal.derived_and_constraints(slots[i], set(), ind + "    ", on_reject="continue;")
            closes.append(ind)
        last = f"d_{len(levels) - 1}" if levels else "0"
        ind = "    " * (len(levels) + 1)
        lines += [f"{ind}if ({last} != 0) {{",
                  f"{ind}  if (closest && {last} < *best) {{ *best = {last}; st->count = 0; }}",
                  f"{ind}  if (st->count < cap) for (int p_ = 0; p_ < {len(self.names)}; p_++) "
                  f"out[st->count * {max(len(self.names), 1)} + p_] = (int32_t)ix_[p_];",
                  f"{ind}  st->count++;",
                  f"{ind}}}"]
        for ind in reversed(closes):
            lines.append(f"{ind}  }}")
            lines.append(f"{ind}}}")
        lines.append("    done: ;")
        lines.append("}")
        return "\n".join(lines).replace("return; /*abort*/", "goto done;")

    def mark_walk(self) -> tuple[str, int]:
        """`walk_mark`: the counting order's loops (the enumerator's listing nest, its
        optimizations included: none changes the valid set), marking at each leaf every bound
        parameter's value and every value of each hoisted parameter's domain. Where the inner
        loops fall into independent groups once the outer ones are bound (GEMM's A and B
        readers: `LoopNest.component_split`), each group is walked on its own under each outer
        prefix: first whether it has a valid assignment at all, then, when every group has, once
        more marking its values (so their sum of leaves is walked, not their product), both
        remembered per thread by the values from outside the group that it reads (the
        enumerator's memo of independent groups: a group is walked once per such key, again
        only where its entry was overwritten, which marks nothing new). Not split
        where a range step may be 0 (the error would be met where the whole nest does not meet
        it) or a hoisted domain reads an inner loop. (source, prefix depth of the work units)."""
        base, plan = self.base, self.plan
        hoisted = list(base.hoisted)
        order = [p for p in plan.order if p not in hoisted]
        split = self.mark_split(order, hoisted)
        depth = split[0] if split is not None else max(len(order) - 1, 0)
        nest = LoopNest(plan, base.options, base.printer, base.domains, base.item, levels=base.levels,
                        hoisted=(), max_prefix_depth=depth, count_words=1, checked=False, columns=[])
        slots = nest.slots(order)
        buffers: list[tuple[int, int]] = []
        outer = list(range(len(order))) if split is None else list(range(split[0]))
        groups = [] if split is None else split[1]
        marks = [f"ss_mark(mk, {self.column[order[i]]}, {c_name(order[i])});" for i in outer]
        keys = nest.component_keys(order, groups, slots) if groups else []
        self.memo_widths = [max(len(key), 1) for key in keys]
        leaf = [f"{{ int ok_ = 1; (void)ok_; int64_t state_[{max(len(groups), 1)}];"]
        for g, (group, key) in enumerate(zip(groups, keys)):   # does each group have a valid assignment?
            names = ", ".join(c_name(k) for k in key) or "0"
            leaf += [f"  int64_t key{g}_[{max(len(key), 1)}] = {{{names}}};",
                     f"  if (ok_) {{ int64_t *hit_ = ss_memo_find(&mk->memo[{g}], key{g}_); state_[{g}] = hit_ ? *hit_ : 0;",
                     f"    if (!state_[{g}]) {{ int found_ = 0;"]
            leaf += ["      " + x for x in nest.nest(group, order, slots, buffers, [f"found_ = 1; goto seen_{g};"])]
            leaf += [f"      seen_{g}: ; state_[{g}] = found_ ? 2 : 1; ss_memo_put(&mk->memo[{g}], key{g}_, state_[{g}]); }}",
                     f"    if (state_[{g}] == 1) ok_ = 0; }}"]
        leaf.append("  if (ok_) {")
        for k, name in enumerate(hoisted):   # each hoisted domain, in a block of its own, then the marks
            i = f"h_{k}"
            leaf.append(f"  {{ int64_t n_{i} = 0, start_{i} = 0, step_{i} = 1; (void)start_{i}; (void)step_{i};")
            leaf += base.domains.setup(i, self.model.parameter[name], None, "    ", count_only=True)
            leaf.append(f"    if (n_{i} > 0) {{")
        for k, name in enumerate(hoisted):
            i = f"h_{k}"
            domain = self.model.parameter[name].domain
            value = f"start_{i} + q_ * step_{i}" if isinstance(domain, ir.Range) else f"tmp_{i}[q_]"
            marks.append(f"for (int64_t q_ = 0; q_ < n_{i}; q_++) ss_mark(mk, {self.column[name]}, {value});")
        leaf += ["      " + m for m in marks]
        for g, group in enumerate(groups):   # every group's valid assignments, marked once per key
            group_marks = [" ".join(f"ss_mark(mk, {self.column[order[i]]}, {c_name(order[i])});" for i in group)]
            leaf.append(f"      if (state_[{g}] == 2) {{")
            leaf += ["        " + x for x in nest.nest(group, order, slots, buffers, group_marks)]
            leaf.append(f"        ss_memo_put(&mk->memo[{g}], key{g}_, 3); }}")
        leaf += ["    } }"] * len(hoisted)
        leaf.append("  } }")
        body = nest.nest(outer, order, slots, buffers, leaf)
        header = ["static void walk_mark(const int64_t *prefix, int plen, int stop, int64_t *prefix_out, int64_t cap,",
                  "                      ss_stats *st, ss_marks *mk) {"]
        return nest.whole_walk(header, order, slots, buffers, body), depth

    def mark_split(self, order: list[str], hoisted: list[str]):
        """(k, groups) for `mark_walk`, or None (see there)."""
        base = self.base
        probe = LoopNest(self.plan, base.options, base.printer, base.domains, base.item, levels=base.levels,
                         hoisted=(), max_prefix_depth=0, count_words=1, checked=False, columns=[])
        if probe.may_fail([]):   # with no lines: whether some range's step may be 0
            return None
        split = probe.component_split(order)
        if split is None:
            return None
        inner = set(order[split[0]:])
        inputs = self.plan.analysis.dag.parameter_inputs
        if any(inputs[h] & inner for h in hoisted):
            return None
        return split

    # ------------------------------------------------------------------------------ the program
    def generate(self) -> dict:
        """What a compiled check needs, as JSON values: the source, the state's width, the
        scratch size, each parameter's loop, the marking walk's prefix depth, the item names."""
        evaluate = self.eval_function()
        walk = self.walk_function()
        mark, depth = self.mark_walk()
        width = max(len(self.names), 1)
        level_of = {level.parameter.name: i for i, level in enumerate(self.plan.levels)}
        source = "\n".join([
            "#include <stdint.h>", "#include <stdlib.h>", "#include <string.h>", "#include <omp.h>",
            C_HELPERS,
            "static int ss_member(int64_t x, const int64_t *buf, int64_t n);",
            "static int64_t ss_find(int64_t x, const int64_t *sorted, int64_t n);",
            CANCEL_C,
            "typedef struct { int64_t count; int64_t undefined; int32_t error; int32_t undef_item; } ss_stats;",
            MEMO_C, MARKS_C,
            *self.base.domains.tables,
            evaluate, walk, mark,
            DRIVERS_C.replace("NPARAMS", str(len(self.names))).replace("WIDTH", str(width)).replace(
                "NSTATE", str(max(len(self.state), 1))).replace("SCRATCH", str(self.scratch_size)).replace(
                "LEVEL_OF", ", ".join(str(level_of[n]) for n in self.names) or "0").replace(
                "MAX_PREFIX_DEPTH", str(depth)).replace("GROUPKEYLENS", ", ".join(map(str, self.memo_widths)) or "1").replace(
                "MEMO_N", str(len(self.memo_widths))).replace("MEMO_BITS_", str(MEMO_BITS)),
        ]) + "\n"
        return {"format": FORMAT, "source": source, "items": list(self.base.items), "state": len(self.state),
                "strings": {str(code): s for s, code in self.plan.analysis.codes.items()}}


MARKS_C = r"""
/* one thread's marks: per parameter, the value-list indices some valid configuration takes */
typedef struct {
    const int64_t *lut, *lut_off, *lut_lo, *lut_n;         /* dense: index = lut[lut_off[p] + code - lut_lo[p]] */
    const int64_t *sorted, *sorted_ix, *sorted_off;        /* else: binary search of the sorted codes */
    uint8_t *marks; const int64_t *moff;
    ss_memo *memo;                                          /* per independent group: key -> 1 empty, 2 not empty, 3 marked */
} ss_marks;
static inline void ss_mark(ss_marks *mk, int p, int64_t code) {
    int64_t ix = -1;
    if (mk->lut_n[p] > 0) {
        int64_t at = code - mk->lut_lo[p];
        if (at >= 0 && at < mk->lut_n[p]) ix = mk->lut[mk->lut_off[p] + at];
    } else {
        int64_t lo = mk->sorted_off[p], hi = mk->sorted_off[p + 1];
        while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (mk->sorted[mid] < code) lo = mid + 1; else hi = mid; }
        if (lo < mk->sorted_off[p + 1] && mk->sorted[lo] == code) ix = mk->sorted_ix[lo];
    }
    if (ix >= 0) mk->marks[mk->moff[p] + ix] = 1;
}
"""

DRIVERS_C = DOMAIN_LOOKUPS_C + r"""
static const int ss_level_of[] = {LEVEL_OF};
static const int memo_widths[] = {GROUPKEYLENS};
#define MEMO_COUNT MEMO_N
#define MEMO_SIZE (1u << MEMO_BITS_)
static void ss_memo_open(ss_memo *m, int width) {   /* an empty memo of MEMO_SIZE entries of `width` key values */
    m->width = width;
    m->keys = (int64_t *)malloc(sizeof(int64_t) * MEMO_SIZE * width);
    m->vals = (int64_t *)malloc(sizeof(int64_t) * MEMO_SIZE);
    m->used = (unsigned char *)calloc(MEMO_SIZE, 1);
}
static void ss_memo_close(ss_memo *m) { free(m->keys); free(m->vals); free(m->used); }
int ss_max_prefix_depth(void) { return MAX_PREFIX_DEPTH; }
int ss_row_size(void) { return 0; }   /* c.build's load check calls it */

/* n full configurations (NPARAMS values each, definition order): out[i] = 1 valid, 0 not; -1 on an error */
int ss_check_rows(const int64_t *rows, int64_t n, uint8_t *out, ss_stats *st) {
    int64_t *scratch = (int64_t *)malloc(sizeof(int64_t) * SCRATCH);
    int64_t S[NSTATE];
    memset(st, 0, sizeof *st);
    int status = 0;
    for (int64_t i = 0; i < n; i++) {
        memset(S, 0, sizeof S);
        memcpy(S, rows + i * WIDTH, sizeof(int64_t) * NPARAMS);
        int r = ss_eval(S, 0, 0, st, scratch);
        if (r < 0) { status = -1; break; }
        out[i] = (uint8_t)r;
    }
    free(scratch);
    return status;
}

/* base: a configuration; for each parameter p, candidates cands[offsets[p] .. offsets[p+1]):
   out[j] = 1 where base with p changed to cands[j] is valid. 1: base itself is not valid; -1: an error */
int ss_check_changes(const int64_t *base, const int64_t *cands, const int64_t *offsets, uint8_t *out, ss_stats *st) {
    int64_t *scratch = (int64_t *)malloc(sizeof(int64_t) * SCRATCH);
    int64_t B[NSTATE], S[NSTATE];
    memset(st, 0, sizeof *st);
    memset(B, 0, sizeof B);
    memcpy(B, base, sizeof(int64_t) * NPARAMS);
    int status = 0;
    int r = ss_eval(B, 0, 1, st, scratch);
    if (r != 1) { free(scratch); return r < 0 ? -1 : 1; }
    for (int p = 0; p < NPARAMS && !status; p++) {
        for (int64_t j = offsets[p]; j < offsets[p + 1]; j++) {
            memcpy(S, B, sizeof S);
            S[p] = cands[j];
            r = ss_eval(S, ss_level_of[p], 0, st, scratch);
            if (r < 0) { status = -1; break; }
            out[j] = (uint8_t)r;
        }
    }
    free(scratch);
    return status;
}

/* the valid configurations in the box lo..hi of value-list indices (vals/voff: each parameter's
   value list, as codes) within L1 distance *best of centre (closest: only those at the smallest
   distance, *best tightening), centre excluded; up to cap of them into out (NPARAMS indices each);
   returns how many there are (more than cap: call again with room); max_steps > 0: give up
   (st->error ERROR_WALK_LONG) after about that many loop steps */
int64_t ss_walk(const int64_t *vals, const int64_t *voff, const int64_t *lo, const int64_t *hi,
                const int64_t *centre, int64_t budget, int closest, int32_t *out, int64_t cap, int64_t *best,
                ss_stats *st, volatile int *cancel, int64_t max_steps) {
    int64_t *scratch = (int64_t *)malloc(sizeof(int64_t) * SCRATCH);
    memset(st, 0, sizeof *st);
    ss_cancel_flag = cancel;
    *best = budget;
    walk_box(vals, voff, lo, hi, centre, closest, out, cap, best, st, scratch, max_steps);
    ss_cancel_flag = NULL;
    free(scratch);
    return st->count;
}

/* the marking walk's work units: prefixes of depth s */
int64_t ss_mark_prefixes(int s, int64_t *out, int64_t cap, ss_stats *st) {
    memset(st, 0, sizeof *st);
    walk_mark(NULL, 0, s, out, cap, st, NULL);
    return st->count;
}

/* every unit walked; thread t marks into marks[t * nmarks ...] */
int ss_mark_units(int s, const int64_t *prefixes, int64_t nunits, const int64_t *lut, const int64_t *lut_off,
                  const int64_t *lut_lo, const int64_t *lut_n, const int64_t *sorted, const int64_t *sorted_ix,
                  const int64_t *sorted_off, uint8_t *marks, int64_t nmarks, const int64_t *moff,
                  ss_stats *stats, int nthreads, volatile int *cancel, int64_t *done) {
    ss_cancel_flag = cancel;
    #pragma omp parallel num_threads(nthreads)
    {
        ss_memo memo[MEMO_COUNT > 0 ? MEMO_COUNT : 1];
        for (int c = 0; c < MEMO_COUNT; c++) ss_memo_open(&memo[c], memo_widths[c]);
        ss_marks mk = { lut, lut_off, lut_lo, lut_n, sorted, sorted_ix, sorted_off,
                        marks + (int64_t)omp_get_thread_num() * nmarks, moff, memo };
        #pragma omp for schedule(dynamic, 1)
        for (int64_t unit = 0; unit < nunits; unit++) {
            if (*cancel) continue;
            ss_stats st; memset(&st, 0, sizeof st);
            walk_mark(prefixes + unit * s, s, -1, NULL, 0, &st, &mk);
            stats[unit] = st;
            #pragma omp atomic
            (*done)++;
        }
        for (int c = 0; c < MEMO_COUNT; c++) ss_memo_close(&memo[c]);
    }
    ss_cancel_flag = NULL;
    return *cancel ? 1 : 0;
}
"""


class CompiledChecker:
    """One plan's compiled check and walks over its value lists (`lists`: per parameter in
    definition order, the values in value-list order). Built (or loaded from the cache) once."""

    def __init__(self, plan, lists, *, quick: bool = False, threads: int | None = None):
        import os
        import numpy as np
        self.plan, self.lists = plan, [tuple(values) for values in lists]
        self.names = list(plan.model.parameter_names)
        self.threads = threads or os.cpu_count() or 1
        key = check_key(plan)
        fields = load_search(key) if key else None
        if fields is None or fields.get("format") != FORMAT:
            with waiting(f"generating the compiled check of {space_name(plan.model.source)}"):
                fields = CheckGenerator(plan).generate()
            if key:
                store_search(key, fields)
        self.source, self.items = fields["source"], list(fields["items"])
        self.codes = {s: int(code) for code, s in fields["strings"].items()}
        self.shaped = build_shaped(self.source, CDEF_CHECK, quick=quick)
        self.lib, self.ffi = self.shaped.module.lib, self.shaped.module.ffi
        coded = [[self.code(name, v) for v in values] for name, values in zip(self.names, self.lists)]
        self.offsets = np.zeros(len(coded) + 1, dtype=np.int64)
        self.offsets[1:] = np.cumsum([len(c) for c in coded])
        self.values = np.array([v for c in coded for v in c] or [0], dtype=np.int64)
        self.coded = coded
        self.marks: list[list[int]] | None = None

    # ------------------------------------------------------------------------------ values
    def code(self, name: str, value) -> int:
        """The int64 C holds for a value of parameter `name`; a value it cannot hold is refused."""
        model = self.plan.model
        if model.kinds.of(name) == STR:
            if value not in self.codes:
                raise UnsupportedConstruct("C", model.parameter[name].domain,
                                           f"its value {value!r} has no code in the compiled program",
                                           owner=model.parameter[name], model=model)
            return self.codes[value]
        if not isinstance(value, numbers.Integral) or not -(2 ** 63) <= value < 2 ** 63:
            raise UnsupportedConstruct("C", model.parameter[name].domain,
                                       f"its value {value!r} is not a 64-bit integer",
                                       owner=model.parameter[name], model=model)
        return int(value)

    def _pointer(self, array, ctype: str = "int64_t *"):
        return self.ffi.cast(ctype, array.ctypes.data)

    def _direct(self, fn, *args):
        """Run a short C function from this thread (a shared module made this program first)."""
        self.shaped.set_constants()
        return fn(*args)

    def _check_status(self, st, status: int) -> None:
        if status < 0 or st.error:
            if st.error == ERROR_STEP_ZERO:
                raise SolverspaceError(f"parameter {self.items[st.undef_item]!r}: range step is 0",
                                       hint="a range step must be a non-zero integer")
            raise SolverspaceError(f"internal error: the compiled check stopped with error {st.error}")

    # ------------------------------------------------------------------------------ answers
    def valid_many(self, configs) -> list[bool]:
        """Validity of each configuration (values in definition order)."""
        import numpy as np
        rows = np.array([[self.code(n, v) for n, v in zip(self.names, config)] for config in configs] or [[0]],
                        dtype=np.int64).reshape(-1, max(len(self.names), 1))
        out = np.zeros(len(configs) or 1, dtype=np.uint8)
        st = self.ffi.new("ss_stats *")
        status = self._direct(self.lib.ss_check_rows, self._pointer(rows), len(configs),
                              self._pointer(out, "uint8_t *"), st)
        self._check_status(st, status)
        return [bool(x) for x in out[:len(configs)]]

    def valid(self, config) -> bool:
        return self.valid_many([config])[0]

    def changes(self, indices) -> list[list[int]] | None:
        """For the configuration at `indices` (value-list indices): per parameter, the indices
        of its value list at which changing that one parameter gives a valid configuration
        (the configuration's own index included); None when the configuration is not valid."""
        import numpy as np
        base = np.array([c[i] for c, i in zip(self.coded, indices)] or [0], dtype=np.int64)
        out = np.zeros(len(self.values), dtype=np.uint8)
        st = self.ffi.new("ss_stats *")
        status = self._direct(self.lib.ss_check_changes, self._pointer(base), self._pointer(self.values),
                              self._pointer(self.offsets), self._pointer(out, "uint8_t *"), st)
        if status == 1:
            return None
        self._check_status(st, status)
        hits = np.flatnonzero(out[:int(self.offsets[-1])])
        cut = np.searchsorted(hits, self.offsets[1:-1])
        return [(part - start).tolist() for part, start in zip(np.split(hits, cut), self.offsets[:-1])]

    def walk(self, windows, centre, budget: int | None = None, closest: bool = False) -> list[tuple]:
        """The valid configurations (as value-list indices) with indices inside `windows` (per
        parameter (lo, hi), inclusive), within L1 distance `budget` of `centre` (None: any),
        `centre` excluded; `closest`: only those at the smallest distance."""
        import numpy as np
        width = max(len(self.names), 1)
        lo = np.array([w[0] for w in windows] or [0], dtype=np.int64)
        hi = np.array([w[1] for w in windows] or [0], dtype=np.int64)
        mid = np.array(list(centre) or [0], dtype=np.int64)
        limit = (1 << 62) if budget is None else int(budget)
        cap = 256
        while True:
            out = np.zeros(cap * width, dtype=np.int32)
            best = self.ffi.new("int64_t *")
            st = self.ffi.new("ss_stats *")
            cancel = self.ffi.new("int[1]")
            args = (self._pointer(self.values), self._pointer(self.offsets), self._pointer(lo), self._pointer(hi),
                    self._pointer(mid), limit, int(closest), self._pointer(out, "int32_t *"), cap, best, st, cancel)
            # first from this thread, for at most SHORT_STEPS loop steps (most walks take microseconds,
            # which the C thread's polling would add to); a longer one again on the C thread, where
            # Ctrl-C stops it
            n = self._direct(self.lib.ss_walk, *args, SHORT_STEPS)
            if st.error == ERROR_WALK_LONG:
                n = call_c(self.shaped, self.lib.ss_walk, *args, 0, cancel=cancel)
            self._check_status(st, 0)
            if n <= cap:
                rows = out[:n * width].reshape(n, width)[:, :len(self.names)]
                return [tuple(row) for row in rows.tolist()]
            if closest:                    # the smallest distance is known now: all of them, with room
                limit, closest = int(best[0]), False
            cap = int(n)

    def occurring(self) -> list[list[int]]:
        """Per parameter, the sorted value-list indices that some valid configuration takes:
        one parallel walk of the space, remembered in this object and in the module cache (keyed
        by the plan, the tool's code and the value lists), so a later process reads it."""
        if self.marks is None:
            key = self._occurring_key()
            fields = load_search(key) if key else None
            if fields is not None and len(fields.get("occurring", ())) == len(self.names):
                self.marks = [[int(j) for j in taken] for taken in fields["occurring"]]
            else:
                self.marks = self._mark()
                if key:
                    store_search(key, {"occurring": self.marks})
        return self.marks

    def _occurring_key(self) -> str | None:
        import hashlib
        key = check_key(self.plan)
        if key is None:
            return None
        return hashlib.sha256(f"{key}\0occurring\0{self.coded!r}".encode()).hexdigest()

    def _mark(self) -> list[list[int]]:
        import numpy as np
        ffi, lib = self.ffi, self.lib
        cancel = ffi.new("int[1]")
        st = ffi.new("ss_stats *")
        target = UNITS_PER_THREAD * self.threads
        depth, count = 0, 1
        for s in range(1, lib.ss_max_prefix_depth() + 1):
            count = call_c(self.shaped, lib.ss_mark_prefixes, s, ffi.NULL, 0, st, cancel=cancel)
            self._check_status(st, 0)
            depth = s
            if count >= target:
                break
        prefixes = np.zeros(max(count, 1) * max(depth, 1), dtype=np.int64)
        if depth:
            call_c(self.shaped, lib.ss_mark_prefixes, depth, self._pointer(prefixes), count, st, cancel=cancel)
        units = count if depth else 1
        tables = self._lookup_tables()
        nmarks = int(self.offsets[-1]) or 1
        marks = np.zeros(self.threads * nmarks, dtype=np.uint8)
        stats = ffi.new("ss_stats[]", units)
        done = ffi.new("int64_t[1]")
        call_c(self.shaped, lib.ss_mark_units, depth, self._pointer(prefixes), units,
               *(self._pointer(t) for t in tables), self._pointer(marks, "uint8_t *"), nmarks,
               self._pointer(self.offsets), stats, self.threads, cancel, done, cancel=cancel, done=done, total=units)
        for u in range(units):
            self._check_status(stats[u], 0)
        taken = marks.reshape(self.threads, nmarks).any(axis=0)
        return [np.flatnonzero(taken[self.offsets[p]:self.offsets[p + 1]]).tolist() for p in range(len(self.names))]

    def _lookup_tables(self):
        """Code -> value-list index, per parameter: a dense table where the codes span at most
        `DENSE_SPAN` integers, else the sorted codes with their indices (binary search)."""
        import numpy as np
        lut, lut_off, lut_lo, lut_n = [], [], [], []
        sorted_codes, sorted_ix, sorted_off = [], [], [0]
        for codes in self.coded:
            lo, hi = (min(codes), max(codes)) if codes else (0, -1)
            pairs = sorted((c, i) for i, c in enumerate(codes))
            lut_off.append(len(lut))
            lut_lo.append(lo)
            if codes and hi - lo + 1 <= DENSE_SPAN:
                table = [-1] * (hi - lo + 1)
                for c, i in pairs:
                    table[c - lo] = i
                lut += table
                lut_n.append(hi - lo + 1)
                sorted_off.append(sorted_off[-1])
            else:
                lut_n.append(0)
                sorted_codes += [c for c, _ in pairs]
                sorted_ix += [i for _, i in pairs]
                sorted_off.append(len(sorted_codes))
        return [np.array(x or [0], dtype=np.int64) for x in (lut, lut_off, lut_lo, lut_n, sorted_codes, sorted_ix,
                                                             sorted_off)]


def check_key(plan) -> str | None:
    """The key of a compiled check's remembered fields (`plan_cache`), None where the plan
    cannot be written out (a closure iterator)."""
    import hashlib
    base = generation_key(plan, Options(), (), False, False)
    if base is None:
        return None
    return hashlib.sha256(f"{base}\0neighbour-check\0{FORMAT}".encode()).hexdigest()
