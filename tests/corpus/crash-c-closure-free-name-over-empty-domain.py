# Found by tests/test_validation_generated.py (validation.generate.spaces), shrunk by Hypothesis and by hand.
# Like crash-c-closure-over-empty-domain.py, but the closure reads `p0` as a free name (not an argument).
# The C backend crashes: ValueError "closure iterator 'p3': input 'p0' is unbounded" (solverspace/lang/bounds.py);
# the reference and CP-SAT count 0.
@iterator
def p3():
    for v in range(0, 1):
        if v * p0 % 2 != 0:
            yield v
p0 = range(0, 0, 2)
