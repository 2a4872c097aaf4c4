"""Optuna on the valid set (the optional extra `solverspace[optuna]`): `SolverspaceSampler` proposes
only valid configurations never tried in the study, `suggest` asks a trial for a configuration of
the space, `export_records` and `OptunaRecorder` put `tune`'s records in an Optuna storage.

The names live in `sampler` (read there for the design), imported when one is first read.
"""
from __future__ import annotations

from solverspace.core.lazy import lazy_names

_STRUCTURE = {"sampler": ["BaseSamplerError", "Codec", "OptunaRecorder", "SolverspaceSampler", "SpaceExhaustedError",
                          "StudyMismatchError", "codec", "distribution_for", "distributions", "export_records",
                          "read_records", "suggest"]}
__getattr__, __dir__ = lazy_names(__name__, _STRUCTURE)
__all__ = [name for names in _STRUCTURE.values() for name in names]
