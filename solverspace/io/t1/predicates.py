"""Kernel Tuner restriction strings that the T1 reader cannot translate, run as Python predicates
without `eval`.

Kernel Tuner runs a restriction string as Python (it compiles `def r(<params>): return <string>`
in its own module's globals), so it accepts forms our language has no place for: bitwise `&`,
`|`, `^`, `~`, `round()`, `len()`, a substring test `'a' in kind`, indexing a constant list by a
parameter, `**` or `<<` by a parameter with many values. `t1.conditions` refuses those (they
cannot be compiled); `compile_predicate` runs them instead, in Python, on each configuration:

- the string is parsed with `ast` (mode `eval`) and checked node by node against a whitelist;
  the checked tree is turned into a tree of Python closures (one per node, `_c_<Node>` methods),
  never into code for `eval`/`exec`/`compile`;
- names are the tuning parameters only; the calls are `abs bool divmod float int len max min pow
  round str sum` by name (positional arguments); literals are numbers, strings, booleans, `None`
  and lists, tuples and sets of expressions; a subscript indexes or slices a literal or a
  parameter's value only (never a computed value);
- refused, with the form named: attribute access (`np.prod`, `x.bit_length()`), any other call or
  name, keyword arguments, comprehensions, lambdas, `:=`, f-strings, dicts, `is` (identity, not
  value), `%` on a string (formatting);
- sizes are bounded while it runs: an integer result past `MAX_INT_BITS` bits (`**`, `<<` and
  `round(x, n)`'s `10 ** n` are checked before they run) and a string, list or tuple result past
  `MAX_LENGTH` items stop with `UnsafeExpression`, naming the restriction and the configuration.

Meaning is Python's (Kernel Tuner's): `/` is float division, `and`/`or` return operands,
comparisons chain. One difference, our language's rule for undefined operations: an arithmetic
error (division or modulo by zero, a float overflow) makes the configuration invalid, and the
predicate counts such configurations (`undefined`, `example`) so that the caller can say so
(Kernel Tuner's own checker skips a restriction that divides by zero; its python-constraint build
stops). Any other error (`'a' < 1`, `int('x')`) stops with `UnsafeExpression` naming the
configuration.

>>> check = compile_predicate("block_size_x & (block_size_x - 1) == 0", ["block_size_x", "tile"])
>>> check({"block_size_x": 64, "tile": 1}), check({"block_size_x": 96, "tile": 1})
(True, False)
>>> try:
...     compile_predicate("x.bit_length() > 2", ["x"])
... except UnsafeExpression as exc:
...     print(exc.render())
restriction 'x.bit_length() > 2', column 1: attribute access (`a.b`) is not run here
  hint: write it with operators and the calls abs, bool, divmod, float, int, len, max, min, pow, round, str, sum
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable

from solverspace.core.errors import OptionError, did_you_mean, python_name

__all__ = ["MAX_INT_BITS", "MAX_LENGTH", "MAX_ROUND_DIGITS", "CALLS", "UnsafeExpression", "PythonPredicate", "compile_predicate"]

MAX_INT_BITS = 65_536      # an integer result larger than this stops the evaluation
MAX_LENGTH = 10_000        # a string, list or tuple result longer than this stops the evaluation

Evaluator = Callable[[dict], Any]


class UnsafeExpression(OptionError):
    """A restriction string the safe evaluator does not run: a form outside its whitelist, a value
    past its size bounds, or a Python error other than an arithmetic one while it runs."""


def _plain_call(function, least: int, most: int) -> tuple:
    return function, least, most


CALLS = {    # name: (function, least arguments, most arguments)
    "abs": _plain_call(abs, 1, 1), "bool": _plain_call(bool, 0, 1), "divmod": _plain_call(divmod, 2, 2),
    "float": _plain_call(float, 0, 1), "int": _plain_call(int, 0, 2), "len": _plain_call(len, 1, 1),
    "max": _plain_call(max, 1, 64), "min": _plain_call(min, 1, 64), "pow": _plain_call(pow, 2, 3),
    "round": _plain_call(round, 1, 2), "str": _plain_call(str, 0, 1), "sum": _plain_call(sum, 1, 2),
}
_CALL_LIST = ", ".join(sorted(CALLS))

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
           ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: operator.not_}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
_FORMS = {
    "Attribute": "attribute access (`a.b`)", "Lambda": "a lambda", "NamedExpr": "an assignment expression (`:=`)",
    "ListComp": "a comprehension", "SetComp": "a comprehension", "DictComp": "a comprehension",
    "GeneratorExp": "a generator expression", "Dict": "a dict", "JoinedStr": "an f-string",
    "FormattedValue": "an f-string", "Starred": "unpacking (`*x`)", "Await": "`await`", "Yield": "`yield`",
    "YieldFrom": "`yield from`", "MatMult": "`@`",
}
_HINT = f"write it with operators and the calls {_CALL_LIST}"


class _Stop(Exception):
    """Raised inside an evaluation: a value past the size bounds or a form refused by its operands'
    types (the message says which, `hint` how to write it instead)."""

    def __init__(self, message: str, hint: str = "the safe evaluator bounds the values a restriction builds; "
                                                 "write it with smaller intermediate values"):
        super().__init__(message)
        self.hint = hint


def _sized(value):
    """`value`, checked against the size bounds."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise _Stop(f"an integer of {value.bit_length():,} bits, more than MAX_INT_BITS={MAX_INT_BITS:,}")
    if isinstance(value, (str, list, tuple, frozenset)) and len(value) > MAX_LENGTH:
        raise _Stop(f"a {type(value).__name__} of {len(value):,} items, more than MAX_LENGTH={MAX_LENGTH:,}")
    return value


