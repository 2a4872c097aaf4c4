"""Repair compiled: the valid configuration nearest to a point of the index box, by branch and
bound in C.

The walk is the listing nest (`translators.c.nest`: the plan's order, its domains, derived values
and constraints, undefined operations rejecting as everywhere else) run from each work unit's
prefix, with these changes:

- at each loop the values are visited by increasing key (|i - t|, i), where i is the value's
  parameter index (its position in the parameter's value list, `analysis.value_lists`) and t the
  target's index: for a range (and a buffer whose values are monotone) by two pointers moving
  away from the target's value, since a number's index grows with the value; otherwise (strings,
  buffers in any order) the members are sorted once per visit. A value not in the value list, or
  outside the current box, has no valid completion there and is skipped. The constraints' early
  breaks (`break` optimization) are off: they assume the domain's order;
- the lower bound of a subtree is the distance of the loops bound so far plus, for every later
  loop, the distance from its target index to the *box* of the current prefix (per parameter the
  smallest and largest index its valid configurations take). A loop stops (`break`) at the first
  value whose bound is above the incumbent's distance (or equal to it with a key that cannot come
  first in the tie order): its later values have keys at least as large;
- the boxes form the *box tree*, found once by one compiled pass over the space (`ss_tree_build`,
  the listing walk of each unit in parallel): one box per unit and one per value of each of the
  next `TREE_LEVELS` loops (a node), the nodes in flat arrays with their children's ranges; a
  value with no node has no valid completion. A space past `TREE_ROWS` configurations gets no
  tree and no pass: each live unit's box is then the whole value lists (sound, looser);
- a later parameter whose domain is a range known at a loop (its bounds read only loops bound
  there and derived values placed by then) adds the distance to that range's indices within the
  box; an empty one ends the subtree.

Units are searched by increasing box distance, and the search stops at the first whose box
distance is above the incumbent's. Within a unit, leaves are reached in the lexicographic order
of the per-loop keys; across units an incumbent is replaced by a strictly nearer configuration,
or by one at the same distance whose keys compare smaller: the answer is the smallest by
(distance, (|i_p - t_p|, i_p) for p in plan order), the tie order of `solverspace.moves.repair`.

One module per plan serves every query: the target's indices, the value lists and the box tree
are runtime inputs (`ss_nearest`). A query runs in one thread, on the C thread (`call_c`), so
Ctrl-C stops it.
"""
from __future__ import annotations

from solverspace.lang import ir
from solverspace.lang.kinds import STR
from solverspace.core.errors import SolverspaceError

from .backend import call_c
from .codegen import CGenerator
from .expr import C_HELPERS, c_name
from .nest import LoopNest
from .optimize import Options
from .runtime import CANCEL_C, CANCEL_EVERY, DOMAIN_LOOKUPS_C, ERROR_STEP_ZERO
from .shapes import build_shaped
from ..order_slots import refuse_orders

__all__ = ["CDEF_NEAREST", "LOOKUP_SPAN", "CompiledNearest", "NearestGenerator", "NearestNest"]

LOOKUP_SPAN = 1 << 20   # a numeric value list spanning at most this many integers is looked up by offset
TREE_LEVELS = 2         # the box tree: loops below the units' prefix with a box per value
TREE_ROWS = 1 << 29     # spaces up to this size get the box tree (one compiled pass); past it, boxes of the
                        # whole value lists (sound, loose; nothing walked: 2**64 configurations are not)

CDEF_NEAREST = """
typedef BOX ss_box;
typedef struct { int64_t count; int64_t undefined; int32_t error; int32_t undef_item; } ss_stats;
void *ss_tree_build(int s, const int64_t *prefixes, int64_t nunits, const int64_t *live, const int64_t *meta,
                    const int64_t *table, int64_t *sizes, ss_stats *stats, int nthreads, volatile int *cancel,
                    int64_t *done);
void ss_tree_copy(void *handle, int64_t nunits, ss_box *ulo, ss_box *uhi, int64_t *urange, int64_t *value,
                  int64_t *range, ss_box *lo, ss_box *hi, int64_t *ascending);
void ss_tree_free(void *handle, int64_t nunits);
int64_t ss_nearest(int s, const int64_t *prefixes, int64_t nunits, const ss_box *ulo, const ss_box *uhi,
                   const int64_t *urange, const int64_t *value, const int64_t *range, const ss_box *lo,
                   const ss_box *hi, const int64_t *ascending, const int64_t *meta, const int64_t *table,
                   const int64_t *target, const int64_t *target_value, int64_t bound, int tree, int64_t *out,
                   ss_stats *st, int64_t *visited, volatile int *cancel);
int ss_max_prefix_depth(void);
int ss_row_size(void);
"""

