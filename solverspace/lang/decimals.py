"""Floats in performance models: each is the exact rational of its shortest decimal text.

Kernel engineers write roofline models with float constants (`peak = 4.29e3`, `2 * N ** 3 /
peak`, `--bound 'x * y / 1e3'`). A float met while loading (a literal, a module constant, or a
float Python computed from constants at load time) is an `ir.Float` until the loader knows where
it is used:

- in a performance model (`cost(...)`, `@cost`, an objective or bound of `best` and `tune`) and
  in a derived value that no constraint or iterator uses, it is `Fraction(repr(x))`: `1e3` is
  1000, `0.1` is 1/10, `96111156.27` is 9611115627/100 (the decimal Python prints, not the binary
  double it stands for), so every engine ranks by the same exact values;
- in a constraint or an iterator, or in a derived value one of them uses, it is refused: validity
  stays exact, and a float there is almost always an accident of `/` between plain numbers.

How floats were read is said once per model (`note`), not per use.
"""
from __future__ import annotations

from fractions import Fraction

from solverspace.lang import ir
from solverspace.core.errors import SpaceDefinitionError

REFUSED_HINT = ("validity is exact: constraints and iterators take integers, exact fractions and strings "
                "(`/` between two plain numbers is Python's floating-point division at load time: use `//`, "
                "or divide a parameter or derived value, `x / 10`, which is exact); floats are read as exact "
                "decimals only in cost(...) and in objectives")


def float_node(value: float, context: str = "a space expression") -> ir.Float:
    """The load-time node of a float (a finite one: nan and infinity have no decimal text)."""
    if value != value or value in (float("inf"), float("-inf")):
        raise SpaceDefinitionError(f"floating-point value {value!r} in {context} is not a finite number",
                                   hint="a performance model's constants are finite numbers")
    return ir.Float(value)


def exact(value: float) -> Fraction:
    """The exact rational of a float's shortest decimal text (`repr`): `0.1` is 1/10."""
    return Fraction(repr(value))


def exact_node(value: float) -> ir.Expr:
    """`exact(value)` as IR every backend reads: an integer, or `numerator / denominator` (the
    language's exact `/`, as a T1 file's decimal is read)."""
    rational = exact(value)
    if rational.denominator == 1:
        return ir.Const(int(rational))
    return ir.BinOp("/", ir.Const(rational.numerator), ir.Const(rational.denominator))


def floats_in(tree: ir.Node) -> list[float]:
    """The floats of a load-time tree, in reading order."""
    return [node.value for node in ir.walk(tree) if isinstance(node, ir.Float)]


def _exact_leaf(node: ir.Node) -> ir.Node | None:
    if isinstance(node, ir.Float):
        return exact_node(node.value)
    return node if isinstance(node, (ir.Const, ir.Ref, ir.Closure)) else None


def exact_tree(tree: ir.Node) -> ir.Node:
    """`tree` with every float replaced by its exact rational (not folded: the caller folds)."""
    return ir.rebuild(tree, _exact_leaf)


def refuse(value: float, what: str, where=None, through: str | None = None) -> SpaceDefinitionError:
    """The error for a float in a constraint or an iterator (`through`: the derived value that
    carries it there)."""
    if through is None:
        message = f"floating-point value {value!r} in {what}"
    else:
        message = f"{what} uses derived value {through!r}, which holds the floating-point value {value!r}"
    return SpaceDefinitionError(message, where=where, hint=REFUSED_HINT)


def note(values: list[float], where: str) -> str | None:
    """The one sentence that says how a model's floats were read (None: it has none)."""
    distinct = list(dict.fromkeys(values))
    if not distinct:
        return None
    shown = ", ".join(f"{v!r} as {_fraction_text(exact(v))}" for v in distinct[:3])
    more = f", and {len(distinct) - 3} more" if len(distinct) > 3 else ""
    return (f"{where}: floating-point constants are read as the exact rationals of their shortest decimal text "
            f"({shown}{more})")


def _fraction_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
