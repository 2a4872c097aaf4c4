"""The immutable model of a space: parameters, derived values, constraints and settings.

A `Model` is what `loader.load` produces and what every later stage reads. Settings are already
applied: they appear in expressions as constants, and `settings` records their values for display
and for reproducing a run.
"""
from __future__ import annotations

from functools import cached_property

from solverspace.lang import ir
from solverspace.core.errors import SpaceDefinitionError, python_name
from solverspace.core.records import Record
from solverspace.lang.printing import to_source
from solverspace.core.strenum import StrEnum


def one_spelling(spelled: dict, name: str, what: str, *, error=SpaceDefinitionError, where=None) -> str:
    """`name` as Python reads it (`errors.python_name`), recording its spelling in `spelled`
    (python name -> the spelling first given). Two spellings of one name (`ﬁ` and `fi`) would be
    one name in every expression while looking like two: refused, both named. The same spelling
    twice is the caller's to judge (a redefinition, a reassignment).

    >>> one_spelling({}, "ﬁ", "parameter")
    'fi'
    """
    same = python_name(name)
    first = spelled.setdefault(same, name)
    if first != name:
        raise error(f"{what} {first!r} and {what} {name!r} are one name, {same!r}: Python reads names "
                    "NFKC-normalised (PEP 3131), so an expression could not tell them apart",
                    where=where, hint=f"spell it one way ({same!r}), or give the two different names")
    return same


class ParameterKind(StrEnum):
    """How a parameter was defined (`explain` prints it)."""

    EXPRESSION = "expression"   # an iterator expression: `x = range(1, 9)`, `iterator([...])`, algebra
    DEFERRED = "deferred"       # an `@iterator` function, lowered to a domain
    CLOSURE = "closure"         # an `@iterator` generator function: values by calling it


class ConstraintKind(StrEnum):
    """How a constraint was defined (`explain` prints it)."""

    EXPRESSION = "expression"   # `require(...)` / `reject_if(...)`, or a T1 condition
    FUNCTION = "function"       # an `@require` / `@reject_if` function


def by_name(field: str) -> cached_property:
    """A property computed once: the records of the tuple field `field`, by their names."""
    return cached_property(lambda self: {item.name: item for item in getattr(self, field)})


# The classes below are records (`solverspace.core.records`): frozen dataclasses written out
# (a dataclass compiles generated source for each class, in every process that loads a space).
# Fields: `__match_args__`; changed copies: `replace(**changes)`.

class Definition(Record):
    """A named definition of the space whose meaning is one IR tree (the field `tree_field`)."""

    tree_field = "expr"
    defaults = {"line": None}

    @cached_property
    def depends_on(self) -> frozenset[str]:   # the tree never changes: walked once
        return ir.refs(getattr(self, self.tree_field))

    def __str__(self):
        return f"{self.name} = {to_source(getattr(self, self.tree_field))}"


class Parameter(Definition):
    """A tuning parameter (an iterator): its values are `domain` evaluated for its dependencies."""

    __match_args__ = ("name", "domain", "kind", "line")
    tree_field = "domain"
    name: str
    domain: ir.Domain
    kind: ParameterKind
    line: int | None


class Derived(Definition):
    """A derived value: an expression of parameters (and other derived values)."""

    __match_args__ = ("name", "expr", "line")
    name: str
    expr: ir.Expr
    line: int | None


class Constraint(Definition):
    """A pruning rule. `rejects=True`: the configuration is rejected when `expr` is true (the
    paper's conditions, `@reject_if`); `rejects=False`: it is kept only when `expr` is true
    (`@require`)."""

    __match_args__ = ("name", "expr", "rejects", "kind", "line")
    name: str
    expr: ir.Expr
    rejects: bool
    kind: ConstraintKind
    line: int | None

    @property
    def accept_expr(self) -> ir.Expr:
        """The expression that is true exactly for accepted configurations."""
        return ir.Not(self.expr) if self.rejects else self.expr

    @property
    def polarity(self) -> str:
        return "reject_if" if self.rejects else "require"

    def __str__(self):
        return f"{self.polarity} {self.name}: {to_source(self.expr)}"


class Setting(Record):
    """A named constant of the space that users may override."""

    __match_args__ = ("name", "value", "default", "choices", "doc", "line")
    name: str
    value: int | str | bool
    default: int | str | bool
    choices: tuple | None
    doc: str | None
    line: int | None

    defaults = {"choices": None, "doc": None, "line": None}

    @property
    def overridden(self) -> bool:
        return self.value != self.default or type(self.value) is not type(self.default)


class Model(Record):
    """A loaded space. Parameters keep definition order (the output column order)."""

    __match_args__ = ("source", "parameters", "derived", "constraints", "settings", "closure_globals",
                      "max_closure_values", "cost")
    source: str
    parameters: tuple[Parameter, ...]
    derived: tuple[Derived, ...]
    constraints: tuple[Constraint, ...]
    settings: tuple[Setting, ...]
    closure_globals: tuple[tuple[str, object], ...]
    max_closure_values: int
    cost: "ir.Expr | None"      # the declared performance model (`cost(...)`), if any

    defaults = {"closure_globals": (), "max_closure_values": 100_000, "cost": None}

    parameter = by_name("parameters")        # dict[str, Parameter]
    derived_value = by_name("derived")        # dict[str, Derived]
    constraint = by_name("constraints")       # dict[str, Constraint]
    setting = by_name("settings")             # dict[str, Setting]

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @cached_property
    def kinds(self):
        """The kind (int or str) of every value (`solverspace.lang.kinds`), computed once."""
        from solverspace.lang.kinds import Kinds
        return Kinds(self)

    @cached_property
    def closures(self):
        """Value sets and closure tables (`solverspace.lang.closures`), computed once."""
        from solverspace.lang.closures import ValueSets
        return ValueSets(self)

    @property
    def trees(self) -> tuple:
        """Every IR tree of the space: parameter domains, derived values, constraints (in that order)."""
        return tuple(p.domain for p in self.parameters) + tuple(d.expr for d in self.derived) + \
            tuple(c.expr for c in self.constraints)

    @cached_property
    def analysis(self):
        """The shared analysis (DAG, bounds, codes, ...: `solverspace.lang.facts`), computed once."""
        from solverspace.lang.facts import Analysis
        return Analysis(self)

    def definition(self, name: str):
        """The parameter or derived value called `name`."""
        return self.parameter.get(name) or self.derived_value[name]
