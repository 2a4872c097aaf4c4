"""Import only what a command needs: `--help` and `settings` import no compiled or solver
backend and no SymPy (each costs a third of a second or more per process)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROGRAM = """
import sys
from solverspace.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m == "sympy" or m.startswith("solverspace.translators.") or m == "ortools")
print("HEAVY", heavy, file=sys.stderr)
"""


@pytest.mark.parametrize("command", [["--help"], ["count", "--help"], ["settings", "gemm"]])
def test_commands_that_need_no_backend_import_none(command):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run([sys.executable, "-c", PROGRAM, *command], capture_output=True, text=True, env=env)
    line = next(line for line in result.stderr.splitlines() if line.startswith("HEAVY"))
    assert line == "HEAVY []", line


COUNT_PROGRAM = """
import sys
from solverspace.cli import main
main(sys.argv[1:])
print("HEAVY", sorted(m for m in ("sympy", "numpy", "setuptools", "ortools") if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.needs_cc
def test_a_warm_count_imports_no_numpy_sympy_or_setuptools(tmp_path):
    """A count with the compiled module cached: the space, its hash, the module, the count."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), SOLVERSPACE_CACHE=str(tmp_path))
    command = [sys.executable, "-c", COUNT_PROGRAM, "count", "gemm", "--set", "device=tiny", "--backend", "c"]
    subprocess.run(command, capture_output=True, text=True, env=env, check=True)   # cold: builds the module
    for backend in ("c", "auto"):
        result = subprocess.run(command[:-1] + [backend], capture_output=True, text=True, env=env, check=True)
        assert "336 valid configurations" in result.stdout
        line = next(line for line in result.stderr.splitlines() if line.startswith("HEAVY"))
        assert line == "HEAVY []", (backend, line)
