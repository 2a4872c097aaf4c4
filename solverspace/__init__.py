"""solverspace: describe an autotuning search space in Python; count, sample and list it.

    >>> from solverspace import Space
    >>> Space.load("gemm", {"device": "k40c"}).parameters[:3]
    ('dim_m', 'dim_n', 'blk_m')
"""
__version__ = "0.1.0"   # the one version: pyproject.toml reads it from here (`[tool.setuptools.dynamic]`)

import logging as _logging
import sys as _sys
from importlib.util import spec_from_file_location as _spec_from_file_location
from pathlib import Path as _Path


class _CheckoutFinder:
    """The repository keeps translators/, gemm/ and validation/ beside this folder; an installed
    wheel has them inside it (pyproject.toml's package-dir). Run from a checkout (the tests,
    `python -m`), these three, and nothing else of the checkout, are found under the same names."""
    root = _Path(__file__).resolve().parent.parent
    mapped = {"solverspace.translators": "translators", "solverspace.gemm": "gemm",
              "solverspace.validation": "validation"}

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        folder = cls.mapped.get(name)
        if folder is None:
            return None
        return _spec_from_file_location(name, cls.root / folder / "__init__.py",
                                        submodule_search_locations=[str(cls.root / folder)])


if not (_Path(__file__).parent / "translators").is_dir() and (_CheckoutFinder.root / "translators" / "__init__.py").is_file():
    _sys.meta_path.append(_CheckoutFinder)

from solverspace.core.moved import MovedFinder as _MovedFinder  # noqa: E402  (old paths of moved modules)

if _MovedFinder not in _sys.meta_path:
    _sys.meta_path.append(_MovedFinder)

# The library logs through the `solverspace` logger and its children (`logging.getLogger(__name__)`)
# and prints nothing itself; a program that wants the messages configures logging (the command
# line does: `-q`, `-v`). The NullHandler keeps Python's last-resort handler from printing them.
_logging.getLogger("solverspace").addHandler(_logging.NullHandler())

from solverspace.core.errors import (
    BackendUnavailableError, OptionError, OutputError, SettingError, SolverspaceError, SolverspaceNote,
    SolverspaceWarning, SpaceDefinitionError, SpaceEvaluationError, UndefinedOperationError)
from solverspace.core.cache import cache_info, cache_location, clear_cache
from solverspace.io.loader import load, load_source
from solverspace.core.npy import read_npy
from solverspace.space import Space


def __getattr__(name):
    """`export_t1` and `load_t1` from `solverspace.io.t1`, imported when first asked for (a process
    that reads no T1 file does not import the T1 modules)."""
    if name in ("export_t1", "load_t1"):
        from solverspace.io import t1
        return getattr(t1, name)
    raise AttributeError(f"module 'solverspace' has no attribute {name!r}")


__all__ = ["Space", "load", "load_source", "load_t1", "export_t1", "SolverspaceError", "SpaceDefinitionError", "SettingError",
           "SpaceEvaluationError", "UndefinedOperationError", "BackendUnavailableError", "OptionError", "OutputError",
           "SolverspaceWarning", "SolverspaceNote", "read_npy", "cache_info", "cache_location", "clear_cache"]
