"""`Space`: the Python API facade over load -> model -> plan -> backend."""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Callable, Iterator

from .backends import get_backend
from .check import CheckResult, check
from .dag import DAG
from .errors import SpaceDefinitionError, did_you_mean
from .loader import load, load_source
from .model import Model
from .options import check_separator
from .output import atomic_output, check_output_path
from .plan import Plan, make_plan
from .reference import Stats


class Space:
    """A loaded space with its plan.

    >>> space = Space.from_source("x = range(1, 5)\\ny = range(x, 5)\\nrequire(x + y < 6)")
    >>> space.count()
    6
    >>> list(space.rows())
    [(1, 1), (1, 2), (1, 3), (1, 4), (2, 2), (2, 3)]
    """

    def __init__(self, model: Model, plan: Plan | None = None):
        self.model = model
        self.plan = plan or make_plan(model)

    @classmethod
    def load(cls, space: str | Path, settings: dict | None = None, **options) -> "Space":
        """Load a space file or a built-in space (`"gemm"`), with setting overrides."""
        return cls(load(space, settings, **options))

    @classmethod
    def from_source(cls, source: str, settings: dict | None = None, filename: str = "<space>", **options) -> "Space":
        return cls(load_source(source, filename, settings, **options))

    # ------------------------------------------------------------------------------ facts
    @property
    def parameters(self) -> tuple[str, ...]:
        return self.model.parameter_names

    @property
    def settings(self) -> dict:
        return {s.name: s.value for s in self.model.settings}

    @property
    def dag(self) -> DAG:
        return self.model.analysis.dag

    def columns(self, with_derived=()) -> tuple[str, ...]:
        return self.parameters + tuple(self._check_derived(with_derived))

    def _check_derived(self, names):
        for name in names:
            if name not in self.model.derived_value:
                raise SpaceDefinitionError(f"{name!r} is not a derived value of this space",
                                           hint=did_you_mean(name, self.model.derived_value))
        return tuple(names)

    # ------------------------------------------------------------------------------ answers
    def stats(self, backend="reference", *, strict: bool = False,
              progress: Callable[[int, int], None] | None = None, **options) -> Stats:
        """Count valid configurations, with the undefined-operation tally. `backend` is a name
        ("reference", "c", ...) or a backend object; `options` configure it (e.g. threads=)."""
        return get_backend(backend, **options).count(self.plan, strict=strict, progress=progress)

    def count(self, backend="reference", *, strict: bool = False, **options) -> int:
        return self.stats(backend, strict=strict, **options).count

    def rows(self, backend="reference", *, strict: bool = False, with_derived=(),
             progress: Callable[[int, int], None] | None = None, **options) -> Iterator[tuple]:
        """Valid configurations, parameter values in definition order (plus derived columns)."""
        return get_backend(backend, **options).rows(self.plan, strict=strict,
                                                    with_derived=self._check_derived(with_derived), progress=progress)

    def to_array(self, backend="c", *, strict: bool = False, with_derived=(), progress=None, **options):
        """All valid configurations as a NumPy structured array (one field per column, the
        smallest integer type that holds its proven range; categorical columns as strings)."""
        chosen = get_backend(backend, **options)
        if hasattr(chosen, "array"):
            return chosen.array(self.plan, strict=strict, with_derived=self._check_derived(with_derived),
                                progress=progress)
        rows = list(chosen.rows(self.plan, strict=strict, with_derived=with_derived, progress=progress))
        return rows_to_array(rows, self.columns(with_derived))

    def to_frame(self, backend="c", **kwargs):
        """All valid configurations as a pandas DataFrame (needs pandas; `to_array` otherwise)."""
        try:
            import pandas
        except ImportError:
            raise SpaceDefinitionError("to_frame needs pandas",
                                       hint="pip install pandas, or use to_array() for a NumPy structured array") from None
        return pandas.DataFrame(self.to_array(backend, **kwargs))

    # ------------------------------------------------------------------------------ sampling
    def sample(self, n: int, seed: int = 0, *, replace: bool = False, method: str = "exact", threads=None):
        """n valid configurations drawn uniformly at random (distinct unless `replace`), as a
        structured array; identical for the same seed whatever the thread count."""
        from .sampling import sample
        return sample(self, n, seed, replace=replace, method=method, threads=threads)[0]

    def __len__(self) -> int:
        size = self._sampler().size()
        if size > sys.maxsize:  # len() must fit in a C ssize_t
            raise OverflowError(f"the space has {size} configurations, more than len() can return; "
                                f"space.count('c') gives the exact count")
        return size

    def __getitem__(self, position: int) -> tuple:
        """The configuration at `position` of the canonical (C enumerator) order."""
        size = self._sampler().size()
        if not isinstance(position, (int,)) or isinstance(position, bool):
            raise TypeError(f"space indices are integers, not {type(position).__name__}")
        if position < 0:
            position += size
        if not 0 <= position < size:
            raise IndexError(f"configuration index {position} out of range: the space has {size} configurations")
        return tuple(self._sampler().rows_at([position])[0].tolist())

    def index(self, config) -> int:
        """Position of a valid configuration (dict or tuple in column order) in the canonical order."""
        values = dict(config) if isinstance(config, dict) else dict(zip(self.parameters, config))
        missing = [p for p in self.parameters if p not in values]
        if missing:
            raise SpaceDefinitionError(f"configuration lacks parameters {missing}")
        position = self._sampler().index(values)
        if position is None:
            raise ValueError(f"{values} is not a valid configuration of this space")
        return position

    def _sampler(self):
        if getattr(self, "_cached_sampler", None) is None:
            from .sampling import get_sampler
            self._cached_sampler = get_sampler(self, "exact")
        return self._cached_sampler

    def write(self, path: str | Path, backend="reference", *, fmt: str | None = None, strict: bool = False,
              with_derived=(), progress=None, sep: str = ",", **options) -> int:
        """Write every valid configuration to CSV (header + rows), JSON Lines (`.jsonl`: one
        object per row), `.npy` or Parquet (`.parquet`, needs the `parquet` extra); the format
        comes from the file's extension (anything else is CSV) unless `fmt` is given. The file
        appears only when complete."""
        path = check_output_path(path)
        fmt = fmt or format_of(path)
        if fmt not in FORMATS.values():
            raise SpaceDefinitionError(f"unknown output format {fmt!r}",
                                       hint=f"formats: {', '.join(sorted(set(FORMATS.values())))}")
        check_separator(sep)
        chosen = get_backend(backend, **options)
        with_derived = self._check_derived(with_derived)
        if hasattr(chosen, "write"):
            return chosen.write(self.plan, path, fmt, strict=strict, with_derived=with_derived,
                                progress=progress, sep=sep)
        if fmt not in ("csv", "jsonl"):
            raise SpaceDefinitionError(f"the {getattr(chosen, 'name', backend)} backend writes CSV and JSON Lines only",
                                       hint="use --backend c for .npy and .parquet output")
        return self.write_csv(path, chosen, strict=strict, with_derived=with_derived, progress=progress, sep=sep,
                              _jsonl=fmt == "jsonl")

    def write_csv(self, path: str | Path, backend="reference", *, strict: bool = False,
                  with_derived=(), progress=None, sep: str = ",", _jsonl: bool = False, **options) -> int:
        """Write a header and one row per configuration, row by row from `rows()`; the file
        appears only when complete."""
        path = check_output_path(path)
        check_separator(sep)
        columns = self.columns(with_derived)
        written = 0
        if _jsonl:
            with atomic_output(path, "w", encoding="utf-8") as handle:
                for row in self.rows(backend, strict=strict, with_derived=with_derived, progress=progress,
                                     **options):
                    handle.write(json.dumps(dict(zip(columns, row)), default=str) + "\n")
                    written += 1
            return written
        with atomic_output(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle, delimiter=sep, lineterminator="\n")
            writer.writerow(columns)
            for row in self.rows(backend, strict=strict, with_derived=with_derived, progress=progress,
                                 **options):
                writer.writerow(row)
                written += 1
        return written

    def check(self, assignment: dict) -> CheckResult:
        """Validity of a full assignment with every rejecting rule, or a completion of a partial one."""
        return check(self.plan, assignment)

    def __repr__(self):
        return f"Space({self.model.source!r}, parameters={list(self.parameters)})"


FORMATS = {".csv": "csv", ".npy": "npy", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


def format_of(path: str | Path) -> str:
    """The output format for a file name: by extension (`FORMATS`), CSV for any other.

    >>> format_of("gemm.parquet"), format_of("gemm.jsonl"), format_of("gemm.txt")
    ('parquet', 'jsonl', 'csv')
    """
    return FORMATS.get(Path(path).suffix.lower(), "csv")


def rows_to_array(rows: list[tuple], columns):
    """Python rows as a structured array: int64 columns, or str columns for categorical values."""
    import numpy as np
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
