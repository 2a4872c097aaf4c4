# Found by tests/test_validation_generated.py (validation.generate.spaces, slow run), shrunk by Hypothesis
# (which gave up after five minutes: not minimal).
# CP-SAT's undefined-operation tally was 68 where the reference and C literal counted 44, with the CP-SAT translator as it was at 01:34 UTC
# (translators/cpsat/backend.py and cpsat_count.py were being edited); the version of 01:38 agrees.
# Kept as a regression space.
S = 3
p0 = iterator(['tex', 'a', 'a', 'a'])
@iterator
def p1():
    for v in range(3, 9):
        yield v
d0 = if_then_else(p0 == 'tex', p1 - p1, p1)
d1 = if_then_else(p0 == 'a', 5 ** 2, p1)
if S > 1:
    d1 = d1 * 2
p2 = iterator([d0 ** 1, -3, 2]) - range(d0, min(d0 + 4, d0 + 8), 2)
b2 = (d0 != 7) & ((p1 * d1) / (d0 - 7) <= 3)
p3 = range(-6, (-6) + 4, 2)
p4 = iterator([-4, 1])
c0 = require((d0 != 8) & (if_then_else((-d1) / (p3 + 4) >= (-p3) / d0, p4, 1) / (d0 - 8) > 3))
