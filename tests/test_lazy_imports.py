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
