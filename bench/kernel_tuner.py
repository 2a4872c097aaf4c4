"""Benchmark of solverspace's Searchspace under Kernel Tuner (issue 26).

In fresh processes (so each peak memory is its own; ru_maxrss, the Python interpreter and NumPy
included), each space twice over one module cache made for the run (`SOLVERSPACE_CACHE`, a new
temporary folder): *cold* (nothing compiled: C generation, the compiler, the exact count) and then
*warm* (a new process over the cache the cold one filled: the module loaded, the count and the work
units behind `space[i]` remembered by `solverspace.integrations.kernel_tuner`). "ready" runs from the start of
the process (imports included) to `Searchspace(space=...)` built, one random sample drawn and
checked valid; wall seconds, CPU seconds of the process (its threads) and of its children (the C
compiler), and the load average beside them:

- ours, H100 single-real opt-in GEMM space (78,298,704 configurations), cold and warm; in the warm
  process then 1,000 steps of a strategy loop on it (simulated
  annealing's loop: a random neighbour, "Hamming" and "strictly-adjacent" in turn, of the current
  configuration, accepted by the Metropolis rule on a model time: bench/bnb.py's roofline with a
  deterministic per-configuration noise of up to 10%), every configuration checked valid; a
  model-derived cache is impossible at this size. ("adjacent" needs each parameter's supported
  values: above 5,000,000 configurations a pinned walk per value, slow where a value is unsupported.)
- ours, K40c (1,207,600): the same, cold and warm.
- ours, K40c: `closest-param-indices` (Kernel Tuner's diff_evo asks for it) of 10 configurations that are
  not valid and have no Hamming neighbour, seconds per query, the first apart (its start-up),
  in a child stopped after `--closest-limit` seconds (`--only-closest`: this line alone).
- Kernel Tuner 1.5's own `Searchspace` on K40c, from the space exported to T1 through Kernel Tuner's
  own T1 path (tune_params and the conditions as restriction strings), in a child killed after
  `--kt-limit` seconds (default 120): Kernel Tuner's python-constraint parser cannot read our
  exported conditions (`not (...)`), so its bruteforce builder (eval of every restriction on every
  point of the box) is what it has; on H100 its memory is estimated instead: the bytes Kernel Tuner's
  Searchspace holds per configuration (tracemalloc, after its build and one neighbour query) on the
  largest peer T1 space (kernel_tuner_paper_T1/hotspot: 349,853 configurations, 11 parameters),
  scaled by 15/11 parameters, times 78,298,704.

    python bench/kernel_tuner.py [--kt-limit SECONDS] [--steps N] [--closest-limit SECONDS] [--only-closest]
"""
from __future__ import annotations

import argparse
import json
import math
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

