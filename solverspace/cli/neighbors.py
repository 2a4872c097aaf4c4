"""`solverspace neighbors`: the valid neighbours of a valid configuration (Kernel Tuner's methods,
`solverspace.moves.neighbors`)."""
from __future__ import annotations

import json

from solverspace.analysis.check import parse_assignment
from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.outputs import configuration_json
from solverspace.core.errors import OptionError
from solverspace.core.options import SEED
from solverspace.core.orders import format_value
from solverspace.core.messages import say


class Neighbors(Command):
    example = "solverspace neighbors gemm --set device=tiny --count $(solverspace get gemm --set device=tiny 0)"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("assignment", nargs="*", metavar="NAME=VALUE", help="a valid configuration: every parameter")
        p.add_argument("--method", default="Hamming",
                       help="strictly-adjacent, adjacent, Hamming (default), Hamming-adjacent or closest-param-indices "
                            "(Kernel Tuner's; any letter case)")
        p.add_argument("--random", action="store_true", help="one neighbour drawn uniformly (exit 1 if there is none)")
        p.add_argument("--seed", type=SEED, default=0, help="random seed of --random (default 0)")
        p.add_argument("--count", action="store_true", help="print the number of neighbours")
        p.add_argument("--json", action="store_true", help="print one JSON document: a list of configurations, {NAME: VALUE, ...} each; with --count, {\"count\"}")

    def run(self, args) -> int:
        """All neighbours (one `k=v ...` line each, sorted by parameter indices), their number
        (`--count`) or one drawn uniformly (`--random --seed S`; exit 1 when there is none)."""
        if args.random and args.count:
            raise OptionError("--random draws one neighbour and --count counts them", hint="give one of the two")
        space = commands.load_space(args)
        config = parse_assignment(space.model, args.assignment)
        if args.random:
            found = space.random_neighbor(config, args.method, seed=args.seed)
            rows = [] if found is None else [found]
        elif args.count:
            count = space.count_neighbors(config, args.method)
            print(json.dumps({"count": count}) if args.json else count)
            return 0
        else:
            rows = space.neighbors(config, args.method)
        if args.json:
            print(json.dumps([configuration_json(space.parameters, row) for row in rows]))
        else:
            for row in rows:
                print(" ".join(f"{name}={format_value(value)}" for name, value in zip(space.parameters, row)))
        if args.random and not rows:
            say("no valid neighbour")
            return 1
        return 0
