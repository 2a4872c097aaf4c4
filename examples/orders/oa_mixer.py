# The OA framework's mixer (seed 002, "The Composer", Figs. 8-9): the EPOD script of GEMM-NN
# [thread_grouping, loop_tiling, loop_unroll] mixed with one component of Adaptor Triangular
# (peel_triangular or padding_triangular), each sequence keeping its own order. With the
# adaptor optional this gives the paper's 9 mixed sequences. `gm_map=yes` adds the polyhedral
# GM_map, which must come first if it appears (the paper's location constraint).
EPOD = ["thread_grouping", "loop_tiling", "loop_unroll"]
ADAPTOR = ["peel_triangular", "padding_triangular"]
gm_map = setting("no", choices=["no", "yes"], doc="also mix in GM_map (must be first if it appears)")

EXTRA = ["GM_map"] if gm_map == "yes" else []
seq = sequence(EPOD + ADAPTOR + EXTRA, 3, 5)

# every EPOD component, in the script's order
require(before(seq, "thread_grouping", "loop_tiling") & before(seq, "loop_tiling", "loop_unroll"))
# at most one component of the adaptor
reject_if(contains(seq, "peel_triangular") & contains(seq, "padding_triangular"))


@reject_if
def gm_map_not_first(seq):
    return contains(seq, "GM_map") and first(seq) != "GM_map"
