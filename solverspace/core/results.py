"""Results and their file formats: the bottom layer every backend and the API share.

`Stats` (what a count saw), the output formats by file extension, NumPy structured arrays from
Python rows, and the writers for results held in memory (a sample, the reference backend's
rows). The compiled enumerator writes its own large outputs in batches (translators.c_backend)
with the same formats: the JSON Lines and Parquet helpers here are shared with it.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from solverspace.core.errors import BackendUnavailableError, OutputError, SolverspaceError
from solverspace.core.orders import format_row
from solverspace.core.output import atomic_output, is_stdout

if TYPE_CHECKING:  # NumPy is imported where used: a count imports none (issue 13)
    import numpy as np


@dataclass
class Stats:
    """What an enumeration saw: valid configurations and candidates lost to undefined operations
    (counted where the failing expression is evaluated, so the number depends on the plan)."""

    count: int = 0
    undefined: int = 0
    first_undefined: tuple[str, dict] | None = None
    undefined_by: dict[str, int] = field(default_factory=dict)


FORMATS = {".csv": "csv", ".npy": "npy", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


TEXT_FORMATS = ("csv", "jsonl")   # what standard output takes


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


def rows_to_array(rows: list[tuple], columns):
    """Python rows as a structured array: int64 columns, or str columns for categorical values
    and orders (`i>j>k`)."""
    import numpy as np
    rows = [format_row(r) for r in rows]  # an order is one string column: its items joined (orders.SEPARATOR)
    fields = []
    for j, name in enumerate(columns):
        values = [r[j] for r in rows]
        if any(isinstance(v, str) for v in values):
            fields.append((name, f"<U{max(len(str(v)) for v in values)}"))
        elif any(not isinstance(v, int) or not -(2 ** 63) <= v < 2 ** 63 for v in values):
            fields.append((name, object))  # fractions, and integers beyond 64 bits, as Python objects
        else:
            fields.append((name, np.int64))
    return np.array([tuple(r) for r in rows], dtype=fields)


def require_pyarrow():
    """`(pyarrow, pyarrow.parquet)`, or an error naming the extra to install."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise BackendUnavailableError("writing Parquet files needs pyarrow, which is not installed",
                                      hint="pip install 'solverspace[parquet]' (or: pip install 'pyarrow>=12')") from None
    return pyarrow, pyarrow.parquet


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


def csv_field(value, sep: str) -> str:
    """One CSV field, quoted where it holds the separator, a quote or a line break (`\\n` or
    `\\r`), as the C formatter (`translators.c_runtime`, `ss_put_field`) quotes: one rule for
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


def write_array(rows: np.ndarray, path, sep: str = ",") -> None:
    """A small in-memory result (a sample) as CSV, JSON Lines, .npy or Parquet (by the file's
    extension, as `enumerate`), appearing only when complete."""
    import numpy as np
    fmt = format_of(path)
    if fmt == "parquet":
        pa, pq = require_pyarrow()
    with atomic_output(path, "wb", option="-o") as handle:
        if fmt == "npy":  # categorical columns as codes, tables in the sidecar (solverspace.core.npy)
            from solverspace.core.npy import encode_strings, write_categories
            codes, tables = encode_strings(rows)
            with warnings.catch_warnings():  # format 3.0 for non-Latin-1 column names: expected, not news
                warnings.simplefilter("ignore", UserWarning)
                np.save(handle, codes)
            write_categories(path, tables, len(codes))
        elif fmt == "jsonl":
            handle.write(jsonl_bytes(rows))
        elif fmt == "parquet":
            names = list(rows.dtype.names)
            wide = [n for n in names if rows.dtype[n] == object and any(isinstance(v, int) for v in rows[n])]
            if wide:
                raise SolverspaceError(f"column {wide[0]!r} holds integers beyond 64 bits, which Parquet cannot store",
                                       hint="write .csv or .jsonl instead")
            pq.write_table(pa.Table.from_arrays([pa.array(np.ascontiguousarray(rows[n])) for n in names],
                                                names=names), handle)
        else:
            handle.write(csv_line(rows.dtype.names, sep).encode())
            for row in rows.tolist():
                handle.write(csv_line(row, sep).encode())


def write_rows(path, columns, rows: Iterable[tuple], fmt: str, sep: str = ",") -> int:
    """Rows streamed from a backend that lists in Python (the reference) as CSV (header + rows)
    or JSON Lines (one object per row); the file appears only when complete."""
    written = 0
    if fmt == "jsonl":
        with atomic_output(path, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(dict(zip(columns, format_row(row))), default=str) + "\n")
                written += 1
        return written
    with atomic_output(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(csv_line(columns, sep))
        for row in rows:
            handle.write(csv_line(format_row(row), sep))
            written += 1
    return written
