"""Kernel Tuner restriction strings that the T1 reader cannot translate, run as Python predicates
without `eval`.

Kernel Tuner runs a restriction string as Python (it compiles `def r(<params>): return <string>`
in its own module's globals), so it accepts forms our language has no place for: bitwise `&`,
`|`, `^`, `~`, `round()`, `len()`, a substring test `'a' in kind`, indexing a constant list by a
parameter, `**` or `<<` by a parameter with many values. `t1.conditions` refuses those (they
cannot be compiled); `compile_predicate` runs them instead, in Python, on each configuration:

- a string longer than `MAX_TEXT` characters is refused before it is parsed; the string is parsed
  with `ast` (mode `eval`) and checked node by node against a whitelist; the checked tree is turned
  into a tree of Python closures (one per node, `_c_<Node>` methods), never into code for
  `eval`/`exec`/`compile`. A chain of binary operators (`a + b - c + ...`, grouped to the left as
  Python groups it), of unary operators and of `x if c else y if d else ...` is one closure that
  loops, so a 1,000-term sum is not 1,000 calls deep; any other nesting deeper than `MAX_DEPTH`
  levels is refused by name;
- names are the tuning parameters only; the calls are `abs bool divmod float int len max min pow
  round str sum` by name (positional arguments); literals are numbers, strings, booleans, `None`
  and lists, tuples and sets of expressions; a subscript indexes or slices a literal or a
  parameter's value only (never a computed value); a part in which no parameter occurs is computed
  once, when the string is read (and refused then if it is past a bound);
- refused, with the form named: attribute access (`np.prod`, `x.bit_length()`), any other call or
  name, keyword arguments, comprehensions, lambdas, `:=`, f-strings, dicts, `is` (identity, not
  value), `%` on a string (formatting);
- bounded by size and by work, each evaluation on its own (`_Run`): an integer past `MAX_INT_BITS`
  bits; a value whose *size* is past `MAX_LENGTH` (a string's characters; a list's, tuple's or
  set's items with the sizes of the strings, lists and large integers inside counted, each time it
  holds them: `[[0] * 100] * 100` has size 10,100 though it shares one inner list); and more than
  `MAX_WORK` units of work for one configuration (every value built, compared, converted or
  searched costs its size; integer arithmetic its 64-bit words, multiplication and division the
  product of their operands' words). Whatever would be past a bound is refused *before* Python
  builds it where its size is known beforehand (`*`, `+`, `**`, `<<`, `str()`, `int()`,
  three-argument `pow`), with `UnsafeExpression` naming the restriction and the configuration.

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
import math
import operator
from typing import Any, Callable

from solverspace.core.errors import OptionError, did_you_mean, python_name

__all__ = ["MAX_DEPTH", "MAX_INT_BITS", "MAX_LENGTH", "MAX_ROUND_DIGITS", "MAX_TEXT", "MAX_WORK", "CALLS",
           "UnsafeExpression", "PythonPredicate", "check_text", "compile_predicate", "parse_restriction"]

MAX_TEXT = 10_000          # characters of a restriction string; a longer one is refused before it is parsed
MAX_DEPTH = 100            # levels of nesting (after chains are flattened); deeper is refused when read
MAX_INT_BITS = 65_536      # an integer result larger than this stops the evaluation
MAX_LENGTH = 10_000        # the size of a string, list, tuple or set result (nested sizes counted)
MAX_WORK = 2_000_000       # units of work one evaluation (one configuration) may take
MAX_ROUND_DIGITS = 4_096   # round(x, n) with |n| past this would build 10 ** |n|

Evaluator = Callable[["_Run"], Any]
_SEQUENCES = (str, list, tuple)
_CONTAINERS = (list, tuple, frozenset)


class UnsafeExpression(OptionError):
    """A restriction string the safe evaluator does not run: a form outside its whitelist, a value
    past its size bounds, or a Python error other than an arithmetic one while it runs."""


class _Stop(Exception):
    """Raised inside an evaluation: a value or work past the bounds, or a form refused by its
    operands' types (the message says which, `hint` how to write it instead)."""

    def __init__(self, message: str, hint: str = "the safe evaluator bounds the values a restriction builds and "
                                                 "the work it does; write it with smaller intermediate values"):
        super().__init__(message)
        self.hint = hint


