# The OA framework's filter (seed 002, "The Composer") written as constraints: the mixer's 9
# sequences (oa_mixer.py), with the components that fail applied as the paper reports.
# peel/padding_triangular fail when first (no trapezoid area yet: sequences 2 and 6 degenerate
# into sequence 1); loop_unroll fails before an adaptor component (non-rectangular areas:
# sequences 5 and 9 degenerate into [thread_grouping, loop_tiling, peel/padding_triangular]).
# The valid configurations are the filter's semi-output: the paper's seven sequences.
ADAPTOR = ["peel_triangular", "padding_triangular"]
seq = sequence(["thread_grouping", "loop_tiling", "loop_unroll"] + ADAPTOR, 3, 4)

require(before(seq, "thread_grouping", "loop_tiling"))   # the EPOD script's order
reject_if(before(seq, "loop_unroll", "loop_tiling"))
reject_if(contains(seq, "peel_triangular") & contains(seq, "padding_triangular"))


@reject_if
def adaptor_first(seq):          # peel/padding_triangular cannot apply first
    return first(seq) in ("peel_triangular", "padding_triangular")


@reject_if
def unroll_before_adaptor(seq):  # loop_unroll cannot apply to non-rectangular areas
    return before(seq, "loop_unroll", "peel_triangular") or before(seq, "loop_unroll", "padding_triangular")


@require
def degenerate(seq):             # without loop_unroll only what 5 and 9 degenerate into
    if contains(seq, "loop_unroll"):
        return True
    return last(seq) in ("peel_triangular", "padding_triangular")
