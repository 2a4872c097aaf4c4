"""Output formats: CSV, JSON Lines, .npy and Parquet hold the same rows, for categorical spaces
and for GEMM; Parquet is written in row groups and needs the optional pyarrow extra."""
import csv
import importlib.util
import json
import sys

import numpy as np
import pytest

from solverspace.cli import main
from solverspace.core.errors import BackendUnavailableError, SpaceDefinitionError
from solverspace.core.formats import format_of
from solverspace.space import Space

HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None
needs_pyarrow = pytest.mark.skipif(not HAS_PYARROW, reason="pyarrow (the `parquet` extra) is not installed")

CATEGORICAL = '''
kind = iterator(["tex", "ldg", "plain name"])
vec = iterator([1, 2, 4])
@iterator
def tile(vec):
    return range(-vec, 3 * vec + 1, vec)
@require
def fits(kind, vec, tile):
    return kind != "tex" or vec * tile < 8
'''
AWKWARD = '''
kind = iterator(['a"b', "back\\\\slash", "comma,semi;colon", "ünïcode"])
n = range(0, 3)
'''


def _space(name):
    if name == "gemm-tiny":
        return Space.load("gemm", {"device": "tiny"})
    return Space.from_source({"categorical": CATEGORICAL, "awkward": AWKWARD}[name], filename=f"{name}.py")


def _coerce(text):
    try:
        return int(text)
    except ValueError:
        return text


def read_csv(path, sep=","):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle, delimiter=sep))
    return tuple(rows[0]), [tuple(_coerce(v) for v in row) for row in rows[1:]]


def read_jsonl(path):
    with open(path) as handle:
        objects = [json.loads(line) for line in handle]
    columns = tuple(objects[0]) if objects else ()
    assert all(tuple(o) == columns for o in objects)
    return columns, [tuple(o.values()) for o in objects]


def read_npy(path):
    from solverspace import read_npy as read
    array = read(path)
    return array.dtype.names, [tuple(r) for r in array.tolist()]


def read_parquet(path):
    import pyarrow.parquet as pq
    table = pq.read_table(path)
    return tuple(table.column_names), [tuple(r.values()) for r in table.to_pylist()]


FORMATS = [pytest.param("csv", read_csv, id="csv"), pytest.param("jsonl", read_jsonl, id="jsonl"),
           pytest.param("npy", read_npy, id="npy"),
           pytest.param("parquet", read_parquet, marks=needs_pyarrow, id="parquet")]


@pytest.mark.parametrize("name", ["categorical", "gemm-tiny"])
@pytest.mark.parametrize("fmt, reader", FORMATS)
def test_every_format_holds_the_same_rows_as_csv(tmp_path, name, fmt, reader):
    space = _space(name)
    space.write(tmp_path / "all.csv", "c")
    columns, expected = read_csv(tmp_path / "all.csv")
    assert columns == space.parameters and expected == list(space.rows("c"))
    target = tmp_path / f"all.{fmt}"
    assert space.write(target, "c") == len(expected)
    assert reader(target) == (columns, expected)
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize("fmt, reader", FORMATS)
def test_derived_columns_in_every_format(tmp_path, fmt, reader):
    space = Space.load("gemm", {"device": "tiny"})
    target = tmp_path / f"d.{fmt}"
    space.write(target, "c", with_derived=("threads_per_block",))
    columns, rows = reader(target)
    assert columns[-1] == "threads_per_block" and len(rows) == 336
    assert all(r[0] * r[1] == r[-1] for r in rows)


@pytest.mark.parametrize("fmt, reader", FORMATS)
def test_strings_that_need_escaping(tmp_path, fmt, reader):
    space = _space("awkward")
    target = tmp_path / f"a.{fmt}"
    space.write(target, "c", sep="\t")
    columns, rows = reader(target, "\t") if fmt == "csv" else reader(target)
    assert rows == list(space.rows("reference"))


@pytest.mark.parametrize("fmt, reader", FORMATS)
def test_empty_space(tmp_path, fmt, reader):
    space = Space.from_source("x = range(1, 4)\ny = range(x, 1)\n")
    target = tmp_path / f"e.{fmt}"
    assert space.write(target, "c") == 0
    columns, rows = reader(target)
    assert rows == []
    if fmt != "jsonl":  # an empty JSON Lines file has no objects to name the columns
        assert columns == ("x", "y")


