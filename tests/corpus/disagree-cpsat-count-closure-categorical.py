# Found by tests/test_validation_generated.py (validation.generate.spaces, slow run), shrunk by Hypothesis
# (which gave up after five minutes: not minimal).
# CP-SAT counted 0 where the reference, C and C literal counted 18, with the CP-SAT translator as it was at 01:34 UTC
# (translators/cpsat/backend.py and cpsat_count.py were being edited); the version of 01:38 agrees.
# Kept as a regression space.
S = 3
p0 = iterator(['tex', 'a', 'a', 'a'])
@iterator
def p1():
    for v in range(3, 9):
        yield v
d0 = if_then_else(p0 == 'tex', p1 + p1, p1)
d1 = 5
d1 = d1 + p1
if S > 0:
    d1 = d1 * 0
p2 = iterator([p1, p1])
d2 = p1
d2 = d2 + d0
p3 = range(p1, d0, 2)
p4 = range(p1, p1 + 1, 2)
c0 = require(d1 / 2 * 2 <= d2)
