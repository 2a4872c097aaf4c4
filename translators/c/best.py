"""`best` compiled: the K best configurations by an objective, by branch and bound in C.

Telamon's search (seed 003, Section 5) inside the generated enumerator. The walk is the listing
nest (`translators.c.nest`, the plan's order, its domains, placements and early breaks); what
differs is at the leaf and after each loop:

- leaf: the objective is computed exactly as an integer pair (numerator, denominator > 0;
  `translators.c.rational`) in `__int128` (`CWidePrinter`) and offered to the thread's sorted
  list of its K best (objective, then the tie order of `solverspace.analysis.objective.tie_key`);
- after loop i binds its value and its constraints admit it: where binding loop i can move the
  bound, the lower bound of the objective over every valid completion
  (`solverspace.analysis.bound_expr`, an expression over the names bound so far) is computed; a subtree
  is cut when its bound is above the threshold's objective, or equal to it while the parameters
  leading the tie order, all bound, already sort after the threshold's. Ties come out exactly
  as in every other engine.

The threshold is the earliest K-th best entry (objective, then tie order) any thread has: each
thread's own K-th best is at or after the global K-th best, so cutting after it is sound.
Threads publish theirs to a shared one (under an OpenMP critical section) and read it at the
start of every work unit; nothing is read torn. Work units are prefixes of the outer loops,
handed out dynamically (few: the prefix walk above them cuts nothing). With `prune` off the
same walk evaluates every valid configuration (the `exhaustive` engine). At the end the
threads' lists are merged in Python, which recomputes each candidate's objective exactly
(`Fraction`) and sorts by (objective, tie order).

The comparisons cross-multiply pairs, so every numerator and denominator of the objective and
of the bounds must fit 63 bits (products then fit 127): the objective is refused otherwise,
naming it; a level whose bound does not fit is not cut there.
"""
from __future__ import annotations

import time
from fractions import Fraction

from solverspace.lang import ir
from solverspace.core.errors import SolverspaceError
from solverspace.lang.evaluate import Undefined, compile_expr
from solverspace.lang.kinds import STR
from solverspace.analysis.objective import string_order, tie_key, tie_prefix_lengths

from .backend import call_c
from .build import space_name, waiting
from .plan_cache import load_search, search_key, store_search

UNITS_PER_THREAD = 16   # dynamic scheduling evens out the units; the prefix walk above them cuts nothing
from .codegen import CGenerator
from .expr import C_HELPERS, WIDE_HELPERS, CWidePrinter, c_name
from .nest import LoopNest
from .optimize import Options
from .rational import rational_pair
from .runtime import CANCEL_C, DOMAIN_LOOKUPS_C, ERROR_STEP_ZERO
from .shapes import build_shaped
from ..errors import UnsupportedConstruct
from ..order_slots import refuse_orders
from solverspace.analysis.bound_expr import lower_bound_expr
from solverspace.analysis.lower_bound import PrefixBound
from solverspace.analysis.search import SearchStats, objective_expr

FITS = 2 ** 63   # numerators and denominators of compared pairs: |x| < 2**63

CDEF_BEST = """
typedef struct { int64_t count; int64_t undefined; int32_t error; int32_t undef_item; } ss_stats;
int64_t ss_best_prefixes(int s, int64_t *out, int64_t cap, ss_stats *st, int64_t *visited);
int ss_best_units(int s, const int64_t *prefixes, int64_t nunits, int k, int prune, int64_t *values,
                  int64_t *filled, int64_t *visited, int64_t *pruned, int64_t *evaluated, ss_stats *stats,
                  int nthreads, volatile int *cancel, int64_t *done);
int ss_max_prefix_depth(void);
int ss_row_size(void);
"""


