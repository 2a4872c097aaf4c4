"""A synthetic benchmark for the README's `tune` example: it prints a made-up run time in seconds
for a GEMM configuration, the example's roofline bound plus seeded noise (1% to 30% more, the
same for the same configuration), so that `tune` can be tried without a GPU kernel.

Usage: python examples/tune_synthetic/bench.py FMAS_PER_BLOCK LOADS_PER_BLOCK THREADS_PER_BLOCK [ANY ...]
(every argument seeds the noise: pass the parameters that tell configurations apart).
"""
import random
import sys
from fractions import Fraction


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    fmas, loads, threads = (int(a) for a in argv[:3])
    bound = max(Fraction(fmas, 1000), Fraction(loads, 500)) + Fraction(1000, threads)
    noise = random.Random(" ".join(argv)).uniform(0.01, 0.30)
    print(f"{float(bound) * (1 + noise):.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
