"""The one formats module (issue 24): a writer per format over a header, fed Python rows or
NumPy batches, gives the same bytes whichever way the rows come; a file appears only when
complete; the compiled enumerator's CSV buffer fits any categorical string."""
import importlib.util

import numpy as np
import pytest

from solverspace.core.formats import (
    FORMATS, Header, HeldNpyWriter, NpyWriter, open_writer, write_array, write_batches, write_rows)
from solverspace.core.npy import categories_path, read_npy
from solverspace.core.results import rows_to_array
from tests.helpers import space

HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None
FORMAT_NAMES = sorted(set(FORMATS.values()) - ({"parquet"} if not HAS_PYARROW else set()))

AWKWARD = ("kind = iterator(['a\"b', 'back\\\\slash', 'comma,semi;colon', 'ünïcode', 'tab\\there', '', '"
           + "x" * 300 + "'])\nn = range(-2, 3)\n")


def _files(tmp_path, stem, fmt):
    path = tmp_path / f"{stem}.{fmt}"
    sidecar = categories_path(path)
    return path.read_bytes(), sidecar.read_bytes() if sidecar.exists() else None


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_rows_and_a_table_in_memory_write_the_same_bytes(tmp_path, fmt):
    """`Writer.rows` (Python rows, held for .npy and Parquet) and `Writer.batch` (a table of
    strings) are two doors to one writer."""
    s = space(AWKWARD)
    rows = list(s.rows("reference"))
    write_rows(tmp_path / f"rows.{fmt}", s.parameters, iter(rows), fmt)
    write_array(rows_to_array(rows, s.parameters), tmp_path / f"array.{fmt}")
    assert _files(tmp_path, "rows", fmt) == _files(tmp_path, "array", fmt)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("sep", [",", ";"])
def test_encoded_batches_write_what_python_rows_write(tmp_path, fmt, sep):
    """Batches of codes (the header's tables decode them) written without the C formatter, and
    with it, are the bytes of the reference's Python rows."""
    pytest.importorskip("cffi")
    from solverspace.translators.c.backend import CEnumerator
    s = space(AWKWARD)
    enumerator = CEnumerator.get(s.plan)
    table = enumerator.array()
    batches = [table[start:start + 4] for start in range(0, len(table), 4)]
    write_rows(tmp_path / f"ref.{fmt}", s.parameters, s.rows("reference"), fmt, sep)
    write_batches(tmp_path / f"py.{fmt}", fmt, enumerator.header, iter(batches), sep=sep)
    write_batches(tmp_path / f"c.{fmt}", fmt, enumerator.header, iter(batches), sep=sep,
                  format_csv=enumerator.format_csv)
    expected = (tmp_path / f"ref.{fmt}").read_bytes()
    assert (tmp_path / f"py.{fmt}").read_bytes() == expected
    assert (tmp_path / f"c.{fmt}").read_bytes() == expected


def test_a_categorical_string_longer_than_the_old_buffer_is_formatted_in_c(tmp_path):
    """The C formatter's buffer was 64 bytes a column: a string of 300 characters made
    `enumerate -o x.csv` fail with "CSV buffer too small"; the buffer is now the formatter's own
    row width (`runtime.csv_row_width`)."""
    pytest.importorskip("cffi")
    s = space("kind = iterator(['" + "é" * 200 + "', '" + 'q"' * 150 + "'])\n")
    s.write(tmp_path / "c.csv", "c")
    s.write(tmp_path / "r.csv", "reference")
    assert (tmp_path / "c.csv").read_bytes() == (tmp_path / "r.csv").read_bytes()


def test_streamed_npy_is_the_compiled_layout_and_reads_back(tmp_path):
    pytest.importorskip("cffi")
    from solverspace.translators.c.backend import CEnumerator
    s = space(AWKWARD)
    enumerator = CEnumerator.get(s.plan)
    header = enumerator.header.with_rows(enumerator.stats().count)
    with open_writer(tmp_path / "s.npy", "npy", header) as writer:
        assert isinstance(writer, NpyWriter)
        for batch in enumerator.batches(batch_rows=3):
            writer.batch(batch)
    codes, tables = read_npy(tmp_path / "s.npy", decode=False)
    assert codes.dtype == enumerator.generated.dtype and tables == {"kind": list(enumerator.header.categories[0])}
    assert [tuple(r) for r in read_npy(tmp_path / "s.npy").tolist()] == list(s.rows("reference"))


def test_a_streamed_npy_short_of_its_rows_is_not_written(tmp_path):
    """The header states the row count: fewer rows would leave a file NumPy cannot read."""
    header = Header(("x",), dtype=np.dtype([("x", "<i8")]), rows=3)
    with pytest.raises(RuntimeError, match="2 rows written, its .npy header says 3"):
        with open_writer(tmp_path / "short.npy", "npy", header) as writer:
            writer.batch(np.zeros(2, dtype=header.dtype))
    assert list(tmp_path.iterdir()) == []


def test_npy_without_a_dtype_is_held_and_typed_from_the_whole_table(tmp_path):
    with open_writer(tmp_path / "h.npy", "npy", Header(("k", "n"))) as writer:
        assert isinstance(writer, HeldNpyWriter)
        writer.rows([("b", 1), ("a", 2**40)])
        writer.rows([("c", -1)])
    codes, tables = read_npy(tmp_path / "h.npy", decode=False)
    assert tables == {"k": ["a", "b", "c"]} and codes["k"].tolist() == [1, 0, 2]
    assert codes["k"].dtype == np.int8 and codes["n"].tolist() == [1, 2**40, -1]


def test_a_failed_write_leaves_nothing(tmp_path):
    def rows():
        yield (1,)
        raise RuntimeError("stopped")

    for fmt in FORMAT_NAMES:
        with pytest.raises(RuntimeError, match="stopped"):
            write_rows(tmp_path / f"x.{fmt}", ("a",), rows(), fmt)
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_format_is_refused_before_any_file(tmp_path):
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        write_rows(tmp_path / "x.xml", ("a",), [(1,)], "xml")
    assert list(tmp_path.iterdir()) == []


def test_header_decodes_codes_and_checks_its_tables():
    header = Header(("k", "n"), (("x", "yy"), None))
    batch = np.array([(1, 5), (0, 6)], dtype=[("k", "i1"), ("n", "<i8")])
    assert header.decode(batch).tolist() == [("yy", 5), ("x", 6)]
    assert Header(("n",)).decode(batch) is batch
    with pytest.raises(ValueError, match="1 category tables for 2 columns"):
        Header(("k", "n"), (("x",),))
