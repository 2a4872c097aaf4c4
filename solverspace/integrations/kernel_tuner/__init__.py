"""Kernel Tuner on our space (the optional extra `solverspace[kerneltuner]`): `searchspace` (a lazy
`Searchspace` with the interface Kernel Tuner 1.5's strategies use; `tune_kernel` and `run_kernel`
with Kernel Tuner's signatures; `build_space` from its `tune_params` and restrictions), `strategy`
(solverspace's own search strategies as Kernel Tuner strategies: `tune_kernel` here also takes
`strategy="solverspace_model"` or `"solverspace_random"`; `KernelTunerStrategy`) and `cache`
(Kernel Tuner cache files and T4 results files as `tune` sinks and measurements).

The names are read from their module when first used: the cache writers do not import the
`Searchspace` adapter, nor Kernel Tuner.
"""
from __future__ import annotations

from solverspace.core.lazy import lazy_names

_STRUCTURE = {
    "searchspace": ["DEFAULT_BLOCK_SIZE_NAMES", "MATERIALIZE_LIMIT", "NEIGHBOR_METHODS", "Searchspace",
                    "broken_restrictions", "build_space", "remember_units", "remembered_units",
                    "replaced_searchspace", "run_kernel", "seeded_draws"],
    "strategy": ["KernelTunerStrategy", "tune_kernel"],
    "cache": ["ERROR_STRINGS", "CacheCheck", "CacheMeasure", "CacheWriter", "T4Writer", "cache_key", "check_cache",
              "entry_error", "read_cache"],
}
__getattr__, __dir__ = lazy_names(__name__, _STRUCTURE)
__all__ = [name for names in _STRUCTURE.values() for name in names]
