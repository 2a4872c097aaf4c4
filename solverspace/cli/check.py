"""`solverspace check`: is a configuration valid, and which rules reject it? With only some
parameters given, CP-SAT finds a valid completion or a minimal set of constraints that rules the
given values out; without OR-Tools, or for a construct CP-SAT cannot lower, the reference looks
for a completion."""
from __future__ import annotations

from solverspace.analysis.check import parse_assignment
from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.core.errors import BackendUnavailableError
from solverspace.core.orders import format_value


class Check(Command):
    def add_arguments(self, p):
        add_common(p)
        p.add_argument("assignment", nargs="*", metavar="NAME=VALUE")

    def run(self, args) -> int:
        space = commands.load_space(args)
        assignment = parse_assignment(space.model, args.assignment)
        if set(assignment) == set(space.parameters):
            return _check(space, assignment)
        try:
            result = space.complete(assignment, "cpsat")
        except BackendUnavailableError:  # no OR-Tools, or a construct CP-SAT cannot lower: the reference
            return _check(space, assignment)       # looks for a completion
        given = " ".join(f"{k}={format_value(v)}" for k, v in assignment.items())  # orders: i>j>k
        if result.feasible:
            print("valid completion: " + " ".join(f"{k}={format_value(v)}" for k, v in result.completion.items()))
            return 0
        if result.feasible is None:
            print(f"unknown: the search stopped before deciding whether a configuration has {given}")
            return 1
        print(f"no valid configuration has {given}")
        if not result.conflict and not result.undefined:
            print("ruled out by the parameters' domains alone (no constraint is needed)")
            return 1
        rules = len(result.conflict) + len(result.undefined)
        print((f"ruled out by {rules} constraint(s) together" if not result.undefined else
               f"ruled out by {rules} rule(s) together (an undefined value makes a configuration invalid)")
              + (" (minimal: without any one of them a valid configuration exists):" if result.minimal
                 else " (the time limit stopped the minimisation):"))
        for line in result.describe(space.model):
            print("  " + line)
        return 1


def _check(space, assignment) -> int:
    """A whole configuration checked rule by rule (`Space.check`); a partial one completed by the
    reference."""
    result = space.check(assignment)
    if not result.complete:
        if result.completion is None:
            print("no valid configuration has " + " ".join(f"{k}={format_value(v)}" for k, v in assignment.items()))
            return 1
        print("valid completion: " + " ".join(f"{k}={format_value(v)}" for k, v in result.completion.items()))
        return 0
    if result.valid:
        print("valid")
        return 0
    print(f"invalid: rejected by {len(result.rejections)} rule(s)")
    for r in result.rejections:
        values = ", ".join(f"{k}={format_value(v)}" for k, v in r.values.items())  # orders: i>j>k
        print(f"  {r.rule}: {r.reason}\n      with {values}")
    return 1
