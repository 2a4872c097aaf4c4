# The tuning space of examples/cpu_matmul (matmul.c): C = A * B for N x N single-precision
# matrices, three tile loops in one of six orders around a register-blocked micro-kernel that
# keeps an unroll_i x (unroll_j * VEC) block of C in vector registers.
#
# The machine's figures (peak rates and the micro-kernel ceilings, see README.md) come from
# machine.json, which peak.py writes on the machine it runs on, and where there is none from
# reference_machine.json, what peak.py measured on the 2-core AMD EPYC (Zen 4) VM this example
# was written on. --set overrides the scalar ones.
#
# The derived values kernel_rate, vector_loads and l2_bytes (and the flops, 2 * N**3) are the
# work of a configuration and the rate of the resource that does it; the bound (README.md,
# bound.py) divides each work by its rate and takes the largest: seconds, an exact fraction.
import json as _json
from pathlib import Path as _Path

_HERE = _Path(__file__).resolve().parent
_MACHINE_FILE = next((p for p in (_HERE / "machine.json", _HERE / "reference_machine.json") if p.exists()), None)
if _MACHINE_FILE is None:
    raise FileNotFoundError(f"neither machine.json nor reference_machine.json is in {_HERE}: "
                            "run python examples/cpu_matmul/peak.py there")
def _read_machine(path):
    """(scalar settings, [(unroll_i, unroll_j, tile_k, rate)]) of a file peak.py wrote."""
    try:
        machine = _json.loads(path.read_text())
        scalars = {name: int(machine["settings"][name])
                   for name in ("REGISTERS", "PEAK_FLOPS", "LOAD_RATE", "L2_BANDWIDTH")}
        table = [tuple(int(x) for x in row) for row in machine["kernel_rates"]]
        if any(len(row) != 4 for row in table):
            raise ValueError("kernel_rates: rows of 4 integers (unroll_i, unroll_j, tile_k, rate) expected")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not what peak.py writes ({exc!r}): run python examples/cpu_matmul/peak.py "
                         "again (or delete machine.json to use reference_machine.json)") from None
    return scalars, table


_RATES, _KERNEL_RATES = _read_machine(_MACHINE_FILE)

N = setting(384, doc="matrix size (N x N); 384 = 2**7 * 3 has divisors for every unroll factor")
VEC = setting(8, doc="floats per vector register (matmul.c: 32-byte GCC vectors)")
ELEM = setting(4, doc="bytes per element (float)")
REGISTERS = setting(_RATES["REGISTERS"], doc="vector registers (32 with AVX-512VL, 16 with AVX2)")
L2_BYTES = setting(1048576, doc="L2 cache per core in bytes: the tiles of A, B and C must fit")
PEAK_FLOPS = setting(_RATES["PEAK_FLOPS"], doc="peak single-precision flops per microsecond (peak.py: +2%, rounded up)")
LOAD_RATE = setting(_RATES["LOAD_RATE"], doc="vector loads per microsecond from L1 (peak.py: +2%, rounded up)")
L2_BANDWIDTH = setting(_RATES["L2_BANDWIDTH"], doc="bytes per microsecond read from L2 (peak.py: +2%, rounded up)")
MAX_TILES = setting(16, doc="at most this many tiles along i and j (and 8 along k); 4 gives a smaller space")

# the micro-kernel: unroll_i rows (broadcasts of A) by unroll_j vectors (loads of B)
unroll_i = iterator([1, 2, 4, 6, 8])
unroll_j = iterator([1, 2, 3, 4])
# accumulators + the B vectors of one k step + the A broadcast, all in registers
require(unroll_i * unroll_j + unroll_j + 1 <= REGISTERS)
reject_if((unroll_i == 8) & (unroll_j == 4))       # not compiled (matmul.c PAIRS)

# tiles divide N into a power-of-two number of tiles (N = 384: 24, 48, 96, 192 or 384; at most
# 8 along k, so tile_k >= 48 and peak.py measures four k lengths); the micro-kernel divides its tile
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

# ---- work per resource and its rate (inputs of the bound) ----
# Every term is a LOWER bound on the time as far as its assumption holds; see README.md.
# The micro-kernel ceiling: flops per microsecond of matmul.c's own tile code for this
# (unroll_i, unroll_j, tile_k) on compact, cache-hot panels (peak.py: the best layout, +2%,
# rounded up); the tiled product runs the same code on strided tiles that come from further away.
# A tile_k peak.py did not measure (another N) gets the FMA peak, which holds for every shape.
def _ceiling(table, otherwise):
    """The table's rate for (unroll_i, unroll_j, tile_k), else `otherwise`: conditionals nested
    by unroll_i, then unroll_j, then tile_k, so a lookup makes a few comparisons, not 76."""
    nested = {}
    for mr, nr, tk, rate in table:
        nested.setdefault(mr, {}).setdefault(nr, {})[tk] = rate

    def chain(name, cases, inner):
        expr = otherwise
        for value in sorted(cases, reverse=True):
            expr = if_then_else(name == value, inner(cases[value]), expr)
        return expr

    return chain(unroll_i, nested, lambda by_nr: chain(unroll_j, by_nr, lambda by_tk: chain(
        tile_k, by_tk, lambda rate: rate)))


kernel_rate = _ceiling(_KERNEL_RATES, PEAK_FLOPS)
# Vector loads the micro-kernel issues: per k step unroll_j loads of B for unroll_i * unroll_j
# FMAs (N**3 / (VEC * unroll_i) in all), and the C block once per k tile. Loads of A are
# broadcasts, not counted (the core may issue them beside the vector loads). The compiler may
# issue more loads (a spill, B re-read as a memory operand), never fewer.
vector_loads = N ** 3 // (VEC * unroll_i) + N ** 3 // (VEC * tile_k)
# Bytes read from L2 into L1: every tile of A, B and C is read once per tile-loop iteration
# that uses it, except the one the innermost tile loop does not index, which stays in L1
# (assumes tiles used again only after a whole other panel has passed through L1 are evicted:
# a tile panel is at least 48 x 384 floats = 72 KiB, over twice the 32 KiB L1).
a_reads = if_then_else((order == "ikj") | (order == "kij"), N ** 2, N ** 3 // tile_j)
b_reads = if_then_else((order == "jki") | (order == "kji"), N ** 2, N ** 3 // tile_i)
c_reads = if_then_else((order == "ijk") | (order == "jik"), N ** 2, N ** 3 // tile_k)
l2_bytes = ELEM * (a_reads + b_reads + c_reads)

# ---- the bound (the roofline with the micro-kernel's own ceiling), seconds as an exact fraction ----
# `solverspace tune` without --bound and `best` without --minimize use it; bound.py prints the
# same expression (tests/test_cpu_matmul_example.py checks that they agree).
# (A function body: its `/` is exact even between constants; at module level Python would divide.)
@cost
def roofline(kernel_rate, vector_loads, l2_bytes):
    return max(2 * N**3 / (PEAK_FLOPS * 10**6), 2 * N**3 / (kernel_rate * 10**6),
               vector_loads / (LOAD_RATE * 10**6), l2_bytes / (L2_BANDWIDTH * 10**6))