def _is_int(value) -> bool:
    return isinstance(value, int)


def _guarded(op: type, function):
    """The binary operator with the checks that must run *before* it (so no huge value is built)."""
    if op is ast.Pow:
        def power(a, b):
            if _is_int(a) and _is_int(b) and b > 0 and abs(a) > 1 and (abs(a).bit_length() - 1) * b > MAX_INT_BITS:
                raise _Stop(f"{a!r} ** {b!r} has more than MAX_INT_BITS={MAX_INT_BITS:,} bits")
            return function(a, b)
        return power
    if op is ast.LShift:
        def shift(a, b):
            if _is_int(a) and _is_int(b) and a and b > 0 and abs(a).bit_length() + b > MAX_INT_BITS:
                raise _Stop(f"{a!r} << {b!r} has more than MAX_INT_BITS={MAX_INT_BITS:,} bits")
            return function(a, b)
        return shift
    if op is ast.Mult:
        def times(a, b):
            for sequence, count in ((a, b), (b, a)):
                if isinstance(sequence, (str, list, tuple)) and _is_int(count) and len(sequence) * count > MAX_LENGTH:
                    raise _Stop(f"a {type(sequence).__name__} repeated {count!r} times, more than "
                                f"MAX_LENGTH={MAX_LENGTH:,} items")
            return function(a, b)
        return times
    if op is ast.Mod:
        def modulo(a, b):
            if isinstance(a, str):
                raise _Stop("`%` on a string is formatting, not arithmetic", "compare the string with == or in")
            return function(a, b)
        return modulo
    return function


def _call_pow(function):
    def checked(*args):
        if len(args) == 2:
            return _guarded(ast.Pow, operator.pow)(*args)
        return function(*args)
    return checked


MAX_ROUND_DIGITS = 4_096   # round(x, n) with |n| past this would build 10 ** |n|


def _call_sum(function):
    def checked(*args):
        if len(args) == 2 and not isinstance(args[1], (int, float)):   # bool is an int
            raise _Stop(f"sum(..., {type(args[1]).__name__}) concatenates sequences; only numbers are summed here")
        return function(*args)
    return checked


