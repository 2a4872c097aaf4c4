"""Output files in every format: CSV, JSON Lines, `.npy` (with its categorical sidecar), Parquet.

Every file of rows the library writes is written here, by one writer per format, whatever
produced the rows: the reference backend's Python rows, the compiled enumerator's batches, the
joined rows of a space with orders, a sample held in memory, a Dask shard.

A writer is opened on a `Header` (the column names; for a categorical column whose batches
hold integer codes, its table; the batches' NumPy dtype and row count where known before the
first batch) and then takes rows by either of two entry points, as the producer has them:

- `Writer.batch(array)`: a NumPy structured array, a categorical column holding codes into the
  header's table (the compiled enumerator's batches) or its strings (a table held in memory);
- `Writer.rows(rows)`: Python row tuples, values as listed (orders as tuples, written `i>j>k`).

`open_writer` is the context manager around one file (atomic: the file appears only when
complete, `core.output`); `write_rows`, `write_array` and `write_batches` write a whole file
from rows, from an array in memory, or from an iterator of batches. CSV and JSON Lines are
written as they come; `.npy` and Parquet are streamed when the header gives the dtype (and, for
`.npy`, the row count), and otherwise held until the file closes, when the columns' types and
categorical tables are known from the whole table (a sample, the rows of a space with orders).

One CSV rule (`csv_field`) for every writer, the C formatter included (`ss_put_field`); a
producer with a faster formatter of its batches (the compiled one, formatting in C) hands it to
the writer as `format_csv`, which JSON Lines also rearranges into objects (`csv_to_jsonl`).
"""
from __future__ import annotations

import io
import json
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from solverspace.core.errors import BackendUnavailableError, OutputError, SolverspaceError
from solverspace.core.npy import FORMAT as NPY_CATEGORIES_FORMAT, categories_path
from solverspace.core.orders import format_row
from solverspace.core.output import atomic_output, is_stdout
from solverspace.core.results import rows_to_array

if TYPE_CHECKING:  # NumPy is imported where used: a count imports none
    import numpy as np

