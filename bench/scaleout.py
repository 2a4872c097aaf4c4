"""Benchmark of `--engine dask` against one process (issue 16), on the H100 single-real space
with 227 KiB opt-in shared memory (78 million configurations).

Each figure is the wall time of a fresh `solverspace` command (the compiled module cached
beforehand), best of `--repeat` rounds that each run every command once, so the Dask figures include starting the local cluster:
- count: one process vs `--engine dask` with 1, 2 (and `--workers` more) local workers;
- enumerate to Parquet: one file from one process vs one shard per partition on Dask;
then the Dask path's overhead at 1 worker against one process (target: under 20%) and each
worker count's speed-up over 1 worker in the same run. One process uses every core with OpenMP;
a Dask worker uses cores / workers OpenMP threads per task.

    python bench/scaleout.py [--repeat 3] [--workers 1,2] [--device tiny]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
H100 = ["--set", "device=h100", "--set", "precision=single", "--set", "arithmetic=real",
        "--set", "shared_memory=opt-in"]


def run(args: list[str]) -> float:
    """Seconds of one fresh `solverspace` command (which must succeed)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "solverspace", *args], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if result.returncode:
        sys.exit(f"failed: solverspace {' '.join(args)}\n{result.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (1 is always measured)")
    parser.add_argument("--device", default=None, help="another device setting instead of the H100 space (quick runs)")
    args = parser.parse_args()
    space = ["gemm", *(["--set", f"device={args.device}"] if args.device else H100)]
    workers = sorted({1, *(int(w) for w in args.workers.split(","))})
    print(f"space: {' '.join(space)}; {os.cpu_count()} cores; best of {args.repeat}; wall time of a fresh command")
    run(["count", *space, "--backend", "c"])   # compile once, into the cache every run below uses
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)

        def clear():
            shutil.rmtree(out / "shards", ignore_errors=True)

        commands = {("count", "one process"): ["count", *space, "--backend", "c", "-q"],
                    ("enumerate", "one process"): ["enumerate", *space, "--backend", "c", "-q",
                                                   "-o", str(out / "all.parquet")]}
        for w in workers:
            dask = ["--engine", "dask", "--workers", str(w), "-q"]
            commands["count", w] = ["count", *space, *dask]
            commands["enumerate", w] = ["enumerate", *space, *dask, "-o", str(out / "shards")]
        times = {key: [] for key in commands}
        for _ in range(args.repeat):   # rounds of every command: load from other jobs hits all alike
            for key, command in commands.items():
                clear()
                times[key].append(run(command))
        table = {"count": {}, "enumerate": {}}
        for (what, who), seconds in times.items():
            table[what][who] = min(seconds)
    for what, row in table.items():
        single = row["one process"]
        line = f"{what:>9}: one process {single:.2f} s"
        for w in workers:
            line += f"; dask {w} worker{'s' if w > 1 else ''} {row[w]:.2f} s"
            line += f" (x{row[1] / row[w]:.2f} of 1 worker)" if w > 1 else ""
        print(line)
        print(f"{'':>9}  overhead of the Dask path at 1 worker: {100 * (row[1] / single - 1):+.0f}% (target < 20%)")
    print(json.dumps({"cores": os.cpu_count(), "space": space, "seconds": {k: {str(w): round(t, 3) for w, t in v.items()}
                                                                          for k, v in table.items()}}))


if __name__ == "__main__":
    main()