def _words(value: int) -> int:
    """The 64-bit words of an integer (the unit of work of integer arithmetic)."""
    return (value.bit_length() >> 6) + 1


def _short(value) -> str:
    """A value for a message: its repr, or what it is when that would be long."""
    if _is_int(value) and value.bit_length() > 64:
        return f"(an integer of {value.bit_length():,} bits)"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(value) -> bool:
    return isinstance(value, int)        # bool included, as in Python's arithmetic


class _Run:
    """One evaluation: the configuration, the work spent so far, and the sizes measured (by
    identity, with the value kept alive: a list repeated by reference is measured once)."""

    __slots__ = ("env", "work", "sizes", "known")

    def __init__(self, env: dict, known: dict | None = None):
        self.env, self.work, self.sizes = env, 0, {}
        self.known = known if known is not None else {}      # sizes of the values computed when read

    def spend(self, units: int, what: str) -> None:
        self.work += units
        if self.work > MAX_WORK:
            raise _Stop(f"more than MAX_WORK={MAX_WORK:,} units of work for one configuration ({what})")

    def size(self, value) -> int:
        """A string's characters; a list's, tuple's or set's items plus the sizes of the strings and
        containers inside and the extra words of large integers, counted each time they are held."""
        if isinstance(value, str):
            return len(value)
        if not isinstance(value, _CONTAINERS):
            return _words(value) if _is_int(value) else 1
        known = self.sizes.get(id(value)) or self.known.get(id(value))
        if known is not None:
            return known[1]
        total = len(value)
        for item in value:
            if isinstance(item, (str, *_CONTAINERS)):
                total += self.size(item)
            elif _is_int(item) and item.bit_length() >= 64:
                total += _words(item) - 1
        self.sizes[id(value)] = (value, total)
        return total

    def remember(self, value, size: int):
        if isinstance(value, _CONTAINERS):
            self.sizes[id(value)] = (value, size)
        return value

    def cost(self, value) -> int:
        """The work of visiting a value: its size (an integer: its words)."""
        return self.size(value)

    def check(self, value):
        """`value`, checked against the size bounds."""
        if _is_int(value):
            if value.bit_length() > MAX_INT_BITS:
                raise _Stop(f"an integer of {value.bit_length():,} bits, more than MAX_INT_BITS={MAX_INT_BITS:,}")
        elif isinstance(value, (str, *_CONTAINERS)):
            _check_size(self.size(value), f"a {type(value).__name__}")
        return value

    def printed(self, value, top: bool = True) -> int:
        """An upper bound of `len(str(value))` (`top`) or of `len(repr(value))`, without building it."""
        if isinstance(value, str):
            if top:
                return len(value)
            return (4 if value.isascii() else 10) * len(value) + 2       # escapes: \\x00, \\U0001f600
        if isinstance(value, bool) or value is None:
            return 5
        if _is_int(value):
            return int(value.bit_length() * 0.30103) + 2
        if isinstance(value, float):
            return 24
        if not isinstance(value, _CONTAINERS):
            return 64
        key = ("printed", id(value))
        known = self.sizes.get(key) or self.known.get(key)
        if known is not None:
            return known[1]
        total = 13 + sum(self.printed(item, False) + 2 for item in value)     # `frozenset({...})` at most
        self.sizes[key] = (value, total)
        return total


def _check_size(size: int, what: str) -> None:
    if size > MAX_LENGTH:
        raise _Stop(f"{what} of size {size:,}, more than MAX_LENGTH={MAX_LENGTH:,} (items, nested items counted, "
                    f"and characters)")


# ---------------------------------------------------------------------------------- operators, bounded
def _integers(function, what: str, product: bool = False):
    """An integer operation's work: its operands' words (`product`: their product, as for `*`, `/`, `//`, `%`)."""
    def apply(run: _Run, a, b):
        if isinstance(a, int) and isinstance(b, int):      # the common case, inline
            wa, wb = (a.bit_length() >> 6) + 1, (b.bit_length() >> 6) + 1
            run.work += wa * wb if product else wa + wb
            if run.work > MAX_WORK:
                run.spend(0, what)
            result = function(a, b)
            if isinstance(result, int) and result.bit_length() <= MAX_INT_BITS:
                return result
            return run.check(result)
        run.spend(run.cost(a) + run.cost(b), what)
        return run.check(function(a, b))
    return apply


