"""Benchmark: search strategies on replayed brute-force caches (best found / optimum).

The 12 brute-force Kernel Tuner caches of the benchmark hub (`cachefiles/{convolution_milo,
dedispersion_milo}/{A100,A4000,A6000,MI250X,W6600,W7800}.json.gz`, with their T1 files from
`tests/data/peer_spaces/benchmark_hub_T1`) are replayed: a measurement costs nothing and the
optimum is known. A failed configuration (compile or run failure in the cache) costs its
measurement. Per cache and way, over `--seeds` seeds: the mean (and worst seed) of best time found /
optimum after 25, 50, 100 and 200 measurements, and the CPU seconds each proposal took.

Ways:

- `model`: `solverspace.strategies.ModelBased` (Bayesian optimisation over the valid set);
- `model-dyadic`: the same without the dyadic feature columns (`dyadic=False`: the features before them);
- `model+prior`: the same with another device's cache as a rank prior (`--prior-device`, A100 by
  default; not run on that device itself);
- `random`: `solverspace.strategies.Uniform` (exact uniform without replacement);
- `tpe-valid`: Optuna's TPE through `SolverspaceSampler` (`bench/optuna.py`'s `run`, its replay
  code `cache_problem` too);
- `kt-<strategy>`, `optuna-tpe-penalty`, `optuna-tpe-penalty/trial`: the peers, as their users run
  them (Kernel Tuner's own `tune_kernel` in simulation mode on the cache; Optuna's TPE over the
  Cartesian domain with a penalty): `bench/search_peers.py`.

`--landscape` instead prints, per cache, what makes a target hard: how many configurations lie within
1.05x, 1.1x and 1.2x of the optimum, the best of the optimum's one-parameter neighbours, the median of
the part of the space the optimum's rarest-looking value sits in, and the prior device's ranking
replayed (the best of its top 10, 25 and 50 here, and Spearman's rank correlation of the two devices).

`--overhead` instead times proposals on the K40c GEMM space (1,207,600 configurations) and the
H100 single-real opt-in space (78,298,704), with a synthetic objective: CPU seconds per proposal
after start-up, and the peak memory of the process.

    python bench/search.py --hub PATH [--seeds 10] [--ways model,model+prior,random] [--kernels convolution,dedispersion]
    python bench/search.py --overhead
    python bench/search.py --hub PATH --landscape
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from solverspace import Space  # noqa: E402
from solverspace.strategies import ModelBased, Uniform  # noqa: E402
from solverspace.strategies.base import config_tuples  # noqa: E402
from solverspace.strategies.prior import RankPrior  # noqa: E402

BUDGETS = (25, 50, 100, 200)
DEVICES = ("A100", "A4000", "A6000", "MI250X", "W6600", "W7800")
PEER = ROOT / "tests" / "data" / "peer_spaces" / "benchmark_hub_T1"


def replay_module(name: str = "optuna"):
    """bench/optuna.py (its replay code and its TPE runs), or another bench script, loaded by path:
    its name is Optuna's."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_strategy(problem, make, budget: int) -> dict:
    """Ask/tell `budget` times; the best-so-far trajectory and the CPU seconds per proposal."""
    strategy = make()
    best, trajectory, cpu = math.inf, [], []
    for _ in range(min(budget, len(problem.space))):
        start = time.process_time()
        config = strategy.ask()
        cpu.append(time.process_time() - start)
        found = problem.time_of(config)
        strategy.tell(config, found)
        if found is not None:
            best = min(best, found)
        trajectory.append(best)
    return {"trajectory": trajectory, "cpu": cpu}


def fractions(trajectory: list, optimum: float) -> dict:
    """best found / optimum after each budget the run reached (a run on a smaller space stops at its size)."""
    return {b: trajectory[min(b, len(trajectory)) - 1] / optimum for b in BUDGETS}


def seeds(args) -> range:
    return range(args.first_seed, args.first_seed + args.seeds)


