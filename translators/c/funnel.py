"""Funnel counters: a funnel build (`CEnumerator(funnel=True)`, literal plan) compiles a third
nest, `walk_funnel`, that evaluates every constraint of a loop (no short-circuit between them)
and counts, per constraint, how often it was reached, rejected, undefined and the only rejection,
which constraints reject together, and per loop the candidates and undefined domains. This
module lays out those counters (`funnel_layout`) and writes their C (`FunnelCounters`).
"""
from __future__ import annotations

from solverspace.lang import ir
from solverspace.analysis.plan import Plan

CDEF_FUNNEL = "int ss_funnel(int s, int64_t *fc, int nthreads, volatile int *cancel, int64_t *done);\n"


def funnel_layout(plan: Plan) -> dict:
    """Funnel counter slots: per constraint (prelude first, then by loop) reached, rejected,
    undefined, alone; a constraints x constraints overlap matrix; per loop candidates and
    undefined; and the valid count."""
    names = [c.name for c in plan.prelude_constraints] + [c.name for level in plan.levels for c in level.constraints]
    n, levels = len(names), len(plan.levels)
    return {"constraints": names, "index": {name: g for g, name in enumerate(names)}, "overlap": 4 * n,
            "candidates": 4 * n + n * n, "level_undefined": 4 * n + n * n + levels,
            "count": 4 * n + n * n + 2 * levels, "size": 4 * n + n * n + 2 * levels + 1}


class FunnelCounters:
    """The C that counts into `fc` (the layout's slots) inside `walk_funnel`, and `ss_funnel`.
    `item` numbers a name in the build's item list (the generator's, shared by all its parts)."""

    def __init__(self, plan: Plan, printer, item):
        self.printer = printer
        self.item = item
        self.layout = funnel_layout(plan)

    def candidate(self, level: int) -> str:
        """The statement counting one candidate value of loop `level`."""
        return f"fc[{self.layout['candidates'] + level}]++;"

    def level_undefined(self, level: int) -> str:
        """The statement counting one undefined domain or derived value at loop `level`."""
        return f"fc[{self.layout['level_undefined'] + level}]++;"

    def tests(self, constraints, ind, on_reject) -> list[str]:
        """All of a loop's constraints evaluated (no short-circuit between them), counted into fc."""
        layout = self.layout
        index = layout["index"]
        label = f"seq_done_{self.item('funnel')}"  # the item number makes the label unique
        lines = [f"{ind}{{ uint64_t rej_ = 0, und_ = 0; int r;"]
        for bit, c in enumerate(constraints):
            rejection = self.printer.print(c.expr if c.rejects else ir.Not(c.expr), c)
            lines.append(f"{ind}  uflag = 0; r = ({rejection}) != 0;"
                         f" if (uflag) und_ |= (1ULL << {bit}); else if (r) rej_ |= (1ULL << {bit}); uflag = 0;")
        for bit, c in enumerate(constraints):  # sequential funnel in test order
            g = index[c.name]
            lines.append(f"{ind}  fc[{4 * g}]++;")
            lines.append(f"{ind}  if (und_ & (1ULL << {bit})) fc[{4 * g + 2}]++; else if (rej_ & (1ULL << {bit})) fc[{4 * g + 1}]++;")
            lines.append(f"{ind}  if ((und_ | rej_) & (1ULL << {bit})) goto {label};")
        lines.append(f"{ind}  {label}: ;")
        for bit, c in enumerate(constraints):
            g = index[c.name]
            lines.append(f"{ind}  if (rej_ == (1ULL << {bit}) && !und_) fc[{4 * g + 3}]++;")
            for bit2, c2 in enumerate(constraints[bit + 1:], bit + 1):
                slot = layout["overlap"] + g * len(layout["constraints"]) + index[c2.name]
                lines.append(f"{ind}  if ((rej_ >> {bit} & 1) && (rej_ >> {bit2} & 1)) fc[{slot}]++;")
        lines.append(f"{ind}  if (rej_ | und_) {on_reject} }}")
        return lines

    def driver(self) -> str:
        """`ss_funnel`: the outer loops counted once while finding the units, then the units in
        parallel, each thread into its own counters, summed at the end."""
        layout = self.layout
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
