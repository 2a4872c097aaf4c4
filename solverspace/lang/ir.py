"""The expression IR: small immutable nodes that every stage and backend shares.

A space file is lowered once into these nodes (by `dsl` for module-level expressions and by
`lowering` for function bodies). Analysis, SymPy conversion, printing and the backends all walk
the same nodes; each walker is a `Visitor` whose `_visit_<Node>` methods are chosen by node type
(no isinstance ladders), so a backend that lacks a method refuses the node by name. A walk over
domains is a `DomainVisitor`, which must handle every domain node: a class that lacks one is
refused when it is defined, so a new domain node fails at import, not deep in a backend. Tree
rewrites rebuild a node from its rewritten children with `map_children` (or `rebuild`, bottom-up
without recursion).

Expressions denote values (int, exact Fraction, bool, or categorical str); domains denote the
ordered, duplicate-free value sequences of parameters.
"""
from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

from solverspace.core.records import Record, field_values

ARITH_OPS = ("+", "-", "*", "//", "%", "/", "**")
COMPARE_OPS = ("<", "<=", ">", ">=", "==", "!=")
SET_OPS = ("union", "intersection", "difference")

_set = object.__setattr__   # the nodes' own __setattr__ refuses: fields are set once, in __init__


class Node(Record):
    """Base of all IR nodes.

    The nodes are records (`solverspace.core.records`) with `__slots__`, written out rather than
    made by `@dataclass(frozen=True, slots=True)` (which compiles generated source for each class
    at import, in every process that loads a space). They keep that dataclass's meaning: the
    constructor takes the fields in order (or by name), `==` compares the fields of two nodes of
    the same class, `hash` is the hash of the fields' tuple, `repr` is `Class(field=value, ...)`,
    assigning or deleting an attribute raises `dataclasses.FrozenInstanceError`, and a pickle or
    copy carries the field values as a list (`__getstate__`/`__setstate__`, as a frozen slots
    dataclass's). `__match_args__` names the fields in order (`map_children` reads it).

    A node class declares its fields (`__slots__ = __match_args__`), the fields that hold its
    children in order (`child_fields`: a node, or with a leading `*` a tuple of nodes; `children()`
    is made from them), and for an operator field `op` the operators it takes (`operators`: the
    tuple and what they are called in a refusal); the constructor is the record's, with that check."""

    __slots__ = ()
    child_fields: tuple[str, ...] = ()
    operators: tuple[tuple[str, ...], str] | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "children" not in cls.__dict__:
            cls.children = _children_getter(cls.child_fields)

    def __init__(self, *args, **kwargs):
        Record.__init__(self, *args, **kwargs)
        if self.operators is not None and self.op not in self.operators[0]:
            raise ValueError(f"unknown {self.operators[1]} {self.op!r}")

    def children(self) -> tuple["Node", ...]:
        return ()

    def __getstate__(self):
        return [getattr(self, name) for name in self.__match_args__]

    def __setstate__(self, state):
        for name, value in zip(self.__match_args__, state):
            _set(self, name, value)


def _children_getter(fields: tuple[str, ...]):
    """`children()` of a node class with these `child_fields`: a tuple of the nodes they hold."""
    if not any(name.startswith("*") for name in fields):
        values = field_values(fields)
        return lambda node: values(node)
    if len(fields) == 1:
        get = attrgetter(fields[0][1:])
        return lambda node: get(node)

    def children(node):
        found: list = []
        for name in fields:
            if name.startswith("*"):
                found.extend(getattr(node, name[1:]))
            else:
                found.append(getattr(node, name))
        return tuple(found)
    return children


class Expr(Node):
    """A value-denoting node."""

    __slots__ = ()


class Const(Expr):
    """An integer, string or boolean constant."""

    __slots__ = __match_args__ = ("value",)
    value: int | str | bool

    def __init__(self, value: int | str | bool):
        if type(value) not in (int, str, bool):
            raise TypeError(f"Const value must be int, str or bool, got {value!r}")
        _set(self, "value", value)


