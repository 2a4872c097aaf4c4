# Found by tests/test_validation_generated.py (slow run, validation.generate.spaces), shrunk by Hypothesis,
# validation.minimize and by hand.
# Same cause as disagree-c-int-domain-with-string-condition.py: the integer parameter `p` is taken for a
# categorical one (its @iterator body compares `k` with a string); decoding its values as category codes
# fails: IndexError "index 2 is out of bounds for axis 0 with size 2" in CEnumerator.decode
# (translators/c/backend.py). The reference and CP-SAT count 5.
k = iterator(['bb', 'a'])
@iterator
def p(k):
    if k != 'bb':
        return range(2)
    return range(3)