FORMATS = {".csv": "csv", ".npy": "npy", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
TEXT_FORMATS = ("csv", "jsonl")   # what standard output takes

PARQUET_ROW_GROUP_ROWS = 1 << 20  # at most this many rows per Parquet row group (one batch or less)
JSONL_CHUNK_ROWS = 1 << 14        # rows rearranged at once into JSON Lines (bounds the index arrays)
TEXT_CHUNK_ROWS = 1 << 12         # Python rows formatted into one write
UNIT_SEP = "\x1f"                 # field separator for the JSON Lines path: in no JSON-plain string


def check_stream_format(path, fmt: str, option: str = "-o") -> None:
    """Standard output (`-`) takes CSV and JSON Lines: a `.npy` file's categories go in a file
    beside it, and binary output on a terminal is noise."""
    if is_stdout(path) and fmt not in TEXT_FORMATS:
        raise OutputError(f"{option} - (standard output) takes CSV or JSON Lines, not {fmt}",
                          hint=f"write the {fmt} output to a file, e.g. {option} out.{fmt}")


def format_of(path: str | Path) -> str:
    """The output format for a file name: by extension (`FORMATS`), CSV for any other.

    >>> format_of("gemm.parquet"), format_of("gemm.jsonl"), format_of("gemm.txt")
    ('parquet', 'jsonl', 'csv')
    """
    return FORMATS.get(Path(path).suffix.lower(), "csv")


def require_pyarrow():
    """`(pyarrow, pyarrow.parquet)`, or an error naming the extra to install."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise BackendUnavailableError("writing Parquet files needs pyarrow, which is not installed",
                                      hint="pip install 'solverspace[parquet]' (or: pip install 'pyarrow>=12')") from None
    return pyarrow, pyarrow.parquet


# ---------------------------------------------------------------------------------------- the header
@dataclass(frozen=True)
class Header:
    """What a writer knows before the first row: the column names; per column, the table of a
    categorical column whose batches hold codes (code i stands for `categories[j][i]`), else
    None (`()`: no column is); the batches' NumPy dtype and the number of rows to come, where
    known (they let `.npy` and Parquet stream instead of holding the table)."""

    names: tuple[str, ...]
    categories: tuple = ()
    dtype: object = None
    rows: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "names", tuple(self.names))
        if self.categories and len(self.categories) != len(self.names):
            raise ValueError(f"{len(self.categories)} category tables for {len(self.names)} columns")

    def tables(self) -> dict[str, list[str]]:
        """{column: table} of the categorical columns."""
        return {name: list(table) for name, table in zip(self.names, self.categories) if table is not None}

    def with_rows(self, rows: int) -> "Header":
        return Header(self.names, self.categories, self.dtype, rows)

    def decode(self, batch: np.ndarray) -> np.ndarray:
        """A batch with its categorical columns' codes replaced by their strings."""
        import numpy as np
        if not any(table is not None for table in self.categories):
            return batch
        fields = [(name, f"<U{max(len(s) for s in table)}") if table is not None else (name, batch.dtype[name])
                  for name, table in zip(self.names, self.categories)]
        out = np.empty(len(batch), dtype=fields)
        for name, table in zip(self.names, self.categories):
            out[name] = np.asarray(table)[batch[name]] if table is not None else batch[name]
        return out

    def json_plain(self) -> bool:
        """Whether every categorical string can be copied into JSON as it is (`json_plain`), and
        a lone categorical column has no empty string (written `""` in CSV)."""
        tables = [t for t in self.categories if t is not None]
        return all(json_plain(v) for t in tables for v in t) and \
            not (len(self.names) == 1 and tables and "" in tables[0])


# ---------------------------------------------------------------------------------------- one value, one row
def csv_field(value, sep: str) -> str:
    """One CSV field, quoted where it holds the separator, a quote or a line break (`\\n` or
    `\\r`), as the C formatter (`translators.c.runtime`, `ss_put_field`) quotes: one rule for
    every writer, not the Python version's `csv` module (whose rule for `\\r` has changed)."""
    text = str(value)
    if type(value) is str and (sep in text or '"' in text or "\n" in text or "\r" in text):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_line(row, sep: str) -> str:
    """One CSV line (`csv_field`s and a newline); a row of one empty string is `""`, as a blank
    line would read as no row at all."""
    if len(row) == 1 and row[0] == "":
        return '""\n'
    return sep.join(csv_field(v, sep) for v in row) + "\n"


def json_plain(text: str) -> bool:
    """Whether a string can be copied into a JSON string literal once `json_ascii` has escaped
    its characters outside ASCII: no `"`, `\\` or control character."""
    return not any(ch in '"\\' or ord(ch) < 0x20 for ch in text)


def json_ascii(data: bytes, values) -> bytes:
    """JSON text holding `values` (strings) unescaped, with every character of theirs outside
    printable ASCII escaped as `json.dumps` escapes it (`ü` as `\\u00fc`), so that a copied
    string has the bytes `json.dumps` gives it. Keys and numbers are ASCII already, and UTF-8
    encodings of distinct characters never overlap, so replacing each character is exact."""
    for ch in sorted({ch for v in values for ch in v if ord(ch) > 0x7E}):
        data = data.replace(ch.encode(), json.dumps(ch)[1:-1].encode())
    return data


def jsonl_bytes(rows: np.ndarray) -> bytes:
    """JSON Lines for a structured array with decoded values (one object per row, keys in
    column order); the general path, one Python format per row."""
    names = rows.dtype.names
    strings = [rows.dtype[n].kind in ("U", "S", "O") for n in names]
    template = "{" + ", ".join(json.dumps(n).replace("%", "%%") + (": %s" if text else ": %d")
                               for n, text in zip(names, strings)) + "}\n"
    out = []
    for row in rows.tolist():
        if any(strings):
            row = tuple(json.dumps(v) if text else v for v, text in zip(row, strings))
        out.append(template % row)
    return "".join(out).encode()


def jsonl_line(names, row) -> str:
    """One JSON Lines object for a Python row (values as listed: orders joined, fractions as
    their text)."""
    return json.dumps(dict(zip(names, format_row(row))), default=str) + "\n"


def csv_to_jsonl(buf: bytes, header: Header) -> bytes:
    """Rearrange CSV-formatted rows (fields separated by `UNIT_SEP`, rows by newlines; the
    header's categorical strings JSON-plain) into JSON Lines with a gather over the bytes: each
    output row is prefix_0 field_0 prefix_1 field_1 ... field_n-1 tail, where prefix_k carries
    the key (and the quotes around categorical values). No Python step per row."""
    import numpy as np
    if not buf:
        return b""
    names = header.names
    text = list(header.categories) or [None] * len(names)
    data = np.frombuffer(buf, dtype=np.uint8)
    ends = np.flatnonzero((data == ord(UNIT_SEP)) | (data == ord("\n")))
    ncols = len(names)
    nrows = len(ends) // ncols
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    pieces = []
    for k, name in enumerate(names):
        close = '"' if k and text[k - 1] is not None else ""
        opening = '"' if text[k] is not None else ""
        pieces.append((close + (", " if k else "{") + json.dumps(name) + ": " + opening).encode())
    pieces.append((('"' if text[-1] is not None else "") + "}\n").encode())
    blob = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    offsets = np.cumsum([0] + [len(p) for p in pieces])
    source = np.concatenate([data, blob])
    seg_start = np.empty((nrows, 2 * ncols + 1), dtype=np.int32)
    seg_len = np.empty_like(seg_start)
    seg_start[:, 0:2 * ncols:2] = len(data) + offsets[:ncols]
    seg_len[:, 0:2 * ncols:2] = [len(p) for p in pieces[:ncols]]
    seg_start[:, 1::2] = starts.reshape(nrows, ncols)
    seg_len[:, 1::2] = (ends - starts).reshape(nrows, ncols)
    seg_start[:, -1] = len(data) + offsets[ncols]
    seg_len[:, -1] = len(pieces[-1])
    seg_start, seg_len = seg_start.ravel(), seg_len.ravel()
    total = int(seg_len.sum())
    first = np.cumsum(seg_len, dtype=np.int32) - seg_len     # output position of each segment
    index = np.repeat(seg_start - first, seg_len)
    index += np.arange(total, dtype=np.int32)
    return source[index].tobytes()


# ---------------------------------------------------------------------------------------- .npy header and sidecar
def npy_header(dtype, rows: int) -> bytes:
    """The `.npy` header for `rows` records of `dtype`: format 1.0 (NumPy's default), or 3.0
    (UTF-8, readable by NumPy >= 1.17) when a column name is not Latin-1, as `np.save` does.
    A 3.0 header here lacks the spaces NumPy leaves for the row count to grow, so it can differ
    by padding from `np.save`'s (a held `.npy`): both read the same, and both are kept as they
    were written (the snapshot's bytes).

    >>> import numpy as np
    >>> len(npy_header(np.dtype([("x", "<i2")]), 5)) % 64
    0
    """
    import numpy as np
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": (rows,)}
    buffer = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(buffer, header)
        return buffer.getvalue()
    except UnicodeEncodeError:
        pass
    text = "{" + "".join(f"{key!r}: {header[key]!r}, " for key in sorted(header)) + "}"
    body = text.encode("utf-8")
    prefix = 6 + 2 + 4  # magic, version, header length
    padding = 64 - (prefix + len(body) + 1) % 64
    body += b" " * (padding % 64) + b"\n"
    return b"\x93NUMPY\x03\x00" + len(body).to_bytes(4, "little") + body


def write_categories(path: str | Path, tables: dict[str, list[str]], rows: int) -> None:
    """The sidecar of `path` (`core.npy`: written atomically), or none when no column is
    categorical."""
    sidecar = categories_path(path)
    if not tables:
        sidecar.unlink(missing_ok=True)  # a stale table must not decode this file's columns
        return
    text = json.dumps({"format": NPY_CATEGORIES_FORMAT, "rows": rows, "columns": tables}, indent=1, ensure_ascii=False)
    with atomic_output(sidecar, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")


def encode_strings(array: np.ndarray) -> tuple[np.ndarray, dict[str, list[str]]]:
    """A structured array with string columns as (codes array, tables); a column's table is its
    distinct values in sorted order, its codes the smallest integer type that holds them."""
    import numpy as np
    tables, fields, columns = {}, [], {}
    for name in array.dtype.names:
        column = array[name]
        if column.dtype.kind in ("U", "S", "O") and (column.dtype.kind != "O" or _all_strings(column)):
            table, codes = np.unique(column.astype(str), return_inverse=True)
            tables[name] = table.tolist()
            codes = codes.astype(next(np.dtype(f"int{bits}") for bits in (8, 16, 32, 64)
                                      if len(table) <= 2 ** (bits - 1)))  # as the C backend's codes
            fields.append((name, codes.dtype))
            columns[name] = codes
        else:
            fields.append((name, column.dtype))
            columns[name] = column
    if not tables:
        return array, {}
    out = np.empty(len(array), dtype=fields)
    for name in array.dtype.names:
        out[name] = columns[name]
    return out, tables


def _all_strings(column) -> bool:
    return len(column) > 0 and all(isinstance(v, str) for v in column)


# ---------------------------------------------------------------------------------------- the writers
class Writer:
    """One open output file of one format. `batch` and `rows` add rows (either, or both, in
    order); `close` finishes the file before it is renamed into place; `written` counts rows."""

    def __init__(self, handle, path: Path, header: Header, sep: str = ",",
                 format_csv: Callable[[np.ndarray, str], bytes] | None = None):
        self.handle, self.path, self.header, self.sep, self.format_csv = handle, path, header, sep, format_csv
        self.written = 0

    def batch(self, rows: np.ndarray) -> None:
        raise NotImplementedError

    def rows(self, rows: Iterable[tuple]) -> None:
        raise NotImplementedError

    def text_lines(self, lines: Iterable[str]) -> None:
        """Write one text line per row, `TEXT_CHUNK_ROWS` lines to a write (the text formats' `rows`)."""
        chunk: list[str] = []
        for line in lines:
            chunk.append(line)
            if len(chunk) == TEXT_CHUNK_ROWS:
                self.handle.write("".join(chunk).encode())
                self.written += len(chunk)
                chunk = []
        self.handle.write("".join(chunk).encode())
        self.written += len(chunk)

    def close(self) -> None:
        """Finish the file (the rows are all given)."""

    def abort(self) -> None:
        """Release what the writer holds; the file is being removed."""


class CsvWriter(Writer):
    """A header line, then one line per row (`csv_line`; a batch through `format_csv` when given)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.handle.write(csv_line(self.header.names, self.sep).encode())

    def batch(self, rows):
        if self.format_csv is not None:
            self.handle.write(self.format_csv(rows, self.sep))
        else:
            self.handle.write("".join(csv_line(row, self.sep) for row in self.header.decode(rows).tolist()).encode())
        self.written += len(rows)

    def rows(self, rows):
        sep = self.sep
        self.text_lines(csv_line(format_row(row), sep) for row in rows)


class JsonlWriter(Writer):
    """One object per row, keys in column order, as `json.dumps` writes them. A batch of codes is
    the CSV formatter's output rearranged by NumPy (`csv_to_jsonl`) where the categorical
    strings allow it, else one Python format per row (`jsonl_bytes`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fast = self.format_csv is not None and self.header.json_plain()
        self.values = [v for table in self.header.categories if table is not None for v in table]

    def batch(self, rows):
        for start in range(0, len(rows), JSONL_CHUNK_ROWS):
            chunk = rows[start:start + JSONL_CHUNK_ROWS]
            if self.fast:
                self.handle.write(json_ascii(csv_to_jsonl(self.format_csv(chunk, UNIT_SEP), self.header), self.values))
            else:
                self.handle.write(jsonl_bytes(self.header.decode(chunk)))
        self.written += len(rows)

    def rows(self, rows):
        names = self.header.names
        self.text_lines(jsonl_line(names, row) for row in rows)


class HeldWriter(Writer):
    """A binary format whose column types (and categorical tables) come from the whole table:
    rows are held until `close`, then written as one table (`write_table`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.parts: list = []   # decoded arrays and lists of Python rows, in order

    def batch(self, rows):
        self.parts.append(self.header.decode(rows))
        self.written += len(rows)

    def rows(self, rows):
        listed = list(rows)
        self.parts.append(listed)
        self.written += len(listed)

    def table(self) -> np.ndarray:
        import numpy as np

        arrays = [rows_to_array(p, self.header.names) if isinstance(p, list) else p for p in self.parts]
        if not arrays:
            return rows_to_array([], self.header.names)
        return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)

    def close(self):
        self.write_table(self.table())

    def write_table(self, table: np.ndarray) -> None:
        raise NotImplementedError


class NpyWriter(Writer):
    """`.npy` streamed: the header (dtype and row count known) and then each batch's bytes as
    they come; categorical columns as their codes, the header's tables in the sidecar."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.handle.write(npy_header(self.header.dtype, self.header.rows))  # format 3.0 for non-Latin-1 names

    def batch(self, rows):
        self.handle.write(rows.tobytes())
        self.written += len(rows)

    def rows(self, rows):
        raise TypeError("a streamed .npy file takes batches of its dtype, not Python rows")

    def close(self):
        if self.written != self.header.rows:
            raise RuntimeError(f"{self.path}: {self.written} rows written, its .npy header says {self.header.rows}")
        write_categories(self.path, self.header.tables(), self.written)


class HeldNpyWriter(HeldWriter):
    """`.npy` from the whole table: string columns as codes of their sorted distinct values
    (`encode_strings`), saved by `np.save`, the tables in the sidecar."""

    def write_table(self, table):
        import numpy as np
        codes, tables = encode_strings(table)
        with warnings.catch_warnings():  # format 3.0 for non-Latin-1 column names: expected, not news
            warnings.simplefilter("ignore", UserWarning)
            np.save(self.handle, codes)
        write_categories(self.path, tables, len(codes))


class ParquetWriter(Writer):
    """Parquet streamed: one row group per batch (at most PARQUET_ROW_GROUP_ROWS rows); a
    categorical column dictionary-encoded over its table."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        import numpy as np
        pa, pq = require_pyarrow()
        self.pa = pa
        dtype = np.dtype(self.header.dtype)
        tables = self.header.categories or (None,) * len(self.header.names)
        self.dictionaries = {name: pa.array(list(table), pa.string())
                             for name, table in zip(self.header.names, tables) if table is not None}
        self.schema = pa.schema([(name, pa.dictionary(pa.from_numpy_dtype(dtype[name]), pa.string())
                                  if table is not None else pa.from_numpy_dtype(dtype[name]))
                                 for name, table in zip(self.header.names, tables)])
        self.writer = pq.ParquetWriter(self.handle, self.schema)

    def batch(self, rows):
        import numpy as np
        pa, arrays = self.pa, []
        for name in self.header.names:
            values = np.ascontiguousarray(rows[name])
            if name in self.dictionaries:
                arrays.append(pa.DictionaryArray.from_arrays(values, self.dictionaries[name]))
            else:
                arrays.append(pa.array(values))
        self.writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema),
                                row_group_size=min(max(len(rows), 1), PARQUET_ROW_GROUP_ROWS))
        self.written += len(rows)

    def rows(self, rows):
        raise TypeError("a streamed Parquet file takes batches of its dtype, not Python rows")

    def close(self):
        self.writer.close()

    def abort(self):
        self.writer.close()


class HeldParquetWriter(HeldWriter):
    """Parquet from the whole table: string columns as plain strings; integers beyond 64 bits
    refused (Parquet has no type for them)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        require_pyarrow()

    def write_table(self, table):
        import numpy as np
        pa, pq = require_pyarrow()
        names = list(table.dtype.names)
        wide = [n for n in names if table.dtype[n] == object and any(isinstance(v, int) for v in table[n])]
        if wide:
            raise SolverspaceError(f"column {wide[0]!r} holds integers beyond 64 bits, which Parquet cannot store",
                                   hint="write .csv or .jsonl instead")
        pq.write_table(pa.Table.from_arrays([pa.array(np.ascontiguousarray(table[n])) for n in names],
                                            names=names), self.handle)


def writer_class(fmt: str, header: Header) -> type[Writer]:
    """The writer for a format: `.npy` and Parquet stream when the header allows it."""
    if fmt == "csv":
        return CsvWriter
    if fmt == "jsonl":
        return JsonlWriter
    if fmt == "npy":
        return NpyWriter if header.dtype is not None and header.rows is not None else HeldNpyWriter
    if fmt == "parquet":
        return ParquetWriter if header.dtype is not None else HeldParquetWriter
    raise ValueError(f"unknown format {fmt!r}")


@contextmanager
def open_writer(path, fmt: str, header: "Header | Callable[[], Header]", *, sep: str = ",", option: str = "",
                format_csv: Callable[[np.ndarray, str], bytes] | None = None) -> Iterator[Writer]:
    """A `Writer` for `path` in format `fmt`: the file is written under a temporary name and
    appears only when the block ends normally (`core.output.atomic_output`; `option`, "-o",
    prefixes its messages). Parquet's pyarrow is looked for before the file is created.
    `header` may be a function giving the header, called once the temporary file exists: an
    .npy header states the row count, counting a big space takes long, and an interrupt while
    counting must find the temporary file to remove (tests/test_signals.py)."""
    if fmt == "parquet":
        require_pyarrow()
    path = Path(path)
    with atomic_output(path, "wb", option=option) as handle:
        if callable(header):
            header = header()
        writer = writer_class(fmt, header)(handle, path, header, sep, format_csv)
        try:
            yield writer
            writer.close()
        except BaseException:
            writer.abort()
            raise


def write_rows(path, columns, rows: Iterable[tuple], fmt: str, sep: str = ",") -> int:
    """Python rows (the reference's, the joined rows of a space with orders) as a whole file;
    the number of rows written."""
    with open_writer(path, fmt, Header(tuple(columns)), sep=sep) as writer:
        writer.rows(rows)
    return writer.written


def write_array(rows: np.ndarray, path, sep: str = ",", fmt: str | None = None) -> int:
    """A table held in memory (a sample), its strings as strings, as a whole file in the format
    of the file's extension (`format_of`) unless `fmt` is given."""
    with open_writer(path, fmt or format_of(path), Header(rows.dtype.names), sep=sep, option="-o") as writer:
        writer.batch(rows)
    return writer.written


def write_batches(path, fmt: str, header: "Header | Callable[[], Header]", batches: Iterable[np.ndarray], *, sep: str = ",",
                  format_csv: Callable[[np.ndarray, str], bytes] | None = None) -> int:
    """Batches of rows (structured arrays of the header's dtype, categorical columns as codes)
    as a whole file, a batch at a time (memory bounded by one batch)."""
    with open_writer(path, fmt, header, sep=sep, format_csv=format_csv) as writer:
        for rows in batches:
            writer.batch(rows)
    return writer.written
