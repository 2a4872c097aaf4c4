"""Emit the C99 + OpenMP enumerator for a plan.

The generated file has two loop nests over the same first levels: `walk_list` in the plan's
order (writes rows) and `walk_count` (counts; hoisted parameters last, multiplied in). Both run
from a *prefix*: the values of the first `plen` loops, fixed. Work is split into units, one per
prefix of depth `s` (found by running the nest with `stop = s`), and OpenMP hands units to
threads dynamically. Each unit's rows go to its own offset (from a counting pass), so the output
is identical for any number of threads.

Exported functions (see CDEF): `ss_prefixes`, `ss_count_units`, `ss_fill_units`, `ss_format_csv`.
"""
from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field

import numpy as np

from solverspace import ir
from solverspace.bounds import Bounds
from solverspace.closures import ClosureTableError
from solverspace.dag import connected_groups
from solverspace.kinds import STR
from solverspace.plan import Plan
from solverspace.printing import to_source
from solverspace.symbolic import rational_names

from .c_expr import C_HELPERS, CExpressionPrinter, c_name, rational_pair
from .c_optimize import Options, analyse, hoistable
from .errors import UnsupportedConstruct

CDEF = """
typedef struct { int64_t count; int64_t undefined; int32_t error; int32_t undef_item; } ss_stats;
int64_t ss_prefixes(int s, int64_t *out, int64_t cap, ss_stats *st);
int ss_count_units(int s, const int64_t *prefixes, int64_t nunits, int64_t *counts, ss_stats *stats,
                   int nthreads, volatile int *cancel, int64_t *done);
int ss_fill_units(int s, const int64_t *prefixes, int64_t u0, int64_t u1, const int64_t *offsets,
                  char *rows, int nthreads, volatile int *cancel, int64_t *done);
int64_t ss_format_csv(const char *rows, int64_t nrows, char *buf, int64_t cap, int nthreads, char sep);
int ss_fill_list(int s, const int64_t *prefixes, const int64_t *units, int64_t nsel, const int64_t *out_offsets,
                 char *rows, int nthreads, volatile int *cancel, int64_t *done);
int ss_max_prefix_depth(void);
int ss_row_size(void);
void ss_set_cancel(volatile int *cancel);
void ss_count_prefix(const int64_t *prefix, int plen, int64_t *count, ss_stats *st);
"""

CDEF_FUNNEL = "int ss_funnel(int s, int64_t *fc, int nthreads, volatile int *cancel, int64_t *done);\n"
MAX_BUFFER = 1 << 20
MEMO_BITS = 16
MEMO_C = r"""
/* per-thread memo of independent groups' counts: direct-mapped, full key compared */
typedef struct { int width; int64_t *keys; int64_t *vals; unsigned char *used; } ss_memo;
static uint64_t ss_hash(const int64_t *key, int width) {
    uint64_t h = 1469598103934665603ULL;
    for (int j = 0; j < width; j++) { h ^= (uint64_t)key[j]; h *= 1099511628211ULL; h ^= h >> 29; }
    return h;
}
static int64_t *ss_memo_find(ss_memo *m, const int64_t *key) {
    uint64_t slot = ss_hash(key, m->width) & ((1u << MEMO_BITS) - 1);
    if (!m->used[slot] || memcmp(m->keys + slot * m->width, key, sizeof(int64_t) * m->width)) return NULL;
    return &m->vals[slot];
}
static void ss_memo_put(ss_memo *m, const int64_t *key, int64_t value) {
    uint64_t slot = ss_hash(key, m->width) & ((1u << MEMO_BITS) - 1);
    memcpy(m->keys + slot * m->width, key, sizeof(int64_t) * m->width);
    m->vals[slot] = value; m->used[slot] = 1;
}
""".replace("MEMO_BITS", str(MEMO_BITS))
ERROR_STEP_ZERO = 1
CANCEL_EVERY = 1 << 16  # loop iterations between two looks at the cancel flag (a power of two)
CANCEL_C = r"""
/* Ctrl-C inside one long work unit: the walks count loop iterations in `tick_` (a loop's length
   added on entry) and look at the caller's cancel flag once every CANCEL_EVERY of them, and inside
   any loop that may itself be longer (see CGenerator.cancel_checks): no volatile read per
   iteration. The drivers set the flag's address; ss_set_cancel serves ss_prefixes, which has no
   flag argument. */
static volatile int *ss_cancel_flag = NULL;
void ss_set_cancel(volatile int *cancel) { ss_cancel_flag = cancel; }
static int ss_cancelled(void) { volatile int *c = ss_cancel_flag; return c != NULL && *c; }
""".replace("CANCEL_EVERY", str(CANCEL_EVERY))
ERROR_COUNT_OVERFLOW = 2   # a checked int64 count passed 63 bits: rebuild with wide counts


def wide_count_c(words: int) -> str:
    """C for `ss_count`, the per-unit count of a build whose counts may exceed 63 bits: an
    unsigned integer of `words` 64-bit words, arithmetic modulo 2**(64 * words). The build's
    count bound (see `CGenerator.count_bound`) proves every count is below that modulus, so
    wrapping in between (a ring homomorphism of + and *) cannot change the final value."""
    if words == 2:
        return r"""
typedef unsigned __int128 ss_count;
static inline ss_count ss_cone(void) { return 1; }
static inline ss_count ss_cmul(ss_count a, int64_t n) { return a * (uint64_t)n; }
static inline ss_count ss_cadd(ss_count a, ss_count b) { return a + b; }
static inline int ss_cnonzero(ss_count a) { return a != 0; }
static inline void ss_cstore(uint64_t *out, ss_count a) { out[0] = (uint64_t)a; out[1] = (uint64_t)(a >> 64); }
"""
    return r"""
typedef struct { uint64_t w[WORDS]; } ss_count;
static inline ss_count ss_cone(void) { ss_count a; memset(&a, 0, sizeof a); a.w[0] = 1; return a; }
static inline ss_count ss_cmul(ss_count a, int64_t n) {
    unsigned __int128 carry = 0;
    for (int j = 0; j < WORDS; j++) { carry += (unsigned __int128)a.w[j] * (uint64_t)n; a.w[j] = (uint64_t)carry; carry >>= 64; }
    return a;
}
static inline ss_count ss_cadd(ss_count a, ss_count b) {
    unsigned __int128 carry = 0;
    for (int j = 0; j < WORDS; j++) { carry += (unsigned __int128)a.w[j] + b.w[j]; a.w[j] = (uint64_t)carry; carry >>= 64; }
    return a;
}
static inline int ss_cnonzero(ss_count a) { for (int j = 0; j < WORDS; j++) if (a.w[j]) return 1; return 0; }
static inline void ss_cstore(uint64_t *out, ss_count a) { memcpy(out, a.w, sizeof a.w); }
""".replace("WORDS", str(words))


