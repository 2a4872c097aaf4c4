# Found by tests/test_validation_generated.py (slow run, validation.generate.spaces), shrunk by Hypothesis
# and by hand.
# Every candidate divides by zero (p2 is 0 whenever it exists): the reference and C literal count 1
# undefined candidate, CP-SAT's undefined tally is 0 (the valid count, 0, agrees). With p0 = range(2)
# all three agree (1 valid, 1 undefined).
# Cause: CP-SAT memoised a group's count on its parameters and separator only, so the tally's
# question (same group, "undefined" condition) got the valid count's answer. Fixed: the memo key
# includes the group's conditions.
p0 = range(1)
p1 = iterator([p0])
p2 = iterator([p1])
d = 1 // p2
