"""solverspace: describe an autotuning search space in Python; count, sample and list it.

    >>> from solverspace import Space
    >>> Space.load("gemm", {"device": "k40c"}).parameters[:3]
    ('dim_m', 'dim_n', 'blk_m')
"""
from pathlib import Path as _Path

# The repository keeps translators/, gemm/ and validation/ beside this folder; an installed wheel
# has them inside it (pyproject.toml's package-dir). Run from a checkout (the tests, `python -m`),
# the subpackages are found beside it: `solverspace.translators` is one name in both layouts.
_CHECKOUT = _Path(__file__).resolve().parent.parent
if not (_Path(__file__).parent / "translators").is_dir() and (_CHECKOUT / "translators" / "__init__.py").is_file():
    __path__.append(str(_CHECKOUT))  # noqa: F821 (a package's __path__)

from .errors import (BackendUnavailableError, OptionError, OutputError, SettingError, SolverspaceError,
                     SolverspaceWarning, SpaceDefinitionError, SpaceEvaluationError, UndefinedOperationError)
from .loader import load, load_source
from .npy import read_npy
from .space import Space
from .t1 import export_t1, load_t1

__all__ = ["Space", "load", "load_source", "load_t1", "export_t1", "SolverspaceError", "SpaceDefinitionError", "SettingError",
           "SpaceEvaluationError", "UndefinedOperationError", "BackendUnavailableError", "OptionError", "OutputError",
           "SolverspaceWarning", "read_npy"]
__version__ = "0.1.0"
