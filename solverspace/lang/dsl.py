"""The objects a space file sees: symbols that build IR through operator overloading, domain
objects for iterators, and the declaration helpers (`iterator`, `require`, `reject_if`, ...).

Module-level code runs as ordinary Python; an expression over parameters builds an IR tree
instead of a value. Python constructs that cannot be overloaded (`if`, `and`, `or`, `not` on a
symbol) refuse with a message pointing to the function forms, which `lowering` translates from
their source.
"""
from __future__ import annotations

import builtins
from types import FunctionType

from solverspace.lang import ir
from solverspace.lang.decimals import float_node
from solverspace.core.errors import SpaceDefinitionError
from solverspace.core.records import MutableRecord
from solverspace.core.strenum import StrEnum
from solverspace.core.orders import ARITY
from solverspace.lang.evaluate import compile_domain
from solverspace.lang.lowering import fold, membership as lower_membership
from solverspace.lang.printing import to_source

_NOT_A_VALUE = (
    "{what} is a symbolic expression here, not a value, so Python's `if`, `and`, `or`, `not` "
    "and int() cannot decide it at load time")
_NOT_A_VALUE_HINT = ("put the logic in an @iterator or @require/@reject_if function (their bodies may "
                     "use if/elif/else, and, or), or use if_then_else(cond, a, b)")


FLOAT_HINT = ("values are integers, exact fractions and strings: `/` between two plain numbers is Python's "
              "floating-point division at load time; use `//` for floor division, or divide a parameter or "
              "derived value, which is exact (`x / 2` is a fraction)")
MEMBERSHIP = "__solverspace_in__"  # the loader rewrites module-level `a in b` into this call


def as_node(value, context: str = "a space expression", *, floats: bool = True) -> ir.Expr:
    """Wrap a Python value or symbol as an IR expression (`context` says where, for messages).
    A float is kept as `ir.Float` for the loader to read exactly in a performance model or refuse
    in a constraint (`decimals`); where the context is an iterator (`floats=False`) it is refused
    at once."""
    if isinstance(value, Sym):
        return value.node
    if type(value) in (int, str, bool):
        return ir.Const(value)
    if isinstance(value, DomainObj):
        raise SpaceDefinitionError(
            "an iterator (range/iterator(...)) was used as a value before being assigned to a name",
            hint="assign the iterator to a parameter name first, then use that name")
    if isinstance(value, float):
        if floats:
            return float_node(value, context)
        raise SpaceDefinitionError(f"floating-point value {value!r} in {context}", hint=FLOAT_HINT)
    raise SpaceDefinitionError(f"{type(value).__name__} value {value!r} cannot be used in a space expression")


def _binop(op):
    def forward(self, other):
        return Sym(ir.BinOp(op, self.node, as_node(other)))

    def backward(self, other):
        return Sym(ir.BinOp(op, as_node(other), self.node))
    return forward, backward


def _compare(op):
    def method(self, other):
        return Sym(ir.Compare(op, self.node, as_node(other)))
    return method


def _logical(cls, name):
    def method(self, other):
        other_node = as_node(other)
        if not (ir.is_boolean(self.node) and ir.is_boolean(other_node)):
            raise SpaceDefinitionError(
                f"`{name}` is used on non-boolean operands; bitwise operators are not part of the language",
                hint="`&` and `|` combine conditions (comparisons) with short-circuit and/or")
        return Sym(cls((self.node, other_node)))
    return method


class Sym:
    """A symbolic value at module level: a parameter, a derived value or an expression of them."""

    __slots__ = ("node",)

    def __init__(self, node: ir.Expr):
        self.node = node

    __add__, __radd__ = _binop("+")
    __sub__, __rsub__ = _binop("-")
    __mul__, __rmul__ = _binop("*")
    __floordiv__, __rfloordiv__ = _binop("//")
    __mod__, __rmod__ = _binop("%")
    __truediv__, __rtruediv__ = _binop("/")

    def __pow__(self, other):
        if type(other) is not int or other < 0:
            raise SpaceDefinitionError(
                f"exponent {other!r}: `**` takes only a non-negative integer constant exponent")
        return Sym(ir.BinOp("**", self.node, ir.Const(other)))

    def __rpow__(self, other):
        raise SpaceDefinitionError("`**` takes only a non-negative integer constant exponent, not a parameter")

    __lt__ = _compare("<")
    __le__ = _compare("<=")
    __gt__ = _compare(">")
    __ge__ = _compare(">=")
    __eq__ = _compare("==")
    __ne__ = _compare("!=")
    __hash__ = None

    __and__ = _logical(ir.And, "&")
    __or__ = _logical(ir.Or, "|")

    def __rand__(self, other):
        return Sym(as_node(other)) & self

    def __ror__(self, other):
        return Sym(as_node(other)) | self

    def __invert__(self):
        if not ir.is_boolean(self.node):
            raise SpaceDefinitionError("`~` is used on a non-boolean operand; bitwise operators are not part of the language",
                                       hint="use `~` only to negate a condition")
        return Sym(ir.Not(self.node))

    def __neg__(self):
        return Sym(ir.Neg(self.node))

    def __pos__(self):
        return self

    def __abs__(self):
        return Sym(ir.Abs(self.node))

    def _refuse(self, *args):
        raise SpaceDefinitionError(_NOT_A_VALUE.format(what=f"`{to_source(self.node)}`"), hint=_NOT_A_VALUE_HINT)

    __bool__ = __index__ = __int__ = __float__ = __iter__ = __len__ = _refuse

    def __repr__(self):
        return to_source(self.node)


