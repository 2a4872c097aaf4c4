"""The fixed C text of every enumerator, apart from its loop nests: the declarations cffi reads
(`CDEF`), the memo of independent groups' counts, the cancel flag, wide (more than 63-bit) counts,
the exported drivers that run the walks over work units, and the CSV formatter.

Exported functions (see CDEF): `ss_prefixes`, `ss_count_units`, `ss_fill_units`, `ss_format_csv`,
`ss_fill_list`, `ss_count_prefix`, and, in a funnel build, `ss_funnel` (`translators.c.funnel`).
"""
from __future__ import annotations

from .expr import C_HELPERS, c_name

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

MEMO_BITS = 16
MEMO_C = r"""
/* per-thread memo of independent groups' counts: direct-mapped, full key compared */
typedef struct { int width; int64_t *keys; int64_t *vals; unsigned char *used; } ss_memo;
static inline uint64_t ss_hash(const int64_t *key, int width) {
    uint64_t h = 1469598103934665603ULL;
    for (int j = 0; j < width; j++) { h ^= (uint64_t)key[j]; h *= 1099511628211ULL; h ^= h >> 29; }
    return h;
}
static inline int64_t *ss_memo_find(ss_memo *m, const int64_t *key) {
    /* keys are a few words: compared in a loop (a memcmp call was a quarter of the K40c count) */
    uint64_t slot = ss_hash(key, m->width) & ((1u << MEMO_BITS) - 1);
    if (!m->used[slot]) return NULL;
    const int64_t *held = m->keys + slot * m->width;
    for (int j = 0; j < m->width; j++) if (held[j] != key[j]) return NULL;
    return &m->vals[slot];
}
static void ss_memo_put(ss_memo *m, const int64_t *key, int64_t value) {
    uint64_t slot = ss_hash(key, m->width) & ((1u << MEMO_BITS) - 1);
    memcpy(m->keys + slot * m->width, key, sizeof(int64_t) * m->width);
    m->vals[slot] = value; m->used[slot] = 1;
}
""".replace("MEMO_BITS", str(MEMO_BITS))
COUNT_MEMO_BITS = 12
COUNT_MEMO_C = r"""
/* per-thread memo of the counting walk's independent groups (LoopNest.split_leaf): one slot holds
   the count (-1: empty) and then the key, so that a lookup reads one place (three separate arrays
   were three cache misses, most of the K40c count once its loops were divisor loops) */
typedef struct { int width; int64_t *slots; } ss_cmemo;
static inline int64_t *ss_cmemo_find(ss_cmemo *m, const int64_t *key) {
    int64_t *held = m->slots + (ss_hash(key, m->width) & ((1u << COUNT_MEMO_BITS) - 1)) * (m->width + 1);
    if (held[0] < 0) return NULL;
    for (int j = 0; j < m->width; j++) if (held[1 + j] != key[j]) return NULL;
    return held;
}
static inline void ss_cmemo_put(ss_cmemo *m, const int64_t *key, int64_t value) {
    int64_t *held = m->slots + (ss_hash(key, m->width) & ((1u << COUNT_MEMO_BITS) - 1)) * (m->width + 1);
    held[0] = value; memcpy(held + 1, key, sizeof(int64_t) * m->width);
}
static ss_cmemo ss_cmemo_open(int width) {   /* every slot empty (all bits set: -1) */
    ss_cmemo m; m.width = width;
    size_t bytes = sizeof(int64_t) * ((size_t)1 << COUNT_MEMO_BITS) * (size_t)(width + 1);
    m.slots = (int64_t *)malloc(bytes); memset(m.slots, 0xff, bytes);
    return m;
}
""".replace("COUNT_MEMO_BITS", str(COUNT_MEMO_BITS))
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

