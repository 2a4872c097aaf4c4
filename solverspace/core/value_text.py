"""Values given as text on the command line: one rule for every command.

`check`, `neighbors`, `repair`, `sample --given` (`NAME=VALUE`), `--set NAME=VALUE` and an
order's items read a value the same way:

- an **integer** is written as solverspace writes one: ASCII decimal digits with an optional
  leading `-`, no leading zeros, nothing else (`0`, `16`, `-3`; not `-0`);
- **any other text is a categorical string**, matched exactly as written: no spaces stripped,
  no case folded, no number conversion.

Why this rule: every value has one spelling, the one the output files use, so a value read back
from an output line is the value written, and text that Python's `int()` would also take
(`0x1`, `' 1'`, `1_000`, `+1`, `007`, `١`) can never be read as an integer where a categorical
value was meant (a categorical `'007'` stays `'007'`). For a parameter or setting that takes
integers, such text is refused, and the message names the spelling to write
(`x='0x1'`: write `1`); so is `1.0`.

>>> integer_text("-16"), integer_text("0x10"), integer_text(" 1"), integer_text("007")
(-16, None, None, None)
>>> integer_spelling("0x10"), integer_spelling(" 1 "), integer_spelling("1.0"), integer_spelling("abc")
('16', '1', '1', None)
"""
from __future__ import annotations

import math
import re

#: The one spelling of an integer (ASCII digits only: `re`'s `\\d` would take other scripts' digits).
INTEGER = re.compile(r"(?:0|-?[1-9][0-9]*)\Z")

#: What the rule says, for messages.
RULE = "an integer is written in decimal digits with an optional leading '-' (no spaces, '+', 0x, _, '.' or leading zeros)"


def integer_text(text: str) -> int | None:
    """The integer `text` spells by the rule, or None when it spells none (then it is text)."""
    return int(text) if INTEGER.match(text) else None


def integer_spelling(text: str) -> str | None:
    """Where `text` is not an integer by the rule but means one to Python (`0x10`, ` 1`, `+1`,
    `007`, `1_000`, `1.0`), the integer's spelling by the rule, for a message's hint; else None."""
    stripped = text.strip()
    if len(stripped) > 200:   # a hint, not a parser: nothing long is tried
        return None
    for read in (lambda t: int(t, 0), int):
        try:
            return str(read(stripped))
        except ValueError:
            pass
    try:
        number = float(stripped)
    except ValueError:
        return None
    if math.isfinite(number) and number.is_integer() and abs(number) < 2 ** 53:
        return str(int(number))
    return None


def integer_refusal(head: str, text: str, example: str) -> tuple[str, str]:
    """The message and hint refusing `text` where an integer is expected (`head`: what was given
    and who takes integers)."""
    spelling = integer_spelling(text)
    message = f"{head}: {RULE}"
    hint = f"write {spelling}" if spelling is not None else f"give an integer, e.g. {example}"
    return message, hint
