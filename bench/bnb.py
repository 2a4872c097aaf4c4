"""Benchmark (issues 14, 28): the K best GEMM configurations by two performance models, by branch and bound.

For the K40c (double, real) and the H100 single-real opt-in GEMM spaces, for an N x N x N GEMM,
with the peak rates of `gemm/devices.py` (each sourced there) and the SM counts below:

`roofline` (issue 14), in nanoseconds:

    time = max(flops / peak_flop_per_ns, bytes / bytes_per_ns)
    flops = 2 * N**3 (times 4 for complex arithmetic)
    bytes = N**3 * (1 / blk_m + 1 / blk_n) * element size   (each block reads its panels of A and B)

Degenerate as a benchmark: every configuration whose tile is large enough is at the compute roof,
2 N**3 / peak, so most of the space ties at the best value (the ties line counts them) and any K
of them in the tie order are the answer.

`waves` (issue 28), in nanoseconds: the roofline per block, run in waves of resident blocks, with
the shared-memory loads that take issue slots from the FMAs:

    r     = min(max_blocks_by_regs, max_blocks_by_shmem, max_threads_per_multi_processor // threads_per_block)
    S     = SMs * r                                 block slots of one wave
    B     = ceil(N / blk_m) * ceil(N / blk_n)       blocks of the grid
    runs  = B + (S - B % S) % S                     = ceil(B / S) * S, the slots of all the waves
    Kp    = N + (blk_k - N % blk_k) % blk_k         = ceil(N / blk_k) * blk_k, the K loop in whole k-tiles
    issue = Kp * (blk_m * blk_n + (blk_m * dim_n + blk_n * dim_m) / dim_vec)    per block
    bytes = Kp * (blk_m + blk_n) * element size                                 per block
    time  = runs * max(2 * issue / peak_flop_per_ns, bytes / bytes_per_ns)

(complex arithmetic: 4 FMAs per complex FMA and 2 loads per complex value, as the space counts
`fmas_per_block` and `loads_per_block`). Why each term is there:

- `r`: blocks resident on one SM at a time (occupancy), limited by registers and shared memory
  (the space's own `max_blocks_by_regs`, `max_blocks_by_shmem`, each already capped by
  `max_blocks_per_multi_processor`) and by threads per SM (`gemm/devices.py`).
- `runs`: a grid of B blocks runs in ceil(B / S) waves of S resident blocks, and the last,
  partial wave takes as long as a full one (wave quantisation, the tail effect); a tile that does
  not divide N adds padded blocks to B. The form `B + (S - B % S) % S` equals ceil(B / S) * S and
  keeps the interval analysis's bound on it near B (the compiled search needs every numerator
  under 2**63).
- `Kp`: a k-tile that does not divide N pads the last step of the K loop.
- `issue`: per block and k, one FMA instruction per element of the blk_m x blk_n tile, plus the
  shared-memory loads feeding them: each of the dim_m * dim_n threads loads thr_m + thr_n values
  (together blk_m * dim_n + blk_n * dim_m), dim_vec per vector instruction. A load takes an issue
  slot an FMA could have used, so the compute time grows by the loads per FMA (1 / thr_m +
  1 / thr_n) / dim_vec: the register tile and the vector width. This is the instruction-mix bound
  of Lai and Seznec, "Performance upper bound analysis and optimization of SGEMM on Fermi and
  Kepler GPUs", CGO 2013 (the FFMA share of the issued instructions bounds the attainable peak).
- `bytes`: per k-tile a block reads its blk_k x (blk_m + blk_n) panels of A and B from memory
  (= the space's `shmem_per_block` per k-tile).
- `runs * max(...)`: in one wave each SM runs its r blocks at 1 / SMs of the device's FMA rate,
  and the S blocks share the device's bandwidth: a wave takes S * max(2 * issue / peak,
  bytes / bandwidth), and there are ceil(B / S) of them.

When blk_m, blk_n and blk_k divide N, S divides B and nothing is loaded, `waves` is the roofline;
otherwise it is above it. It is exact rational arithmetic over the space's parameters and derived
values and integer constants (no floats). Its values are spread: few configurations tie at the
best (the ties line), and those differ only in parameters no term reads (tex_a, tex_b, shmem_l1,
shmem_banks, vec_mul, the load reshapes dim_m_a, dim_n_a, dim_m_b, dim_n_b) or by swapping the
roles of M and N (a square GEMM).

Per device it prints the space size, then per model and engine the time and the answer:

- `bnb`: branch and bound compiled in C (translators/c/best.py), with prefixes visited against
  the space size; `exhaustive`: every valid configuration evaluated by the same compiled walk.
  Both are timed warm (`build` is the first call: generation and compilation, paid once per
  space shape and objective) and their time is the whole `Space.best` call. Where the C search
  refuses the model, `bnb` searches in Python and the line says so (`result.note`);
- `bnb-reference`: the same branch and bound walked in Python;
- `cpsat` (OR-Tools; it refuses the roofline's constants, past its 64-bit range, so it also runs
  the roofline divided by 2**20, which ranks the same; it refuses `waves` too).

Each is stopped at `--time-limit`. The top K configurations of the engines that finished must
agree (checked, printed). Then the ties: how many configurations have the best value, counted
exactly (how: printed on the line; `roofline`: `Space.count("c")` of the space with the added
constraint that the memory time is at most the compute time, which is the set at the best value
when the best is the compute roof, checked; `waves`: the exhaustive engine's ranked list, its
length doubled until it ends past the best value), and how many distinct values the top K have.

    python bench/bnb.py [--objective roofline|waves|both] [--top 10] [--time-limit 120] [--n 4096]
                        [--devices k40c,h100]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solverspace import Space  # noqa: E402
from solverspace.core.errors import SolverspaceError  # noqa: E402
from solverspace.gemm.devices import PEAK_RATES, get_device  # noqa: E402
from solverspace.io.loader import read_space  # noqa: E402

SETTINGS = {
    "k40c": {"device": "k40c"},
    "h100": {"device": "h100", "precision": "single", "arithmetic": "real", "shared_memory": "opt-in"},
}

# Streaming multiprocessors (not in gemm/devices.py, which holds the space's limits and peak rates):
# [K40]  NVIDIA Tesla K40 Board Specification BD-06902-001: 2880 CUDA cores; a Kepler GK110 SMX
#        has 192 (NVIDIA Kepler GK110 Architecture Whitepaper): 15 SMX. With the 875 MHz boost
#        clock, 2880 * 2 * 0.875 = 5040 FP32 flop/ns, as PEAK_RATES["k40c"].
# [H100] NVIDIA H100 Tensor Core GPU Architecture whitepaper, H100 SXM5: 132 SMs of 128 FP32
#        cores (16,896); with the 1.98 GHz boost clock, about 67,000 FP32 flop/ns, as PEAK_RATES["h100"].
SMS = {"k40c": 15, "h100": 132}

TIES_FIRST_LIST = 1024      # waves' ties: the exhaustive ranked list starts this long ...
TIES_LONGEST_LIST = 2 ** 18  # ... and doubles up to this (the C search allocates it per thread)


def _arithmetic(device: str, settings: dict) -> tuple[bool, int, int]:
    """(complex?, element size in bytes, peak flop/ns) of the space's precision and arithmetic."""
    peak = PEAK_RATES[device]
    single = settings.get("precision", "double") == "single"
    complex_ = settings.get("arithmetic", "real") == "complex"
    element = (4 if single else 8) * (2 if complex_ else 1)
    return complex_, element, peak.fp32_flop_per_ns if single else peak.fp64_flop_per_ns


