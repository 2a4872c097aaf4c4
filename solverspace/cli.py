"""The `solverspace` command: a thin layer over the Python API (`Space`)."""
from __future__ import annotations

import argparse
import functools
import json
import os
import signal
import sys
import time
import warnings
from fractions import Fraction

from solverspace.backends import BACKENDS, backends_with, get_backend
from solverspace.analysis.check import parse_assignment
from solverspace.core.errors import BackendUnavailableError, OutputError, SolverspaceError, SolverspaceWarning
from solverspace.lang.evaluate import allow_integers_of_any_length
from solverspace.core.options import (
    NON_NEGATIVE, POSITIVE, POSITIVE_FLOAT, PROBABILITY, SEED, SEPARATOR, THREADS, WORKERS)
from solverspace.core.output import (
    STDOUT, atomic_output, check_not_input, check_output_path, is_standard_output, is_stdout)
from solverspace.core.results import write_array
from solverspace.space import Space

LISTING_BACKENDS = backends_with("write")  # the backends that write configurations (CP-SAT counts only)


def _settings(pairs: list[str]) -> dict:
    result = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SolverspaceError(f"--set {pair!r}: expected NAME=VALUE", hint="e.g. --set precision=single")
        result[name.strip()] = value
    return result


def _load(args) -> Space:
    return Space.load(args.space, _settings(args.set), max_closure_values=args.max_closure_values)


class _Progress:
    """A tqdm bar on stderr, only for a terminal and without --quiet; fed by the backend."""

    def __init__(self, enabled: bool, desc: str):
        self.bar = None
        self.enabled = enabled and sys.stderr.isatty()
        self.desc = desc

    def __call__(self, done: int, total: int):
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=self.desc, unit="unit", file=sys.stderr, mininterval=0.5, delay=1.0)
        self.bar.n = done
        self.bar.refresh() if done == total else self.bar.update(0)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _options(args, backend: str) -> dict:
    """The options of `backend` given on the command line (--threads, --literal, --disable,
    --time-limit, --workers): each backend gets those it takes (`BACKENDS[name].options`)."""
    given = {"threads": getattr(args, "threads", None), "time_limit": getattr(args, "time_limit", None),
             "workers": getattr(args, "workers", None), "literal": getattr(args, "literal", None) or None,
             "disable": tuple(getattr(args, "disable", None) or ()) or None}
    return {name: value for name, value in given.items() if name in BACKENDS[backend].options and value is not None}


def _backend(args, capability: str):
    """The backend object a command runs, with the options given for it."""
    return get_backend(args.backend, capability, **_options(args, args.backend))


def _answered(backend) -> str:
    """Which backend answered, for messages: `auto` names its choice."""
    chosen = getattr(backend, "answered_by", None)
    if chosen and getattr(backend, "quick", False):
        chosen += ", quick -O0 build; the optimized one is built behind"
    return f"auto: {chosen}" if chosen else backend.name


def _dask(args, space, with_derived=()):
    """`--engine dask`: the Dask engine for this command's options (solverspace.dask_engine)."""
    from solverspace.dask_engine import for_command
    return for_command(args, space, _settings(args.set), with_derived)


def cmd_count(args) -> int:
    space = _load(args)
    if args.approximate:
        if args.engine == "dask":
            raise SolverspaceError("--approximate runs in this process, not on --engine dask",
                                   hint="drop one of them: the Dask engine counts exactly")
        return _approximate_count(space, args)
    progress = _Progress(not args.quiet, "counting")
    backend = _backend(args, "count") if args.engine == "local" else None
    start = time.perf_counter()
    try:
        if backend is None:
            with _dask(args, space) as run:
                stats = run.stats()
        else:
            stats = space.stats(backend, strict=args.strict, progress=progress)
    finally:
        progress.close()
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps({"count": int(stats.count), "exact": bool(getattr(stats, "exact", True)),
                          "undefined": stats.undefined,
                          "backend": "c" if backend is None else getattr(backend, "answered_by", None) or backend.name,
                          "seconds": round(seconds, 6), "space": space.model.source, "settings": space.settings,
                          **({"quick_build": True} if getattr(backend, "quick", False) else {})}))
    else:
        answered = run.describe() if backend is None else f"{_answered(backend)} backend"
        print(f"{stats.count} valid configurations ({answered}, {seconds:.2f} s)")
        _print_undefined(stats)
    return 0


