"""`solverspace design`: a space-filling design of valid configurations (conditional quantiles,
`solverspace.moves.designs`)."""
from __future__ import annotations

import time

from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common, sample_size
from solverspace.cli.outputs import add_json, check_json_output, check_output, print_json, report_written, rows_json
from solverspace.core.errors import OptionError
from solverspace.core.formats import write_array
from solverspace.core.options import SEED, SEPARATOR
from solverspace.core.output import STDOUT, check_output_path, is_standard_output


class Design(Command):
    example = "solverspace design gemm --set device=tiny -n 16 --method sobol"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("-n", type=sample_size, required=True, help="how many design points (at least 1)")
        p.add_argument("--method", default="lhs", choices=["lhs", "sobol", "random"],
                       help="lhs (Latin hypercube, default), sobol (scrambled Sobol; n a power of two keeps its balance) "
                            "or random points of the unit cube, each mapped to a valid configuration")
        p.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
        p.add_argument("-o", "--output", help="write .csv, .jsonl, .npy or .parquet ('-': standard output, the default)")
        p.add_argument("--sep", type=SEPARATOR, default=",", help="CSV field separator, one character")
        add_json(p, "without -o, {\"configurations\": [{NAME: VALUE, ...}, ...], \"method\", \"seed\", \"n\", "
                    "\"seconds\"}; with -o FILE, what was written, {\"output\", \"configurations\" (how many), "
                    "\"method\", \"seed\", \"n\", \"seconds\"}, instead of the line on standard error; not with -o -")

    def run(self, args) -> int:
        """`design`: n valid configurations of a space-filling design (conditional quantiles)."""
        if args.n < 1:
            raise OptionError(f"-n {args.n}: a design needs at least one point", hint="e.g. -n 100")
        check_json_output(args)
        if args.output is not None:
            check_output_path(args.output, "-o")
        space = commands.load_space(args)
        if args.output is not None:
            check_output(args, space)
        start = time.perf_counter()
        rows = space.design(args.n, args.method, args.seed)
        seconds = time.perf_counter() - start
        facts = {"method": args.method, "seed": args.seed, "n": args.n, "seconds": round(seconds, 6)}
        if args.json and args.output is None:
            print_json({"configurations": rows_json(rows), **facts})
            return 0
        write_array(rows, STDOUT if args.output is None else args.output, args.sep)
        if args.output is not None and not is_standard_output(args.output):
            report_written(args, f"wrote {len(rows)} design points to {args.output} ({args.method}, seed {args.seed}, "
                                 f"{seconds:.2f} s)", {"output": args.output, "configurations": len(rows), **facts})
        return 0
