"""Benchmark (issue 28): `auto` by estimated cost on the four large or wide models.

The models are `bench/auto_cost_models.py`'s, at the issue's sizes: 300 binary parameters in tied
pairs, 3 parameters with 10,000 constraints, a 700,000-value list, a 92 MB T1 file. For each, in
fresh processes with an empty module cache, `solverspace count FILE` with the default `auto`
backend and with each of `--backend c`, `cpsat`, `reference`, each stopped after `--limit`
seconds of wall time (the machine is shared: a stopped run says `>` with the CPU seconds it had
used, its compiler's included only when it finished: printed `>200 s`, the wall seconds at the
stop). Printed per model: the CPU seconds
(user + system, the process and its compiler) of each, which backend `auto` chose and the line
it said on stderr, the count (checked against the model's closed form where the count is
cheap to compute in Python, and across the backends that answered), and `choice`: the CPU
seconds `auto` spent beyond the backend it chose (the target: at most 2 s).

    python bench/auto_cost.py [--limit 300] [--only wide_binary,many_constraints] [--dir /tmp/auto_cost]
    python bench/auto_cost.py --estimates       # the cost model's estimates only (nothing run)

The model files are written once into `--dir` (default: a folder under the system's temporary
directory) and kept for later runs.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import auto_cost_models as models   # noqa: E402

BACKENDS = ("auto", "c", "cpsat", "reference")
CLOSED_FORMS = {"wide_binary.py": lambda: models.wide_binary_count(300),
                "many_constraints.py": lambda: models.many_constraints_count(10_000),
                "long_list.py": lambda: models.long_list_count(700_000),
                "big_t1.json": lambda: models.big_t1_count(8_400_000)}


def run(path: Path, backend: str, limit: float) -> dict:
    """One `count` process: CPU seconds, wall seconds, the count and backend it printed, its stderr."""
    cache = tempfile.mkdtemp(prefix="auto_cost_cache_")
    env = dict(os.environ, SOLVERSPACE_CACHE=cache, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if backend != "auto":
        env["SOLVERSPACE_BACKGROUND_BUILD"] = "0"
    command = [sys.executable, "-m", "solverspace", "count", str(path), "--json"] + \
        ([] if backend == "auto" else ["--backend", backend])
    before = os.times()
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=limit)
        stopped = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)   # the compiler too
        out, err = process.communicate()
        stopped = True
    after = os.times()
    shutil.rmtree(cache, ignore_errors=True)
    record = {"cpu": round(after.children_user + after.children_system - before.children_user - before.children_system, 2),
              "wall": round(time.perf_counter() - start, 1), "stopped": stopped,
              "said": [line for line in err.splitlines() if line.startswith("solverspace: auto: ")]}
    if not stopped and process.returncode == 0:
        answer = json.loads(out.strip().splitlines()[-1])
        record.update(count=answer["count"], backend=answer["backend"])
    elif not stopped:
        record["error"] = (err.strip().splitlines() or ["exit status %d" % process.returncode])[-1][:200]
    return record


def estimates(paths: dict) -> None:
    from solverspace import Space
    from solverspace.registry.auto import Costs
    for name, path in paths.items():
        start = time.process_time()
        space = Space.load(str(path))
        loaded = time.process_time() - start
        costs = Costs.of(space.plan)
        print(f"{name:22} loaded in {loaded:.2f} CPU-s, estimated in {time.process_time() - start - loaded:.3f}: "
              f"{costs.why(costs.ranked(True)[0][0], True)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=300.0, help="wall seconds per run (default 300)")
    parser.add_argument("--only", default="", help="comma-separated model names (wide_binary, many_constraints, "
                                                     "long_list, big_t1)")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "solverspace_auto_cost"))
    parser.add_argument("--estimates", action="store_true", help="print the cost model's estimates only")
    args = parser.parse_args(argv)
    paths = models.write(Path(args.dir))
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        paths = {name: path for name, path in paths.items() if name.split(".")[0] in wanted}
    if args.estimates:
        estimates(paths)
        return 0
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"CPU seconds (user + system, with the compiler), limit {args.limit:.0f} s wall per run")
    print(f"{'model':22} {'auto':>9} {'chose':>9} {'choice':>7} " + " ".join(f"{b:>10}" for b in args.backends.split(",")
                                                                        if b != "auto") + "  count")
    for name, path in paths.items():
        results = {backend: run(path, backend, args.limit) for backend in args.backends.split(",")}
        truth = CLOSED_FORMS[name]()
        counts = {r["count"] for r in results.values() if "count" in r}
        agree = "agree" if counts == {truth} else f"DISAGREE {sorted(counts)} (closed form {truth})"
        ours = results.get("auto", {})
        chosen = results.get(ours.get("backend"), {})
        choice = f"{ours['cpu'] - chosen['cpu']:7.2f}" if "count" in ours and "count" in chosen else f"{'-':>7}"

        def cell(r):   # a stopped run: the wall seconds at the stop (its compiler's CPU is not counted)
            return "error" if "error" in r else f">{r['wall']:.0f} s" if r["stopped"] else f"{r['cpu']:.2f}"
        print(f"{name:22} {cell(ours) if ours else '-':>9} {ours.get('backend', '-'):>9} {choice} "
              + " ".join(f"{cell(results[b]):>10}" for b in results if b != "auto") + f"  {truth:.6g} {agree}")
        for line in ours.get("said", []):
            print(f"    {re.sub(r'^solverspace: ', '', line)}")
        for backend, r in results.items():
            if "error" in r:
                print(f"    {backend}: {r['error']}")
            if r["stopped"]:
                print(f"    {backend}: stopped after {r['wall']:.0f} s wall ({r['cpu']:.1f} CPU-s)")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
