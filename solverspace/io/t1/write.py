"""Write a `Model` as T1 tuning-problem JSON (`export_t1`, `write_t1`).

Each parameter becomes a value list. A parameter whose range depends on other parameters becomes
a *superset* list (every value its domain takes for some values of its inputs, themselves taken
from their own lists) plus a condition stating membership (`start <= p < stop and (p - start) %
step == 0` for `range(start, stop, step)`). Derived values are inlined into the conditions
(`ir.substitute`); a derived value that may divide by zero adds a condition that evaluates it
(`e == e`), because in our semantics an undefined derived value makes the configuration invalid
even where no constraint reads it. Constraints are printed with `to_source`; `reject_if`
constraints as `not (...)`. Closure (generator) iterators with inputs cannot be written as value
lists and are refused. Exported files carry no `KernelSpecification` (the space has no kernel),
and Kernel Tuner evaluates `/` as floating point where we compare exact fractions.
"""
from __future__ import annotations

import json
from pathlib import Path

from solverspace.lang import ir
from solverspace.core.errors import Location, SpaceDefinitionError
from solverspace.lang.lowering import fold_tree
from solverspace.lang.model import Model, Parameter
from solverspace.lang.printing import to_source
from solverspace.moves.value_lists import inline_derived, superset_values
from solverspace.io.t1.format import MAX_VALUES
from solverspace.analysis.plan import loop_order
from solverspace.core.output import atomic_output, check_output_path
from solverspace.lang.evaluate import compile_domain

__all__ = ["export_t1", "write_t1", "T1ExportError", "MAX_EXPORT_COMBINATIONS"]

MAX_EXPORT_COMBINATIONS = 1_000_000  # input combinations evaluated to build one superset list


class T1ExportError(SpaceDefinitionError):
    """The space cannot be written as T1 (the message says what and why)."""


def export_t1(model: Model, *, name: str | None = None) -> dict:
    """The model as a T1 document (a dict ready for `json.dump`).

    >>> from solverspace.io.loader import load_source
    >>> doc = export_t1(load_source("x = range(1, 4)\\ny = range(x, 4)\\nreject_if(x + y > 4)"))
    >>> [(p["Name"], p["Values"]) for p in doc["ConfigurationSpace"]["TuningParameters"]]
    [('x', '[1, 2, 3]'), ('y', '[1, 2, 3]')]
    >>> [c["Expression"] for c in doc["ConfigurationSpace"]["Conditions"]]
    ['x <= y and y < 4', 'not (x + y > 4)']
    """
    return _T1Exporter(model).run(name or Path(model.source).stem)


