"""`tune` stops early when its first measurements all fail the same way.

A measuring command that fails for every configuration (a wrong path in its arguments, a missing
input file, a GPU that is not there) would otherwise be run on the whole space before `tune`
gave up: 590 configurations, 50 s, to learn what the first one said. `FailureStreak` watches the
new measurements of a run from its first: while each fails *the same way* (`DidNotRun.kind`:
the status, the exit status and the last line the command printed on stderr, with no
configuration's values in it), it counts them; any other outcome (a measurement that ran, a
failure of another kind, a timeout, a failure whose text names the configuration) ends the
watch for the rest of the run. Reused measurements are not watched.

- A program that cannot be run at all (exit 126/127: not found, not executable) stops after
  `CANNOT_RUN_LIMIT` (3) such failures: nothing else can be meant.
- Any other identical failure stops after `limit` failures (`SAME_FAILURE_LIMIT`, 10 by default;
  `tune --stop-after-failures K`, 0 never). Ten, not three: the search's first configurations
  are neighbours (it dives in domain order), and a kernel's own resource limit can reject a few
  neighbours in a row with one message; ten in a row from the start, all with the same text, is
  a command that does not work, and costs ten runs instead of the whole space.

The stop is an `OptionError` (exit 2) that names the command, how many failed, the exit status
and the error text. The failed rows are removed from the database (`forget`): once the command
is fixed, the next run measures those configurations instead of reusing their failures.
"""
from __future__ import annotations

import os

from solverspace.core.errors import OptionError

CANNOT_RUN_LIMIT = 3       # identical "cannot run" failures (exit 126/127) before tune stops
SAME_FAILURE_LIMIT = 10    # identical failures of any other kind before tune stops (see the module's docstring)
CANNOT_RUN_WHY = {126: "found but cannot be executed (a directory, or no execute permission)", 127: "not found"}


def check_failure_limit(limit) -> None:
    """`stop_after_failures`: a whole number, 0 (never stop) or more."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise OptionError(f"stop_after_failures={limit!r}: expected a whole number of at least 0 (0: never stop)",
                          hint="e.g. --stop-after-failures 20")


class FailureStreak:
    """The first new measurements of one run while they all fail the same way (see the module's
    docstring). `see` each new measurement's failure (None when it ran); it raises when the run
    should stop, after `forget(keys)` has removed the failed rows."""

    def __init__(self, describe: str, forget, limit: int = SAME_FAILURE_LIMIT):
        self.describe, self.forget, self.limit = describe, forget, limit
        self.keys: list | None = []      # None once something else happened
        self.signature = None
        self.last = ""

    def see(self, key: str, failure) -> None:
        """Note one new measurement (`failure`: its `DidNotRun`, None when it ran); raise
        `OptionError` when the streak reaches its limit."""
        if self.keys is None:
            return
        kind = getattr(failure, "kind", None)
        if kind is None or (self.keys and (failure.status, failure.cannot_run, kind) != self.signature):
            self.keys = None
            return
        self.signature, self.last = (failure.status, failure.cannot_run, kind), failure.message
        self.keys.append(key)
        cannot_run = failure.cannot_run
        limit = CANNOT_RUN_LIMIT if cannot_run is not None else self.limit
        if limit == 0 or len(self.keys) < limit:
            return
        self.forget(list(self.keys))
        if cannot_run is not None:
            raise OptionError(
                f"--measure {self.describe!r}: the command cannot run: the first {len(self.keys)} measurements all "
                f"failed with exit status {cannot_run}, the program {CANNOT_RUN_WHY[cannot_run]}; last: {self.last}",
                hint=("give the path of an executable program (relative paths start at the current directory, "
                      f"{os.getcwd()}); shell syntax or a shell builtin needs sh -c '...'. These failures were not "
                      "kept: the next run measures those configurations again"))
        raise OptionError(
            f"tune stopped: the first {len(self.keys)} configurations measured with {self.describe!r} all failed the "
            f"same way ({kind}); the rest of the space was not measured. Last: {self.last}",
            hint=("run the command by hand on one configuration to see why it fails; if some configurations "
                  "really fail that way, raise the limit (--stop-after-failures K, in Python stop_after_failures=K; "
                  "0: never stop). These failures "
                  "were not kept: the next run measures those configurations again"))
