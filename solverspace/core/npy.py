"""`.npy` files with categorical columns: integer codes in the array, strings in a sidecar.

A categorical column is stored in `FILE.npy` as the smallest integer type that holds its codes,
and `FILE.npy.categories.json` holds each such column's table: code i stands for
`columns[name][i]`. Strings in the array itself (`<U9` for a 9-character name) would take 36
bytes a value and make the file several times the size of the CSV. `enumerate -o`, `sample -o`
and `Space.write` all write this layout; `read_npy` reads it back. A file without categorical
columns has no sidecar (and a stale one of the same name is removed). The files are written by
`solverspace.core.formats` (its `.npy` writers and `write_categories`); this module names the
layout and reads it back.
"""
from __future__ import annotations

from pathlib import Path

from solverspace.core.errors import SolverspaceError
from solverspace.core.sources import check_regular, read_json, read_text

CATEGORIES_SUFFIX = ".categories.json"
FORMAT = "solverspace-npy-categories-1"


def categories_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + CATEGORIES_SUFFIX)


def read_npy(path: str | Path, decode: bool = True):
    """A `.npy` file written by solverspace: with `decode`, a structured array whose categorical
    columns hold their strings; without, `(codes array, {column: table})` as stored (compact).

    >>> import tempfile, pathlib
    >>> from solverspace import Space
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.npy"
    >>> Space.from_source("x = range(1, 3)\\nk = iterator(['a', 'bb'])").write(path)
    4
    >>> read_npy(path).tolist()
    [(1, 'a'), (1, 'bb'), (2, 'a'), (2, 'bb')]
    """
    import numpy as np
    check_regular(path, ".npy file", error=SolverspaceError)
    array = np.load(path, allow_pickle=False)
    sidecar = categories_path(path)
    tables: dict[str, list[str]] = {}
    if sidecar.exists():
        hint = "write the file again (enumerate/sample -o); the two files go together"
        meta = read_json(read_text(sidecar, "category table", error=SolverspaceError, hint=hint), sidecar,
                         "category table", error=SolverspaceError, hint=hint,
                         invalid=f"is not a category table of {str(path)!r} (not JSON)")
        tables = meta.get("columns", {}) if isinstance(meta, dict) else None
        if not isinstance(tables, dict) or not all(isinstance(t, list) for t in tables.values()):
            raise SolverspaceError(f"{sidecar}: not a category table of {path}: expected "
                                   "{\"columns\": {name: [values]}}", hint=hint)
        _check(path, array, tables, meta.get("rows"))
    if not decode:
        return array, tables
    if not tables:
        return array
    fields = [(name, f"<U{max((len(s) for s in tables[name]), default=1)}") if name in tables
              else (name, array.dtype[name]) for name in array.dtype.names]
    out = np.empty(len(array), dtype=fields)
    for name in array.dtype.names:
        out[name] = np.asarray(tables[name])[array[name]] if name in tables else array[name]
    return out


def _check(path, array, tables, rows) -> None:
    """The sidecar belongs to this array: same row count, its columns present with codes in range."""
    names = array.dtype.names or ()
    problem = None
    if rows is not None and rows != len(array):
        problem = f"it describes {rows} rows, the file has {len(array)}"
    for name, table in tables.items():
        if problem:
            break
        if name not in names or array.dtype[name].kind not in "iu":
            problem = f"column {name!r} is not an integer column of the file"
        elif len(array) and (array[name].min() < 0 or array[name].max() >= len(table)):
            problem = f"column {name!r} has codes outside its table of {len(table)} values"
    if problem:
        raise SolverspaceError(f"{categories_path(path)} does not match {path}: {problem}",
                               hint="write the file again (enumerate/sample -o); the two files go together")
