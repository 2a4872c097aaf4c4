# Issue 11 (categorical values and closure iterators), written by hand.
# C and CP-SAT refused the closure `k` ("1000000 input combinations to tabulate") because they
# tabulated it over the interval hull of `a`, which takes 2 values; now every backend reads one
# table over the values `a` can take (solverspace/lang/closures.py). All count 4.
a = iterator([1, 1000000])
@iterator
def k(a):
    yield a
    yield a + 1
