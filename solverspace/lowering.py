"""Lower the body of an @iterator / @require / @reject_if function from its AST to IR.

Supported statements: local assignments (inlined), `if/elif/else`, `return`, `pass`, docstrings.
An `if` statement is lowered with its continuation: `if c: x = a` followed by `return f(x)`
becomes `f(a) if c else f(x)`. Names not bound locally resolve through `resolve` (parameters and
derived values become references; settings and module constants become constants), so the
dependencies of a function come from its body as well as from its argument list.
"""
from __future__ import annotations

import ast
from typing import Callable

from . import ir
from .errors import Location, SpaceDefinitionError

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Div: "/", ast.Pow: "**"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


class FunctionLowerer:
    """Lower one function; `resolve(name, line)` gives the IR for a global name."""

    def __init__(self, func_def: ast.FunctionDef, filename: str, resolve: Callable[[str, int], ir.Node]):
        self.func_def = func_def
        self.filename = filename
        self.resolve = resolve

    def error(self, node, message, hint=None):
        return SpaceDefinitionError(
            f"in function {self.func_def.name!r}: {message}",
            where=Location(self.filename, getattr(node, "lineno", self.func_def.lineno)), hint=hint)

    def lower(self) -> ir.Node:
        env = {a.arg: self.resolve(a.arg, self.func_def.lineno) for a in self.func_def.args.args}
        result = self.block(self.func_def.body, env)
        if result is None:
            raise self.error(self.func_def, "can reach its end without returning a value",
                             hint="every path through the function must end in `return`")
        return result

    # statements -----------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], env: dict) -> ir.Node | None:
        env = dict(env)
        for index, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return):
                if stmt.value is None:
                    raise self.error(stmt, "`return` without a value")
                return self.expr(stmt.value, env)
            if isinstance(stmt, ast.If):
                rest = stmts[index + 1:]
                cond = self.expr(stmt.test, env)
                if isinstance(cond, ir.Const):  # decided by settings: only the taken branch counts
                    return self.block((stmt.body if cond.value else stmt.orelse) + rest, env)
                then = self.block(stmt.body + rest, env)
                orelse = self.block(stmt.orelse + rest, env)
                if then is None or orelse is None:
                    return None
                return make_if(cond, then, orelse)
            self.statement(stmt, env)
        return None

    def statement(self, stmt, env):
        if isinstance(stmt, ast.Assign):
            value = stmt.value
            for target in stmt.targets:
                self.assign(target, value, env)
        elif isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt, "only simple names can be assigned")
            op = _BINOPS.get(type(stmt.op))
            if op is None:
                raise self.error(stmt, f"operator {type(stmt.op).__name__} is not part of the language")
            env[stmt.target.id] = binop(op, self.expr(stmt.target, env), self.expr(stmt.value, env))
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, stmt.value, env)
        elif isinstance(stmt, ast.Pass):
            pass
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            pass  # docstring
        else:
            raise self.error(stmt, f"`{type(stmt).__name__}` statements are not allowed here",
                             hint="iterator and constraint functions may use assignments, if/elif/else and "
                                  "return; loops belong in generator (closure) iterators, which use `yield`")

    def assign(self, target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = self.expr(value, env)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts):
            lowered = [self.expr(v, env) for v in value.elts]  # right side first, as Python does
            for t, v in zip(target.elts, lowered):
                if not isinstance(t, ast.Name):
                    raise self.error(target, "only simple names can be assigned")
                env[t.id] = v
        else:
            raise self.error(target, "only simple names (or tuples of names = tuples) can be assigned")

    # expressions ----------------------------------------------------------------------------
    def expr(self, node: ast.expr, env: dict) -> ir.Node:
        method = getattr(self, "_expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"`{ast.unparse(node)}` ({type(node).__name__}) is not part of the language")
        return method(node, env)

    def value(self, node, env) -> ir.Expr:
        lowered = self.expr(node, env)
        if isinstance(lowered, ir.Domain):
            raise self.error(node, f"`{ast.unparse(node)}` is an iterator where a value is expected")
        return lowered

    def _expr_Name(self, node, env):
        if node.id in env:
            return env[node.id]
        return self.resolve(node.id, node.lineno)

    def _expr_Constant(self, node, env):
        if type(node.value) in (int, str, bool):
            return ir.Const(node.value)
        raise self.error(node, f"constant {node.value!r} is not an integer, bool or string",
                         hint="the language has integers, exact fractions (a / b) and strings")

    def _expr_BinOp(self, node, env):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.error(node, f"operator in `{ast.unparse(node)}` is not part of the language",
                             hint="arithmetic is + - * // % / and ** with a constant exponent")
        right = self.value(node.right, env)
        if op == "**" and not (isinstance(right, ir.Const) and type(right.value) is int and right.value >= 0):
            raise self.error(node, f"`{ast.unparse(node)}`: `**` takes only a non-negative integer constant exponent")
        return binop(op, self.value(node.left, env), right)

    def _expr_UnaryOp(self, node, env):
        operand = self.value(node.operand, env)
        if isinstance(node.op, ast.USub):
            return fold(ir.Neg(operand))
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not):
            return fold(ir.Not(operand))
        raise self.error(node, "bitwise `~` is not part of the language")

    def _expr_BoolOp(self, node, env):
        operands = tuple(self.value(v, env) for v in node.values)
        return make_boolop(ir.And if isinstance(node.op, ast.And) else ir.Or, operands)

    def _expr_Compare(self, node, env):
        parts = []
        left = self.value(node.left, env)
        for op, comparator in zip(node.ops, node.comparators):
            if type(op) not in _CMPOPS:
                raise self.error(node, f"comparison `{ast.unparse(node)}` is not part of the language",
                                 hint="comparisons are < <= > >= == !=")
            right = self.value(comparator, env)
            parts.append(fold(ir.Compare(_CMPOPS[type(op)], left, right)))
            left = right
        return parts[0] if len(parts) == 1 else make_boolop(ir.And, tuple(parts))

    def _expr_IfExp(self, node, env):
        return make_if(self.value(node.test, env), self.expr(node.body, env), self.expr(node.orelse, env))

    def _expr_List(self, node, env):
        return ir.Values(tuple(self.value(e, env) for e in node.elts))

    _expr_Tuple = _expr_List

    def _expr_Call(self, node, env):
        if not isinstance(node.func, ast.Name) or node.func.id in env:
            raise self.error(node, f"call `{ast.unparse(node)}` is not part of the language")
        name = node.func.id
        if node.keywords:
            raise self.error(node, f"{name}() takes no keyword arguments here")
        args = node.args
        if name == "range":
            if not 1 <= len(args) <= 3:
                raise self.error(node, f"range expected 1 to 3 arguments, got {len(args)}")
            values = [self.value(a, env) for a in args]
            if len(values) == 1:
                values = [ir.Const(0), values[0]]
            if len(values) == 2:
                values.append(ir.Const(1))
            if isinstance(values[2], ir.Const) and values[2].value == 0:
                raise self.error(node, "range step is 0", hint="a range step must be a non-zero integer")
            return ir.Range(*values)
        if name == "iterator":
            if len(args) != 1:
                raise self.error(node, "iterator() takes one argument")
            return as_domain(self.expr(args[0], env))
        if name in ("min", "max"):
            if not args:
                raise self.error(node, f"{name}() needs arguments")
            items = args[0].elts if len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)) else args
            return fold((ir.Min if name == "min" else ir.Max)(tuple(self.value(a, env) for a in items)))
        if name == "abs":
            if len(args) != 1:
                raise self.error(node, "abs() takes one argument")
            return fold(ir.Abs(self.value(args[0], env)))
        if name == "if_then_else":
            if len(args) != 3:
                raise self.error(node, "if_then_else(cond, if_true, if_false) takes three arguments")
            return make_if(self.value(args[0], env), self.expr(args[1], env), self.expr(args[2], env))
        if name in ("union", "intersection", "difference"):
            if len(args) < 2:
                raise self.error(node, f"{name}() takes at least two iterators")
            result = as_domain(self.expr(args[0], env))
            for a in args[1:]:
                result = ir.SetOp(name, result, as_domain(self.expr(a, env)))
            return result
        raise self.error(node, f"call to {name!r} is not part of the language",
                         hint="functions available in iterator and constraint bodies: range, iterator, "
                              "min, max, abs, if_then_else, union, intersection, difference")


