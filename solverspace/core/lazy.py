"""Tables of strings, each name imported on first use: a package's public names read from its
modules (`lazy_names`, the pattern of Optuna's `integration/__init__.py`, `_import_structure`), and
rows that name what they run as `"module:attr"` (`resolve`; the backend registry's factories).
Importing the table imports none of the modules it names, so a process pays only for the modules
whose names it uses.

    >>> getattr_, dir_ = lazy_names("json", {"decoder": ["JSONDecodeError"]})
    >>> getattr_("JSONDecodeError").__name__
    'JSONDecodeError'
    >>> resolve("json.decoder:JSONDecoder.decode").__qualname__
    'JSONDecoder.decode'
"""
from __future__ import annotations

import importlib
import sys


def lazy_names(package: str, structure: dict[str, list[str]]):
    """The package's `__getattr__` and `__dir__` over `structure` (submodule -> the names it
    exports): a name is read from its submodule, imported when the name is first read, and kept in
    the package (later reads are plain attribute reads)."""
    where = {name: module for module, names in structure.items() for name in names}

    def __getattr__(name: str):
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__


def resolve(target: str):
    """The object a `"module:attr"` string names (`attr` may be dotted), its module imported now."""
    module, _, attr = target.partition(":")
    found = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        found = getattr(found, part)
    return found
