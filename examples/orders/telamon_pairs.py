# A Telamon-style space (seed 003, Table 4: pairwise order decisions): three loop dimensions
# d0, d1, d2 and two instructions (a load and a store) placed in one program order. Each pair
# of statements is ordered one way or the other; the decisions Telamon tunes are the pairwise
# orders, and the constraints say which combinations are coherent: the load comes before the
# store, the store after the innermost of its dimensions, and d2 (the contiguous dimension)
# is not outermost. Each pairwise decision is a derived value (before(...)) to output.
stmts = permutation(["d0", "d1", "d2", "load", "store"])
require(before(stmts, "load", "store"))
require(before(stmts, "d2", "store"))
reject_if(first(stmts) == "d2")
unroll = iterator([1, 2, 4])
reject_if((unroll > 1) & (last(stmts) != "store"))   # unrolling needs the store innermost

d0_before_d1 = before(stmts, "d0", "d1")
d0_before_d2 = before(stmts, "d0", "d2")
d1_before_d2 = before(stmts, "d1", "d2")
load_position = position(stmts, "load")
