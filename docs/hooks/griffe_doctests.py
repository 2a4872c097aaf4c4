"""Griffe extension for the API reference: a docstring's doctest examples (`>>>` lines, their `...`
continuations and the output up to the next blank line) are shown as `pycon` code blocks. The
docstrings are Google style with doctests in the text, which Markdown would otherwise read as
nested quotes, and their output as links (`[('x', 1)]`)."""
from __future__ import annotations

import griffe

FENCE = "```"


def fenced_doctests(text: str) -> str:
    """`text` with each run of doctest lines put between ```pycon fences (existing fences kept)."""
    out: list[str] = []
    in_fence = in_example = False
    indent = ""
    for line in text.splitlines():
        stripped = line.strip()
        if in_example and not stripped:
            out.append(indent + FENCE)
            in_example = False
        elif not in_example and stripped.startswith(FENCE):
            in_fence = not in_fence
        elif not in_example and not in_fence and stripped.startswith(">>>"):
            indent = line[:len(line) - len(line.lstrip())]
            out.append(indent + FENCE + "pycon")
            in_example = True
        out.append(line)
    if in_example:
        out.append(indent + FENCE)
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fences the doctests of every docstring Griffe reads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fenced_doctests(obj.docstring.value)