# meta per parameter (6 int64): kind (0 numbers by offset, 1 numbers sorted, 2 codes by offset), the
# smallest value (offset kinds), where its lookup table starts in `table`, its length, where its sorted
# values start in `table` (numbers), their number
SEARCH_C = r"""
static const int ss_column[NLEVELS] = {COLUMNS};
typedef struct { int64_t key; int64_t k; } ss_pair;
typedef struct {
    const int64_t *meta, *table, *target, *tvalue;
    int64_t best, *out, visited[NLEVELS]; int has;         /* the incumbent: distance, values, whether there is one */
    const ss_box *bl[NLEVELS + 1], *bh[NLEVELS + 1];   /* per loop: the box its values lie in (column order) */
    int64_t rest[NLEVELS];                        /* per loop: the box distance of the loops after it */
    const int64_t *urange, *value, *range, *asc;  /* the box tree (ss_tree_build) */
    const ss_box *lo, *hi;
    int64_t unit, cur[TREE]; int E;               /* the unit searched, the tree's nodes on the path, its levels */
    int64_t ckey[NLEVELS], bkey[NLEVELS];         /* per loop: the current key, the incumbent's */
    ss_pair *scratch[NLEVELS]; int64_t cap[NLEVELS];
} ss_near;

/* the parameter index of value v of parameter j, or -1 when v is not in its value list */
static inline int64_t ss_index(const int64_t *meta, const int64_t *table, int j, int64_t v) {
    const int64_t *m = meta + 6 * j;
    if (m[0] != 1) { int64_t r = v - m[1]; return (r < 0 || r >= m[3]) ? -1 : table[m[2] + r]; }
    return ss_find(v, table + m[2], m[3]);
}

/* how much the box distance of parameter j understates its distance when its value lies in
   [vmin, vmax] (a range domain known before its loop); -1 when no value of its list in the box does */
static int64_t ss_range_excess(const ss_near *ns, int level, int j, int64_t vmin, int64_t vmax) {
    const int64_t *m = ns->meta + 6 * j, *v = ns->table + m[4];
    int64_t a = 0, b = m[5];
    while (a < b) { int64_t mid = a + (b - a) / 2; if (v[mid] < vmin) a = mid + 1; else b = mid; }
    int64_t lo = a; b = m[5];
    while (a < b) { int64_t mid = a + (b - a) / 2; if (v[mid] <= vmax) a = mid + 1; else b = mid; }
    int64_t hi = a - 1, t = ns->target[j], bl = ns->bl[level][j], bh = ns->bh[level][j];
    if (lo < bl) lo = bl;
    if (hi > bh) hi = bh;
    if (lo > hi) return -1;
    int64_t d = t < lo ? lo - t : t > hi ? t - hi : 0;
    int64_t e = t < bl ? bl - t : t > bh ? t - bh : 0;
    return d - e;
}

static int ss_pair_cmp(const void *a, const void *b) {
    int64_t x = ((const ss_pair *)a)->key, y = ((const ss_pair *)b)->key;
    return (x > y) - (x < y);
}

/* whether a subtree at distance exactly the incumbent's can still hold a configuration before it
   in the tie order: its keys down to loop i compare at or before the incumbent's */
static int ss_tie_open(const ss_near *ns, int i) {
    if (!ns->has) return 0;
    for (int q = 0; q <= i; q++) if (ns->ckey[q] != ns->bkey[q]) return ns->ckey[q] < ns->bkey[q];
    return 1;
}

/* the values of one loop by increasing key (|i - t|, i) within the unit's box: a prefix's value
   (mode 2), two pointers over values monotone in the index (mode 1), or the members sorted (mode 0) */
typedef struct {
    int mode, j, rev; int64_t n, t, tv, a, s, lo, hi; const int64_t *buf;
    int64_t l, r, xl, xr;  /* next candidates left (< target value) and right (>= it); x: index, -2 unknown */
    ss_pair *p; int64_t m, pos;
} ss_it;

static inline int64_t ss_it_value(const ss_it *it, int64_t q) {   /* q-th value in ascending order */
    int64_t k = it->rev ? it->n - 1 - q : q;
    return it->buf ? it->buf[k] : it->a + k * it->s;
}

static void ss_it_init(ss_it *it, ss_near *ns, int level, int j, int fixed, int64_t value, const int64_t *buf,
                       int64_t start, int64_t step, int64_t n, int64_t pd) {
    it->j = j; it->n = n; it->t = ns->target[j]; it->tv = ns->tvalue[j]; it->buf = buf; it->rev = 0;
    it->a = start; it->s = step; it->lo = ns->bl[level][j]; it->hi = ns->bh[level][j];
    if (fixed) {   /* a loop the unit's prefix binds */
        int64_t x = ss_index(ns->meta, ns->table, j, value);
        it->mode = 2; it->m = (x >= 0 && n > 0) ? 1 : 0; it->pos = 0; it->xl = x;
        return;
    }
    int monotone = ns->meta[6 * j] != 2;
    if (monotone && buf) {
        int up = 1, down = 1;
        for (int64_t q = 1; q < n && (up || down); q++) { if (buf[q] <= buf[q - 1]) up = 0; if (buf[q] >= buf[q - 1]) down = 0; }
        if (!up && down) it->rev = 1; else if (!up) monotone = 0;
    } else if (monotone && step < 0) it->rev = 1;
    if (monotone) {
        it->mode = 1;
        int64_t lo = 0, hi = n;   /* the first q whose value is >= the target's value */
        while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (ss_it_value(it, mid) < it->tv) lo = mid + 1; else hi = mid; }
        it->l = lo - 1; it->r = lo; it->xl = -2; it->xr = -2;
        return;
    }
    it->mode = 0; it->pos = 0; it->m = 0;
    if (n > ns->cap[level]) {
        int64_t cap = n > 2 * ns->cap[level] ? n : 2 * ns->cap[level];
        free(ns->scratch[level]);
        ns->scratch[level] = (ss_pair *)malloc(sizeof(ss_pair) * (size_t)cap);
        ns->cap[level] = cap;
    }
    ss_pair *p = ns->scratch[level];
    int64_t limit = ns->best - ns->rest[level];
    for (int64_t k = 0; k < n; k++) {
        int64_t x = ss_index(ns->meta, ns->table, j, buf ? buf[k] : start + k * step);
        if (x < it->lo || x > it->hi) continue;   /* -1 (not in the value list) included */
        int64_t d = x > it->t ? x - it->t : it->t - x;
        if (pd + d > limit) continue;
        p[it->m].key = (d << 32) | x; p[it->m].k = k; it->m++;
    }
    if (it->m < 16) {
        for (int64_t q = 1; q < it->m; q++) {
            ss_pair e = p[q]; int64_t w = q;
            while (w > 0 && p[w - 1].key > e.key) { p[w] = p[w - 1]; w--; }
            p[w] = e;
        }
    } else qsort(p, (size_t)it->m, sizeof(ss_pair), ss_pair_cmp);
    it->p = p;
}

/* the tree node of loop `level` (tree level L) with `value` under the current path, or -1 (no valid
   completion); its box then bounds the loops after it: the boxes and the rest distances are set */
static int64_t ss_tree_enter(ss_near *ns, int level, int L, int64_t value, int64_t pd) {
    const int64_t *r = L == 0 ? ns->urange + 2 * ns->unit : ns->range + 2 * ns->cur[L - 1];
    int64_t a = r[0], b = r[1], node = -1;
    if (ns->asc[L]) {
        while (a < b) { int64_t mid = a + (b - a) / 2; if (ns->value[mid] < value) a = mid + 1; else b = mid; }
        if (a < r[1] && ns->value[a] == value) node = a;
    } else {
        for (; a < b; a++) if (ns->value[a] == value) { node = a; break; }
    }
    if (node < 0) return -1;
    ns->cur[L] = node;
    const ss_box *l = ns->lo + node * NPARAMS, *h = ns->hi + node * NPARAMS;
    int64_t sum = 0;
    for (int k = NLEVELS - 1; k > level; k--) {
        ns->rest[k] = sum;
        int j = ss_column[k]; int64_t t = ns->target[j];
        sum += t < l[j] ? l[j] - t : t > h[j] ? t - h[j] : 0;
    }
    for (int k = level + 1; k <= NLEVELS; k++) { ns->bl[k] = l; ns->bh[k] = h; }
    return pd + sum;
}

/* the next value: its position k in the domain and its key; 0 when none is left */
static inline int ss_it_next(ss_it *it, const ss_near *ns, int64_t *k, int64_t *key) {
    if (it->mode == 0) {
        if (it->pos >= it->m) return 0;
        *k = it->p[it->pos].k; *key = it->p[it->pos].key; it->pos++;
        return 1;
    }
    if (it->mode == 2) {
        if (it->pos >= it->m) return 0;
        int64_t d = it->xl > it->t ? it->xl - it->t : it->t - it->xl;
        *k = 0; *key = (d << 32) | it->xl; it->pos++;
        return 1;
    }
    while (it->xl == -2) {   /* left: values below the target's, indices below t, descending */
        if (it->l < 0) { it->xl = -1; break; }
        int64_t x = ss_index(ns->meta, ns->table, it->j, ss_it_value(it, it->l));
        if (x >= 0 && x < it->lo) { it->xl = -1; it->l = -1; break; }
        if (x >= 0 && x <= it->hi) it->xl = x; else it->l--;
    }
    while (it->xr == -2) {   /* right: indices at or above t, ascending */
        if (it->r >= it->n) { it->xr = -1; break; }
        int64_t x = ss_index(ns->meta, ns->table, it->j, ss_it_value(it, it->r));
        if (x > it->hi) { it->xr = -1; it->r = it->n; break; }
        if (x >= 0 && x >= it->lo) it->xr = x; else it->r++;
    }
    if (it->xl < 0 && it->xr < 0) return 0;
    int64_t q, x;
    if (it->xr < 0 || (it->xl >= 0 && it->t - it->xl <= it->xr - it->t)) {   /* equal distance: the smaller index */
        q = it->l; x = it->xl; it->l--; it->xl = -2;
    } else {
        q = it->r; x = it->xr; it->r++; it->xr = -2;
    }
    int64_t d = x > it->t ? x - it->t : it->t - x;
    *k = it->rev ? it->n - 1 - q : q; *key = (d << 32) | x;
    return 1;
}
"""

