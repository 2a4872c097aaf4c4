# The tuning space of examples/cpu_matmul (matmul.c): C = A * B for N x N single-precision
# matrices, three tile loops in one of six orders around a register-blocked micro-kernel that
# keeps an unroll_i x (unroll_j * VEC) block of C in vector registers. Settings PEAK_FLOPS,
# CHAIN_RATE, LOAD_RATE, L2_BANDWIDTH and REGISTERS come from `peak.py` (machine.json); the
# defaults are what peak.py measured on the 2-core AMD EPYC (Zen 4) VM this was written on.
#
# The derived values vector_loads, fma_chain and l2_bytes (and the flops, 2 * N**3) are the work
# of a configuration for each resource; the roofline bound (README.md, bound.py) divides each by
# the machine's peak rate for that resource and takes the largest: seconds, an exact fraction.
N = setting(384, doc="matrix size (N x N); 384 = 2**7 * 3 has divisors for every unroll factor")
VEC = setting(8, doc="floats per vector register (matmul.c: 32-byte GCC vectors)")
ELEM = setting(4, doc="bytes per element (float)")
REGISTERS = setting(32, doc="vector registers (32 with AVX-512VL, 16 with AVX2)")
L2_BYTES = setting(1048576, doc="L2 cache per core in bytes: the tiles of A, B and C must fit")
PEAK_FLOPS = setting(119679, doc="peak single-precision flops per microsecond (peak.py: +2%, rounded up)")
CHAIN_RATE = setting(936, doc="dependent vector FMAs per microsecond: 1 / FMA latency (peak.py: +2%, rounded up)")
LOAD_RATE = setting(6906, doc="vector loads per microsecond from L1 (peak.py: +2%, rounded up)")
L2_BANDWIDTH = setting(113345, doc="bytes per microsecond read from L2 (peak.py: +2%, rounded up)")
MAX_TILES = setting(16, doc="at most this many tiles along i and j (and 8 along k); 4 gives a smaller space")
OVERLAP = setting(2, doc="micro-tiles whose FMA chains the out-of-order core overlaps (an assumption)")

# the micro-kernel: unroll_i rows (broadcasts of A) by unroll_j vectors (loads of B)
unroll_i = iterator([1, 2, 4, 6, 8])
unroll_j = iterator([1, 2, 3, 4])
# accumulators + the B vectors of one k step + the A broadcast, all in registers
require(unroll_i * unroll_j + unroll_j + 1 <= REGISTERS)
reject_if((unroll_i == 8) & (unroll_j == 4))       # not compiled (matmul.c PAIRS)

# tiles divide N into a power-of-two number of tiles (N = 384: 24, 48, 96, 192 or 384; tile_k
# at least 48, see fma_chain below); the micro-kernel divides its tile
tile_i = range(unroll_i, N + 1, unroll_i)
tile_j = range(unroll_j * VEC, N + 1, unroll_j * VEC)
tile_k = range(1, N + 1)
require(N % tile_i == 0)
require(N % tile_j == 0)
require(N % tile_k == 0)
require(N // tile_i in (1, 2, 4, 8, 16, 32, 64))
require(N // tile_j in (1, 2, 4, 8, 16, 32, 64))
require(N // tile_k in (1, 2, 4, 8))
require(N // tile_i <= MAX_TILES)
require(N // tile_j <= MAX_TILES)
require(N // tile_k <= MAX_TILES)
# one tile of each of A, B and C in L2
require((tile_i * tile_k + tile_k * tile_j + tile_i * tile_j) * ELEM <= L2_BYTES)

# the tile loops, outermost first (measure.py also reads the i>k>j form)
order = iterator(["ijk", "ikj", "jik", "jki", "kij", "kji"])

# ---- work per resource (inputs of the bound) ----
# Every term is a LOWER bound on the time only as far as its assumption holds; see README.md.
# Flops: 2 * N**3 (a constant; at the peak FMA rate it is the time no configuration can beat).
# Vector loads the micro-kernel issues: per k step unroll_j loads of B for unroll_i * unroll_j
# FMAs (N**3 / (VEC * unroll_i) in all), and the C block once per k tile. Loads of A are
# broadcasts, not counted (the core may issue them beside the vector loads). The compiler may
# issue more loads (a spill, B re-read as a memory operand), never fewer.
vector_loads = N ** 3 // (VEC * unroll_i) + N ** 3 // (VEC * tile_k)
# FMAs on one accumulator depend on each other: a micro-tile has unroll_i * unroll_j chains of
# tile_k FMAs; at most OVERLAP micro-tiles are in flight at once (tile_k >= 48 makes a
# micro-tile longer than about half the reorder window). Floor: rounding down keeps it a lower bound.
fma_chain = N ** 3 // (VEC * unroll_i * unroll_j * OVERLAP)
# Bytes read from L2 into L1: every tile of A, B and C is read once per tile-loop iteration
# that uses it, except the one the innermost tile loop does not index, which stays in L1
# (assumes tiles used again only after a whole other panel has passed through L1 are evicted:
# a tile panel is at least 48 x 384 floats = 72 KiB, over twice the 32 KiB L1).
a_reads = if_then_else((order == "ikj") | (order == "kij"), N ** 2, N ** 3 // tile_j)
b_reads = if_then_else((order == "jki") | (order == "kji"), N ** 2, N ** 3 // tile_i)
c_reads = if_then_else((order == "ijk") | (order == "jik"), N ** 2, N ** 3 // tile_k)
l2_bytes = ELEM * (a_reads + b_reads + c_reads)

# ---- the bound (the roofline: the slowest resource), seconds as an exact fraction ----
# `solverspace tune` without --bound and `best` without --minimize use it; bound.py prints the
# same expression (tests/test_cpu_matmul_example.py checks that they agree).
# (A function body: its `/` is exact even between constants; at module level Python would divide.)
@cost
def roofline(vector_loads, fma_chain, l2_bytes):
    return max(2 * N**3 / (PEAK_FLOPS * 10**6), vector_loads / (LOAD_RATE * 10**6),
               fma_chain / (CHAIN_RATE * 10**6), l2_bytes / (L2_BANDWIDTH * 10**6))
