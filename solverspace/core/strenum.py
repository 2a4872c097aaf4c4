"""`StrEnum`: an enum whose members are strings and print as their value (3.10's `enum.StrEnum`).

A member equals, hashes and formats like its value (`ParameterKind.CLOSURE == "closure"`,
`f"{ParameterKind.CLOSURE}" == "closure"`), so code and messages written for plain strings keep
working; only `repr` names the enum.

    >>> class Colour(StrEnum):
    ...     RED = "red"
    >>> Colour.RED == "red", str(Colour.RED), f"[{Colour.RED}]", f"{Colour.RED:>5}", {"red": 1}[Colour.RED]
    (True, 'red', '[red]', '  red', 1)
"""
from __future__ import annotations

import enum


class StrEnum(str, enum.Enum):
    """Members are `str` instances equal to their values; `str()` and `format()` give the value
    on every Python version (a plain `(str, Enum)` prints `Class.MEMBER` on some)."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(str.__str__(self), spec)
