# A CPU matrix multiplication C[i, j] += A[i, k] * B[k, j] tiled in all three loops: six loops
# (tile loops i, j, k and point loops ii, jj, kk) in any legal order (each tile loop outside
# its point loop), tile sizes that depend on which loop is innermost (the innermost point loop
# is vectorised, so its tile is a multiple of the vector width), and the three tiles of A, B
# and C within the L1 cache.
VECTOR = setting(8, doc="vector width in elements")
L1 = setting(4096, doc="L1 data cache in elements (32 KiB of doubles)")

order = permutation(["i", "j", "k", "ii", "jj", "kk"])
require(before(order, "i", "ii"))
require(before(order, "j", "jj"))
require(before(order, "k", "kk"))


@iterator
def tile_i(order):
    if last(order) == "ii":
        return range(VECTOR, 129, VECTOR)
    return iterator([4, 8, 16, 32, 64, 128])


@iterator
def tile_j(order):
    if last(order) == "jj":
        return range(VECTOR, 129, VECTOR)
    return iterator([4, 8, 16, 32, 64, 128])


@iterator
def tile_k(order):
    if last(order) == "kk":
        return range(VECTOR, 129, VECTOR)
    return iterator([4, 8, 16, 32, 64, 128])


footprint = tile_i * tile_k + tile_k * tile_j + tile_i * tile_j
require(footprint <= L1)
# the output tile stays in registers only when k's point loop is innermost
reject_if((last(order) == "kk") & (tile_i * tile_j > 256))
