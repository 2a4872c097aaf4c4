# The C backend compiled the constant 2**70 truncated to 64 bits (issue 11): 0 configurations
# where the reference and CP-SAT count 3. It now refuses the constant, naming it and the line.
p = range(3)
require(p < 2**70)