@dataclass
class Column:
    name: str
    dtype: str          # numpy dtype name, e.g. "int16"
    ctype: str          # e.g. "int16_t"
    categorical: tuple | None = None  # decoded strings by code, for categorical columns


@dataclass
class Generated:
    source: str
    columns: list[Column]
    items: list[str]                 # undefined-item id -> name, for messages
    max_prefix_depth: int
    codes: dict[str, int] = field(default_factory=dict)
    count_words: int = 1             # 64-bit words per unit count (1: int64; more: see wide_count_c)
    hoisted: tuple[str, ...] = ()    # parameters the counting nest multiplies in (not in its loops)

    @property
    def key(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:20]

    @property
    def dtype(self) -> np.dtype:
        return np.dtype([(c.name, c.dtype) for c in self.columns])


def smallest_int(lo, hi) -> tuple[str, str]:
    for bits in (8, 16, 32, 64):
        if -(2 ** (bits - 1)) <= lo and hi <= 2 ** (bits - 1) - 1:
            return f"int{bits}", f"int{bits}_t"
    raise ValueError("value range exceeds 64 bits")


def count_words(bound: int) -> int:
    """64-bit words for counts below `bound`: 1 (int64) while the bound proves 63 bits suffice."""
    return 1 if bound < 2 ** 63 else max(2, -(-bound.bit_length() // 64))


def string_codes(model) -> dict[str, int]:
    """Every string constant of the model gets a code, in order of first appearance, then the
    strings that closure iterators yield (from their shared tables)."""
    codes: dict[str, int] = {}
    nodes = [p.domain for p in model.parameters] + [d.expr for d in model.derived] + [c.expr for c in model.constraints]
    for node in nodes:
        for n in ir.walk(node):
            if isinstance(n, ir.Const) and type(n.value) is str and n.value not in codes:
                codes[n.value] = len(codes)
    for node in nodes:
        for n in ir.walk(node):
            if isinstance(n, ir.Closure):
                try:
                    values = model.closures.table(n).values
                except ClosureTableError:
                    continue  # refused where the table is needed
                for v in values:
                    if type(v) is str:
                        codes.setdefault(v, len(codes))
    return codes


class CGenerator:
    def __init__(self, plan: Plan, options: Options, with_derived: tuple[str, ...] = (), funnel: bool = False,
                 wide: bool = False):
        self.plan = plan
        self.model = plan.model
        self.funnel = funnel  # a funnel build: literal plan, counters compiled in
        self.emitting_funnel = False
        options = Options.literal() if funnel else options
        self.options = options
        self.bounds = Bounds(self.model)
        self.codes = string_codes(self.model)
        self.rational = rational_names(self.model)
        self.printer = CExpressionPrinter(self.model, self.bounds, self.codes, self.rational)
        self.levels = analyse(plan, self.bounds, options)
        self.hoisted = hoistable(plan, options)
        self.with_derived = with_derived
        self.items: list[str] = []
        self.tables: list[str] = []
        self.table_ids: dict[str, int] = {}
        self.closure_sizes: dict[int, int] = {}
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

    # ------------------------------------------------------------------------------ count width
    def count_bound(self) -> int:
        """An upper bound on the number of configurations, and so on every unit's count and on
        every partial product of the counting nest: the product of the largest domain sizes."""
        bound = 1
        for parameter in self.model.parameters:
            bound *= self.domain_size_bound(parameter.domain, parameter)
        return bound

    def domain_size_bound(self, node, parameter) -> int:
        """The most values a domain can hold (a loop count is an int64, so never above 2**63)."""
        if isinstance(node, ir.Range):
            interval = self.bounds._domain(node, parameter)
            return 0 if interval.empty else int(min(interval.hi - interval.lo + 1, 2 ** 63)) \
                if interval.finite else 2 ** 63
        if isinstance(node, ir.Closure):
            if id(node) not in self.closure_sizes:
                self.closure_sizes[id(node)] = max((len(v) for v in self.closure_table(node, parameter).rows.values()),
                                                   default=0)
            return self.closure_sizes[id(node)]
        if isinstance(node, ir.SetOp):
            left = self.domain_size_bound(node.left, parameter)
            return min(left + self.domain_size_bound(node.right, parameter), 2 ** 63) if node.op == "union" else left
        if isinstance(node, ir.IfDomain):
            return max(self.domain_size_bound(node.then, parameter), self.domain_size_bound(node.orelse, parameter))
        return len(node.items)  # ir.Values

    # ------------------------------------------------------------------------------ funnel
    def funnel_layout(self) -> dict:
        return funnel_layout(self.plan)

    def funnel_tests(self, constraints, ind, on_reject) -> list[str]:
        """All of a loop's constraints evaluated (no short-circuit between them), counted into fc."""
        layout = self.funnel_layout()
        index = layout["index"]
        lines = [f"{ind}{{ uint64_t rej_ = 0, und_ = 0; int r;"]
        for bit, c in enumerate(constraints):
            rejection = self.printer.print(c.expr if c.rejects else ir.Not(c.expr), c)
            lines.append(f"{ind}  uflag = 0; r = ({rejection}) != 0;"
                         f" if (uflag) und_ |= (1ULL << {bit}); else if (r) rej_ |= (1ULL << {bit}); uflag = 0;")
        for bit, c in enumerate(constraints):  # sequential funnel in test order
            g = index[c.name]
            lines.append(f"{ind}  fc[{4 * g}]++;")
            lines.append(f"{ind}  if (und_ & (1ULL << {bit})) fc[{4 * g + 2}]++; else if (rej_ & (1ULL << {bit})) fc[{4 * g + 1}]++;")
            lines.append(f"{ind}  if ((und_ | rej_) & (1ULL << {bit})) goto seq_done_{id(constraints)}_{len(self.items)};")
        lines.append(f"{ind}  seq_done_{id(constraints)}_{len(self.items)}: ;")
        self.items.append("funnel")  # keeps the label unique
        for bit, c in enumerate(constraints):
            g = index[c.name]
            lines.append(f"{ind}  if (rej_ == (1ULL << {bit}) && !und_) fc[{4 * g + 3}]++;")
            for bit2, c2 in enumerate(constraints[bit + 1:], bit + 1):
                slot = layout["overlap"] + g * len(layout["constraints"]) + index[c2.name]
                lines.append(f"{ind}  if ((rej_ >> {bit} & 1) && (rej_ >> {bit2} & 1)) fc[{slot}]++;")
        lines.append(f"{ind}  if (rej_ | und_) {on_reject} }}")
        return lines

    # ------------------------------------------------------------------------------ public
    def generate(self) -> Generated:
        for parameter in self.model.parameters:  # refuse a closure that cannot be tabulated, first
            for node in ir.walk(parameter.domain):
                if isinstance(node, ir.Closure):
                    self.closure_table(node, parameter)
        columns = self.columns()
        body = [
            "#include <stdint.h>", "#include <stdlib.h>", "#include <string.h>", "#include <stdio.h>",
            "#include <omp.h>", C_HELPERS,
            "static int ss_member(int64_t x, const int64_t *buf, int64_t n);",
            "static int64_t ss_find(int64_t x, const int64_t *sorted, int64_t n);",
            MEMO_C, CANCEL_C,
            wide_count_c(self.count_words) if self.count_words > 1 else "",
            "typedef struct { int64_t count; int64_t undefined; int32_t error; int32_t undef_item; } ss_stats;",
            "#pragma pack(push, 1)",
            "typedef struct {\n" + "\n".join(f"    {c.ctype} {c_name(c.name)};" for c in columns) + "\n} ss_row;",
            "#pragma pack(pop)",
        ]
        self.memo_widths: list[int] = []
        walk_list = self.walk("walk_list", list(self.plan.order), listing=True)
        walk_count = self.walk("walk_count", self.count_order, listing=False)
        walk_funnel = ""
        if self.funnel:
            self.emitting_funnel = True
            walk_funnel = self.walk("walk_funnel", list(self.plan.order), listing=False)
            self.emitting_funnel = False
        body += self.tables
        body += [walk_list, walk_count, walk_funnel, self.drivers(), self.csv_formatter(columns)]
        if self.funnel:
            body.append(self.funnel_driver())
        return Generated("\n".join(body) + "\n", columns, self.items, self.max_prefix_depth, self.codes,
                         self.count_words, tuple(self.hoisted))

    def columns(self) -> list[Column]:
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

    # ------------------------------------------------------------------------------ nests
    def item(self, name: str) -> int:
        self.items.append(name)
        return len(self.items) - 1

    def walk(self, fname: str, order: list[str], listing: bool) -> str:
        model = self.model
        position = {p: i for i, p in enumerate(order)}
        # derived values and constraints go after the loop of their last input *in this order*
        slots: dict[int, tuple[list, list]] = {i: ([], []) for i in range(-1, len(order))}
        dag_inputs = _param_inputs(model)
        for d in [*self.plan.prelude_derived, *(d for lv in self.plan.levels for d in lv.derived)]:
            slots[max((position[q] for q in dag_inputs[d.name]), default=-1)][0].append(d)
        for c in [*self.plan.prelude_constraints, *(c for lv in self.plan.levels for c in lv.constraints)]:
            slots[max((position[q] for q in dag_inputs[c.name]), default=-1)][1].append(c)
        decls = [f"int64_t {c_name(n)} = 0;" for n in (*model.parameter_names, *(d.name for d in model.derived))
                 if n not in self.rational]
        extra = ", int64_t *fc" if self.emitting_funnel else ""
        self.wide_walk = self.count_words > 1 and not listing and not self.emitting_funnel
        if self.wide_walk:  # counts that may pass 63 bits: summed in total_, stored into *acc
            extra = ", ss_count *acc"
            decls.append("ss_count total_; memset(&total_, 0, sizeof total_);")
        lines = [f"static void {fname}(const int64_t *prefix, int plen, int stop, int mode, ss_row *out,",
                 f"                      int64_t *prefix_out, int64_t cap, ss_stats *st, ss_memo *memo{extra}) {{",
                 "    int uflag = 0; int *u = &uflag; (void)u; (void)out; (void)prefix_out; (void)cap; (void)mode;",
                 "    uint64_t tick_ = 0; (void)tick_;",
                 "    " + " ".join(decls)]
        buffers: list[tuple[int, int]] = []
        lines += self.derived_and_constraints(slots[-1], None, "    ", on_reject="return;", prelude=True)
        split = None if listing else self.component_split(order)
        outer = list(range(len(order))) if split is None else list(range(split[0]))
        if listing:
            fields = ", ".join(f"({c.ctype}){c_name(c.name)}" for c in self.columns())
            leaf = [f"out[st->count++] = (ss_row){{ {fields} }};"]
        elif split is None:
            leaf = self.hoisted_multiplier("")
        else:
            leaf = self.hoisted_multiplier("", into="prod_")
            keys = self.component_keys(order, split[1], slots)
            for number, (component, key) in enumerate(zip(split[1], keys)):
                inner = self.nest(component, order, slots, buffers, ["cnt_++;"])
                names = ", ".join(c_name(k) for k in key) or "0"
                leaf += [f"if ({self.count_op('nonzero', 'prod_')}) {{ int64_t cnt_ = 0, key_[{max(len(key), 1)}] = {{{names}}};",
                         f"    int64_t *hit_ = memo ? ss_memo_find(&memo[{number}], key_) : NULL;",
                         "    if (hit_) cnt_ = *hit_; else {"]
                leaf += ["        " + x for x in inner]
                leaf += [f"        if (memo) ss_memo_put(&memo[{number}], key_, cnt_); }}", f"    {self.count_op('mul', 'prod_', 'cnt_')} }}"]
            leaf += [self.count_op("add", "prod_") + " }"]
            self.memo_widths = [max(len(k), 1) for k in keys]
        lines += ["    " + x for x in self.nest(outer, order, slots, buffers, leaf)]
        lines.append("    done: ;")
        if self.wide_walk:
            lines.append("    if (acc) *acc = total_;")
        for i, size in buffers:
            lines.insert(4, f"    int64_t *buf_{i} = (int64_t *)malloc(sizeof(int64_t) * {size});")
            lines.append(f"    free(buf_{i});")
        for i in self.solved_levels(order):
            if i not in dict(buffers):
                lines.insert(4, f"    int64_t buf_{i}[1] = {{0}};")
        lines.append("}")
        text = "\n".join(lines)
        return text.replace("return; /*abort*/", "goto done;")

    def nest(self, indices: list[int], order, slots, buffers, leaf: list[str]) -> list[str]:
        """Nested loops over `order[i]` for i in `indices`, `leaf` innermost."""
        by_name = {level.parameter.name: (i, level) for i, level in enumerate(self.plan.levels)}
        lines, closes = [], []
        for depth, i in enumerate(indices):
            name = order[i]
            index, level = by_name[name]
            lp = self.levels[index]
            ind = "    " * depth
            parameter = level.parameter
            lines.append(f"{ind}/* level {i}: {name} */")
            lines.append(f"{ind}{{")
            lines.append(f"{ind}    int64_t n_{i} = 0, start_{i} = 0, step_{i} = 1; (void)start_{i}; (void)step_{i};")
            lines.append(f"{ind}    if (plen > {i}) {{ n_{i} = 1; }} else {{")
            solve = lp.solve if "solve" in self.options else None
            buffered = not isinstance(parameter.domain, ir.Range)
            if buffered:
                buffers.append((i, self.buffer_size(parameter)))
            lines += self.domain_setup(i, parameter, solve, ind + "        ",
                                       tighten=lp.tighten if "tighten" in self.options else ())
            lines.append(f"{ind}    }}")
            lines += self.cancel_checks(i, name, ind)
            value = f"buf_{i}[k_{i}]" if buffered or solve else f"start_{i} + k_{i} * step_{i}"
            lines.append(f"{ind}        {c_name(name)} = (plen > {i}) ? prefix[{i}] : {value};")
            if self.emitting_funnel:
                lines.append(f"{ind}        if (plen <= {i}) fc[{self.funnel_layout()['candidates'] + i}]++;")
            lines += self.derived_and_constraints(slots[i], {c.name for c in lp.breaks}, ind + "        ",
                                                  guard_prefix=i, level=i)
            if i < self.max_prefix_depth:
                lines.append(f"{ind}        if (stop == {i + 1}) {{")
                lines.append(f"{ind}            if (st->count < cap) {{ " +
                             " ".join(f"prefix_out[st->count * {i + 1} + {j}] = {c_name(order[j])};"
                                      for j in range(i + 1)) + " }")
                lines.append(f"{ind}            st->count++; continue;")
                lines.append(f"{ind}        }}")
            closes.append(ind)
        ind = "    " * len(indices)
        lines += [f"{ind}    {x}" for x in leaf]
        for ind in reversed(closes):
            lines.append(f"{ind}    }}")
            lines.append(f"{ind}}}")
        return lines

    def cancel_checks(self, i: int, name: str, ind: str) -> list[str]:
        """The loop header of level i with its looks at the cancel flag: on entry, the loop's
        length is added to `tick_` (so nests of short loops look once per CANCEL_EVERY iterations
        in all); a loop that may itself run longer also looks every CANCEL_EVERY of its own
        iterations. No per-iteration cost where the bounds prove a loop short."""
        lines = [f"{ind}    tick_ += (uint64_t)n_{i};",
                 f"{ind}    if (__builtin_expect(tick_ >= {CANCEL_EVERY}u, 0)) {{ tick_ = 0; if (ss_cancelled()) goto done; }}",
                 f"{ind}    for (int64_t k_{i} = 0; k_{i} < n_{i}; k_{i}++) {{"]
        interval = self.bounds.of(name)
        if not interval.hi - interval.lo < CANCEL_EVERY:
            lines.append(f"{ind}        if (__builtin_expect(!(k_{i} & {CANCEL_EVERY - 1}) && k_{i}, 0) && ss_cancelled()) "
                         "goto done;")
        return lines

    def component_keys(self, order, components, slots) -> list[list[str]]:
        """For each independent group, the values from outside it that its count depends on
        (its memo key): the outer parameters and derived values its domains and rules read."""
        keys = []
        for component in components:
            inside = {order[i] for i in component} | {d.name for i in component for d in slots[i][0]}
            read = set()
            for i in component:
                read |= ir.refs(self.model.parameter[order[i]].domain)
                for item in (*slots[i][0], *slots[i][1]):
                    read |= ir.refs(item.expr)
            outside = read - inside
            while outside & self.rational:  # fractions have no C variable: key on their inputs
                name = next(iter(outside & self.rational))
                outside = (outside - {name}) | ir.refs(self.model.derived_value[name].expr)
            keys.append(sorted(outside))
        return keys

    def component_split(self, order: list[str]):
        """(k, components): the first loop position k from which the remaining loops fall into
        independent groups (no parameter, derived value or constraint links two groups); each
        group is counted on its own and the counts multiply. None when there is no such k."""
        if "split" not in self.options:
            return None
        inputs = _param_inputs(self.model)
        items = [*self.model.derived, *self.model.constraints]
        position = {p: i for i, p in enumerate(order)}
        for k in range(self.max_prefix_depth, len(order) - 1):
            rest = set(order[k:])
            if any(inputs[h] & rest for h in self.hoisted):
                continue
            scopes = [(inputs[p] | {p}) & rest for p in rest] + [inputs[i.name] & rest for i in items]
            groups = connected_groups(rest, scopes, order)
            if len(groups) >= 2:
                return k, [[position[p] for p in group] for group in groups]
        return None

    def solved_levels(self, order):
        by_name = {level.parameter.name: i for i, level in enumerate(self.plan.levels)}
        return [i for i, name in enumerate(order) if self.levels[by_name[name]].solve and "solve" in self.options]

    def derived_and_constraints(self, slot, breaks, ind, on_reject="continue;", guard_prefix=None, prelude=False,
                                level=None):
        derived, constraints = slot
        breaks = breaks or set()
        lines = []
        for d in derived:
            item = self.item(f"{d.name} = {to_source(d.expr)}")
            if d.name in self.rational:
                # a fraction-valued derived value has no C variable, but it is eager: evaluating its
                # integer pair raises the undefined flag exactly where one of its divisions would
                num, den = rational_pair(d.expr, self.model, self.rational)
                text = f"(void)({self.printer.print(num, d)}); (void)({self.printer.print(den, d)});"
            else:
                text = f"{c_name(d.name)} = {self.printer.print(d.expr, d)};"
            lines.append(f"{ind}{text}")
            count_level = f" if (plen <= {level}) fc[{self.funnel_layout()['level_undefined'] + level}]++;" \
                if self.emitting_funnel and level is not None else ""
            lines.append(f"{ind}if (uflag) {{ uflag = 0; if (!st->undefined++) st->undef_item = {item};{count_level} {on_reject} }}")
        if self.emitting_funnel:
            if not constraints:
                return lines
            tests = self.funnel_tests(constraints, ind + ("    " if guard_prefix is not None or prelude else ""), on_reject)
            guard = "plen == 0" if prelude else f"plen <= {guard_prefix}" if guard_prefix is not None else None
            if guard is None:
                return lines + tests
            return lines + [f"{ind}if ({guard}) {{"] + tests + [f"{ind}}}"]
        ordered = [c for c in constraints if c.name in breaks] + [c for c in constraints if c.name not in breaks]
        tests = []
        for c in ordered:
            item = self.item(f"{c.name}: {to_source(c.expr)}")
            rejection = self.printer.print(c.expr if c.rejects else ir.Not(c.expr), c)
            action = "break;" if c.name in breaks else on_reject
            tests.append(f"{ind}{{ int r = ({rejection}) != 0;")
            tests.append(f"{ind}  if (uflag) {{ uflag = 0; if (!st->undefined++) st->undef_item = {item}; {on_reject} }}")
            tests.append(f"{ind}  if (r) {action} }}")
        if tests and guard_prefix is not None:
            lines.append(f"{ind}if (plen <= {guard_prefix}) {{")
            lines += ["    " + t for t in tests]
            lines.append(f"{ind}}}")
        else:
            lines += tests
        return lines

    def hoisted_multiplier(self, ind, into: str | None = None, declare: bool = False) -> list[str]:
        """Count one configuration times the product of the hoisted parameters' domain sizes."""
        target = into or "mult"
        lines = [f"{ind}{{ {self.count_op('one', target)}"]
        for name in self.hoisted:
            p = self.model.parameter[name]
            i = f"h_{name}"
            lines.append(f"{ind}  {{ int64_t n_{i} = 0, start_{i} = 0, step_{i} = 1; (void)start_{i}; (void)step_{i};")
            lines += self.domain_setup(i, p, None, ind + "    ", count_only=True)
            lines.append(f"{ind}    {self.count_op('mul', target, f'n_{i}')} }}")
        if into is None:
            lines.append(f"{ind}  {self.count_op('add', 'mult')} }}")
        return lines

    def count_op(self, op: str, a: str, b: str = "") -> str:
        """A statement (or, for 'nonzero', a test) on counting-nest products: int64 arithmetic,
        or `ss_count` (wide_count_c) in a walk whose counts may pass 63 bits."""
        if not getattr(self, "wide_walk", False):
            overflow = f"{{ st->error = {ERROR_COUNT_OVERFLOW}; return; /*abort*/ }}"
            if self.checked and not self.emitting_funnel and op in ("mul", "add"):
                target = a if op == "mul" else "st->count"
                return f"if (__builtin_{op}_overflow({target}, {b or a}, &{target})) {overflow}"
            return {"one": f"int64_t {a} = 1;", "mul": f"{a} *= {b};", "add": f"st->count += {a};",
                    "nonzero": a}[op]
        return {"one": f"ss_count {a} = ss_cone();", "mul": f"{a} = ss_cmul({a}, {b});",
                "add": f"total_ = ss_cadd(total_, {a});", "nonzero": f"ss_cnonzero({a})"}[op]

    # ------------------------------------------------------------------------------ domains
    def buffer_size(self, parameter) -> int:
        size = self._size(parameter.domain, parameter)
        if size > MAX_BUFFER:
            raise UnsupportedConstruct("C", parameter.domain, f"its value list may hold {size} values "
                                       f"(more than {MAX_BUFFER})", owner=parameter, model=self.model)
        return max(size, 1)

    def _size(self, node, parameter) -> int:
        if isinstance(node, ir.Values):
            return len(node.items)
        if isinstance(node, ir.Range):
            i = self.bounds._domain(node, parameter)
            return 0 if i.empty else int(i.hi - i.lo + 1)
        if isinstance(node, ir.SetOp):
            left = self._size(node.left, parameter)
            return left + self._size(node.right, parameter) if node.op == "union" else left
        if isinstance(node, ir.IfDomain):
            return max(self._size(node.then, parameter), self._size(node.orelse, parameter))
        if isinstance(node, ir.Closure):
            return max((len(v) for v in self.closure_table(node, parameter).rows.values()), default=0)
        raise TypeError(type(node).__name__)

    def domain_setup(self, i, parameter, solve, ind, count_only=False, tighten=()) -> list[str]:
        """Set n_i (and start_i/step_i or buf_i) for the parameter's domain at this point."""
        item = self.item(f"domain of {parameter.name}")
        domain = parameter.domain
        lines = []
        count_level = f" fc[{self.funnel_layout()['level_undefined'] + i}]++;" \
            if self.emitting_funnel and isinstance(i, int) else ""
        undefined = f"if (uflag) {{ uflag = 0; if (!st->undefined++) st->undef_item = {item};{count_level} n_{i} = 0; }}"
        if isinstance(domain, ir.Range):
            lines += self.range_setup(i, domain, parameter, ind, tighten)
        elif count_only and not isinstance(domain, ir.Values):
            lines.append(f"{ind}int64_t tmp_{i}[{self.buffer_size(parameter)}];")
            lines += self.fill_buffer(f"tmp_{i}", f"n_{i}", domain, parameter, ind)
        elif count_only:
            lines.append(f"{ind}int64_t tmp_{i}[{max(len(domain.items), 1)}];")
            lines += self.fill_buffer(f"tmp_{i}", f"n_{i}", domain, parameter, ind)
        else:
            lines += self.fill_buffer(f"buf_{i}", f"n_{i}", domain, parameter, ind)
        lines.append(f"{ind}{undefined}")
        if solve:
            coefficient, value, constraint = solve
            k = self.printer.print(coefficient, constraint) if coefficient is not None else "INT64_C(1)"
            e = self.printer.print(value, constraint)
            member = self.membership(i, domain)
            lines += [
                f"{ind}if (n_{i} > 0) {{",
                f"{ind}    int64_t e_ = {e}, k_ = {k}, c_ = 0; int ok_ = !uflag && (e_ % k_ == 0);",
                f"{ind}    if (uflag) {{ uflag = 0; if (!st->undefined++) st->undef_item = {item}; }}",
                f"{ind}    if (ok_) {{ c_ = e_ / k_; ok_ = {member}; }}",
                f"{ind}    n_{i} = ok_ ? 1 : 0; buf_{i}[0] = c_;",
                f"{ind}}}",
            ]
        return lines

    def membership(self, i, domain) -> str:
        if isinstance(domain, ir.Range):
            return (f"(step_{i} > 0 ? (c_ >= start_{i} && c_ < start_{i} + n_{i} * step_{i}) "
                    f": (c_ <= start_{i} && c_ > start_{i} + n_{i} * step_{i})) && ((c_ - start_{i}) % step_{i} == 0)")
        return f"ss_member(c_, buf_{i}, n_{i})"

    def range_setup(self, i, domain: ir.Range, parameter, ind, tighten=()) -> list[str]:
        for part in (domain.start, domain.stop, domain.step):
            interval = self.bounds.expr(part)
            if not (-(2 ** 62) <= interval.lo and interval.hi <= 2 ** 62):
                raise UnsupportedConstruct("C", part, f"range bound values {interval} are too large for 64-bit loops",
                                           owner=parameter, model=self.model)
        p = self.printer
        start, stop, step = (p.print(e, parameter) for e in (domain.start, domain.stop, domain.step))
        caps = []
        for coefficient, bound, strict, constraint in tighten:
            e = p.print(bound, constraint)
            k = p.print(coefficient, constraint) if coefficient is not None else "INT64_C(1)"
            # v * k <= e  <=>  v <= floor(e / k);  v * k < e  <=>  v <= ceil(e / k) - 1   (k > 0)
            last = f"ss_fdiv({e}, {k}, u)" if not strict else f"(-ss_fdiv(-({e}), {k}, u) - 1)"
            caps.append(f"{ind}{{ int64_t cap_ = {last} + 1; if (step_{i} > 0 && cap_ < stop_) stop_ = cap_; }}")
        return [
            f"{ind}start_{i} = {start}; {{ int64_t stop_ = {stop}; step_{i} = {step};",
            *caps,
            f"{ind}if (!uflag && step_{i} == 0) {{ st->error = {ERROR_STEP_ZERO}; st->undef_item = {self.item(parameter.name)}; return; /*abort*/ }}",
            f"{ind}if (step_{i} > 0) n_{i} = start_{i} < stop_ ? (stop_ - start_{i} + step_{i} - 1) / step_{i} : 0;",
            f"{ind}else if (step_{i} < 0) n_{i} = start_{i} > stop_ ? (start_{i} - stop_ - step_{i} - 1) / (-step_{i}) : 0; }}",
        ]

    def fill_buffer(self, buf, count, node, parameter, ind) -> list[str]:
        """Code that sets `count` values of `node` into `buf` (ordered, duplicate-free)."""
        lines = [f"{ind}{count} = 0;"]
        lines += self._fill(buf, count, node, parameter, ind, dedupe=not _dedupe_free(node))
        return lines

    def _fill(self, buf, count, node, parameter, ind, dedupe) -> list[str]:
        p = self.printer
        push = (f"if (!ss_member(x_, {buf}, {count})) {buf}[{count}++] = x_;" if dedupe
                else f"{buf}[{count}++] = x_;")
        if isinstance(node, ir.Values):
            return [f"{ind}{{ int64_t x_ = {p.print(item, parameter)}; {push} }}" for item in node.items]
        if isinstance(node, ir.Range):
            start, stop, step = (p.print(e, parameter) for e in (node.start, node.stop, node.step))
            return [f"{ind}{{ int64_t a_ = {start}, b_ = {stop}, s_ = {step};",
                    f"{ind}  if (!uflag && s_ == 0) {{ st->error = {ERROR_STEP_ZERO}; st->undef_item = {self.item(parameter.name)}; return; /*abort*/ }}",
                    f"{ind}  if (!uflag) for (int64_t x_ = a_; s_ > 0 ? x_ < b_ : x_ > b_; x_ += s_) {{ {push} }} }}"]
        if isinstance(node, ir.IfDomain):
            return ([f"{ind}if ({p.print(node.cond, parameter)}) {{"]
                    + self._fill(buf, count, node.then, parameter, ind + "    ", dedupe)
                    + [f"{ind}}} else {{"]
                    + self._fill(buf, count, node.orelse, parameter, ind + "    ", dedupe)
                    + [f"{ind}}}"])
        if isinstance(node, ir.SetOp):
            size = self._size(node.right, parameter)
            lines = self._fill(buf, count, node.left, parameter, ind, True)
            other, other_n = f"r{id(node) % 100000}_", f"rn{id(node) % 100000}_"
            lines += [f"{ind}{{ int64_t {other}[{max(size, 1)}]; int64_t {other_n} = 0;"]
            lines += self._fill(other, other_n, node.right, parameter, ind + "  ", True)
            if node.op == "union":
                lines.append(f"{ind}  for (int64_t j_ = 0; j_ < {other_n}; j_++) {{ int64_t x_ = {other}[j_]; "
                             f"if (!ss_member(x_, {buf}, {count})) {buf}[{count}++] = x_; }} }}")
            else:
                keep = "" if node.op == "intersection" else "!"
                lines.append(f"{ind}  int64_t w_ = 0; for (int64_t j_ = 0; j_ < {count}; j_++) "
                             f"if ({keep}ss_member({buf}[j_], {other}, {other_n})) {buf}[w_++] = {buf}[j_];"
                             f" {count} = w_; }}")
            return lines
        if isinstance(node, ir.Closure):
            return self._fill_closure(buf, count, node, parameter, ind)
        raise TypeError(type(node).__name__)

    def closure_table(self, node: ir.Closure, parameter):
        """The closure's shared table (`solverspace.closures`), or a refusal naming why not."""
        try:
            return self.model.closures.table(node)
        except ClosureTableError as exc:
            raise UnsupportedConstruct("C", node, exc.message, owner=parameter, model=self.model, hint=exc.hint)

    def coded(self, value, node, parameter) -> int:
        """A value as the C code holds it (strings as their codes)."""
        if type(value) is str:
            return self.codes[value]
        if type(value) not in (int, bool):
            raise UnsupportedConstruct("C", node, f"an input of the closure takes the fraction {value}",
                                       owner=parameter, model=self.model)
        return int(value)

    def _fill_closure(self, buf, count, node, parameter, ind) -> list[str]:
        """Look the values up: each input's position among its (sorted, coded) values, then the
        combination's slice of the flat table."""
        table = self.closure_table(node, parameter)
        tid = len(self.tables)
        lines = [f"{ind}{{ int64_t ix_ = 0, at_; int ok_ = 1;"]
        sorted_inputs, stride = [], 1
        for k, (dep, values) in reversed(list(enumerate(zip(node.deps, table.inputs)))):
            pairs = sorted((self.coded(v, node, parameter), v) for v in values)
            sorted_inputs.insert(0, [v for _, v in pairs])
            codes = [c for c, _ in pairs]
            var = c_name(dep)
            if codes and codes == list(range(codes[0], codes[0] + len(codes))):  # dense: arithmetic
                lines.append(f"{ind}  at_ = {var} - ({codes[0]}); if (at_ < 0 || at_ >= {len(codes)}) ok_ = 0;"
                             f" else ix_ += at_ * {stride};")
            else:
                self.tables.append(f"static const int64_t tab{tid}_in{k}[] = {{{', '.join(map(str, codes or [0]))}}};")
                lines.append(f"{ind}  at_ = ss_find({var}, tab{tid}_in{k}, {len(codes)}); if (at_ < 0) ok_ = 0;"
                             f" else ix_ += at_ * {stride};")
            stride *= len(codes)
        offsets, flat = [0], []
        for combo in itertools.product(*sorted_inputs):
            flat += [self.coded(v, node, parameter) for v in table.rows.get(combo, ())]
            offsets.append(len(flat))
        self.tables.append(f"static const int64_t tab{tid}_values[] = {{{', '.join(map(str, flat or [0]))}}};")
        self.tables.append(f"static const int64_t tab{tid}_offsets[] = {{{', '.join(map(str, offsets))}}};")
        lines.append(f"{ind}  if (ok_) for (int64_t j_ = tab{tid}_offsets[ix_]; j_ < tab{tid}_offsets[ix_ + 1]; j_++) "
                     f"{buf}[{count}++] = tab{tid}_values[j_]; }}")
        return lines

    # ------------------------------------------------------------------------------ drivers
    def drivers(self) -> str:
        return r"""
static int ss_member(int64_t x, const int64_t *buf, int64_t n) {
    for (int64_t j = 0; j < n; j++) if (buf[j] == x) return 1;
    return 0;
}
/* position of x in an ascending array, or -1 */
static int64_t ss_find(int64_t x, const int64_t *sorted, int64_t n) {
    int64_t lo = 0, hi = n;
    while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (sorted[mid] < x) lo = mid + 1; else hi = mid; }
    return lo < n && sorted[lo] == x ? lo : -1;
}
int ss_max_prefix_depth(void) { return MAX_PREFIX_DEPTH; }
int ss_row_size(void) { return (int)sizeof(ss_row); }

int64_t ss_prefixes(int s, int64_t *out, int64_t cap, ss_stats *st) {
    memset(st, 0, sizeof *st);
    walk_count(NULL, 0, s, 2, NULL, out, cap, st, NULL ACC_NULL);
    return st->count;
}

static const int memo_widths[] = {MEMO_WIDTHS};
#define MEMO_COUNT MEMO_N
#define MEMO_SIZE (1u << MEMO_BITS_)

int ss_count_units(int s, const int64_t *prefixes, int64_t nunits, int64_t *counts, ss_stats *stats,
                   int nthreads, volatile int *cancel, int64_t *done) {
    ss_cancel_flag = cancel;
    #pragma omp parallel num_threads(nthreads)
    {
        ss_memo memo[MEMO_COUNT > 0 ? MEMO_COUNT : 1];
        for (int c = 0; c < MEMO_COUNT; c++) {
            memo[c].width = memo_widths[c];
            memo[c].keys = (int64_t *)malloc(sizeof(int64_t) * MEMO_SIZE * memo_widths[c]);
            memo[c].vals = (int64_t *)malloc(sizeof(int64_t) * MEMO_SIZE);
            memo[c].used = (unsigned char *)calloc(MEMO_SIZE, 1);
        }
        #pragma omp for schedule(dynamic, 1)
        for (int64_t unit = 0; unit < nunits; unit++) {
            if (*cancel) continue;
            ss_stats st; memset(&st, 0, sizeof st);
            STORE_COUNT stats[unit] = st;
            #pragma omp atomic
            (*done)++;
        }
        for (int c = 0; c < MEMO_COUNT; c++) { free(memo[c].keys); free(memo[c].vals); free(memo[c].used); }
    }
    ss_cancel_flag = NULL;
    return *cancel ? 1 : 0;
}

/* the count under a prefix of the counting order of any depth (no memo: its keys assume
   unfixed inner loops); `count` gets count_words words. For positions inside large units. */
void ss_count_prefix(const int64_t *prefix, int plen, int64_t *count, ss_stats *st) {
    memset(st, 0, sizeof *st);
    COUNT_PREFIX
}

/* fill only the listed units (for sampling and indexing), unit j at out_offsets[j] */
int ss_fill_list(int s, const int64_t *prefixes, const int64_t *units, int64_t nsel, const int64_t *out_offsets,
                 char *rows, int nthreads, volatile int *cancel, int64_t *done) {
    ss_cancel_flag = cancel;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int64_t j = 0; j < nsel; j++) {
        if (*cancel) continue;
        ss_stats st; memset(&st, 0, sizeof st);
        walk_list(prefixes + units[j] * s, s, -1, 1, (ss_row *)rows + out_offsets[j], NULL, 0, &st, NULL);
        #pragma omp atomic
        (*done)++;
    }
    ss_cancel_flag = NULL;
    return *cancel ? 1 : 0;
}

int ss_fill_units(int s, const int64_t *prefixes, int64_t u0, int64_t u1, const int64_t *offsets,
                  char *rows, int nthreads, volatile int *cancel, int64_t *done) {
    ss_cancel_flag = cancel;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int64_t unit = u0; unit < u1; unit++) {
        if (*cancel) continue;
        ss_stats st; memset(&st, 0, sizeof st);
        walk_list(prefixes + unit * s, s, -1, 1, (ss_row *)rows + (offsets[unit] - offsets[u0]), NULL, 0, &st, NULL);
        #pragma omp atomic
        (*done)++;
    }
    ss_cancel_flag = NULL;
    return *cancel ? 1 : 0;
}
""".replace("MAX_PREFIX_DEPTH", str(self.max_prefix_depth)).replace(
            "MEMO_WIDTHS", ", ".join(map(str, self.memo_widths)) or "0").replace(
            "MEMO_N", str(len(self.memo_widths))).replace("MEMO_BITS_", str(MEMO_BITS)).replace(
            "ACC_NULL", ", NULL" if self.count_words > 1 else "").replace("STORE_COUNT", self.store_count()).replace(
            "COUNT_PREFIX", "walk_count(prefix, plen, -1, 0, NULL, NULL, 0, st, NULL); count[0] = st->count;"
            if self.count_words == 1 else "ss_count acc_; memset(&acc_, 0, sizeof acc_);"
            " walk_count(prefix, plen, -1, 0, NULL, NULL, 0, st, NULL, &acc_); ss_cstore((uint64_t *)count, acc_);")

    def store_count(self) -> str:
        """Count one unit in ss_count_units: an int64 count, or `count_words` words (low first)."""
        call = "walk_count(prefixes + unit * s, s, -1, 0, NULL, NULL, 0, &st, MEMO_COUNT > 0 ? memo : NULL{});"
        if self.count_words == 1:
            return call.format("") + "\n            counts[unit] = st.count;"
        return ("ss_count acc_; memset(&acc_, 0, sizeof acc_);\n            " + call.format(", &acc_")
                + f"\n            ss_cstore((uint64_t *)counts + unit * {self.count_words}, acc_);")

    def funnel_driver(self) -> str:
        layout = self.funnel_layout()
        return r"""
int ss_funnel(int s, int64_t *fc, int nthreads, volatile int *cancel, int64_t *done) {
    ss_cancel_flag = cancel;
    ss_stats st; int64_t n = 1; int64_t *prefixes = NULL;
    if (s > 0) {
        int64_t *scratch = (int64_t *)calloc(FC_SIZE, sizeof(int64_t));
        memset(&st, 0, sizeof st);
        walk_funnel(NULL, 0, s, 2, NULL, NULL, 0, &st, NULL, scratch);
        free(scratch);
        n = st.count;
        prefixes = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n * s : 1));
        memset(&st, 0, sizeof st);
        walk_funnel(NULL, 0, s, 2, NULL, prefixes, n, &st, NULL, fc);  /* counts the outer loops */
    }
    int64_t total = 0;
    #pragma omp parallel num_threads(nthreads)
    {
        int64_t *local = (int64_t *)calloc(FC_SIZE, sizeof(int64_t)); int64_t mine = 0;
        #pragma omp for schedule(dynamic, 1)
        for (int64_t unit = 0; unit < n; unit++) {
            if (*cancel) continue;
            ss_stats u; memset(&u, 0, sizeof u);
            walk_funnel(prefixes ? prefixes + unit * s : NULL, s, -1, 0, NULL, NULL, 0, &u, NULL, local);
            mine += u.count;
            #pragma omp atomic
            (*done)++;
        }
        #pragma omp critical
        { for (int k = 0; k < FC_SIZE; k++) fc[k] += local[k]; total += mine; }
        free(local);
    }
    fc[FC_COUNT] = total;
    free(prefixes);
    ss_cancel_flag = NULL;
    return *cancel ? 1 : 0;
}
""".replace("FC_SIZE", str(layout["size"])).replace("FC_COUNT", str(layout["count"]))

    def csv_formatter(self, columns: list[Column]) -> str:
        decls, parts = [], []
        for j, c in enumerate(columns):
            if j:
                parts.append("        *p++ = sep;")
            if c.categorical is not None:
                names = ", ".join(_c_string(s) for s in c.categorical)
                decls.append(f"static const char *cat{j}[] = {{{names}}};")
                parts.append(f"        p = ss_put_field(p, cat{j}[r->{c_name(c.name)}], sep);")
            else:
                parts.append(f"        p += ss_itoa((int64_t)r->{c_name(c.name)}, p);")
        width = sum(max(21, max((2 * len(s.encode()) + 2 for s in (c.categorical or ())), default=0)) + 1
                    for c in columns) + 1
        return "\n".join(decls) + r"""
/* a categorical field, quoted as Python's csv module does (QUOTE_MINIMAL) for this separator */
static char *ss_put_field(char *p, const char *s, char sep) {
    int quote = 0;
    for (const char *q = s; *q; q++) if (*q == sep || *q == '"' || *q == '\n' || *q == '\r') { quote = 1; break; }
    if (!quote) { size_t l = strlen(s); memcpy(p, s, l); return p + l; }
    *p++ = '"';
    for (const char *q = s; *q; q++) { if (*q == '"') *p++ = '"'; *p++ = *q; }
    *p++ = '"';
    return p;
}
static int ss_itoa(int64_t v, char *p) {
    char tmp[24]; int n = 0; uint64_t x = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
    do { tmp[n++] = (char)('0' + x % 10); x /= 10; } while (x);
    int len = 0; if (v < 0) p[len++] = '-';
    while (n) p[len++] = tmp[--n];
    return len;
}
#define ROW_WIDTH """ + str(width) + r"""
int64_t ss_format_csv(const char *rows, int64_t nrows, char *buf, int64_t cap, int nthreads, char sep) {
    if (cap < nrows * ROW_WIDTH) return -1;
    int64_t parts = nthreads > 0 ? nthreads : 1;
    int64_t *lens = (int64_t *)calloc((size_t)parts, sizeof(int64_t));
    #pragma omp parallel for schedule(static, 1) num_threads(nthreads)
    for (int64_t part = 0; part < parts; part++) {
        int64_t lo = nrows * part / parts, hi = nrows * (part + 1) / parts;
        char *p = buf + lo * ROW_WIDTH;
        for (int64_t i = lo; i < hi; i++) {
        const ss_row *r = (const ss_row *)rows + i;
""" + "\n".join(parts) + r"""
        *p++ = '\n';
        }
        lens[part] = p - (buf + lo * ROW_WIDTH);
    }
    int64_t total = 0;
    for (int64_t part = 0; part < parts; part++) {
        int64_t lo = nrows * part / parts;
        memmove(buf + total, buf + lo * ROW_WIDTH, (size_t)lens[part]);
        total += lens[part];
    }
    free(lens);
    return total;
}
"""


def _c_string(s: str) -> str:
    """A C string literal for any text: printable ASCII as is, every other byte as a fixed
    three-digit octal escape (UTF-8)."""
    out = []
    for byte in s.encode():
        char = chr(byte)
        out.append(char if 32 <= byte < 127 and char not in '"\\?' else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _dedupe_free(node) -> bool:
    """Domains whose values cannot repeat (so no duplicate check is needed)."""
    return isinstance(node, ir.Range) or (isinstance(node, ir.IfDomain) and _dedupe_free(node.then)
                                          and _dedupe_free(node.orelse))


def _param_inputs(model):
    from solverspace.dag import DAG
    return DAG(model).parameter_inputs


def funnel_layout(plan: Plan) -> dict:
    """Funnel counter slots: per constraint (prelude first, then by loop) reached, rejected,
    undefined, alone; a constraints x constraints overlap matrix; per loop candidates and
    undefined; and the valid count."""
    names = [c.name for c in plan.prelude_constraints] + [c.name for level in plan.levels for c in level.constraints]
    n, levels = len(names), len(plan.levels)
    return {"constraints": names, "index": {name: g for g, name in enumerate(names)}, "overlap": 4 * n,
            "candidates": 4 * n + n * n, "level_undefined": 4 * n + n * n + levels,
            "count": 4 * n + n * n + 2 * levels, "size": 4 * n + n * n + 2 * levels + 1}