def _add(run: _Run, a, b):
    if isinstance(a, _SEQUENCES) and type(a) is type(b):
        size = run.size(a) + run.size(b)
        _check_size(size, f"a {type(a).__name__} joined by +")
        run.spend(size, "+")
        return run.remember(a + b, size)
    return _plain_add(run, a, b)


_plain_add = _integers(operator.add, "+")


def _multiply(run: _Run, a, b):
    for sequence, count in ((a, b), (b, a)):
        if isinstance(sequence, _SEQUENCES) and _is_int(count):
            size = run.size(sequence) * max(count, 0)
            if size > MAX_LENGTH:
                raise _Stop(f"a {type(sequence).__name__} of size {run.size(sequence):,} repeated {_short(count)} times: "
                            f"size {_short(size) if size.bit_length() > 64 else format(size, ',')}, more than MAX_LENGTH={MAX_LENGTH:,} (items, nested items counted, "
                            f"and characters)")
            run.spend(size, "*")
            return run.remember(sequence * count, size)
    if _is_int(a) and _is_int(b) and a.bit_length() + b.bit_length() - 1 > MAX_INT_BITS:
        raise _Stop(f"a product of integers of {a.bit_length():,} and {b.bit_length():,} bits: more than "
                    f"MAX_INT_BITS={MAX_INT_BITS:,} bits")
    return _plain_multiply(run, a, b)


_plain_multiply = _integers(operator.mul, "*", product=True)