# this file is bench/kernel_tuner.py: its folder must not shadow the kernel_tuner package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SPACES = {
    "H100 single-real opt-in": {"device": "h100", "precision": "single", "arithmetic": "real", "shared_memory": "opt-in"},
    "K40c double-real-NN": {},
}
SETTINGS_OF = {"H100 single-real opt-in": SPACES["H100 single-real opt-in"],
               "K40c double-real-NN": {"device": "k40c", "precision": "double"}}


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> tuple[float, float]:
    """CPU seconds of this process (all its threads) and of its waited-for children (the compiler)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def child_ours(name: str, steps: int) -> None:
    import os
    start, (cpu0, kids0) = time.perf_counter(), cpu_s()
    from solverspace import Space
    from solverspace.integrations.kernel_tuner import Searchspace
    imported = time.perf_counter() - start
    space = Space.load("gemm", SPACES[name])
    searchspace = Searchspace(space=space, seed=1)
    built = time.perf_counter() - start
    first = searchspace.get_random_sample(1)[0]
    assert searchspace.is_param_config_valid(first)
    ready = time.perf_counter() - start
    cpu, kids = cpu_s()
    out = {"size": searchspace.size, "import_s": round(imported, 2), "built_s": round(built, 2),
           "ready_s": round(ready, 2), "ready_cpu_s": round(cpu - cpu0, 2), "compiler_cpu_s": round(kids - kids0, 2),
           "ready_peak_mib": round(peak_mib(), 1), "load": round(os.getloadavg()[0], 1)}
    if steps:
        import zlib
        from solverspace.gemm.devices import PEAK_RATES
        settings = SETTINGS_OF[name]
        peak = PEAK_RATES[settings["device"]]
        single = settings["precision"] == "single"
        n = 4096
        rate = peak.fp32_flop_per_ns if single else peak.fp64_flop_per_ns
        names = space.parameters

        def model_time(config) -> float:
            """bench/bnb.py's roofline (ns, N = 4096) times 1 + up to 10% of a deterministic
            per-configuration noise (a stand-in for a measurement)."""
            c = dict(zip(names, config))
            roof = max(2 * n ** 3 / rate, n ** 3 * (4 if single else 8) * (c["blk_m"] + c["blk_n"])
                       / (c["blk_m"] * c["blk_n"] * peak.bytes_per_ns))
            return roof * (1 + (zlib.crc32(repr(config).encode()) % 1000) / 10_000)
        rng = random.Random(2)
        start, cpu0 = time.perf_counter(), cpu_s()[0]
        current = searchspace.get_random_sample(1)[0]
        current_time = model_time(current)
        best = current_time
        temperature = 1.0
        methods = ("Hamming", "strictly-adjacent")
        for step in range(steps):
            neighbor = searchspace.get_random_neighbor(current, methods[step % 2])
            if neighbor is None:
                current = searchspace.get_random_sample(1)[0]
                current_time = model_time(current)
                continue
            assert searchspace.is_param_config_valid(neighbor)
            t = model_time(neighbor)
            if t <= current_time or rng.random() < math.exp((current_time - t) / (current_time * temperature)):
                current, current_time = neighbor, t
            best = min(best, current_time)
            temperature *= 0.995
        out.update(steps=steps, steps_s=round(time.perf_counter() - start, 2), steps_cpu_s=round(cpu_s()[0] - cpu0, 2),
                   steps_peak_mib=round(peak_mib(), 1),
                   best_model_ns=round(best), listed=searchspace.listed)
    print(json.dumps(out))


def child_closest(name: str, queries: int) -> None:
    """`closest-param-indices` of `queries` configurations that are not valid and have no Hamming
    neighbour (random points of the value-list box, seeded), through our `Searchspace`: seconds per
    query (wall and CPU), the first apart (it builds what the query needs: the subtree counts and
    the compiled nearest search); a line after each query, so a run stopped by the parent's
    limit still says how many it did."""
    import os
    from solverspace import Space
    from solverspace.integrations.kernel_tuner import Searchspace
    searchspace = Searchspace(space=Space.load("gemm", SPACES[name]), seed=1)
    rng = random.Random(3)
    configs = []
    while len(configs) < queries:
        point = tuple(rng.choice(values) for values in searchspace.params_values)
        if not searchspace.is_param_config_valid(point) and not searchspace.get_neighbors_no_cache(point, "Hamming"):
            configs.append(point)
    out = {"space": name, "size": searchspace.size, "queries": queries, "done": 0, "seconds": [], "cpu_seconds": [],
           "found": [], "load": round(os.getloadavg()[0], 1)}
    print(json.dumps(out), flush=True)
    for config in configs:
        start, cpu0 = time.perf_counter(), cpu_s()[0]
        found = searchspace.get_neighbors_no_cache(config, "closest-param-indices")
        out["seconds"].append(round(time.perf_counter() - start, 4))
        out["cpu_seconds"].append(round(cpu_s()[0] - cpu0, 4))
        out["found"].append(len(found))
        out["done"] += 1
        rest = sorted(out["seconds"][1:])
        out.update(first_s=out["seconds"][0], median_rest_s=rest[len(rest) // 2] if rest else None,
                   max_rest_s=rest[-1] if rest else None, load=round(os.getloadavg()[0], 1))
        print(json.dumps(out), flush=True)


def child_kt(name: str) -> None:
    from solverspace import Space
    from solverspace.io.t1 import export_t1
    from kernel_tuner.searchspace import Searchspace
    space = Space.load("gemm", SPACES[name])
    conditions = export_t1(space.model)["ConfigurationSpace"]["Conditions"]
    tune_params = {n: list(v) for n, v in space.value_lists().items()}
    restrictions = [c["Expression"] for c in conditions]
    start = time.perf_counter()
    searchspace = Searchspace(tune_params, restrictions, 10 ** 9, framework="bruteforce")
    print(json.dumps({"size": searchspace.size, "build_s": time.perf_counter() - start, "build_peak_mib": peak_mib()}))


def child_kt_memory() -> None:
    import tracemalloc
    from kernel_tuner.searchspace import Searchspace
    path = Path(__file__).resolve().parents[1] / "tests" / "data" / "peer_spaces" / "kernel_tuner_paper_T1" / "hotspot.json"
    space = json.loads(path.read_text())["ConfigurationSpace"]
    # the declared values by our T1 reader (Kernel Tuner evals the "Values" strings; we never do)
    from solverspace.io.t1.read import load_t1
    tune_params = {p.name: [item.value for item in p.domain.items] for p in load_t1(path).parameters}
    restrictions = [c["Expression"] for c in space.get("Conditions", [])]
    tracemalloc.start()
    searchspace = Searchspace(tune_params, restrictions, 1024)
    searchspace.get_neighbors(searchspace.list[0], "adjacent")
    held, peak = tracemalloc.get_traced_memory()
    print(json.dumps({"size": searchspace.size, "parameters": len(tune_params),
                      "held_bytes_per_configuration": held / searchspace.size,
                      "peak_bytes_per_configuration": peak / searchspace.size}))


def run(args: list, limit: float | None = None, env: dict | None = None) -> dict:
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, timeout=limit,
                              env=env)
    except subprocess.TimeoutExpired as stopped:    # the child's last line so far, if it writes one per step
        lines = (stopped.stdout.decode() if isinstance(stopped.stdout, bytes) else stopped.stdout or "").splitlines()
        return {"timeout": limit, **(json.loads(lines[-1]) if lines else {})}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = round(time.perf_counter() - start, 2)
    return result


def print_closest(name: str, limit: float) -> None:
    result = run(["--child-closest", name, "10"], limit)
    print(f"ours, {name}, closest-param-indices of 10 invalid configurations with no Hamming neighbour "
          f"(limit {limit:g} s): {result}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kt-limit", type=float, default=120.0)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--closest-limit", type=float, default=300.0,
                        help="seconds for the closest-param-indices child (10 invalid K40c configurations)")
    parser.add_argument("--only-closest", action="store_true", help="run the closest-param-indices child alone")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--child-closest", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--child-kt", help=argparse.SUPPRESS)
    parser.add_argument("--child-kt-memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child_ours(args.child[0], int(args.child[1]))
    if args.child_closest:
        return child_closest(args.child_closest[0], int(args.child_closest[1]))
    if args.child_kt:
        return child_kt(args.child_kt)
    closest = "K40c double-real-NN"
    if args.only_closest:
        return print_closest(closest, args.closest_limit)
    if args.child_kt_memory:
        return child_kt_memory()
    import os
    import tempfile
    with tempfile.TemporaryDirectory(prefix="solverspace-bench-kt-", ignore_cleanup_errors=True) as folder:
        env = dict(os.environ, SOLVERSPACE_CACHE=folder)
        for name in SPACES:
            cold = run(["--child", name, "0"], env=env)
            print(f"ours, {name}, cold (empty module cache): {cold}")
            warm = run(["--child", name, str(args.steps)], env=env)
            print(f"ours, {name}, warm: {warm}")
            if name.startswith("H100"):
                h100 = warm
    kt = run(["--child-kt", "K40c double-real-NN"], args.kt_limit)
    print(f"Kernel Tuner 1.5, K40c double-real-NN (bruteforce builder, limit {args.kt_limit:g} s): {kt}")
    print_closest(closest, args.closest_limit)
    memory = run(["--child-kt-memory"])
    print(f"Kernel Tuner 1.5, hotspot (peer T1, {memory.get('size', '?')} configurations): {memory}")
    if "size" in h100 and "held_bytes_per_configuration" in memory:
        scale = 15 / memory["parameters"]
        held = h100["size"] * memory["held_bytes_per_configuration"] * scale / 2 ** 30
        peak = h100["size"] * memory["peak_bytes_per_configuration"] * scale / 2 ** 30
        print(f"Kernel Tuner 1.5, H100 ({h100['size']:,} configurations): not built; estimated {held:.0f} GiB held "
              f"after its build, {peak:.0f} GiB at its build's peak (hotspot's bytes per configuration x 15/"
              f"{memory['parameters']} parameters)")


if __name__ == "__main__":
    main()
