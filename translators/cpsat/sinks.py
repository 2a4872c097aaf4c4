"""Sink parameters counted in Python while CP-SAT enumerates the rest of their component.

A *sink* of a component is a parameter with a constant domain that no other parameter's domain
and no peeled weight reads (Hotspot's `blocks_per_sm`, read only by `blocks_per_sm == 0 or
shared_memory * blocks_per_sm <= 102400`). Given the values of the other parameters, the number
of its values that satisfy its conditions is a number (`SinkCount.count`), so CP-SAT need not list
one solution per value: the component without the sink and its conditions is enumerated, and each
solution is weighed by that number (variable elimination, as for peeled parameters). Counting
whether or not the sink is worth it gives the same count: the weight is exact, and a solution
of the other conditions with no accepted sink value weighs 0. Whether it pays is decided by
`cpsat.count.Counter.sinks` (CP-SAT proves that some value of the sink is accepted whatever the
others are, so the enumeration without it lists at most as many solutions as with it).

The weight depends on the other parameters only through the maximal sub-expressions of the
sink's conditions that do not read the sink (Hotspot: the shared-memory product, one key for
33,216 solutions of six parameters; 1,613 distinct values), so it is memoised on their values:
a condition is split into those *key* sub-expressions and a residual expression over the sink
and the keys' placeholders. Evaluating a key eagerly, where the condition might not have
evaluated it (`b == 0 or a // b < 2`), is harmless: an undefined key is remembered as undefined
and raises `Undefined` only where the residual reads it, exactly where the condition would have
evaluated it. Python's meaning throughout (`solverspace.lang.evaluate`), derived values inlined.

Layering: imports only `solverspace.lang.ir` and `solverspace.lang.evaluate`; used by cpsat.count.
"""
from __future__ import annotations

import operator

from solverspace.lang import ir
from solverspace.core.errors import SpaceEvaluationError
from solverspace.lang.evaluate import Undefined, compile_expr

#: A sink is counted in Python only when its domain has at most this many values.
SINK_VALUES = 256

#: ... and its conditions, derived values inlined, have at most this many nodes.
SINK_NODES = 2_000


class _Failed:
    """The value of a key sub-expression whose evaluation was undefined."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node


class _Env(dict):
    """An environment in which reading an undefined key raises `Undefined`, as evaluating the
    key's sub-expression in place would have."""

    __slots__ = ()

    def __getitem__(self, name):
        value = dict.__getitem__(self, name)
        if type(value) is _Failed:
            raise Undefined(value.node)
        return value


def inline(model, expr: ir.Expr, cache: dict) -> ir.Expr:
    """`expr` with every derived value replaced by its (inlined) expression: only parameters
    remain."""
    names = [n for n in ir.refs(expr) if n in model.derived_value]
    if not names:
        return expr
    mapping = {}
    for name in names:
        if name not in cache:
            cache[name] = inline(model, model.derived_value[name].expr, cache)
        mapping[name] = cache[name]
    return ir.substitute(expr, mapping)


def _placeholder(index: int) -> str:
    return f"#key{index}"  # no space file can name a parameter so


def split(node: ir.Node, param: str, keys: dict) -> ir.Node:
    """`node` with its maximal sub-expressions that read parameters but not `param` replaced by
    placeholders (`keys`: sub-expression -> index, extended here)."""
    names = ir.refs(node)
    if param not in names:
        if not names or not isinstance(node, ir.Expr):
            return node
        index = keys.setdefault(node, len(keys))
        return ir.Ref(_placeholder(index))
    if isinstance(node, ir.Ref):
        return node
    return ir.map_children(node, lambda child: split(child, param, keys))


