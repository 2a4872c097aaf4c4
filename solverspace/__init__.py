"""solverspace: describe an autotuning search space in Python; count, sample and list it.

    >>> from solverspace import Space
    >>> Space.load("gemm", {"device": "k40c"}).parameters[:3]
    ('dim_m', 'dim_n', 'blk_m')
"""
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
