# Found by validation.generate.spaces() (shrunk by hand from a generated space).
# The C backend crashes (ValueError from solverspace/lang/bounds.py: "closure iterator 'p1': input 'p0'
# is unbounded") when a closure iterator reads a parameter whose domain is empty; the reference
# and CP-SAT count 0.
p0 = range(0)
@iterator
def p1(p0):
    yield 1