def roofline(device: str, settings: dict, n: int, scale: int = 1) -> str:
    """The roofline model in nanoseconds (divided by `scale`, a power of two dividing N**3: same ranking)."""
    peak = PEAK_RATES[device]
    complex_, element, rate = _arithmetic(device, settings)
    flops = 2 * n ** 3 * (4 if complex_ else 1)
    return (f"max({flops // scale} / {rate}, {n ** 3 * element // scale} * (blk_m + blk_n) / "
            f"(blk_m * blk_n * {peak.bytes_per_ns}))")


def waves(device: str, settings: dict, n: int) -> str:
    """The waves model in nanoseconds (the module's docstring: formula and terms)."""
    peak = PEAK_RATES[device]
    complex_, element, rate = _arithmetic(device, settings)
    fmas, loads = ("4 * ", "2 * ") if complex_ else ("", "")
    per_sm = get_device(device).max_threads_per_multi_processor
    slots = f"({SMS[device]} * min(max_blocks_by_regs, max_blocks_by_shmem, {per_sm} // threads_per_block))"
    blocks = f"(({n} + blk_m - 1) // blk_m) * (({n} + blk_n - 1) // blk_n)"
    runs = f"({blocks} + ({slots} - {blocks} % {slots}) % {slots})"
    k_loop = f"({n} + (blk_k - {n} % blk_k) % blk_k)"
    issue = f"{k_loop} * ({fmas}blk_m * blk_n + {loads}(blk_m * dim_n + blk_n * dim_m) / dim_vec)"
    return f"{runs} * max(2 * {issue} / {rate}, {k_loop} * (blk_m + blk_n) * {element} / {peak.bytes_per_ns})"


