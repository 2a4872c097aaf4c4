"""Lines on stderr, each written whole.

`print(text, file=sys.stderr)` writes the text and its newline in two writes; two processes that
share a stderr (commands run in parallel into one log) can then put a line of one between the
text and the newline of the other ("...give every parameter a valuedistance 23"). `say` writes
the text and its newline in one write and flushes it.
"""
from __future__ import annotations

import sys


def say(text: str) -> None:
    """`text` and a newline on stderr, in one write, flushed."""
    stream = sys.stderr
    stream.write(f"{text}\n")
    stream.flush()
