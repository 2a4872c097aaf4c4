"""What the commands that write a file share: `-o` (and its sidecars) must not be the space file
being read, and what was written is said where it does not mix with the output."""
from __future__ import annotations

import sys

from solverspace.core.output import check_not_input, is_standard_output


def check_output(args, space, *paths) -> None:
    """`-o` (and its sidecars) must not be the space file being read: refused, exit 2."""
    for path in (args.output, *paths):
        check_not_input(path, space.model.source)


def summary_stream(output):
    """Where a command says what it wrote: standard error when the output itself is standard output."""
    return sys.stderr if is_standard_output(output) else sys.stdout
