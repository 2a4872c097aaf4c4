"""Immutable records written out by hand, with the meaning of `@dataclass(frozen=True)`.

`@dataclass` compiles generated source for every class it makes (its `__init__`, `__repr__`,
`__eq__`, ...): about half a millisecond a class, paid by every process that imports the class.
The classes every command loads (the IR nodes, the model, the plan) are records instead: a class
names its fields in `__match_args__`; `Record`'s constructor sets each field once with
`object.__setattr__`, as a frozen dataclass's does (a class that checks its fields writes its own
`__init__`), and `Record` gives the rest as the frozen dataclass would have it:

- `==` between two records of the same class compares their fields' tuples (another class:
  `NotImplemented`), and `hash` is the hash of that tuple;
- `repr` is `Class(field=value!r, ...)` (the class's qualified name, every field);
- assigning or deleting an attribute raises `dataclasses.FrozenInstanceError`;
- `replace(**changes)` is `dataclasses.replace`: a new record, the other fields kept.

Pickling and copying are Python's defaults (a record without `__slots__` pickles its `__dict__`,
as a frozen dataclass does; `ir.Node` gives its slotted nodes a frozen slots dataclass's state).

    >>> class Point(Record):
    ...     __match_args__ = ("x", "y")
    ...     def __init__(self, x, y=0):
    ...         object.__setattr__(self, "x", x)
    ...         object.__setattr__(self, "y", y)
    >>> Point(1, 2), Point(1, 2) == Point(1, 2), Point(1).replace(y=5)
    (Point(x=1, y=2), True, Point(x=1, y=5))
"""
from __future__ import annotations

from operator import attrgetter


def field_values(names: tuple[str, ...]):
    """A function giving a record's field values as a tuple, in field order."""
    if not names:
        return lambda record: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda record: (get(record),)
    return attrgetter(*names)   # a tuple already, built in C


def bound(owner: str, names: tuple[str, ...], defaults: dict, args: tuple, kwargs: dict) -> tuple:
    """The field values of a constructor call by position and name, in field order, a field left
    out taking its value in `defaults` (the errors a dataclass's constructor raises for a missing,
    repeated or unknown one)."""
    if len(args) > len(names):
        raise TypeError(f"{owner}() takes {len(names)} arguments but {len(args)} were given")
    given = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"{owner}() got an unexpected keyword argument {name!r}")
        if name in given:
            raise TypeError(f"{owner}() got multiple values for argument {name!r}")
        given[name] = value
    missing = [name for name in names if name not in given and name not in defaults]
    if missing:
        raise TypeError(f"{owner}() missing required argument {missing[0]!r}")
    return tuple(given[name] if name in given else defaults[name] for name in names)


class Record:
    """Base of the hand-written immutable records (see the module docstring).

    Its constructor takes the fields in order, by position or by name, a field named in the
    class's `defaults` (name -> value) being optional, as a dataclass's does; a class whose fields
    need a check or a conversion writes its own `__init__`."""

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()
    defaults: dict = {}
    _values = staticmethod(field_values(()))

    def __init__(self, *args, **kwargs):
        names = self.__match_args__
        if kwargs or len(args) != len(names):
            args = bound(type(self).__qualname__, names, self.defaults, args, kwargs)
        for name, value in zip(names, args):
            object.__setattr__(self, name, value)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._values = staticmethod(field_values(cls.__match_args__))

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._values(self) == self._values(other)
        return NotImplemented

    def __hash__(self):
        return hash(self._values(self))

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{self.__class__.__qualname__}({fields})"

    def __setattr__(self, name, value):
        from dataclasses import FrozenInstanceError   # only on this error
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        from dataclasses import FrozenInstanceError
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def replace(self, **changes):
        """A copy with `changes` (field=value) made, as `dataclasses.replace`."""
        unknown = set(changes) - set(self.__match_args__)
        if unknown:
            raise TypeError(f"{self.__class__.__qualname__} has no field {sorted(unknown)[0]!r}")
        return type(self)(**{name: changes.get(name, getattr(self, name)) for name in self.__match_args__})


class MutableRecord(Record):
    """A record whose fields may be assigned: the meaning of a plain `@dataclass` (`==` over the
    fields, the same repr, and unhashable, as a dataclass with `eq` and without `frozen` is).
    A subclass's `__init__` sets its fields as plain attributes."""

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__
    __hash__ = None