def budgets(args) -> tuple:
    return tuple(b for b in BUDGETS if b <= args.budget)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hub", type=Path, help="a checkout of AutoTuningAssociation/benchmark_hub")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed+seeds-1")
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--kernels", default="convolution,dedispersion")
    parser.add_argument("--devices", default=",".join(DEVICES))
    parser.add_argument("--prior-device", default="A100")
    parser.add_argument("--ways", default="model,model+prior,random")
    parser.add_argument("--overhead", action="store_true", help="time proposals on K40c GEMM and H100")
    parser.add_argument("--landscape", action="store_true", help="print what makes each cache hard to search")
    args = parser.parse_args()
    if args.overhead:
        return overhead(args)
    if args.hub is None:
        parser.error("give --hub (a checkout of AutoTuningAssociation/benchmark_hub)")
    replay = replay_module()
    if args.landscape:
        return landscape(args, replay)
    ways = args.ways.split(",")
    print(f"best found / optimum, mean over seeds {args.first_seed}-{args.first_seed + args.seeds - 1} (worst "
          "seed), after " + ", ".join(map(str, budgets(args))) + " measurements; CPU ms per proposal (median / mean)")
    summary: dict = {}
    for kernel in args.kernels.split(","):
        t1 = PEER / f"{kernel}_milo.json"
        prior_cache = args.hub / "cachefiles" / f"{kernel}_milo" / f"{args.prior_device}.json.gz"
        for device in args.devices.split(","):
            cache = args.hub / "cachefiles" / f"{kernel}_milo" / f"{device}.json.gz"
            problem = replay.cache_problem(f"{kernel}_milo {device}", t1, cache)
            print(f"\n{problem.name}: {problem.note}", flush=True)
            for way in ways:
                results = run_way(way, problem, args, replay, prior_cache, device)
                if results is None:
                    continue
                cells = []
                for b in budgets(args):
                    values = [r["fractions"][b] for r in results]
                    summary.setdefault((way, b), []).append(float(np.mean(values)))
                    summary.setdefault((way, kernel, b), []).append(float(np.mean(values)))
                    cells.append(f"{np.mean(values):6.3f} ({max(values):5.3f})")
                cpu = [c for r in results for c in r.get("cpu", [])]
                ms = f"{1000 * np.median(cpu):6.2f} / {1000 * np.mean(cpu):6.2f}" if cpu else "      -"
                print(f"  {way:14} " + " ".join(f"{c:>15}" for c in cells) + f"  {ms} ms", flush=True)
    print("\ngeometric mean over caches of the mean best/optimum (range over caches per kernel):")
    for way in ways:
        line = []
        for b in budgets(args):
            values = summary.get((way, b))
            if values:
                line.append(f"@{b}: {math.exp(np.mean(np.log(values))):.3f}")
        ranges = []
        for kernel in args.kernels.split(","):
            values = summary.get((way, kernel, 100))
            if values:
                ranges.append(f"{kernel} @100 {min(values):.3f}-{max(values):.3f}")
        print(f"  {way:14} " + "  ".join(line) + "   " + "; ".join(ranges))
    return 0


def run_way(way: str, problem, args, replay, prior_cache: Path, device: str):
    space = problem.space
    if way == "model":
        return [_done(run_strategy(problem, lambda s=s: ModelBased(space, s), args.budget), problem)
                for s in seeds(args)]
    if way == "model-dyadic":
        return [_done(run_strategy(problem, lambda s=s: ModelBased(space, s, dyadic=False), args.budget), problem)
                for s in seeds(args)]
    if way == "model+prior":
        if device == args.prior_device:
            return None
        prior = RankPrior.from_path(space, prior_cache)
        return [_done(run_strategy(problem, lambda s=s: ModelBased(space, s, prior=prior), args.budget), problem)
                for s in seeds(args)]
    if way == "random":
        return [_done(run_strategy(problem, lambda s=s: Uniform(space, s), args.budget), problem)
                for s in seeds(args)]
    if way == "tpe-valid":
        out = []
        for s in seeds(args):
            start = time.process_time()
            r = replay.run(problem, "solverspace", s, args.budget)
            out.append({"fractions": {b: (1 / f if f else math.inf) for b, f in r["fraction"].items()},
                        "cpu": [(time.process_time() - start) / args.budget]})
        return out
    if way.startswith(("kt-", "optuna-")):      # the peers: bench/search_peers.py
        peers = replay_module("search_peers")
        return peers.run_way(way, problem, args, prior_cache.parent / f"{device}.json.gz")
    raise SystemExit(f"unknown way {way!r}")


