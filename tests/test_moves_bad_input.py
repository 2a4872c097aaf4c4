"""Issue 25: bad input to the search moves, in one table per side. On the command line (`neighbors`,
`repair`, `design`, `sample --given`) each case is a message on stderr and exit status 2; in the
library (`Space.neighbors`/`count_neighbors`/`random_neighbor`, `repair`, `design`, `from_unit`,
`sample(given=...)`) it is a `SolverspaceError` with the same message: a configuration that is not
valid where a valid one is needed, an unknown method, a value not in a parameter's value list, a
`--given` that contradicts the constraints, `-n 0`, and an empty space or order-valued parameters
where a move needs counts."""
from __future__ import annotations

import pytest

from solverspace import Space, SolverspaceError
from solverspace.cli import main

SPACE = "x = range(1, 5)\ny = range(x, 5)\nk = iterator(['b', 'a'])\nrequire(x + y < 6)\n"
EMPTY = "x = range(1, 5)\nrequire(x > 7)\n"
ORDERS = "loops = permutation(['i', 'j', 'k'])\nt = range(1, 3)\n"

INVALID = "not a valid configuration: neighbours are defined for a valid one"
NOT_LISTED = "is not in parameter 'x''s value list (4 values: 1, 2, 3, 4)"
NOTHING = "the space has no valid configuration: there is nothing to map a point to"
ORDER_REFUSED = "an order-valued parameter is counted as slots"

COMMANDS = [
    # neighbors: a valid configuration of every parameter, a known method, values from the value lists
    ("neighbors", SPACE, ["x=4", "y=4", "k=a"], INVALID),
    ("neighbors", SPACE, ["x=4", "y=4", "k=a", "--count"], INVALID),
    ("neighbors", SPACE, ["x=4", "y=4", "k=a", "--random"], INVALID),
    ("neighbors", SPACE, ["x=1", "y=2", "k=a", "--method", "nearest"], "unknown neighbour method 'nearest'"),
    ("neighbors", SPACE, ["x=9", "y=2", "k=a"], NOT_LISTED),
    ("neighbors", SPACE, ["x=1", "y=2", "k=c"], "k='c' is not in parameter 'k''s value list"),
    ("neighbors", SPACE, ["x=1", "y=2"], "configuration lacks parameters ['k']"),
    ("neighbors", SPACE, ["x=1", "y=2", "k=a", "z=3"], "'z' is not a parameter of this space"),
    ("neighbors", EMPTY, ["x=1"], INVALID),
    ("neighbors", SPACE, ["x=1", "y=2", "k=a", "--random", "--count"], "--random draws one neighbour and --count"),
    # repair: any point of the index box, but values from the value lists, indices in range
    ("repair", SPACE, ["x=9", "y=1", "k=a"], NOT_LISTED),
    ("repair", SPACE, ["x=1", "y=1", "k=c"], "k='c' is not in parameter 'k''s value list"),
    ("repair", SPACE, ["--indices", "9,0,0"], "parameter index 9 of 'x' is out of range"),
    ("repair", SPACE, ["--indices", "0,0"], "2 parameter indices given; the space has 3 parameters"),
    ("repair", SPACE, ["--indices", "a,b,c"], "expected whole numbers separated by commas"),
    ("repair", SPACE, ["x=1", "y=1", "k=a", "--indices", "0,0,0"], "exactly one of them"),
    ("repair", SPACE, [], "exactly one of them"),
    ("repair", EMPTY, ["x=1"], NOTHING),
    ("repair", ORDERS, ["--indices", "0,0"], ORDER_REFUSED),
    # design
    ("design", SPACE, ["-n", "0"], "-n 0: a design needs at least one point"),
    ("design", SPACE, ["-n", "-1"], "a design needs at least one point"),
    ("design", SPACE, ["-n", "3", "--method", "halton"], "invalid choice: 'halton'"),
    ("design", EMPTY, ["-n", "3"], NOTHING),
    ("design", ORDERS, ["-n", "3"], ORDER_REFUSED),
    # sample --given
    ("sample", SPACE, ["-n", "0", "--given", "x=1"], "-n 0: ask for at least one configuration"),
    ("sample", SPACE, ["-n", "0"], "-n 0: ask for at least one configuration"),
    ("sample", SPACE, ["-n", "2", "--given", "x=4", "y=4"], "no valid configuration has x=4 y=4"),
    ("sample", SPACE, ["-n", "2", "--given", "k=a", "x=4"], "no valid configuration has k=a x=4"),
    ("sample", EMPTY, ["-n", "2", "--given", "x=1"], "no valid configuration has x=1"),
    ("sample", SPACE, ["-n", "2", "--given", "x=9"], "given: x=9 " + NOT_LISTED),
    ("sample", SPACE, ["-n", "2", "--given", "z=1"], "'z' is not a parameter of this space"),
    ("sample", SPACE, ["-n", "2", "--given", "x=1", "--method", "magic"], "invalid choice: 'magic'"),
    ("sample", SPACE, ["-n", "2", "--given", "x=1", "x=2"], "parameter 'x' is given twice"),
    ("sample", SPACE, ["-n", "2", "--given", "x"], "'x': expected NAME=VALUE"),
    ("sample", SPACE, ["-n", "5", "--given", "x=1", "y=1"], "cannot draw 5 distinct configurations"),
    ("sample", ORDERS, ["-n", "2", "--given", "loops=i>j>k"], "'loops' is an order-valued parameter"),
]


