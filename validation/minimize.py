"""Shrink a space file that shows a problem to a minimal one that still shows it.

`minimize(source, still_fails)` removes statements (top-level ones and those inside function
bodies), last first, as long as `still_fails(smaller_source)` stays true and the
smaller source still loads. It is what turns a generated space into a corpus entry when the
failure was not found by a Hypothesis test (which shrinks on its own), e.g. by
`solverspace validate` on a user's space.

`signature(report)` summarises what went wrong in a `Report` (problem kinds and failing
backends), so that a smaller space counts as "still failing" only when it fails the same way.
"""
from __future__ import annotations

import ast
import re
from typing import Callable

from solverspace import Space


def signature(report) -> tuple:
    """What kind of failure a report shows: (status, problem kinds, (backend, error type) of failures)."""
    kinds = tuple(sorted({re.split(r"[:(]", p, maxsplit=1)[0].strip() for p in report.problems}))
    failed = tuple(sorted((o.backend, o.note.split(":", 1)[0]) for o in report.outcomes if o.status == "failed"))
    return report.status, kinds, failed


def _loads(source: str) -> bool:
    try:
        Space.from_source(source)
        return True
    except Exception:
        return False


def _statements(source: str) -> list[tuple[int, int]]:
    """(first line, last line), 1-based, of every statement, nested ones included, innermost last."""
    tree = ast.parse(source)
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            spans.append((first, node.end_lineno))
    return spans


def _without(source: str, span: tuple[int, int]) -> str | None:
    lines = source.splitlines()
    first, last = span
    removed = lines[first - 1:last]
    rest = lines[:first - 1] + lines[last:]
    indent = len(removed[0]) - len(removed[0].lstrip())
    if indent:  # keep the enclosing block non-empty
        before = lines[first - 2] if first >= 2 else ""
        after = lines[last] if last < len(lines) else ""
        if before.rstrip().endswith(":") and (len(after) - len(after.lstrip()) < indent or not after.strip()):
            rest = lines[:first - 1] + [" " * indent + "pass"] + lines[last:]
    text = "\n".join(rest) + "\n"
    try:
        ast.parse(text)
    except SyntaxError:
        return None
    return text


def minimize(source: str, still_fails: Callable[[str], bool], *, max_rounds: int = 5) -> str:
    """The smallest space (by greedy statement removal, last statement first) for which
    `still_fails` holds; rounds repeat until nothing more can be removed."""
    current = source
    for _ in range(max_rounds):
        changed = False
        limit = float("inf")
        while True:
            spans = [s for s in _statements(current) if s[0] < limit]
            if not spans:
                break
            span = max(spans, key=lambda s: (s[0], -s[1]))
            limit = span[0]
            candidate = _without(current, span)
            if candidate is None or candidate == current or not _loads(candidate):
                continue
            if still_fails(candidate):
                current, changed = candidate, True
        if not changed:
            break
    return current
