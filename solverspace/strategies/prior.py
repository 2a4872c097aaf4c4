"""Another device's measurements of the same space, read as a prior on the *ranking*.

Times are not comparable across GPUs; ranks mostly are. `RankPrior` keeps, for every valid
configuration the source measured, its normalised rank there (0 the fastest, 1 the slowest; a
configuration that failed there ranks 1), and gives a configuration it did not measure the middle
(0.5). The model-based strategy starts from the prior's best configurations and uses the rank as
one more feature of its surrogate, so the new device's measurements decide how much it counts.

Sources: a Kernel Tuner cache file (`.json`, or `.json.gz`), read with `kt_cache.read_cache`
(values looked up by the cache's `tune_params_keys`), or a `tune` SQLite database (every run's
`measurements` rows; several runs of one space are merged, the smallest time kept). Entries that
are not valid configurations of the space are skipped and counted (`skipped`).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from solverspace.analysis.tune_db import measured_values
from solverspace.core.sources import check_regular
from solverspace.core.errors import OptionError


class RankPrior:
    """Normalised ranks of configurations measured elsewhere (see the module's documentation)."""

    def __init__(self, space, times: dict, *, source: str = "", skipped: int = 0):
        names = space.parameters
        valid = {}
        for config, time in times.items():
            config = tuple(config)
            if len(config) == len(names) and _valid(space, config):
                valid[config] = time
            else:
                skipped += 1
        if not valid:
            raise OptionError(f"prior {source!r}: none of its {len(times)} entries is a valid configuration of "
                              "this space", hint="give measurements of the same space (its parameters and values)")
        ran = sorted((t, c) for c, t in valid.items() if t is not None)
        self.order = [c for _, c in ran]
        n = max(len(ran) - 1, 1)
        self.rank = {c: i / n for i, c in enumerate(self.order)}
        self.rank.update({c: 1.0 for c, t in valid.items() if t is None})
        self.source, self.skipped, self.size = source, skipped, len(valid)

    def ranked(self) -> list[tuple]:
        """The configurations that ran there, fastest first."""
        return list(self.order)

    def scores(self, configs) -> np.ndarray:
        """Each configuration's normalised rank there (0.5 when not measured there)."""
        return np.array([self.rank.get(tuple(c), 0.5) for c in configs])

    @classmethod
    def from_path(cls, space, path) -> "RankPrior":
        """From a Kernel Tuner cache (`.json`, `.json.gz`) or a `tune` database (SQLite)."""
        path = Path(path)
        hint = "give a Kernel Tuner cache (.json, .json.gz) or a tune database (.sqlite)"
        if not path.exists():
            raise OptionError(f"prior {str(path)!r}: no such file", hint=hint)
        check_regular(path, "prior", error=OptionError, hint=hint)   # a FIFO or a device: refused before opening
        with open(path, "rb") as f:
            head = f.read(16)
        if head.startswith(b"SQLite format 3"):
            return cls(space, _database_times(space, path), source=str(path))
        return cls(space, _cache_times(space, path), source=str(path))


def _valid(space, config: tuple) -> bool:
    try:
        return space.is_valid(config)
    except (ValueError, TypeError):   # a value in no value list
        return False


def _cache_times(space, path: Path) -> dict:
    from solverspace.integrations.kernel_tuner.cache import read_cache   # .json.gz too
    data = read_cache(path)
    keys = data["tune_params_keys"]
    missing = [n for n in space.parameters if n not in keys]
    if missing:
        raise OptionError(f"prior {str(path)!r}: the cache has no parameter {missing[0]!r} of this space "
                          f"(it has {', '.join(keys)})", hint="give a cache of the same space")
    times: dict = {}
    for entry in data["cache"].values():
        if not isinstance(entry, dict):
            continue
        config = tuple(entry.get(n) for n in space.parameters)
        time = entry.get("time")
        ok = "__error__" not in entry and isinstance(time, (int, float)) and time == time
        times[config] = float(time) if ok else None
    return times


def _database_times(space, path: Path) -> dict:
    rows = measured_values(path)
    times: dict = {}
    for config, value, status in rows:
        key = tuple(tuple(v) if isinstance(v, list) else v for v in (config.get(n) for n in space.parameters))
        ran = status in ("ok", "below bound") and value is not None
        if ran:
            old = times.get(key)
            times[key] = value if old is None else min(old, value)
        else:
            times.setdefault(key, None)
    return times
