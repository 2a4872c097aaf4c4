/* A tiled single-precision matrix multiplication C = A * B (n x n, row major) and the
 * machine-peak loops of peak.py, compiled once through cffi by kernel.py.
 *
 * Tiles: the three tile loops (i, j, k) run in one of six orders (a runtime argument); inside a
 * tile, a register-blocked micro-kernel keeps an MR x (NR * VEC) block of C in vector registers
 * over the tile's k range: per k step it loads NR vectors of B, broadcasts MR elements of A and
 * issues MR * NR vector FMAs. MR and NR (the unroll factors of the i and j point loops) are
 * compile-time constants: every supported pair is its own function, generated from one macro,
 * so choosing a configuration never recompiles. Tile sizes are runtime arguments.
 *
 * Vectors are GCC vector extensions of VEC floats (32 bytes): AVX2/AVX-512VL with
 * -march=native on x86, lowered to what the target has elsewhere.
 */
#include <stddef.h>
#include <string.h>

#define VEC 8
typedef float vf __attribute__((vector_size(VEC * sizeof(float))));

static inline vf loadv(const float *p) { vf v; memcpy(&v, p, sizeof v); return v; }
static inline void storev(float *p, vf v) { memcpy(p, &v, sizeof v); }
/* every lane x (not (vf){0} + x: adding 0 is not an identity for -0.0, so that costs an add) */
static inline vf bcast(float x) { return (vf){x, x, x, x, x, x, x, x}; }
/* The sum of every lane of n vectors: the peaks return it, so that no accumulator is optimised away. */
static inline float lane_sum(const vf *v, int n)
{
    vf t = (vf){0};
    for (int a = 0; a < n; a++) t += v[a];
    float r = 0;
    for (int c = 0; c < VEC; c++) r += t[c];
    return r;
}

/* One tile: rows i0..i0+ti, columns j0..j0+tj, k0..k0+tk; ti % MR == 0, tj % (NR*VEC) == 0. */
#define BLOCK(MR, NR)                                                                          \
static void block_##MR##_##NR(int n, const float *restrict A, const float *restrict B,        \
                              float *restrict C, int i0, int j0, int k0, int ti, int tj, int tk) \
{                                                                                              \
    for (int i = i0; i < i0 + ti; i += MR)                                                     \
        for (int j = j0; j < j0 + tj; j += NR * VEC) {                                         \
            vf acc[MR][NR];                                                                    \
            for (int r = 0; r < MR; r++)                                                       \
                for (int c = 0; c < NR; c++)                                                   \
                    acc[r][c] = loadv(C + (size_t)(i + r) * n + j + c * VEC);                  \
            for (int k = k0; k < k0 + tk; k++) {                                               \
                vf b[NR];                                                                      \
                for (int c = 0; c < NR; c++)                                                   \
                    b[c] = loadv(B + (size_t)k * n + j + c * VEC);                             \
                for (int r = 0; r < MR; r++) {                                                 \
                    vf a = bcast(A[(size_t)(i + r) * n + k]);                                     \
                    for (int c = 0; c < NR; c++)                                               \
                        acc[r][c] += a * b[c];                                                 \
                }                                                                              \
            }                                                                                  \
            for (int r = 0; r < MR; r++)                                                       \
                for (int c = 0; c < NR; c++)                                                   \
                    storev(C + (size_t)(i + r) * n + j + c * VEC, acc[r][c]);                  \
        }                                                                                      \
}                                                                                              \
static void tiles_##MR##_##NR(int n, const float *A, const float *B, float *C,                 \
                              const int t[3], const int p[3])                                  \
{                                                                                              \
    int s[3];                                                                                  \
    for (int x0 = 0; x0 < n; x0 += t[p[0]])                                                    \
        for (int x1 = 0; x1 < n; x1 += t[p[1]])                                                \
            for (int x2 = 0; x2 < n; x2 += t[p[2]]) {                                          \
                s[p[0]] = x0; s[p[1]] = x1; s[p[2]] = x2;                                      \
                block_##MR##_##NR(n, A, B, C, s[0], s[1], s[2], t[0], t[1], t[2]);             \
            }                                                                                  \
}

/* The supported (MR, NR) pairs: keep in step with UNROLLS in kernel.py. */
#define PAIRS(X) X(1, 1) X(1, 2) X(1, 3) X(1, 4) X(2, 1) X(2, 2) X(2, 3) X(2, 4) \
                 X(4, 1) X(4, 2) X(4, 3) X(4, 4) X(6, 1) X(6, 2) X(6, 3) X(6, 4) \
                 X(8, 1) X(8, 2) X(8, 3)
PAIRS(BLOCK)

/* C = A * B. order: the tile loops outermost first, as loop indices (0 = i, 1 = j, 2 = k).
 * Returns 0, or -1 for arguments the kernel does not support (nothing is written then). */
