"""Other tuners on the valid set, each an optional extra in a folder of its own: `optuna/` (Optuna's
samplers propose only valid, untried configurations; `tune`'s records in an Optuna storage) and
`kernel_tuner/` (Kernel Tuner's strategies on our space; its cache files as `tune` records).

Nothing below this folder's layer imports it (core, the language, the analysis, the backends, the
registry and the API; `tests/test_layers.py`). Each package here names its public names in a table
of strings (`solverspace.core.lazy.lazy_names`): importing it imports none of its modules, so
`from solverspace.integrations.kernel_tuner import CacheWriter` does not import the `Searchspace`
adapter, and a missing extra is named by the module that needs it, when it is first used.

    >>> import solverspace.integrations.kernel_tuner as kt
    >>> kt.cache_key([1, "a"])
    '1,a'
"""
from __future__ import annotations

#: Each integration: its package and the extra that installs what it needs.
INTEGRATIONS = {"optuna": ("solverspace.integrations.optuna", "optuna"),
                "kernel_tuner": ("solverspace.integrations.kernel_tuner", "kerneltuner")}
