"""The T1 format's vocabulary shared by the reader (`t1.read`) and the writer (`t1.write`).

A T1 file describes a space as `ConfigurationSpace.TuningParameters[]` (`Name`, `Type`,
`Values`) and `ConfigurationSpace.Conditions[]` (`Parameters`, `Expression`).
"""
from __future__ import annotations

T1_TYPES = ("int", "uint", "float", "bool", "string")
MAX_VALUES = 1_000_000          # the longest value list a `Values` string may produce (or export may write)
