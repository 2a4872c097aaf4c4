# Issue 11 (categorical values and closure iterators), written by hand.
# The C backend tabulated the closure `k` over the integer codes of `alg` (0, 1) instead of its
# strings: `alg == "one"` was never true, so C listed (one, 3), (two, 3) where the reference and
# CP-SAT list (one, 1), (one, 2), (two, 3); CP-SAT's partial check `alg=one` said "ruled out by the
# domains alone" (the bounds of `k` came from the same wrong table). Fixed: one closure table over
# the inputs' values, strings as strings (solverspace/lang/closures.py).
alg = iterator(["one", "two"])
@iterator
def k(alg):
    if alg == "one":
        yield 1
        yield 2
    else:
        yield 3