def _power(run: _Run, a, b):
    if _is_int(a) and _is_int(b) and b > 0 and abs(a) > 1:
        bits = b * math.log2(abs(a)) if b.bit_length() <= 64 else math.inf
        if bits > MAX_INT_BITS + 1:
            raise _Stop(f"{_short(a)} ** {_short(b)} has more than MAX_INT_BITS={MAX_INT_BITS:,} bits")
        words = int(bits) // 64 + 1
        run.spend(words * words // 4 + 1, "**")
        return run.check(a ** b)
    run.spend(run.cost(a) + run.cost(b), "**")
    return run.check(a ** b)


def _shift_left(run: _Run, a, b):
    if _is_int(a) and _is_int(b) and a and b > 0 and abs(a).bit_length() + b > MAX_INT_BITS:
        raise _Stop(f"{_short(a)} << {_short(b)} has more than MAX_INT_BITS={MAX_INT_BITS:,} bits")
    return _plain_shift(run, a, b)


_plain_shift = _integers(operator.lshift, "<<")


def _modulo(run: _Run, a, b):
    if isinstance(a, str):
        raise _Stop("`%` on a string is formatting, not arithmetic", "compare the string with == or in")
    return _plain_modulo(run, a, b)


_plain_modulo = _integers(operator.mod, "%", product=True)

_BINARY = {ast.Add: _add, ast.Sub: _integers(operator.sub, "-"), ast.Mult: _multiply,
           ast.Div: _integers(operator.truediv, "/", product=True),
           ast.FloorDiv: _integers(operator.floordiv, "//", product=True), ast.Mod: _modulo, ast.Pow: _power,
           ast.LShift: _shift_left, ast.RShift: _integers(operator.rshift, ">>"),
           ast.BitAnd: _integers(operator.and_, "&"), ast.BitOr: _integers(operator.or_, "|"),
           ast.BitXor: _integers(operator.xor, "^")}
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


# ---------------------------------------------------------------------------------- calls, bounded
def _visiting(function, name: str):
    """A call whose work is the sizes of its arguments (it visits them once)."""
    def call(run: _Run, *args):
        run.spend(1 + sum(run.cost(a) for a in args), f"{name}()")
        return run.check(function(*args))
    return call


def _call_divmod(run: _Run, a, b):
    return _integers(divmod, "divmod()", product=True)(run, a, b)


def _call_int(run: _Run, *args):
    if args and isinstance(args[0], str):
        digits = len(args[0]) // 19 + 1          # Python's conversion of a string is quadratic in its length
        run.spend(digits * digits + len(args[0]), "int()")
    else:
        run.spend(1 + sum(run.cost(a) for a in args), "int()")
    return run.check(int(*args))


def _call_pow(run: _Run, *args):
    if len(args) == 2:
        return _power(run, *args)
    base, exponent, modulus = args
    if _is_int(base) and _is_int(exponent) and _is_int(modulus):
        words = _words(modulus)
        run.spend((abs(exponent).bit_length() + 1) * words * words + _words(base), "pow()")
    return run.check(pow(base, exponent, modulus))


def _call_round(run: _Run, *args):
    if len(args) == 2 and _is_int(args[1]):
        if abs(args[1]) > MAX_ROUND_DIGITS:
            raise _Stop(f"round(..., {_short(args[1])}): more than MAX_ROUND_DIGITS={MAX_ROUND_DIGITS:,} digits")
        words = abs(args[1]) // 19 + 1
        run.spend(words * words + run.cost(args[0]), "round()")
    else:
        run.spend(1 + sum(run.cost(a) for a in args), "round()")
    return run.check(round(*args))


def _call_str(run: _Run, *args):
    if len(args) == 1 and isinstance(args[0], int) and args[0].bit_length() <= 64:     # the common case
        run.spend(22, "str()")
        return str(args[0])
    if args:
        length = run.printed(args[0])
        if length > MAX_LENGTH:
            raise _Stop(f"str() of a {type(args[0]).__name__} would be up to {length:,} characters, more than "
                        f"MAX_LENGTH={MAX_LENGTH:,}")
        words = _words(args[0]) if _is_int(args[0]) else 0      # an integer's decimal digits: quadratic
        run.spend(length + words * words, "str()")
    return run.check(str(*args))


def _call_sum(run: _Run, *args):
    if len(args) == 2 and not isinstance(args[1], (int, float)):   # bool is an int
        raise _Stop(f"sum(..., {type(args[1]).__name__}) concatenates sequences; only numbers are summed here")
    return _visiting(sum, "sum")(run, *args)


def _plain(function, least: int, most: int) -> tuple:
    return function, least, most


CALLS = {    # name: (function, least arguments, most arguments)
    "abs": _plain(abs, 1, 1), "bool": _plain(bool, 0, 1), "divmod": _plain(divmod, 2, 2),
    "float": _plain(float, 0, 1), "int": _plain(int, 0, 2), "len": _plain(len, 1, 1),
    "max": _plain(max, 1, 64), "min": _plain(min, 1, 64), "pow": _plain(pow, 2, 3),
    "round": _plain(round, 1, 2), "str": _plain(str, 0, 1), "sum": _plain(sum, 1, 2),
}
_BOUNDED_CALLS = {"divmod": _call_divmod, "int": _call_int, "pow": _call_pow, "round": _call_round,
                  "str": _call_str, "sum": _call_sum}
_CALL_LIST = ", ".join(sorted(CALLS))
_HINT = f"write it with operators and the calls {_CALL_LIST}"


def _bounded_call(name: str):
    if name in _BOUNDED_CALLS:
        return _BOUNDED_CALLS[name]
    if name in ("bool", "len"):
        function = CALLS[name][0]

        def constant_time(run: _Run, *args):
            run.spend(1, f"{name}()")
            return function(*args)
        return constant_time
    return _visiting(CALLS[name][0], name)


def check_text(text: str) -> None:
    """Refuse a restriction string longer than `MAX_TEXT` characters (before anything reads it)."""
    if len(text) > MAX_TEXT:
        raise UnsafeExpression(f"restriction {text[:60]!r}... is {len(text):,} characters long, more than "
                               f"MAX_TEXT={MAX_TEXT:,}",
                               hint="a restriction is a short Python expression; split a long one into several "
                                    "restrictions, or give long value lists as a parameter's values")


class _Compiler:
    """Checks a parsed restriction against the whitelist and builds its closures."""

    def __init__(self, text: str, names: list):
        self.text = text
        self.names = {python_name(n): n for n in names}     # as Python reads the name: the key in a configuration
        self.reading = _Run({})     # the parts computed when read: one budget for them all

    def refuse(self, node: ast.AST, problem: str, hint: str | None = _HINT):
        column = getattr(node, "col_offset", None)
        where = f", column {column + 1}" if column is not None else ""
        raise UnsafeExpression(f"restriction {self.text!r}{where}: {problem}", hint=hint)

    def build(self, node: ast.AST, depth: int) -> Evaluator:
        if depth > MAX_DEPTH:
            self.refuse(node, f"nested more than MAX_DEPTH={MAX_DEPTH} levels deep",
                        "write it with fewer nested parentheses, calls or lists (chains such as a + b + c are fine)")
        method = getattr(self, "_c_" + type(node).__name__, None)
        if method is None:
            form = _FORMS.get(type(node).__name__, type(node).__name__)
            self.refuse(node, f"{form} is not run here")
        evaluate = method(node, depth + 1)
        if isinstance(node, ast.Constant) or not _constant(node):
            return evaluate
        try:                # the same for every configuration: computed once, bounded when read
            value = evaluate(self.reading)
        except _Stop as exc:
            self.refuse(node, f"this part is the same for every configuration and {exc}", None)
        except Exception:   # noqa: BLE001 - Python's error (1 / 0, `{[1]}`): raised on each configuration
            return evaluate
        return lambda run: value

    # ------------------------------------------------------------------------------ leaves
    def _c_Constant(self, node: ast.Constant, depth: int) -> Evaluator:
        value = node.value
        if value is not None and not isinstance(value, (bool, int, float, str)):
            self.refuse(node, f"the constant {value!r} ({type(value).__name__}) is not run here",
                        "constants are numbers, strings, True, False and None")
        try:
            _Run({}).check(value)
        except _Stop as exc:
            self.refuse(node, f"the constant is {exc}", None)
        return lambda run: value

    def _c_Name(self, node: ast.Name, depth: int) -> Evaluator:
        name = python_name(node.id)
        if name in self.names:
            key = self.names[name]
            return lambda run: run.env[key]
        if name in CALLS:
            self.refuse(node, f"{name} is a function here, used as a value", f"call it: {name}(...)")
        self.refuse(node, f"unknown name {node.id!r}: names are the tuning parameters",
                    did_you_mean(name, sorted(self.names)) or f"the parameters are {sorted(self.names)}")

    def _sequence(self, node, make, depth: int) -> Evaluator:
        items = [self.build(e, depth) for e in node.elts]

        def sequence(run: _Run):
            run.spend(1 + len(items), "a list, tuple or set")
            return run.check(make([item(run) for item in items]))
        return sequence

    def _c_List(self, node, depth):
        return self._sequence(node, list, depth)

    def _c_Tuple(self, node, depth):
        return self._sequence(node, tuple, depth)

    def _c_Set(self, node, depth):
        return self._sequence(node, frozenset, depth)

    # ------------------------------------------------------------------------------ operators
    def _c_BinOp(self, node: ast.BinOp, depth: int) -> Evaluator:
        chain = []          # a + b - c is (a + b) - c: the left spine, walked without recursion
        while isinstance(node, ast.BinOp):
            chain.append(node)
            node = node.left
        first = self.build(node, depth)
        steps = []
        for link in reversed(chain):
            op = type(link.op)
            if op not in _BINARY:
                self.refuse(link, f"{_FORMS.get(op.__name__, op.__name__)} is not run here")
            if op is ast.Mod and isinstance(link.left, ast.Constant) and isinstance(link.left.value, str):
                self.refuse(link, "`%` on a string is formatting, not arithmetic", "compare the string with == or in")
            steps.append((_BINARY[op], self.build(link.right, depth)))

        def operations(run: _Run):
            value = first(run)
            for apply, right in steps:
                value = apply(run, value, right(run))
            return value
        return operations

    def _c_UnaryOp(self, node: ast.UnaryOp, depth: int) -> Evaluator:
        functions = []      # not not x, - - x: innermost first
        while isinstance(node, ast.UnaryOp):
            functions.insert(0, _UNARY[type(node.op)])
            node = node.operand
        operand = self.build(node, depth)

        def unary(run: _Run):
            value = operand(run)
            for function in functions:
                run.spend(_words(value) if _is_int(value) else 1, "a unary operator")
                value = function(value)
            return value
        return unary

    def _c_BoolOp(self, node: ast.BoolOp, depth: int) -> Evaluator:
        values = [self.build(v, depth) for v in node.values]
        if isinstance(node.op, ast.And):
            def conjunction(run):
                for value in values:
                    result = value(run)
                    if not result:
                        return result
                return result
            return conjunction

        def disjunction(run):
            for value in values:
                result = value(run)
                if result:
                    return result
            return result
        return disjunction

    def _c_Compare(self, node: ast.Compare, depth: int) -> Evaluator:
        for op in node.ops:
            if isinstance(op, (ast.Is, ast.IsNot)):
                self.refuse(node, "`is` compares object identity, not values", "use == or !=")
        left = self.build(node.left, depth)
        steps = [(_COMPARE[type(op)], self.build(right, depth)) for op, right in zip(node.ops, node.comparators)]

        def chain(run: _Run):
            a = left(run)
            for function, right in steps:
                b = right(run)
                if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not (
                        isinstance(a, int) and a.bit_length() > 64 or isinstance(b, int) and b.bit_length() > 64):
                    run.work += 2
                else:
                    run.spend(run.cost(a) + run.cost(b), "a comparison")
                if not function(a, b):
                    return False
                a = b
            return True
        return chain

    def _c_IfExp(self, node: ast.IfExp, depth: int) -> Evaluator:
        branches = []       # a if c else b if d else e: the else spine, walked without recursion
        while isinstance(node, ast.IfExp):
            branches.append((self.build(node.test, depth), self.build(node.body, depth)))
            node = node.orelse
        orelse = self.build(node, depth)

        def choose(run: _Run):
            for test, body in branches:
                if test(run):
                    return body(run)
            return orelse(run)
        return choose

    def _c_Subscript(self, node: ast.Subscript, depth: int) -> Evaluator:
        constant = isinstance(node.value, (ast.List, ast.Tuple, ast.Name)) or (
            isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))
        if not constant:
            self.refuse(node, "indexing something other than a literal list, tuple or string or a parameter",
                        "index a literal or a parameter: [1, 2, 4][x], kind[0]")
        value, index = self.build(node.value, depth), self.build(node.slice, depth)

        def subscript(run: _Run):
            result = value(run)[index(run)]
            run.spend(len(result) if isinstance(result, _SEQUENCES) else 1, "a subscript")
            return result
        return subscript

    def _c_Slice(self, node: ast.Slice, depth: int) -> Evaluator:
        parts = [None if p is None else self.build(p, depth) for p in (node.lower, node.upper, node.step)]
        return lambda run: slice(*(None if p is None else p(run) for p in parts))

    def _c_Call(self, node: ast.Call, depth: int) -> Evaluator:
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
        _, least, most = CALLS[name]
        if not least <= len(node.args) <= most:
            count = f"{least}" if least == most else f"{least} to {most}"
            self.refuse(node, f"{name}() takes {count} arguments, got {len(node.args)}", None)
        function = _bounded_call(name)
        arguments = [self.build(a, depth) for a in node.args]
        return lambda run: function(run, *[a(run) for a in arguments])


