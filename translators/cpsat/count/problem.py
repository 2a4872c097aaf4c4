"""The pieces of a counting problem: factors, problems, peeled weights, groups, components, their
structure and a count's result; and how a factor is posted into a CP-SAT model.

Layering: imports cpsat.lower (`Lowering`) and cpsat.sinks (`SinkCount`); used by every module of
cpsat.count.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..lower import Lowering
from ..sinks import SinkCount


@dataclass(frozen=True)
class Factor:
    """A condition of a counting problem.

    kind: "domain" (parameter `name` lies in its defined domain), "defined" (derived value `name`
    is defined), "accept" (constraint `name` is defined and accepts), "domain_undefined",
    "undefined" (derived value or constraint `name` is undefined), "rejected" (constraint `name`
    is defined and rejects)."""

    kind: str
    name: str
    scope: frozenset


@dataclass
class Problem:
    params: tuple[str, ...]     # the parameters whose assignments are counted, in plan order
    factors: list[Factor]
    fixed: dict = field(default_factory=dict)  # parameters held at one value (a separator's)


@dataclass
class Weight:
    """A peeled parameter: the number of its (and its peeled descendants') assignments."""

    param: str
    scope: tuple[str, ...]      # the parameters it depends on (fixed ones included), plan order
    children: list["Weight"]
    memo: dict = field(default_factory=dict)
    sink: SinkCount | None = None   # a sink counted through its conditions (`Counter.sinks`)
    factors: list = field(default_factory=list)  # a sink's factors: its domain and conditions


@dataclass
class Group:
    """Sink parameters that are independent of the rest of their component given `separator`."""

    params: tuple[str, ...]
    separator: tuple[str, ...]
    factors: list[Factor]


@dataclass
class Component:
    params: tuple[str, ...]
    factors: list[Factor]
    weights: list[Weight]
    groups: list[Group] = field(default_factory=list)


@dataclass
class Structure:
    """How a problem is counted."""

    weights: list[Weight]                  # peeled parameters (roots of peeled trees)
    components: list[Component]
    constant_factors: list[Factor]         # factors over no counted parameter
    constant_weights: list[Weight]

    @property
    def groups(self) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        return [(g.params, g.separator) for c in self.components for g in c.groups]


@dataclass
class Table:
    """A component's solutions listed while counting it (for sampling): each row assigns
    `params`, in plan order, and weighs the number of completions of its peeled parameters."""

    params: tuple[str, ...]
    rows: list[tuple]
    weights: list[int]


@dataclass
class CountResult:
    count: int
    exact: bool
    solutions: int = 0          # CP-SAT solutions enumerated
    seconds: float = 0.0
    strategy: str = ""
    tables: list = field(default_factory=list)  # per component: a Table, or None (see `record`)


def post(lowering: Lowering, model, factor: Factor, enforce=()):
    """Post one factor into a lowering's model."""
    kind, name = factor.kind, factor.name
    if kind == "domain":
        lowering.require_domain(name, enforce)
    elif kind == "domain_undefined":
        p = model.parameter[name]
        with lowering.item("parameter", name, p.line):
            lowering.assert_lit(lowering.lit_not(lowering.domain_defined(name)), enforce)
    elif kind in ("defined", "undefined") and name in model.derived_value:
        _, ok = lowering.derived(name)
        lowering.assert_lit(ok if kind == "defined" else lowering.lit_not(ok), enforce)
    else:
        c = model.constraint[name]
        with lowering.item("constraint", name, c.line):
            if kind == "accept":
                lowering.require(c.expr, not c.rejects, enforce)
            elif kind == "rejected":
                lowering.require(c.expr, c.rejects, enforce)
            elif kind == "undefined":
                _, ok = lowering.lower(c.expr)
                lowering.assert_lit(lowering.lit_not(ok), enforce)
            else:
                raise ValueError(f"unknown factor kind {kind!r}")


def rest_at(rest: Problem, x: str, value: int, modulus: int) -> Problem:
    """The sub-problem of a residue class: `x` held at the class's smallest non-negative member
    (the rest reads `x` only modulo divisors of `modulus`, so any member will do, and this one
    fits CP-SAT's domains however wide the range)."""
    return Problem(rest.params, rest.factors, {**rest.fixed, x: value % modulus})


def peeled_params(w: Weight) -> list[str]:
    """A peeled parameter and its peeled descendants."""
    return [w.param] + [q for child in w.children for q in peeled_params(child)]