class DomainObj:
    """An iterator not yet bound to a name: `range(...)`, `iterator([...])` and their algebra."""

    __slots__ = ("node",)

    def __init__(self, node: ir.Domain):
        self.node = node

    def _other(self, other):
        if isinstance(other, DomainObj):
            return other.node
        if isinstance(other, (list, tuple)):
            return values_domain(other)
        raise SpaceDefinitionError(
            "iterator algebra (| & -) combines iterators: range(...), iterator([...]) or lists",
            hint="build the combined iterator before assigning it to a parameter name")

    def __or__(self, other):
        return DomainObj(ir.SetOp("union", self.node, self._other(other)))

    def __and__(self, other):
        return DomainObj(ir.SetOp("intersection", self.node, self._other(other)))

    def __sub__(self, other):
        return DomainObj(ir.SetOp("difference", self.node, self._other(other)))

    def __iter__(self):
        """Constant iterators iterate like Python's, so list comprehensions keep working."""
        if ir.refs(self.node):
            raise SpaceDefinitionError("an iterator that depends on parameters cannot be iterated at load time")
        return iter(compile_domain(self.node, "<iterator>")({}))

    def __bool__(self):
        raise SpaceDefinitionError("an iterator has no truth value at load time", hint=_NOT_A_VALUE_HINT)

    def __repr__(self):
        return to_source(self.node)


def values_domain(items) -> ir.Values:
    return ir.Values(tuple(as_node(i, "a value list", floats=False) for i in items))


def membership(item, container, negate: bool):
    """Module-level `item in container` (`not in` with `negate`): Python's own test on plain
    values; with a parameter on either side, the equalities (or range bounds) that function bodies
    lower `in` to (`lowering.membership`)."""
    sequence = isinstance(container, (list, tuple, set, frozenset))
    if not (isinstance(item, Sym) or isinstance(container, (Sym, DomainObj))
            or (sequence and any(isinstance(v, Sym) for v in container))):
        return (item not in container) if negate else (item in container)
    if isinstance(container, DomainObj):
        node = container.node
    elif isinstance(container, (set, frozenset)):  # no order of its own: a stable one
        node = values_domain(sorted(container, key=lambda v: (type(v).__name__, v)))
    elif sequence:
        node = values_domain(container)
    else:
        node = as_node(container, "the right side of `in`", floats=False)
    found = lower_membership(as_node(item), node)
    if negate:
        found = fold(ir.Not(found))
    return Sym(found)  # symbolic even where decided (`x in ()`), as `x * 0` is


def dsl_range(*args):
    """`range(stop)`, `range(start, stop[, step])` whose arguments may be parameters."""
    if not 1 <= len(args) <= 3:
        raise SpaceDefinitionError(f"range expected 1 to 3 arguments, got {len(args)}")
    if len(args) == 1:
        args = (0, args[0], 1)
    elif len(args) == 2:
        args = (*args, 1)
    if type(args[2]) is int and args[2] == 0:
        raise SpaceDefinitionError("range step is 0", hint="a range step must be a non-zero integer")
    return DomainObj(ir.Range(*(as_node(a, "a range(...) argument", floats=False) for a in args)))


class DeclKind(StrEnum):
    """The decorator of a function-form declaration (messages print it as `@{kind}`)."""

    ITERATOR = "iterator"       # `@iterator` on a plain function (a deferred iterator)
    CLOSURE = "closure"         # `@iterator` on a generator function (a closure iterator)
    REQUIRE = "require"
    REJECT_IF = "reject_if"
    COST = "cost"               # `@cost`: the space's performance model (a lower bound on run time)


class Deferred(MutableRecord):
    """A function-form declaration (@iterator, @require, @reject_if) awaiting lowering."""

    __match_args__ = ("kind", "func", "line", "name")

    def __init__(self, kind: DeclKind, func, line: int, name: str = ""):
        self.kind, self.func, self.line = kind, func, line
        self.name = func.__name__   # whatever was given, as the dataclass's __post_init__ did


