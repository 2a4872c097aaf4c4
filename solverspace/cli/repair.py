"""`solverspace repair`: the valid configuration nearest to a point (L1 distance in parameter
indices, `solverspace.moves.repair`)."""
from __future__ import annotations

from solverspace.analysis.check import parse_assignment
from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.outputs import add_json, configuration_json, print_json
from solverspace.core.errors import OptionError
from solverspace.core.messages import say
from solverspace.core.orders import format_value


class Repair(Command):
    example = "solverspace repair gemm --set device=tiny --indices 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("assignment", nargs="*", metavar="NAME=VALUE",
                       help="a value from each parameter's value list (the point need not be valid)")
        p.add_argument("--indices", metavar="I,J,...", help="the point as parameter indices, in column order")
        add_json(p, "{\"configuration\": {NAME: VALUE, ...}, \"distance\": the L1 distance in parameter indices}")

    def run(self, args) -> int:
        """`repair`: the valid configuration nearest (L1 in parameter indices) to a point of the index box."""
        space = commands.load_space(args)
        if (args.indices is None) == (not args.assignment):
            raise OptionError("repair takes NAME=VALUE for every parameter, or --indices i,j,...: exactly one of them",
                              hint="e.g. solverspace repair SPACE " + " ".join(f"{p}=..." for p in space.parameters[:3]))
        if args.indices is not None:
            try:
                indices = tuple(int(part) for part in args.indices.split(","))
            except ValueError:
                raise OptionError(f"--indices {args.indices!r}: expected whole numbers separated by commas",
                                  hint="e.g. --indices " + ",".join("0" for _ in space.parameters)) from None
            config, distance = space.repair(indices=indices), space.repair_distance(indices=indices)
        else:
            point = parse_assignment(space.model, args.assignment)
            config, distance = space.repair(point), space.repair_distance(point)
        if args.json:
            print_json({"configuration": configuration_json(space.parameters, config), "distance": distance})
            return 0
        print(" ".join(f"{k}={format_value(v)}" for k, v in zip(space.parameters, config)))
        say(f"distance {distance} (L1 in parameter indices)")
        return 0