def _done(run: dict, problem) -> dict:
    return {"fractions": fractions(run["trajectory"], problem.optimum), "cpu": run["cpu"][1:]}


def landscape(args, replay) -> int:
    """Per cache: the near-optimal configurations, the optimum's neighbourhood, and the prior
    device's ranking replayed (see the module's documentation)."""
    from scipy.stats import spearmanr
    print("per cache: configurations within 1.05/1.1/1.2x of the optimum (of N valid); the best one-parameter "
          f"neighbour of the optimum; per parameter the median of the configurations sharing the optimum's value "
          f"(the highest one shown); {args.prior_device}'s ranking replayed: the best of its top 10/25/50 here, "
          "and Spearman's rho of the two devices' times")
    for kernel in args.kernels.split(","):
        t1 = PEER / f"{kernel}_milo.json"
        caches = args.hub / "cachefiles" / f"{kernel}_milo"
        prior = replay.cache_problem("prior", t1, caches / f"{args.prior_device}.json.gz")
        rows = config_tuples(prior.space.to_array("reference"))
        names = prior.space.parameters
        for device in args.devices.split(","):
            problem = replay.cache_problem(f"{kernel}_milo {device}", t1, caches / f"{device}.json.gz")
            here = np.array([problem.time_of(r) or np.nan for r in rows]) / problem.optimum
            there = np.array([prior.time_of(r) or np.nan for r in rows])
            best = rows[int(np.nanargmin(here))]
            values = np.array(rows, dtype=object)
            near = [here[i] for i, r in enumerate(rows) if sum(a != b for a, b in zip(r, best)) == 1]
            medians = {n: np.nanmedian(here[values[:, j] == best[j]]) for j, n in enumerate(names)}
            worst = max(medians, key=medians.get)
            line = (f"{problem.name}: {' / '.join(str(int((here <= f).sum())) for f in (1.05, 1.1, 1.2))} of "
                    f"{len(rows):,}; best neighbour {np.nanmin(near):.3f}; median where {worst}={best[names.index(worst)]} "
                    f"{medians[worst]:.1f}x")
            if device != args.prior_device:
                order = np.argsort(np.nan_to_num(there, nan=np.inf), kind="stable")
                ok = ~np.isnan(here) & ~np.isnan(there)
                replayed = " / ".join(f"{np.nanmin(here[order[:k]]):.3f}" for k in (10, 25, 50))
                line += f"; {args.prior_device} replayed {replayed}, rho {spearmanr(here[ok], there[ok]).correlation:.2f}"
            print("  " + line, flush=True)
    return 0


SPACES = {
    "K40c GEMM": {},
    "H100 single-real opt-in": {"device": "h100", "precision": "single", "arithmetic": "real",
                                "shared_memory": "opt-in"},
}


def overhead(args) -> int:
    """CPU seconds per proposal of the model-based strategy (pooled candidates: these spaces are
    past the listing limit) after start-up, with a synthetic objective (a smooth function of the
    features plus seeded noise, 5% failures), and the process's peak memory."""
    print(f"model-based strategy, {args.budget} proposals, synthetic objective; CPU ms per proposal "
          "(time.process_time) after the first model proposal")
    for name, settings in SPACES.items():
        space = Space.load("gemm", settings)
        start = time.process_time()
        strategy = ModelBased(space, seed=0)
        ready = time.process_time() - start
        rng = np.random.default_rng(0)
        cpu, sources = [], []
        for _ in range(args.budget):
            start = time.process_time()
            config = strategy.ask()
            cpu.append(time.process_time() - start)
            sources.append(strategy.last_source)
            values = np.array([float(v) if isinstance(v, (int, float)) else 1.0 for v in config])
            t = None if rng.random() < 0.05 else float(np.sum(np.log1p(np.abs(values - values.mean())))
                                                       * (1 + 0.1 * rng.random()))
            strategy.tell(config, t)
        model = [c for c, s in zip(cpu, sources) if s == "model"][1:]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  {name} ({len(space):,} configurations): start-up {ready:.2f} CPU-s; per model proposal "
              f"median {1000 * np.median(model):.1f} ms, mean {1000 * np.mean(model):.1f} ms, max "
              f"{1000 * np.max(model):.1f} ms ({len(model)} proposals); peak memory {peak:.0f} MiB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
