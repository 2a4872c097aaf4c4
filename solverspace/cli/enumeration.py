"""`solverspace enumerate`: every valid configuration written to a file (in this process, or as
shards on Dask with `--engine dask`)."""
from __future__ import annotations

import time

from solverspace.cli import commands
from solverspace.cli.commands import (
    Command, Progress, add_common, add_engine, add_running, answered, backend_for, dask_options)
from solverspace.cli.outputs import add_json, check_json_output, check_output, report_written
from solverspace.core.errors import OutputError
from solverspace.core.options import SEPARATOR
from solverspace.core.output import check_output_path, is_stdout
from solverspace.registry.backends import backends_with


class Enumerate(Command):
    example = "solverspace enumerate gemm --set device=tiny -o gemm-tiny.csv"

    def add_arguments(self, p):
        add_common(p), add_running(p, backends_with("write")), add_engine(p, listing=True)
        p.add_argument("-o", "--output", required=True,
                       help="output file: .csv (header + rows), .jsonl (one JSON object per row), .npy, or .parquet "
                            "(needs the parquet extra); the extension picks the format; --engine dask: a directory")
        p.add_argument("--sep", type=SEPARATOR, default=",",
                       help="CSV field separator, one character (default ','; ';' for ATF-style tools)")
        p.add_argument("--derived", help="comma-separated derived values to add as columns")
        add_json(p, "what was written, {\"output\", \"configurations\", \"backend\", \"seconds\"} (--engine dask: "
                    "also \"format\", \"shards\", \"shards_written\"), instead of the line on standard error; "
                    "not with -o -")

    def run(self, args) -> int:
        check_json_output(args)
        if args.engine == "dask":
            if is_stdout(args.output):
                raise OutputError("-o -: --engine dask writes a directory of shards, not standard output",
                                  hint="give a directory, e.g. -o shards")
            return _enumerate_dask(args)
        check_output_path(args.output, "-o")
        space = commands.load_space(args)
        check_output(args, space)
        derived = tuple(n for n in (args.derived or "").split(",") if n)
        progress = Progress(not args.quiet, "enumerating")
        start = time.perf_counter()
        backend = backend_for(args, "write")
        try:
            written = space.write(args.output, backend, strict=args.strict, with_derived=derived,
                                  progress=progress, sep=args.sep)
        finally:
            progress.close()
        seconds = time.perf_counter() - start
        report_written(args, f"wrote {written} configurations to {args.output} ({answered(backend)} backend, "
                             f"{seconds:.2f} s)",
                       {"output": args.output, "configurations": int(written),
                        "backend": getattr(backend, "answered_by", None) or backend.name, "seconds": round(seconds, 6)})
        return 0


def _enumerate_dask(args) -> int:
    """`enumerate --engine dask -o DIR`: one shard per partition and a manifest (resumable)."""
    from solverspace.scale.dask_engine import DaskOptions, engine_for   # --engine dask only
    space = commands.load_space(args)
    derived = tuple(n for n in (args.derived or "").split(",") if n)
    start = time.perf_counter()
    with engine_for(DaskOptions(**dask_options(args)), space, derived) as run:
        manifest = run.enumerate(args.output, args.format or "parquet")
    parts, fmt, seconds = len(manifest["partitions"]), args.format or "parquet", time.perf_counter() - start
    report_written(args, f"wrote {manifest['total']} configurations to {args.output} as {parts} {fmt} shard(s) and "
                         f"_manifest.json ({run.shards_written} written now, {parts - run.shards_written} complete "
                         f"before; {run.describe()}, {seconds:.2f} s)",
                   {"output": args.output, "configurations": manifest["total"], "backend": "c", "seconds": round(seconds, 6),
                    "format": fmt, "shards": parts, "shards_written": run.shards_written})
    return 0
