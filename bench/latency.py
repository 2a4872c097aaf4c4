"""Benchmark (issues 13, 28): what one `solverspace` process costs, next to Kernel Tuner's whole process.

Every figure is the CPU seconds (user + system) of whole processes: the child and every process
under it (the compiler it runs, and the detached background build it leaves behind: this
benchmark makes itself the "subreaper" of its children (Linux `PR_SET_CHILD_SUBREAPER`), so a
detached builder is re-parented to it, waited for, and its CPU seconds are counted; elsewhere
they are read from the builder's `background.log`). Each figure is the minimum over `--rounds`
interleaved rounds; the machine's load is printed beside them.

For each T1 file under tests/data/peer_spaces and for the built-in GEMM space (K40c):

- `warm`: `python -m solverspace count FILE` (the default `auto` backend) with the cache as the
  default itself left it: one earlier default `count` (and the build it left behind, waited
  for), never `--backend c`; `warm by` says which backend answered;
- `cold`: the same on an empty cache (`$SOLVERSPACE_CACHE`, a fresh folder each round): the
  process alone (`cold by`: `c-O0` is the quick -O0 build `auto` takes for a small space);
- `bg`: the CPU seconds of the build that cold call left behind (spent after the answer);
  `cold+bg` is the sum, per round: what a cold call costs in all;
- `KT`: a process that builds Kernel Tuner 1.5's `Searchspace` from the same T1 file, read as
  `kernel_tuner.interface.tune_kernel_T1` reads it (Values evaluated, Conditions as restriction
  strings; no block-size restriction added, as we add none); `KT/warm` (target >= 2) and
  `KT/cold+bg` (target >= 1: never behind) are the ratios, and the summary says where a target is
  missed. The GEMM space is not a T1 file (Kernel Tuner cannot parse its export, and took about
  1,300 CPU-s when issue 13 was filed): its Kernel Tuner columns stay empty;
- `cpsat`: `--backend cpsat`, warm (no target; issue 13's Hotspot figure).

Then (issue 28): the K40c warm count (target <= 0.15 CPU-s); a warm CLI `best gemm --maximize
"fmas_per_block - loads_per_block" --top 10` (the README's objective; target <= 0.3 CPU-s); the
first and the second `sweep gemm` over 20 values of `max_threads_per_block` after a warm count
of the same space (a fresh cache each round: cold count, its background build, a warm count,
then the two sweeps; target: both < 3x one warm count; `compiled` counts the modules the first
sweep added to the cache), and the first sweep on an empty cache (no count before it; not with
`--quick`); the two spaces of independent groups, counted by C (cold: one run; warm: the minimum
of the rounds, and the count's own seconds inside that process) and CP-SAT (warm, minimum), each
count checked against its closed form: four pairs `x_i, y_i = range(1, 65)` with `y_i % x_i == 0`
(6,146,560,000) and ten stages `t_i = range(32, 1025, 32)`, `w_i = range(t_i, 65537, t_i)`.

    python bench/latency.py [--rounds 5] [--quick] [--no-kt] [--no-cpsat] [--only-sweep] [--only-waits]
                            [--kt-python PYTHON]

`--quick` is a smoke run: one round, two T1 files (`willemsen2025/atf_prl2.json`, answered by the
reference, and `willemsen2025/atf_prl4.json`), the `tiny` GEMM variant in place of K40c (its lines
say so, and their targets are not judged), no independent groups. Counts are checked: ours against
each other (a difference stops the run) and against Kernel Tuner's size (a difference is printed).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT / "tests" / "data" / "peer_spaces"
QUICK_FILES = ["willemsen2025/atf_prl2.json", "willemsen2025/atf_prl4.json"]
SWEEP_VALUES = {"k40c": [str(v) for v in range(384, 1024 + 1, 32)][:20],    # 20 values of max_threads_per_block
                "tiny": [str(v) for v in range(16, 96, 4)]}
TARGETS = {"kt_warm": 2.0, "kt_cold": 1.0, "k40c_warm": 0.15, "best": 0.3, "sweep": 3.0}

KT_CHILD = r"""
import json, sys
from kernel_tuner.searchspace import Searchspace
space = json.load(open(sys.argv[1]))["ConfigurationSpace"]
tune_params = json.loads(sys.argv[2])   # the declared values, read by our T1 reader (kt_tune_params)
restrictions = [c["Expression"] for c in space["Conditions"]]
print(Searchspace(tune_params, restrictions, max_threads=2**31, block_size_names=[]).size)
"""


def kt_tune_params(path: str) -> str:
    """A T1 file's declared values per parameter, as JSON, for `KT_CHILD`. Kernel Tuner's
    `tune_kernel_T1` evals the "Values" strings; our T1 reader parses them without eval, and the
    child gets the lists (the eval of a few short lists is microseconds of Kernel Tuner's time)."""
    from solverspace.io.t1.read import load_t1
    return json.dumps({p.name: [item.value for item in p.domain.items] for p in load_t1(path).parameters})

SUBREAPER = False   # set by `become_subreaper`: detached grandchildren are re-parented to this process


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux), so a detached background build
    is re-parented here when the command that started it exits, and can be waited for and counted."""
    global SUBREAPER
    try:
        SUBREAPER = ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0   # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        SUBREAPER = False
    return SUBREAPER


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reap(timeout: float = 900) -> None:
    """Wait for every descendant re-parented here (a background build) to finish."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                print(f"latency: a background process still runs after {timeout:.0f} s; not waited for",
                      file=sys.stderr)
                return
            time.sleep(0.02)