class Float(Expr):
    """A floating-point constant met while loading (a literal, or a float Python computed from
    constants at load time), kept as it is until the loader knows where it is used: in a
    performance model (`cost`, an objective) it becomes the exact rational of its shortest decimal
    text (`solverspace.lang.decimals`), in a constraint or an iterator it is refused. No tree
    that leaves the loader holds one, so no backend handles it."""

    __slots__ = __match_args__ = ("value",)
    value: float

    def __init__(self, value: float):
        if type(value) is not float:
            raise TypeError(f"Float value must be a float, got {value!r}")
        _set(self, "value", value)


class Ref(Expr):
    """A reference to a parameter or derived value, by name."""

    __slots__ = __match_args__ = ("name",)
    name: str


class BinOp(Expr):
    """`left op right` for an arithmetic operator (`ARITH_OPS`, with the meanings DESIGN.md fixes)."""

    __slots__ = __match_args__ = ("op", "left", "right")
    child_fields = ("left", "right")
    operators = (ARITH_OPS, "arithmetic operator")
    op: str
    left: Expr
    right: Expr


class Neg(Expr):
    """`-operand`."""

    __slots__ = __match_args__ = ("operand",)
    child_fields = ("operand",)
    operand: Expr


class Not(Expr):
    """`not operand`; the value is a bool."""

    __slots__ = __match_args__ = ("operand",)
    child_fields = ("operand",)
    operand: Expr


class Compare(Expr):
    """`left op right` for one comparison (`COMPARE_OPS`); a chain is an `And` of these."""

    __slots__ = __match_args__ = ("op", "left", "right")
    operators = (COMPARE_OPS, "comparison")
    child_fields = ("left", "right")
    op: str
    left: Expr
    right: Expr


class And(Expr):
    """Short-circuit conjunction, left to right; the value is a bool."""

    __slots__ = __match_args__ = ("operands",)
    child_fields = ("*operands",)
    operands: tuple[Expr, ...]


class Or(Expr):
    """Short-circuit disjunction, left to right; the value is a bool."""

    __slots__ = __match_args__ = ("operands",)
    child_fields = ("*operands",)
    operands: tuple[Expr, ...]


class IfExp(Expr):
    """`then if cond else orelse`: only the chosen branch is evaluated."""

    __slots__ = __match_args__ = ("cond", "then", "orelse")
    child_fields = ("cond", "then", "orelse")
    cond: Expr
    then: Expr
    orelse: Expr


class Min(Expr):
    """`min(*operands)`."""

    __slots__ = __match_args__ = ("operands",)
    child_fields = ("*operands",)
    operands: tuple[Expr, ...]


class Max(Expr):
    """`max(*operands)`."""

    __slots__ = __match_args__ = ("operands",)
    child_fields = ("*operands",)
    operands: tuple[Expr, ...]


class Abs(Expr):
    """`abs(operand)`."""

    __slots__ = __match_args__ = ("operand",)
    child_fields = ("operand",)
    operand: Expr


#: Every domain node class, by module and qualified name.
_DOMAIN_CLASSES: dict[str, type] = {}


class Domain(Node):
    """A node denoting a parameter's ordered, duplicate-free sequence of values."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _DOMAIN_CLASSES[f"{cls.__module__}.{cls.__qualname__}"] = cls


class Range(Domain):
    """Python's `range(start, stop, step)`."""

    __slots__ = __match_args__ = ("start", "stop", "step")
    child_fields = ("start", "stop", "step")
    start: Expr
    stop: Expr
    step: Expr


class Values(Domain):
    """An explicit value list; duplicates are dropped keeping the first."""

    __slots__ = __match_args__ = ("items",)
    child_fields = ("*items",)
    items: tuple[Expr, ...]


class SetOp(Domain):
    """Iterator algebra: `union` keeps left order then new right values; `intersection` and
    `difference` keep left order."""

    __slots__ = __match_args__ = ("op", "left", "right")
    child_fields = ("left", "right")
    operators = (SET_OPS, "iterator operation")
    op: str
    left: Domain
    right: Domain


class IfDomain(Domain):
    """`then if cond else orelse` between two domains."""

    __slots__ = __match_args__ = ("cond", "then", "orelse")
    child_fields = ("cond", "then", "orelse")
    cond: Expr
    then: Domain
    orelse: Domain


