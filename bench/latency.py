"""Benchmark (issue 13): what one `solverspace count` process costs, next to Kernel Tuner.

For each T1 file under ../shared/peer-spaces and for the built-in GEMM space, in fresh processes,
interleaved, the minimum over `--repeat` rounds of the CPU seconds (user + system) of:

- ours, warm: `python -m solverspace count FILE` (the default `auto` backend) with the caches as
  the default itself left them: the cache is filled by one earlier default `count` (and, where
  that was answered by the reference, by the build it left behind, waited for), never by
  `--backend c`; `warm by` says which backend answered the warm call;
- ours, cold: the same with an empty cache: `auto` answers small spaces with the reference, and
  generates and compiles the C module for the others (`cold by` says which answered: `c-O0` is
  the quick -O0 build `auto` takes for a small space). A cold call answered by the reference or
  by a quick build leaves the (-O2) module to be built in a detached background process
  (solverspace/background.py); that process's CPU seconds (its `background.log`) are the `bg`
  column: they are spent after the answer, not in it, and are not part of `cold`;
- CP-SAT: the same `count` with `--backend cpsat` (the issue's Hotspot target);
- Kernel Tuner: a process that builds the same space with `kernel_tuner.searchspace.Searchspace`
  (the tune_params and restriction strings of the T1 file). Kernel Tuner is installed into its
  own virtual environment (`--kt-venv`, created with pip when missing); without it, or with
  `--no-kt`, those columns say why they are empty. The GEMM space is not a T1 file, and took
  Kernel Tuner about 1,300 CPU-s when issue 13 was filed: its Kernel Tuner column stays empty.

Then a sweep of the GEMM space over 20 values of `max_threads_per_block`: `solverspace sweep` cold
(an empty cache: the points' programs generated, the one-pass module compiled) and warm (the
minimum of `--repeat` later runs), against one warm count; `methods` says how the points were
counted (`one-pass`: all in one walk, `translators/c/lanes.py`; `per-point`: one count each).
`--only-sweep` measures only that line (and the warm GEMM count it is compared with).

Then (issue 28) a warm `solverspace best gemm --maximize "fmas_per_block - loads_per_block" --top
10` (the README's objective; target <= 0.3 CPU-s: the compiled search cached with its module), and
the two spaces of independent groups, counted by C (cold and warm) and CP-SAT, each count checked
against its closed form: four pairs `x_i, y_i = range(1, 65)` with `y_i % x_i == 0`
(6,146,560,000; C took 89 s before the groups were multiplied) and ten stages `t_i = range(32,
1025, 32)`, `w_i = range(t_i, 65537, t_i)` (C never finished). `--only-waits` measures only these.

    python bench/latency.py [--repeat 5] [--kt-venv /tmp/ktvenv] [--no-kt] [--no-cpsat] [--only-sweep]
                            [--only-waits]

Counts are checked: ours against each other, and against Kernel Tuner's size (a difference is
printed, not hidden).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT.parent / "shared" / "peer-spaces"
SWEEP_VALUES = [str(v) for v in range(384, 1024 + 1, 32)][:20]   # 20 values of max_threads_per_block

KT_CHILD = r"""
import json, sys
from kernel_tuner.searchspace import Searchspace
problem = json.load(open(sys.argv[1]))
space = Searchspace(problem["tune_params"], problem["restrictions"], max_threads=2**31, block_size_names=[])
print(space.size)
"""


def cpu_run(command: list[str], env: dict | None = None) -> tuple[float, str, int]:
    """(CPU seconds of the child process, its stdout, its exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, proc.stdout if proc.returncode == 0 else proc.stdout + proc.stderr, proc.returncode


def _env(**extra) -> dict:
    """The children's environment: bytecode caching on (an installed package has its .pyc files;
    with PYTHONDONTWRITEBYTECODE set, every process would compile our sources again, ~0.1 s)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return dict(env, PYTHONPATH=str(ROOT), SOLVERSPACE_BACKGROUND_BUILD="1", **extra)   # the default, measured


def settle(cache: str, timeout: float = 600) -> float | None:
    """Wait until no background build is waiting or running in `cache`; the CPU seconds of the
    last builder there (its log), or None when none ran."""
    import time
    sys.path.insert(0, str(ROOT))
    from solverspace import background
    folder, deadline = Path(cache), time.monotonic() + timeout
    while time.monotonic() < deadline:
        if folder.is_dir() and not background.pending(folder):
            fd = background.try_lock(folder)
            if fd is not None:
                background.release_lock(fd)
                break
        elif not folder.is_dir():
            return None
        time.sleep(0.05)
    log = folder / background.LOG
    if not log.exists():
        return None
    return json.loads(log.read_text().splitlines()[-1])["builder_cpu"]


def ours(target: str, backend: str, cache: str) -> tuple[float, int | None, str]:
    """(CPU seconds, the count or None, the backend that answered)."""
    env = _env(SOLVERSPACE_CACHE=cache)
    cpu, out, code = cpu_run([sys.executable, "-m", "solverspace", "count", target, "--backend", backend,
                              "--json", "--quiet"], env)
    if code:
        return cpu, None, ""
    answer = json.loads(out.strip().splitlines()[-1])
    return cpu, int(answer["count"]), answer["backend"] + ("-O0" if answer.get("quick_build") else "")


def kt_problem(path: Path, folder: Path) -> Path:
    """The T1 file as Kernel Tuner input: tune_params (value lists) and restriction strings."""
    sys.path.insert(0, str(ROOT))
    from solverspace.lang.evaluate import compile_domain
    from solverspace.t1 import load_t1
    model = load_t1(path)
    document = json.loads(path.read_text())["ConfigurationSpace"]
    tune_params = {p.name: list(compile_domain(p.domain, p.name)({})) for p in model.parameters}
    restrictions = [c["Expression"] for c in document["Conditions"]]
    target = folder / (path.stem + ".kt.json")
    target.write_text(json.dumps({"tune_params": tune_params, "restrictions": restrictions}))
    return target


def kernel_tuner_python(venv: Path, install: bool) -> tuple[Path | None, str]:
    python = venv / "bin" / "python"
    if python.exists() and subprocess.run([str(python), "-c", "import kernel_tuner"], capture_output=True).returncode == 0:
        return python, ""
    if not install:
        return None, f"no Kernel Tuner in {venv}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "kernel_tuner"], capture_output=True, text=True)
    if proc.returncode:
        return None, f"could not install Kernel Tuner ({proc.stderr.strip().splitlines()[-1] if proc.stderr else proc.returncode})"
    return python, ""


BEST = ["best", "gemm", "--maximize", "fmas_per_block - loads_per_block", "--top", "10", "--quiet"]
PAIRS = "".join(f"x{i} = range(1, 65)\ny{i} = range(1, 65)\nrequire(y{i} % x{i} == 0)\n" for i in range(1, 5))
STAGES = "".join(f"t{i} = range(32, 1025, 32)\nw{i} = range(t{i}, 65537, t{i})\n" for i in range(1, 11))
GROUPS = [("four pairs y_i % x_i == 0", PAIRS, sum(64 // x for x in range(1, 65)) ** 4),
          ("ten stages w_i = range(t_i, 65537, t_i)", STAGES, sum(65536 // t for t in range(32, 1025, 32)) ** 10)]


def waits(work: Path, repeat: int, cpsat: bool) -> None:
    """Issue 28's lines: a warm CLI `best` on K40c, and the independent groups' counts."""
    env = _env(SOLVERSPACE_CACHE=str(work / "best"))
    command = [sys.executable, "-m", "solverspace", *BEST]
    cold, out, code = cpu_run(command, env)
    warm = min(cpu_run(command, env)[0] for _ in range(repeat))
    print(f"warm CLI best on K40c gemm (README objective, top 10): {warm:.2f} CPU-s (cold {cold:.2f}; target <= 0.3)"
          + ("" if code == 0 else f"; exited {code}"))
    for name, text, truth in GROUPS:
        path = work / (name.split()[1] + ".py")
        path.write_text(text)
        cache = str(work / ("groups-" + path.stem))
        row = [f"{name:40} {truth:>42}"]
        for label, backend, folder in (("C cold", "c", cache), ("C warm", "c", cache), ("CP-SAT", "cpsat", cache)):
            if backend == "cpsat" and not cpsat:
                continue
            cpu, count, _ = ours(str(path), backend, folder)
            row.append(f"{label} {cpu:5.2f}" + ("" if count == truth else f" (counted {count}: WRONG)"))
        print("  ".join(row) + " CPU-s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--kt-venv", type=Path, default=Path(tempfile.gettempdir()) / "ktvenv")
    parser.add_argument("--no-kt", action="store_true")
    parser.add_argument("--no-cpsat", action="store_true", help="no CP-SAT column")
    parser.add_argument("--only-sweep", action="store_true",
                        help="only the sweep line and the warm GEMM count it is compared with")
    parser.add_argument("--only-waits", action="store_true",
                        help="only the warm CLI best and the independent groups' counts (issue 28)")
    args = parser.parse_args()
    if args.only_waits:
        print(f"machine: {os.cpu_count()} cores; CPU seconds (user + system) of whole processes")
        waits(Path(tempfile.mkdtemp(prefix="latency-")), args.repeat, not args.no_cpsat)
        return
    if args.only_sweep:
        args.no_kt = args.no_cpsat = True
    kt_python, kt_missing = (None, "--no-kt") if args.no_kt else kernel_tuner_python(args.kt_venv, True)
    print(f"machine: {os.cpu_count()} cores; CPU seconds (user + system) of whole processes, minimum of "
          f"{args.repeat} interleaved rounds" + (f"; Kernel Tuner: {kt_missing}" if kt_missing else ""))
    work = Path(tempfile.mkdtemp(prefix="latency-"))
    warm_cache = str(work / "warm")
    targets = [] if args.only_sweep else [(str(p.relative_to(PEER)), str(p)) for p in sorted(PEER.glob("*/*.json"))]
    targets.append(("gemm (BEAST, K40c)", "gemm"))
    plans = []
    for name, target in targets:
        backend = "auto"
        _, count, _ = ours(target, "auto", warm_cache)     # the default fills the warm cache: as a user's first call
        settle(warm_cache)                                 # ... and the build it left behind, if any
        if count is None:
            backend = "cpsat"
            _, count, _ = ours(target, "cpsat", warm_cache)
        kt_input = kt_problem(Path(target), work) if kt_python and target != "gemm" else None
        plans.append({"name": name, "target": target, "backend": backend, "count": count, "kt_input": kt_input,
                      "warm": [], "cold": [], "kt": [], "kt_size": None, "cold_by": "", "warm_by": "", "bg": [],
                      "cpsat": []})
    for _ in range(args.repeat):
        for plan in plans:
            cpu, count, plan["warm_by"] = ours(plan["target"], plan["backend"], warm_cache)
            plan["warm"].append(cpu)
            assert count == plan["count"], (plan["name"], count, plan["count"])
            if not args.only_sweep:
                with tempfile.TemporaryDirectory() as cold:
                    cpu, count, plan["cold_by"] = ours(plan["target"], plan["backend"], cold)
                    bg = settle(cold)                      # waited for: it must not run beside the next measurement
                    if bg is not None:
                        plan["bg"].append(bg)
                plan["cold"].append(cpu)
                assert count == plan["count"], (plan["name"], count, plan["count"])
            if not args.no_cpsat and plan["target"] != "gemm":
                cpu, count, _ = ours(plan["target"], "cpsat", warm_cache)
                plan["cpsat"].append(cpu)
                assert count == plan["count"], (plan["name"], "cpsat", count, plan["count"])
            if plan["kt_input"] is not None:
                cpu, out, code = cpu_run([str(kt_python), "-c", KT_CHILD, str(plan["kt_input"])], _env())
                plan["kt"].append(cpu)
                plan["kt_size"] = int(out.strip().splitlines()[-1]) if code == 0 else \
                    f"error: {out.strip().splitlines()[-1] if out.strip() else code}"
    print(f"{'space':40} {'count':>9} {'warm':>6} {'warm by':>9} {'cold':>6} {'cold by':>9} {'bg':>5} {'KT':>6} "
          f"{'KT/warm':>8} {'KT/cold':>8} {'cpsat':>6}")
    for plan in plans:
        warm, cold = min(plan["warm"]), (min(plan["cold"]) if plan["cold"] else None)
        kt = min(plan["kt"]) if plan["kt"] else None
        ratios = (f"{kt / warm:8.2f} {kt / cold:8.2f}" if kt and cold else f"{'-':>8} {'-':>8}")
        bg = f"{min(plan['bg']):5.2f}" if plan["bg"] else f"{'-':>5}"
        cpsat = f"{min(plan['cpsat']):6.2f}" if plan["cpsat"] else f"{'-':>6}"
        note = "" if plan["kt_size"] in (None, plan["count"]) else f"  (Kernel Tuner's size: {plan['kt_size']})"
        print(f"{plan['name']:40} {plan['count']:>9} {warm:6.2f} {plan['warm_by']:>9} "
              f"{(f'{cold:6.2f}' if cold is not None else '     -')} {plan['cold_by']:>9} "
              f"{bg} {(f'{kt:6.2f}' if kt else '     -')} {ratios} {cpsat}{note}")
    # a sweep over 20 values of one setting, against one warm count of the GEMM space
    env = _env(SOLVERSPACE_CACHE=str(work / "sweep"))
    command = [sys.executable, "-m", "solverspace", "sweep", "gemm", "--set",
               "max_threads_per_block=" + ",".join(SWEEP_VALUES), "--json"]
    cold_cpu, out, code = cpu_run(command, env)
    settle(str(work / "sweep"))
    warm_cpu = min(cpu_run(command, env)[0] for _ in range(args.repeat))
    one = min(plans[-1]["warm"])
    methods: dict[str, int] = {}
    for line in out.splitlines() if code == 0 else []:
        method = json.loads(line).get("method", "per-point")
        methods[method] = methods.get(method, 0) + 1
    print(f"sweep of gemm over 20 values of max_threads_per_block: cold {cold_cpu:.2f} CPU-s "
          f"({cold_cpu / one:.1f}x one warm count), warm {warm_cpu:.2f} CPU-s ({warm_cpu / one:.1f}x); "
          f"one warm count {one:.2f} CPU-s; methods: " + ", ".join(f"{n} {m}" for m, n in methods.items())
          + ("" if code == 0 else f"; the sweep exited {code}"))
    waits(work, args.repeat, not args.no_cpsat)


if __name__ == "__main__":
    main()
