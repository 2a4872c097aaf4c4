"""`Space.index` reads configuration names as Python reads them (issue 23 item 5, the API's entry):
`ﬁ` is `fi`, two spellings of one name are refused, and any mapping is read by its names."""
from collections import OrderedDict, UserDict

import pytest

from solverspace import Space, SpaceDefinitionError

SOURCE = "fi = range(0, 5)\ny = range(0, 2)\n"


def test_index_finds_the_normalised_name():
    space = Space.from_source(SOURCE)
    assert space.index({"ﬁ": 3, "y": 1}) == space.index({"fi": 3, "y": 1}) == space.index((3, 1))


def test_index_reads_any_mapping_by_its_names():
    space = Space.from_source(SOURCE)
    expected = space.index((3, 1))
    assert space.index(OrderedDict([("y", 1), ("fi", 3)])) == expected
    assert space.index(UserDict({"y": 1, "fi": 3})) == expected


def test_index_refuses_two_spellings_of_one_name():
    space = Space.from_source(SOURCE)
    with pytest.raises(SpaceDefinitionError, match="one name"):
        space.index({"ﬁ": 3, "fi": 3, "y": 1})
