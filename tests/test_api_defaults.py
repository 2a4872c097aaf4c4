"""The Python API's defaults are the command line's: a `Space` method called without options does
what the command does without options (the parser's defaults, read from parsed arguments so that
the comparison holds however the commands are declared)."""
from __future__ import annotations

import inspect

import pytest

from solverspace import Space
from solverspace.cli import build_parser


def cli_defaults(*argv: str) -> dict:
    return vars(build_parser().parse_args(list(argv)))


def api_default(method, name: str):
    return inspect.signature(method).parameters[name].default


# (Space method, its argument, the command line, the option's destination)
PAIRS = [
    (Space.count, "backend", ("count", "gemm"), "backend"),
    (Space.stats, "backend", ("count", "gemm"), "backend"),
    (Space.rows, "backend", ("enumerate", "gemm", "-o", "x.csv"), "backend"),
    (Space.to_array, "backend", ("enumerate", "gemm", "-o", "x.npy"), "backend"),
    (Space.to_frame, "backend", ("enumerate", "gemm", "-o", "x.npy"), "backend"),
    (Space.write, "backend", ("enumerate", "gemm", "-o", "x.csv"), "backend"),
    (Space.write_csv, "backend", ("enumerate", "gemm", "-o", "x.csv"), "backend"),
    (Space.write, "sep", ("enumerate", "gemm", "-o", "x.csv"), "sep"),
    (Space.approximate_count, "epsilon", ("count", "gemm", "--approximate"), "epsilon"),
    (Space.approximate_count, "delta", ("count", "gemm", "--approximate"), "delta"),
    (Space.approximate_count, "seed", ("count", "gemm", "--approximate"), "seed"),
    (Space.sample, "method", ("sample", "gemm", "-n", "3"), "method"),
    (Space.sample, "seed", ("sample", "gemm", "-n", "3"), "seed"),
    (Space.design, "method", ("design", "gemm", "-n", "3"), "method"),
    (Space.design, "seed", ("design", "gemm", "-n", "3"), "seed"),
    (Space.neighbors, "method", ("neighbors", "gemm", "dim_m=16"), "method"),
    (Space.funnel, "backend", ("funnel", "gemm"), "backend"),
    (Space.best, "top", ("best", "gemm", "--minimize", "blk_m"), "top"),
    (Space.best, "backend", ("best", "gemm", "--minimize", "blk_m"), "engine"),
    (Space.tune, "top", ("tune", "gemm", "--measure", "true"), "top"),
    (Space.tune, "repeat", ("tune", "gemm", "--measure", "true"), "repeat"),
    (Space.tune, "aggregate", ("tune", "gemm", "--measure", "true"), "aggregate"),
    (Space.sweep, "backend", ("sweep", "gemm", "--set", "device=tiny"), "backend"),
]


@pytest.mark.parametrize("method, argument, argv, dest", PAIRS,
                         ids=[f"{m.__name__}-{a}" for m, a, _, _ in PAIRS])
def test_an_api_default_is_the_command_lines(method, argument, argv, dest):
    assert api_default(method, argument) == cli_defaults(*argv)[dest]


def test_every_public_method_has_a_docstring():
    public = [name for name, member in vars(Space).items()
              if not name.startswith("_") and callable(getattr(Space, name))]
    assert "count" in public
    assert [name for name in public if not (getattr(Space, name).__doc__ or "").strip()] == []


def test_count_without_arguments_answers_as_the_command_line(capsys):
    """`Space.load("gemm").count()` is `solverspace count gemm` (auto: compiled for a space this
    big; the reference walk would take minutes)."""
    from solverspace.cli import main
    assert main(["count", "gemm", "--set", "device=tiny", "-q", "--json"]) == 0
    import json
    printed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert Space.load("gemm", {"device": "tiny"}).count() == printed["count"]


def test_best_without_an_objective_minimises_the_declared_cost_as_the_command_line(capsys):
    from solverspace.cli import main
    source = "x = range(1, 6)\ny = range(1, 6)\nrequire(x != y)\ncost(x * 3 + 10 // y)\n"
    space = Space.from_source(source)
    ranked = space.best(top=3, backend="bnb-reference").ranked
    assert [r.objective for r in ranked] == sorted(r.objective for r in ranked)
    assert [r.configuration for r in ranked] == [{"x": 1, "y": 4}, {"x": 1, "y": 5}, {"x": 1, "y": 3}]   # 5, 5 (tie: y), 6
    assert ranked == space.best("x * 3 + 10 // y", maximize=False, top=3, backend="bnb-reference").ranked
    worst = space.best(maximize=True, top=1, backend="bnb-reference").ranked[0]
    assert worst.configuration == {"x": 5, "y": 1}


def test_best_without_an_objective_or_a_cost_says_what_to_give():
    from solverspace import SpaceDefinitionError
    with pytest.raises(SpaceDefinitionError, match="no performance model"):
        Space.from_source("x = range(1, 3)\n").best()
