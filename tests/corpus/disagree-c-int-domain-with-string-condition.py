# Found by tests/test_validation_generated.py (slow run, validation.generate.spaces), shrunk by Hypothesis,
# validation.minimize and by hand.
# The C backend takes `p` for a categorical parameter because its domain compares `k` with a string:
# it lists p's integer values decoded as category strings (p='a', p='bb'), so its set of configurations
# differs from the reference's (same count, 3; different digests); the sampler returns them too.
k = iterator(['bb', 'a'])
p = range(if_then_else(k == 'a', 1, 2))
