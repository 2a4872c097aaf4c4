# Issue 11 (categorical values and closure iterators), written by hand.
# A closure (`k`) whose input is a closure that yields strings (`s`): the C backend counted 0 (the
# bounds of `s` ignored its strings, so `k`'s table was empty); the reference and CP-SAT count 3.
@iterator
def s():
    yield "x"
    yield "y"
@iterator
def k(s):
    if s == "x":
        yield 1
    else:
        yield 2
        yield 3
