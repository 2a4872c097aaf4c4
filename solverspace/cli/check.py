"""`solverspace check`: is a configuration valid, and which rules reject it? With only some
parameters given, CP-SAT finds a valid completion or a minimal set of constraints that rules the
given values out; without OR-Tools, or for a construct CP-SAT cannot lower, the reference looks
for a completion. `--json` gives the same answer as one JSON object (`JSON_KEYS`)."""
from __future__ import annotations

from solverspace.analysis.check import parse_assignment
from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.outputs import add_json, configuration_json, json_value, print_json
from solverspace.core.errors import BackendUnavailableError
from solverspace.core.orders import format_value

#: the keys of `check --json`, for its help
JSON_KEYS = ("{\"valid\": true, false or null (unknown: the search stopped), \"complete\" (every parameter given), "
             "\"assignment\", \"completion\" (a valid configuration with the given values, or null), \"rejections\" "
             "(a whole configuration: [{\"rule\", \"reason\", \"values\", \"undefined\"}]), \"conflict\" (a partial "
             "one: the constraints that together rule it out, [{\"rule\", \"text\"}]), \"minimal\"}; exit codes as "
             "without --json")


class Check(Command):
    example = "solverspace check gemm dim_m=16 dim_n=16 blk_m=64"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("assignment", nargs="*", metavar="NAME=VALUE")
        add_json(p, JSON_KEYS)

    def run(self, args) -> int:
        space = commands.load_space(args)
        assignment = parse_assignment(space.model, args.assignment)
        if set(assignment) == set(space.parameters):
            return _check(space, assignment, args.json)
        try:
            result = space.complete(assignment, "cpsat")
        except BackendUnavailableError:  # no OR-Tools, or a construct CP-SAT cannot lower: the reference
            return _check(space, assignment, args.json)       # looks for a completion
        if args.json:
            rules = [{"rule": name, "text": line} for name, line in
                     zip([*result.undefined, *result.conflict], result.describe(space.model))]
            print_json(_answer(assignment, result.feasible, False, completion=result.completion,
                               conflict=rules, minimal=result.minimal if result.feasible is False else None))
            return 0 if result.feasible else 1
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


def _answer(assignment, valid, complete, *, completion=None, rejections=(), conflict=(), minimal=None) -> dict:
    """`check --json`'s object (`JSON_KEYS`)."""
    return {"valid": valid, "complete": complete, "assignment": configuration_json(assignment, assignment.values()),
            "completion": None if completion is None else configuration_json(completion, completion.values()),
            "rejections": list(rejections), "conflict": list(conflict), "minimal": minimal}


def _check(space, assignment, as_json: bool = False) -> int:
    """A whole configuration checked rule by rule (`Space.check`); a partial one completed by the
    reference."""
    result = space.check(assignment)
    if as_json:
        rejections = [{"rule": r.rule, "reason": r.reason, "undefined": r.undefined,
                       "values": {k: json_value(v) for k, v in r.values.items()}} for r in result.rejections]
        valid = result.valid if result.complete else result.completion is not None
        print_json(_answer(assignment, valid, result.complete, completion=result.completion,
                           rejections=rejections))
        return 0 if valid else 1
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
