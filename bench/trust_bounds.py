"""How long the bounded refusals take, and what the bounds cost an ordinary restriction.

For each hostile input of the trust round on the safe evaluator and the data files (the restriction
strings that built gigabytes or ran 10^12 comparisons, a 10 MB restriction, a 1,000-term sum, a cache
that is a link to /dev/zero or a FIFO, a cache of deeply nested JSON), the CPU and wall seconds from
the call to its answer (a refusal naming the bound, or the space); then the microseconds one
evaluation of four ordinary restrictions takes (`compile_predicate`, 20,000 calls each). The load
average is printed beside them (2 shared cores).

    python bench/trust_bounds.py
"""
from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solverspace import Space  # noqa: E402
from solverspace.core.errors import SolverspaceError  # noqa: E402
from solverspace.integrations.kernel_tuner.searchspace import build_space  # noqa: E402
from solverspace.integrations.kernel_tuner.cache import check_cache  # noqa: E402
from solverspace.io.t1.predicates import compile_predicate  # noqa: E402

PARAMS = {"x": [1, 2, 3, 4], "tile": [0, 1, 2], "kind": ["ab", "b"]}
RESTRICTIONS = [
    ("len(str([[[0]*10000]*10000]*10000)) > x", "str of a 10^12-item list"),
    ("[[[0]*10000]*10000]*10000 == [[[0]*10000]*10000]*10000", "== of 10^12 items"),
    ("len(str([[0]*10000]*10000)) > x", "str of a 10^8-item list"),
    ("[[[x]*10000]*10000]*10000 == [[[tile]*10000]*10000]*10000", "the same, per configuration"),
    ("pow(x + 1, 2 ** 65000, 3 ** 40000) & 1 == 1", "pow with a 65,000-bit modulus"),
    ("x in [" + ",".join(str(i) for i in range(1_500_000)) + "]", "a 10 MB restriction"),
    ("(" + " + ".join(["x", "tile", "x * tile", "3"] * 250) + ") & 2 == 0", "a 1,000-term sum (runs)"),
]
ORDINARY = ["x & (x - 1) == 0", "[1, 2, 4, 8][tile] <= x", "len(str(x)) == 1 and 'a' in kind",
            "tile in [" + ",".join(map(str, range(2000))) + "]"]


def timed(function) -> tuple[float, float, str]:
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        with contextlib.redirect_stderr(io.StringIO()):     # the library's notes (a restriction run in Python)
            outcome = function()
    except SolverspaceError as exc:
        outcome = "refused: " + exc.message.splitlines()[0].split("; and the T1 reader")[0][-110:]
    return time.process_time() - cpu, time.perf_counter() - wall, outcome


def restriction(text: str):
    def run():
        space, predicates, _ = build_space(PARAMS, [text])
        rows = [dict(zip(PARAMS, values)) for values in itertools.product(*PARAMS.values())]
        valid = sum(1 for row in rows if all(p(row) for p in predicates)) if predicates else space.count("reference")
        return f"ran: {valid} valid configurations"
    return run


def cache_cases(folder: Path):
    source = folder / "s.py"
    source.write_text("a = range(1, 5)\nb = iterator([1, 2, 4])\nrequire(a * b <= 8)\n")
    space = Space.load(source)
    zero, fifo, deep = folder / "zero.json", folder / "fifo.json", folder / "deep.json"
    zero.symlink_to("/dev/zero")
    os.mkfifo(fifo)
    deep.write_text('{"tune_params_keys": ["a", "b"], "cache": {"1,1": {"time": ' + "[" * 200_000 + "]" * 200_000
                    + "}}}")
    return [(f"cache-check of {name}", lambda path=path: check_cache(space, path))
            for name, path in (("a link to /dev/zero", zero), ("a FIFO nobody writes", fifo),
                               ("200,000 nested arrays", deep))]


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    print(f"{'case':40s} {'CPU s':>7s} {'wall s':>7s}  answer")
    for text, name in RESTRICTIONS:
        cpu, wall, outcome = timed(restriction(text))
        print(f"{name:40s} {cpu:7.3f} {wall:7.3f}  {outcome}")
    with tempfile.TemporaryDirectory() as folder:
        for name, function in cache_cases(Path(folder)):
            cpu, wall, outcome = timed(function)
            print(f"{name:40s} {cpu:7.3f} {wall:7.3f}  {outcome}")
    config = {"x": 2, "tile": 1, "kind": "ab"}
    for text in ORDINARY:
        predicate = compile_predicate(text, list(PARAMS))
        start = time.perf_counter()
        for _ in range(20_000):
            predicate(config)
        print(f"one evaluation of {text[:40]!r}: {(time.perf_counter() - start) / 20_000 * 1e6:.2f} us")
    print(json.dumps({"load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
