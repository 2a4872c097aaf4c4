# Issue 11 (categorical values and closure iterators), written by hand.
# The C backend compared a categorical value with an integer by its code ("a" has code 0, so
# `k != 0` and `k != x` rejected k="a", x=0): C counted 2, the reference and CP-SAT 6. As in Python
# a string never equals an integer; the kinds decide it statically (solverspace/lang/kinds.py).
k = iterator(["a", "b"])
x = range(0, 3)
require(k != 0)
require(k != x)