def _approximate_count(space, args) -> int:
    """`count --approximate`: ApproxMC2 with random XOR cells enumerated by CP-SAT."""
    result = space.approximate_count(args.epsilon, args.delta, seed=args.seed, workers=args.workers)
    if args.json:
        print(json.dumps({"count": result.estimate, "exact": result.exact, "epsilon": result.epsilon,
                          "delta": result.delta, "method": "approxmc2", "seconds": round(result.seconds, 6),
                          "space": space.model.source, "settings": space.settings}))
    else:
        print(f"{result.describe()} ({result.seconds:.2f} s)")
    return 0


def _print_undefined(stats):
    if stats.undefined:
        where, config = stats.first_undefined
        print(f"{stats.undefined} candidates were invalid because of an undefined operation "
              f"(division or modulo by zero); first: {where} at "
              + " ".join(f"{k}={v}" for k, v in config.items()))


def cmd_sweep(args) -> int:
    """`sweep`: count the space for every combination of the settings' listed values."""
    from solverspace.sweep import parse_grid
    grid = parse_grid(args.set)
    if not grid:
        raise SolverspaceError("sweep needs at least one --set NAME=V1,V2,...", hint="e.g. --set device=k40c,p100,v100")
    width = max(len(n) for n in grid)
    total = time.perf_counter()
    points = Space.sweep(args.space, grid, args.backend, max_closure_values=args.max_closure_values,
                         strict=args.strict, one_pass=not args.per_point, **_options(args, args.backend))
    methods: dict[str, int] = {}
    for number, point in enumerate(points):
        if number == 0 and not args.json:  # after the first point: a bad setting value is an error first
            print("  ".join(f"{n:>{width}}" for n in grid) + "  count  (seconds)")
        methods[point.method] = methods.get(point.method, 0) + 1
        if args.json:
            print(json.dumps({"settings": point.settings, "count": point.count, "undefined": point.undefined,
                              "exact": point.exact, "seconds": round(point.seconds, 6), "backend": point.backend,
                              "method": point.method, **({"note": point.note} if point.note else {})}))
        else:
            print("  ".join(f"{str(v):>{width}}" for v in point.settings.values())
                  + f"  {point.count}{'' if point.exact else ' (lower bound)'}  ({point.seconds:.2f} s)")
    if not args.json:
        how = ", ".join(f"{n} {method}" for method, n in methods.items())
        print(f"({args.backend} backend; {how}; {time.perf_counter() - total:.2f} s in all)")
    return 0


def _enumerate_dask(args) -> int:
    """`enumerate --engine dask -o DIR`: one shard per partition and a manifest (resumable)."""
    space = _load(args)
    derived = tuple(n for n in (args.derived or "").split(",") if n)
    start = time.perf_counter()
    with _dask(args, space, derived) as run:
        manifest = run.enumerate(args.output, args.format or "parquet")
    parts = len(manifest["partitions"])
    print(f"wrote {manifest['total']} configurations to {args.output} as {parts} {args.format or 'parquet'} shard(s) and "
          f"_manifest.json ({run.shards_written} written now, {parts - run.shards_written} complete before; "
          f"{run.describe()}, {time.perf_counter() - start:.2f} s)")
    return 0


def _check_output(args, space, *paths) -> None:
    """`-o` (and its sidecars) must not be the space file being read: refused, exit 2."""
    for path in (args.output, *paths):
        check_not_input(path, space.model.source)


def _summary_stream(output):
    """Where a command says what it wrote: standard error when the output itself is standard output."""
    return sys.stderr if is_standard_output(output) else sys.stdout


def cmd_enumerate(args) -> int:
    if args.engine == "dask":
        if is_stdout(args.output):
            raise OutputError("-o -: --engine dask writes a directory of shards, not standard output",
                              hint="give a directory, e.g. -o shards")
        return _enumerate_dask(args)
    check_output_path(args.output, "-o")
    space = _load(args)
    _check_output(args, space)
    derived = tuple(n for n in (args.derived or "").split(",") if n)
    progress = _Progress(not args.quiet, "enumerating")
    start = time.perf_counter()
    backend = _backend(args, "write")
    try:
        written = space.write(args.output, backend, strict=args.strict, with_derived=derived,
                              progress=progress, sep=args.sep)
    finally:
        progress.close()
    print(f"wrote {written} configurations to {args.output} ({_answered(backend)} backend, "
          f"{time.perf_counter() - start:.2f} s)", file=_summary_stream(args.output))
    return 0