def _call_round(function):
    def checked(*args):
        if len(args) == 2 and _is_int(args[1]) and abs(args[1]) > MAX_ROUND_DIGITS:
            raise _Stop(f"round(..., {args[1]!r}): more than MAX_ROUND_DIGITS={MAX_ROUND_DIGITS:,} digits")
        return function(*args)
    return checked


class _Compiler:
    """Checks a parsed restriction against the whitelist and builds its closures."""

    def __init__(self, text: str, names: list):
        self.text = text
        self.names = {python_name(n): n for n in names}     # as Python reads the name: the key in a configuration

    def refuse(self, node: ast.AST, problem: str, hint: str | None = _HINT):
        column = getattr(node, "col_offset", None)
        where = f", column {column + 1}" if column is not None else ""
        raise UnsafeExpression(f"restriction {self.text!r}{where}: {problem}", hint=hint)

    def build(self, node: ast.AST) -> Evaluator:
        method = getattr(self, "_c_" + type(node).__name__, None)
        if method is None:
            form = _FORMS.get(type(node).__name__, type(node).__name__)
            self.refuse(node, f"{form} is not run here")
        return method(node)

    # ------------------------------------------------------------------------------ leaves
    def _c_Constant(self, node: ast.Constant) -> Evaluator:
        value = node.value
        if value is not None and not isinstance(value, (bool, int, float, str)):
            self.refuse(node, f"the constant {value!r} ({type(value).__name__}) is not run here",
                        "constants are numbers, strings, True, False and None")
        try:
            _sized(value)
        except _Stop as exc:
            self.refuse(node, f"the constant is {exc}", None)
        return lambda env: value

    def _c_Name(self, node: ast.Name) -> Evaluator:
        name = python_name(node.id)
        if name in self.names:
            key = self.names[name]
            return lambda env: env[key]
        if name in CALLS:
            self.refuse(node, f"{name} is a function here, used as a value", f"call it: {name}(...)")
        self.refuse(node, f"unknown name {node.id!r}: names are the tuning parameters",
                    did_you_mean(name, sorted(self.names)) or f"the parameters are {sorted(self.names)}")

    def _sequence(self, node, make) -> Evaluator:
        items = [self.build(e) for e in node.elts]
        return lambda env: make(item(env) for item in items)

    def _c_List(self, node):
        return self._sequence(node, list)

    def _c_Tuple(self, node):
        return self._sequence(node, tuple)

    def _c_Set(self, node):
        return self._sequence(node, frozenset)

    # ------------------------------------------------------------------------------ operators
    def _c_BinOp(self, node: ast.BinOp) -> Evaluator:
        op = type(node.op)
        if op not in _BINARY:
            self.refuse(node, f"{_FORMS.get(op.__name__, op.__name__)} is not run here")
        if op is ast.Mod and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            self.refuse(node, "`%` on a string is formatting, not arithmetic", "compare the string with == or in")
        function = _guarded(op, _BINARY[op])
        left, right = self.build(node.left), self.build(node.right)
        return lambda env: _sized(function(left(env), right(env)))

    def _c_UnaryOp(self, node: ast.UnaryOp) -> Evaluator:
        function, operand = _UNARY[type(node.op)], self.build(node.operand)
        return lambda env: function(operand(env))

    def _c_BoolOp(self, node: ast.BoolOp) -> Evaluator:
        values = [self.build(v) for v in node.values]
        if isinstance(node.op, ast.And):
            def conjunction(env):
                for value in values:
                    result = value(env)
                    if not result:
                        return result
                return result
            return conjunction

        def disjunction(env):
            for value in values:
                result = value(env)
                if result:
                    return result
            return result
        return disjunction

    def _c_Compare(self, node: ast.Compare) -> Evaluator:
        for op in node.ops:
            if isinstance(op, (ast.Is, ast.IsNot)):
                self.refuse(node, "`is` compares object identity, not values", "use == or !=")
        left = self.build(node.left)
        steps = [(_COMPARE[type(op)], self.build(right)) for op, right in zip(node.ops, node.comparators)]

        def chain(env):
            a = left(env)
            for function, right in steps:
                b = right(env)
                if not function(a, b):
                    return False
                a = b
            return True
        return chain

    def _c_IfExp(self, node: ast.IfExp) -> Evaluator:
        test, body, orelse = self.build(node.test), self.build(node.body), self.build(node.orelse)
        return lambda env: body(env) if test(env) else orelse(env)

    def _c_Subscript(self, node: ast.Subscript) -> Evaluator:
        constant = isinstance(node.value, (ast.List, ast.Tuple, ast.Name)) or (
            isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))
        if not constant:
            self.refuse(node, "indexing something other than a literal list, tuple or string or a parameter",
                        "index a literal or a parameter: [1, 2, 4][x], kind[0]")
        value, index = self.build(node.value), self.build(node.slice)
        return lambda env: value(env)[index(env)]

    def _c_Slice(self, node: ast.Slice) -> Evaluator:
        parts = [None if p is None else self.build(p) for p in (node.lower, node.upper, node.step)]
        return lambda env: slice(*(None if p is None else p(env) for p in parts))

    def _c_Call(self, node: ast.Call) -> Evaluator:
        if not isinstance(node.func, ast.Name):
            form = _FORMS.get(type(node.func).__name__, "this call")
            self.refuse(node.func, f"{form} is not run here")
        name = python_name(node.func.id)
        if name in self.names:
            self.refuse(node, f"{name!r} is a tuning parameter, called like a function")
        if name not in CALLS:
            self.refuse(node, f"a call to {node.func.id}() is not run here (no name but the parameters and "
                              f"{_CALL_LIST})")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            self.refuse(node, f"{name}() takes plain positional arguments only here")
        function, least, most = CALLS[name]
        if not least <= len(node.args) <= most:
            count = f"{least}" if least == most else f"{least} to {most}"
            self.refuse(node, f"{name}() takes {count} arguments, got {len(node.args)}", None)
        if name == "pow":
            function = _call_pow(function)
        elif name == "round":
            function = _call_round(function)
        elif name == "sum":
            function = _call_sum(function)
        arguments = [self.build(a) for a in node.args]
        return lambda env: _sized(function(*[a(env) for a in arguments]))