def roofline_ties(space: Space, device: str, settings: dict, n: int, best, time_limit: float) -> str:
    """The configurations at the best roofline value, where that is the compute roof: those whose
    memory time is at most the compute time, counted by the C backend on the space plus that
    constraint (both sides divided by N**3 and their gcd, so it stays in 64 bits)."""
    peak = PEAK_RATES[device]
    complex_, element, rate = _arithmetic(device, settings)
    flops = 2 * n ** 3 * (4 if complex_ else 1)
    if best != Fraction(flops, rate):
        return ties_by_list(space, roofline(device, settings, n), best, time_limit)
    # N**3 * element * (blk_m + blk_n) / (blk_m * blk_n * bw) <= flops / rate
    memory, compute = n ** 3 * element * rate, flops * peak.bytes_per_ns
    g = math.gcd(memory, compute)
    text, filename = read_space("gemm")
    constraint = f"require({memory // g} * (blk_m + blk_n) <= {compute // g} * blk_m * blk_n)"
    start = time.perf_counter()
    ties = Space.from_source(f"{text}\n{constraint}\n", settings, filename=filename).count("c")
    return (f"{ties:,} configurations ({time.perf_counter() - start:.1f} s: the best is the compute roof; "
            f"Space.count('c') of the space plus {constraint})")


def ties_by_list(space: Space, objective: str, best, time_limit: float) -> str:
    """The configurations at the best value, from the exhaustive engine's ranked list, doubled in
    length until it ends past the best value (or up to TIES_LONGEST_LIST)."""
    top, start = TIES_FIRST_LIST, time.perf_counter()
    while True:
        result = space.best(objective, maximize=False, top=top, backend="exhaustive", time_limit=time_limit)
        if not result.exact:
            return f"not counted: the exhaustive list of {top:,} stopped by the {time_limit:g} s limit"
        ties = sum(1 for r in result.ranked if r.objective == best)
        if ties < len(result.ranked) or len(result.ranked) < top:
            distinct = len({r.objective for r in result.ranked})
            return (f"{ties:,} configurations ({time.perf_counter() - start:.1f} s: the exhaustive engine's "
                    f"{top:,} best, {len(result.ranked) - ties:,} of them past the best value; "
                    f"{distinct} distinct values in those {len(result.ranked):,})")
        if top >= TIES_LONGEST_LIST:
            return f"at least {ties:,} configurations (the exhaustive engine's {top:,} best all tie)"
        top *= 2