class CostDecl(MutableRecord):
    """The space's performance model made by `cost(expr)`: not a constraint (it never changes
    which configurations are valid); `best`/`tune` use it when no model is given."""

    __match_args__ = ("node", "line")

    def __init__(self, node: ir.Expr, line: int | None):
        self.node, self.line = node, line


class ConstraintDecl(MutableRecord):
    """An expression constraint made by `require(expr)` or `reject_if(expr)`."""

    __match_args__ = ("rejects", "node", "line", "name")

    def __init__(self, rejects: bool, node: ir.Expr, line: int, name: str | None = None):
        self.rejects, self.node, self.line, self.name = rejects, node, line, name


class SettingDecl(MutableRecord):
    """`name = setting(default, choices=[...], doc="...")`."""

    __match_args__ = ("default", "choices", "doc")

    def __init__(self, default, choices: tuple | None, doc: str | None):
        self.default, self.choices, self.doc = default, choices, doc


def _plainly_positional(func) -> bool:
    """Whether `func` is a plain Python function whose arguments are all positional, without
    defaults, `*args`, keyword-only arguments or `**kwargs`, read from its code (a function with
    `__wrapped__` or `__signature__`, or any other callable, is left to `inspect.signature`)."""
    if type(func) is not FunctionType or hasattr(func, "__wrapped__") or hasattr(func, "__signature__"):
        return False
    code = func.__code__
    return not (func.__defaults__ or func.__kwdefaults__ or code.co_kwonlyargcount
                or code.co_flags & (CO_VARARGS | CO_VARKEYWORDS))


CO_VARARGS, CO_VARKEYWORDS, CO_GENERATOR = 0x04, 0x08, 0x20   # inspect's code flags (inspect: ~3 ms to import)


def _is_generator_function(func) -> bool:
    """`inspect.isgeneratorfunction`, read from a plain function's code (anything else: inspect's)."""
    if type(func) is FunctionType:
        return bool(func.__code__.co_flags & CO_GENERATOR)
    import inspect
    return inspect.isgeneratorfunction(func)


def check_function(func, kind: str):
    """Check a decorated function when the decorator runs (Hypothesis style)."""
    if _plainly_positional(func):
        return   # what inspect.signature would find (a space with 20 functions, loaded per sweep point)
    import inspect   # another callable: a wrapped function, a partial, a class
    sig = inspect.signature(func)
    for p in sig.parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise SpaceDefinitionError(
                f"@{kind} function {func.__name__!r}: argument {p.name!r} is *args/**kwargs/keyword-only",
                hint="arguments name the parameters, derived values or settings the function uses")
        if p.default is not p.empty:
            raise SpaceDefinitionError(
                f"@{kind} function {func.__name__!r}: argument {p.name!r} has a default value",
                hint="arguments take their values from the space; remove the default")


