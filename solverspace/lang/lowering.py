"""Lower the body of an @iterator / @require / @reject_if function from its AST to IR.

Supported statements: local assignments (inlined), `if/elif/else`, `return`, `pass`, docstrings.
An `if` statement is lowered with its continuation: `if c: x = a` followed by `return f(x)`
becomes `f(a) if c else f(x)`. Names not bound locally resolve through `resolve` (parameters and
derived values become references; settings and module constants become constants), so the
dependencies of a function come from its body as well as from its argument list.

Python forms lowered to existing IR, so that no backend needs anything new: `x in (1, 2, 4)` and
`not in` over tuples, lists, set literals and constant-step ranges (equalities and bounds, see
`membership`); `|`, `&`, `-` between iterators (iterator algebra); and calls to plain helper
functions of the space file, inlined with their arguments substituted (`helpers(name)` finds a
helper's `def`; recursion is refused).
"""
from __future__ import annotations

import ast
from typing import Callable

from solverspace.lang import ir
from solverspace.lang.decimals import float_node
from solverspace.core.errors import Location, SpaceDefinitionError
from solverspace.core.orders import ARITY
from solverspace.lang.evaluate import Undefined, evaluate

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Div: "/", ast.Pow: "**"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_SETOPS = {ast.BitOr: "union", ast.BitAnd: "intersection", ast.Sub: "difference"}
_CHAIN_OPS = (ast.Add, ast.Sub, ast.Mult)   # lowered in a loop along a left-deep chain


