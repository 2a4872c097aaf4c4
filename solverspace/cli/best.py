"""`solverspace best`: the K best configurations by an objective (branch and bound, exhaustive, or
CP-SAT; `Space.best`)."""
from __future__ import annotations

import json
from fractions import Fraction

from solverspace.analysis.objective import model_or_declared, nearest_float
from solverspace.cli import commands
from solverspace.cli.commands import Command, Progress, add_common, backend_options
from solverspace.core.messages import say
from solverspace.core.options import POSITIVE_FLOAT, THREADS, WORKERS
from solverspace.core.orders import format_value
from solverspace.registry.backends import backends_with


class Best(Command):
    example = "solverspace best gemm --set device=tiny --maximize 'fmas_per_block - loads_per_block' --top 3"

    def add_arguments(self, p):
        add_common(p)
        goal = p.add_mutually_exclusive_group()
        goal.add_argument("--maximize", metavar="EXPR", help="an expression of parameters, derived values and settings")
        goal.add_argument("--minimize", metavar="EXPR", help="an expression of parameters, derived values and settings "
                                                              "(default: the space's declared cost(...))")
        p.add_argument("--top", type=int, default=10, metavar="K", help="how many configurations (default 10)")
        p.add_argument("--engine", choices=backends_with("best"), default="bnb",
                       help="bnb (default): branch and bound with sound bounds of the objective on partial "
                            "configurations, compiled in C; exhaustive: evaluate every valid configuration in C; "
                            "bnb-reference, exhaustive-reference: the same in Python (any space); cpsat: OR-Tools")
        p.add_argument("--json", action="store_true", help="one JSON object per line, one line per configuration: {NAME: VALUE, ..., \"objective\"} (a fraction: also "
                            "\"objective_exact\", \"P/Q\"), best first; the summary goes to standard error")
        p.add_argument("--quiet", "-q", action="store_true", help="no search statistics; only warnings and errors on stderr")
        p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS", help="stop after SECONDS")
        p.add_argument("--workers", type=WORKERS, default=None, metavar="N", help="CP-SAT threads (default: all cores)")
        p.add_argument("--threads", type=THREADS, default=None, metavar="N",
                       help="bnb, exhaustive: OpenMP threads (default: all cores)")

    def run(self, args) -> int:
        """`best`: the K best configurations by an objective (branch and bound, exhaustive, or CP-SAT)."""
        space = commands.load_space(args)
        maximize = args.maximize is not None
        objective = args.maximize if maximize else args.minimize
        if objective is None:
            _, objective = model_or_declared(space.model, None, "--minimize/--maximize")
        progress = Progress(not args.quiet, "searching")
        try:
            result = space.best(objective, maximize=maximize, top=args.top, backend=args.engine, progress=progress,
                                **backend_options(args, args.engine))
        finally:
            progress.close()
        goal = "maximize" if maximize else "minimize"
        summary = (f"best {len(result.ranked)} configuration(s) by {goal} {objective} ({result.engine} engine, "
                   f"{result.seconds:.2f} s)" + ("" if result.exact else "; stopped by the time limit: not proven best"))
        if result.note:
            say(f"note: {result.note}")
        search = result.search
        if args.json:
            say(summary)
            for r in result.ranked:
                row = {k: format_value(v) for k, v in r.configuration.items()}
                print(json.dumps({**row, **_json_number("objective", r.objective)}))
        else:
            print(summary)
            for r in result.ranked:
                print(f"{r.rank:>3}. {r.objective}  " + " ".join(f"{k}={format_value(v)}" for k, v in r.configuration.items()))
        if search is not None and not args.quiet:
            say(f"search: {search.evaluated} configuration(s) evaluated; per loop "
                + ", ".join(f"{name}: {seen} visited, {cut} cut" for name, seen, cut in
                            zip(search.order, search.visited, search.pruned)))
        if not result.ranked and result.exact:
            say("no configuration ranked: the space has no valid configuration, or the objective is undefined "
                "(a division or modulo by zero) on every one")
        return 0 if result.ranked else 1


def _json_number(key: str, value) -> dict:
    """An exact value for JSON: an int as is; a fraction as a float (null past a float's range)
    plus its exact text."""
    if isinstance(value, Fraction) and value.denominator != 1:
        return {key: nearest_float(value), f"{key}_exact": f"{value.numerator}/{value.denominator}"}
    return {key: int(value)}