def make_namespace_functions(line_of_caller, pending_constraints: list, pending_costs: list | None = None):
    """The language's functions, bound to one load (they record where they were called)."""
    pending_costs = [] if pending_costs is None else pending_costs

    def cost(arg):
        """`cost(expr)` or `@cost` on a function: the space's performance model."""
        if callable(arg) and not isinstance(arg, (Sym, DomainObj)):
            check_function(arg, "cost")
            decl = Deferred(DeclKind.COST, arg, line_of_caller())
        else:
            decl = CostDecl(as_node(arg, "cost(...)"), line_of_caller())
        pending_costs.append(decl)
        return decl

    def iterator(arg):
        """`@iterator` on a function (deferred or generator), or `iterator(values)`."""
        if callable(arg) and not isinstance(arg, (Sym, DomainObj)):
            check_function(arg, "iterator")
            kind = DeclKind.CLOSURE if _is_generator_function(arg) else DeclKind.ITERATOR
            return Deferred(kind, arg, line_of_caller())
        if isinstance(arg, DomainObj):
            return arg
        if isinstance(arg, (list, tuple)):
            return DomainObj(values_domain(arg))
        if isinstance(arg, (DomainObj,)) or type(arg) in (range,):
            return DomainObj(values_domain(list(arg)))
        return DomainObj(ir.Values((as_node(arg, "iterator(...)", floats=False),)))

    def _constraint(rejects: bool, word: str):
        def declare(arg, name: str | None = None):
            if callable(arg) and not isinstance(arg, Sym):
                check_function(arg, word)
                return Deferred(DeclKind(word), arg, line_of_caller())
            decl = ConstraintDecl(rejects, as_node(arg), line_of_caller(), name)
            pending_constraints.append(decl)
            return decl
        declare.__name__ = word
        return declare

    def if_then_else(cond, if_true, if_false):
        """Conditional expression on symbols: `if_true if cond else if_false`."""
        if not isinstance(cond, Sym):
            return if_true if cond else if_false
        return Sym(ir.IfExp(cond.node, as_node(if_true), as_node(if_false)))

    def _minmax(cls, builtin):
        def fn(*args, **kwargs):
            items = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
            if any(isinstance(a, Sym) for a in items):
                if kwargs:
                    raise SpaceDefinitionError(f"{builtin.__name__}() on parameters takes no keyword arguments")
                return Sym(cls(tuple(as_node(a) for a in items)))
            return builtin(*args, **kwargs)
        fn.__name__ = builtin.__name__
        return fn

    def dsl_abs(x):
        return Sym(ir.Abs(x.node)) if isinstance(x, Sym) else builtins.abs(x)

    def setting(default, choices=None, doc=None):
        """Declare a named, overridable constant of the space with its allowed values."""
        if type(default) not in (int, str, bool):
            raise SpaceDefinitionError(f"setting default {default!r} must be an int, bool or str",
                                       hint=FLOAT_HINT if isinstance(default, float) else None)
        if choices is not None:
            choices = tuple(choices)
            if default not in choices:
                raise SpaceDefinitionError(f"setting default {default!r} is not one of its choices {list(choices)}")
        return SettingDecl(default, choices, doc)

    def _setop(op):
        def fn(first, *rest):
            result = first if isinstance(first, DomainObj) else DomainObj(values_domain(first))
            for other in rest:
                result = DomainObj(ir.SetOp(op, result.node, result._other(other)))
            return result
        fn.__name__ = op
        return fn

    def condition(*args, **kwargs):
        raise SpaceDefinitionError(
            "@condition has no explicit polarity",
            hint="use @reject_if (True rejects the configuration, the BEAST paper's @condition) "
                 "or @require (True keeps it)")

    return {
        **order_functions(),
        "range": dsl_range,
        "iterator": iterator,
        "require": _constraint(False, "require"),
        "cost": cost,
        "reject_if": _constraint(True, "reject_if"),
        "condition": condition,
        "if_then_else": if_then_else,
        "min": _minmax(ir.Min, builtins.min),
        "max": _minmax(ir.Max, builtins.max),
        "abs": dsl_abs,
        "setting": setting,
        "union": _setop("union"),
        "intersection": _setop("intersection"),
        "difference": _setop("difference"),
    }


LANGUAGE_NAMES = ("range", "iterator", "require", "reject_if", "cost", "if_then_else", "min", "max", "abs",
                  "setting", "union", "intersection", "difference", "permutation", "interleave", "sequence",
                  "position", "before", "first", "last", "contains", "len")


def _items(items, what: str) -> tuple:
    if isinstance(items, (str, Sym, DomainObj)) or not isinstance(items, (list, tuple)):
        raise SpaceDefinitionError(f"{what} takes a list of items, not {items!r}",
                                   hint="e.g. permutation(['i', 'j', 'k'])")
    return tuple(as_node(i, f"the items of {what}", floats=False) for i in items)


def order_functions() -> dict:
    """The order iterators and functions of the language (`solverspace.core.orders`)."""

    def permutation(items):
        """Every order of the items."""
        return DomainObj(ir.Permutation(_items(items, "permutation()")))

    def interleave(*parts):
        """Every merge of the sequences that keeps each one's own order."""
        if not parts:
            raise SpaceDefinitionError("interleave() needs at least one sequence", hint="interleave(['a', 'b'], ['c'])")
        return DomainObj(ir.Interleave(tuple(ir.Values(_items(p, "interleave()")) for p in parts)))

    def sequence(items, min_len=0, max_len=None):
        """Ordered selections of min_len to max_len of the items, without repetition."""
        nodes = _items(items, "sequence()")
        high = len(nodes) if max_len is None else max_len
        return DomainObj(ir.Sequence(nodes, as_node(min_len, "a sequence length", floats=False),
                                      as_node(high, "a sequence length", floats=False)))

    def function(name, arity):
        def fn(*args):
            if len(args) != arity:
                raise SpaceDefinitionError(f"{name}() takes {arity} argument{'s' if arity > 1 else ''}, "
                                           f"{len(args)} given")
            if not isinstance(args[0], Sym):
                if name == "len":
                    return builtins.len(*args)
                raise SpaceDefinitionError(f"{name}(): the first argument must be an order parameter, not {args[0]!r}")
            return Sym(ir.OrderFn(name, tuple(as_node(a, f"{name}()", floats=False) for a in args)))
        fn.__name__ = name
        return fn

    return {"permutation": permutation, "interleave": interleave, "sequence": sequence,
            **{name: function(name, arity) for name, arity in ARITY.items()}}