TREE_C = r"""
int ss_max_prefix_depth(void) { return 0; }
int ss_row_size(void) { return 0; }   /* c.build's load check calls it */

/* ---------------------------------------------------------------- the box tree
   Per unit, and per value of each of the `E` loops below its prefix (a node: a prefix one loop
   longer), the box of parameter indices its valid configurations take. Built per unit by the
   listing walk: a node is pushed when its loop admits a value, closed when the walk moves past it
   (its box merged into its parent's, or the node dropped when it has no valid configuration). */
typedef struct {
    int E; int64_t size[TREE], cap[TREE]; int open[TREE];
    int64_t *val[TREE], *first[TREE], *last[TREE];   /* children: [first, last) at the next level */
    ss_box *lo[TREE], *hi[TREE];
    ss_box ulo[NPARAMS], uhi[NPARAMS];
} ss_tree_local;

static void ss_box_merge(ss_box *lo, ss_box *hi, const ss_box *l, const ss_box *h) {
    for (int j = 0; j < NPARAMS; j++) { if (l[j] < lo[j]) lo[j] = l[j]; if (h[j] > hi[j]) hi[j] = h[j]; }
}

static void ss_tree_close(ss_tree_local *tl, int K) {
    int64_t node = tl->size[K] - 1;
    tl->last[K][node] = K + 1 < tl->E ? tl->size[K + 1] : 0;
    tl->open[K] = 0;
    ss_box *l = tl->lo[K] + node * NPARAMS, *h = tl->hi[K] + node * NPARAMS;
    if (l[0] > h[0]) { tl->size[K]--; return; }   /* no valid configuration below it */
    if (K == 0) ss_box_merge(tl->ulo, tl->uhi, l, h);
    else { int64_t parent = tl->size[K - 1] - 1;
           ss_box_merge(tl->lo[K - 1] + parent * NPARAMS, tl->hi[K - 1] + parent * NPARAMS, l, h); }
}

static void ss_tree_resize(ss_tree_local *tl, int L, int64_t cap) {   /* level L's arrays hold cap nodes */
    tl->val[L] = (int64_t *)realloc(tl->val[L], sizeof(int64_t) * (size_t)cap);
    tl->first[L] = (int64_t *)realloc(tl->first[L], sizeof(int64_t) * (size_t)cap);
    tl->last[L] = (int64_t *)realloc(tl->last[L], sizeof(int64_t) * (size_t)cap);
    tl->lo[L] = (ss_box *)realloc(tl->lo[L], sizeof(ss_box) * (size_t)(cap * NPARAMS));
    tl->hi[L] = (ss_box *)realloc(tl->hi[L], sizeof(ss_box) * (size_t)(cap * NPARAMS));
    tl->cap[L] = cap;
}

static void ss_tree_push(ss_tree_local *tl, int L, int64_t value) {
    for (int K = tl->E - 1; K >= L; K--) if (tl->open[K]) ss_tree_close(tl, K);
    if (tl->size[L] == tl->cap[L]) ss_tree_resize(tl, L, tl->cap[L] ? tl->cap[L] + tl->cap[L] / 2 + 8 : 8);
    int64_t node = tl->size[L]++;
    tl->val[L][node] = value;
    tl->first[L][node] = L + 1 < tl->E ? tl->size[L + 1] : 0;
    for (int j = 0; j < NPARAMS; j++) { tl->lo[L][node * NPARAMS + j] = SS_BOX_EMPTY; tl->hi[L][node * NPARAMS + j] = -1; }
    tl->open[L] = 1;
}

static void ss_tree_fit(ss_tree_local *tl) {   /* a finished unit's arrays cut to their sizes */
    for (int L = 0; L < tl->E; L++) {
        int64_t n = tl->size[L] > 0 ? tl->size[L] : 1;
        if (tl->cap[L] > n) ss_tree_resize(tl, L, n);
    }
}

static void ss_tree_leaf(ss_tree_local *tl, const int64_t *meta, const int64_t *table, const int64_t *v) {
    ss_box *lo = tl->ulo, *hi = tl->uhi;
    if (tl->E) { int64_t node = tl->size[tl->E - 1] - 1;
                 lo = tl->lo[tl->E - 1] + node * NPARAMS; hi = tl->hi[tl->E - 1] + node * NPARAMS; }
    for (int j = 0; j < NPARAMS; j++) {
        ss_box x = (ss_box)ss_index(meta, table, j, v[j]);
        if (x < lo[j]) lo[j] = x;
        if (x > hi[j]) hi[j] = x;
    }
}

"""

