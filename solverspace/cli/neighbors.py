"""`solverspace neighbors`: the valid neighbours of a valid configuration."""
from __future__ import annotations

import json

from solverspace.cli.commands import load_space
from solverspace.core.errors import OptionError
from solverspace.core.orders import format_value
from solverspace.core.messages import say


def cmd_neighbors(args) -> int:
    """All neighbours (one `k=v ...` line each, sorted by parameter indices), their number
    (`--count`) or one drawn uniformly (`--random --seed S`; exit 1 when there is none)."""
    from solverspace.analysis.check import parse_assignment   # here: the parser imports this module in every command
    if args.random and args.count:
        raise OptionError("--random draws one neighbour and --count counts them", hint="give one of the two")
    space = load_space(args)
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
        print(json.dumps([dict(zip(space.parameters, map(_plain, row))) for row in rows]))
    else:
        for row in rows:
            print(" ".join(f"{name}={format_value(value)}" for name, value in zip(space.parameters, row)))
    if args.random and not rows:
        say("no valid neighbour")
        return 1
    return 0


def _plain(value):
    """A value as JSON holds it: an order as a list of its items."""
    return list(value) if type(value) is tuple else value
