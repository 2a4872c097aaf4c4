"""Time one configuration of the tiled matrix multiplication; the last line printed is the
minimum time in seconds (what `solverspace tune --measure` reads).

    python examples/cpu_matmul/measure.py TILE_I TILE_J TILE_K UNROLL_I UNROLL_J ORDER [--n 384]
    python examples/cpu_matmul/measure.py --tile-i 32 --tile-j 48 --tile-k 128 --unroll-i 4 --unroll-j 2 --order ikj

ORDER is the tile loops outermost first: `ikj` or `i>k>j`. It runs the kernel once (warm-up and
correctness check against float64 NumPy), then --repeat timed runs (each at least --min-seconds
in total, repeating the call), and prints the minimum. Exit status 2 (with a message on
stderr) for a configuration the kernel cannot run, 3 for a wrong product.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel  # noqa: E402


def operands(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    B = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    return kernel.aligned(A, 0), kernel.aligned(B, 1088)


def error(A, B, C) -> float:
    """Largest |C - A @ B| relative to the float32 rounding scale n * eps * |A| |B|."""
    exact = A.astype(np.float64) @ B.astype(np.float64)
    scale = A.shape[0] * np.finfo(np.float32).eps * (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64))
    return float(np.max(np.abs(C - exact) / scale))


def run(n, tile_i, tile_j, tile_k, unroll_i, unroll_j, order, repeat=10, min_seconds=0.01, check=True):
    """(min seconds per product, relative error or None); raises ValueError for a configuration
    the kernel cannot run and ArithmeticError for a wrong product."""
    why = kernel.check_configuration(n, tile_i, tile_j, tile_k, unroll_i, unroll_j)
    if why:
        raise ValueError(why)
    kernel.order_indices(order)
    m = kernel.load()
    A, B = operands(n)
    C = kernel.aligned(np.full((n, n), np.nan, np.float32), 2176)
    config = (tile_i, tile_j, tile_k, unroll_i, unroll_j, order)
    kernel.multiply(m, A, B, C, *config)             # warm-up (and the result checked below)
    err = None
    if check:
        err = error(A, B, C)
        if not err <= 1.0:
            raise ArithmeticError(f"wrong product: error {err:.3g} x the float32 rounding bound")
    best = float("inf")
    for _ in range(repeat):
        calls, start = 0, time.perf_counter()
        while True:
            kernel.multiply(m, A, B, C, *config)
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
        best = min(best, elapsed / calls)
    return best, err


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("positional", nargs="*", help="TILE_I TILE_J TILE_K UNROLL_I UNROLL_J ORDER")
    for name in ("tile-i", "tile-j", "tile-k", "unroll-i", "unroll-j"):
        parser.add_argument(f"--{name}", type=int)
    parser.add_argument("--order")
    parser.add_argument("--n", type=int, default=384, help="matrix size (default 384, the space's N)")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs; the minimum is printed (default 10)")
    parser.add_argument("--min-seconds", type=float, default=0.01,
                        help="each timed run repeats the product for at least this long (default 0.01)")
    parser.add_argument("-v", "--verbose", action="store_true", help="also print GFLOP/s and the error")
    args = parser.parse_args(argv)
    names = ["tile_i", "tile_j", "tile_k", "unroll_i", "unroll_j", "order"]
    values = {name: getattr(args, name) for name in names}
    if args.positional:
        if len(args.positional) != 6 or any(v is not None for v in values.values()):
            parser.error("give the six values TILE_I TILE_J TILE_K UNROLL_I UNROLL_J ORDER, or the options, not both")
        values = dict(zip(names, args.positional))
    missing = [n for n, v in values.items() if v is None]
    if missing:
        parser.error("missing: " + ", ".join(missing))
    try:
        ints = {n: int(values[n]) for n in names[:5]}
    except ValueError as exc:
        parser.error(str(exc))
    try:
        seconds, err = run(args.n, **ints, order=values["order"], repeat=args.repeat, min_seconds=args.min_seconds)
    except ValueError as exc:
        print(f"measure.py: cannot run this configuration: {exc}", file=sys.stderr)
        return 2
    except ArithmeticError as exc:
        print(f"measure.py: {exc} for {values}", file=sys.stderr)
        return 3
    if args.verbose:
        print(f"{2 * args.n ** 3 / seconds / 1e9:.1f} GFLOP/s, error {err:.3g} x the rounding bound")
    print(f"{seconds:.9g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
