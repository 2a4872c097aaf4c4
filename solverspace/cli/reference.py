"""The command-line reference as Markdown, read from the parser itself (`build_parser()`): every
command of `COMMANDS` in the table's order, its line, usage and epilog, and every argument with its
help, choices and default. The docs site's page `reference/cli.md` is this text (a MkDocs hook,
`docs/hooks/cli_reference.py`, writes it at build time), so a new command or option appears there
without anyone writing it down.

    >>> text = markdown()
    >>> "## solverspace count" in text and "`--max-closure-values N`" in text
    True
"""
from __future__ import annotations

import argparse
import html

from solverspace.cli.parser import COMMANDS, build_parser

#: The page's opening paragraph (the hook adds nothing else).
INTRODUCTION = (
    "Every command of `solverspace`, as its `--help` describes it. This page is generated from the "
    "command-line parser when the site is built (`solverspace.cli.reference.markdown()`), so it lists "
    "exactly the commands and options of this version. Exit codes: 0 done, 1 a negative answer "
    "(`check` of an invalid configuration, ...), 2 an error (the message says what, where and how to fix).")


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's commands, name -> sub-parser, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _text(value: str) -> str:
    """Help text as Markdown text: HTML-escaped, and Markdown's emphasis and link characters
    escaped, so that `x * y` or `[a]` reads as written."""
    escaped = html.escape(value, quote=False)
    for char in "\\`*_[]":
        escaped = escaped.replace(char, "\\" + char)
    return escaped


def _sentence(text: str) -> str:
    """`text` ending as a sentence does."""
    return text if text.endswith((".", "!", "?")) else text + "."


def _code(value: str) -> str:
    """`value` as inline code (a longer fence when it holds a backtick)."""
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _signature(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    """How the argument is written: `space`, `--set NAME=VALUE`, `--quiet, -q`."""
    if not action.option_strings:
        return formatter._metavar_formatter(action, action.dest)(1)[0]
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = formatter._format_args(action, action.dest.upper())
    return ", ".join(f"{option} {metavar}" for option in action.option_strings)


def _shown_default(action: argparse.Action):
    """The default worth printing, or None: not for flags, help, version, or an unset value."""
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS) or isinstance(
            action, (argparse._HelpAction, argparse._VersionAction)):
        return None
    return action.default


def arguments(parser: argparse.ArgumentParser) -> list[str]:
    """One Markdown list item per argument of `parser` (subcommand actions left out), by group."""
    formatter = parser._get_formatter()
    lines: list[str] = []
    for group in parser._action_groups:
        shown = [a for a in group._group_actions
                 if a.help != argparse.SUPPRESS and not isinstance(a, argparse._SubParsersAction)]
        if not shown:
            continue
        title = group.title or "arguments"
        lines += ["", f"**{_text(title[0].upper() + title[1:])}**", ""]
        for action in shown:
            item = f"- {_code(_signature(action, formatter))}"
            if action.help:
                item += f": {_sentence(_text(formatter._expand_help(action)))}"
            default = _shown_default(action)
            if default is not None:
                item += f" Default: {_code(str(default))}."
            if action.required and action.option_strings:
                item += " Required."
            lines.append(item)
    return lines


def _fenced(text: str) -> list[str]:
    """`text` in a ```text block (output, not run by the docs' block test)."""
    return ["", "```text", text.rstrip("\n"), "```"]


def command_section(name: str, parser: argparse.ArgumentParser) -> list[str]:
    """The section of one command: its line, usage, arguments and epilog."""
    lines = [f"## solverspace {name}", "", _sentence(_text(parser.description or COMMANDS[name][1]))]
    lines += _fenced(parser.format_usage().strip())
    lines += arguments(parser)
    if parser.epilog:
        lines += _fenced(parser.epilog)
    return lines + [""]


def markdown(width: int = 100) -> str:
    """The whole reference page, Markdown; `width` is the width of the usage lines."""
    parser = build_parser()
    parser.formatter_class = _fixed_width(parser.formatter_class, width)
    commands = subparsers(parser)
    lines = ["# Command line", "", INTRODUCTION, "", "Commands: " + ", ".join(
        f"[{name}](#solverspace-{name})" for name in commands) + ".", "", "## solverspace"]
    lines += _fenced(parser.format_usage().strip())
    lines += arguments(parser)
    lines.append("")
    for name, sub in commands.items():
        sub.formatter_class = _fixed_width(sub.formatter_class, width)
        lines += command_section(name, sub)
    return "\n".join(lines).rstrip("\n") + "\n"


def _fixed_width(formatter_class, width: int):
    """`formatter_class` at a fixed width (the terminal's width must not change the page)."""
    def make(prog):
        return formatter_class(prog, width=width)
    return make
