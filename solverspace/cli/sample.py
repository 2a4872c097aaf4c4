"""`solverspace sample`: uniform random valid configurations, reproducible by seed; with
`--given k=v ...`, uniform over the valid configurations that have those values."""
from __future__ import annotations

import json
import time

from solverspace.analysis.check import parse_assignment
from solverspace.cli import commands
from solverspace.cli.commands import Command, Progress, add_common, add_engine, dask_options, sample_size
from solverspace.cli.outputs import (
    add_json, check_json_output, check_output, configuration_json, print_json, report_written, rows_json)
from solverspace.core.errors import OptionError
from solverspace.core.formats import write_array
from solverspace.core.options import SEED, SEPARATOR, THREADS, WORKERS
from solverspace.core.orders import format_value
from solverspace.core.output import STDOUT, atomic_output, check_output_path, is_standard_output, is_stdout


class Sample(Command):
    example = "solverspace sample gemm -n 100 --seed 1 -o sample.csv"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("-n", type=sample_size, required=True,
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
        p.add_argument("--quiet", "-q", action="store_true", help="no progress bar; only warnings and errors on stderr")
        add_engine(p)
        p.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                       help="--engine dask: worker processes of the local cluster (default: all cores)")
        p.add_argument("--given", nargs="+", metavar="NAME=VALUE",
                       help="uniform over the valid configurations with these values (exact; none: exit 2, saying why)")
        add_json(p, "without -o, {\"configurations\": [{NAME: VALUE, ...}, ...], \"method\", \"seed\", \"n\", "
                    "\"with_replacement\", ...} (the sample and what -o's FILE.meta.json records); with -o FILE, what "
                    "was written, {\"output\", \"configurations\" (how many), ...}, instead of the line on standard "
                    "error; not with -o -")

    def run(self, args) -> int:
        """Without `--given`, a sample of the whole space (`Space.draw`, here or on Dask); with it,
        of the valid configurations that agree with the given values (`Space.sample(given=...)`)."""
        if args.n < 1:   # with or without --given (an empty file would look like an empty space)
            raise OptionError(f"-n {args.n}: ask for at least one configuration", hint="e.g. -n 100")
        check_json_output(args)
        if args.given:
            return self._given(args)
        return self._whole(args)

    def _whole(self, args) -> int:
        sidecar = None if args.output is None or is_stdout(args.output) else f"{args.output}.meta.json"
        if args.output is not None:
            check_output_path(args.output, "-o")
        if sidecar is not None:
            check_output_path(sidecar)
        space = commands.load_space(args)
        if args.output is not None:
            check_output(args, space, *([sidecar] if sidecar else []))
        start = time.perf_counter()
        progress = Progress(not args.quiet, "counting")
        try:
            if args.engine == "dask":
                from solverspace.scale.dask_engine import DaskOptions, engine_for   # --engine dask only
                with engine_for(DaskOptions(**dask_options(args)), space) as run:
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
            if args.json:
                print_json({"configurations": rows_json(rows), **meta, "seconds": round(seconds, 6)})
            else:
                write_array(rows, STDOUT, args.sep)
            return 0
        write_array(rows, args.output, args.sep)
        if sidecar is not None:
            with atomic_output(sidecar, "w", encoding="utf-8") as handle:
                json.dump(meta, handle, indent=2)
        report_written(args, f"wrote {len(rows)} sampled configurations to {args.output} ({info.method} method, seed "
                             f"{info.seed}, {seconds:.2f} s)" + (f"; seed and method recorded in {sidecar}" if sidecar else ""),
                       {"output": args.output, "configurations": len(rows), **meta, "seconds": round(seconds, 6),
                        "meta": sidecar})
        return 0

    def _given(self, args) -> int:
        if args.engine == "dask":
            raise OptionError("--given runs locally (the derived space is sampled in this process)",
                              hint="leave out --engine dask")
        if args.output is not None:
            check_output_path(args.output, "-o")
        space = commands.load_space(args)
        if args.output is not None:
            check_output(args, space)
        given = parse_assignment(space.model, args.given)
        start = time.perf_counter()
        rows = space.sample(args.n, args.seed, given=given, replace=args.with_replacement, method=args.method,
                            threads=args.threads)
        seconds = time.perf_counter() - start
        facts = {"given": configuration_json(given, given.values()), "method": args.method, "seed": args.seed,
                 "n": args.n, "with_replacement": args.with_replacement, "seconds": round(seconds, 6)}
        if args.json and args.output is None:
            print_json({"configurations": rows_json(rows), **facts})
            return 0
        write_array(rows, STDOUT if args.output is None else args.output, args.sep)
        if args.output is not None and not is_standard_output(args.output):
            report_written(args, f"wrote {len(rows)} sampled configurations with " + " ".join(
                f"{k}={format_value(v)}" for k, v in given.items()) + f" to {args.output} ({args.method} method, "
                f"seed {args.seed}, {seconds:.2f} s)", {"output": args.output, "configurations": len(rows), **facts})
        return 0