class FunctionLowerer:
    """Lower one function; `resolve(name, line)` gives the IR for a global name, `helpers(name)`
    the `def` of a helper function of the space file (or None); `inlining` lists the helpers
    being inlined around this one (to refuse recursion)."""

    def __init__(self, func_def: ast.FunctionDef, filename: str, resolve: Callable[[str, int], ir.Node],
                 helpers: Callable[[str], ast.FunctionDef | None] | None = None, inlining: tuple[str, ...] = ()):
        self.func_def = func_def
        self.filename = filename
        self.resolve = resolve
        self.helpers = helpers or (lambda name: None)
        self.inlining = inlining

    def error(self, node, message, hint=None):
        what = "helper function" if self.inlining else "function"
        return SpaceDefinitionError(
            f"in {what} {self.func_def.name!r}: {message}",
            where=Location(self.filename, getattr(node, "lineno", self.func_def.lineno)), hint=hint)

    def lower(self, env: dict | None = None) -> ir.Node:
        """The function's value; `env` binds its arguments (default: the names they resolve to)."""
        if env is None:
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
        if type(node.value) is float:   # exact in a performance model, refused elsewhere (`decimals`)
            try:
                return float_node(node.value, f"`{ast.unparse(node)}`")
            except SpaceDefinitionError as exc:
                raise self.error(node, exc.message, exc.hint) from None
        raise self.error(node, f"constant {node.value!r} is not an integer, bool or string",
                         hint="the language has integers, exact fractions (a / b) and strings")

    def _expr_BinOp(self, node, env):
        """A chain `a + b - c * ...` is lowered left to right in a loop (Python parses a long sum as
        a tree as deep as it is long; recursing down it would pass the recursion limit)."""
        spine = [node]
        while isinstance(spine[-1].op, _CHAIN_OPS) and isinstance(spine[-1].left, ast.BinOp) \
                and isinstance(spine[-1].left.op, _CHAIN_OPS):
            spine.append(spine[-1].left)
        lowered = self.expr(spine[-1].left, env)
        for step in reversed(spine):
            lowered = self.apply_binop(step, lowered, env)
        return lowered

    def apply_binop(self, node: ast.BinOp, left: ir.Node, env) -> ir.Node:
        """`node` with its left operand already lowered to `left`."""
        if type(node.op) in _SETOPS:
            right = self.expr(node.right, env)
            if isinstance(left, ir.Domain) or isinstance(right, ir.Domain):
                return self.iterator_algebra(node, left, right)
            if not isinstance(node.op, ast.Sub):
                word = "or" if isinstance(node.op, ast.BitOr) else "and"
                raise self.error(node, f"`{ast.unparse(node)}`: in a function body `|` and `&` combine iterators only",
                                 hint=f"combine conditions with `{word}` (bitwise operators are not part of the language)")
            return binop("-", left, right)
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.error(node, f"operator in `{ast.unparse(node)}` is not part of the language",
                             hint="arithmetic is + - * // % / and ** with a constant exponent")
        right = self.value(node.right, env)
        if op == "**" and not (isinstance(right, ir.Const) and type(right.value) is int and right.value >= 0):
            raise self.error(node, f"`{ast.unparse(node)}`: `**` takes only a non-negative integer constant exponent")
        if isinstance(left, ir.Domain):
            raise self.error(node.left, f"`{ast.unparse(node.left)}` is an iterator where a value is expected")
        return binop(op, left, right)

    def iterator_algebra(self, node, left, right) -> ir.Domain:
        """`a | b`, `a & b`, `a - b` between iterators (lists count as value lists)."""
        for operand, lowered in ((node.left, left), (node.right, right)):
            if not isinstance(lowered, ir.Domain):
                raise self.error(node, f"`{ast.unparse(node)}`: iterator algebra (| & -) combines iterators, "
                                       f"and `{ast.unparse(operand)}` is a value",
                                 hint=f"write the value as an iterator: iterator([{ast.unparse(operand)}])")
        return ir.SetOp(_SETOPS[type(node.op)], left, right)

    def _expr_UnaryOp(self, node, env):
        operand = self.value(node.operand, env)
        if isinstance(node.op, ast.USub):
            return fold(ir.Neg(operand))
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not):
            return fold(ir.Not(operand))
        raise self.error(node, "bitwise `~` is not part of the language", hint="negate a condition with `not`")

    def _expr_BoolOp(self, node, env):
        operands = tuple(self.value(v, env) for v in node.values)
        return make_boolop(ir.And if isinstance(node.op, ast.And) else ir.Or, operands)

    def _expr_Compare(self, node, env):
        parts = []
        left = self.value(node.left, env)
        for op, comparator in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                parts.append(self.membership(node, left, comparator, env, isinstance(op, ast.NotIn)))
                if len(node.ops) > 1:
                    raise self.error(node, f"`{ast.unparse(node)}`: `in` inside a chained comparison",
                                     hint="write the tests separately, joined with `and`")
                continue
            if type(op) not in _CMPOPS:
                raise self.error(node, f"comparison `{ast.unparse(node)}` is not part of the language",
                                 hint="comparisons are < <= > >= == != in, not in")
            right = self.value(comparator, env)
            parts.append(fold(ir.Compare(_CMPOPS[type(op)], left, right)))
            left = right
        return parts[0] if len(parts) == 1 else make_boolop(ir.And, tuple(parts))

    def membership(self, node, item, comparator, env, negate) -> ir.Expr:
        if isinstance(comparator, ast.Set):  # a set literal: only its members matter
            container = ir.Values(tuple(self.value(e, env) for e in comparator.elts))
        else:
            container = self.expr(comparator, env)
        try:
            found = membership(item, container)
        except SpaceDefinitionError as exc:
            raise self.error(node, f"`{ast.unparse(node)}`: {exc.message}", hint=exc.hint) from None
        return fold(ir.Not(found)) if negate else found

    def _expr_IfExp(self, node, env):
        return make_if(self.value(node.test, env), self.expr(node.body, env), self.expr(node.orelse, env))

    def _expr_List(self, node, env):
        return ir.Values(tuple(self.value(e, env) for e in node.elts))

    _expr_Tuple = _expr_List

    def _expr_Call(self, node, env):
        if not isinstance(node.func, ast.Name) or node.func.id in env:
            raise self.error(node, f"call `{ast.unparse(node)}` is not part of the language")
        name = node.func.id
        if node.keywords and name in _LANGUAGE_CALLS:
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
        try:
            helper = self.helpers(name)
        except SpaceDefinitionError as exc:
            raise self.error(node, exc.message, hint=exc.hint) from None
        if helper is not None:   # a helper of the space file wins over an order function's name
            return self.inline(node, helper, env)
        if name in _ORDER_CALLS:
            return self.order_call(node, name, env)
        raise self.error(node, f"call to {name!r} is not part of the language",
                         hint="functions available in iterator and constraint bodies: range, iterator, "
                              "min, max, abs, if_then_else, union, intersection, difference, permutation, "
                              "interleave, sequence, position, before, first, last, contains, len, and helper "
                              "functions defined with `def` in the space file")

    def order_call(self, node: ast.Call, name: str, env: dict) -> ir.Node:
        """The order iterators and functions (`solverspace.core.orders`) in a function body."""
        args = node.args

        def items(arg):
            if not isinstance(arg, (ast.List, ast.Tuple)):
                raise self.error(node, f"`{ast.unparse(node)}`: {name}() takes a list of items",
                                 hint="e.g. permutation(['i', 'j', 'k'])")
            return tuple(self.value(e, env) for e in arg.elts)
        if name == "permutation":
            if len(args) != 1:
                raise self.error(node, "permutation(items) takes one argument")
            return ir.Permutation(items(args[0]))
        if name == "interleave":
            if not args:
                raise self.error(node, "interleave() needs at least one sequence")
            return ir.Interleave(tuple(ir.Values(items(a)) for a in args))
        if name == "sequence":
            if not 1 <= len(args) <= 3:
                raise self.error(node, "sequence(items, min_len=0, max_len=len(items)) takes 1 to 3 arguments")
            found = items(args[0])
            low = self.value(args[1], env) if len(args) > 1 else ir.Const(0)
            high = self.value(args[2], env) if len(args) > 2 else ir.Const(len(found))
            return ir.Sequence(found, low, high)
        if len(args) != ARITY[name]:
            raise self.error(node, f"`{ast.unparse(node)}`: {name}() takes {ARITY[name]} arguments")
        return ir.OrderFn(name, tuple(self.value(a, env) for a in args))

    def inline(self, call: ast.Call, helper: ast.FunctionDef, env: dict) -> ir.Node:
        """A helper's body lowered with its arguments bound to the call's lowered arguments."""
        chain = (*self.inlining, helper.name)
        if helper.name in self.inlining:
            raise self.error(call, f"recursive helper call: {' -> '.join(chain)}",
                             hint="helper functions are inlined where they are called, so they cannot recurse; "
                                  "use a generator (closure) iterator for loops")
        bound = bind_arguments(helper, [self.expr(a, env) for a in call.args],
                               {k.arg: self.expr(k.value, env) for k in call.keywords},
                               lambda default: self.expr(default, {}))
        if isinstance(bound, str):
            raise self.error(call, f"`{ast.unparse(call)}`: {bound}",
                             hint=f"call it as {helper.name}({', '.join(a.arg for a in helper.args.args)})")
        return FunctionLowerer(helper, self.filename, self.resolve, self.helpers, chain).lower(bound)