def write_t1(model: Model, path: str | Path, *, name: str | None = None) -> dict:
    """Export to a T1 file (written to a temporary name, then renamed); returns the document."""
    path = check_output_path(path)
    document = export_t1(model, name=name)
    with atomic_output(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
    return document


class _T1Exporter(ir.DomainVisitor):
    domain_walks = ("_member_",)   # a domain's membership condition

    def __init__(self, model: Model):
        self.model = model
        self.where = lambda line=None: Location(model.source, line)
        self.inlined = self.inline_derived()
        self.guards: list[ir.Expr] = []
        self._bounds = None

    def refuse(self, message, line=None, hint=None):
        return T1ExportError(f"cannot export to T1: {message}", where=self.where(line), hint=hint)

    def inline_derived(self) -> dict[str, ir.Expr]:
        """Every derived value as an expression of parameters only."""
        return inline_derived(self.model)

    def expand(self, node: ir.Node) -> ir.Node:
        return ir.substitute(node, self.inlined)

    def run(self, name: str) -> dict:
        model = self.model
        ordered = next((p for p in model.parameters if model.kinds.of(p.name) == "order"), None)
        if ordered is not None:   # T1 has no order functions to write position(...) with
            raise self.refuse(f"parameter {ordered.name!r} is an order (`{ordered}`), which T1 "
                              "cannot express", ordered.line,
                              hint="T1 files have integer and string parameters only; count, list or validate the "
                                   "space with solverspace itself")
        order = loop_order(model, model.analysis.dag)
        supersets: dict[str, list] = {}
        membership: dict[str, ir.Expr | None] = {}
        for pname in order:
            p = model.parameter[pname]
            supersets[pname], membership[pname] = self.parameter(p, supersets)
        tuning = []
        for p in model.parameters:
            values = supersets[p.name]
            kinds = {type(v) for v in values}
            if kinds - {int, str}:
                raise self.refuse(f"parameter {p.name!r} has values {values[:5]} that are not integers or strings",
                                  p.line)
            if kinds == {int, str}:
                raise self.refuse(f"parameter {p.name!r} mixes integer and string values; T1 types a parameter "
                                  "as one or the other", p.line)
            tuning.append({"Name": p.name, "Type": "string" if kinds == {str} else "int", "Values": _values_text(values)})
        conditions = []

        def add(expr: ir.Expr):
            expr = fold_tree(expr)
            if isinstance(expr, ir.Const) and expr.value is True:
                return
            params = [q for q in model.parameter_names if q in ir.refs(expr)]
            conditions.append({"Parameters": params, "Expression": to_source(expr)})

        for p in model.parameters:
            if membership[p.name] is not None:
                add(membership[p.name])
        for d in model.derived:
            for guard in self.definedness(d):
                add(guard)
        for c in model.constraints:
            expr = self.expand(c.expr)
            if c.rejects:
                conditions.append({"Parameters": [q for q in model.parameter_names if q in ir.refs(expr)],
                                   "Expression": f"not ({to_source(expr)})"})
            else:
                add(expr)
        return {"General": {"FormatVersion": 1, "BenchmarkName": name},
                "ConfigurationSpace": {"TuningParameters": tuning, "Conditions": conditions}}

    def definedness(self, derived) -> list[ir.Expr]:
        """Conditions true exactly where the derived value is defined (our semantics reject a
        configuration whose derived value divides by zero even if no constraint reads it).
        Without short-circuit operators every division is evaluated, so the conditions are
        `divisor != 0`, inner divisions first; otherwise the value is compared with itself."""
        divisions = [n for n in _postorder(derived.expr)
                     if isinstance(n, ir.BinOp) and n.op in ("//", "%", "/") and not self.nonzero(n.right)]
        if not divisions:
            return []
        if any(isinstance(n, (ir.IfExp, ir.And, ir.Or)) for n in ir.walk(derived.expr)):
            expr = self.inlined[derived.name]
            return [ir.Compare("==", expr, expr)]
        guards = []
        for n in divisions:
            guard = ir.Compare("!=", self.expand(n.right), ir.Const(0))
            if guard not in guards and guard not in self.guards:
                guards.append(guard)
        self.guards.extend(guards)
        return guards

    def nonzero(self, divisor: ir.Expr) -> bool:
        """Whether interval analysis proves a divisor non-zero."""
        if isinstance(divisor, ir.Const):
            return divisor.value != 0
        try:
            interval = self.bounds.expr(divisor)
        except Exception:  # unanalysable: keep the guard
            return False
        return interval.empty or interval.lo > 0 or interval.hi < 0

    def sign(self, expr: ir.Expr) -> int:
        """1 or -1 where interval analysis proves the sign of a range step, else 0."""
        try:
            interval = self.bounds.expr(expr)
        except Exception:
            return 0
        return 1 if interval.lo > 0 else -1 if interval.hi < 0 else 0

    @property
    def bounds(self):
        if self._bounds is None:
            self._bounds = self.model.analysis.bounds
        return self._bounds

    def parameter(self, p: Parameter, supersets: dict) -> tuple[list, ir.Expr | None]:
        """The value list (exact, or a superset) and the membership condition (None if exact)."""
        domain = self.expand(p.domain)
        closures = [n for n in ir.walk(domain) if isinstance(n, ir.Closure)]
        for c in closures:
            if c.deps:
                raise self.refuse(f"parameter {p.name!r} is a closure (generator) iterator with inputs "
                                  f"({', '.join(c.deps)}): its values cannot be written as one T1 value list",
                                  p.line, hint="T1 can hold such a space only if the generator takes no inputs")
        values = superset_values(self.model, p, domain, supersets, self.refuse, max_values=MAX_VALUES,
                                 max_combinations=MAX_EXPORT_COMBINATIONS)
        if not any(q in ir.refs(domain) for q in self.model.parameter_names):
            return values, None
        return values, self.member(ir.Ref(p.name), domain, p)

    def member(self, x: ir.Expr, node: ir.Domain, p: Parameter) -> ir.Expr:
        """An expression true exactly when `x` is one of the domain's values."""
        return self.dispatch("_member_", node, x, p)

    def _member_Values(self, node, x, p):
        return _or(tuple(ir.Compare("==", x, item) for item in node.items))

    def _member_Range(self, node, x, p):
        start, stop, step = node.start, node.stop, node.step
        if isinstance(step, ir.Const) and type(step.value) is int:
            if step.value > 0:
                bounds = _and((ir.Compare("<=", start, x), ir.Compare("<", x, stop)))
            else:
                bounds = _and((ir.Compare("<", stop, x), ir.Compare("<=", x, start)))
            if abs(step.value) == 1:
                return bounds
            offset = ir.BinOp("-", x, start) if step.value > 0 else ir.BinOp("-", start, x)
            return _and((bounds, ir.Compare("==", ir.BinOp("%", offset, ir.Const(abs(step.value))), ir.Const(0))))
        upward = _and((ir.Compare("<=", start, x), ir.Compare("<", x, stop)))
        downward = _and((ir.Compare("<", stop, x), ir.Compare("<=", x, start)))
        sign = self.sign(step)
        bounds = upward if sign > 0 else downward if sign < 0 else \
            ir.IfExp(ir.Compare(">", step, ir.Const(0)), upward, downward)
        return _and((bounds, ir.Compare("==", ir.BinOp("%", ir.BinOp("-", x, start), step), ir.Const(0))))

    def _member_SetOp(self, node, x, p):
        left, right = self.member(x, node.left, p), self.member(x, node.right, p)
        if node.op == "union":
            return _or((left, right))
        if node.op == "intersection":
            return _and((left, right))
        return _and((left, ir.Not(right)))

    def _member_IfDomain(self, node, x, p):
        return ir.IfExp(node.cond, self.member(x, node.then, p), self.member(x, node.orelse, p))

    def _member_Closure(self, node, x, p):  # no inputs (checked in `parameter`): its fixed value list
        values = compile_domain(node, p.name, closure_globals=dict(self.model.closure_globals),
                                max_closure_values=self.model.max_closure_values)({})
        return _or(tuple(ir.Compare("==", x, ir.Const(v)) for v in values))

    def _member_order(self, node, x, p):
        raise self.refuse(f"parameter {p.name!r}: {type(node).__name__} domains cannot be expressed", p.line)
    _member_Permutation = _member_Interleave = _member_Sequence = _member_order


def _values_text(values: list) -> str:
    """A value list as Python text; an arithmetic progression as `list(range(...))`."""
    if len(values) >= 4 and all(type(v) is int for v in values):
        step = values[1] - values[0]
        if step and all(b - a == step for a, b in zip(values, values[1:])):
            args = [values[0], values[-1] + step] + ([step] if step != 1 else [])
            return f"list(range({', '.join(map(str, args))}))"
    return repr(values)


def _postorder(node: ir.Node):
    for child in node.children():
        yield from _postorder(child)
    yield node


def _and(operands):
    flat = []
    for o in operands:
        flat.extend(o.operands if isinstance(o, ir.And) else (o,))
    return flat[0] if len(flat) == 1 else ir.And(tuple(flat))


def _or(operands):
    if not operands:
        return ir.Const(False)
    flat = []
    for o in operands:
        flat.extend(o.operands if isinstance(o, ir.Or) else (o,))
    return flat[0] if len(flat) == 1 else ir.Or(tuple(flat))

