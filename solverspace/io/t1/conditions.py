"""Read a T1 `Expression` (a Kernel Tuner restriction) into the language's expression subset.

Kernel Tuner evaluates a restriction string as Python: it compiles `def r(<params>): return
<expression>` (`kernel_tuner.util.parse_restrictions`, `compile_restrictions`) or hands the string
to python-constraint, which compiles the same function where it cannot match a built-in
constraint. So every Python expression over the parameters is "accepted" there. Here the
expression's AST is checked node by node, never run, and each form Python has is either

- kept as it is (arithmetic, comparisons and chains of them, `and`/`or`/`not`, `x if c else y`,
  `min`/`max`/`abs`, `in`/`not in` a list, tuple, set or `range(...)`, constants folded later), or
- rewritten into the language with Python's meaning (`read_condition` lists the rewrites), or
- refused with `ConditionRefused`, which names the form and says how to write it instead.

Two meanings differ from Python's on purpose, as everywhere in this language: `/` is exact
(`fractions.Fraction`, Python gives a rounded float), and a float literal is the exact decimal
it spells (`0.1` is `1/10`). Both agree with Python's float result except where the float rounds
(`x / 10 + y / 10 == 3 / 10` holds for `x, y = 1, 2` here, not in Python). Division by zero makes
the configuration invalid (counted as undefined); Kernel Tuner's brute-force checker instead
ignores a restriction that raises `ZeroDivisionError`, and python-constraint stops with it.
"""
from __future__ import annotations

import ast
import operator
from fractions import Fraction

from solverspace.core.errors import did_you_mean

__all__ = ["ConditionRefused", "read_condition", "MAX_EXPANSION"]