_ORDER_CALLS = ("permutation", "interleave", "sequence", "position", "before", "first", "last", "contains", "len")
_LANGUAGE_CALLS = ("range", "iterator", "min", "max", "abs", "if_then_else", "union", "intersection", "difference",
                   *_ORDER_CALLS)


def bind_arguments(helper: ast.FunctionDef, args: list, kwargs: dict, lower_default) -> dict | str:
    """Map a call's arguments to a helper's parameters as Python does; a message if they do not fit."""
    spec = helper.args
    if spec.vararg or spec.kwarg or spec.kwonlyargs or spec.posonlyargs:
        return f"helper {helper.name!r} has *args, **kwargs, keyword-only or positional-only arguments"
    names = [a.arg for a in spec.args]
    if len(args) > len(names):
        return f"{helper.name}() takes {len(names)} arguments, {len(args)} given"
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names:
            return f"{helper.name}() has no argument {key!r}"
        if key in bound:
            return f"{helper.name}() got argument {key!r} twice"
        bound[key] = value
    defaults = dict(zip(names[len(names) - len(spec.defaults):], spec.defaults))
    for name in names:
        if name not in bound:
            if name not in defaults:
                return f"{helper.name}() is missing argument {name!r}"
            bound[name] = lower_default(defaults[name])
    return bound


def may_be_undefined(node: ir.Node) -> bool:
    """Whether evaluating `node` can divide by zero (references are computed, hence defined)."""
    return any(isinstance(n, ir.BinOp) and n.op in ("//", "%", "/")
               and not (isinstance(n.right, ir.Const) and n.right.value != 0) for n in ir.walk(node))


def membership(item: ir.Expr, container: ir.Node) -> ir.Expr:
    """`item in container` for a value list (equal to an item) or a range with a constant step
    (within the bounds, on the step), with Python's evaluation: the item and every element (the
    range's bounds) are evaluated, so one undefined makes the test undefined even where an earlier
    element already matched. Raises SpaceDefinitionError (without a location) for other containers."""
    if not isinstance(container, ir.Domain):
        raise SpaceDefinitionError(
            "`in` takes a tuple, list or set of values, or a range, on its right, not a single value",
            hint="list the values, e.g. `x in (1, 2, 4)`; a parameter's own values are not a container")
    found, evaluated = _Membership().visit(container, item)
    guards = tuple(fold(ir.Compare("==", e, e)) for e in evaluated if may_be_undefined(e))
    return make_boolop(ir.And, (*guards, found))