class Closure(Domain):
    """A generator-function iterator, evaluated in Python for each combination of its
    dependencies' values (`deps`, names of parameters or derived values)."""

    __slots__ = __match_args__ = ("name", "func", "deps", "line")
    name: str
    func: Callable
    deps: tuple[str, ...]
    line: int | None

    defaults = {"line": None}

    def children(self):
        return tuple(Ref(d) for d in self.deps)


class Permutation(Domain):
    """Every order of `items` (an order-valued parameter: each value is a tuple of the items)."""

    __slots__ = __match_args__ = ("items",)
    child_fields = ("*items",)
    items: tuple[Expr, ...]


class Interleave(Domain):
    """Every merge of the `parts` (value lists) that keeps each part's own order (OA's mixer)."""

    __slots__ = __match_args__ = ("parts",)
    child_fields = ("*parts",)
    parts: tuple["Values", ...]


class Sequence(Domain):
    """Ordered selections of `items` without repetition, of `min_len` to `max_len` items."""

    __slots__ = __match_args__ = ("items", "min_len", "max_len")
    child_fields = ("*items", "min_len", "max_len")
    items: tuple[Expr, ...]
    min_len: Expr
    max_len: Expr


ORDER_DOMAINS = (Permutation, Interleave, Sequence)
ORDER_FUNCTIONS = ("position", "before", "first", "last", "contains", "len")


class OrderFn(Expr):
    """An order predicate or accessor: `fn(order, *args)` with `fn` in `ORDER_FUNCTIONS`
    (`solverspace.core.orders` gives the meaning)."""

    __slots__ = __match_args__ = ("fn", "args")
    child_fields = ("*args",)
    fn: str
    args: tuple[Expr, ...]

    def __init__(self, fn: str, args: tuple[Expr, ...]):
        if fn not in ORDER_FUNCTIONS:
            raise ValueError(f"unknown order function {fn!r}")
        super().__init__(fn, args)


# The visitor name of each operator: a node with an `op` (BinOp, Compare, SetOp) is dispatched to
# `_visit_<name>` (e.g. `_visit_FloorDiv`) when the visitor has one, else to `_visit_<ClassName>`.
OP_NAMES = {"+": "Add", "-": "Sub", "*": "Mul", "//": "FloorDiv", "%": "Mod", "/": "Div", "**": "Pow",
            "<": "Lt", "<=": "LtE", ">": "Gt", ">=": "GtE", "==": "Eq", "!=": "NotEq",
            "union": "Union", "intersection": "Intersection", "difference": "Difference"}


class Visitor:
    """Dispatch on node type: `visit(node)` calls `self._visit_<ClassName>(node)`; operators
    (`BinOp`, `Compare`, `SetOp`) first try `self._visit_<OperatorName>(node)` (`OP_NAMES`), so a
    backend writes one method per operator instead of an if/elif chain over `node.op`."""

    backend_name = "this backend"

    def visit(self, node: Node, *args):
        op = getattr(node, "op", None)
        method = getattr(self, "_visit_" + OP_NAMES[op], None) if op is not None else None
        if method is None:
            method = getattr(self, "_visit_" + type(node).__name__, None)
        if method is None:
            return self.unsupported(node)
        return method(node, *args)

    def unsupported(self, node: Node):
        raise NotImplementedError(f"{self.backend_name} does not support {type(node).__name__} nodes")


def domain_nodes() -> tuple[type[Domain], ...]:
    """Every domain node class (the subclasses of `Domain`, wherever they are defined)."""
    return tuple(_DOMAIN_CLASSES.values())


#: The operators of a node class with an `op`: a walk may handle the node with one method per
#: operator (`<prefix><OperatorName>`, see `OP_NAMES`) instead of one for the class.
NODE_OPERATORS = {SetOp: SET_OPS}


def missing_domain_methods(cls) -> list[str]:
    """The methods (`<prefix><Node>`) that a `DomainVisitor` class lacks for its `domain_walks`:
    one per domain node, or for a node with operators one per operator."""
    missing = []
    for prefix in cls.domain_walks:
        for node in domain_nodes():
            if hasattr(cls, prefix + node.__name__):
                continue
            per_operator = [prefix + OP_NAMES[op] for op in NODE_OPERATORS.get(node, ())]
            if per_operator and all(hasattr(cls, name) for name in per_operator):
                continue
            missing.append(prefix + node.__name__)
    return missing