# Builders that fold constants as they go, so settings decide branches at load time. ------------

def fold(node: ir.Expr) -> ir.Expr:
    """Evaluate a node whose children are all constants (leave undefined operations in place)."""
    from .evaluate import Undefined, evaluate
    children = node.children()
    if children and all(isinstance(c, ir.Const) for c in children) and isinstance(node, ir.Expr):
        try:
            value = evaluate(node)
        except Undefined:
            return node
        if type(value) in (int, str, bool):
            return ir.Const(value)
    return node


def binop(op, left, right):
    return fold(ir.BinOp(op, left, right))


def make_boolop(cls, operands):
    """Short-circuit and/or, dropping constant operands that cannot change the result."""
    kept = []
    for o in operands:
        if isinstance(o, ir.Const):
            truth = bool(o.value)
            if (cls is ir.And and not truth) or (cls is ir.Or and truth):
                # decides the result, but only if nothing before it can be undefined
                if not kept:
                    return ir.Const(truth)
                kept.append(ir.Const(truth))
                break
            continue  # neutral
        kept.append(o)
    if not kept:
        return ir.Const(cls is ir.And)
    if len(kept) == 1 and ir.is_boolean(kept[0]):
        return kept[0]
    return cls(tuple(kept))


def as_domain(node: ir.Node) -> ir.Domain:
    """A value used where an iterator is expected is a one-value iterator."""
    if isinstance(node, ir.Domain):
        return node
    if isinstance(node, ir.IfExp) and (isinstance(node.then, ir.Domain) or isinstance(node.orelse, ir.Domain)):
        return ir.IfDomain(node.cond, as_domain(node.then), as_domain(node.orelse))
    return ir.Values((node,))


def make_if(cond, then, orelse):
    if isinstance(cond, ir.Const):
        return then if cond.value else orelse
    if isinstance(then, ir.Domain) or isinstance(orelse, ir.Domain):
        return ir.IfDomain(cond, as_domain(then), as_domain(orelse))
    return ir.IfExp(cond, then, orelse)
