"""`solverspace settings`: the space's settings with their allowed values."""
from __future__ import annotations

from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common


class Settings(Command):
    def add_arguments(self, p):
        add_common(p)

    def run(self, args) -> int:
        space = commands.load_space(args)
        for s in space.model.settings:
            allowed = ", ".join(repr(c) for c in s.choices) if s.choices else f"any {type(s.default).__name__}"
            print(f"{s.name} = {s.value!r}    (allowed: {allowed}; default {s.default!r})"
                  + (f"  # {s.doc}" if s.doc else ""))
        return 0