DIVISOR_CAP = 1536   # divisors kept per divisor loop (every |e| below 2**32 has at most 1,344)
DIVISORS_C = r"""
/* Divisor loops (LoopNest.divisor_loop): a loop over v whose next loop solves `v * w == e`, e
   known before v's loop, visits only the values of v that divide e (the others give the next
   loop no value). ss_divs keeps the divisors of the last |e| met by one loop in one walk call,
   ascending, found by trial division up to sqrt|e| once the plain loops run for that |e| have
   done as many iterations, this visit's included (rent, then buy: about twice the cheaper
   choice at worst); ss_dscan walks the k of the range's values among them in the loop's order;
   ss_dfilter skips a value list's non-divisors. Every test `|e| % |v| == 0` is the nest's own
   `e_ % k_ == 0` (C's remainder is 0 exactly when v divides e, whatever the signs). Part of the
   cancel text: every program with loop nests has it. */
#define SS_DIV_CAP DIVISOR_CAP
typedef struct {
    uint64_t m; int64_t nd; int64_t d[SS_DIV_CAP];   /* the divisors of m (nd -1: more than SS_DIV_CAP) */
    uint64_t pm, spent;                              /* plain iterations run for |e| == pm, not kept */
} ss_divs;
typedef struct { const int64_t *d; int64_t nd, at, end, dir, start, step, lo, mod, q; int neg, flip; } ss_dscan;
static inline uint64_t ss_uabs(int64_t x) { return x < 0 ? 0 - (uint64_t)x : (uint64_t)x; }
static inline uint64_t ss_isqrt(uint64_t m) {   /* floor(sqrt(m)), digit by digit */
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    while (bit > m) bit >>= 2;
    while (bit) { if (m >= r + bit) { m -= r + bit; r = (r >> 1) + bit; } else r >>= 1; bit >>= 2; }
    return r;
}
/* the divisors of m > 0 into dl, ascending: 1; 0 where they are more than SS_DIV_CAP (dl->nd -1,
   so that m is not tried again); -1 where the walk was cancelled meanwhile (dl left empty) */
static inline int ss_divs_build(ss_divs *dl, uint64_t m) {
    int64_t small = 0, big = 0;
    uint64_t r = ss_isqrt(m);
    dl->m = m; dl->nd = -1;
    for (uint64_t q = 1; q <= r; q++) {
        if (!(q & (CANCEL_EVERY - 1)) && ss_cancelled()) { dl->m = 0; return -1; }
        if (m <= 0xFFFFFFFFu ? (uint32_t)m % (uint32_t)q != 0 : m % q != 0) continue;
        uint64_t c = m / q;
        if (small + big + 1 + (c != q) > SS_DIV_CAP) return 0;
        dl->d[small++] = (int64_t)q;
        if (c != q) dl->d[SS_DIV_CAP - 1 - big++] = (int64_t)c;
    }
    memmove(dl->d + small, dl->d + SS_DIV_CAP - big, sizeof(int64_t) * (size_t)big);
    dl->nd = small + big;
    return 1;
}
static inline int64_t ss_dlower(const int64_t *d, int64_t n, int64_t x) {   /* first index with d[i] >= x */
    int64_t lo = 0, hi = n;
    while (lo < hi) { int64_t mid = lo + (hi - lo) / 2; if (d[mid] < x) lo = mid + 1; else hi = mid; }
    return lo;
}
/* the scan of the range start + k * step (0 <= k < n) for the values dividing e: 1; 0 for the
   plain loop (e == 0, which every value divides; values of both signs or 0; the divisors not
   kept, or more of them in the range's span than the range has values); -1: cancelled */
static inline int ss_dscan_init(ss_dscan *s, ss_divs *dl, int64_t e, int64_t start, int64_t step, int64_t n) {
    if (e == 0 || n < 2) return 0;
    int64_t last = start + (n - 1) * step;
    if (!((start > 0 && last > 0) || (start < 0 && last < 0))) return 0;
    uint64_t m = ss_uabs(e);
    if (m > (uint64_t)INT64_MAX) return 0;   /* |e| == 2**63: its divisors are not all int64 */
    if (dl->m != m) {
        if (dl->pm != m) { dl->pm = m; dl->spent = 0; }
        uint64_t budget = dl->spent + (uint64_t)n;   /* the plain iterations for m, this visit's included */
        if (m / budget > budget) { dl->spent = budget; return 0; }   /* sqrt(m) > budget: plain */
        if (ss_divs_build(dl, m) < 0) return -1;
    }
    if (dl->nd < 0) return 0;
    int64_t a = start < 0 ? -start : start, b = last < 0 ? -last : last;
    int64_t lo = a < b ? a : b, hi = a < b ? b : a;
    int64_t first = ss_dlower(dl->d, dl->nd, lo), end = ss_dlower(dl->d, dl->nd, hi + 1);
    if (end - first > n) return 0;
    int up = (start > 0) == (step > 0);   /* the loop's order is ascending |v| */
    s->d = dl->d; s->nd = dl->nd; s->dir = up ? 1 : -1; s->at = up ? first : end - 1; s->end = up ? end : first - 1;
    s->start = start; s->step = step; s->lo = lo; s->mod = step < 0 ? -step : step; s->neg = start < 0;
    s->flip = (e < 0) != (start < 0); s->q = 0;
    return 1;
}
/* the next k whose value v divides e, its quotient e / v in s->q (|e| / |v| is the divisor
   paired with |v|: the list is symmetric), or n */
static inline int64_t ss_dscan_next(ss_dscan *s, int64_t n) {
    while (s->at != s->end) {
        int64_t t = s->at, x = s->d[t]; s->at += s->dir;
        if (s->mod != 1 && (x - s->lo) % s->mod != 0) continue;   /* not one of the range's values */
        s->q = s->flip ? -s->d[s->nd - 1 - t] : s->d[s->nd - 1 - t];
        int64_t offset = (s->neg ? -x : x) - s->start;
        return s->mod == 1 ? offset * s->step : offset / s->step;   /* (a step of 1 or -1: no division) */
    }
    return n;
}
/* the first k >= from whose value divides m's e (a value 0 is kept, as the plain loop would), or n */
static inline int64_t ss_dfilter(const int64_t *buf, int64_t from, int64_t n, uint64_t m) {
    for (int64_t k = from; k < n; k++) { uint64_t a = ss_uabs(buf[k]); if (a == 0 || m % a == 0) return k; }
    return n;
}
""".replace("DIVISOR_CAP", str(DIVISOR_CAP)).replace("CANCEL_EVERY", str(CANCEL_EVERY))
CANCEL_C += DIVISORS_C
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


