"""Every code block of the README and docs/ runs as written (the conventions, and the runner, are
in `tests/docs_blocks.py`): one test per Markdown file, its blocks in order in a fresh directory.
The runner itself is checked on small pages in tests/data/docs_blocks/: a passing page, a failing
Python block, a failing shell block, exempt blocks, output blocks, an unknown language, a hang."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_blocks import ROOT, BlockFailed, doc_files, problems, read_blocks, run_file

PAGES = Path(__file__).parent / "data" / "docs_blocks"


@pytest.mark.parametrize("page", doc_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_blocks_run(page):
    run_file(page)


def test_readme_at_most_150_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; at most 150 (the rest belongs in docs/)"


def test_exempt_blocks_say_why():
    """Every block that is not run says why; the list is printed (`pytest -s`) for the record."""
    exempt = [b for page in doc_files() for b in read_blocks(page) if b.not_run is not None]
    for block in exempt:
        print(f"{block.where}: ```{block.language}: not run: {block.not_run}")
    assert all(block.not_run for block in exempt), [b.where for b in exempt if not b.not_run]


# --- the runner, on pages made to pass and to fail --------------------------------------------------
def failure(name: str, **options) -> str:
    with pytest.raises(BlockFailed) as raised:
        run_file(PAGES / name, **options)
    return str(raised.value)


def test_passing_page_runs_its_blocks_and_no_output_block():
    """Python blocks share a namespace, shell blocks see their files and the examples; the five
    output blocks (which would fail if run) are not run: four blocks run, one of them indented."""
    assert run_file(PAGES / "passing.md") == 4


def test_failing_python_block_names_file_line_and_error():
    message = failure("failing_python.md")
    assert message.startswith("tests/data/docs_blocks/failing_python.md:9: ```python block failed")
    assert 'failing_python.md", line 12' in message and "ZeroDivisionError" in message   # the line in the page
    assert "before the error" in message and "never run" not in message
    assert "1 later block(s)" in message


def test_failing_shell_block_stops_at_the_failing_command():
    message = failure("failing_sh.md")
    assert message.startswith("tests/data/docs_blocks/failing_sh.md:7: ```sh block failed (exit status 1)")
    assert "before" in message and "after" not in message.split("--- its output ---")[1]


def test_exempt_blocks_are_not_run():
    assert run_file(PAGES / "exempt.md") == 0
    reasons = [b.not_run for b in read_blocks(PAGES / "exempt.md")]
    assert reasons == ["needs a GPU", "measures for an hour"]


def test_exemption_without_reason_fails():
    message = failure("exempt_no_reason.md")
    assert message == ("tests/data/docs_blocks/exempt_no_reason.md:4: `<!-- not run -->` needs a reason: "
                       "`<!-- not run: REASON -->`")


def test_unknown_language_fails_before_anything_runs():
    blocks = read_blocks(PAGES / "unknown_language.md")
    assert [b.language for b in blocks] == ["python", "pyhton"]
    assert problems(blocks) == [message := failure("unknown_language.md")]
    assert message.startswith("tests/data/docs_blocks/unknown_language.md:7: unknown language 'pyhton'")


@pytest.mark.parametrize("name", ["timeout_sh.md", "timeout_python.md"])
def test_a_hanging_block_fails_at_its_time_limit(name):
    message = failure(name, timeout=1)
    assert f"{name}:3: " in message and "ran past its time limit (1 s)" in message