TREE_DRIVERS_C = r"""
/* every unit's tree (sizes[u * TREE + L]: its nodes at level L); a handle for ss_tree_copy */
void *ss_tree_build(int s, const int64_t *prefixes, int64_t nunits, const int64_t *live, const int64_t *meta,
                    const int64_t *table, int64_t *sizes, ss_stats *stats, int nthreads, volatile int *cancel,
                    int64_t *done) {
    ss_tree_local *all = (ss_tree_local *)calloc((size_t)(nunits > 0 ? nunits : 1), sizeof(ss_tree_local));
    int E = TREE < NLEVELS - s ? TREE : NLEVELS - s;
    ss_cancel_flag = cancel;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int64_t unit = 0; unit < nunits; unit++) {
        if (*cancel) continue;
        ss_stats st; memset(&st, 0, sizeof st);
        ss_tree_local *tl = all + unit;
        tl->E = E;
        for (int j = 0; j < NPARAMS; j++) { tl->ulo[j] = SS_BOX_EMPTY; tl->uhi[j] = -1; }
        if (live[unit]) {   /* a unit without valid configurations has an empty box and no nodes */
            walk_box(prefixes + unit * s, s, &st, meta, table, tl);
            for (int K = E - 1; K >= 0; K--) if (tl->open[K]) ss_tree_close(tl, K);
            ss_tree_fit(tl);
        }
        for (int L = 0; L < TREE; L++) sizes[unit * TREE + L] = L < E ? tl->size[L] : 0;
        stats[unit] = st;
        #pragma omp atomic
        (*done)++;
    }
    ss_cancel_flag = NULL;
    return all;
}

void ss_tree_free(void *handle, int64_t nunits) {
    ss_tree_local *all = (ss_tree_local *)handle;
    for (int64_t u = 0; u < nunits; u++)
        for (int L = 0; L < TREE; L++) {
            free(all[u].val[L]); free(all[u].first[L]); free(all[u].last[L]); free(all[u].lo[L]); free(all[u].hi[L]);
        }
    free(all);
}

/* the units' trees into flat arrays, level after level, units in order at each level (then freed):
   unit boxes, units' ranges of level-0 nodes, nodes' values, ranges of children, boxes; per level
   whether every node's children are in ascending value order */
void ss_tree_copy(void *handle, int64_t nunits, ss_box *ulo, ss_box *uhi, int64_t *urange, int64_t *value,
                  int64_t *range, ss_box *lo, ss_box *hi, int64_t *ascending) {
    ss_tree_local *all = (ss_tree_local *)handle;
    int64_t base[TREE + 1]; base[0] = 0;
    for (int L = 0; L < TREE; L++) { base[L + 1] = base[L]; for (int64_t u = 0; u < nunits; u++) base[L + 1] += all[u].size[L]; }
    int64_t at[TREE + 1];
    for (int L = 0; L <= TREE; L++) at[L] = base[L];
    for (int L = 0; L < TREE; L++) ascending[L] = 1;
    for (int64_t u = 0; u < nunits; u++) {
        ss_tree_local *tl = all + u;
        memcpy(ulo + u * NPARAMS, tl->ulo, sizeof(ss_box) * NPARAMS);
        memcpy(uhi + u * NPARAMS, tl->uhi, sizeof(ss_box) * NPARAMS);
        urange[2 * u] = at[0]; urange[2 * u + 1] = at[0] + (tl->E ? tl->size[0] : 0);
        for (int L = 0; L < tl->E; L++) {
            for (int64_t k = 0; k < tl->size[L]; k++) {
                int64_t g = at[L] + k;
                value[g] = tl->val[L][k];
                range[2 * g] = at[L + 1] + tl->first[L][k]; range[2 * g + 1] = at[L + 1] + tl->last[L][k];
                memcpy(lo + g * NPARAMS, tl->lo[L] + k * NPARAMS, sizeof(ss_box) * NPARAMS);
                memcpy(hi + g * NPARAMS, tl->hi[L] + k * NPARAMS, sizeof(ss_box) * NPARAMS);
                if (L + 1 < tl->E)
                    for (int64_t c = tl->first[L][k] + 1; c < tl->last[L][k]; c++)
                        if (tl->val[L + 1][c] <= tl->val[L + 1][c - 1]) ascending[L + 1] = 0;
            }
            if (L == 0) for (int64_t c = 1; c < tl->size[0]; c++) if (tl->val[0][c] <= tl->val[0][c - 1]) ascending[0] = 0;
        }
        for (int L = 0; L < tl->E; L++) at[L] += tl->size[L];
        for (int L = 0; L < TREE; L++) {   /* copied: this unit's arrays go now (the peak holds one copy) */
            free(tl->val[L]); free(tl->first[L]); free(tl->last[L]); free(tl->lo[L]); free(tl->hi[L]);
            tl->val[L] = tl->first[L] = tl->last[L] = NULL; tl->lo[L] = tl->hi[L] = NULL;
        }
    }
    free(all);
}

"""