def preamble(count_words: int, columns) -> list[str]:
    """The file's first parts: includes, the expression helpers, the memo, the cancel flag, the
    count type of a wide build, the stats struct and the packed row struct (one field per column)."""
    return [
        "#include <stdint.h>", "#include <stdlib.h>", "#include <string.h>", "#include <stdio.h>",
        "#include <omp.h>", C_HELPERS,
        "static int ss_member(int64_t x, const int64_t *buf, int64_t n);",
        "static int64_t ss_find(int64_t x, const int64_t *sorted, int64_t n);",
        MEMO_C, COUNT_MEMO_C, CANCEL_C,
        wide_count_c(count_words) if count_words > 1 else "",
        "typedef struct { int64_t count; int64_t undefined; int32_t error; int32_t undef_item; } ss_stats;",
        "#pragma pack(push, 1)",
        "typedef struct {\n" + "\n".join(f"    {c.ctype} {c_name(c.name)};" for c in columns) + "\n} ss_row;",
        "#pragma pack(pop)",
    ]


DOMAIN_LOOKUPS_C = r"""
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
"""


def drivers(max_prefix_depth: int, memo_widths: list[int], count_words: int) -> str:
    """The exported functions that run the walks (`walk_list`, `walk_count`) over work units:
    prefixes, per-unit counts (with one memo per independent group of `memo_widths` key values),
    counts under any prefix, and rows of chosen units."""
    return DOMAIN_LOOKUPS_C + r"""int ss_max_prefix_depth(void) { return MAX_PREFIX_DEPTH; }
int ss_row_size(void) { return (int)sizeof(ss_row); }

int64_t ss_prefixes(int s, int64_t *out, int64_t cap, ss_stats *st) {
    memset(st, 0, sizeof *st);
    walk_count(NULL, 0, s, 2, NULL, out, cap, st, NULL ACC_NULL);
    return st->count;
}

static const int memo_widths[] = {MEMO_WIDTHS};
#define MEMO_COUNT MEMO_N

int ss_count_units(int s, const int64_t *prefixes, int64_t nunits, int64_t *counts, ss_stats *stats,
                   int nthreads, volatile int *cancel, int64_t *done) {
    ss_cancel_flag = cancel;
    #pragma omp parallel num_threads(nthreads)
    {
        ss_cmemo memo[MEMO_COUNT > 0 ? MEMO_COUNT : 1];
        for (int c = 0; c < MEMO_COUNT; c++) memo[c] = ss_cmemo_open(memo_widths[c]);
        #pragma omp for schedule(dynamic, 1)
        for (int64_t unit = 0; unit < nunits; unit++) {
            if (*cancel) continue;
            ss_stats st; memset(&st, 0, sizeof st);
            STORE_COUNT stats[unit] = st;
            #pragma omp atomic
            (*done)++;
        }
        for (int c = 0; c < MEMO_COUNT; c++) free(memo[c].slots);
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
""".replace("MAX_PREFIX_DEPTH", str(max_prefix_depth)).replace(
        "MEMO_WIDTHS", ", ".join(map(str, memo_widths)) or "0").replace(
        "MEMO_N", str(len(memo_widths))).replace(
        "ACC_NULL", ", NULL" if count_words > 1 else "").replace("STORE_COUNT", store_count(count_words)).replace(
        "COUNT_PREFIX", "walk_count(prefix, plen, -1, 0, NULL, NULL, 0, st, NULL); count[0] = st->count;"
        if count_words == 1 else "ss_count acc_; memset(&acc_, 0, sizeof acc_);"
        " walk_count(prefix, plen, -1, 0, NULL, NULL, 0, st, NULL, &acc_); ss_cstore((uint64_t *)count, acc_);")