class BestGenerator:
    """The C source of one compiled search: the plan, the objective to *minimise* (a maximised
    one is negated by the caller) and its lower bounds per loop level."""

    def __init__(self, plan, expr: ir.Expr):
        refuse_orders(plan, "C", "search (best)")
        self.plan, self.model = plan, plan.model
        self.expr = absent_strings(expr, plan.analysis.codes)
        base = CGenerator(plan, Options())        # the listing nest's printer, domains and levels
        self.base = base
        analysis = plan.analysis
        self.wide = CWidePrinter(self.model, analysis.bounds, analysis.codes, analysis.rational)
        self.names = self.model.parameter_names

    # ------------------------------------------------------------------------------ pieces
    def pair(self, expr: ir.Expr) -> tuple[str, str] | None:
        """(numerator, denominator) of `expr` as wide C, or None where a part may not fit 63
        bits (the comparisons multiply two of them)."""
        num, den = rational_pair(expr, self.model, self.plan.analysis.rational)
        bounds = self.plan.analysis.bounds
        for part in (num, den):
            interval = bounds.expr(part)
            if not interval.empty and not (-FITS < interval.lo and interval.hi < FITS):
                return None
        return self.wide.print(num), self.wide.print(den)

    def objective_pair(self) -> tuple[str, str]:
        pair = self.pair(self.expr)
        if pair is None:
            raise UnsupportedConstruct("C", self.expr, "the objective's numerator or denominator may pass 63 bits",
                                       model=self.model,
                                       hint="scale its constants down (the ranking is the same), or use "
                                            "--engine bnb-reference (exact Python arithmetic)")
        return pair

    def level_bounds(self, slots: dict[int, tuple[list, list]]) -> dict[int, tuple[str, str]]:
        """Per loop position whose binding can move the bound: the bound's wide C pair, over the
        names the nest has computed there (`slots`: where it places each derived value)."""
        moves = PrefixBound(self.plan, self.expr).moves
        known = {d.name for d in slots[-1][0]}
        result = {}
        for i, name in enumerate(self.plan.order):
            known |= {name} | {d.name for d in slots[i][0]}
            if not moves[i]:
                continue
            lower = lower_bound_expr(self.model, self.expr, frozenset(known))
            if lower is None:
                continue
            try:
                pair = self.pair(lower)
            except UnsupportedConstruct:
                pair = None      # e.g. an intermediate past 127 bits: no cut at this level
            if pair is not None:
                result[i] = pair
        return result

    def tie_compare(self) -> tuple[list[str], str]:
        """Rank tables of the categorical parameters, and C comparing two entries' values in
        the tie order (definition order; strings by first appearance in the space file)."""
        order = string_order(self.model)
        by_code = sorted(self.plan.analysis.codes.items(), key=lambda item: item[1])
        ranks = [order.get(s, len(order) + code) for s, code in by_code]
        tables, lines = [], []
        for j, name in enumerate(self.names):
            if self.model.kinds.of(name) == STR:
                tables.append(f"static const int64_t ss_rank{j}[] = {{{', '.join(map(str, ranks)) or '0'}}};")
            x, y = self.ranked(j, f"a->v[{j}]"), self.ranked(j, f"b->v[{j}]")
            lines.append(f"    if ({x} != {y}) return {x} < {y};")
        return tables, "\n".join(lines)

    # ------------------------------------------------------------------------------ the program
    def generate(self) -> tuple[str, int]:
        """(C source, loop count)."""
        base, plan = self.base, self.plan
        order = list(plan.order)
        depth = max(len(order) - 1, 0)
        nest = LoopNest(plan, base.options, base.printer, base.domains, base.item, levels=base.levels,
                        hoisted=(), max_prefix_depth=depth, count_words=1, checked=False, columns=[])
        num, den = self.objective_pair()
        values = " ".join(f"c_.v[{j}] = {c_name(n)};" for j, n in enumerate(self.names))
        leaf = ["bs->evaluated++;",
                f"{{ __int128 on_ = {num}, od_ = {den};",
                "  if (uflag) uflag = 0;",
                "  else if (!bs->has_thr || on_ * bs->thr.den <= bs->thr.num * od_) {",
                f"    ss_entry c_; c_.num = on_; c_.den = od_; {values}",
                "    if (!bs->has_thr || !ss_before(&bs->thr, &c_)) ss_offer(bs, &c_); } }"]
        slots = nest.slots(order)
        after, bound_vars = self.level_tests(order, slots)
        buffers: list[tuple[int, int]] = []
        body = nest.nest(list(range(len(order))), order, slots, buffers, leaf, after)
        lines = ["static void walk_best(const int64_t *prefix, int plen, int stop, int64_t *prefix_out, int64_t cap,",
                 "                      ss_stats *st, ss_best *bs) {",
                 "    int uflag = 0; int *u = &uflag; (void)u; (void)prefix_out; (void)cap;",
                 "    uint64_t tick_ = 0; (void)tick_;",
                 "    " + nest.declarations() + bound_vars]
        lines += nest.derived_and_constraints(slots[-1], None, "    ", on_reject="return;", prelude=True)
        lines += ["    " + x for x in body]
        lines.append("    done: ;")
        walk = nest.close_walk(lines, buffers, order)
        tables, ties = self.tie_compare()
        levels = max(len(order), 1)
        source = "\n".join([
            "#include <stdint.h>", "#include <stdlib.h>", "#include <string.h>", "#include <omp.h>",
            C_HELPERS, WIDE_HELPERS,
            "static int ss_member(int64_t x, const int64_t *buf, int64_t n);",
            "static int64_t ss_find(int64_t x, const int64_t *sorted, int64_t n);",
            CANCEL_C,
            "typedef struct { int64_t count; int64_t undefined; int32_t error; int32_t undef_item; } ss_stats;",
            STATE_C.replace("NPARAMS", str(max(len(self.names), 1))).replace("NLEVELS", str(levels)),
            *tables,
            "static int ss_before(const ss_entry *a, const ss_entry *b) {",
            "    __int128 l = a->num * b->den, r = b->num * a->den;",
            "    if (l != r) return l < r;",
            ties,
            "    return 0;",
            "}",
            OFFER_C,
            *base.domains.tables,
            walk,
            DRIVERS_C.replace("NPARAMS", str(len(self.names))).replace("NLEVELS", str(levels)).replace(
                "MAX_PREFIX_DEPTH", str(depth)),
        ]) + "\n"
        return source, len(order)

    def level_tests(self, order: list[str], slots) -> tuple[dict[int, list[str]], str]:
        """Per loop position, the lines after its constraints: the visit count; where the
        bound moves, the bound (kept per level in `bn_i / bd_i`, `bv_i` 0 where undefined); and
        where the bound moves or the tie prefix grows, the cut. A subtree is cut when its bound
        is above the threshold's objective, or equal to it while the parameters leading the tie
        order, all bound, already compare after the threshold's (`tie_after`)."""
        bounds = self.level_bounds(slots)
        leading = tie_prefix_lengths(self.names, order)
        after, current, declared = {}, None, []
        for i in range(len(order)):
            lines = [f"if (plen <= {i}) bs->visited[{i}]++;"]
            grew = leading[i] > (leading[i - 1] if i else 0)
            if i in bounds:
                bn, bd = bounds[i]
                declared.append(f"__int128 bn_{i} = 0, bd_{i} = 1; int bv_{i} = 0;")
                lines += [f"if (bs->prune) {{ bn_{i} = {bn}; bd_{i} = {bd}; bv_{i} = !uflag; uflag = 0; }}"]
                current = i
            if current is not None and (i in bounds or grew):
                j = current
                tie = f" || (c_ == 0 && {self.tie_after(leading[i])})" if leading[i] else ""
                lines += [f"if (bs->prune && bs->has_thr && bv_{j} && plen <= {i + 1}) {{",
                          f"    __int128 l_ = bn_{j} * bs->thr.den, r_ = bs->thr.num * bd_{j}; int c_ = (l_ > r_) - (l_ < r_);",
                          f"    if (c_ > 0{tie}) {{ bs->pruned[{i}]++; continue; }} }}"]
            after[i] = lines
        return after, (" " + " ".join(declared)) if declared else ""

    def tie_after(self, length: int) -> str:
        """C: the first `length` parameters of the tie order, as bound in the walk, compare
        after the threshold's."""
        text = "0"
        for j in reversed(range(length)):
            x, y = self.ranked(j, c_name(self.names[j])), self.ranked(j, f"bs->thr.v[{j}]")
            text = f"({x} != {y} ? {x} > {y} : {text})"
        return text

    def ranked(self, j: int, value: str) -> str:
        """A parameter's value in the tie order: categorical codes through their rank table."""
        return f"ss_rank{j}[{value}]" if self.model.kinds.of(self.names[j]) == STR else value


