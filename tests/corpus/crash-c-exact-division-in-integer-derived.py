# Found by validation.generate.spaces() (shrunk by hand from a generated space).
# The C backend crashes (AttributeError: 'IfExp' object has no attribute 'left', translators/c/codegen.py)
# on an integer-valued derived value whose condition compares an exact quotient: the derived value is
# taken for a fraction. The reference and CP-SAT count 3.
p0 = range(3)
d = if_then_else(p0 / 2 > 0, 1, 0)
