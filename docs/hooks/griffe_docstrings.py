"""Griffe extension for the API reference, for the way the docstrings are written (Google style):

- a docstring's doctest examples in the text (`>>>` lines, their `...` continuations and the output
  up to the next blank line) are shown as `pycon` code blocks; Markdown would otherwise read them
  as nested quotes, and their output as links (`[('x', 1)]`);
- an argument line that names several arguments (`strict, progress: as rows.`) is read as one
  line per argument with that description: Griffe's Google parser takes one name per line, and
  would report the group as an argument missing from the signature. Each name is still checked
  against the signature.
"""
from __future__ import annotations

import re

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


_ARGS_HEADER = re.compile(r"^(?P<indent>\s*)(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|"
                          r"Other Parameters):\s*$")
_GROUPED = re.compile(r"^(?P<indent>\s+)(?P<names>\**\w+(\s*,\s*\**\w+)+):(?P<rest>(\s.*)?)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def split_grouped_arguments(text: str) -> str:
    """`text` with each argument line of an Args section that names several arguments repeated
    for each name, with its continuation lines."""
    lines = text.splitlines()
    out: list[str] = []
    header = None   # the indentation of the Args header we are under, if any
    item = None     # the indentation of its argument lines
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() and header is not None:
            if _indent(line) <= header:
                header = item = None
            elif item is None:
                item = _indent(line)
        opening = _ARGS_HEADER.match(line)
        grouped = _GROUPED.match(line) if item is not None and _indent(line) == item else None
        if opening:
            header, item = len(opening["indent"]), None
        if grouped is None:
            out.append(line)
            i += 1
            continue
        following = []
        i += 1
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > item):
            following.append(lines[i])
            i += 1
        while following and not following[-1].strip():   # blank lines stay after the group
            i -= 1
            following.pop()
        for name in re.split(r"\s*,\s*", grouped["names"]):
            out += [f"{grouped['indent']}{name}:{grouped['rest']}"] + following
    return "\n".join(out)


class GoogleDocstrings(griffe.Extension):
    """Fences the doctests of every docstring Griffe reads, and splits its grouped arguments."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is None:
            return
        text = obj.docstring.value
        if ">>>" in text:
            text = fenced_doctests(text)
        if "," in text:
            text = split_grouped_arguments(text)
        obj.docstring.value = text