int matmul(int n, const float *A, const float *B, float *C, int tile_i, int tile_j, int tile_k,
           int mr, int nr, int o0, int o1, int o2)
{
    int t[3] = {tile_i, tile_j, tile_k}, p[3] = {o0, o1, o2};
    if (n <= 0 || n % VEC || tile_i <= 0 || tile_j <= 0 || tile_k <= 0 || n % tile_i || n % tile_j
        || n % tile_k || mr <= 0 || nr <= 0 || tile_i % mr || tile_j % (nr * VEC))
        return -1;
    if (p[0] + p[1] + p[2] != 3 || p[0] == p[1] || p[0] == p[2] || p[1] == p[2]
        || p[0] < 0 || p[1] < 0 || p[2] < 0 || p[0] > 2 || p[1] > 2 || p[2] > 2)
        return -1;
    memset(C, 0, (size_t)n * n * sizeof(float));
#define CASE(MR, NR) if (mr == MR && nr == NR) { tiles_##MR##_##NR(n, A, B, C, t, p); return 0; }
    PAIRS(CASE)
#undef CASE
    return -1;
}

/* The micro-kernel ceilings of peak.py: one tile of the (mr, nr) micro-kernel, repeated reps
 * times, with operands the caller lays out (compact, cache-hot panels: the best case of the
 * exact code `matmul` runs). n is the row stride of A, B and C. Returns 0, or -1 for a pair that
 * is not compiled. flops = reps * 2 * ti * tj * tk. */
int block_repeat(int mr, int nr, int n, const float *A, const float *B, float *C, int ti, int tj, int tk,
                 long reps)
{
#define CASE(MR, NR)                                                                           \
    if (mr == MR && nr == NR) {                                                                \
        for (long r = 0; r < reps; r++) {                                                      \
            block_##MR##_##NR(n, A, B, C, 0, 0, 0, ti, tj, tk);                                \
            __asm__ volatile("" : : "r"(C) : "memory");                                        \
        }                                                                                      \
        return 0;                                                                              \
    }
    PAIRS(CASE)
#undef CASE
    return -1;
}

/* ---- machine peaks (peak.py) ---- */

/* Vector FMAs on ACC independent accumulators (enough to cover the FMA latency times the
 * number of FMA pipes); returns a value that depends on every one so nothing is optimised away.
 * flops = iters * ACC * VEC * 2. */
#define ACC 16
float peak_fma(long iters)
{
    vf acc[ACC], x = bcast(1.0f), y = bcast(1e-7f);
    for (int a = 0; a < ACC; a++) acc[a] = bcast((float)a);
    for (long it = 0; it < iters; it++) {
        for (int a = 0; a < ACC; a++) acc[a] = acc[a] * x + y;
        __asm__ volatile("" : "+x"(x));     /* x unknown to the compiler: no folding */
    }
    return lane_sum(acc, ACC);
}

/* One chain of dependent vector FMAs (the FMA latency): iters FMAs one after the other. */
float peak_fma_chain(long iters)
{
    vf acc = bcast(1.0f), x = bcast(1.0f), y = bcast(1e-7f);
    for (long it = 0; it < iters; it++) {
        acc = acc * x + y;
        __asm__ volatile("" : "+x"(x));
    }
    return lane_sum(&acc, 1);
}

/* Vector loads from an L1-resident buffer of len floats (len % (8*VEC) == 0), reps passes,
 * 8 independent sums. Loads issued = reps * len / VEC. */
float peak_vector_loads(const float *x, long len, long reps)
{
    vf s[8];
    for (int a = 0; a < 8; a++) s[a] = (vf){0};
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < len; i += 8 * VEC)
            for (int a = 0; a < 8; a++) s[a] += loadv(x + i + a * VEC);
        __asm__ volatile("" : : "r"(x) : "memory");
    }
    return lane_sum(s, 8);
}

/* Broadcast loads (one float to every lane, as the micro-kernel loads A), 8 independent sums.
 * Loads issued = reps * len. */
float peak_broadcast_loads(const float *x, long len, long reps)
{
    vf s[8];
    for (int a = 0; a < 8; a++) s[a] = (vf){0};
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < len; i += 8)
            for (int a = 0; a < 8; a++) s[a] += bcast(x[i + a]);
        __asm__ volatile("" : : "r"(x) : "memory");
    }
    return lane_sum(s, 8);
}

/* Read bandwidth: vector loads over a buffer of len floats (sized to a cache level or to
 * memory), reps passes. Bytes read = reps * len * 4. */
float read_bandwidth(const float *x, long len, long reps)
{
    return peak_vector_loads(x, len, reps);
}

/* Triad a = b + s * c over arrays of len floats, reps passes: 12 bytes per element moved
 * (two reads, one write; write-allocate traffic not counted). */
void triad(float *a, const float *b, const float *c, long len, long reps)
{
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < len; i++) a[i] = b[i] + 3.0f * c[i];
        __asm__ volatile("" : : "r"(a) : "memory");
    }
}