MAX_EXPANSION = 256      # values of a parameter a power or shift by that parameter may be spelled out over

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)
_ORDERING = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_MIRRORED = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
_FORMS = {  # node types outside the language, named as a reader of the expression would say them
    "Attribute": "attribute access (`a.b`, e.g. `np.prod` or `math.log2`)",
    "Subscript": "indexing or slicing (`a[i]`)",
    "Lambda": "a lambda",
    "ListComp": "a comprehension", "SetComp": "a comprehension", "DictComp": "a comprehension",
    "GeneratorExp": "a generator expression",
    "Dict": "a dict",
    "List": "a list outside `in [...]`", "Tuple": "a tuple outside `in (...)`", "Set": "a set outside `in {...}`",
    "JoinedStr": "an f-string", "FormattedValue": "an f-string",
    "NamedExpr": "an assignment expression (`:=`)",
    "Starred": "unpacking (`*x`)",
    "Await": "`await`", "Yield": "`yield`", "YieldFrom": "`yield from`",
}
_BITWISE = {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@"}
_CALL_HINTS = {
    "round": "Python's round() rounds halves to even; write the rounding with // (e.g. `(2 * x + y) // (2 * y)`)",
    "len": "parameters are single values; compare them directly",
    "str": "compare a categorical parameter with a string constant, e.g. `kind == 'a'`",
}


class ConditionRefused(Exception):
    """A form of the expression that is not read: `node` (for its column), what it is, how to fix it."""

    def __init__(self, node: ast.AST, problem: str, hint: str | None = None):
        super().__init__(problem)
        self.node, self.problem, self.hint = node, problem, hint


def read_condition(body: ast.expr, parameters: dict[str, tuple]) -> ast.expr:
    """The condition `body` (a parsed expression) in the language's subset, with Python's meaning.

    `parameters` maps each tuning parameter to its values. Rewrites (each keeps Python's value):
    `a in [..]` inside a chain (`a < b in [..]`) -> `and` of the single comparisons; a float literal ->
    its exact decimal; `a ** -k` -> `1 / a ** k`; `a ** p` for a parameter `p` -> a conditional
    over `p`'s values; `a << k`, `a >> k` -> `a * 2 ** k`, `a // 2 ** k`; `~a` -> `-a - 1`;
    `pow(a, b)` -> `a ** b`; `sum([a, b])` -> `0 + a + b`; `int(e)` -> `e` truncated toward zero;
    `float(e)` -> `e`; `bool(e)` -> its truth; `s < 'b'` for a string parameter `s` -> `s in [its
    values below 'b']`. Raises `ConditionRefused` for any other form. `and`/`or` used as a value
    and a value used as a condition keep Python's meaning through `lowering.normalise_truth`, which
    the T1 reader applies to the model as the space-file loader does.
    """
    return _Reader(parameters).truth(body)


def _new(node_type, like: ast.AST, **fields) -> ast.AST:
    """A fresh node placed where `like` is (no node is shared: line numbers are shifted later)."""
    return ast.copy_location(node_type(**fields), like)


def _const(value, like):
    return _new(ast.Constant, like, value=value)


def _compare(left, op, right, like):
    return _new(ast.Compare, like, left=left, ops=[op], comparators=[right])


def _binop(left, op, right, like):
    return _new(ast.BinOp, like, left=left, op=op, right=right)


class _Reader:
    """Reads a node as a value (`value`) or for its truth only (`truth`); every result is a new tree."""

    def __init__(self, parameters: dict[str, tuple]):
        self.parameters = parameters

    # ------------------------------------------------------------------------------ contexts
    def truth(self, node: ast.expr) -> ast.expr:
        """`node` where only its truth matters (a condition, an operand of and/or/not, a test)."""
        if isinstance(node, ast.BoolOp):
            return _new(ast.BoolOp, node, op=node.op, values=[self.truth(v) for v in node.values])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _new(ast.UnaryOp, node, op=ast.Not(), operand=self.truth(node.operand))
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            return _new(ast.IfExp, node, test=self.truth(node.test), body=self.truth(node.body),
                        orelse=self.truth(node.orelse))
        if self.is_call(node, "bool") and len(node.args) == 1 and not node.keywords:
            return self.truth(node.args[0])
        read = self.value(node)
        if isinstance(read, ast.Constant):
            return _const(bool(read.value), node)
        return read   # its truth (`!= 0`, `!= ''`) is made explicit for every backend by lowering.normalise_truth

    def value(self, node: ast.expr) -> ast.expr:
        """`node` where its value is used."""
        method = getattr(self, "_value_" + type(node).__name__, None)
        if method is None:
            form = _FORMS.get(type(node).__name__, f"{type(node).__name__}")
            raise ConditionRefused(node, f"{form} is not part of the language",
                                   "conditions use parameters, constants, arithmetic, comparisons, in/not in, "
                                   "and/or/not, `x if c else y`, min, max and abs")
        return method(node)

    # ------------------------------------------------------------------------------ leaves
    def _value_Name(self, node):
        if node.id not in self.parameters:
            raise ConditionRefused(node, f"unknown name {node.id!r}",
                                   did_you_mean(node.id, self.parameters)
                                   or "names in a condition must be tuning parameters")
        return _new(ast.Name, node, id=node.id, ctx=ast.Load())

    def _value_Constant(self, node):
        value = node.value
        if type(value) in (int, str, bool):
            return _const(value, node)
        if type(value) is float:
            return self.decimal(node, value)
        raise ConditionRefused(node, f"constant {value!r} is not an integer, bool, string or decimal number",
                               "the language has integers, exact fractions (a / b) and strings")

    def decimal(self, node, value: float):
        """A float literal as the exact decimal it spells (`0.1` is 1/10, as `/` is exact)."""
        if value != value or value in (float("inf"), float("-inf")):
            raise ConditionRefused(node, f"constant {value!r} is not a finite number")
        exact = Fraction(repr(value))
        if exact.denominator == 1:
            return _const(int(exact), node)
        return _binop(_const(exact.numerator, node), ast.Div(), _const(exact.denominator, node), node)

    # ------------------------------------------------------------------------------ operators
    def _value_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return _new(ast.UnaryOp, node, op=ast.Not(), operand=self.truth(node.operand))
        operand = self.number(node.operand)
        if isinstance(node.op, ast.Invert):  # ~a is -a - 1 on Python's integers
            negated = _new(ast.UnaryOp, node, op=ast.USub(), operand=operand)
            return _binop(negated, ast.Sub(), _const(1, node), node)
        return _new(ast.UnaryOp, node, op=type(node.op)(), operand=operand)

    def _value_BinOp(self, node):
        if isinstance(node.op, _ARITHMETIC):
            return _binop(self.number(node.left), type(node.op)(), self.number(node.right), node)
        if isinstance(node.op, ast.Pow):
            return self.power(node, node.left, node.right)
        if isinstance(node.op, (ast.LShift, ast.RShift)):
            return self.shift(node)
        symbol = _BITWISE[type(node.op)]
        raise ConditionRefused(node, f"bitwise `{symbol}` is not part of the language",
                               "join conditions with `and` / `or`; test bits with // and % "
                               "(`x % 2 == 1` for `x & 1`), powers of two with `x in [1, 2, 4, ...]`")

    def number(self, node):
        """An operand of arithmetic or ordering: strings are refused (Python would concatenate,
        repeat or order them alphabetically)."""
        if self.is_string(node):
            raise ConditionRefused(node, "a string used in arithmetic or an ordering comparison",
                                   "strings compare with == and != (or `in` a list of strings)")
        return self.value(node)

    def power(self, node, base, exponent):
        """`base ** exponent` in the language: a non-negative integer constant exponent; a negative
        one is a reciprocal; a parameter's is spelled out over its values."""
        read_base = self.number(base)
        constant = self.integer_constant(exponent)
        if constant is not None:
            if constant >= 0:
                return _binop(read_base, ast.Pow(), _const(constant, node), node)
            positive = _binop(read_base, ast.Pow(), _const(-constant, node), node)
            return _binop(_const(1, node), ast.Div(), positive, node)
        if isinstance(exponent, ast.Name) and exponent.id in self.parameters:
            return self.over_values(node, exponent, lambda v: self.power(node, base, _const(v, node)))
        if isinstance(exponent, ast.Constant) and type(exponent.value) is float:
            raise ConditionRefused(exponent, "a fractional exponent (a root) is not part of the language",
                                   "compare powers instead, e.g. `x ** 0.5 <= y` as `x <= y ** 2` for y >= 0")
        raise ConditionRefused(exponent, "`**` with an exponent computed from parameters",
                               "the exponent of `**` is an integer constant or a single parameter")

    def integer_constant(self, node) -> int | None:
        """The value of an integer constant (`3`, `-3`, `True`, `2.0`), else None."""
        sign = 1
        while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            sign = -sign if isinstance(node.op, ast.USub) else sign
            node = node.operand
        if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
            return sign * int(node.value)
        if isinstance(node, ast.Constant) and type(node.value) is float and node.value.is_integer():
            return sign * int(node.value)
        return None

    def over_values(self, node, name: ast.Name, build) -> ast.expr:
        """`build(v)` for the value `v` the parameter `name` has: a chain of conditionals."""
        values = self.parameters[name.id]
        if any(type(v) not in (int, bool) for v in values):
            raise ConditionRefused(name, f"parameter {name.id!r} has non-integer values, used as an exponent "
                                         "or shift")
        if len(values) > MAX_EXPANSION:
            raise ConditionRefused(name, f"parameter {name.id!r} has {len(values)} values, more than the "
                                         f"{MAX_EXPANSION} an exponent or shift may be spelled out over",
                                   "write the power as a derived list of values, e.g. `p in [1, 2, 4, 8]`")
        chain = build(int(values[-1]))
        for v in reversed(values[:-1]):
            test = _compare(_new(ast.Name, name, id=name.id, ctx=ast.Load()), ast.Eq(), _const(v, name), name)
            chain = _new(ast.IfExp, node, test=test, body=build(int(v)), orelse=chain)
        return chain

    def shift(self, node):
        """`a << k` is `a * 2 ** k` and `a >> k` is `a // 2 ** k` on Python's integers (k >= 0)."""
        count = self.integer_constant(node.right)
        negative = count < 0 if count is not None else (
            isinstance(node.right, ast.Name) and node.right.id in self.parameters
            and any(type(v) in (int, bool) and v < 0 for v in self.parameters[node.right.id]))
        if negative:
            raise ConditionRefused(node.right, "a shift by a negative count (Python raises ValueError)")
        if count is None and not (isinstance(node.right, ast.Name) and node.right.id in self.parameters):
            raise ConditionRefused(node.right, "a shift by a count computed from parameters",
                                   "shift by an integer constant or a single parameter")
        op = ast.Mult() if isinstance(node.op, ast.LShift) else ast.FloorDiv()
        return _binop(self.number(node.left), op, self.power(node, _const(2, node), node.right), node)

    def _value_BoolOp(self, node):
        """As a value, Python's `a or b` is `a if a else b` (an operand): kept as it is, the model's
        and/or whose value is used become conditionals in `lowering.normalise_truth`, as in space files."""
        return _new(ast.BoolOp, node, op=node.op, values=[self.value(v) for v in node.values])

    def _value_IfExp(self, node):
        return _new(ast.IfExp, node, test=self.truth(node.test), body=self.value(node.body),
                    orelse=self.value(node.orelse))

    def _value_Compare(self, node):
        return self.compare(node)

    # ------------------------------------------------------------------------------ comparisons
    def compare(self, node: ast.Compare) -> ast.expr:
        """A comparison; a chain holding `in` becomes the `and` of its single comparisons (Python
        evaluates each operand once; evaluating a pure operand twice gives the same value)."""
        operands = [node.left, *node.comparators]
        pairs = [self.single(node, operands[i], op, operands[i + 1]) for i, op in enumerate(node.ops)]
        if len(pairs) == 1:
            return pairs[0]
        if all(isinstance(p, ast.Compare) and isinstance(p.ops[0], (*_ORDERING, ast.Eq, ast.NotEq)) for p in pairs):
            return _new(ast.Compare, node, left=pairs[0].left, ops=[p.ops[0] for p in pairs],
                        comparators=[p.comparators[0] for p in pairs])
        return _new(ast.BoolOp, node, op=ast.And(), values=pairs)

    def single(self, node, left, op, right) -> ast.expr:
        if isinstance(op, (ast.In, ast.NotIn)):
            return _compare(self.value(left), type(op)(), self.container(right), node)
        if isinstance(op, (ast.Is, ast.IsNot)):
            word = "is not" if isinstance(op, ast.IsNot) else "is"
            raise ConditionRefused(node, f"`{word}` compares object identity, not values",
                                   "compare values with == or !=")
        for side in (left, right):
            if isinstance(side, (ast.List, ast.Tuple, ast.Set)):
                raise ConditionRefused(side, "a list, tuple or set compared as a value",
                                       "compare element by element, e.g. `(a, b) == (1, 2)` as "
                                       "`a == 1 and b == 2`; lists are right operands of `in`")
        if isinstance(op, (ast.Eq, ast.NotEq)):
            return _compare(self.value(left), type(op)(), self.value(right), node)
        ordered = self.string_ordering(node, left, op, right)
        if ordered is not None:
            return ordered
        return _compare(self.number(left), type(op)(), self.number(right), node)

    def string_ordering(self, node, left, op, right) -> ast.expr | None:
        """`s < 'b'` (or `'b' > s`) for a string parameter `s`: Python orders strings
        alphabetically, which is membership in the values of `s` that satisfy it."""
        if self.is_string_parameter(right) and isinstance(left, ast.Constant) and type(left.value) is str:
            left, op, right = right, _MIRRORED[type(op)](), left
        if not (self.is_string_parameter(left) and isinstance(right, ast.Constant) and type(right.value) is str):
            return None
        test = _ORDERING[type(op)]
        kept = [_const(v, right) for v in self.parameters[left.id] if test(v, right.value)]
        return _compare(self.value(left), ast.In(), _new(ast.List, right, elts=kept, ctx=ast.Load()), node)

    def container(self, node) -> ast.expr:
        """The right operand of `in`: a list, tuple or set of values, or `range(...)`."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            elements = []
            for element in node.elts:
                if isinstance(element, (ast.Starred, ast.List, ast.Tuple, ast.Set)):
                    raise ConditionRefused(element, "a nested list, tuple or unpacking inside `in [...]`",
                                           "list single values: `x in [1, 2, 4]`")
                elements.append(self.value(element))
            return _new(type(node), node, elts=elements, **({} if isinstance(node, ast.Set) else {"ctx": ast.Load()}))
        if self.is_call(node, "range"):
            self.plain_arguments(node, "range", 1, 3)
            return _new(ast.Call, node, func=_new(ast.Name, node.func, id="range", ctx=ast.Load()),
                        args=[self.number(a) for a in node.args], keywords=[])
        if isinstance(node, ast.Constant) and type(node.value) is str:
            raise ConditionRefused(node, "`in` a string (a substring test) is not part of the language",
                                   "list the values: `kind in ['a', 'b']`")
        raise ConditionRefused(node, "`in` takes a list, tuple or set of values, or range(...), on its right",
                               "e.g. `x in [1, 2, 4]`, `x not in (0, 3)`, `x in range(0, 64, 8)`")

    # ------------------------------------------------------------------------------ calls
    def is_call(self, node, name: str) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name \
            and name not in self.parameters

    def plain_arguments(self, node: ast.Call, name: str, least: int, most: int):
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise ConditionRefused(node, f"{name}() takes plain positional arguments only here")
        if not least <= len(node.args) <= most:
            count = f"{least}" if least == most else f"{least} to {most}"
            raise ConditionRefused(node, f"{name}() takes {count} arguments, got {len(node.args)}")

    def _value_Call(self, node):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name is None:
            raise ConditionRefused(node.func, f"{_FORMS.get(type(node.func).__name__, 'this call')} "
                                              "is not part of the language",
                                   "functions available in conditions: min, max, abs, pow, sum, int, float, bool")
        if name in self.parameters:
            raise ConditionRefused(node, f"{name!r} is a tuning parameter, called like a function")
        method = getattr(self, "_call_" + name, None)
        if method is None:
            raise ConditionRefused(node, f"a call to {name}() is not part of the language",
                                   _CALL_HINTS.get(name, "functions available in conditions: min, max, abs, pow, "
                                                         "sum, int, float, bool"))
        return method(node)

    def _call_min(self, node, name="min"):
        self.plain_arguments(node, name, 1, 255)
        items = node.args
        if len(items) == 1:
            if not isinstance(items[0], (ast.List, ast.Tuple)) or not items[0].elts:
                raise ConditionRefused(node, f"{name}() of one value (Python needs a non-empty list or two values)")
            items = items[0].elts
        args = [self.number(a) for a in items]
        return _new(ast.Call, node, func=_new(ast.Name, node.func, id=name, ctx=ast.Load()), args=args, keywords=[])

    def _call_max(self, node):
        return self._call_min(node, "max")

    def _call_abs(self, node):
        self.plain_arguments(node, "abs", 1, 1)
        return _new(ast.Call, node, func=_new(ast.Name, node.func, id="abs", ctx=ast.Load()),
                    args=[self.number(node.args[0])], keywords=[])

    def _call_pow(self, node):
        self.plain_arguments(node, "pow", 2, 2)
        return self.power(node, node.args[0], node.args[1])

    def _call_sum(self, node):
        self.plain_arguments(node, "sum", 1, 2)
        items = node.args[0]
        if not isinstance(items, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in items.elts):
            raise ConditionRefused(items, "sum() of something other than a list or tuple of values",
                                   "write the sum out: `a + b + c`")
        total = self.number(node.args[1]) if len(node.args) == 2 else _const(0, node)
        for element in items.elts:
            total = _binop(total, ast.Add(), self.number(element), element)
        return total

    def _call_int(self, node):
        """int(e) truncates toward zero: `e // 1` for e >= 0, `-(-e // 1)` below."""
        self.plain_arguments(node, "int", 1, 1)
        inner = node.args[0]
        floor = _binop(self.number(inner), ast.FloorDiv(), _const(1, node), node)
        negated = _new(ast.UnaryOp, node, op=ast.USub(), operand=self.number(inner))
        ceiling = _new(ast.UnaryOp, node, op=ast.USub(),
                       operand=_binop(negated, ast.FloorDiv(), _const(1, node), node))
        test = _compare(self.number(inner), ast.GtE(), _const(0, node), node)
        return _new(ast.IfExp, node, test=test, body=floor, orelse=ceiling)

    def _call_float(self, node):
        self.plain_arguments(node, "float", 1, 1)
        return self.number(node.args[0])

    def _call_bool(self, node):
        self.plain_arguments(node, "bool", 1, 1)
        return _new(ast.IfExp, node, test=self.truth(node.args[0]), body=_const(True, node),
                    orelse=_const(False, node))

    # ------------------------------------------------------------------------------ types
    def is_string_parameter(self, node) -> bool:
        return isinstance(node, ast.Name) and node.id in self.parameters \
            and bool(self.parameters[node.id]) and all(type(v) is str for v in self.parameters[node.id])

    def is_string(self, node) -> bool:
        """Whether `node` is a string: a string constant or parameter, or a conditional giving one."""
        if isinstance(node, ast.Constant):
            return type(node.value) is str
        if isinstance(node, ast.IfExp):
            return self.is_string(node.body) or self.is_string(node.orelse)
        if isinstance(node, ast.BoolOp):
            return any(self.is_string(v) for v in node.values)
        return self.is_string_parameter(node)
