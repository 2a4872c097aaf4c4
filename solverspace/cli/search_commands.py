"""The handlers of the search subcommands: `best` (the K best configurations by an objective) and
`tune` (the fastest by measurement)."""
from __future__ import annotations

import json
from fractions import Fraction

from solverspace.cli.commands import Progress, backend_options, load_space
from solverspace.core.messages import say


def cmd_best(args) -> int:
    """`best`: the K best configurations by an objective (branch and bound, exhaustive, or CP-SAT)."""
    from solverspace.core.orders import format_value
    space = load_space(args)
    maximize = args.maximize is not None
    objective = args.maximize if maximize else args.minimize
    if objective is None:
        from solverspace.analysis.objective import model_or_declared
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
        from solverspace.analysis.objective import nearest_float
        return {key: nearest_float(value), f"{key}_exact": f"{value.numerator}/{value.denominator}"}
    return {key: int(value)}


def cmd_tune(args) -> int:
    """`tune`: measured search; measures only what the bound cannot rule out (solverspace.analysis.tune)."""
    space = load_space(args)
    db = args.db if args.db is not None else space.default_tune_db()
    quiet = args.quiet
    if _statistical(args, space):
        return _cmd_tune_search(args, space, db)

    def progress(message: str) -> None:
        if not quiet:
            say(message)

    if not quiet:
        say(f"tuning {args.space}: measuring `{args.measure}` (repeat {args.repeat}, {args.aggregate}), "
            f"bound `{args.bound if args.bound is not None else 'the declared cost'}`; database {db}")
    result = space.tune(args.measure, args.bound, top=args.top, max_measurements=args.max_measurements,
                        time_limit=args.time_limit, repeat=args.repeat, aggregate=args.aggregate, db=db,
                        timeout=args.timeout, progress=progress, sinks=getattr(args, "sinks", ()))
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        print(result.summary())
        if args.explain:
            print(result.explain())
    return 0 if result.top else 1


def _statistical(args, space) -> bool:
    """Whether `tune` runs a statistical search: `--strategy` given, or no bound and no declared
    cost. `--strategy` with `--bound` (or `--explain`, `--top` > 1 with a bound) is refused."""
    strategy = getattr(args, "strategy", None)
    if strategy is None:
        if getattr(args, "prior", None) is not None:
            args.strategy = strategy = "model"
        elif args.bound is None and getattr(space.model, "cost", None) is None:
            args.strategy = strategy = "model"
    if strategy is not None and args.bound is not None:
        from solverspace.core.errors import OptionError
        raise OptionError(f"tune: --strategy {strategy} and --bound both given: a statistical search uses no bound",
                          hint="drop --bound for a statistical search, or --strategy for the bound's proof")
    return strategy is not None


def _cmd_tune_search(args, space, db) -> int:
    """`tune` as a statistical search (`solverspace.strategies.tune`): no bound, no proof."""
    from solverspace.strategies.tune import tune_search
    quiet = args.quiet

    def progress(message: str) -> None:
        if not quiet:
            print(message, file=sys.stderr, flush=True)

    if not quiet:
        print(f"tuning {args.space}: measuring `{args.measure}` (repeat {args.repeat}, {args.aggregate}), "
              f"{args.strategy} search, seed {args.seed}; database {db}", file=sys.stderr, flush=True)
    result = tune_search(space, args.measure, strategy=args.strategy, seed=args.seed, prior=args.prior,
                         top=args.top, max_measurements=args.max_measurements, time_limit=args.time_limit,
                         repeat=args.repeat, aggregate=args.aggregate, db=db, timeout=args.timeout,
                         progress=progress, sinks=getattr(args, "sinks", ()))
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        print(result.summary())
    return 0 if result.top else 1
