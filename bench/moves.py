"""Benchmark of the search moves of issue 25, on the K40c GEMM space and the H100 single-real opt-in
space (78,298,704 configurations), each in a fresh process (so each peak memory is its own;
ru_maxrss, the interpreter and NumPy included), the compiled module built (or loaded) first:

- `setup`: the first subtree counts (every work unit counted) and the first repair's compiled pass
  (the box tree: every unit's box of parameter indices, and those of each value of the next two
  loops; `translators/c/nearest.py`), paid once per space and process;
- Hamming and adjacent neighbours of 100 random valid configurations (`space.neighbors`), per query;
- repair of 100 random points of the index box (`space.repair(indices=...)`), per query;
- a 100-point LHS design (`space.design(100, "lhs")`), warm (a first design beforehand);
- 1,000 conditional samples given the first loop's parameter (`space.sample(1000, given=...)`),
  first (plans the derived space, counts it) and warm (another seed);
- peak memory (and the peak after each step, `peak_mib_after`), the 1-minute load average, and
  CPU seconds beside the wall clock (`cpu_*`; steadier on a shared machine).

Each query kind stops after `--budget` seconds (default 120) and says how many of its 100 it did.
Beside it, Kernel Tuner 1.5's own `Searchspace` where it can be built: `bench/kernel_tuner.py`'s
children (its bruteforce builder on our T1 export of K40c, killed after `--kt-limit` seconds; on
H100 its memory estimated from its bytes per configuration on the largest peer T1 space), if
`kernel_tuner` is importable, else skipped with a line saying so. Targets (H100, warm): neighbour
query < 10 ms, repair < 50 ms, LHS < 1 s, 1,000 conditional samples < 0.5 s, peak < 500 MB.

    python bench/moves.py [--budget SECONDS] [--kt-limit SECONDS] [--only k40c|h100]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SPACES = {
    "K40c double-real-NN": {},
    "H100 single-real opt-in": {"device": "h100", "precision": "single", "arithmetic": "real",
                                "shared_memory": "opt-in"},
}
KT_BENCH = Path(__file__).resolve().parent / "kernel_tuner.py"


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn, items, budget: float) -> dict:
    """Per-item seconds of fn(item) until the items or the budget run out: wall clock, and the
    process's CPU time (`cpu_*`: steadier on a loaded machine; C threads included)."""
    times, cpu = [], []
    start = time.perf_counter()
    for item in items:
        t, c = time.perf_counter(), time.process_time()
        fn(item)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        if time.perf_counter() - start > budget:
            break
    times.sort()
    cpu.sort()
    return {"done": len(times), "of": len(items), "mean_ms": 1000 * sum(times) / max(len(times), 1),
            "median_ms": 1000 * times[len(times) // 2] if times else None,
            "max_ms": 1000 * times[-1] if times else None,
            "cpu_median_ms": 1000 * cpu[len(cpu) // 2] if cpu else None, "cpu_max_ms": 1000 * cpu[-1] if cpu else None}


def stage(out: dict, name: str) -> None:
    """The peak memory so far, after a step (`peak_mib_after`: what each step added)."""
    out.setdefault("peak_mib_after", {})[name] = round(peak_mib())


def child(name: str, budget: float) -> None:
    import numpy as np
    from solverspace import Space
    from solverspace.translators.c.backend import CBackend
    space = Space.load("gemm", SPACES[name])
    CBackend().enumerator(space.plan)                       # build or load: not timed
    out = {"space": name, "load_1min": os.getloadavg()[0]}
    start = time.perf_counter()
    size = space.count("c")
    out["count_s"] = time.perf_counter() - start
    out["size"] = size
    stage(out, "count")
    rng = np.random.default_rng(1)
    configs = [tuple(r) for r in space.sample(100, seed=1).tolist()]
    start = time.perf_counter()
    space.design(1, "lhs", seed=0)                          # the first subtree counts
    out["first_design_point_s"] = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    out["lhs_100_s"] = (space.design(100, "lhs", seed=2), time.perf_counter() - start)[1]
    out["lhs_100_cpu_s"] = time.process_time() - cpu
    stage(out, "lhs")
    sizes = [len(v) for v in space.value_lists().values()]
    targets = [tuple(int(rng.integers(n)) for n in sizes) for _ in range(100)]
    start, cpu = time.perf_counter(), time.process_time()
    space.repair(indices=targets[0])                        # builds the nearest search and its box tree
    out["first_repair_s"] = time.perf_counter() - start
    out["first_repair_cpu_s"] = time.process_time() - cpu
    out["repair"] = timed(lambda t: space.repair(indices=t), targets[1:], budget)
    stage(out, "repair")
    for method in ("Hamming", "adjacent"):
        space.neighbors(configs[0], method)                 # warm
        out[f"neighbors_{method}"] = timed(lambda c: space.neighbors(c, method), configs, budget)
        stage(out, f"neighbors_{method}")
    first = space.plan.order[0]
    value = configs[0][space.parameters.index(first)]
    start = time.perf_counter()
    space.sample(1000, seed=3, given={first: value}, replace=True)
    out["given_first_s"] = time.perf_counter() - start
    start = time.perf_counter()
    space.sample(1000, seed=4, given={first: value}, replace=True)
    out["given_warm_s"] = time.perf_counter() - start
    out["given"] = {first: value}
    stage(out, "given")
    out["peak_mib"] = peak_mib()
    print(json.dumps(out))


def run(argv: list, limit: float | None = None, script: Path = Path(__file__)) -> dict:
    try:
        done = subprocess.run([sys.executable, str(script), *argv], capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"timeout_s": limit}
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--kt-limit", type=float, default=120.0)
    parser.add_argument("--only", choices=["k40c", "h100"])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.budget)
    try:
        import kernel_tuner   # noqa: F401 (only whether it is there)
        have_kt = True
    except ImportError:
        have_kt = False
    for name in SPACES:
        if args.only and not name.lower().startswith(args.only):
            continue
        result = run(["--child", name, "--budget", str(args.budget)])
        print(f"ours, {name}: {json.dumps(result)}")
        if not have_kt:
            print(f"Kernel Tuner 1.5, {name}: skipped (kernel_tuner is not importable)")
        elif name.startswith("K40c"):
            kt = run(["--child-kt", name], args.kt_limit, KT_BENCH)
            print(f"Kernel Tuner 1.5, {name} (its Searchspace from our T1 export, bruteforce builder, "
                  f"limit {args.kt_limit:g} s): {json.dumps(kt)}")
        else:
            memory = run(["--child-kt-memory"], None, KT_BENCH)
            if "held_bytes_per_configuration" in memory and "size" in result:
                scale = 15 / memory["parameters"]
                held = result["size"] * memory["held_bytes_per_configuration"] * scale / 2 ** 30
                print(f"Kernel Tuner 1.5, {name}: not built; estimated {held:.0f} GiB held after its build "
                      f"(bench/kernel_tuner.py's bytes per configuration on peer hotspot x 15/"
                      f"{memory['parameters']} parameters)")
            else:
                print(f"Kernel Tuner 1.5, {name}: no estimate ({json.dumps(memory)})")


if __name__ == "__main__":
    main()