def cmd_sample(args) -> int:
    sidecar = None if args.output is None or is_stdout(args.output) else f"{args.output}.meta.json"
    if args.output is not None:
        check_output_path(args.output, "-o")
    if sidecar is not None:
        check_output_path(sidecar)
    space = _load(args)
    if args.output is not None:
        _check_output(args, space, *([sidecar] if sidecar else []))
    start = time.perf_counter()
    progress = _Progress(not args.quiet, "counting")
    try:
        if args.engine == "dask":
            with _dask(args, space) as run:
                rows, info = run.draw(args.n, args.seed, args.with_replacement)
        else:
            rows, info = space.draw(args.n, args.seed, replace=args.with_replacement, method=args.method,
                                    threads=args.threads, progress=progress)
    finally:
        progress.close()
    seconds = time.perf_counter() - start
    meta = {"space": space.model.source, "settings": space.settings, "method": info.method, "seed": info.seed,
            "n": info.n, "with_replacement": info.replace, "space_size": info.size,
            "space_size_exact": info.size_exact, "guarantee": info.guarantee}
    if args.output is None:   # CSV on standard output, by the one CSV rule (a value holding the separator is quoted)
        write_array(rows, STDOUT, args.sep)
        return 0
    write_array(rows, args.output, args.sep)
    if sidecar is not None:
        with atomic_output(sidecar, "w", encoding="utf-8") as handle:
            json.dump(meta, handle, indent=2)
    print(f"wrote {len(rows)} sampled configurations to {args.output} ({info.method} method, seed {info.seed}, "
          f"{seconds:.2f} s)" + (f"; seed and method recorded in {sidecar}" if sidecar else ""), file=sys.stderr)
    return 0


