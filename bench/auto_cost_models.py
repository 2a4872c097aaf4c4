"""The four large or wide models of issue 28 that made `auto` wait minutes where another backend
answers in seconds, written at any scale (`bench/auto_cost.py` writes the large ones,
`tests/test_auto_cost.py` small ones). The issue gives their shape, not their text; these are
built to that shape:

- `wide_binary(n)`: n binary parameters (the issue: 300), adjacent pairs tied by one constraint
  each (`b1 <= b0`: 3 of the 4 pairs), so the space is 3**(n/2) configurations in n/2
  independent pieces. C generates n nested loops (a large source: the compile dominates); CP-SAT
  counts the pieces separately and multiplies.
- `many_constraints(k, side)`: 3 parameters `x, y, z = range(1, side + 1)` and k constraints
  (the issue: 10,000) `a*x + b*y + c*z != d`, each removing one pseudo-random point (fixed
  seed), so nearly every point passes every test. The generated C has k tests (gcc -O2 on it is
  the wait); the reference tries every point against each constraint.
- `long_list(n, width)`: a parameter over a literal list of n values (the issue: 700,000) and a
  second over `range(1, width + 1)` with a divisibility test: the table dominates every compiled
  backend's source; the reference walks n * width candidates.
- `big_t1(n)`: a T1 file (JSON) whose parameter `x` has n values in its `Values` list (the
  issue: a 95 MB file; 8.4 million values of 11 bytes each), another `y` with 4, and one
  condition `x % y == 0`.

    python bench/auto_cost_models.py DIR [--small]   # writes the four files into DIR
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

SEED = 28


def wide_binary(n: int = 300) -> str:
    """n binary parameters, each adjacent pair tied: 3**(n // 2) configurations (n even)."""
    lines = [f"# {n} binary parameters in {n // 2} tied pairs (issue 28): 3**{n // 2} configurations"]
    lines += [f"b{i} = range(2)" for i in range(n)]
    lines += [f"require(b{i + 1} <= b{i})" for i in range(0, n - 1, 2)]
    return "\n".join(lines) + "\n"


def wide_binary_count(n: int = 300) -> int:
    return 3 ** (n // 2) * 2 ** (n % 2)


def _points(k: int, side: int) -> list[tuple]:
    """k pseudo-random points of the cube 1..side (fixed seed) and for each a coefficient order."""
    rng = random.Random(SEED)
    return [(rng.randint(1, side), rng.randint(1, side), rng.randint(1, side), rng.randrange(6)) for _ in range(k)]


ORDERS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))


def many_constraints(k: int = 10_000, side: int = 32) -> str:
    """3 parameters over 1..side and k constraints `a*x + b*y + c*z != d`, each removing one point:
    (a, b, c) is a permutation of (side**2, side, 1), an injective encoding of the cube."""
    lines = [f"# 3 parameters, {k} constraints (issue 28)",
             f"x = range(1, {side + 1})", f"y = range(1, {side + 1})", f"z = range(1, {side + 1})"]
    for px, py, pz, order in _points(k, side):
        a, b, c = (side ** (2 - ORDERS[order][i]) for i in range(3))
        lines.append(f"require({a} * x + {b} * y + {c} * z != {a * px + b * py + c * pz})")
    return "\n".join(lines) + "\n"


def many_constraints_count(k: int = 10_000, side: int = 32) -> int:
    """side**3 less the distinct points the constraints remove."""
    return side ** 3 - len({p[:3] for p in _points(k, side)})


def _list_values(n: int) -> list[int]:
    """n distinct values, deterministic, not a range (so nothing turns the list into a loop bound)."""
    return [i * 7 + (i * i) % 5 for i in range(n)]


def long_list(n: int = 700_000, width: int = 8) -> str:
    """`x` over a literal list of n values, `y = range(1, width + 1)`, `require(x % y == 0)`."""
    values = ", ".join(map(str, _list_values(n)))
    return (f"# a {n}-value list (issue 28)\n"
            f"x = iterator([{values}])\n"
            f"y = range(1, {width + 1})\n"
            f"require(x % y == 0)\n")


def long_list_count(n: int = 700_000, width: int = 8) -> int:
    return sum(1 for x in _list_values(n) for y in range(1, width + 1) if x % y == 0)


def big_t1(n: int = 8_400_000) -> str:
    """A T1 file: `x` with n values (`Values` a JSON list: a `Values` string is capped at
    `t1_format.MAX_VALUES`), `y` in 1..4, one condition `x % y == 0`."""
    values = "[" + ", ".join(str(100_000_000 + v) for v in _list_values(n)) + "]"
    head = json.dumps({"General": {"BenchmarkName": f"big_t1_{n}", "OutputFormat": "JSON"}})
    parameters = [f'{{"Name": "x", "Type": "int", "Values": {values}, "Default": 100000000}}',
                  json.dumps({"Name": "y", "Type": "int", "Values": "[1, 2, 3, 4]", "Default": 1})]
    conditions = json.dumps([{"Parameters": ["x", "y"], "Expression": "x % y == 0"}])
    return (head[:-1] + ',\n "ConfigurationSpace": {"TuningParameters": [\n  ' + ",\n  ".join(parameters)
            + '],\n  "Conditions": ' + conditions + "}}\n")


def big_t1_count(n: int = 8_400_000) -> int:
    return sum(1 for v in _list_values(n) for y in range(1, 5) if (100_000_000 + v) % y == 0)


LARGE = {"wide_binary.py": lambda: wide_binary(300), "many_constraints.py": lambda: many_constraints(10_000),
         "long_list.py": lambda: long_list(700_000), "big_t1.json": lambda: big_t1(8_400_000)}
SMALL = {"wide_binary.py": lambda: wide_binary(40), "many_constraints.py": lambda: many_constraints(300, 12),
         "long_list.py": lambda: long_list(30_000, 4), "big_t1.json": lambda: big_t1(20_000)}


def write(folder: Path, small: bool = False) -> dict[str, Path]:
    """The four model files in `folder` (written once: an existing file of that name is kept)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, text in (SMALL if small else LARGE).items():
        path = folder / name
        if not path.exists():
            path.write_text(text())
        paths[name] = path
    return paths


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[-1])
    for name, path in write(Path(sys.argv[1]), "--small" in sys.argv).items():
        print(f"{path}  {path.stat().st_size:,} bytes")
