"""The command-line reference (`solverspace.cli.reference.markdown()`, the docs page
reference/cli.md) is read from the parser: every command, every argument, every default, and a
command added to the table appears without anyone writing it down."""
from __future__ import annotations

import argparse

from solverspace.cli import build_parser, parser as cli_parser
from solverspace.cli.commands import Command
from solverspace.cli.reference import markdown, subparsers


def _sections(text: str) -> dict[str, str]:
    """The page's sections by command name ("" for the global options)."""
    parts = text.split("\n## solverspace")
    return {part.split("\n", 1)[0].strip(): part for part in parts[1:]}


def _positional(action: argparse.Action) -> str:
    """How --help writes a positional argument: its metavar, its choices ({info,clear}) or its name."""
    if action.metavar:
        return action.metavar
    return "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest


def test_reference_names_every_command_and_option():
    sections = _sections(markdown())
    commands = subparsers(build_parser())
    assert list(commands) == list(cli_parser.COMMANDS)
    assert list(sections) == [""] + list(commands)
    for name, sub in commands.items():
        section = sections[name]
        assert cli_parser.COMMANDS[name][1] in section, name
        for action in (a for a in sub._actions if a.help != argparse.SUPPRESS):   # hidden on purpose
            for written in action.option_strings or [_positional(action)]:
                assert f"`{written}" in section or f", {written}" in section, (name, written)
    assert "`--version`" in sections[""]


def test_reference_shows_each_default_from_the_parser():
    sections = _sections(markdown())
    for name, sub in subparsers(build_parser()).items():
        for action in sub._actions:
            if action.option_strings and action.nargs != 0 and action.default not in (None, argparse.SUPPRESS):
                item = next(line for line in sections[name].splitlines()
                            if line.startswith(f"- `{action.option_strings[0]}"))
                assert item.endswith(f"Default: `{action.default}`."), (name, item)


class Frobnicate(Command):
    """A command that exists only in this test."""

    def add_arguments(self, parser):
        parser.add_argument("space", help="a space")
        parser.add_argument("action", nargs="?", choices=["show", "hide"], default="show", help="what to do")
        parser.add_argument("--depth", type=int, default=7, metavar="N", help="how deep, with x * y [a]")


def test_a_new_command_appears_without_edits(monkeypatch):
    monkeypatch.setitem(cli_parser.COMMANDS, "frobnicate", (f"{__name__}:Frobnicate", "frobnicate a space"))
    section = _sections(markdown())["frobnicate"]
    assert "frobnicate a space." in section and "usage: solverspace frobnicate" in section
    assert "- `{show,hide}`: what to do. Default: `show`." in section
    # help text is Markdown-escaped, so `x * y [a]` reads as written
    assert r"- `--depth N`: how deep, with x \* y \[a\]. Default: `7`." in section


def test_reference_does_not_depend_on_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    narrow = markdown()
    monkeypatch.setenv("COLUMNS", "200")
    assert markdown() == narrow