SEARCH_DRIVER_C = r"""
/* ---------------------------------------------------------------- the search */
typedef struct { int64_t lb; int64_t unit; } ss_lbu;
static int ss_lbu_cmp(const void *a, const void *b) {
    const ss_lbu *x = (const ss_lbu *)a, *y = (const ss_lbu *)b;
    if (x->lb != y->lb) return (x->lb > y->lb) - (x->lb < y->lb);
    return (x->unit > y->unit) - (x->unit < y->unit);
}

/* the nearest valid configuration strictly within `bound`: its distance (its values in out[]), or -1.
   Units by increasing box distance; each searched from its prefix with the loops' keys in order */
int64_t ss_nearest(int s, const int64_t *prefixes, int64_t nunits, const ss_box *ulo, const ss_box *uhi,
                   const int64_t *urange, const int64_t *value, const int64_t *range, const ss_box *lo,
                   const ss_box *hi, const int64_t *ascending, const int64_t *meta, const int64_t *table,
                   const int64_t *target, const int64_t *target_value, int64_t bound, int tree, int64_t *out,
                   ss_stats *st, int64_t *visited, volatile int *cancel) {
    ss_near ns; memset(&ns, 0, sizeof ns);
    ns.meta = meta; ns.table = table; ns.target = target; ns.tvalue = target_value;
    ns.best = bound; ns.out = out;
    ns.urange = urange; ns.value = value; ns.range = range; ns.lo = lo; ns.hi = hi; ns.asc = ascending;
    ns.E = TREE < NLEVELS - s ? TREE : NLEVELS - s;   /* the tree's levels below the units (tree: 0 without one) */
    if (tree < ns.E) ns.E = tree;
    memset(st, 0, sizeof *st);
    ss_cancel_flag = cancel;
    ss_lbu *order = (ss_lbu *)malloc(sizeof(ss_lbu) * (size_t)(nunits > 0 ? nunits : 1));
    int64_t live = 0;
    for (int64_t u = 0; u < nunits; u++) {
        const ss_box *l = ulo + u * NPARAMS, *h = uhi + u * NPARAMS;
        int64_t lb = 0;
        for (int j = 0; j < NPARAMS; j++) {
            if (l[j] > h[j]) { lb = -1; break; }
            lb += target[j] < l[j] ? l[j] - target[j] : target[j] > h[j] ? target[j] - h[j] : 0;
        }
        if (lb >= 0) { order[live].lb = lb; order[live].unit = u; live++; }
    }
    qsort(order, (size_t)live, sizeof(ss_lbu), ss_lbu_cmp);
    for (int64_t q = 0; q < live && !ss_cancelled(); q++) {
        if (order[q].lb > ns.best || (order[q].lb == ns.best && !ns.has)) break;
        int64_t u = order[q].unit;
        const ss_box *l = ulo + u * NPARAMS, *h = uhi + u * NPARAMS;
        ns.unit = u;
        for (int k = 0; k <= NLEVELS; k++) { ns.bl[k] = l; ns.bh[k] = h; }
        int64_t rest = 0;
        for (int i = NLEVELS - 1; i >= 0; i--) {
            ns.rest[i] = rest;
            int j = ss_column[i];
            rest += target[j] < l[j] ? l[j] - target[j] : target[j] > h[j] ? target[j] - h[j] : 0;
        }
        ss_stats one; memset(&one, 0, sizeof one);
        walk_nearest(prefixes + u * s, s, &one, &ns);
        if (one.error) { *st = one; break; }
        st->undefined += one.undefined;
    }
    free(order);
    ss_cancel_flag = NULL;
    for (int i = 0; i < NLEVELS; i++) free(ns.scratch[i]);
    for (int i = 0; i < NLEVELS; i++) visited[i] = ns.visited[i];
    return ns.has ? ns.best : -1;
}
"""


