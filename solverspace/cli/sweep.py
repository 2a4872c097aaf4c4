"""`solverspace sweep`: count the space for every combination of settings, in one process
(`solverspace.scale.sweep`)."""
from __future__ import annotations

import json
import time

from solverspace.cli.commands import Command, add_running, backend_options, tally_walk
from solverspace.core.errors import SolverspaceError
from solverspace.core.options import POSITIVE
from solverspace.registry.backends import backends_with
from solverspace.scale.sweep import parse_grid
from solverspace.space import Space


class Sweep(Command):
    example = "solverspace sweep gemm --set device=k40c,a100 --set precision=single,double"

    def add_arguments(self, p):
        p.add_argument("space", help="a space file, or a built-in space name (gemm)")
        p.add_argument("--set", action="append", metavar="NAME=V1,V2,...",
                       help="a setting and the values to sweep, comma-separated (repeatable; the last varies fastest)")
        p.add_argument("--max-closure-values", type=POSITIVE, default=100_000, metavar="N",
                       help="stop a closure (generator) iterator that yields more than N values (default 100000)")
        add_running(p, backends_with("count"))
        p.add_argument("--json", action="store_true",
                       help="one JSON object per line, one line per combination: {\"settings\", \"count\", \"undefined\", "
                            "\"tally\", \"exact\", \"seconds\", \"backend\", \"method\"} (\"tally\": the walk that "
                            "\"undefined\" counts, \"literal plan\" or \"optimized plan\")")
        p.add_argument("--per-point", action="store_true",
                       help="count every combination on its own (by default the C backend counts combinations that "
                            "differ only in constants in one walk)")

    def run(self, args) -> int:
        """`sweep`: count the space for every combination of the settings' listed values."""
        grid = parse_grid(args.set)
        if not grid:
            raise SolverspaceError("sweep needs at least one --set NAME=V1,V2,...", hint="e.g. --set device=k40c,p100,v100")
        width = max(len(n) for n in grid)
        total = time.perf_counter()
        points = Space.sweep(args.space, grid, args.backend, max_closure_values=args.max_closure_values,
                             strict=args.strict, one_pass=not args.per_point, **backend_options(args, args.backend))
        methods: dict[str, int] = {}
        for number, point in enumerate(points):
            if number == 0 and not args.json:  # after the first point: a bad setting value is an error first
                print("  ".join(f"{n:>{width}}" for n in grid) + "  count  (seconds)")
            methods[point.method] = methods.get(point.method, 0) + 1
            if args.json:
                print(json.dumps({"settings": point.settings, "count": point.count, "undefined": point.undefined,
                                  "tally": tally_walk(args, point.backend),
                                  "exact": point.exact, "seconds": round(point.seconds, 6), "backend": point.backend,
                                  "method": point.method, **({"note": point.note} if point.note else {})}))
            else:
                print("  ".join(f"{str(v):>{width}}" for v in point.settings.values())
                      + f"  {point.count}{'' if point.exact else ' (lower bound)'}  ({point.seconds:.2f} s)")
        if not args.json:
            how = ", ".join(f"{n} {method}" for method, n in methods.items())
            print(f"({args.backend} backend; {how}; {time.perf_counter() - total:.2f} s in all)")
        return 0