class _Membership(ir.DomainVisitor):
    """`visit(container, item)`: (the test that `item` is in `container`, the nodes Python evaluates)."""

    def _visit_Values(self, container, item):
        found = make_boolop(ir.Or, tuple(fold(ir.Compare("==", item, v)) for v in container.items))
        return found, (item, *container.items)

    def _visit_Range(self, container, item):
        start, stop, step = container.start, container.stop, container.step
        if not (isinstance(step, ir.Const) and type(step.value) is int and step.value != 0):
            raise SpaceDefinitionError("`in` a range needs a non-zero integer constant step",
                                       hint="test the bounds and the step with comparisons and %")
        if step.value > 0:
            low, high, offset = fold(ir.Compare("<=", start, item)), fold(ir.Compare("<", item, stop)), \
                binop("-", item, start)
        else:
            low, high, offset = fold(ir.Compare("<", stop, item)), fold(ir.Compare("<=", item, start)), \
                binop("-", start, item)
        on_step = fold(ir.Compare("==", binop("%", offset, ir.Const(abs(step.value))), ir.Const(0)))
        return make_boolop(ir.And, (low, high, on_step)), (item, start, stop)

    def _visit_other(self, container, item):
        raise SpaceDefinitionError("`in` takes a tuple, list or set of values, or a range, on its right; "
                                   "not a combined or conditional iterator",
                                   hint="join simpler membership tests with `or` / `and`")
    _visit_SetOp = _visit_IfDomain = _visit_Closure = _visit_other
    _visit_Permutation = _visit_Interleave = _visit_Sequence = _visit_other


# Builders that fold constants as they go, so settings decide branches at load time. ------------

def fold(node: ir.Expr) -> ir.Expr:
    """Evaluate a node whose children are all constants (leave undefined operations in place)."""
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
    """Short-circuit and/or, dropping constant operands that cannot change the result. Python's
    `a and b` is one of its operands, not a bool: a deciding constant is kept as it is (`'' and x`
    is `''`), and a neutral last one is kept where an operand before it is not a bool (`x and 5`
    is 5 when x is true); `normalise_truth` then turns such a value use into conditionals."""
    kept = []
    for index, o in enumerate(operands):
        if isinstance(o, ir.Const):
            truth = bool(o.value)
            if (cls is ir.And and not truth) or (cls is ir.Or and truth):
                # decides the result, but only if nothing before it can be undefined
                same = type(o.value) is not str and o.value == truth   # 0, 1: the bool's value
                if not kept:
                    return ir.Const(truth) if same else o
                kept.append(ir.Const(truth) if same and all(ir.is_boolean(k) for k in kept) else o)
                break
            if index == len(operands) - 1 and not all(ir.is_boolean(k) for k in kept):
                kept.append(o)   # the value of the whole when every operand before it is true (and)
            continue  # neutral
        kept.append(o)
    if not kept:
        return operands[-1] if operands else ir.Const(cls is ir.And)
    if len(kept) == 1:
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


def fold_tree(node: ir.Node) -> ir.Node:
    """Constant-fold bottom-up (settings are constants by now), long `+`/`*` chains balanced
    first (`ir.regroup`); iterative, so a sum of any length folds."""
    return ir.rebuild(ir.regroup(node), _atom, _folded)


def _atom(node: ir.Node) -> ir.Node | None:
    return node if isinstance(node, (ir.Const, ir.Ref, ir.Closure)) else None


def _folded(node: ir.Node) -> ir.Node:
    """`node` (rebuilt from its folded children) folded where they decide it."""
    if isinstance(node, (ir.IfExp, ir.IfDomain)):
        return make_if(node.cond, node.then, node.orelse)
    if isinstance(node, (ir.And, ir.Or)):
        return make_boolop(type(node), node.operands)
    return fold(node) if isinstance(node, ir.Expr) else node


#: A chain of more `+`/`-` or `*` operands than this in Python source is regrouped as a balanced
#: tree right after parsing (`balance_chains`): Python's own tree walkers (`compile` of a tree,
#: `ast.NodeTransformer`, `ast.fix_missing_locations`) recurse once per operand and stop near 500.
MAX_SOURCE_CHAIN = 100
_SOURCE_FAMILY = {ast.Add: "+", ast.Sub: "+", ast.Mult: "*"}


def _source_family(node) -> str | None:
    return _SOURCE_FAMILY.get(type(node.op)) if isinstance(node, ast.BinOp) else None


