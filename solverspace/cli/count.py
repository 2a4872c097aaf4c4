"""`solverspace count`: the number of valid configurations (exact, on any backend or on Dask; or
estimated with random XOR cells, `--approximate`)."""
from __future__ import annotations

import json
import time

from solverspace.cli import commands
from solverspace.cli.commands import (
    Command, Progress, add_common, add_engine, add_running, answered, backend_for, dask_options, tally_walk)
from solverspace.core.errors import SolverspaceError
from solverspace.core.options import POSITIVE_FLOAT, PROBABILITY, SEED
from solverspace.registry.backends import backends_with


class Count(Command):
    example = "solverspace count gemm --set device=a100 --json"

    def add_arguments(self, p):
        add_common(p), add_running(p, backends_with("count")), add_engine(p)
        p.add_argument("--json", action="store_true",
                       help="print one JSON object as the last line: {\"count\", \"exact\", \"undefined\", \"tally\", "
                            "\"backend\", \"seconds\", \"space\", \"settings\"} (\"tally\": the walk that \"undefined\" "
                            "counts, \"literal plan\" or \"optimized plan\"; --approximate: \"epsilon\", \"delta\", "
                            "\"method\" instead of the tally)")
        p.add_argument("--approximate", action="store_true",
                       help="estimate with random XOR cells (ApproxMC2 over CP-SAT): within a factor 1+epsilon of the "
                            "count with probability 1-delta; for spaces whose exact count does not finish")
        p.add_argument("--epsilon", type=POSITIVE_FLOAT, default=0.8, help="tolerance of --approximate (default 0.8)")
        p.add_argument("--delta", type=PROBABILITY, default=0.2, help="failure probability of --approximate (default 0.2)")
        p.add_argument("--seed", type=SEED, default=0, help="random seed of --approximate (default 0)")

    def run(self, args) -> int:
        space = commands.load_space(args)
        if args.approximate:
            if args.engine == "dask":
                raise SolverspaceError("--approximate runs in this process, not on --engine dask",
                                       hint="drop one of them: the Dask engine counts exactly")
            return _approximate_count(space, args)
        progress = Progress(not args.quiet, "counting")
        backend = backend_for(args, "count") if args.engine == "local" else None
        start = time.perf_counter()
        try:
            if backend is None:
                from solverspace.scale.dask_engine import DaskOptions, engine_for   # --engine dask only
                with engine_for(DaskOptions(**dask_options(args)), space) as run:
                    stats = run.stats()
            else:
                stats = space.stats(backend, strict=args.strict, progress=progress)
        finally:
            progress.close()
        seconds = time.perf_counter() - start
        if args.json:
            print(json.dumps({"count": int(stats.count), "exact": bool(getattr(stats, "exact", True)),
                              "undefined": stats.undefined, "tally": _tally_walk(args, backend),
                              "backend": "c" if backend is None else getattr(backend, "answered_by", None) or backend.name,
                              "seconds": round(seconds, 6), "space": space.model.source, "settings": space.settings,
                              **({"quick_build": True} if getattr(backend, "quick", False) else {}),
                              **({"reason": backend.reason} if getattr(backend, "reason", None) else {})}))
        else:
            said = run.describe() if backend is None else f"{answered(backend)} backend"
            print(f"{stats.count} valid configurations ({said}, {seconds:.2f} s)")
            _print_undefined(stats, _tally_walk(args, backend))
        return 0


def _tally_walk(args, backend) -> str:
    """`tally_walk` of whoever counted (the Dask engine: C's programs)."""
    return tally_walk(args, "c" if backend is None else getattr(backend, "answered_by", None) or backend.name)


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


def _print_undefined(stats, walk: str):
    if stats.undefined:
        where, config = stats.first_undefined
        at = " at " + " ".join(f"{k}={v}" for k, v in config.items()) if config else ""
        print(f"{stats.undefined} candidates were invalid because of an undefined operation "
              f"(division or modulo by zero); first: {where}{at}")
    if walk == "optimized plan" and stats.undefined:
        print("  (the tally of C's optimized walk, which visits fewer candidates; the literal plan's: "
              "--literal, or --backend reference for it per rule)")
