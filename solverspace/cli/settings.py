"""`solverspace settings`: the space's settings with their allowed values."""
from __future__ import annotations

from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.outputs import add_json, print_json


class Settings(Command):
    example = "solverspace settings gemm"

    def add_arguments(self, p):
        add_common(p)
        add_json(p, "a list with one object per setting: {\"name\", \"value\" (with --set applied), \"default\", "
                    "\"choices\" (null: any value of the default's type), \"type\", \"doc\"}")

    def run(self, args) -> int:
        space = commands.load_space(args)
        if args.json:
            print_json([{"name": s.name, "value": s.value, "default": s.default,
                         "choices": list(s.choices) if s.choices else None, "type": type(s.default).__name__,
                         "doc": s.doc or None} for s in space.model.settings])
            return 0
        for s in space.model.settings:
            allowed = ", ".join(repr(c) for c in s.choices) if s.choices else f"any {type(s.default).__name__}"
            print(f"{s.name} = {s.value!r}    (allowed: {allowed}; default {s.default!r})"
                  + (f"  # {s.doc}" if s.doc else ""))
        return 0