def _sample_size(text: str) -> int:
    """`-n`: an integer in digits only (1e11 is refused, not rounded: a sample size is exact)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        digits = f" (-n {int(float(text))})" if float(text).is_integer() else ""
    except (ValueError, OverflowError):
        digits = ""
    raise argparse.ArgumentTypeError(f"{text!r} is not an integer: write the sample size out in digits{digits}")


def cmd_export_t1(args) -> int:
    """`export-t1`: the space as a T1 JSON file (dependent ranges as superset lists + conditions)."""
    from pathlib import Path

    from solverspace.t1 import write_t1
    check_output_path(args.output, "-o")
    space = _load(args)
    _check_output(args, space)
    document = write_t1(space.model, args.output, name=Path(args.space).stem)
    configuration = document["ConfigurationSpace"]
    print(f"wrote {args.output}: {len(configuration['TuningParameters'])} parameters, "
          f"{len(configuration['Conditions'])} conditions", file=_summary_stream(args.output))
    return 0


def cmd_get(args) -> int:
    space = _load(args)
    for position in args.index:
        try:
            row = space[position]
        except IndexError as exc:
            raise SolverspaceError(str(exc), hint="positions run from 0 to count - 1 (negative ones from the end)") from None
        print(" ".join(f"{k}={v}" for k, v in zip(space.parameters, row)))
    return 0


def cmd_emit_c(args) -> int:
    space = _load(args)
    derived = tuple(n for n in (args.derived or "").split(",") if n)
    print(space.emit("c", with_derived=derived, **_options(args, "c")))
    return 0


def cmd_explain(args) -> int:
    from solverspace.analysis.explain import explain
    if args.plot is not None:
        from solverspace.analysis.pictures import check_plot_path
        check_plot_path(args.plot)
    space = _load(args)
    if args.plot is not None:
        from solverspace.analysis.pictures import plot_dag
        plot_dag(space.plan, args.plot)
        print(f"drew the dependency DAG to {args.plot}", file=sys.stderr)
    print(explain(space.plan))
    return 0


def cmd_funnel(args) -> int:
    if args.plot is not None:
        from solverspace.analysis.pictures import check_plot_path
        check_plot_path(args.plot)
    space = _load(args)
    progress = _Progress(not args.quiet, "funnel")
    try:
        funnel = space.funnel(args.backend, progress=progress, **_options(args, args.backend))
    finally:
        progress.close()
    if args.plot is not None:
        from solverspace.analysis.pictures import plot_funnel
        plot_funnel(funnel, args.plot)
        print(f"drew the funnel to {args.plot}", file=sys.stderr)
    print(funnel.to_json() if args.json else funnel.table())
    return 0


def cmd_settings(args) -> int:
    space = _load(args)
    for s in space.model.settings:
        allowed = ", ".join(repr(c) for c in s.choices) if s.choices else f"any {type(s.default).__name__}"
        print(f"{s.name} = {s.value!r}    (allowed: {allowed}; default {s.default!r})"
              + (f"  # {s.doc}" if s.doc else ""))
    return 0


def cmd_check(args) -> int:
    from solverspace.core.orders import format_value
    space = _load(args)
    assignment = parse_assignment(space.model, args.assignment)
    result = space.check(assignment)
    if not result.complete:
        if result.completion is None:
            print("no valid configuration has " + " ".join(f"{k}={format_value(v)}" for k, v in assignment.items()))
            return 1
        print("valid completion: " + " ".join(f"{k}={format_value(v)}" for k, v in result.completion.items()))
        return 0
    if result.valid:
        print("valid")
        return 0
    print(f"invalid: rejected by {len(result.rejections)} rule(s)")
    for r in result.rejections:
        values = ", ".join(f"{k}={format_value(v)}" for k, v in r.values.items())  # orders: i>j>k
        print(f"  {r.rule}: {r.reason}\n      with {values}")
    return 1


def cmd_best(args) -> int:
    """`best`: the K best configurations by an objective (branch and bound, exhaustive, or CP-SAT)."""
    from solverspace.core.orders import format_value
    space = _load(args)
    maximize = args.maximize is not None
    objective = args.maximize if maximize else args.minimize
    if objective is None:
        from solverspace.analysis.objective import model_or_declared
        _, objective = model_or_declared(space.model, None, "--minimize/--maximize")
    progress = _Progress(not args.quiet, "searching")
    try:
        result = space.best(objective, maximize=maximize, top=args.top, backend=args.engine, progress=progress,
                            **_options(args, args.engine))
    finally:
        progress.close()
    goal = "maximize" if maximize else "minimize"
    summary = (f"best {len(result.ranked)} configuration(s) by {goal} {objective} ({result.engine} engine, "
               f"{result.seconds:.2f} s)" + ("" if result.exact else "; stopped by the time limit: not proven best"))
    if result.note:
        print(f"note: {result.note}", file=sys.stderr)
    search = result.search
    if args.json:
        print(summary, file=sys.stderr)
        for r in result.ranked:
            row = {k: format_value(v) for k, v in r.configuration.items()}
            print(json.dumps({**row, **_json_number("objective", r.objective)}))
    else:
        print(summary)
        for r in result.ranked:
            print(f"{r.rank:>3}. {r.objective}  " + " ".join(f"{k}={format_value(v)}" for k, v in r.configuration.items()))
    if search is not None and not args.quiet:
        print(f"search: {search.evaluated} configuration(s) evaluated; per loop "
              + ", ".join(f"{name}: {seen} visited, {cut} cut" for name, seen, cut in
                          zip(search.order, search.visited, search.pruned)), file=sys.stderr)
    if not result.ranked and result.exact:
        print("no configuration ranked: the space has no valid configuration, or the objective is undefined "
              "(a division or modulo by zero) on every one", file=sys.stderr)
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
    space = _load(args)
    db = args.db if args.db is not None else space.default_tune_db()
    quiet = args.quiet

    def progress(message: str) -> None:
        if not quiet:
            print(message, file=sys.stderr, flush=True)

    if not quiet:
        print(f"tuning {args.space}: measuring `{args.measure}` (repeat {args.repeat}, {args.aggregate}), "
              f"bound `{args.bound if args.bound is not None else 'the declared cost'}`; database {db}",
              file=sys.stderr, flush=True)
    result = space.tune(args.measure, args.bound, top=args.top, max_measurements=args.max_measurements,
                        time_limit=args.time_limit, repeat=args.repeat, aggregate=args.aggregate, db=db,
                        timeout=args.timeout, progress=progress)
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        print(result.summary())
        if args.explain:
            print(result.explain())
    return 0 if result.top else 1


def cmd_check_cpsat(args) -> int:
    """`check`: with only some parameters given, CP-SAT finds a valid completion or a minimal set
    of constraints that rules the given values out; otherwise (and without OR-Tools) `cmd_check`."""
    from solverspace.core.orders import format_value
    space = _load(args)
    assignment = parse_assignment(space.model, args.assignment)
    if set(assignment) == set(space.parameters):
        return cmd_check(args)
    try:
        result = space.complete(assignment, "cpsat")
    except BackendUnavailableError:  # no OR-Tools, or a construct CP-SAT cannot lower: the reference
        return cmd_check(args)       # looks for a completion
    given = " ".join(f"{k}={format_value(v)}" for k, v in assignment.items())  # orders: i>j>k
    if result.feasible:
        print("valid completion: " + " ".join(f"{k}={format_value(v)}" for k, v in result.completion.items()))
        return 0
    if result.feasible is None:
        print(f"unknown: the search stopped before deciding whether a configuration has {given}")
        return 1
    print(f"no valid configuration has {given}")
    if not result.conflict and not result.undefined:
        print("ruled out by the parameters' domains alone (no constraint is needed)")
        return 1
    rules = len(result.conflict) + len(result.undefined)
    print((f"ruled out by {rules} constraint(s) together" if not result.undefined else
           f"ruled out by {rules} rule(s) together (an undefined value makes a configuration invalid)")
          + (" (minimal: without any one of them a valid configuration exists):" if result.minimal
             else " (the time limit stopped the minimisation):"))
    for line in result.describe(space.model):
        print("  " + line)
    return 1


def cmd_validate(args) -> int:
    """Run every backend that accepts the space and compare them; exit 0 agree, 1 disagree, 2 could not run."""
    from solverspace.validation.validate import ALL_BACKENDS, validate
    backends = [b.strip() for b in args.backends.split(",") if b.strip()] if args.backends else ALL_BACKENDS
    cpsat_options = {k: v for k, v in (("time_limit", args.time_limit), ("workers", args.workers)) if v is not None}
    report = validate(args.space, settings=_settings(args.set), backends=backends,
                      reference_limit=args.reference_limit, threads=args.threads, samples=args.samples,
                      seed=args.seed, cpsat_options=cpsat_options, max_closure_values=args.max_closure_values,
                      listing=not args.count_only)
    print(report.render())
    return report.status


class _OneCommand:
    """Subparsers that build only `command`'s parser: the others' arguments are not added
    (a warm `count` spends ~25 ms building every command's parser otherwise)."""

    def __init__(self, subparsers, command: str):
        self.subparsers, self.command, self.built = subparsers, command, False

    def add_parser(self, name, **kwargs):
        if name != self.command:
            return _Skipped()
        self.built = True
        return self.subparsers.add_parser(name, **kwargs)


class _Skipped:
    """Stands for a parser that is not built: every call is accepted and ignored."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: self


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser; with `command`, only that subcommand's parser is built (the
    parser then knows no other command: `_main` falls back to the whole one)."""
    parser = argparse.ArgumentParser(prog="solverspace", description="Count, list and explain autotuning search spaces.")
    sub = parser.add_subparsers(dest="command", required=True)
    if command is not None:
        sub = _OneCommand(sub, command)

    def common(p):
        p.add_argument("space", help="a space file, or a built-in space name (gemm)")
        p.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a setting (repeatable)")
        p.add_argument("--max-closure-values", type=POSITIVE, default=100_000, metavar="N",
                       help="stop a closure (generator) iterator that yields more than N values (default 100000)")

    def optimizations(p):
        p.add_argument("--literal", action="store_true",
                       help="C backend: every optimization off (the benchmark baseline)")
        p.add_argument("--disable", action="append", metavar="OPT", choices=["break", "tighten", "solve", "hoist", "split"],
                       help="C backend: switch one optimization off (break, tighten, solve, hoist, split; "
                            "repeatable)")

    def engine(p, listing=False):
        p.add_argument("--engine", default="local", choices=["local", "dask"],
                       help="local (this process, default) or dask (partitions run on dask.distributed: a local "
                            "cluster, or --scheduler; needs the dask extra; C backend only)")
        p.add_argument("--scheduler", metavar="ADDRESS",
                       help="--engine dask: an existing Dask scheduler (tcp://HOST:8786) instead of a local cluster")
        p.add_argument("--partitions", type=POSITIVE, default=None, metavar="N",
                       help="--engine dask: how many partitions (default: 4 per worker, at least one per 4Mi rows)")
        if listing:
            p.add_argument("--format", choices=["parquet", "npy"], default=None,
                           help="--engine dask: the shards' format (-o names a directory)")

    def running(p, backends):
        named = {"auto": "auto (default: c when compiled already or the space is big, else reference)",
                 "c": "c (compiled C/OpenMP)", "reference": "reference (pure Python)", "cpsat": "cpsat"}
        p.add_argument("--backend", default="auto", choices=backends,
                       help=", ".join(named.get(b, b) for b in backends))
        p.add_argument("--threads", type=THREADS, default=None, metavar="N", help="C backend threads (default: all cores)")
        p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS",
                       help="CP-SAT backend: stop after SECONDS (a count stopped early is a lower bound)")
        p.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                       help="CP-SAT backend: solver threads (default: all cores); --engine dask: worker processes "
                            "of the local cluster (default: all cores)")
        optimizations(p)
        p.add_argument("--strict", action="store_true", help="make an undefined operation an error")
        p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    p = sub.add_parser("count", help="number of valid configurations")
    common(p), running(p, backends_with("count")), engine(p)
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--approximate", action="store_true",
                   help="estimate with random XOR cells (ApproxMC2 over CP-SAT): within a factor 1+epsilon of the "
                        "count with probability 1-delta; for spaces whose exact count does not finish")
    p.add_argument("--epsilon", type=POSITIVE_FLOAT, default=0.8, help="tolerance of --approximate (default 0.8)")
    p.add_argument("--delta", type=PROBABILITY, default=0.2, help="failure probability of --approximate (default 0.2)")
    p.add_argument("--seed", type=SEED, default=0, help="random seed of --approximate (default 0)")
    p.set_defaults(func=cmd_count)

    p = sub.add_parser("sweep", help="count the space for every combination of settings, in one process")
    p.add_argument("space", help="a space file, or a built-in space name (gemm)")
    p.add_argument("--set", action="append", metavar="NAME=V1,V2,...",
                   help="a setting and the values to sweep, comma-separated (repeatable; the last varies fastest)")
    p.add_argument("--max-closure-values", type=POSITIVE, default=100_000, metavar="N",
                   help="stop a closure (generator) iterator that yields more than N values (default 100000)")
    running(p, backends_with("count"))
    p.add_argument("--json", action="store_true", help="one JSON object per combination")
    p.add_argument("--per-point", action="store_true",
                   help="count every combination on its own (by default the C backend counts combinations that "
                        "differ only in constants in one walk)")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("enumerate", help="write every valid configuration to a file")
    common(p), running(p, LISTING_BACKENDS), engine(p, listing=True)
    p.add_argument("-o", "--output", required=True,
                   help="output file: .csv (header + rows), .jsonl (one JSON object per row), .npy, or .parquet "
                        "(needs the parquet extra); the extension picks the format; --engine dask: a directory")
    p.add_argument("--sep", type=SEPARATOR, default=",",
                   help="CSV field separator, one character (default ','; ';' for ATF-style tools)")
    p.add_argument("--derived", help="comma-separated derived values to add as columns")
    p.set_defaults(func=cmd_enumerate)

    p = sub.add_parser("sample", help="uniform random valid configurations, reproducible by seed")
    common(p)
    p.add_argument("-n", type=_sample_size, required=True,
                   help="how many configurations: an integer written out in digits (at most 2**30)")
    p.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    p.add_argument("--with-replacement", action="store_true", help="allow the same configuration twice")
    p.add_argument("--method", default="exact", choices=["exact", "reference", "cpsat", "cpsat-xor"],
                   help="exact (compiled per-prefix counts, default), cpsat (exact CP-SAT counts by "
                        "self-reducibility, for spaces the C backend refuses) or reference (lists the space in Python): "
                        "all three exactly uniform; cpsat-xor: near-uniform with random XOR cells (UniGen2, "
                        "probabilities within a factor 17 of uniform), for spaces whose exact counts do not finish")
    p.add_argument("--threads", type=THREADS, default=None, metavar="N",
                   help="threads of the C enumerator, or CP-SAT workers (the sample is the same for any number)")
    p.add_argument("-o", "--output", help="write .csv, .jsonl, .npy or .parquet (plus FILE.meta.json with seed "
                                         "and method) instead of printing CSV")
    p.add_argument("--sep", type=SEPARATOR, default=",", help="CSV field separator, one character")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    engine(p)
    p.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                   help="--engine dask: worker processes of the local cluster (default: all cores)")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("export-t1", help="write the space as a T1 tuning-problem JSON file")
    common(p)
    p.add_argument("-o", "--output", required=True, help="the T1 .json file to write")
    p.set_defaults(func=cmd_export_t1)

    p = sub.add_parser("get", help="the configuration(s) at the given position(s) of the canonical order")
    common(p)
    p.add_argument("index", type=int, nargs="+", help="positions (negative counts from the end)")
    p.set_defaults(func=cmd_get)

    p = sub.add_parser("emit-c", help="print the generated C/OpenMP enumerator")
    common(p), optimizations(p)
    p.add_argument("--derived", help="comma-separated derived values to add as columns")
    p.set_defaults(func=cmd_emit_c)

    p = sub.add_parser("funnel", help="per constraint: candidates reached, rejected, undefined, kept; redundancy")
    common(p)
    p.add_argument("--backend", default="c", choices=backends_with("funnel"))
    p.add_argument("--threads", type=THREADS, default=None, metavar="N")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--plot", metavar="FILE", help="also draw the funnel (.svg, .png or .pdf; needs the plot extra)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_funnel)

    p = sub.add_parser("explain", help="settings, parameters, DAG level sets and the loop plan")
    common(p)
    p.add_argument("--plot", metavar="FILE", help="also draw the DAG by level set (.svg/.png/.pdf; needs the plot extra)")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("settings", help="list the settings with their allowed values")
    common(p)
    p.set_defaults(func=cmd_settings)

    p = sub.add_parser("check", help="is a configuration valid? which rules reject it?")
    common(p)
    p.add_argument("assignment", nargs="*", metavar="NAME=VALUE")
    p.set_defaults(func=cmd_check_cpsat)

    p = sub.add_parser("best", help="the K best configurations by an objective (branch and bound, CP-SAT)")
    common(p)
    goal = p.add_mutually_exclusive_group()
    goal.add_argument("--maximize", metavar="EXPR", help="an expression of parameters, derived values and settings")
    goal.add_argument("--minimize", metavar="EXPR", help="an expression of parameters, derived values and settings "
                                                          "(default: the space's declared cost(...))")
    p.add_argument("--top", type=int, default=10, metavar="K", help="how many configurations (default 10)")
    p.add_argument("--engine", choices=backends_with("best"), default="bnb",
                   help="bnb (default): branch and bound with sound bounds of the objective on partial "
                        "configurations, compiled in C; exhaustive: evaluate every valid configuration in C; "
                        "bnb-reference, exhaustive-reference: the same in Python (any space); cpsat: OR-Tools")
    p.add_argument("--json", action="store_true", help="one JSON object per configuration: parameters and objective")
    p.add_argument("--quiet", "-q", action="store_true", help="no search statistics on stderr")
    p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS", help="stop after SECONDS")
    p.add_argument("--workers", type=WORKERS, default=None, metavar="N", help="CP-SAT threads (default: all cores)")
    p.add_argument("--threads", type=THREADS, default=None, metavar="N",
                   help="bnb, exhaustive: OpenMP threads (default: all cores)")
    p.set_defaults(func=cmd_best)

    p = sub.add_parser("tune", help="the fastest configuration by measurement, measuring only what a lower-bound "
                                    "model cannot rule out (proven best)")
    common(p)
    p.add_argument("--measure", required=True, metavar="CMD",
                   help="command template run without a shell, fields {NAME} (parameters or derived values) each "
                        "one argument; for a shell write sh -c '...' (fields become environment variables there); "
                        "the last number it prints on stdout is the time in seconds; a non-zero exit is a failed "
                        "configuration")
    p.add_argument("--bound", metavar="EXPR",
                   help="a lower bound on the time (seconds) in the space language (default: the space's cost)")
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
    p.add_argument("--db", metavar="PATH",
                   help="the SQLite file of measurements (default: SPACE_STEM.tune.sqlite next to the space file; "
                        "for a built-in space, in the current directory)")
    p.add_argument("--explain", action="store_true",
                   help="which part of the bound set it: at the best configuration and the largest cut subtrees")
    p.add_argument("--json", action="store_true", help="one JSON object with the result")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_tune)

    p = sub.add_parser("validate", help="run every backend that accepts the space; do they agree?")
    common(p)
    p.add_argument("--reference-limit", type=NON_NEGATIVE, default=100_000, metavar="N",
                   help="run the pure-Python reference only when the space has at most N configurations "
                        "(default 100000)")
    p.add_argument("--backends", metavar="LIST",
                   help="comma-separated subset of c,c-literal,cpsat,reference,sample (default: all)")
    p.add_argument("--threads", type=THREADS, default=None, metavar="N", help="C backend threads (default: all cores)")
    p.add_argument("--samples", type=NON_NEGATIVE, default=20, metavar="N",
                   help="configurations to sample and check (default 20)")
    p.add_argument("--seed", type=SEED, default=0, help="sampling seed (default 0)")
    p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS", help="CP-SAT: stop after SECONDS")
    p.add_argument("--workers", type=WORKERS, default=None, metavar="N", help="CP-SAT: solver threads (default: all cores)")
    p.add_argument("--count-only", action="store_true",
                   help="C: count without listing (no digests; for very large spaces)")
    p.set_defaults(func=cmd_validate)
    if command is not None and not sub.built:
        return build_parser()
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that the same paths cancel the C threads and remove
    temporary files; the command then exits with 128 + 15."""


def _raise_terminated(signum, frame):
    raise Terminated()


def _on_sigterm():
    """Install the SIGTERM handler for one `main()` call; returns the handler to restore (None
    when signals cannot be handled here, outside the main thread)."""
    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:
        return None


def _ignore_file_size_signal():
    """Past the file size limit (`ulimit -f`) the kernel sends SIGXFSZ, which kills by default;
    ignored, the write fails with EFBIG and the output code reports it (CPython usually ignores
    it already; this does not depend on that)."""
    if hasattr(signal, "SIGXFSZ"):
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        except ValueError:  # not the main thread: leave the disposition alone
            pass


def _warn_once(message, category, filename, lineno, file=None, line=None, *, seen: set, fallback):
    """showwarning for the command: each SolverspaceWarning once, as `solverspace: warning: ...`."""
    if not issubclass(category, SolverspaceWarning):
        return fallback(message, category, filename, lineno, file, line)
    if str(message) not in seen:
        seen.add(str(message))
        print(f"solverspace: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    allow_integers_of_any_length()   # before argparse reads a position of 5,000 digits
    _ignore_file_size_signal()
    previous = _on_sigterm()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", SolverspaceWarning)
            warnings.showwarning = functools.partial(_warn_once, seen=set(), fallback=warnings.showwarning)
            return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv and not argv[0].startswith("-") else None)
    args, extra = parser.parse_known_args(argv)
    # `check SPACE --set a=b k=v ...`: argparse stops filling a positional list at an option
    if args.command == "check" and all("=" in e and not e.startswith("-") for e in extra):
        args.assignment += extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "engine", "dask") == "local":
        given = [o for o in ("scheduler", "partitions", "format") if getattr(args, o, None) is not None]
        if given:
            parser.error(f"--{given[0]} is an option of --engine dask")
    try:
        return args.func(args)
    except SolverspaceError as exc:
        print(f"solverspace: error: {exc}", file=sys.stderr)
        return 2
    except Terminated:
        print("solverspace: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("solverspace: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `solverspace explain gemm | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