class DomainVisitor(Visitor):
    """A visitor with one or more walks over domains (`domain_walks`: method prefixes), each of
    which handles every domain node. Defining a subclass that lacks a method raises TypeError at
    once, so a new domain node is refused when a module with a walk that does not know it is
    imported (and `tests/test_domain_visitor.py` checks every walk of every class against every
    node). A walk that cannot meet a node says so with a method too (e.g. `unhandled`)."""

    #: `"_visit_"` (the default): `visit` takes domains as well as expressions. Another prefix
    #: names a further walk over domains, called as `self.dispatch(prefix, node, ...)`.
    domain_walks: tuple[str, ...] = ("_visit_",)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        missing = missing_domain_methods(cls)
        if missing:
            raise TypeError(f"{cls.__module__}.{cls.__qualname__} does not handle every domain node: it lacks "
                            f"{', '.join(missing)} (write the method, or assign `ir.DomainVisitor.unhandled` "
                            f"where the walk cannot meet the node)")

    def dispatch(self, prefix: str, node: Node, *args):
        """`visit` for the walk whose methods start with `prefix`: `<prefix><OperatorName>` for a
        node with an operator where the class has it, else `<prefix><ClassName>`."""
        op = getattr(node, "op", None)
        method = getattr(self, prefix + OP_NAMES[op], None) if op is not None else None
        if method is None:
            method = getattr(self, prefix + type(node).__name__, None)
        if method is None:
            return self.unsupported(node)
        return method(node, *args)

    def unhandled(self, node: Node, *args):
        """A method for a node that a walk does not handle: `unsupported(node)`, as `visit` does
        for a node without a method."""
        return self.unsupported(node)


def walk(node: Node):
    """Every node of a tree, pre-order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children()))


def refs(node: Node) -> frozenset[str]:
    """Names of the parameters and derived values a tree refers to."""
    if type(node) is Values and all(type(item) is Const for item in node.items):
        return frozenset()   # a list of constants (a T1 file's millions of values: not walked)
    return frozenset(n.name for n in walk(node) if isinstance(n, Ref))


def map_children(node: Node, fn: Callable[[Node], Node]) -> Node:
    """`node` with each child (a field that is a node, or a tuple of nodes) replaced by
    `fn(child)`, left to right, its other fields as they are: the one rebuild step of every tree
    rewrite. Where every `fn(child)` is the child itself, `node` itself (so unchanged trees stay
    the same objects). A closure's inputs are names, not children: a closure comes back as it is."""
    fields, changed = [], False
    for name in node.__match_args__:
        value = getattr(node, name)
        if isinstance(value, Node):
            new = fn(value)
            changed = changed or new is not value
            value = new
        elif isinstance(value, tuple) and value and isinstance(value[0], Node):
            new = tuple(fn(v) for v in value)
            changed = changed or any(a is not b for a, b in zip(new, value))
            value = new
        fields.append(value)
    return type(node)(*fields) if changed else node


def rebuild(node: Node, leaf: Callable[[Node], Node | None],
            make: Callable[[Node], Node] | None = None) -> Node:
    """A copy of a tree built bottom-up without recursion (a long sum is a deep tree until
    `regroup` balances it): `leaf(n)` gives a replacement that ends the descent, or None to
    descend and rebuild `n` from its rebuilt children (`map_children`), then passed through
    `make` (default: kept as it is)."""
    done: dict[int, tuple[Node, Node]] = {}   # id -> (original, copy); the original stays alive
    stack = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if id(current) in done:
            continue
        if not expanded:
            replaced = leaf(current)
            if replaced is not None:
                done[id(current)] = (current, replaced)
                continue
            stack.append((current, True))
            stack.extend((c, False) for c in reversed(current.children()))
            continue
        rebuilt = map_children(current, lambda child: done[id(child)][1])
        done[id(current)] = (current, rebuilt if make is None else make(rebuilt))
    return done[id(node)][1]


def _substitution_leaf(mapping):
    def leaf(n):
        if isinstance(n, Ref):
            return mapping.get(n.name, n)
        if isinstance(n, (Const, Closure)):
            return n
        return None
    return leaf


