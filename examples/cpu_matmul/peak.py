"""Measure this machine's peaks for the roofline bound of `space.py` (one thread) and write them
to `machine.json` next to this file (git-ignored).

    python examples/cpu_matmul/peak.py [--repeat 9] [--json]

What it measures (each the BEST of --repeat runs: noise from other work on the machine only
ever lowers a measured rate, and a bound built from a too low rate would be too high):

- peak_flops_per_us: single-precision flops per microsecond of independent vector FMAs
  (matmul.c `peak_fma`: 16 accumulators of 8 floats, enough to cover FMA latency times pipes).
- fma_chain_per_us: dependent vector FMAs per microsecond (one accumulator: 1 / FMA latency).
- vector_loads_per_us: full-vector (32-byte) loads per microsecond from an L1-resident buffer
  (8 independent sums), the loads of B and C the micro-kernel issues. Broadcast loads (of A)
  are measured and reported but not used: a core may issue them beside the vector loads.
- l2_bytes_per_us: read bandwidth from a buffer in L2 (512 KiB), where the tiles of the
  matrices live between uses (the matrices, 3 * 384^2 * 4 bytes = 1.7 MiB, stay in L2/L3
  between repeats of measure.py).
- dram_bytes_per_us: triad bandwidth (a = b + 3 c) over 3 x 64 MiB, for reference: the
  kernel's data never comes from memory once warm, so the bound does not use it.

The settings of space.py are these rates raised by --headroom percent (default 2: over repeated
runs here the best-of-9 FMA and L1 figures varied under 1%, the L2 bandwidth about 4%) and
rounded UP to integers, so time = work / rate is not overestimated, and `registers`: 32 vector
registers where the CPU has AVX-512VL (ymm0-31 under -march=native), else 16. The last line printed is the `--set` arguments for
`solverspace tune`.
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


SETTINGS = {"PEAK_FLOPS": "peak_flops_per_us", "CHAIN_RATE": "fma_chain_per_us",
            "LOAD_RATE": "vector_loads_per_us", "L2_BANDWIDTH": "l2_bytes_per_us"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs per figure; the best is kept (default 9)")
    parser.add_argument("--output", default=str(HERE / "machine.json"),
                        help="where to write (default machine.json here)")
    parser.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    parser.add_argument("--headroom", type=float, default=2.0,
                        help="percent added to each rate before rounding up (default 2)")
    args = parser.parse_args(argv)
    figures = measure(args.repeat)
    settings = {name: math.ceil(figures[key] * (1 + args.headroom / 100)) for name, key in SETTINGS.items()}
    settings["REGISTERS"] = figures["registers"]
    record = {"figures": figures, "headroom_percent": args.headroom, "settings": settings}
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
        print(f"wrote {args.output}")
    print(" ".join(f"--set {k}={v}" for k, v in settings.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
