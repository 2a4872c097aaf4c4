"""The handlers of the `solverspace` subcommands (`cmd_NAME(args) -> exit code`) and what they
share: `load_space` (the space a command names, with its `--set` settings), `Progress` (the bar on
stderr) and `backend_options` (the run options a backend takes). `best` and `tune` have theirs in
`solverspace.cli.search_commands`; the parser that routes to them is `solverspace.cli.parser`."""
from __future__ import annotations

import json
import sys
import time

from solverspace.registry.backends import BACKENDS, get_backend
from solverspace.core.errors import BackendUnavailableError, OutputError, SolverspaceError
from solverspace.space import Space
from solverspace.core.messages import say

# core.output and core.formats (shutil, tempfile, bz2, lzma) and analysis.check are imported by
# the handlers that write a file or check an assignment: `count`, `sweep` and `best` need none.


def _settings(pairs: list[str]) -> dict:
    result = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SolverspaceError(f"--set {pair!r}: expected NAME=VALUE", hint="e.g. --set precision=single")
        result[name.strip()] = value
    return result


def load_space(args) -> Space:
    return Space.load(args.space, _settings(args.set), max_closure_values=args.max_closure_values)


class Progress:
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
            # miniters=0: redraw every half second whatever moved (tqdm's dynamic miniters, set from
            # the first jump, held a funnel's bar at 85% for its last 12 s)
            self.bar = tqdm(total=total, desc=self.desc, unit="unit", file=sys.stderr, mininterval=0.5, delay=1.0,
                            miniters=0)
        self.bar.n = done
        self.bar.refresh() if done == total else self.bar.update(0)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def backend_options(args, backend: str) -> dict:
    """The options of `backend` given on the command line (--threads, --literal, --disable,
    --time-limit, --workers): each backend gets those it takes (`BACKENDS[name].options`)."""
    given = {"threads": getattr(args, "threads", None), "time_limit": getattr(args, "time_limit", None),
             "workers": getattr(args, "workers", None), "literal": getattr(args, "literal", None) or None,
             "disable": tuple(getattr(args, "disable", None) or ()) or None}
    return {name: value for name, value in given.items() if name in BACKENDS[backend].options and value is not None}


def _backend(args, capability: str):
    """The backend object a command runs, with the options given for it."""
    return get_backend(args.backend, capability, **backend_options(args, args.backend))


def _answered(backend) -> str:
    """Which backend answered, for messages: `auto` names its choice."""
    chosen = getattr(backend, "answered_by", None)
    if chosen and getattr(backend, "quick", False):
        chosen += ", quick -O0 build; the optimized one is built behind"
    return f"auto: {chosen}" if chosen else backend.name


def _dask(args, space, with_derived=()):
    """`--engine dask`: the Dask engine for this command's options (solverspace.scale.dask_engine)."""
    from solverspace.scale.dask_engine import DaskOptions, engine_for
    options = DaskOptions(args.space, _settings(args.set), max_closure_values=args.max_closure_values,
                          backend=getattr(args, "backend", "auto"), method=getattr(args, "method", "exact"),
                          literal=bool(getattr(args, "literal", False)), disable=tuple(getattr(args, "disable", None) or ()),
                          scheduler=args.scheduler, workers=args.workers, threads=args.threads,
                          partitions=args.partitions, strict=getattr(args, "strict", False), progress=not args.quiet)
    return engine_for(options, space, with_derived)


def cmd_count(args) -> int:
    space = load_space(args)
    if args.approximate:
        if args.engine == "dask":
            raise SolverspaceError("--approximate runs in this process, not on --engine dask",
                                   hint="drop one of them: the Dask engine counts exactly")
        return _approximate_count(space, args)
    progress = Progress(not args.quiet, "counting")
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
                          **({"quick_build": True} if getattr(backend, "quick", False) else {}),
                          **({"reason": backend.reason} if getattr(backend, "reason", None) else {})}))
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
    from solverspace.scale.sweep import parse_grid
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
    space = load_space(args)
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
    from solverspace.core.output import check_not_input
    for path in (args.output, *paths):
        check_not_input(path, space.model.source)


def _summary_stream(output):
    """Where a command says what it wrote: standard error when the output itself is standard output."""
    from solverspace.core.output import is_standard_output
    return sys.stderr if is_standard_output(output) else sys.stdout