class Run:
    """One measured process: `cpu` (it and the processes it waited for), `background` (what it left
    running, waited for after it exited), its output and exit status."""

    def __init__(self, command: list[str], env: dict, cache: str | None = None):
        before = children_cpu()
        proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
        middle = children_cpu()
        self.cpu = middle - before
        if SUBREAPER:
            reap()
            self.background = children_cpu() - middle
        else:
            self.background = settle(cache) if cache else 0.0
        self.out, self.err, self.code = proc.stdout, proc.stderr, proc.returncode

    def last_line(self) -> str:
        lines = (self.out if self.code == 0 else self.out + self.err).strip().splitlines()
        return lines[-1] if lines else f"exit {self.code}"


def _env(**extra) -> dict:
    """The children's environment: bytecode caching on (an installed package has its .pyc files;
    with PYTHONDONTWRITEBYTECODE set, every process would compile our sources again, ~0.1 s)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return dict(env, PYTHONPATH=str(ROOT), SOLVERSPACE_BACKGROUND_BUILD="1", **extra)   # the default, measured


def settle(cache: str, timeout: float = 600) -> float:
    """Without a subreaper: wait until no background build is waiting or running in `cache`; the
    CPU seconds its builders logged (`background.log`, the last line of each builder), or 0."""
    sys.path.insert(0, str(ROOT))
    from solverspace.registry import background
    folder, deadline = Path(cache), time.monotonic() + timeout
    while time.monotonic() < deadline and folder.is_dir():
        if not background.pending(folder):
            fd = background.try_lock(folder)
            if fd is not None:
                background.release_lock(fd)
                break
        time.sleep(0.05)
    log = folder / background.LOG
    if not log.exists():
        return 0.0
    last: dict = {}
    for line in log.read_text().splitlines():
        record = json.loads(line)
        last[record.get("pid")] = record.get("builder_cpu", 0.0)
    log.unlink()            # counted once
    return sum(last.values())


def device_settings(device: str) -> tuple:
    """The GEMM space's settings for a device: none for K40c (the README's commands, as typed)."""
    return () if device == "k40c" else (f"device={device}",)


def sets(settings: tuple) -> list[str]:
    return [a for s in settings for a in ("--set", s)]


def count(target: str, backend: str, cache: str, settings: tuple = ()) -> tuple[Run, int | None, str]:
    """A `count` process: (the run, the count or None, the backend that answered)."""
    run = Run([sys.executable, "-m", "solverspace", "count", target, *sets(settings), "--backend", backend, "--json", "--quiet"],
              _env(SOLVERSPACE_CACHE=cache), cache)
    if run.code:
        return run, None, ""
    answer = json.loads(run.last_line())
    return run, int(answer["count"]), str(answer.get("backend", "?")) + ("-O0" if answer.get("quick_build") else "")


def kernel_tuner_python(chosen: str | None) -> tuple[str | None, str]:
    """The Python that runs Kernel Tuner (this one when it has it), or None and why not."""
    python = chosen or sys.executable
    proc = subprocess.run([python, "-c", "import kernel_tuner, importlib.metadata as m; print(m.version('kernel_tuner'))"],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        return None, f"no Kernel Tuner in {python} (pip install '.[kerneltuner]', or --kt-python)"
    return python, proc.stdout.strip()


def judged(value: float | None, target: float, at_least: bool, quick: bool = False) -> str:
    if value is None:
        return "-"
    if quick:
        return "not judged (quick)"
    met = value >= target if at_least else value <= target
    return "met" if met else "MISSED"


def minimum(values: list) -> float | None:
    return min(values) if values else None


def cell(value: float | None, width: int = 6, digits: int = 2) -> str:
    return f"{value:{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


# ------------------------------------------------------------------------------ the T1 table
def t1_table(files: list[Path], gemm: tuple, rounds: int, kt_python: str | None, cpsat: bool, work: Path) -> dict:
    """The per-file rows, measured in `rounds` interleaved rounds; returns the GEMM row."""
    warm_cache = str(work / "warm")
    targets = [(str(p.relative_to(PEER)), str(p), ()) for p in files] + [gemm]
    plans, failed = [], []
    for name, target, settings in targets:
        backend = "auto"
        run, answer, _ = count(target, "auto", warm_cache, settings)   # the default fills the warm cache, as a user's
        if answer is None:                                            # first call does (its background build waited for)
            backend = "cpsat"
            run, answer, _ = count(target, "cpsat", warm_cache, settings)
        if answer is None:
            print(f"{name:40} could not be counted (auto, then cpsat): {run.last_line()}")
            failed.append(name)
            continue
        plans.append({"name": name, "target": target, "settings": settings, "backend": backend, "count": answer,
                      "kt": kt_python is not None and target.endswith(".json"), "warm": [], "warm_bg": [], "cold": [],
                      "bg": [], "total": [], "kt_cpu": [], "kt_size": None, "cold_by": "", "warm_by": "", "cpsat": []})
    for _ in range(rounds):
        for plan in plans:
            run, answer, plan["warm_by"] = count(plan["target"], plan["backend"], warm_cache, plan["settings"])
            assert answer == plan["count"], (plan["name"], "warm", answer, plan["count"])
            plan["warm"].append(run.cpu)
            plan["warm_bg"].append(run.background)
            with tempfile.TemporaryDirectory(dir=work) as cold:
                run, answer, plan["cold_by"] = count(plan["target"], plan["backend"], cold, plan["settings"])
            assert answer == plan["count"], (plan["name"], "cold", answer, plan["count"])
            plan["cold"].append(run.cpu)
            plan["bg"].append(run.background)
            plan["total"].append(run.cpu + run.background)
            if cpsat and plan["target"].endswith(".json"):
                run, answer, _ = count(plan["target"], "cpsat", warm_cache, plan["settings"])
                assert answer == plan["count"], (plan["name"], "cpsat", answer, plan["count"])
                plan["cpsat"].append(run.cpu)
            if plan["kt"]:
                run = Run([kt_python, "-c", KT_CHILD, plan["target"], kt_tune_params(plan["target"])], _env())
                plan["kt_cpu"].append(run.cpu)
                plan["kt_size"] = int(run.last_line()) if run.code == 0 else f"error: {run.last_line()}"
    print(f"{'space':40} {'count':>9} {'warm':>6} {'warm by':>9} {'cold':>6} {'cold by':>9} {'bg':>5} "
          f"{'cold+bg':>7} {'KT':>6} {'KT/warm':>8} {'KT/cold+bg':>10} {'cpsat':>6}")
    misses = {"kt_warm": [], "kt_cold": []}
    judged_rows = 0
    for plan in plans:
        warm, cold, total, kt = (minimum(plan[k]) for k in ("warm", "cold", "total", "kt_cpu"))
        bg = minimum(plan["bg"])
        by_warm = kt / warm if kt and warm else None
        by_cold = kt / total if kt and total else None
        if by_warm is not None:
            judged_rows += 1
            if by_warm < TARGETS["kt_warm"]:
                misses["kt_warm"].append(f"{plan['name']} {by_warm:.2f}x")
            if by_cold < TARGETS["kt_cold"]:
                misses["kt_cold"].append(f"{plan['name']} {by_cold:.2f}x")
        notes = []
        if plan["kt_size"] not in (None, plan["count"]):
            notes.append(f"Kernel Tuner's size: {plan['kt_size']}")
        if max(plan["warm_bg"], default=0) > 0.05:
            notes.append(f"a warm call left a background build ({max(plan['warm_bg']):.2f} CPU-s)")
        print(f"{plan['name']:40} {plan['count']:>9} {cell(warm)} {plan['warm_by']:>9} {cell(cold)} "
              f"{plan['cold_by']:>9} {cell(bg, 5)} {cell(total, 7)} {cell(kt)} {cell(by_warm, 8)} "
              f"{cell(by_cold, 10)} {cell(minimum(plan['cpsat']))}" + (f"  ({'; '.join(notes)})" if notes else ""))
    if judged_rows:
        for key, label in (("kt_warm", f"warm >= {TARGETS['kt_warm']:g}x Kernel Tuner"),
                           ("kt_cold", f"cold incl. background >= {TARGETS['kt_cold']:g}x Kernel Tuner (never behind)")):
            missed = misses[key]
            print(f"target {label}: {judged_rows - len(missed)} of {judged_rows} T1 files"
                  + (f"; MISSED on {', '.join(missed)}" if missed else " (met)"))
    if failed:
        raise SystemExit(f"latency: {len(failed)} space(s) could not be counted: {', '.join(failed)}")
    return plans[-1]


# ------------------------------------------------------------------------------ issue 28's lines
def k40c_line(gemm_row: dict, quick: bool) -> None:
    warm = minimum(gemm_row["warm"])
    print(f"{gemm_row['name']} warm count: {warm:.3f} CPU-s (target <= {TARGETS['k40c_warm']:g}: "
          f"{judged(warm, TARGETS['k40c_warm'], False, quick)}); cold {minimum(gemm_row['cold']):.2f}, "
          f"cold+bg {minimum(gemm_row['total']):.2f}")


def best_line(device: str, rounds: int, work: Path, quick: bool) -> None:
    cache = str(work / "best")
    env = _env(SOLVERSPACE_CACHE=cache)
    command = [sys.executable, "-m", "solverspace", "best", "gemm", *sets(device_settings(device)),
               "--maximize", "fmas_per_block - loads_per_block", "--top", "10", "--quiet"]
    cold = Run(command, env, cache)
    warm = [Run(command, env, cache) for _ in range(rounds)]
    best = minimum([r.cpu for r in warm])
    codes = {r.code for r in warm + [cold]} - {0}
    same = all(r.out.splitlines()[1:] == cold.out.splitlines()[1:] for r in warm)
    print(f"warm CLI best on {device} gemm (README objective, top 10): {best:.3f} CPU-s (target <= "
          f"{TARGETS['best']:g}: {judged(best, TARGETS['best'], False, quick)}); cold {cold.cpu:.2f} "
          f"(+{cold.background:.2f} background)" + (f"; exited {sorted(codes)}" if codes else "")
          + ("" if same or codes else "; the warm answers DIFFER from the cold one"))


def sweep_lines(device: str, rounds: int, work: Path, quick: bool) -> None:
    """The first and second sweep after a warm count, each round on a fresh cache; one cold sweep."""
    values = SWEEP_VALUES[device]
    command = [sys.executable, "-m", "solverspace", "sweep", "gemm", *sets(device_settings(device)), "--set",
               "max_threads_per_block=" + ",".join(values), "--json"]
    warm, first, second, compiled, methods, truth = [], [], [], [], {}, None
    for index in range(rounds):
        cache = str(work / f"sweep-{index}")
        env = _env(SOLVERSPACE_CACHE=cache)
        count("gemm", "auto", cache, device_settings(device))              # cold, its background build waited for
        run, _, _ = count("gemm", "auto", cache, device_settings(device))
        warm.append(run.cpu)
        modules = set(Path(cache).glob("*.so"))
        one = Run(command, env, cache)
        compiled.append(sorted(p.name for p in set(Path(cache).glob("*.so")) - modules))
        two = Run(command, env, cache)
        if one.code or two.code:
            print(f"sweep of gemm ({device}) exited {one.code}/{two.code}: {one.last_line()} / {two.last_line()}")
            return
        answers = [[json.loads(line)["count"] for line in r.out.splitlines()] for r in (one, two)]
        if answers[0] != answers[1] or (truth is not None and answers[0] != truth):
            print(f"sweep of gemm ({device}): the counts DIFFER between runs: {answers}")
        truth = answers[0]
        first.append(one.cpu + one.background)
        second.append(two.cpu + two.background)
        methods = {}
        for line in two.out.splitlines():
            method = json.loads(line).get("method", "per-point")
            methods[method] = methods.get(method, 0) + 1
    base = minimum(warm)
    a, b = minimum(first), minimum(second)
    worst = max(a, b) / base
    verdict = "not judged (quick)" if quick else ("met" if worst < TARGETS["sweep"] else "MISSED")
    print(f"sweep of gemm ({device}) over {len(values)} values of max_threads_per_block after a warm count: first "
          f"{a:.2f} CPU-s ({a / base:.1f}x one warm count; compiled {len(compiled[-1])} module(s)), second "
          f"{b:.2f} ({b / base:.1f}x); one warm count {base:.3f} (target: both < {TARGETS['sweep']:g}x: {verdict}); "
          "methods: "
          + ", ".join(f"{n} {m}" for m, n in methods.items()))
    if quick:
        return
    cache = str(work / "sweep-empty")
    empty = Run(command, _env(SOLVERSPACE_CACHE=cache), cache)
    print(f"sweep of gemm ({device}) on an empty cache (no count before it): {empty.cpu:.2f} CPU-s "
          f"(+{empty.background:.2f} background; {empty.cpu / base:.1f}x one warm count)"
          + ("" if empty.code == 0 else f"; exited {empty.code}"))


PAIRS = "".join(f"x{i} = range(1, 65)\ny{i} = range(1, 65)\nrequire(y{i} % x{i} == 0)\n" for i in range(1, 5))
STAGES = "".join(f"t{i} = range(32, 1025, 32)\nw{i} = range(t{i}, 65537, t{i})\n" for i in range(1, 11))
GROUPS = [("four pairs y_i % x_i == 0", PAIRS, sum(64 // x for x in range(1, 65)) ** 4),
          ("ten stages w_i = range(t_i, 65537, t_i)", STAGES, sum(65536 // t for t in range(32, 1025, 32)) ** 10)]


def groups_lines(work: Path, cpsat: bool, rounds: int = 1) -> None:
    """The independent groups' counts, each checked against its closed form: C cold (one run),
    C warm and CP-SAT (the minimum of `rounds` runs), and the count's own seconds inside the warm
    process (`count --json`'s `seconds`: the whole process adds Python's start, the imports and
    loading the space, about 0.085 CPU-s here)."""
    for name, text, truth in GROUPS:
        path = work / (name.split()[1] + ".py")
        path.write_text(text)
        cache = str(work / ("groups-" + path.stem))
        row = [f"{name:40} {truth:>42}"]
        inside = None
        for label, backend in (("C cold", "c"), ("C warm", "c"), ("CP-SAT", "cpsat")):
            if backend == "cpsat" and not cpsat:
                continue
            runs = [count(str(path), backend, cache) for _ in range(1 if label == "C cold" else rounds)]
            answers = {answer for _, answer, _ in runs}
            cpu = minimum([run.cpu for run, _, _ in runs])
            row.append(f"{label} {cpu:5.2f}" + ("" if answers == {truth} else f" (counted {sorted(answers, key=str)}: WRONG)"))
            if label == "C warm":
                inside = minimum([json.loads(run.last_line()).get("seconds", float("nan")) for run, _, _ in runs
                                  if run.code == 0] or [float("nan")])
        print("  ".join(row) + f" CPU-s; the warm C count inside its process {inside:.3f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", "--repeat", type=int, default=None, help="interleaved rounds (default 5; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 round, 2 T1 files, tiny GEMM, no groups")
    parser.add_argument("--kt-python", default=None, help="the Python with Kernel Tuner (default: this one)")
    parser.add_argument("--no-kt", action="store_true")
    parser.add_argument("--no-cpsat", action="store_true", help="no CP-SAT column")
    parser.add_argument("--only-sweep", action="store_true", help="only the sweep lines (and the warm count they compare with)")
    parser.add_argument("--only-waits", action="store_true", help="only the warm CLI best and the independent groups")
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 5)
    device = "tiny" if args.quick else "k40c"
    kt_python, kt_version = (None, "--no-kt") if args.no_kt or args.only_sweep or args.only_waits \
        else kernel_tuner_python(args.kt_python)
    become_subreaper()
    print(f"machine: {os.cpu_count()} cores, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}; CPU seconds "
          f"(user + system) of whole processes, background builds {'included (subreaper)' if SUBREAPER else 'read from background.log'}; "
          f"minimum of {rounds} interleaved round(s); Kernel Tuner: {kt_version}" + ("; QUICK smoke run" if args.quick else ""))
    work = Path(tempfile.mkdtemp(prefix="latency-"))
    try:
        measure(args, rounds, device, kt_python, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def measure(args, rounds: int, device: str, kt_python: str | None, work: Path) -> None:
    if not (args.only_sweep or args.only_waits):
        files = [PEER / f for f in QUICK_FILES] if args.quick else sorted(PEER.glob("*/*.json"))
        gemm = (f"gemm ({'tiny: not K40c' if args.quick else 'BEAST, K40c'})", "gemm", device_settings(device))
        row = t1_table(files, gemm, rounds, kt_python, not args.no_cpsat, work)
        k40c_line(row, args.quick)
    if not args.only_waits:
        sweep_lines(device, rounds, work, args.quick)
    if not args.only_sweep:
        best_line(device, rounds, work, args.quick)
        if not args.quick:
            groups_lines(work, not args.no_cpsat, rounds)


if __name__ == "__main__":
    sys.exit(main())