def absent_strings(node, codes: dict[str, int]):
    """`node` with every string no value of the space takes (one only an objective names) as
    the integer -1: a string never equals an integer, and a value never equals an absent
    string, so every comparison keeps its answer, and C needs no code for it."""
    if isinstance(node, ir.Const):
        return ir.Const(-1) if type(node.value) is str and node.value not in codes else node
    return ir.map_children(node, lambda child: absent_strings(child, codes))


STATE_C = r"""
typedef struct { __int128 num, den; int64_t v[NPARAMS]; } ss_entry;
/* one thread's search: its K best (sorted), its threshold, its statistics per loop level */
typedef struct {
    ss_entry *e; int n, k, prune, has_thr;
    ss_entry thr;   /* an entry at or after the global K-th best: what ranks after it is cut */
    int64_t visited[NLEVELS], pruned[NLEVELS], evaluated;
} ss_best;
static int ss_g_has = 0;
static ss_entry ss_g_thr;
"""

OFFER_C = r"""
/* the earliest K-th best of any thread: shared under a critical section, never read torn */
static void ss_publish(ss_best *bs) {
    #pragma omp critical(ss_best_threshold)
    {
        if (!ss_g_has || ss_before(&bs->thr, &ss_g_thr)) { ss_g_has = 1; ss_g_thr = bs->thr; }
    }
}
static void ss_refresh(ss_best *bs) {
    #pragma omp critical(ss_best_threshold)
    {
        if (ss_g_has && (!bs->has_thr || ss_before(&ss_g_thr, &bs->thr))) { bs->has_thr = 1; bs->thr = ss_g_thr; }
    }
}
static void ss_offer(ss_best *bs, const ss_entry *c) {
    if (bs->n == bs->k && !ss_before(c, &bs->e[bs->n - 1])) return;
    int j = bs->n < bs->k ? bs->n++ : bs->n - 1;
    while (j > 0 && ss_before(c, &bs->e[j - 1])) { bs->e[j] = bs->e[j - 1]; j--; }
    bs->e[j] = *c;
    if (bs->n == bs->k && (!bs->has_thr || ss_before(&bs->e[bs->k - 1], &bs->thr))) {
        bs->has_thr = 1; bs->thr = bs->e[bs->k - 1];
        if (bs->prune) ss_publish(bs);
    }
}
"""