@pytest.mark.needs_cc
@pytest.mark.parametrize("command, text, argv, message", COMMANDS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(COMMANDS)])
def test_bad_input_on_the_command_line(tmp_path, capsys, command, text, argv, message):
    path = tmp_path / "space.py"
    path.write_text(text)
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main([command, str(path), *argv]))
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err, captured.err
    assert captured.out == ""


VALID = {"x": 1, "y": 2, "k": "a"}
NOT_VALID = {"x": 4, "y": 4, "k": "a"}
CALLS = [
    (SPACE, lambda s: s.neighbors(NOT_VALID), INVALID),
    (SPACE, lambda s: s.count_neighbors(NOT_VALID, "adjacent"), INVALID),
    (SPACE, lambda s: s.random_neighbor(NOT_VALID, seed=1), INVALID),
    (SPACE, lambda s: s.neighbors(VALID, "nearest"), "unknown neighbour method 'nearest'"),
    (SPACE, lambda s: s.count_neighbors(VALID, 3), "unknown neighbour method 3"),
    (SPACE, lambda s: s.neighbors({**VALID, "x": 9}), NOT_LISTED),
    (SPACE, lambda s: s.repair({**VALID, "x": 9}), NOT_LISTED),
    (SPACE, lambda s: s.repair(indices=(9, 0, 0)), "parameter index 9 of 'x' is out of range"),
    (SPACE, lambda s: s.repair(indices=(-1, 0, 0)), "parameter index -1 of 'x' is out of range"),
    (SPACE, lambda s: s.repair(VALID, indices=(0, 0, 0)), "exactly one of them"),
    (EMPTY, lambda s: s.repair({"x": 1}), NOTHING),
    (EMPTY, lambda s: s.repair_distance(indices=(0,)), NOTHING),
    (ORDERS, lambda s: s.repair(indices=(0, 0)), ORDER_REFUSED),
    (SPACE, lambda s: s.design(0), "n=0: a design needs at least one point"),
    (SPACE, lambda s: s.design(3, "halton"), "method='halton': unknown design method"),
    (EMPTY, lambda s: s.design(3), NOTHING),
    (EMPTY, lambda s: s.from_unit((0.5,)), NOTHING),
    (ORDERS, lambda s: s.design(3), ORDER_REFUSED),
    (SPACE, lambda s: s.sample(2, given={"x": 4, "y": 4}), "no valid configuration has x=4 y=4"),
    (EMPTY, lambda s: s.sample(2, given={"x": 1}), "no valid configuration has x=1"),
    (SPACE, lambda s: s.sample(2, given={"x": 9}), "given: x=9 " + NOT_LISTED),
    (SPACE, lambda s: s.sample(2, given={"x": 1}, method="magic"), "unknown sampling method 'magic'"),
    (SPACE, lambda s: s.sample(-1, given={"x": 1}), "must be non-negative"),
    (SPACE, lambda s: s.sample(2, given={"w": 1}), "given: 'w' is not a parameter of this space"),
    (SPACE, lambda s: s.sample(2, given={"k": 1}), "given: k=1 is not in parameter 'k''s value list"),
    (SPACE, lambda s: s.sample(2, given=[("x", 1)]), "expected a dict {parameter: value}"),
    (ORDERS, lambda s: s.sample(2, given={"loops": ("i", "j", "k")}), "'loops' is an order-valued parameter"),
]


@pytest.mark.needs_cc
@pytest.mark.parametrize("text, call, message", CALLS, ids=[str(i) for i in range(len(CALLS))])
def test_bad_input_in_the_library(text, call, message):
    s = Space.from_source(text, filename="space.py")
    with pytest.raises(SolverspaceError) as error:
        call(s)
    assert message in str(error.value)


def test_no_configurations_asked_for_in_the_library():
    """`sample(0, given=...)` is an empty array, as `sample(0)` is (the command line refuses -n 0
    with --given, above); `design(0)` is refused (above)."""
    s = Space.from_source(SPACE, filename="space.py")
    assert len(s.sample(0, given={"x": 1})) == 0 == len(s.sample(0))
