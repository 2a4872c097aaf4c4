"""The compiled enumerator's prefix table for partitions (`translators/c/partition.py`) through
CEnumerator's public `prefix_units` / `units_of` (issue 24): the same units as its own split,
and partitions whose files, read in order, are the single-process file."""
import numpy as np
import pytest

from tests.helpers import space

pytest.importorskip("cffi")

SPACE = '''
kind = iterator(["x", "y,z"])
a = range(1, 30)
b = range(1, 30)
c = range(0, 7)
@require
def keep(kind, a, b, c):
    return (a * b + c) % 5 != 0 or kind == "x"
'''


def _enumerator():
    from solverspace.translators.c.backend import CEnumerator
    return CEnumerator.get(space(SPACE).plan)


def test_the_prefix_table_is_the_enumerators_own_split():
    from solverspace.translators.c.backend import MIN_UNITS, UNITS_PER_THREAD
    from solverspace.translators.c.partition import prefix_table
    enumerator = _enumerator()
    units = enumerator.split()
    depth, prefixes, stats = prefix_table(enumerator, max(MIN_UNITS, UNITS_PER_THREAD * enumerator.threads))
    assert depth == units.depth and np.array_equal(prefixes, units.prefixes)
    assert stats.undefined == units.prefix_stats.undefined


def test_a_prefix_table_at_a_given_depth():
    from solverspace.translators.c.partition import prefix_table
    enumerator = _enumerator()
    depth, prefixes, _ = prefix_table(enumerator, 1, depth=1)
    assert depth == 1 and prefixes[:, 0].tolist() == [0, 1]          # kind's codes
    assert prefix_table(enumerator, 1, depth=0)[1].shape == (1, 0)    # the whole nest, one unit
    deepest = enumerator.generated.max_prefix_depth
    with pytest.raises(ValueError, match=f"prefix depth {deepest + 1} is not between 0 and {deepest}"):
        prefix_table(enumerator, 1, depth=deepest + 1)


@pytest.mark.parametrize("fmt", ["csv", "npy"])
def test_partitions_written_in_order_are_the_single_process_file(tmp_path, fmt):
    from solverspace.core.npy import read_npy
    from solverspace.translators.c.partition import balanced_partitions, count_block, prefix_table, restricted
    enumerator = _enumerator()
    enumerator.write(tmp_path / f"whole.{fmt}", fmt)
    depth, prefixes, _ = prefix_table(enumerator, 40)
    counts = count_block(enumerator, depth, prefixes)[0]
    parts = balanced_partitions(counts, 5)
    assert len(parts) == 5
    pieces = []
    for i, (a, b) in enumerate(parts):
        path = tmp_path / f"part{i}.{fmt}"
        assert restricted(enumerator, depth, prefixes[a:b], counts[a:b]).write(path, fmt) == sum(counts[a:b])
        pieces.append(path)
    if fmt == "csv":
        header, *body = [p.read_bytes().split(b"\n", 1) for p in pieces]
        joined = header[0] + b"\n" + header[1] + b"".join(rest for _, rest in body)
        assert joined == (tmp_path / "whole.csv").read_bytes()
    else:
        joined = np.concatenate([read_npy(p) for p in pieces])
        assert joined.tolist() == read_npy(tmp_path / "whole.npy").tolist()
