"""T1 interop: the public names of the T1 reader (`read`) and writer (`write`), in one place.

T1 is the autotuning community's tuning-problem JSON format: `ConfigurationSpace.TuningParameters[]`
(`Name`, `Type`, `Values`) and `ConfigurationSpace.Conditions[]` (`Parameters`, `Expression`).

- `read`: T1 JSON -> `Model` (`load_t1`, `load_t1_text`); never runs the file's strings;
  `conditions` reads a condition's syntax tree, `predicates` runs the Kernel Tuner restriction
  strings the reader cannot translate as Python predicates without `eval`.
- `write`: `Model` -> T1 JSON (`export_t1`, `write_t1`).
- `format`: what both share (the T1 types, the value-list limit).

This package only re-exports, each name imported from its module when first read (a process that
reads a T1 file does not import the writer); limits are read where they are defined (monkeypatch
`solverspace.io.t1.read.MAX_WORK`, not `solverspace.io.t1.MAX_WORK`).
"""
from __future__ import annotations

from solverspace.core.lazy import lazy_names

_STRUCTURE = {"format": ["MAX_VALUES", "T1_TYPES"], "read": ["MAX_WORK", "load_t1", "load_t1_text"],
              "write": ["MAX_EXPORT_COMBINATIONS", "T1ExportError", "export_t1", "write_t1"]}
__getattr__, __dir__ = lazy_names(__name__, _STRUCTURE)
__all__ = ["load_t1", "load_t1_text", "export_t1", "write_t1", "T1ExportError",
           "T1_TYPES", "MAX_VALUES", "MAX_WORK", "MAX_EXPORT_COMBINATIONS"]