def cmd_enumerate(args) -> int:
    from solverspace.core.output import check_output_path, is_stdout
    if args.engine == "dask":
        if is_stdout(args.output):
            raise OutputError("-o -: --engine dask writes a directory of shards, not standard output",
                              hint="give a directory, e.g. -o shards")
        return _enumerate_dask(args)
    check_output_path(args.output, "-o")
    space = load_space(args)
    _check_output(args, space)
    derived = tuple(n for n in (args.derived or "").split(",") if n)
    progress = Progress(not args.quiet, "enumerating")
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
    from solverspace.core.formats import write_array
    from solverspace.core.output import STDOUT, atomic_output, check_output_path, is_stdout
    sidecar = None if args.output is None or is_stdout(args.output) else f"{args.output}.meta.json"
    if args.output is not None:
        check_output_path(args.output, "-o")
    if sidecar is not None:
        check_output_path(sidecar)
    space = load_space(args)
    if args.output is not None:
        _check_output(args, space, *([sidecar] if sidecar else []))
    start = time.perf_counter()
    progress = Progress(not args.quiet, "counting")
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
    say(f"wrote {len(rows)} sampled configurations to {args.output} ({info.method} method, seed {info.seed}, "
        f"{seconds:.2f} s)" + (f"; seed and method recorded in {sidecar}" if sidecar else ""))
    return 0

def cmd_export_t1(args) -> int:
    """`export-t1`: the space as a T1 JSON file (dependent ranges as superset lists + conditions)."""
    from pathlib import Path

    from solverspace.core.output import check_output_path
    from solverspace.io.t1 import write_t1
    check_output_path(args.output, "-o")
    space = load_space(args)
    _check_output(args, space)
    document = write_t1(space.model, args.output, name=Path(args.space).stem)
    configuration = document["ConfigurationSpace"]
    print(f"wrote {args.output}: {len(configuration['TuningParameters'])} parameters, "
          f"{len(configuration['Conditions'])} conditions", file=_summary_stream(args.output))
    return 0


def cmd_get(args) -> int:
    space = load_space(args)
    for position in args.index:
        try:
            row = space[position]
        except IndexError as exc:
            raise SolverspaceError(str(exc), hint="positions run from 0 to count - 1 (negative ones from the end)") from None
        print(" ".join(f"{k}={v}" for k, v in zip(space.parameters, row)))
    return 0


def cmd_emit_c(args) -> int:
    space = load_space(args)
    derived = tuple(n for n in (args.derived or "").split(",") if n)
    print(space.emit("c", with_derived=derived, **backend_options(args, "c")))
    return 0


def cmd_explain(args) -> int:
    from solverspace.analysis.explain import explain
    if args.plot is not None:
        from solverspace.analysis.pictures import check_plot_path
        check_plot_path(args.plot)
    space = load_space(args)
    if args.plot is not None:
        from solverspace.analysis.pictures import plot_dag
        plot_dag(space.plan, args.plot)
        say(f"drew the dependency DAG to {args.plot}")
    print(explain(space.plan))
    return 0


def cmd_funnel(args) -> int:
    if args.plot is not None:
        from solverspace.analysis.pictures import check_plot_path
        check_plot_path(args.plot)
    space = load_space(args)
    progress = Progress(not args.quiet, "funnel")
    try:
        funnel = space.funnel(args.backend, progress=progress, **backend_options(args, args.backend))
    finally:
        progress.close()
    if args.plot is not None:
        from solverspace.analysis.pictures import plot_funnel
        plot_funnel(funnel, args.plot)
        say(f"drew the funnel to {args.plot}")
    print(funnel.to_json() if args.json else funnel.table())
    return 0


def cmd_settings(args) -> int:
    space = load_space(args)
    for s in space.model.settings:
        allowed = ", ".join(repr(c) for c in s.choices) if s.choices else f"any {type(s.default).__name__}"
        print(f"{s.name} = {s.value!r}    (allowed: {allowed}; default {s.default!r})"
              + (f"  # {s.doc}" if s.doc else ""))
    return 0


def cmd_check(args) -> int:
    from solverspace.analysis.check import parse_assignment
    from solverspace.core.orders import format_value
    space = load_space(args)
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

def cmd_check_cpsat(args) -> int:
    """`check`: with only some parameters given, CP-SAT finds a valid completion or a minimal set
    of constraints that rules the given values out; otherwise (and without OR-Tools) `cmd_check`."""
    from solverspace.analysis.check import parse_assignment
    from solverspace.core.orders import format_value
    space = load_space(args)
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