class NearestNest(LoopNest):
    """The listing nest with each loop's values in key order and the cut at its head."""

    def __init__(self, *args, columns_of: dict[str, int], **kwargs):
        super().__init__(*args, **kwargs)
        self.columns_of = columns_of
        self.previous = "0"   # the partial distance before the loop being written

    def cancel_checks(self, i: int, name: str, ind: str) -> list[str]:
        index = next(k for k, level in enumerate(self.plan.levels) if level.parameter.name == name)
        parameter = self.plan.levels[index].parameter
        solve = self.levels[index].solve if "solve" in self.options else None
        buffered = not isinstance(parameter.domain, ir.Range) or solve
        source = f"buf_{i}" if buffered else "NULL"
        previous, self.previous = self.previous, f"pd_{i}"
        return [
            f"{ind}    ss_it it_{i}; ss_it_init(&it_{i}, ns, {i}, {self.columns_of[name]}, plen > {i}, "
            f"plen > {i} ? prefix[{i}] : 0, {source}, start_{i}, step_{i}, n_{i}, {previous});",
            f"{ind}    int64_t k_{i}, key_{i};",
            f"{ind}    while (ss_it_next(&it_{i}, ns, &k_{i}, &key_{i})) {{",
            f"{ind}        int64_t pd_{i} = {previous} + (key_{i} >> 32);",
            f"{ind}        ns->ckey[{i}] = key_{i};",
            f"{ind}        {{ int64_t lb_ = pd_{i} + ns->rest[{i}];",
            f"{ind}          if (lb_ > ns->best || (lb_ == ns->best && !ss_tie_open(ns, {i}))) break; }}",
            f"{ind}        ns->visited[{i}]++;",
            f"{ind}        if (__builtin_expect(++tick_ >= {CANCEL_EVERY}u, 0)) {{ tick_ = 0; if (ss_cancelled()) goto done; }}",
        ]


class NearestGenerator:
    """The C source of one plan's nearest search and its unit boxes."""

    def __init__(self, plan, box: str = "int32_t"):
        refuse_orders(plan, "C", "repair")
        self.box = box                     # the C type of the boxes' indices: int16_t or int32_t
        self.plan, self.model = plan, plan.model
        self.base = CGenerator(plan, Options.parse(disable=("break",)))   # the listing nest's printer, domains, levels
        self.names = self.model.parameter_names

    def walk(self, nest: LoopNest, header: list[str], leaf: list[str], after=None) -> str:
        """A walk over the plan's order from a prefix; `header`: its two signature lines."""
        order = list(self.plan.order)
        slots = nest.slots(order)
        buffers: list[tuple[int, int]] = []
        body = nest.nest(list(range(len(order))), order, slots, buffers, leaf, after(slots) if after else None)
        lines = [*header,
                 "    int uflag = 0; int *u = &uflag; (void)u; (void)prefix; (void)plen;",
                 "    uint64_t tick_ = 0; (void)tick_;",
                 "    " + nest.declarations()]
        lines += nest.derived_and_constraints(slots[-1], None, "    ", on_reject="return;", prelude=True)
        lines += ["    " + x for x in body]
        lines.append("    done: ;")
        return nest.close_walk(lines, buffers, order)

    def domain_cuts(self, slots) -> dict[int, list[str]]:
        """Per loop i, the lines after its constraints that tighten the bound:

        - below the unit's prefix, on the box tree's levels: the node of the value bound (none:
          no valid completion, the value is skipped), whose box bounds the loops after it;
        - the later parameters whose domain is a range known there (its start, stop and step
          read only loops up to i and derived values placed by then): such a parameter takes a
          value of that range, so its distance is at least the distance to the range's indices
          within the box; a range with no such index ends the subtree. Only the integers'
          ranges; a domain whose expressions are undefined there gives no cut."""
        model, order = self.model, list(self.plan.order)
        rational = self.plan.analysis.rational
        columns_of = {name: j for j, name in enumerate(self.names)}
        printer = self.base.printer
        known = {d.name for d in slots[-1][0]}
        result = {}
        for i, name in enumerate(order):
            known |= {name} | {d.name for d in slots[i][0]}
            lines = [f"if ({i} >= plen && {i} - plen < ns->E) {{",
                     f"  int64_t lb_ = ss_tree_enter(ns, {i}, {i} - plen, {c_name(name)}, pd_{i});",
                     f"  if (lb_ < 0 || lb_ > ns->best || (lb_ == ns->best && !ss_tie_open(ns, {i}))) continue; }}"]
            cuts = []
            for later in order[i + 1:]:
                parameter = model.parameter[later]
                domain = parameter.domain
                if not isinstance(domain, ir.Range) or model.kinds.of(later) == STR:
                    continue
                names = ir.refs(domain)
                if not names or not names <= known or names & rational:
                    continue
                start, stop, step = (printer.print(e, parameter) for e in (domain.start, domain.stop, domain.step))
                cuts += [f"{{ int64_t s0_ = {start}, s1_ = {stop}, sp_ = {step};",
                         "  if (uflag) uflag = 0;",
                         "  else if (sp_ != 0) {",
                         "    int64_t n_ = sp_ > 0 ? (s0_ < s1_ ? (s1_ - s0_ + sp_ - 1) / sp_ : 0)",
                         "                         : (s0_ > s1_ ? (s0_ - s1_ - sp_ - 1) / (-sp_) : 0);",
                         "    if (n_ == 0) continue;",
                         "    int64_t e_ = s0_ + (n_ - 1) * sp_;",
                         f"    int64_t x_ = ss_range_excess(ns, {i + 1}, {columns_of[later]}, sp_ > 0 ? s0_ : e_, "
                         "sp_ > 0 ? e_ : s0_);",
                         "    if (x_ < 0) continue;",
                         "    dx_ += x_; } }"]
            if cuts:
                lines += ["{ int64_t dx_ = 0;", *("  " + x for x in cuts),
                          f"  int64_t lb_ = pd_{i} + ns->rest[{i}] + dx_;",
                          f"  if (dx_ && (lb_ > ns->best || (lb_ == ns->best && !ss_tie_open(ns, {i})))) continue; }}"]
            result[i] = lines
        return result

    def tree_pushes(self, slots) -> dict[int, list[str]]:
        """Per loop i, the box tree's push of its value where i is one of the tree's levels."""
        return {i: [f"if ({i} >= plen && {i} - plen < tl->E) ss_tree_push(tl, {i} - plen, {c_name(name)});"]
                for i, name in enumerate(self.plan.order)}

    def generate(self) -> str:
        base, plan = self.base, self.plan
        order = list(plan.order)
        columns_of = {name: j for j, name in enumerate(self.names)}
        common = dict(levels=base.levels, hoisted=(), max_prefix_depth=0, count_words=1, checked=False, columns=[])
        nearest = NearestNest(plan, base.options, base.printer, base.domains, base.item, columns_of=columns_of,
                              **common)
        last = len(order) - 1
        record = " ".join(f"ns->out[{j}] = {c_name(n)};" for j, n in enumerate(self.names))
        leaf = [f"if (pd_{last} < ns->best || ss_tie_less(ns)) {{",
                f"    ns->best = pd_{last}; ns->has = 1; memcpy(ns->bkey, ns->ckey, sizeof ns->bkey); {record} }}"]
        walk_nearest = self.walk(nearest, ["static void walk_nearest(const int64_t *prefix, int plen, ss_stats *st,",
                                           "                         ss_near *ns) {"], leaf, self.domain_cuts)
        boxes = LoopNest(plan, base.options, base.printer, base.domains, base.item, **common)
        values = ", ".join(c_name(n) for n in self.names) or "0"
        leaf = [f"{{ const int64_t v_[] = {{{values}}}; ss_tree_leaf(tl, meta, table, v_); }}"]
        walk_box = self.walk(boxes, ["static void walk_box(const int64_t *prefix, int plen, ss_stats *st, "
                                     "const int64_t *meta,", "                     const int64_t *table, "
                                     "ss_tree_local *tl) {"], leaf, self.tree_pushes)
        levels, width = max(len(order), 1), max(len(self.names), 1)
        columns = ", ".join(str(columns_of[name]) for name in order) or "0"

        def fill(text):
            return text.replace("NLEVELS", str(levels)).replace("NPARAMS", str(width)).replace(
                "COLUMNS", columns).replace("TREE", str(TREE_LEVELS))
        return "\n".join([
            "#include <stdint.h>", "#include <stdlib.h>", "#include <string.h>", "#include <omp.h>",
            C_HELPERS, DOMAIN_LOOKUPS_C, CANCEL_C,
            "typedef struct { int64_t count; int64_t undefined; int32_t error; int32_t undef_item; } ss_stats;",
            f"typedef {self.box} ss_box;   /* a parameter index in a box */",
            f"#define SS_BOX_EMPTY {'INT16_MAX' if self.box == 'int16_t' else 'INT32_MAX'}",
            fill(SEARCH_C), fill(TIE_LESS_C),
            *base.domains.tables,
            walk_nearest,
            fill(TREE_C),
            walk_box,
            fill(TREE_DRIVERS_C),
            fill(SEARCH_DRIVER_C),
        ]) + "\n"


