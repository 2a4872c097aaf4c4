"""The language tour in the README is a real space that loads and behaves as described."""
from pathlib import Path

from solverspace import Space
from tests.helpers import readme_tour as _tour


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


def _section(title: str) -> str:
    text = (Path(__file__).parents[1] / "README.md").read_text()
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_python_api_runs_as_pasted(tmp_path, monkeypatch):
    """Every code block of "The Python API" runs as pasted (in a scratch directory), and each
    `space.count(...)  # N` comment states what it returns."""
    import re
    monkeypatch.chdir(tmp_path)
    blocks = [b.split("```", 1)[0] for b in _section("The Python API").split("```python\n")[1:]]
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
        for expression, value in re.findall(r"^(\S.*?\))\s+# (\d+)\b", block, re.MULTILINE):
            assert eval(expression, namespace) == int(value), expression
    assert (tmp_path / "gemm.csv").exists() and (tmp_path / "problem.json").exists()


def test_readme_lists_every_command():
    from solverspace.cli import build_parser
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    listed = _section("The command line")
    for command in commands:
        assert f"solverspace {command} " in listed, command
