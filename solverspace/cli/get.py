"""`solverspace get`: the configuration(s) at the given position(s) of the canonical order."""
from __future__ import annotations

from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.outputs import add_json, configuration_json, print_json
from solverspace.core.errors import SolverspaceError


class Get(Command):
    example = "solverspace get gemm --set device=tiny 0 1 -1"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("index", type=int, nargs="+", help="positions (negative counts from the end)")
        add_json(p, "a list with one object per position, in the order given: "
                    "{\"position\": P, \"configuration\": {NAME: VALUE, ...}}")

    def run(self, args) -> int:
        space = commands.load_space(args)
        found = []
        for position in args.index:
            try:
                row = space[position]
            except IndexError as exc:
                raise SolverspaceError(str(exc), hint="positions run from 0 to count - 1 (negative ones from the end)") from None
            if args.json:
                found.append({"position": position, "configuration": configuration_json(space.parameters, row)})
            else:
                print(" ".join(f"{k}={v}" for k, v in zip(space.parameters, row)))
        if args.json:
            print_json(found)
        return 0
