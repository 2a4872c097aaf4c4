"""Benchmark: exact samples of independent groups, the sampler's waits, repair of near points.

Each figure is one whole `python -m solverspace ...` process (wall seconds, and CPU seconds:
user + system of the process and its children), the minimum over `--rounds` runs after one
warm-up run that compiles and caches its modules; the machine's load is printed beside them.

- `sample -n 10` of ten independent stages, two forms: `rules`, `t_i = range(32, 1025, 32)`,
  `w_i = range(32, 65537, 32)`, `require(w_i % t_i == 0)`, and `hoisted`, `w_i = range(t_i, 65537,
  t_i)` (each 1,549,735,729,373,850,439,115,947,625,769,659,967,001 configurations): the groups'
  own enumerators find each drawn position (`translators/c/groups.py`);
- `sample -n 500` of both, and the same 500 inside one process (`Space.sample`, after a first
  sample: no start-up, no build): wall against CPU says how long the sampler waits (a C call
  hands its work to the C thread and is woken when it returns, `call_c`);
- `repair` of a point of a 2**64 space whose one rule reads every parameter (its count never
  ends): a valid point (distance 0) and one at distance 1, found among the points around the
  target (`solverspace/repair.py`, `nearby`) without counting the space.

    python bench/sampling_waits.py [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RULES = "".join(f"t{i} = range(32, 1025, 32)\nw{i} = range(32, 65537, 32)\nrequire(w{i} % t{i} == 0)\n"
                for i in range(1, 11))
HOISTED = "".join(f"t{i} = range(32, 1025, 32)\nw{i} = range(t{i}, 65537, t{i})\n" for i in range(1, 11))
SUM_RULE = "".join(f"p{i} = range(1 << 16)\n" for i in range(4)) + "require(p0 + p1 + p2 + p3 != 7)\n"

IN_PROCESS = """
import sys, time
from solverspace import Space
space = Space.load(sys.argv[1])
space.sample(10, seed=1)
wall, cpu = time.perf_counter(), time.process_time()
space.sample(500, seed=2)
print(f"{time.perf_counter() - wall:.3f} {time.process_time() - cpu:.3f}")
"""


def run(argv: list[str]) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the process and its children, exit status, last line of output)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    wall = time.perf_counter() - start
    lines = proc.stdout.decode(errors="replace").strip().splitlines()
    return wall, _children_cpu() - before, proc.returncode, lines[-1] if lines else ""


def _children_cpu() -> float:
    """User + system seconds of every child waited for so far (grows by each one's own)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best(argv: list[str], rounds: int) -> tuple[float, float, int, str]:
    run(argv)   # warm-up: builds and caches the modules
    runs = [run(argv) for _ in range(rounds)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs), runs[-1][3]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} cores, load {load()}; whole processes, minimum of {args.rounds} warm runs")
    with tempfile.TemporaryDirectory(prefix="sampling-waits-") as work:
        files = {}
        for name, text in (("rules", RULES), ("hoisted", HOISTED), ("sum_rule", SUM_RULE)):
            files[name] = Path(work) / f"{name}.py"
            files[name].write_text(text)
        for form in ("rules", "hoisted"):
            for n in (10, 500):
                wall, cpu, code, last = best(["-m", "solverspace", "sample", "-n", str(n), "--seed", "3", "-q",
                                              str(files[form])], args.rounds)
                print(f"ten stages ({form:7}) sample -n {n:<3}  wall {wall:6.2f} s  CPU {cpu:6.2f} s"
                      + ("" if code == 0 else f"  exited {code}: {last}"))
            script = Path(work) / "in_process.py"
            script.write_text(IN_PROCESS)
            _, _, code, last = run([str(script), str(files[form])])
            if code == 0:
                wall, cpu = (float(x) for x in last.split())
                print(f"ten stages ({form:7}) 500 samples inside one process: wall {wall:.3f} s, CPU {cpu:.3f} s")
            else:
                print(f"ten stages ({form:7}) in one process exited {code}: {last}")
        for label, point in (("valid point", ["p0=5", "p1=7", "p2=9", "p3=11"]),
                             ("point at distance 1", ["p0=1", "p1=2", "p2=3", "p3=1"])):
            wall, cpu, code, last = best(["-m", "solverspace", "repair", str(files["sum_rule"]), *point], args.rounds)
            print(f"repair of a {label:19} on a 2**64 space  wall {wall:6.2f} s  CPU {cpu:6.2f} s  ({last})"
                  + ("" if code == 0 else f"  exited {code}"))
    print(f"load at the end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
