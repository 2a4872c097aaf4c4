"""`solverspace tune`: the fastest configuration by measurement, measuring only what a lower-bound
model cannot rule out (`Space.tune`, `solverspace.analysis.tune`).

The options other tools add (`--measure-from`, `--kt-cache`, `--t4`: `solverspace.cli.kernel_tuner`;
`--optuna-storage`: `solverspace.cli.optuna`) are `TuneOptions` registered in
`solverspace.cli.tune_options`: `Tune` adds their arguments, checks them, takes the measurer one of
them gives instead of `--measure`, calls `Space.tune` once with every sink they open, and closes
the sinks in one place, however the run ends."""
from __future__ import annotations

import json

from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.tune_options import TUNE_OPTIONS
from solverspace.core.errors import OptionError
from solverspace.core.lazy import resolve
from solverspace.core.messages import say
from solverspace.core.options import NON_NEGATIVE, POSITIVE, POSITIVE_FLOAT
from solverspace.analysis.tune import tune as bound_search
from solverspace.analysis.tune_failures import SAME_FAILURE_LIMIT
from solverspace.strategies.tune import tune_search

#: `--measure` as `TuneOptions.measures` names an option that measures
MEASURE = ("measure", "--measure CMD", "run a command", "--measure './bench {x}'")


class Tune(Command):
    example = ("solverspace tune gemm --set device=tiny --measure './bench {dim_m} {dim_n} "
               "{blk_m} {blk_n} {blk_k}' --max-measurements 50")

    def __init__(self):
        self.options = [resolve(target)() for target in TUNE_OPTIONS]

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("--measure", metavar="CMD",
                       help="command template run without a shell, fields {NAME} (parameters or derived values) each "
                            "one argument; only plain tokens (letters, digits, _ . + - , : = / @ %%) are pasted: a "
                            "template that would paste another value is refused; every run has each value in "
                            "$SOLVERSPACE_NAME; for a shell write sh -c '...' (fields become those variables there); "
                            "the last number it prints on stdout is the time in seconds; a non-zero exit is a failed "
                            "configuration")
        p.add_argument("--bound", metavar="EXPR",
                       help="a lower bound on the time (seconds) in the space language (default: the space's cost)")
        p.add_argument("--strategy", choices=["model", "random"], default=None,
                       help="a statistical search instead of the bound's proof: model (Bayesian optimisation over the "
                            "valid configurations; the default when there is no --bound and no declared cost) or random "
                            "(exact uniform, without replacement)")
        p.add_argument("--seed", type=NON_NEGATIVE, default=0, metavar="S", help="the statistical search's seed (default 0)")
        p.add_argument("--prior", metavar="CACHE_OR_DB",
                       help="another device's measurements of this space (a Kernel Tuner cache, .json or .json.gz, or a "
                            "tune database), read as a prior on the ranking (model strategy)")
        p.add_argument("--top", type=POSITIVE, default=1, metavar="K", help="prove the K fastest (default 1)")
        p.add_argument("--repeat", type=POSITIVE, default=1, metavar="N", help="runs per configuration (default 1)")
        p.add_argument("--aggregate", choices=["min", "median"], default="min",
                       help="how the repeats make one time (default min)")
        p.add_argument("--max-measurements", type=NON_NEGATIVE, default=None, metavar="N",
                       help="stop after N new measurements (stored ones are reused for free)")
        p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS",
                       help="stop after SECONDS (a measurement under way finishes)")
        p.add_argument("--timeout", type=POSITIVE_FLOAT, default=None, metavar="SECONDS",
                       help="a command running longer is killed and recorded as timeout")
        p.add_argument("--stop-after-failures", type=NON_NEGATIVE, default=SAME_FAILURE_LIMIT, metavar="K",
                       help=f"stop (exit 2, saying why) when the first K configurations measured all fail the same way "
                            f"(the same exit status and last line on stderr): a command that cannot work is not run on "
                            f"the whole space (default {SAME_FAILURE_LIMIT}; 0: never; a program that is not found or "
                            f"not executable stops after 3)")
        p.add_argument("--db", metavar="PATH",
                       help="the SQLite file of measurements (default: SPACE_STEM.tune.sqlite next to the space file; "
                            "for a built-in space, in the current directory)")
        p.add_argument("--explain", action="store_true",
                       help="which part of the bound set it: at the best configuration and the largest cut subtrees")
        p.add_argument("--json", action="store_true",
                       help="print one JSON object with the result: {\"best\", \"time\", \"proven\", \"status\", \"top\", "
                            "\"measured\", \"reused\", \"failed\", ...}")
        p.add_argument("--quiet", "-q", action="store_true", help="no progress; only warnings and errors on stderr")
        for option in self.options:
            option.add_arguments(p.add_argument_group(option.title))

    def run(self, args) -> int:
        """The integrations' options checked, then the space loaded and their measurer and sinks
        opened; one search; the sinks closed (also when opening one of them failed) and the
        options' last words said."""
        for option in self.options:
            option.check(args)
        measuring = self._measuring(args)
        space = commands.load_space(args)
        sinks: list = []
        try:
            measure = args.measure if measuring is None else measuring.measurer(args, space)
            for option in self.options:
                for sink in option.sinks(args, space):
                    sinks.append(sink)
            return self._search(args, space, measure, sinks)
        finally:
            for sink in sinks:      # closed by tune already, unless it never started (closing twice is harmless)
                try:
                    sink.close()
                except Exception as exc:     # a close failure is said, the exit code stays tune's
                    say(f"warning: closing {sink!r} failed: {exc}")
            for option in self.options:
                option.finish(args)

    def _measuring(self, args):
        """The option that measures instead of `--measure` (None: `--measure` itself); exactly one
        of them must be given."""
        ways = [(None, MEASURE)] + [(option, option.measures) for option in self.options if option.measures]
        given = [(option, way) for option, way in ways if getattr(args, way[0]) is not None]
        if len(given) != 1:
            raise OptionError("tune: give exactly one of " + _listed([f"{usage} ({what})" for _, (_, usage, what, _) in ways])
                              if not given else
                              f"tune: {_listed([way[1].split()[0] for _, way in given])} "
                              f"{'both' if len(given) == 2 else 'all'} given: give one",
                              hint="e.g. " + " or ".join(example for _, (*_, example) in ways))
        return given[0][0]

    def _search(self, args, space, measure, sinks) -> int:
        """`tune`: measured search; measures only what the bound cannot rule out (solverspace.analysis.tune)."""
        db = args.db if args.db is not None else space.default_tune_db()
        quiet = args.quiet

        def progress(message: str) -> None:
            if not quiet:
                say(message)

        strategy = _strategy(args, space)
        if strategy is not None:
            return _search_statistically(args, space, measure, sinks, db, strategy, progress)
        if not quiet:
            say(f"tuning {args.space}: measuring `{measure}` (repeat {args.repeat}, {args.aggregate}), "
                f"bound `{args.bound if args.bound is not None else 'the declared cost'}`; database {db}")
        result = bound_search(space.plan, measure, args.bound, top=args.top, max_measurements=args.max_measurements,
                              time_limit=args.time_limit, repeat=args.repeat, aggregate=args.aggregate, db=str(db),
                              timeout=args.timeout, progress=progress, sinks=sinks,
                              stop_after_failures=args.stop_after_failures)
        if args.json:
            print(json.dumps(result.as_dict()))
        else:
            print(result.summary())
            if args.explain:
                print(result.explain())
        return 0 if result.top else 1


