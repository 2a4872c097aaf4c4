"""`Space`: the Python API facade over load -> model -> plan -> backend."""
from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from .backends import get_backend
from .check import CheckResult, check
from .dag import DAG
from .errors import SpaceDefinitionError, did_you_mean
from .loader import load, load_source
from .model import Model
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
        return DAG(self.model)

    def columns(self, with_derived=()) -> tuple[str, ...]:
        return self.parameters + tuple(self._check_derived(with_derived))

    def _check_derived(self, names):
        for name in names:
            if name not in self.model.derived_value:
                raise SpaceDefinitionError(f"{name!r} is not a derived value of this space",
                                           hint=did_you_mean(name, self.model.derived_value))
        return tuple(names)

    # ------------------------------------------------------------------------------ answers
    def stats(self, backend: str = "reference", *, strict: bool = False,
              progress: Callable[[int, int], None] | None = None) -> Stats:
        """Count valid configurations, with the undefined-operation tally."""
        return get_backend(backend).count(self.plan, strict=strict, progress=progress)

    def count(self, backend: str = "reference", *, strict: bool = False) -> int:
        return self.stats(backend, strict=strict).count

    def rows(self, backend: str = "reference", *, strict: bool = False, with_derived=(),
             progress: Callable[[int, int], None] | None = None) -> Iterator[tuple]:
        """Valid configurations, parameter values in definition order (plus derived columns)."""
        return get_backend(backend).rows(self.plan, strict=strict, with_derived=self._check_derived(with_derived),
                                         progress=progress)

    def write_csv(self, path: str | Path, backend: str = "reference", *, strict: bool = False,
                  with_derived=(), progress=None) -> int:
        """Write a header and one row per configuration; the file appears only when complete."""
        path = Path(path)
        columns = self.columns(with_derived)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent or ".")
        written = 0
        try:
            with os.fdopen(fd, "w", newline="") as handle:
                writer = csv.writer(handle, lineterminator="\n")
                writer.writerow(columns)
                for row in self.rows(backend, strict=strict, with_derived=with_derived, progress=progress):
                    writer.writerow(row)
                    written += 1
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        return written

    def check(self, assignment: dict) -> CheckResult:
        """Validity of a full assignment with every rejecting rule, or a completion of a partial one."""
        return check(self.plan, assignment)

    def __repr__(self):
        return f"Space({self.model.source!r}, parameters={list(self.parameters)})"
