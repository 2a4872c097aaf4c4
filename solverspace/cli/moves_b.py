"""The commands of the moves past neighbours: `design`, `repair`, and `sample --given`."""
from __future__ import annotations

import time

from solverspace.cli.commands import cmd_sample, load_space
from solverspace.core.errors import OptionError
from solverspace.core.orders import format_value
from solverspace.core.messages import say

# analysis.check, core.formats and core.output are imported by the handlers: the parser imports
# this module in every command, and `count`, `sweep` and `best` need none of them.


def cmd_design(args) -> int:
    """`design`: n valid configurations of a space-filling design (conditional quantiles)."""
    from solverspace.core.formats import write_array
    from solverspace.core.output import STDOUT, check_not_input, check_output_path, is_standard_output
    if args.n < 1:
        raise OptionError(f"-n {args.n}: a design needs at least one point", hint="e.g. -n 100")
    if args.output is not None:
        check_output_path(args.output, "-o")
    space = load_space(args)
    if args.output is not None:
        check_not_input(args.output, space.model.source)
    start = time.perf_counter()
    rows = space.design(args.n, args.method, args.seed)
    seconds = time.perf_counter() - start
    write_array(rows, STDOUT if args.output is None else args.output, args.sep)
    if args.output is not None and not is_standard_output(args.output):
        say(f"wrote {len(rows)} design points to {args.output} ({args.method}, seed {args.seed}, "
            f"{seconds:.2f} s)")
    return 0


def cmd_repair(args) -> int:
    """`repair`: the valid configuration nearest (L1 in parameter indices) to a point of the index box."""
    from solverspace.analysis.check import parse_assignment
    space = load_space(args)
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
    print(" ".join(f"{k}={format_value(v)}" for k, v in zip(space.parameters, config)))
    say(f"distance {distance} (L1 in parameter indices)")
    return 0


def cmd_sample_or_given(args) -> int:
    """`sample`: with `--given k=v ...`, uniform over the valid configurations that agree with
    them (`Space.sample(given=...)`); without, the `sample` command as it was."""
    if args.n < 1:   # with or without --given (an empty file would look like an empty space)
        raise OptionError(f"-n {args.n}: ask for at least one configuration", hint="e.g. -n 100")
    if not getattr(args, "given", None):
        return cmd_sample(args)
    from solverspace.analysis.check import parse_assignment
    from solverspace.core.formats import write_array
    from solverspace.core.output import STDOUT, check_not_input, check_output_path, is_standard_output
    if args.engine == "dask":
        raise OptionError("--given runs locally (the derived space is sampled in this process)",
                          hint="leave out --engine dask")
    if args.output is not None:
        check_output_path(args.output, "-o")
    space = load_space(args)
    if args.output is not None:
        check_not_input(args.output, space.model.source)
    given = parse_assignment(space.model, args.given)
    start = time.perf_counter()
    rows = space.sample(args.n, args.seed, given=given, replace=args.with_replacement, method=args.method,
                        threads=args.threads)
    seconds = time.perf_counter() - start
    write_array(rows, STDOUT if args.output is None else args.output, args.sep)
    if args.output is not None and not is_standard_output(args.output):
        say(f"wrote {len(rows)} sampled configurations with " + " ".join(f"{k}={format_value(v)}"
            for k, v in given.items()) + f" to {args.output} ({args.method} method, seed {args.seed}, "
            f"{seconds:.2f} s)")
    return 0