def _strategy(args, space) -> str | None:
    """The statistical search `tune` runs (None: the bound's proof): `--strategy`, else `model` where
    `--prior` is given or there is no bound and no declared cost. `--strategy` with `--bound` is refused."""
    strategy = args.strategy
    if strategy is None and (args.prior is not None or (args.bound is None and space.model.cost is None)):
        strategy = "model"
    if strategy is not None and args.bound is not None:
        raise OptionError(f"tune: --strategy {strategy} and --bound both given: a statistical search uses no bound",
                          hint="drop --bound for a statistical search, or --strategy for the bound's proof")
    return strategy


def _search_statistically(args, space, measure, sinks, db, strategy: str, progress) -> int:
    """`tune` as a statistical search (`solverspace.strategies.tune`): no bound, no proof."""
    if not args.quiet:
        say(f"tuning {args.space}: measuring `{measure}` (repeat {args.repeat}, {args.aggregate}), "
            f"{strategy} search, seed {args.seed}; database {db}")
    result = tune_search(space, measure, strategy=strategy, seed=args.seed, prior=args.prior, top=args.top,
                         max_measurements=args.max_measurements, time_limit=args.time_limit, repeat=args.repeat,
                         aggregate=args.aggregate, db=db, timeout=args.timeout, progress=progress, sinks=sinks,
                         stop_after_failures=args.stop_after_failures)
    print(json.dumps(result.as_dict()) if args.json else result.summary())
    return 0 if result.top else 1


def _listed(items: list[str]) -> str:
    """`a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