def _constant(node: ast.AST) -> bool:
    """Whether no parameter occurs in `node` (its value is the same for every configuration)."""
    return not any(isinstance(n, ast.Name) for n in ast.walk(node))


class PythonPredicate:
    """A checked restriction string as a predicate of a configuration (a dict of parameter values):
    its truth, False where an arithmetic error makes it undefined (counted in `undefined`, the first
    such configuration in `example`)."""

    def __init__(self, text: str, evaluate: Evaluator, known: dict | None = None):
        self.text, self._evaluate, self._known = text, evaluate, known or {}
        self.undefined = 0
        self.example: dict | None = None

    def __call__(self, config: dict) -> bool:
        try:
            return bool(self._evaluate(_Run(config, self._known)))
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
    tree = parse_restriction(text)
    compiler = _Compiler(text, list(names))
    evaluate = compiler.build(tree.body, 0)
    return PythonPredicate(text, evaluate, compiler.reading.sizes)


def parse_restriction(text: str) -> ast.Expression:
    """A restriction string's syntax tree (`ast.parse`, mode `eval`); a string past `MAX_TEXT`
    characters, one that is not an expression, or one nested past Python's parser is refused."""
    if not isinstance(text, str):
        raise UnsafeExpression(f"restriction {text!r}: expected a string")
    check_text(text)
    try:
        return ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError) as exc:      # ValueError: a NUL character
        raise UnsafeExpression(f"restriction {text!r} is not a Python expression: {getattr(exc, 'msg', exc)}",
                               hint="a Kernel Tuner string restriction is a Python boolean expression of "
                                    "parameter names") from None
    except (RecursionError, MemoryError) as exc:
        raise UnsafeExpression(f"restriction {text!r} cannot be parsed ({type(exc).__name__}): it is nested too "
                               f"deeply for Python's parser (Python and Kernel Tuner cannot compile it either)",
                               hint="split it into several restrictions") from None