_NATIVE_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
               "%": operator.mod, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
               "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def native_function(node: ir.Node, ints: frozenset):
    """A function env -> value computing `node` with Python's own operators (closures over
    `operator`, never source text: names may come from a T1 file), or None. Only where that is
    DESIGN.md's meaning: integer (and boolean) operands, `+ - * // %`, comparisons, `min`, `max`,
    `abs`, `if_then_else`; `ints` are the parameters whose values are all integers. Division or
    modulo by zero raises `ZeroDivisionError` exactly where `Undefined` would be raised."""
    if isinstance(node, ir.Const):
        value = node.value
        return (lambda env: value) if type(value) in (int, bool) else None
    if isinstance(node, ir.Ref):
        name = node.name
        return (lambda env: env[name]) if name in ints else None
    if isinstance(node, (ir.BinOp, ir.Compare)):
        op = _NATIVE_OPS.get(node.op)
        left, right = native_function(node.left, ints), native_function(node.right, ints)
        if op is None or left is None or right is None:
            return None
        a, b = _name_or_value(node.left), _name_or_value(node.right)
        if a is not None and b is not None:   # the common leaf shapes, one call instead of three
            if a[0] and b[0]:
                return lambda env: op(env[a[1]], env[b[1]])
            if a[0]:
                return lambda env: op(env[a[1]], b[1])
            if b[0]:
                return lambda env: op(a[1], env[b[1]])
        return lambda env: op(left(env), right(env))
    if isinstance(node, (ir.Neg, ir.Abs)):
        operand = native_function(node.operand, ints)
        fn = operator.neg if isinstance(node, ir.Neg) else abs
        return None if operand is None else (lambda env: fn(operand(env)))
    if isinstance(node, (ir.Min, ir.Max)) and len(node.operands) >= 2:
        parts = [native_function(o, ints) for o in node.operands]
        fn = min if isinstance(node, ir.Min) else max
        return None if None in parts else (lambda env: fn([part(env) for part in parts]))
    if isinstance(node, ir.IfExp):
        then, cond, orelse = (native_function(o, ints) for o in (node.then, node.cond, node.orelse))
        if None in (then, cond, orelse):
            return None
        return lambda env: then(env) if cond(env) else orelse(env)
    return None


def _name_or_value(node):
    """(True, name) for a reference, (False, value) for a constant, else None."""
    if isinstance(node, ir.Ref):
        return True, node.name
    if isinstance(node, ir.Const):
        return False, node.value
    return None


def key_function(node: ir.Expr, ints: frozenset):
    """A function env -> value of a key sub-expression: native Python where `native_function` allows
    (faster on Hotspot's product), else `compile_expr`'s."""
    return native_function(node, ints) or compile_expr(node)


def _size(node: ir.Node) -> int:
    return sum(1 for _ in ir.walk(node))


class SinkCount:
    """The number of values of sink parameter `param` (its constant domain `values`) accepted by
    its conditions, for the values of the other parameters.

    `conditions` are (expression over parameters, truth): the configuration needs the expression
    defined and, unless `truth` is None (a derived value's definedness), its truth value equal to
    `truth` (a `require` is True, a `reject_if` False)."""

    def __init__(self, param: str, values: list, conditions: list[tuple[ir.Expr, bool | None]],
                 ints: frozenset = frozenset()):
        self.param = param
        self.values = list(values)
        keys: dict = {}
        self.residuals = [(compile_expr(split(expr, param, keys)), truth) for expr, truth in conditions]
        self.originals = [(compile_expr(expr), truth) for expr, truth in conditions]
        ordered = sorted(keys, key=keys.get)
        self.keys = [(key_function(node, ints), _Failed(node)) for node in ordered]
        self.names = [_placeholder(i) for i in range(len(ordered))]
        self.memo: dict = {}

    @classmethod
    def build(cls, model, param: str, values: list, factors) -> "SinkCount | None":
        """From counting factors (kind "accept" or "defined"); None when the inlined conditions
        are too large."""
        cache: dict = {}
        conditions, nodes = [], 0
        for f in factors:
            if f.kind == "accept":
                c = model.constraint[f.name]
                conditions.append((inline(model, c.expr, cache), not c.rejects))
            else:
                conditions.append((inline(model, model.derived_value[f.name].expr, cache), None))
            nodes += _size(conditions[-1][0])
            if nodes > SINK_NODES:
                return None
        ints = frozenset(q for q in model.parameter if model.kinds.of(q) == "int")
        return cls(param, values, conditions, ints)

    def count(self, env: dict) -> int:
        """The number of accepted values given `env` (the other parameters' values)."""
        key = []
        try:
            for fn, failed in self.keys:
                try:
                    key.append(fn(env))
                except (Undefined, ZeroDivisionError):  # the latter from a native key
                    key.append(failed)
        except SpaceEvaluationError:  # an error the condition might not reach: evaluate in full
            return self._count(self.originals, dict(env))
        key = tuple(key)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._count(self.residuals, _Env(zip(self.names, key)))
        return found

    def accepts(self, env: dict, value) -> bool:
        """Whether `value` is accepted given `env` (True where evaluating raises an error: then
        only CP-SAT's proof can tell)."""
        env = {**env, self.param: value}
        try:
            return all(_accepts(fn, truth, env) for fn, truth in self.originals)
        except SpaceEvaluationError:
            return True

    def _count(self, conditions, env: dict) -> int:
        total = 0
        for value in self.values:
            env[self.param] = value
            total += all(_accepts(fn, truth, env) for fn, truth in conditions)
        return total


def _accepts(fn, truth, env) -> bool:
    try:
        value = fn(env)
    except Undefined:
        return False
    return truth is None or bool(value) == truth
