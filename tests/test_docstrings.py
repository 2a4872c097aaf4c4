"""Library text says what and why, never which issue: history belongs in commit messages and
CHANGELOG.md. Library code is the installed package's folders (solverspace/, translators/, gemm/,
validation/), docstrings, comments and messages alike."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("solverspace", "translators", "gemm", "validation")
ISSUE = re.compile(r"\bissues? ?[-#]?\d+", re.IGNORECASE)


def issue_mentions(text: str) -> list[int]:
    """The lines of `text` that name an issue by number."""
    return [number for number, line in enumerate(text.splitlines(), 1) if ISSUE.search(line)]


def test_the_check_sees_every_spelling():
    text = "a (issue 25)\nissue-28 line\nIssue #7\nissues 23 and 24\nan issue with 3 parts\nthe issue\n"
    assert issue_mentions(text) == [1, 2, 3, 4]


def test_no_library_text_names_an_issue_number():
    found = {str(path.relative_to(ROOT)): lines for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
             for lines in [issue_mentions(path.read_text(encoding="utf-8"))] if lines}
    assert found == {}
