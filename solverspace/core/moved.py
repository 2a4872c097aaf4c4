"""The import paths of modules that moved into the package's folders, kept working for one release:
importing an old path warns (`FutureWarning`, naming the new path) and gives the module at the new
path itself (the same object, so a name set on it is set on the new module).

The old files are gone (so that a merge follows each file to its new place); this table and a finder
on `sys.meta_path` (`solverspace/__init__.py` installs it) answer for them, as Optuna's
`integration/dask.py` answers for the integrations that moved out of Optuna.

`python -m solverspace.core.moved FILE ...` rewrites the old paths in Python or text files to the
new ones (dotted names, and `from solverspace import <old module>`), and names each file it changes.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import warnings
from pathlib import Path

#: old import path -> new import path
MOVED = {
    "solverspace.loader": "solverspace.io.loader",
    "solverspace.t1": "solverspace.io.t1",
    "solverspace.t1_read": "solverspace.io.t1.read",
    "solverspace.t1_write": "solverspace.io.t1.write",
    "solverspace.t1_format": "solverspace.io.t1.format",
    "solverspace.t1_conditions": "solverspace.io.t1.conditions",
    "solverspace.t1_python": "solverspace.io.t1.predicates",
    "solverspace.backends": "solverspace.registry.backends",
    "solverspace.factories": "solverspace.registry.factories",
    "solverspace.auto": "solverspace.registry.auto",
    "solverspace.background": "solverspace.registry.background",
    "solverspace.designs": "solverspace.moves.designs",
    "solverspace.repair": "solverspace.moves.repair",
    "solverspace.analysis.value_lists": "solverspace.moves.value_lists",
    "solverspace.analysis.neighbors": "solverspace.moves.neighbors",
    "solverspace.sweep": "solverspace.scale.sweep",
    "solverspace.sampling": "solverspace.scale.sampling",
    "solverspace.dask_engine": "solverspace.scale.dask_engine",
    "solverspace.dask_tasks": "solverspace.scale.dask_tasks",
    "solverspace.optuna": "solverspace.integrations.optuna.sampler",
    "solverspace.kernel_tuner": "solverspace.integrations.kernel_tuner.searchspace",
    "solverspace.kt_cache": "solverspace.integrations.kernel_tuner.cache",
}


class MovedLoader:
    """Loads an old path as the module at its new path, with a `FutureWarning`."""

    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec):
        warnings.warn(f"{spec.name} has moved to {self.new}; import it from there (the old path goes in the "
                      f"next release)", FutureWarning, stacklevel=2)
        return importlib.import_module(self.new)

    def exec_module(self, module) -> None:
        """Nothing to run: the module at the new path has run."""


class MovedFinder:
    """A `sys.meta_path` finder for the old paths of `MOVED` (after the ordinary finders)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        new = MOVED.get(name)
        return None if new is None else importlib.util.spec_from_loader(name, MovedLoader(new))


def rewritten(text: str) -> str:
    r"""`text` with every old path of `MOVED` written as its new path: dotted names (`solverspace.t1_read`,
    `solverspace.t1_read.MAX_WORK`) and `from <package> import <old module>[ as name]` of one name.

    >>> rewritten("from solverspace.kt_cache import CacheWriter\nfrom solverspace import t1_read as t1\n")
    'from solverspace.integrations.kernel_tuner.cache import CacheWriter\nfrom solverspace.io.t1 import read as t1\n'
    >>> rewritten("from solverspace import background")
    'from solverspace.registry import background'
    """
    for old, new in sorted(MOVED.items(), key=lambda item: -len(item[0])):
        package, leaf = old.rsplit(".", 1)
        new_package, new_leaf = new.rsplit(".", 1)

        def one_name(match, new_package=new_package, new_leaf=new_leaf, leaf=leaf):
            alias = match.group(2) or (f" as {leaf}" if new_leaf != leaf else "")
            return f"{match.group(1)}from {new_package} import {new_leaf}{alias}"
        text = re.sub(rf"^(\s*)from {re.escape(package)} import {leaf}\b( as \w+)?(?![ \t]*[,.\w])", one_name, text,
                      flags=re.M)
        text = re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, text)
    return text


def main(argv: list[str]) -> int:
    for name in argv:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        new = rewritten(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
