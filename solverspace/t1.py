"""T1 interop: the public names of the T1 reader (`t1_read`) and writer (`t1_write`), in one place.

T1 is the autotuning community's tuning-problem JSON format: `ConfigurationSpace.TuningParameters[]`
(`Name`, `Type`, `Values`) and `ConfigurationSpace.Conditions[]` (`Parameters`, `Expression`).

- `t1_read`: T1 JSON -> `Model` (`load_t1`, `load_t1_text`); never runs the file's strings.
- `t1_write`: `Model` -> T1 JSON (`export_t1`, `write_t1`).
- `t1_format`: what both share (the T1 types, the value-list limit).

This module only re-exports; limits are read where they are defined (monkeypatch
`solverspace.t1_read.MAX_WORK`, not `solverspace.t1.MAX_WORK`).
"""
from __future__ import annotations

from solverspace.t1_format import MAX_VALUES, T1_TYPES
from solverspace.t1_read import MAX_WORK, load_t1, load_t1_text
from solverspace.t1_write import MAX_EXPORT_COMBINATIONS, T1ExportError, export_t1, write_t1

__all__ = ["load_t1", "load_t1_text", "export_t1", "write_t1", "T1ExportError",
           "T1_TYPES", "MAX_VALUES", "MAX_WORK", "MAX_EXPORT_COMBINATIONS"]