DRIVERS_C = DOMAIN_LOOKUPS_C + r"""int ss_max_prefix_depth(void) { return MAX_PREFIX_DEPTH; }
int ss_row_size(void) { return 0; }   /* c.build's load check calls it */

/* the work units: prefixes of depth s (the walk stops there), with the prefixes visited above */
int64_t ss_best_prefixes(int s, int64_t *out, int64_t cap, ss_stats *st, int64_t *visited) {
    ss_best bs; memset(&bs, 0, sizeof bs);
    memset(st, 0, sizeof *st);
    walk_best(NULL, 0, s, out, cap, st, &bs);
    for (int i = 0; i < NLEVELS; i++) visited[i] = bs.visited[i];
    return st->count;
}

/* every unit searched; thread t's list goes to values[t * k * NPARAMS ...], its length to filled[t] */
int ss_best_units(int s, const int64_t *prefixes, int64_t nunits, int k, int prune, int64_t *values,
                  int64_t *filled, int64_t *visited, int64_t *pruned, int64_t *evaluated, ss_stats *stats,
                  int nthreads, volatile int *cancel, int64_t *done) {
    ss_cancel_flag = cancel;
    ss_g_has = 0;
    #pragma omp parallel num_threads(nthreads)
    {
        int t = omp_get_thread_num();
        ss_best bs; memset(&bs, 0, sizeof bs);
        bs.k = k; bs.prune = prune;
        bs.e = (ss_entry *)malloc(sizeof(ss_entry) * (size_t)k);
        #pragma omp for schedule(dynamic, 1)
        for (int64_t unit = 0; unit < nunits; unit++) {
            if (*cancel) continue;
            if (prune) ss_refresh(&bs);
            ss_stats st; memset(&st, 0, sizeof st);
            walk_best(prefixes + unit * s, s, -1, NULL, 0, &st, &bs);
            stats[unit] = st;
            #pragma omp atomic
            (*done)++;
        }
        for (int j = 0; j < bs.n; j++)
            for (int p = 0; p < NPARAMS; p++) values[((int64_t)t * k + j) * NPARAMS + p] = bs.e[j].v[p];
        filled[t] = bs.n;
        #pragma omp critical(ss_best_stats)
        {
            for (int i = 0; i < NLEVELS; i++) { visited[i] += bs.visited[i]; pruned[i] += bs.pruned[i]; }
            *evaluated += bs.evaluated;
        }
        free(bs.e);
    }
    ss_cancel_flag = NULL;
    return *cancel ? 1 : 0;
}
"""


