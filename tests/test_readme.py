"""The README and the docs' prose pages say what the product does: the language tour is a real
space that behaves as described, the Python API page's `# N` comments are what the calls return,
and every command is explained on some page written for users (not only in the generated
command reference). Running every block is the docs block runner's job; these check the claims."""
import re
from pathlib import Path

from solverspace import Space
from tests.helpers import readme_tour as _tour

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"


def test_readme_tour_loads_and_counts():
    space = Space.from_source(_tour(), {"MAX": 8})
    assert space.parameters == ("dim", "blk", "vec", "kind", "unroll", "tile", "fib")
    assert Space.from_source(_tour(), {"MAX": 8}).model.parameter["vec"].domain  # value list
    rows = list(space.rows("reference"))
    assert len(rows) == space.count("reference") > 0
    names = space.parameters
    for row in rows:
        c = dict(zip(names, row))
        threads = c["dim"] * c["unroll"] * 2
        assert c["blk"] % (c["vec"] * 32) == 0 and not c["tile"] * c["fib"] > 4 * c["blk"]
        assert threads <= 1024 and c["tile"] % c["vec"] == 0
        assert c["fib"] in (1, 2, 3, 5, 8) and c["kind"] in ("tex", "ldg")
    assert {r[2] for r in rows} <= {1, 2, 4}


def test_python_api_page_states_what_the_calls_return(tmp_path, monkeypatch):
    """Each `expression  # N` comment in docs/how-to/python-api.md's Python blocks is what the
    expression returns once the blocks before it ran (in a scratch directory)."""
    monkeypatch.chdir(tmp_path)
    text = (DOCS / "how-to" / "python-api.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    assert blocks
    namespace: dict = {}
    claims = 0
    for block in blocks:
        exec(compile(block, "python-api.md", "exec"), namespace)
        for expression, value in re.findall(r"^(\S.*?\))\s+# (\d+)\b", block, re.MULTILINE):
            assert eval(expression, namespace) == int(value), expression
            claims += 1
    assert claims >= 3
    assert (tmp_path / "tiny.csv").exists() and (tmp_path / "problem.json").exists()


def test_every_command_is_explained_on_a_prose_page():
    """The command reference is generated; each command also appears, as `solverspace NAME `, on a
    page written for users (README, tutorial, how-to, reference prose, explanation)."""
    from solverspace.cli import build_parser
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    generated = {DOCS / "reference" / "cli.md", DOCS / "reference" / "api.md"}
    prose = (ROOT / "README.md").read_text() + "".join(
        path.read_text() for path in sorted(DOCS.rglob("*.md")) if path not in generated)
    missing = [command for command in commands if f"solverspace {command} " not in prose]
    assert missing == []