TIE_LESS_C = r"""
/* whether the current configuration's keys come strictly before the incumbent's */
static int ss_tie_less(const ss_near *ns) {
    if (!ns->has) return 0;
    for (int q = 0; q < NLEVELS; q++) if (ns->ckey[q] != ns->bkey[q]) return ns->ckey[q] < ns->bkey[q];
    return 0;
}
"""


class CompiledNearest:
    """The compiled nearest search of one plan over the work units of its enumerator, with the
    value lists (column order, each sorted as `analysis.value_lists` sorts them) as its tables.
    The units' boxes of parameter indices are found once, by one compiled pass over the space."""

    def __init__(self, plan, lists: list[list], units, threads: int | None = None):
        import os
        import numpy as np
        self.plan = plan
        self.threads = threads or os.cpu_count() or 1
        box = "int16_t" if max((len(values) for values in lists), default=0) < 1 << 15 else "int32_t"
        self.box = np.int16 if box == "int16_t" else np.int32
        generator = NearestGenerator(plan, box)
        source = generator.generate()
        self.items = generator.base.items
        self.shaped = build_shaped(source, CDEF_NEAREST.replace("typedef BOX", f"typedef {box}"))
        self.lib, self.ffi = self.shaped.module.lib, self.shaped.module.ffi
        model = plan.model
        codes = plan.analysis.codes
        self.strings = {code: text for text, code in codes.items()}
        self.names = model.parameter_names
        self.categorical = [model.kinds.of(name) == STR for name in self.names]
        self.lists = lists
        meta, tables, start = [], [], 0
        for values, categorical in zip(lists, self.categorical):
            ordered = np.array([] if categorical else values, dtype=np.int64)   # numbers: ascending
            if categorical:       # codes -> index
                table = np.full(max(len(codes), 1), -1, dtype=np.int64)
                for index, value in enumerate(values):
                    table[codes[value]] = index
                kind, smallest = 2, 0
            elif values and values[-1] - values[0] < LOOKUP_SPAN:   # value - smallest -> index
                table = np.full(values[-1] - values[0] + 1, -1, dtype=np.int64)
                table[ordered - values[0]] = np.arange(len(values), dtype=np.int64)
                kind, smallest = 0, values[0]
            else:                 # the sorted values: index by binary search
                table = np.zeros(0, dtype=np.int64)
                kind, smallest = 1, 0
            meta += [kind, smallest, start, len(table) if kind != 1 else len(ordered), start + len(table), len(ordered)]
            tables += [table, ordered]
            start += len(table) + len(ordered)
        self.meta = np.array(meta or [0], dtype=np.int64)
        self.table = np.concatenate(tables) if tables and start else np.zeros(1, dtype=np.int64)
        self.depth = units.depth
        self.nunits = units.n
        self.counts = units.unit_counts           # per unit (None: not counted; every unit is walked)
        self.prefixes = np.ascontiguousarray(np.asarray(units.prefixes, dtype=np.int64).reshape(-1)) \
            if units.depth else np.zeros(1, dtype=np.int64)
        self.tree = self.boxes() if units.total is None or units.total <= TREE_ROWS else self.whole_boxes()
        self.visited: list[int] = []   # per loop, the values tried in the last search (tests read the work)

    def pointer(self, array, kind: str = "int64_t *"):
        return self.ffi.cast(kind, array.ctypes.data)

    def whole_boxes(self) -> dict:
        """The tree of a space past TREE_ROWS: no nodes, each live unit's box the whole value
        lists (a sound bound: every index lies in it), a unit without configurations empty."""
        import numpy as np
        width, n = max(len(self.names), 1), max(self.nunits, 1)
        last = np.array([max(len(values) - 1, 0) for values in self.lists] or [0], dtype=self.box)
        live = np.array([bool(c) for c in self.counts] if self.counts is not None else [True] * n)
        shape = (n, width)
        ulo = np.where(live[:, None], np.zeros(shape, dtype=self.box), np.iinfo(self.box).max).astype(self.box)
        uhi = np.where(live[:, None], np.broadcast_to(last[:width], shape), -1).astype(self.box)
        ulo, uhi = ulo.reshape(-1), uhi.reshape(-1)
        one = np.zeros(width, dtype=self.box)
        self.nodes, self.levels = 0, 0
        return {"ulo": ulo, "uhi": uhi, "urange": np.zeros(2 * n, dtype=np.int64), "value": np.zeros(1, dtype=np.int64),
                "range": np.zeros(2, dtype=np.int64), "lo": one, "hi": one.copy(),
                "ascending": np.ones(TREE_LEVELS, dtype=np.int64)}

    def boxes(self) -> dict:
        """The box tree (`TREE_C`), by one compiled pass over the space: per unit and per node
        (a unit's prefix and the values of up to TREE_LEVELS more loops) the smallest and largest
        parameter index of its valid configurations (int16 or int32, column order; a unit without any has
        lo > hi), the nodes' values and their children's ranges."""
        import numpy as np
        ffi, lib = self.ffi, self.lib
        width = max(len(self.names), 1)
        n = self.nunits
        sizes = np.zeros(max(n, 1) * TREE_LEVELS, dtype=np.int64)
        stats = ffi.new("ss_stats[]", max(n, 1))
        cancel = ffi.new("int[1]")
        done = ffi.new("int64_t[1]")
        live = np.array([1 if c else 0 for c in self.counts] if self.counts is not None else [1] * max(n, 1),
                        dtype=np.int64)
        handle = call_c(self.shaped, lib.ss_tree_build, self.depth, self.pointer(self.prefixes), n,
                        self.pointer(live), self.pointer(self.meta), self.pointer(self.table), self.pointer(sizes), stats, self.threads,
                        cancel, done, cancel=cancel)
        try:
            for u in range(n):
                if stats[u].error:
                    self.check(stats[u])
        except BaseException:
            lib.ss_tree_free(handle, n)
            raise
        nodes = int(sizes.sum())
        box = self.box
        tree = {"ulo": np.empty(max(n, 1) * width, dtype=box), "uhi": np.empty(max(n, 1) * width, dtype=box),
                "urange": np.zeros(2 * max(n, 1), dtype=np.int64), "value": np.zeros(max(nodes, 1), dtype=np.int64),
                "range": np.zeros(2 * max(nodes, 1), dtype=np.int64),
                "lo": np.empty(max(nodes, 1) * width, dtype=box), "hi": np.empty(max(nodes, 1) * width, dtype=box),
                "ascending": np.ones(TREE_LEVELS, dtype=np.int64)}
        i32 = "ss_box *"
        lib.ss_tree_copy(handle, n, self.pointer(tree["ulo"], i32), self.pointer(tree["uhi"], i32),
                         self.pointer(tree["urange"]), self.pointer(tree["value"]), self.pointer(tree["range"]),
                         self.pointer(tree["lo"], i32), self.pointer(tree["hi"], i32), self.pointer(tree["ascending"]))
        self.nodes, self.levels = nodes, TREE_LEVELS
        return tree

    def check(self, st) -> None:
        if st.error == ERROR_STEP_ZERO:
            raise SolverspaceError(f"parameter {self.items[st.undef_item]!r}: range step is 0",
                                   hint="a range step must be a non-zero integer")

    def nearest(self, target, bound: int | None = None):
        """(configuration in column order, L1 distance) of the valid configuration nearest to
        `target` (parameter indices, column order), ties by the smallest (|i - t|, i) per loop in
        plan order; None when there is none at distance below `bound` (None: no bound)."""
        import numpy as np
        ffi, lib = self.ffi, self.lib
        width = max(len(self.names), 1)
        t = np.zeros(width, dtype=np.int64)
        tv = np.zeros(width, dtype=np.int64)
        for j, (index, values, categorical) in enumerate(zip(target, self.lists, self.categorical)):
            t[j] = index
            tv[j] = 0 if categorical else values[index]
        out = np.zeros(width, dtype=np.int64)
        st = ffi.new("ss_stats *")
        visited = ffi.new("int64_t[]", max(len(self.plan.order), 1))
        cancel = ffi.new("int[1]")
        limit = (1 << 62) if bound is None else min(int(bound), 1 << 62)
        p = self.pointer
        tree, i32 = self.tree, "ss_box *"
        distance = call_c(self.shaped, lib.ss_nearest, self.depth, p(self.prefixes), self.nunits,
                          p(tree["ulo"], i32), p(tree["uhi"], i32), p(tree["urange"]), p(tree["value"]),
                          p(tree["range"]), p(tree["lo"], i32), p(tree["hi"], i32), p(tree["ascending"]),
                          p(self.meta), p(self.table), p(t), p(tv), limit, self.levels, p(out), st, visited,
                          cancel, cancel=cancel)
        self.visited = [int(visited[i]) for i in range(len(self.plan.order))]
        self.check(st)
        if distance < 0:
            return None
        config = tuple(self.strings[int(v)] if categorical else int(v)
                       for v, categorical in zip(out.tolist(), self.categorical))
        return config, int(distance)