#: The compiled search allocates each thread's list of `top` entries up front (C: `ss_entry`, two
#: 128-bit integers and the values; Python: the values again): `top` is cut to the space's size
#: bound, and a list past this many bytes in all is refused (Space.best then searches in Python).
MAX_KEPT_BYTES = 1 << 30
ENTRY_BYTES = 32


class CompiledBest:
    """One compiled search of a plan for an objective (minimised; `maximize` negates it)."""

    def __init__(self, plan, expr: ir.Expr, maximize: bool, threads: int | None = None):
        import os
        self.plan, self.expr, self.maximize = plan, expr, maximize
        self.threads = threads or os.cpu_count() or 1
        key = search_key(plan, expr, maximize)
        fields = load_search(key) if key else None
        if fields is None:
            with waiting(f"planning the search of {space_name(plan.model.source)} (the objective's bound per loop) "
                         "and generating its C program"):
                fields = self.generate(plan, expr, maximize)
            if key:
                store_search(key, fields)
        self.source, self.levels, self.items = fields["source"], int(fields["levels"]), list(fields["items"])
        self.size_bound = int(fields["size_bound"])   # no more configurations than this to keep
        self.strings = {int(code): s for code, s in fields["strings"].items()}   # categorical codes -> values
        self.shaped = build_shaped(self.source, CDEF_BEST)
        self.lib, self.ffi = self.shaped.module.lib, self.shaped.module.ffi

    @staticmethod
    def generate(plan, expr: ir.Expr, maximize: bool) -> dict:
        """What a compiled search needs from the generator, as JSON values (`plan_cache.store_search`
        remembers them): the C source, the loop count, the names of its undefined items, the
        space's size bound and the categorical codes' values."""
        generator = BestGenerator(plan, ir.Neg(expr) if maximize else expr)
        source, levels = generator.generate()
        return {"source": source, "levels": levels, "items": list(generator.base.items),
                "size_bound": generator.base.count_bound(),
                "strings": {str(code): s for s, code in plan.analysis.codes.items()}}

    def units(self, cancel):
        """(depth, number of units, prefix buffer, prefixes visited per level above the units)."""
        ffi, lib = self.ffi, self.lib
        st = ffi.new("ss_stats *")
        visited = ffi.new("int64_t[]", max(self.levels, 1))
        target = UNITS_PER_THREAD * self.threads   # few: a unit's walk cuts at every level below it
        depth, count = 0, 1
        for s in range(1, lib.ss_max_prefix_depth() + 1):
            count = call_c(self.shaped, lib.ss_best_prefixes, s, ffi.NULL, 0, st, visited, cancel=cancel)
            self._check(st)
            depth = s
            if count >= target:
                break
        prefixes = ffi.new("int64_t[]", max(count, 1) * max(depth, 1))
        if depth:
            call_c(self.shaped, lib.ss_best_prefixes, depth, prefixes, count, st, visited, cancel=cancel)
        return depth, (count if depth else 1), prefixes, [visited[i] if depth else 0 for i in range(self.levels)]

    def _check(self, st) -> None:
        if st.error == ERROR_STEP_ZERO:
            raise SolverspaceError(f"parameter {self.items[st.undef_item]!r}: range step is 0",
                                   hint="a range step must be a non-zero integer")

    def kept(self, top: int) -> int:
        """How many configurations each thread keeps: `top`, but never more than the space holds
        (the product of the largest domain sizes bounds it); refused, by name, where the threads'
        lists (allocated up front: threads x kept x width) would pass `MAX_KEPT_BYTES`."""
        kept = min(top, self.size_bound)
        width = max(len(self.plan.model.parameter_names), 1)
        need = self.threads * kept * (ENTRY_BYTES + 16 * width)
        if need > MAX_KEPT_BYTES:
            raise UnsupportedConstruct(
                "C", self.expr, f"--top {top} keeps up to {kept} configurations per thread, about "
                f"{need / 2 ** 30:.1f} GiB for {self.threads} thread(s), more than the "
                f"{MAX_KEPT_BYTES // 2 ** 30} GiB the compiled search allocates",
                model=self.plan.model, hint="lower --top or --threads, or use --engine bnb-reference, "
                                            "which keeps only the configurations it finds")
        return kept

    def run(self, top: int, prune: bool, time_limit: float | None = None, progress=None):
        """(candidates: configurations, visited per level, pruned per level, evaluated, exact)."""
        ffi, lib = self.ffi, self.lib
        top = self.kept(top)
        cancel = ffi.new("int[1]")
        start = time.perf_counter()
        depth, n, prefixes, visited_above = self.units(cancel)
        names = self.plan.model.parameter_names
        width = max(len(names), 1)
        values = ffi.new("int64_t[]", self.threads * top * width)
        filled = ffi.new("int64_t[]", self.threads)
        visited = ffi.new("int64_t[]", max(self.levels, 1))
        pruned = ffi.new("int64_t[]", max(self.levels, 1))
        evaluated = ffi.new("int64_t[1]")
        stats = ffi.new("ss_stats[]", n)
        done = ffi.new("int64_t[1]")
        stopped = []

        def watch(finished, total):
            if progress:
                progress(finished, total)
            if time_limit is not None and time.perf_counter() - start > time_limit and not cancel[0]:
                cancel[0] = 1
                stopped.append(True)

        call_c(self.shaped, lib.ss_best_units, depth, prefixes, n, top, int(prune), values, filled, visited, pruned,
               evaluated, stats, self.threads, cancel, done, progress=watch, total=n, done=done, cancel=cancel)
        for u in range(n):
            if stats[u].error:
                self._check(stats[u])
        strings = self.strings
        kinds = self.plan.model.kinds
        candidates = []
        for t in range(self.threads):
            for j in range(filled[t]):
                row = [values[(t * top + j) * width + p] for p in range(len(names))]
                candidates.append({n: (strings[v] if kinds.of(n) == STR else v) for n, v in zip(names, row)})
        visited_levels = [visited_above[i] + visited[i] for i in range(self.levels)]
        return (candidates, visited_levels, [pruned[i] for i in range(self.levels)], evaluated[0],
                not stopped and not cancel[0])


