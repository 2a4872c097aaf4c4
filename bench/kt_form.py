"""Kernel Tuner's form next to the BEAST form and Kernel Tuner 1.5, side by side in one run.

Spaces written the Kernel Tuner way (every parameter a flat value list, every dependency a
restriction string) are planned into ranges bounded by their restrictions
(`solverspace/analysis/structure.py`). For each T1 file this prints, in CPU seconds (user + system)
of whole processes and every process under them (the compiler, and the background build a cold
answer leaves behind: the bench is the subreaper of its children, as `bench/latency.py`):

- `cold`: `solverspace count FILE` on an empty module cache (a fresh `$SOLVERSPACE_CACHE`), `bg` the
  build it left behind, `by` what answered, `est`: the compile time `auto` announced ("about N s"),
  against `cold+bg` minus `warm` (what building cost);
- `warm`: the same process again (the minimum of `--rounds`);
- `beast`: the BEAST form of the same space warm, where there is one (the GEMM exports);
- `KT`: a process that builds Kernel Tuner 1.5's `Searchspace` from the same file (as
  `bench/latency.py` does; stopped after `--kt-timeout` seconds: `>N`), and the ratios `KT/cold+bg`
  (target >= 1: never behind, compiler included) and `KT/warm`;
- `drop-in`: our `solverspace.integrations.kernel_tuner.searchspace.Searchspace` built from the file's `tune_params` and
  restriction strings, warm: CPU seconds and peak memory (targets for the GEMM exports: < 5 s, < 1 GB).

Files: the 16 T1 files of tests/data/peer_spaces, the K40c GEMM space exported by `export-t1`
(1,207,600; targets < 1 CPU-s warm, < 10 s cold), the H100 single-real opt-in export (78,298,704;
< 5 s warm, < 60 s cold), and spaces with large value lists written here: the six-parameter space
of the issue (two block sizes over range(1, 1025), two tile sizes over range(1, 65), an unroll and a
stage count; the issue gives no restrictions, so these are ours) and a two-list space of 4096 values.

    python bench/kt_form.py [--rounds 1] [--quick] [--kt-timeout 120] [--no-kt]

`--quick`: two peer files, the K40c export and the issue's space, one round (a smoke run).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import latency  # noqa: E402  (the measuring helpers: Run, count, subreaper, Kernel Tuner's child)
from latency import KT_CHILD, PEER, ROOT, Run, _env, become_subreaper, cell, kernel_tuner_python, kt_tune_params  # noqa: E402,F401

GEMM_EXPORTS = {"gemm-k40c (T1 export)": (), "gemm-h100-single-optin (T1 export)":
                ("device=h100", "precision=single", "shared_memory=opt-in")}
TARGETS = {"gemm-k40c (T1 export)": (1.0, 10.0), "gemm-h100-single-optin (T1 export)": (5.0, 60.0)}

DROPIN_CHILD = r"""
import json, resource, sys
from solverspace.io.t1.read import load_t1
from solverspace.integrations.kernel_tuner.searchspace import Searchspace
path = sys.argv[1]
tune_params = {p.name: [i.value for i in p.domain.items] for p in load_t1(path).parameters}
restrictions = [c["Expression"] for c in json.load(open(path))["ConfigurationSpace"]["Conditions"]]
space = Searchspace(tune_params, restrictions, max_threads=2**31)
print(space.size, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def t1_document(name: str, parameters: dict, conditions: list[str]) -> dict:
    return {"General": {"FormatVersion": 1, "BenchmarkName": name},
            "ConfigurationSpace": {"TuningParameters": [{"Name": n, "Type": "int", "Values": v}
                                                        for n, v in parameters.items()],
                                   "Conditions": [{"Parameters": list(parameters), "Expression": c}
                                                  for c in conditions]}}


def written_spaces(folder: Path) -> dict[str, Path]:
    """The issue's six-parameter space and a two-list space of 4096 values, as T1 files."""
    issue = t1_document("issue_example", {
        "block_size_x": "list(range(1, 1025))", "block_size_y": "list(range(1, 1025))",
        "tile_size_x": "list(range(1, 65))", "tile_size_y": "list(range(1, 65))",
        "loop_unroll": "[0, 1, 2, 4, 8]", "stages": "[1, 2, 3, 4]"}, [
        "32 <= block_size_x * block_size_y <= 1024",
        "block_size_x % 32 == 0 or block_size_y == 1",
        "block_size_x % tile_size_x == 0 and tile_size_x * tile_size_y <= 64",
        "block_size_y % tile_size_y == 0",
        "loop_unroll == 0 or tile_size_x % loop_unroll == 0",
        "stages * tile_size_x * tile_size_y <= 96"])
    lists = t1_document("two_lists_4096", {
        "n": "list(range(1, 4097))", "m": "list(range(1, 4097))", "vector": "[1, 2, 4]"}, [
        "n <= m and m % n == 0", "n * m <= 65536", "vector == 1 or n % vector == 0"])
    paths = {}
    for name, doc in (("issue_example (6 parameters)", issue), ("two lists of 4096", lists)):
        path = folder / f"{doc['General']['BenchmarkName']}.json"
        path.write_text(json.dumps(doc))
        paths[name] = path
    return paths


def exports(folder: Path) -> dict[str, tuple[Path, tuple]]:
    result = {}
    for name, settings in GEMM_EXPORTS.items():
        path = folder / (name.split()[0] + ".json")
        proc = subprocess.run([sys.executable, "-m", "solverspace", "export-t1", "gemm", *latency.sets(settings),
                               "-o", str(path)], capture_output=True, text=True, cwd=ROOT, env=_env())
        if proc.returncode:
            raise SystemExit(f"export-t1 failed: {proc.stderr}")
        result[name] = (path, settings)
    return result


def count(target: str, cache: str) -> tuple[Run, int, str]:
    """`latency.count` with `auto`, its messages kept (the compile estimate it announces)."""
    run = Run([sys.executable, "-m", "solverspace", "count", target, "--json"], _env(SOLVERSPACE_CACHE=cache), cache)
    if run.code:
        raise SystemExit(f"{target}: count failed: {run.err[-400:]}")
    answer = json.loads(run.last_line())
    return run, int(answer["count"]), str(answer.get("backend", "?")) + ("-O0" if answer.get("quick_build") else "")


def ours(path: Path, rounds: int, work: Path) -> dict:
    cache = tempfile.mkdtemp(prefix="cache-", dir=work)
    run, counted, by = count(str(path), cache)
    announced = re.search(r"\(about ([0-9.]+) s\)", run.err)
    row = {"count": counted, "cold": run.cpu, "bg": run.background, "by": by,
           "est": float(announced.group(1)) if announced else None}
    warm = []
    for _ in range(rounds):
        again, counted_again, row["warm_by"] = count(str(path), cache)
        if counted_again != counted:
            raise SystemExit(f"{path}: cold count {counted}, warm {counted_again}")
        warm.append(again.cpu)
    row["warm"] = min(warm)
    return row


def beast(settings: tuple, rounds: int, work: Path) -> float:
    cache = tempfile.mkdtemp(prefix="cache-", dir=work)
    latency.count("gemm", "c", cache, settings)
    return min(latency.count("gemm", "c", cache, settings)[0].cpu for _ in range(rounds))


def kernel_tuner(python: str, path: Path, timeout: float) -> tuple[float | None, int | str | None]:
    """Kernel Tuner's Searchspace build: (CPU seconds, its size), (None, None) past the timeout,
    (None, why) where it fails (its parser cannot read a restriction: `not (...)` in the exports)."""
    before = latency.children_cpu()
    try:
        proc = subprocess.run([python, "-c", KT_CHILD, str(path), kt_tune_params(str(path))], capture_output=True,
                              text=True, cwd=ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None
    spent = latency.children_cpu() - before
    if proc.returncode or not proc.stdout.split():
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"Kernel Tuner fails after {spent:.2f} CPU-s: {last[:120]}"
    return spent, int(proc.stdout.split()[-1])


def dropin(path: Path) -> tuple[float, int, int]:
    before = latency.children_cpu()
    proc = subprocess.run([sys.executable, "-c", DROPIN_CHILD, str(path)], capture_output=True, text=True,
                          cwd=ROOT, env=_env())
    size, megabytes = (int(v) for v in proc.stdout.split()[-2:])
    return latency.children_cpu() - before, size, megabytes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-kt", action="store_true")
    parser.add_argument("--kt-timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    become_subreaper()
    kt_python, kt_version = (None, "not run") if args.no_kt else kernel_tuner_python(None)
    work = Path(tempfile.mkdtemp(prefix="kt-form-"))
    files = sorted(PEER.glob("*/*.json"))
    if args.quick:
        files = [PEER / "willemsen2025/atf_prl2.json", PEER / "willemsen2025/atf_prl4.json"]
    targets = {str(f.relative_to(PEER)): (f, None) for f in files}
    gemm = exports(work)
    if args.quick:
        gemm = {k: v for k, v in gemm.items() if "k40c" in k}
    targets.update(gemm)
    written = written_spaces(work)
    if args.quick:
        written = {k: v for k, v in written.items() if "issue" in k}
    targets.update({k: (v, None) for k, v in written.items()})
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; CPU seconds (user + "
          f"system) of whole processes, compiler and background build included; warm: minimum of {args.rounds} "
          f"round(s); Kernel Tuner: {kt_version}")
    print(f"{'space':<40} {'count':>9} {'cold':>6} {'bg':>5} {'by':>10} {'est':>5} {'build':>5} {'warm':>6} "
          f"{'beast':>6} {'KT':>7} {'KT/cold+bg':>10} {'KT/warm':>8}")
    results = {}
    for name, (path, settings) in targets.items():
        row = ours(path, args.rounds, work)
        row["beast"] = beast(settings, args.rounds, work) if settings is not None else None
        kt, kt_size = (None, None) if kt_python is None else kernel_tuner(kt_python, path, args.kt_timeout)
        failed = kt_size if isinstance(kt_size, str) else None
        if isinstance(kt_size, int) and kt_size != row["count"]:
            print(f"  {name}: Kernel Tuner counts {kt_size}, we count {row['count']}")
        cold_bg = row["cold"] + row["bg"]
        build = cold_bg - row["warm"]
        kt_text = cell(kt, 7) if kt is not None else ("fails".rjust(7) if failed else
                                                     f">{args.kt_timeout:.0f}".rjust(7) if kt_python else "-".rjust(7))
        timed_out = kt_python and not failed
        ratio_cold = (f"{kt / cold_bg:.2f}" if kt else (f">{args.kt_timeout / cold_bg:.0f}" if timed_out else "-"))
        ratio_warm = (f"{kt / row['warm']:.2f}" if kt else (f">{args.kt_timeout / row['warm']:.0f}" if timed_out else "-"))
        print(f"{name:<40} {row['count']:>9} {cell(row['cold'])} {cell(row['bg'], 5)} {row['by']:>10} "
              f"{cell(row['est'], 5, 1)} {cell(build, 5)} {cell(row['warm'])} {cell(row['beast'])} {kt_text} "
              f"{ratio_cold:>10} {ratio_warm:>8}", flush=True)
        if failed:
            print(f"  {name}: {failed}")
        results[name] = (row, kt)
    for name, (path, _) in gemm.items():
        seconds, size, megabytes = dropin(path)
        row = results[name][0]
        warm_target, cold_target = TARGETS[name]
        print(f"{name}: count {row['count']} warm {row['warm']:.2f} CPU-s (target < {warm_target:g}: "
              f"{'met' if row['warm'] < warm_target else 'missed'}), cold+bg {row['cold'] + row['bg']:.2f} "
              f"(target < {cold_target:g}: {'met' if row['cold'] + row['bg'] < cold_target else 'missed'}); "
              f"drop-in Searchspace from its tune_params and restrictions: {seconds:.2f} CPU-s, {megabytes} MB, "
              f"size {size} (target < 5 s, < 1 GB: {'met' if seconds < 5 and megabytes < 1024 else 'missed'})")
    compared = {n: (row, kt) for n, (row, kt) in results.items() if kt is not None}
    behind = [n for n, (row, kt) in compared.items() if kt < row["cold"] + row["bg"]]
    print(f"not behind Kernel Tuner cold (compiler and background build included), where it builds: "
          f"{len(compared) - len(behind)} of {len(compared)}" + (f"; behind: {', '.join(behind)}" if behind else ""))
    estimated = [(n, row) for n, (row, _) in results.items() if row["est"] is not None]
    for name, row in estimated:
        build = row["cold"] + row["bg"] - row["warm"]
        print(f"{name}: auto announced about {row['est']:g} s of compiling; the build cost {build:.2f} CPU-s "
              f"({'within' if row['est'] / 2 <= build <= row['est'] * 2 else 'not within'} 2x)")
    load = os.getloadavg()
    print(f"load at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
