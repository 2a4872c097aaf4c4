# The C backend's count wrapped past 63 bits (issue 11): 2**64 * 5 configurations counted as
# 0 (and then `get` and `sample` said the space was empty); CP-SAT counted them exactly.
# Parameters nothing depends on are multiplied into the count: here 64 bits of them.
x = range(3)
require(x != 1)
p0 = range(1 << 16)
p1 = range(1 << 16)
p2 = range(1 << 16)
p3 = range(1 << 16)
y = range(x, 4)
require(x + y != 3)