def test_jsonl_fast_path_matches_the_general_path(tmp_path):
    """JSON Lines rearranged from the C formatter's CSV (awkward strings take the general path)
    are the bytes of one Python format per row."""
    from solverspace.core.formats import JsonlWriter, jsonl_bytes, open_writer
    from solverspace.translators.c.backend import CEnumerator
    fast = []
    for name in ("categorical", "gemm-tiny", "awkward"):
        space = _space(name)
        enumerator = CEnumerator.get(space.plan)
        rows = enumerator.array()
        with open_writer(tmp_path / f"{name}.jsonl", "jsonl", enumerator.header,
                         format_csv=enumerator.format_csv) as writer:
            assert isinstance(writer, JsonlWriter)
            fast.append(writer.fast)
            writer.batch(rows)
        assert (tmp_path / f"{name}.jsonl").read_bytes() == jsonl_bytes(enumerator.decode(rows))
    assert fast == [True, True, False]


def test_reference_backend_writes_csv_and_jsonl(tmp_path):
    space = _space("categorical")
    space.write(tmp_path / "r.jsonl", "reference")
    assert read_jsonl(tmp_path / "r.jsonl") == (space.parameters, list(space.rows("reference")))
    with pytest.raises(SpaceDefinitionError, match="CSV and JSON Lines only"):
        space.write(tmp_path / "r.npy", "reference")


def test_csv_separator(tmp_path):
    space = _space("gemm-tiny")
    space.write(tmp_path / "semi.csv", "c", sep=";")
    assert read_csv(tmp_path / "semi.csv", ";")[1] == list(space.rows("c"))


def test_format_from_extension():
    assert [format_of(f"x.{e}") for e in ("csv", "jsonl", "ndjson", "npy", "parquet", "txt", "PARQUET")] == \
        ["csv", "jsonl", "jsonl", "npy", "parquet", "csv", "parquet"]
    with pytest.raises(SpaceDefinitionError, match="unknown output format 'xml'"):
        _space("categorical").write("x.xml", "c", fmt="xml")


@needs_pyarrow
def test_parquet_is_written_in_row_groups(tmp_path):
    import pyarrow.parquet as pq
    from solverspace.translators.c.backend import CEnumerator
    space = _space("gemm-tiny")
    target = tmp_path / "groups.parquet"
    CEnumerator.get(space.plan).write(target, "parquet", batch_rows=50)
    assert pq.ParquetFile(target).num_row_groups > 1
    assert read_parquet(target) == (space.parameters, list(space.rows("c")))


