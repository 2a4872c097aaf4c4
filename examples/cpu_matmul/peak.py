"""Measure this machine's peaks and micro-kernel ceilings for the bound of `space.py` (one
thread) and write them to `machine.json` next to this file (git-ignored), which space.py reads.

    python examples/cpu_matmul/peak.py [--repeat 9] [--n 384] [--headroom 2] [--json]

What it measures (each the BEST of --repeat runs: noise from other work on the machine only
ever lowers a measured rate, and a bound built from a too low rate would be too high):

- peak_flops_per_us: single-precision flops per microsecond of independent vector FMAs
  (matmul.c `peak_fma`: 16 accumulators of 8 floats, enough to cover FMA latency times pipes).
- kernel ceilings: for every compiled micro-kernel shape (unroll_i, unroll_j) and every k-tile
  length of the space (N / 1, 2, 4, 8), flops per microsecond of matmul.c's own tile code on
  compact, cache-hot panels, the best of six layouts (`layouts`). This is the compute roof of
  each configuration: what limits the micro-kernel (FMA latency with few accumulators, load
  ports, the loads and stores of C once per k tile) is in the measurement, not in a formula.
- vector_loads_per_us: full-vector (32-byte) loads per microsecond from an L1-resident buffer
  (8 independent sums), the loads of B and C the micro-kernel issues. Broadcast loads (of A)
  are measured and reported but not used: a core may issue them beside the vector loads.
- l2_bytes_per_us: read bandwidth from a buffer in L2 (512 KiB), where the tiles of the
  matrices live between uses (the matrices, 3 * 384^2 * 4 bytes = 1.7 MiB, stay in L2/L3
  between repeats of measure.py).
- fma_chain_per_us (dependent FMAs: the latency) and dram_bytes_per_us (triad over 3 x 64 MiB),
  for reference: the ceilings already hold the latency, and the kernel's data never comes from
  memory once warm.

The settings of space.py are these rates raised by --headroom percent (default 2: over repeated
runs here the best-of-9 FMA figure varied under 1%, the ceilings 1-4%, the L1 load rate 5% and
the L2 bandwidth 4%; over all 9,384 configurations measured, the closest came to 1.8% under its
bound, see README.md) and
rounded UP to integers, so time = work / rate is not overestimated, and `registers`: 32 vector
registers where the CPU has AVX-512VL (ymm0-31 under -march=native), else 16. The last line
printed is the `--set` arguments of the scalar settings (for using these figures elsewhere).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel  # noqa: E402

HERE = Path(__file__).resolve().parent
VEC = kernel.VEC


def best_rate(run, work, repeat, min_seconds=0.05):
    """max over repeats of work / seconds for `run()`; each repeat lasts at least min_seconds."""
    run()  # warm-up
    best = 0.0
    for _ in range(repeat):
        calls, start = 0, time.perf_counter()
        while True:
            run()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
        best = max(best, calls * work / elapsed)
    return best


def registers() -> int:
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
        return 32 if "avx512vl" in flags.split() else 16
    except (OSError, StopIteration):
        return 16


def layouts(mr: int, nr: int):
    """(ti, tj) tiles on which a micro-kernel ceiling is measured, with the row stride = tj, so
    every panel is compact: consecutive micro-tiles share the B panel (one column of micro-tiles,
    48, 96 or 192 rows) or the A panel (one row of micro-tiles, 96, 192 or 384 columns). The real kernel
    walks a tile row by row, sharing A; which of the two runs faster varies by shape. (Rows of A,
    tj floats apart, overlap where tile_k > tj: they are only read, and more compact still.)"""
    width = nr * VEC
    rows = [mr * -(-r // mr) for r in (48, 96, 192)]
    cols = [width * -(-c // width) for c in (96, 192, 384)]
    return [(ti, width) for ti in rows] + [(mr, tj) for tj in cols]


def kernel_ceilings(tile_ks, repeat: int, min_seconds: float = 0.01) -> dict:
    """{(mr, nr, tile_k): flops per microsecond}: for every compiled micro-kernel shape and
    k-tile length, the best rate of matmul.c's own tile code over compact, cache-hot layouts
    (`layouts`). The tiled product runs the same code on larger, strided tiles, whose panels
    come from further away and conflict in L1, so it does not run faster."""
    m = kernel.load()
    lib, ffi = m.lib, m.ffi
    ceilings = {}
    for mr, nr in sorted(kernel.UNROLLS):
        for tk in tile_ks:
            best = 0.0
            for ti, tj in layouts(mr, nr):
                a = kernel.aligned(np.full(ti * tj + tk * 64, 1e-3, np.float32))
                b = kernel.aligned(np.full(tk * tj, 1e-3, np.float32), 1088)
                c = kernel.aligned(np.zeros(ti * tj, np.float32), 2176)
                pa, pb, pc = (ffi.cast("float *", x.ctypes.data) for x in (a, b, c))
                flops = 2 * ti * tj * tk
                reps = max(1, 4_000_000 // flops)        # about 40 us a call: the call costs nothing
                rate = best_rate(lambda: lib.block_repeat(mr, nr, tj, pa, pb, pc, ti, tj, tk, reps),
                                 reps * flops, repeat, min_seconds)
                best = max(best, rate)
            ceilings[mr, nr, tk] = best / 1e6
    return ceilings


def measure(repeat: int) -> dict:
    m = kernel.load()
    lib, ffi = m.lib, m.ffi
    iters = 2_000_000
    flops = best_rate(lambda: lib.peak_fma(iters), iters * 16 * VEC * 2, repeat)

    chain = best_rate(lambda: lib.peak_fma_chain(iters), iters, repeat)

    l1 = kernel.aligned(np.ones(4096, np.float32))                       # 16 KiB: L1
    p = ffi.cast("const float *", l1.ctypes.data)
    reps = 2000
    vector_loads = best_rate(lambda: lib.peak_vector_loads(p, l1.size, reps), reps * l1.size // VEC, repeat)
    broadcast_loads = best_rate(lambda: lib.peak_broadcast_loads(p, l1.size, reps // 4), reps // 4 * l1.size, repeat)

    l2 = kernel.aligned(np.ones(512 * 1024 // 4, np.float32))            # 512 KiB: L2
    q = ffi.cast("const float *", l2.ctypes.data)
    l2_bytes = best_rate(lambda: lib.read_bandwidth(q, l2.size, 20), 20 * l2.nbytes, repeat)

    big = 64 * 1024 * 1024 // 4                          # 3 x 64 MiB: memory
    a, b, c = (kernel.aligned(np.ones(big, np.float32)) for _ in range(3))
    pa, pb, pc = (ffi.cast("float *", x.ctypes.data) for x in (a, b, c))
    dram = best_rate(lambda: lib.triad(pa, pb, pc, big, 1), 12 * big, max(3, repeat // 3), min_seconds=0.2)

    return {
        "peak_flops_per_us": flops / 1e6,
        "fma_chain_per_us": chain / 1e6,
        "vector_loads_per_us": vector_loads / 1e6,
        "broadcast_loads_per_us": broadcast_loads / 1e6,
                "l2_bytes_per_us": l2_bytes / 1e6,
        "dram_bytes_per_us": dram / 1e6,
        "registers": registers(),
    }


SETTINGS = {"PEAK_FLOPS": "peak_flops_per_us", "LOAD_RATE": "vector_loads_per_us",
            "L2_BANDWIDTH": "l2_bytes_per_us"}


def raised(rate: float, headroom: float) -> int:
    """`rate` raised by `headroom` percent, rounded up: a rate the machine does not beat."""
    return math.ceil(rate * (1 + headroom / 100))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs per figure; the best is kept (default 9)")
    parser.add_argument("--output", default=str(HERE / "machine.json"),
                        help="where to write (default machine.json here)")
    parser.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    parser.add_argument("--n", type=int, default=384,
                        help="the space's N: ceilings are measured for k tiles of N / 1, 2, 4, 8 (default 384)")
    parser.add_argument("--headroom", type=float, default=2.0,
                        help="percent added to each rate before rounding up (default 2)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: give at least 1 (the best of that many runs is kept)")
    if args.headroom < 0:
        parser.error(f"--headroom {args.headroom}: give a percentage of 0 or more (a lower rate would make the bound too high)")
    if args.n <= 0 or args.n % (8 * VEC):
        parser.error(f"--n {args.n}: give a positive multiple of {8 * VEC} (k tiles of N / 8 of whole vectors)")
    figures = measure(args.repeat)
    tile_ks = [args.n // t for t in (1, 2, 4, 8)]
    ceilings = kernel_ceilings(tile_ks, args.repeat)
    settings = {name: raised(figures[key], args.headroom) for name, key in SETTINGS.items()}
    settings["REGISTERS"] = figures["registers"]
    record = {"figures": figures, "headroom_percent": args.headroom, "settings": settings,
              "kernel_ceilings": [[mr, nr, tk, rate] for (mr, nr, tk), rate in sorted(ceilings.items())],
              "kernel_rates": [[mr, nr, tk, raised(rate, args.headroom)]
                               for (mr, nr, tk), rate in sorted(ceilings.items())]}
    Path(args.output).write_text(json.dumps(record, indent=2) + "\n")
    if args.json:
        print(json.dumps(record))
    else:
        f = figures
        print(f"peak FMA rate      {f['peak_flops_per_us'] / 1e3:8.1f} GFLOP/s (single precision, one thread)")
        print(f"dependent FMAs     {f['fma_chain_per_us'] / 1e3:8.3f} G/s (one chain: the FMA latency)")
        loads = f["vector_loads_per_us"]
        print(f"L1 vector loads    {loads / 1e3:8.2f} G/s ({loads * 32 / 1e3:.0f} GB/s)")
        print(f"L1 broadcast loads {f['broadcast_loads_per_us'] / 1e3:8.2f} G/s (reported only)")
        print(f"L2 read bandwidth  {f['l2_bytes_per_us'] / 1e3:8.1f} GB/s")
        print(f"DRAM triad         {f['dram_bytes_per_us'] / 1e3:8.1f} GB/s (reported only)")
        print(f"vector registers   {f['registers']:8d}")
        print("micro-kernel ceilings, GFLOP/s (unroll_i x unroll_j; columns: tile_k)")
        print("        " + "".join(f"{tk:>7}" for tk in tile_ks))
        for mr, nr in sorted(kernel.UNROLLS):
            print(f"  {mr} x {nr} " + "".join(f"{ceilings[mr, nr, tk] / 1e3:7.1f}" for tk in tile_ks))
        print(f"wrote {args.output}")
    print(" ".join(f"--set {k}={v}" for k, v in settings.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