def _source_terms(node: ast.BinOp) -> list[tuple[bool, ast.expr]]:
    """The operands of the chain rooted at `node`, left to right, each with whether it is subtracted."""
    family, terms, stack = _source_family(node), [], [(node, False)]
    while stack:
        current, negated = stack.pop()
        if _source_family(current) == family:
            stack.append((current.right, negated != isinstance(current.op, ast.Sub)))
            stack.append((current.left, negated))
        else:
            terms.append((negated, current))
    return terms


def _balanced_source(family: str, terms: list[tuple[bool, ast.expr]]) -> ast.expr:
    if len(terms) == 1:
        return terms[0][1]
    middle = len(terms) // 2
    left, right = _balanced_source(family, terms[:middle]), terms[middle:]
    if right[0][0]:
        op, right_node = ast.Sub(), _balanced_source(family, [(not n, t) for n, t in right])
    else:
        op, right_node = (ast.Add() if family == "+" else ast.Mult()), _balanced_source(family, right)
    node = ast.BinOp(left=left, op=op, right=right_node)
    node.lineno, node.col_offset = left.lineno, left.col_offset
    node.end_lineno, node.end_col_offset = right_node.end_lineno, right_node.end_col_offset
    return node


def balance_chains(tree: ast.AST) -> ast.AST:
    """Regroup, in place, every chain of more than `MAX_SOURCE_CHAIN` operands of `+`/`-` or of
    `*` as a balanced tree with the same operands in the same order (`a - (b + c)` as `a - b - c`);
    iterative. The language's `+` and `*` (integers, exact fractions, strings and lists joined) do
    not depend on grouping; floating point is not part of the language."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for name, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for index, item in enumerate(items):
                if not isinstance(item, ast.AST):
                    continue
                if _source_family(item) is not None:
                    terms = _source_terms(item)
                    if len(terms) > MAX_SOURCE_CHAIN:
                        balanced = _balanced_source(_source_family(item), terms)
                        if isinstance(value, list):
                            value[index] = balanced
                        else:
                            setattr(node, name, balanced)
                        stack.extend(t for _, t in terms)
                        continue
                stack.append(item)
    return tree


def lower_expression(text: str, resolve: Callable[[str, int], ir.Node], *, filename: str = "<expression>",
                     what: str = "expression", hint: str | None = None) -> ir.Node:
    """One Python expression given as text (an objective, a T1 condition) as folded IR, lowered
    like a function body (`resolve(name, line)` gives each free name's node); never `eval`."""
    source = f"def __{what.replace(' ', '_')}__():\n    return ({text})\n"
    if not text.strip():
        raise SpaceDefinitionError(f"{what} is empty", hint=hint or "give an expression")
    try:
        tree = balance_chains(ast.parse(source, filename=filename))
    except SyntaxError as exc:
        raise SpaceDefinitionError(f"{what} {text!r} is not an expression: {exc.msg}", hint=hint) from None
    except (RecursionError, MemoryError):
        raise SpaceDefinitionError(f"{what} is nested too deeply for Python's parser",
                                   hint="split it into named derived values in the space file") from None
    func = tree.body[0]
    if len(func.body) != 1 or not isinstance(func.body[0], ast.Return):
        raise SpaceDefinitionError(f"{what} {text!r} must be one expression")
    return fold_tree(FunctionLowerer(func, filename, resolve).lower())


# Python's truth, made explicit once for every backend. ------------------------------------------
#
# In Python `a or b` is `a if a else b` and `a and b` is `b if a else a` (an operand, not a bool),
# and a value used as a condition is true when it is not 0 (an integer) or not '' (a string).
# C would take a string's integer code for its truth and every backend's and/or gives a bool, so
# after loading (when the kind of every value is known) `normalise_truth` rewrites the model: every
# condition (a constraint, the test of a conditional, an operand of and/or/not) is a bool by
# construction (`x` becomes `x != 0`, `k` becomes `k != ''`) and every and/or whose value is used
# becomes conditionals. Evaluation order is kept: the test of `a if a else b` evaluates `a` first,
# as Python does, so a guard such as `b == 0 or a // b < 2` still avoids the division.

_FALSY = {"int": ir.Const(0), "str": ir.Const("")}


class _Truth:
    """Rewrites one model's trees; `kinds` gives the kind of a (rewritten) expression."""

    def __init__(self, model):
        self.model = model
        self.kinds = model.kinds
        self.conditions: dict[str, bool] = {}

    def is_condition(self, node: ir.Expr) -> bool:
        """Whether `node`'s value is a bool by construction (a derived value defined by one too)."""
        if isinstance(node, ir.Ref):
            derived = self.model.derived_value.get(node.name)
            if derived is None:
                return False
            if node.name not in self.conditions:
                self.conditions[node.name] = False   # a cycle is refused later (check_acyclic)
                self.conditions[node.name] = self.is_condition(derived.expr)
            return self.conditions[node.name]
        if isinstance(node, ir.IfExp):
            return self.is_condition(node.then) and self.is_condition(node.orelse)
        return ir.is_boolean(node)

    def test(self, value: ir.Expr) -> ir.Expr:
        """An already rewritten value as a condition: Python's truth of it, as a bool."""
        if isinstance(value, ir.Const):
            return value if type(value.value) is bool else ir.Const(bool(value.value))
        if self.is_condition(value):
            return value
        kind = self.kinds.expr(value)
        if kind == "order":   # an order is a tuple: true unless it is empty
            return ir.Compare("!=", ir.OrderFn("len", (value,)), ir.Const(0))
        falsy = _FALSY.get(kind)
        return value if falsy is None else ir.Compare("!=", value, falsy)

    def truth(self, node: ir.Expr) -> ir.Expr:
        """`node` where only its truth is used."""
        if isinstance(node, (ir.And, ir.Or)):
            return self.same(node, (tuple(self.truth(o) for o in node.operands),))
        if isinstance(node, ir.Not):
            return self.same(node, (self.truth(node.operand),))
        if isinstance(node, ir.IfExp):
            return self.same(node, (self.truth(node.cond), self.truth(node.then), self.truth(node.orelse)))
        return self.test(self.value(node))

    def value(self, node: ir.Node) -> ir.Node:
        """`node` where its value is used."""
        if isinstance(node, (ir.Const, ir.Ref, ir.Closure)):
            return node
        if isinstance(node, ir.Values) and all(type(item) is ir.Const for item in node.items):
            return node   # a list of constants (a T1 file's 8 million values: one check, not a call each)
        if isinstance(node, (ir.And, ir.Or)):
            return self.boolop_value(node)
        if isinstance(node, ir.Not):
            return self.same(node, (self.truth(node.operand),))
        if isinstance(node, (ir.IfExp, ir.IfDomain)):
            return self.same(node, (self.truth(node.cond), self.value(node.then), self.value(node.orelse)))
        return ir.map_children(node, self.value)

    def boolop_value(self, node) -> ir.Expr:
        """`a or b` as `a if a else b`, `a and b` as `b if a else a` (kept as and/or over bools)."""
        operands = [self.value(o) for o in node.operands]
        if all(self.is_condition(o) for o in operands):
            return self.same(node, (tuple(operands),))
        result = operands[-1]
        for operand in reversed(operands[:-1]):
            chosen = (operand, result) if isinstance(node, ir.Or) else (result, operand)
            result = ir.IfExp(self.test(operand), *chosen)
        return result

    @staticmethod
    def same(node, fields):
        """`node` itself where no field changed (so unchanged trees stay the same objects)."""
        def unchanged(new, old):
            if isinstance(old, tuple) and isinstance(new, tuple):
                return len(new) == len(old) and all(a is b for a, b in zip(new, old))
            return new is old
        if all(unchanged(f, getattr(node, n)) for f, n in zip(fields, node.__match_args__)):
            return node
        return type(node)(*fields)


def normalise_truth(model):
    """`model` with Python's truth explicit (see above): conditions are bools, and/or used as a
    value are conditionals. Trees that need nothing are kept as they are."""
    rewrite = _Truth(model)

    def kept(record, field, tree):   # a record whose tree is unchanged is kept (with what it cached)
        return record if tree is getattr(record, field) else record.replace(**{field: tree})

    parameters = tuple(kept(p, "domain", rewrite.value(p.domain)) for p in model.parameters)
    derived = tuple(kept(d, "expr", rewrite.value(d.expr)) for d in model.derived)
    constraints = tuple(kept(c, "expr", rewrite.truth(c.expr)) for c in model.constraints)
    cost = None if model.cost is None else rewrite.value(model.cost)
    return model.replace(parameters=parameters, derived=derived, constraints=constraints, cost=cost)


def normalise_expression(expr: ir.Expr, model, *, condition: bool = False) -> ir.Expr:
    """One expression over `model` (an objective, a bound) with Python's truth explicit."""
    rewrite = _Truth(model)
    return rewrite.truth(expr) if condition else rewrite.value(expr)