@needs_pyarrow
def test_parquet_keeps_categorical_columns_as_dictionaries(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    target = tmp_path / "c.parquet"
    _space("categorical").write(target, "c")
    schema = pq.read_schema(target)
    assert pa.types.is_dictionary(schema.field("kind").type) and pa.types.is_integer(schema.field("vec").type)


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    target = tmp_path / "x.parquet"
    with pytest.raises(BackendUnavailableError, match="pyarrow") as info:
        _space("gemm-tiny").write(target, "c")
    assert "solverspace[parquet]" in str(info.value)
    assert main(["enumerate", "gemm", "--set", "device=tiny", "-o", str(target)]) == 2
    assert "solverspace[parquet]" in capsys.readouterr().err
    assert main(["sample", "gemm", "--set", "device=tiny", "-n", "3", "-o", str(target)]) == 2
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("fmt, reader", FORMATS)
def test_enumerate_command_formats(tmp_path, capsys, fmt, reader):
    target = tmp_path / f"gemm.{fmt}"
    assert main(["enumerate", "gemm", "--set", "device=tiny", "-o", str(target), "-q"]) == 0
    assert "wrote 336 configurations" in capsys.readouterr().err
    assert reader(target) == (Space.load("gemm", {"device": "tiny"}).parameters,
                              list(Space.load("gemm", {"device": "tiny"}).rows("c")))


@pytest.mark.parametrize("fmt, reader", FORMATS)
def test_sample_command_formats(tmp_path, capsys, fmt, reader):
    space = _space("categorical")
    source = tmp_path / "space.py"
    source.write_text(CATEGORICAL)
    target = tmp_path / f"s.{fmt}"
    assert main(["sample", str(source), "-n", "5", "--seed", "3", "-o", str(target)]) == 0
    capsys.readouterr()
    columns, rows = reader(target)
    assert columns == space.parameters and len(rows) == 5 and len(set(rows)) == 5
    assert set(rows) <= set(space.rows("c"))
    assert json.loads((tmp_path / f"s.{fmt}.meta.json").read_text())["seed"] == 3
    assert main(["sample", str(source), "-n", "5", "--seed", "3", "-o", str(tmp_path / "s.csv")]) == 0
    assert rows == read_csv(tmp_path / "s.csv")[1]


def test_csv_quotes_categorical_values_that_contain_the_separator(tmp_path):
    space = Space.from_source('k = iterator(["a,b", "c"])\nn = range(0, 2)\n')
    space.write(tmp_path / "c.csv", "c")
    assert read_csv(tmp_path / "c.csv")[1] == list(space.rows("reference"))


def test_api_returns_a_dataframe_when_pandas_is_installed():
    pandas = pytest.importorskip("pandas")
    space = Space.load("gemm", {"device": "tiny"})
    frame = space.to_frame("c")
    assert isinstance(frame, pandas.DataFrame) and list(frame.columns) == list(space.parameters)
    assert [tuple(r) for r in frame.itertuples(index=False)] == list(space.rows("reference"))


def test_npy_stores_categorical_columns_as_codes_with_a_table(tmp_path):
    """Strings in the array would take 4 bytes a character (`<U10`: 40 bytes a value); codes take
    one, and `FILE.npy.categories.json` maps them back."""
    from solverspace import read_npy
    space = _space("categorical")
    target = tmp_path / "c.npy"
    space.write(target, "c")
    raw = np.load(target)
    assert raw.dtype["kind"] == np.int8 and all(raw.dtype[n].kind == "i" for n in raw.dtype.names)
    codes, tables = read_npy(target, decode=False)
    assert set(tables) == {"kind"} and (codes == raw).all()
    assert [tables["kind"][c] for c in raw["kind"]] == [r[0] for r in space.rows("reference")]
    assert [tuple(r) for r in read_npy(target).tolist()] == list(space.rows("reference"))
    meta = json.loads((tmp_path / "c.npy.categories.json").read_text())
    assert meta["rows"] == len(raw) and meta["columns"] == tables


def test_npy_without_categorical_columns_has_no_sidecar_and_drops_a_stale_one(tmp_path):
    from solverspace import read_npy
    target = tmp_path / "x.npy"
    _space("categorical").write(target, "c")
    assert (tmp_path / "x.npy.categories.json").exists()
    space = _space("gemm-tiny")
    space.write(target, "c")
    assert not (tmp_path / "x.npy.categories.json").exists()
    assert [tuple(r) for r in read_npy(target).tolist()] == list(space.rows("c"))


def test_npy_with_a_sidecar_of_another_file_is_refused(tmp_path):
    from solverspace import SolverspaceError, read_npy
    _space("categorical").write(tmp_path / "c.npy", "c")
    Space.from_source("kind = iterator(['a', 'b'])\n").write(tmp_path / "other.npy", "c")
    (tmp_path / "c.npy.categories.json").replace(tmp_path / "other.npy.categories.json")  # its rows are 2, not 21
    with pytest.raises(SolverspaceError, match="does not match"):
        read_npy(tmp_path / "other.npy")


@pytest.mark.parametrize("method", ["exact", "reference"])
def test_sample_npy_stores_codes_and_decodes_to_the_csv_sample(tmp_path, capsys, method):
    from solverspace import read_npy
    source = tmp_path / "cat.py"
    source.write_text(CATEGORICAL)
    args = [str(source), "-n", "9", "--seed", "4", "--method", method]
    assert main(["sample", *args, "-o", str(tmp_path / "s.csv")]) == 0
    assert main(["sample", *args, "-o", str(tmp_path / "s.npy")]) == 0
    _, expected = read_csv(tmp_path / "s.csv")
    assert np.load(tmp_path / "s.npy").dtype["kind"].kind == "i"
    assert [tuple(r) for r in read_npy(tmp_path / "s.npy").tolist()] == expected


@pytest.mark.parametrize("text", ["{bad", "[1, 2]", '{"columns": {"k": 3}}'])
def test_npy_with_a_corrupt_sidecar_is_refused_with_a_message(tmp_path, text):
    from solverspace import SolverspaceError, read_npy
    space = Space.from_source("k = iterator(['a', 'b'])\nx = range(3)\n")
    space.write(tmp_path / "o.npy", "c")
    (tmp_path / "o.npy.categories.json").write_text(text)
    with pytest.raises(SolverspaceError, match="not a category table"):
        read_npy(tmp_path / "o.npy")