class PythonPredicate:
    """A checked restriction string as a predicate of a configuration (a dict of parameter values):
    its truth, False where an arithmetic error makes it undefined (counted in `undefined`, the first
    such configuration in `example`)."""

    def __init__(self, text: str, evaluate: Evaluator):
        self.text, self._evaluate = text, evaluate
        self.undefined = 0
        self.example: dict | None = None

    def __call__(self, config: dict) -> bool:
        try:
            return bool(self._evaluate(config))
        except ArithmeticError:
            self.undefined += 1
            if self.example is None:
                self.example = dict(config)
            return False
        except _Stop as exc:
            raise UnsafeExpression(f"restriction {self.text!r} at {dict(config)}: {exc}", hint=exc.hint) from None
        except Exception as exc:    # noqa: BLE001 - any Python error of the user's expression, named
            raise UnsafeExpression(f"restriction {self.text!r} at {dict(config)}: "
                                   f"{type(exc).__name__}: {exc}",
                                   hint="Python raises this for that configuration; guard the expression "
                                        "(e.g. `x if c else y`)") from None

    def __repr__(self) -> str:
        return f"PythonPredicate({self.text!r})"


def compile_predicate(text: str, names) -> PythonPredicate:
    """The restriction string `text` over the parameters `names`, checked and compiled into a
    `PythonPredicate`; `UnsafeExpression` (an `OptionError`) names what is not run and why."""
    if not isinstance(text, str):
        raise UnsafeExpression(f"restriction {text!r}: expected a string")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise UnsafeExpression(f"restriction {text!r} is not a Python expression: {exc.msg}",
                               hint="a Kernel Tuner string restriction is a Python boolean expression of "
                                    "parameter names") from None
    return PythonPredicate(text, _Compiler(text, list(names)).build(tree.body))