def substitute(node: Node, mapping: dict[str, Node]) -> Node:
    """Replace `Ref(name)` by `mapping[name]` throughout a tree."""
    return rebuild(node, _substitution_leaf(mapping))


# Long chains of `+`/`-` or of `*` ------------------------------------------------------------
#: A chain of more operands than this is regrouped as a balanced tree (`regroup`). Python builds
#: `p0 + p1 + ... + p999` as a tree 999 levels deep, and every recursive walk (this package's
#: visitors, the nodes' `==` and `hash`) would pass Python's recursion limit; `+` and `*` are
#: exact on integers and fractions, so any grouping has the same value. Shorter chains keep the
#: user's grouping, so printed text and generated code do not change for them.
MAX_CHAIN = 32
_CHAIN_FAMILY = {"+": "+", "-": "+", "*": "*"}


def _chain_op(node: Node) -> str | None:
    """The chain family (`+` for `+`/`-`, `*`) a node continues, or None."""
    return _CHAIN_FAMILY.get(node.op) if isinstance(node, BinOp) else None


def chain_terms(node: Node) -> list[tuple[bool, Expr]]:
    """The operands of the maximal chain rooted at `node`, left to right, each with whether it is
    subtracted (`a - (b + c)`: a, -b, -c); iterative, so any depth."""
    family = _chain_op(node)
    terms, stack = [], [(node, False)]
    while stack:
        current, negated = stack.pop()
        if family is not None and _chain_op(current) == family:
            right_negated = negated != (current.op == "-")
            stack.append((current.right, right_negated))
            stack.append((current.left, negated))
        else:
            terms.append((negated, current))
    return terms


def balanced_chain(op: str, terms: list[tuple[bool, Expr]]) -> Expr:
    """A tree of depth log2(len(terms)) with the value of the chain (`op` is `+` or `*`; the
    first term is not subtracted), operands in the same left-to-right order."""
    if len(terms) == 1:
        return terms[0][1]
    middle = len(terms) // 2
    left, right = balanced_chain(op, terms[:middle]), terms[middle:]
    if right[0][0]:   # L - (flipped rest): the rest then starts with an added term
        return BinOp("-", left, balanced_chain(op, [(not n, t) for n, t in right]))
    return BinOp(op, left, balanced_chain(op, right))


def chain(op: str, terms: list[tuple[bool, Expr]]) -> Expr:
    """`t0 op t1 op ...` (`-` before a subtracted term): grouped left to right as Python does, or
    balanced past `MAX_CHAIN` operands. The first term must not be subtracted."""
    if len(terms) > MAX_CHAIN:
        return balanced_chain(op, terms)
    result = terms[0][1]
    for negated, term in terms[1:]:
        result = BinOp("-" if negated else op, result, term)
    return result


def regroup(node: Node) -> Node:
    """The same tree with every chain of more than `MAX_CHAIN` operands balanced; iterative."""
    # such a chain has at least MAX_CHAIN operators: with fewer in the whole tree, there is none
    # (the tree itself comes back, as the rebuild below would give it, without rebuilding)
    if sum(1 for n in walk(node) if _chain_op(n)) < MAX_CHAIN:
        return node

    def leaf(n):
        if isinstance(n, (Const, Ref, Closure)):
            return n
        if _chain_op(n) is None:
            return None
        terms = chain_terms(n)
        if len(terms) <= MAX_CHAIN:
            return None
        return balanced_chain(_chain_op(n), [(negated, regroup(t)) for negated, t in terms])

    return rebuild(node, leaf)


def is_boolean(expr: Expr) -> bool:
    """Whether an expression's value is a bool by construction (Python's `x or 2` is x or 2)."""
    if isinstance(expr, (Compare, Not)):
        return True
    if isinstance(expr, (And, Or)):
        return all(is_boolean(o) for o in expr.operands)
    if isinstance(expr, OrderFn):
        return expr.fn in ("before", "contains")
    if isinstance(expr, Const):
        return type(expr.value) is bool
    if isinstance(expr, IfExp):
        return is_boolean(expr.then) and is_boolean(expr.orelse)
    return False