def rank_candidates(plan, expr: ir.Expr, maximize: bool, candidates: list[dict], top: int) -> list[tuple]:
    """The `top` best of the threads' candidates: each objective recomputed exactly in Python
    (with its derived values), sorted by (objective, tie order); [(value, configuration)]."""
    objective = compile_expr(expr)
    derived = [(d.name, compile_expr(d.expr)) for d in (*plan.prelude_derived,
                                                        *(d for level in plan.levels for d in level.derived))]
    tie = tie_key(plan.model)
    ranked = []
    for config in candidates:
        env = dict(config)
        try:
            for name, fn in derived:
                env[name] = fn(env)
            value = objective(env)
        except Undefined:
            raise SolverspaceError(f"internal error: the compiled search offered {config}, where the objective "
                                   "is undefined in Python") from None
        value = int(value) if type(value) is bool else value
        key = -value if maximize else value
        ranked.append((Fraction(key), tie(config), value, config))
    ranked.sort(key=lambda item: item[:2])
    return [(value, config) for _, _, value, config in ranked[:top]]


def best_compiled(plan, objective: str, *, maximize: bool = True, top: int = 10, prune: bool = True,
                  time_limit: float | None = None, threads: int | None = None, progress=None, expr=None):
    """`best` by the compiled search: branch and bound (`prune`) or every valid configuration
    evaluated in C. A `BestResult` whose `search` holds the statistics per loop level."""
    from solverspace.analysis.objective import BestResult, Ranked
    start = time.perf_counter()
    expr = objective_expr(plan.model, objective, top, expr)
    search = CompiledBest(plan, expr, maximize, threads)
    candidates, visited, pruned, evaluated, exact = search.run(top, prune, time_limit, progress)
    result = BestResult(objective, maximize, engine="bnb" if prune else "exhaustive",
                        search=SearchStats(plan.order, visited, pruned, evaluated))
    result.exact = exact
    for rank, (value, config) in enumerate(rank_candidates(plan, expr, maximize, candidates, top), 1):
        result.ranked.append(Ranked(rank, value, config))
    result.seconds = time.perf_counter() - start
    return result


__all__ = ["BestGenerator", "CDEF_BEST", "CompiledBest", "best_compiled", "rank_candidates"]