def store_count(count_words: int) -> str:
    """Count one unit in ss_count_units: an int64 count, or `count_words` words (low first)."""
    call = "walk_count(prefixes + unit * s, s, -1, 0, NULL, NULL, 0, &st, MEMO_COUNT > 0 ? memo : NULL{});"
    if count_words == 1:
        return call.format("") + "\n            counts[unit] = st.count;"
    return ("ss_count acc_; memset(&acc_, 0, sizeof acc_);\n            " + call.format(", &acc_")
            + f"\n            ss_cstore((uint64_t *)counts + unit * {count_words}, acc_);")


def csv_row_width(columns) -> int:
    """Bytes `ss_format_csv` needs per row (its ROW_WIDTH): a number's 21 characters or a quoted
    categorical string with every byte doubled, and a separator, per column, and the newline.
    The caller's buffer holds this many bytes a row."""
    return sum(max(21, max((2 * len(s.encode()) + 2 for s in (c.categorical or ())), default=0)) + 1
               for c in columns) + 1


def csv_formatter(columns) -> str:
    """`ss_format_csv`: rows (`columns`, `translators.c.codegen.Column`) as CSV text, in parallel."""
    decls, parts = [], []
    for j, c in enumerate(columns):
        if j:
            parts.append("        *p++ = sep;")
        if c.categorical is not None:
            names = ", ".join(c_string(s) for s in c.categorical)
            decls.append(f"static const char *cat{j}[] = {{{names}}};")
            field = f"cat{j}[r->{c_name(c.name)}]"
            if len(columns) == 1 and "" in c.categorical:   # a lone empty field is `""` (formats.csv_line)
                parts.append(f'        if (!*{field}) {{ *p++ = \'"\'; *p++ = \'"\'; }} else')
            parts.append(f"        p = ss_put_field(p, {field}, sep);")
        else:
            parts.append(f"        p += ss_itoa((int64_t)r->{c_name(c.name)}, p);")
    width = csv_row_width(columns)
    return "\n".join(decls) + r"""
/* a categorical field, quoted where it holds the separator, a quote or a line break: the rule of
   results.csv_field, which the Python writers use (the same bytes) */
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


def c_string(s: str) -> str:
    """A C string literal for any text: printable ASCII as is, every other byte as a fixed
    three-digit octal escape (UTF-8)."""
    out = []
    for byte in s.encode():
        char = chr(byte)
        out.append(char if 32 <= byte < 127 and char not in '"\\?' else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'