OBJECTIVES = {"roofline": roofline, "waves": waves}


def run_objective(name: str, space: Space, device: str, settings: dict, size: int, args) -> None:
    model = OBJECTIVES[name](device, settings, args.n)
    print(f"  {name} model (ns): {model}", flush=True)
    runs = [("build", "bnb", model), ("bnb", "bnb", model), ("exhaustive", "exhaustive", model),
            ("bnb-reference", "bnb-reference", model), ("cpsat", "cpsat", model)]
    if name == "roofline":
        runs.append(("cpsat/2^20", "cpsat", roofline(device, settings, args.n, 2 ** 20)))
    answers, ranked = {}, {}
    for label, engine, objective in runs:
        start = time.perf_counter()
        try:
            result = space.best(objective, maximize=False, top=args.top, backend=engine,
                                time_limit=args.time_limit)
        except SolverspaceError as exc:
            print(f"  {label:13} {time.perf_counter() - start:8.3f} s  refused: {str(exc).splitlines()[0][-160:]}")
            continue
        seconds = time.perf_counter() - start
        line = f"  {label:13} {seconds:8.3f} s"
        if result.note:
            line += f"  NOTE: {result.note[-200:]}"
        if label == "build":
            print(line + "  (first bnb call: generate and compile the search; later calls load it)", flush=True)
            continue
        if not result.exact:
            line += f"  stopped by the {args.time_limit:g} s limit: not proven"
        elif label != "cpsat/2^20":
            answers[label] = [r.configuration for r in result.ranked]
            ranked[label] = result.ranked
        if result.search is not None:
            visited = sum(result.search.visited)
            line += (f"  prefixes visited {visited:,} ({100 * visited / size:.3f}% of the space size), "
                     f"configurations evaluated {result.search.evaluated:,}, subtrees cut {sum(result.search.pruned):,}")
        if result.ranked:
            line += f"  best {float(result.ranked[0].objective):,.0f} ns"
        print(line, flush=True)
    finished = list(answers.values()) or [None]
    agree = all(a == finished[0] for a in finished)
    print(f"  top {args.top} configurations of the engines that finished ({', '.join(answers)}): "
          + ("identical" if agree else "DIFFERENT"), flush=True)
    if not agree:
        for label, configurations in answers.items():
            print(f"    {label}: " + "; ".join(f"{float(r.objective):,.3f} {r.configuration}" for r in ranked[label]))
    if not ranked:
        print("  ties: not counted (no engine finished)")
        return
    top = next(iter(ranked.values()))
    best = top[0].objective
    distinct = len({r.objective for r in top})
    if name == "roofline":
        ties = roofline_ties(space, device, settings, args.n, best, args.time_limit)
    else:
        ties = ties_by_list(space, model, best, args.time_limit)
    print(f"  ties at the best value ({float(best):,.0f} ns): {ties}; of {size:,}")
    print(f"  distinct values in the top {args.top}: {distinct} "
          f"({float(top[0].objective):,.0f} to {float(top[-1].objective):,.0f} ns)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objective", choices=["roofline", "waves", "both"], default="both",
                        help="the model(s) to rank by (default both; the docstring gives them)")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--devices", default="k40c,h100")
    args = parser.parse_args()
    names = list(OBJECTIVES) if args.objective == "both" else [args.objective]
    for device in args.devices.split(","):
        settings = SETTINGS[device]
        space = Space.load("gemm", settings)
        start = time.perf_counter()
        size = space.count("c")
        counted = time.perf_counter() - start
        print(f"\n{device} {settings}: {size:,} configurations (C count {counted:.2f} s)")
        for name in names:
            run_objective(name, space, device, settings, size, args)


if __name__ == "__main__":
    main()
