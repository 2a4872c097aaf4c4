"""The kind of every value of a model, integer or string, computed once; refusals raised here.

DESIGN.md: values are integers (booleans count as 0/1) or categorical strings. As in Python, a
string never equals an integer (`"a" == 0` is False, `"a" != 0` is True), whatever code a
backend gives it; an ordering comparison or arithmetic with a string is refused; a value list,
a conditional or a closure that mixes strings and integers is refused. All of that is decided
from the model alone, here, so the reference, C and CP-SAT refuse the same spaces with the same
message and decide `==`/`!=` between different kinds the same way (`Kinds.decided`).

`model.kinds` is the analysis of a model (lazy, memoised); `loader` calls `check()` when it
builds a model, so a space that mixes kinds is refused at load, naming the item and its line.

Kinds: ``INT``, ``STR`` (members of `ValueKind`, strings equal to "int" and "str"), or ``None``
(unknown: no value, or a closure that cannot be tabulated, whose values the reference checks one
call at a time).
"""
from __future__ import annotations

from solverspace.lang import ir
from solverspace.core.errors import Location, SpaceDefinitionError, SpaceEvaluationError
from solverspace.lang.printing import to_source
from solverspace.core.strenum import StrEnum
from solverspace.core.orders import ARITY, INT_RESULT, ITEM_RESULT
from solverspace.lang.order_domains import order_items, check_items


class ValueKind(StrEnum):
    """The kind of a value: an integer (booleans included) or a categorical string."""

    INT = "int"
    STR = "str"
    ORDER = "order"   # a tuple of items (solverspace.core.orders)


INT, STR, ORDER = ValueKind.INT, ValueKind.STR, ValueKind.ORDER
_MIXED = "mixed"  # what `_join` gives for an either-or of both kinds (never a value's kind)

MIX_HINT = ("a parameter's values are all integers or all strings: use a separate categorical parameter, "
            "or an integer sentinel such as 0 for 'auto'")
ORDER_HINT = "categorical values can only be compared with == and !="
ORDERS_HINT = ("orders compare only with == and != (with another order); ask about their items with "
               "position(o, x), before(o, a, b), first(o), last(o), contains(o, x), len(o)")


class KindError(SpaceDefinitionError):
    """Strings and integers used together where the language does not allow it."""


def _join(a, b):
    """The kind of a value that is either of kind a or b; 'mixed' when both are known and differ."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    return _MIXED


class Kinds(ir.DomainVisitor):
    """Kinds of a model's parameters, derived values and expressions."""

    backend_name = "the kind analysis"
    domain_walks = ("_domain_", "_items_")   # a domain's kind; the items an order may hold

    def __init__(self, model):
        self.model = model
        self.memo: dict[str, ValueKind | None] = {}
        self.owner = None

    # ------------------------------------------------------------------------------ public
    def check(self) -> "Kinds":
        """Analyse every item (raising `KindError` for the first that mixes kinds)."""
        for p in self.model.parameters:
            self.of(p.name)
        for d in self.model.derived:
            self.of(d.name)
        for c in self.model.constraints:
            self.expr(c.expr, c)
        return self

    def of(self, name: str) -> ValueKind | None:
        """The kind of parameter or derived value `name`."""
        if name not in self.memo:
            self.memo[name] = None
            item = self.model.definition(name)
            if name in self.model.parameter:
                self.memo[name] = self.domain(item.domain, item)
            else:
                self.memo[name] = self.expr(item.expr, item)
        return self.memo[name]

    def expr(self, node: ir.Expr, owner=None) -> ValueKind | None:
        """The kind of an expression (refusing what mixes kinds); `owner` is named in refusals."""
        saved, self.owner = self.owner, owner if owner is not None else self.owner
        try:
            return self.visit(node)
        finally:
            self.owner = saved

    def is_string(self, node: ir.Expr) -> bool:
        return self.expr(node) == STR

    def decided(self, node: ir.Compare) -> bool | None:
        """The value of `==`/`!=` between values of different known kinds (False/True as in
        Python), or None when the comparison must be evaluated."""
        if node.op not in ("==", "!="):
            return None
        a, b = self.expr(node.left), self.expr(node.right)
        if a is None or b is None or a == b:
            return None
        return node.op == "!="

    def domain(self, node: ir.Domain, owner) -> ValueKind | None:
        """The kind of a domain's values (refusing a domain that mixes kinds)."""
        saved, self.owner = self.owner, owner
        try:
            return self._domain(node)
        finally:
            self.owner = saved

    # ------------------------------------------------------------------------------ refusals
    def refuse(self, message: str, hint: str | None = None):
        owner = self.owner
        if owner is not None:
            what = {"Parameter": "parameter", "Derived": "derived value"}.get(type(owner).__name__, "constraint")
            message = f"{what} {owner.name!r}: {message}"
        raise KindError(message, where=Location(self.model.source, getattr(owner, "line", None)), hint=hint)

    def _mixed(self, node, parts):
        examples = {}
        for part in parts:
            kind = self.visit(part) if isinstance(part, ir.Expr) else self._domain(part)
            if kind is not None:
                examples.setdefault(kind, part)
        text = " and ".join(f"`{to_source(examples[k])}`" for k in (STR, INT) if k in examples)
        self.refuse(f"`{to_source(node)}` mixes strings and integers ({text})", MIX_HINT)

    # ------------------------------------------------------------------------------ expressions
    def _visit_Const(self, n):
        return STR if type(n.value) is str else INT

    def _visit_Ref(self, n):
        return self.of(n.name)

    def _numeric(self, n, operands):
        for o in operands:
            kind = self.visit(o)
            if kind == ORDER:
                self.refuse(f"`{to_source(n)}` uses the order `{to_source(o)}` in arithmetic", ORDERS_HINT)
            if kind == STR:
                self.refuse(f"`{to_source(n)}` uses the categorical (string) value `{to_source(o)}` in arithmetic",
                            ORDER_HINT)
        return INT

    def _visit_BinOp(self, n):
        return self._numeric(n, (n.left, n.right))

    def _visit_Neg(self, n):
        return self._numeric(n, (n.operand,))

    def _visit_Abs(self, n):
        return self._numeric(n, (n.operand,))

    def _visit_Min(self, n):
        return self._numeric(n, n.operands)

    def _visit_Max(self, n):
        return self._numeric(n, n.operands)

    def _visit_Compare(self, n):
        a, b = self.visit(n.left), self.visit(n.right)
        if ORDER in (a, b):
            if n.op not in ("==", "!="):
                self.refuse(f"`{to_source(n)}` orders an order value with `{n.op}`", ORDERS_HINT)
            if a != b:
                self.refuse(f"`{to_source(n)}` compares an order with a value that is not an order", ORDERS_HINT)
            return INT
        if n.op not in ("==", "!=") and STR in (a, b):
            culprit = n.left if a == STR else n.right
            self.refuse(f"`{to_source(n)}` orders the categorical (string) value `{to_source(culprit)}`",
                        ORDER_HINT)
        return INT

    def _boolean(self, n):
        for o in n.children():
            self.visit(o)
        return INT

    _visit_Not = _boolean

    def _operand(self, n):
        """Python's `a and b` / `a or b` is one of its operands: their kind, or None where they
        differ (only its truth is usable then; `lowering.normalise_truth` rewrites a use of its
        value into conditionals, whose mixing of kinds is refused)."""
        kind = None
        for o in n.operands:
            seen = self.visit(o)
            kind = _join(kind, INT if ir.is_boolean(o) else seen)
        return None if kind == _MIXED else kind

    _visit_And = _visit_Or = _operand

    def _visit_IfExp(self, n):
        self.visit(n.cond)
        kind = _join(self.visit(n.then), self.visit(n.orelse))
        if kind == _MIXED:
            self._mixed(n, (n.then, n.orelse))
        return kind

    def _visit_OrderFn(self, n):
        order = n.args[0]
        if len(n.args) != ARITY[n.fn]:
            self.refuse(f"`{to_source(n)}`: {n.fn}() takes {ARITY[n.fn]} arguments", ORDERS_HINT)
        if self.visit(order) != ORDER:
            self.refuse(f"`{to_source(n)}`: `{to_source(order)}` is not an order",
                        "the first argument of position/before/first/last/contains/len is an order parameter")
        items = self.items_kind(order)
        for item in n.args[1:]:
            kind = self.visit(item)
            if kind == ORDER or (kind is not None and items is not None and kind != items):
                self.refuse(f"`{to_source(n)}`: `{to_source(item)}` is not of the kind of the order's items ({items})",
                            ORDERS_HINT)
        if n.fn == "position" and isinstance(n.args[1], ir.Const):
            possible = self.possible_items(order)
            if possible is not None and n.args[1].value not in possible:
                self.refuse(f"`{to_source(n)}`: {n.args[1].value!r} is never in `{to_source(order)}` "
                            f"(its items: {', '.join(map(repr, possible))}), so the position is always undefined",
                            "ask only about items the order can hold (contains(o, x) tests for optional ones)")
        return INT if n.fn in INT_RESULT or n.fn not in ITEM_RESULT else items

    def items_kind(self, node) -> ValueKind | None:
        """The kind of the items of an order-valued expression or domain (None: unknown)."""
        possible = self.possible_items(node)
        kinds = {STR if type(v) is str else INT for v in possible or ()}
        return kinds.pop() if len(kinds) == 1 else None

    def possible_items(self, node) -> tuple | None:
        """Every item an order-valued expression or domain may hold (None: not known statically)."""
        if isinstance(node, ir.Domain):
            return self.dispatch("_items_", node)
        if isinstance(node, ir.Ref):
            item = self.model.definition(node.name)
            return self.possible_items(item.domain if node.name in self.model.parameter else item.expr)
        if isinstance(node, ir.IfExp):
            return self._items_either((node.then, node.orelse))
        return None

    def _items_order(self, node):
        items = order_items(node)
        return tuple(i.value for i in items) if all(isinstance(i, ir.Const) for i in items) else None
    _items_Permutation = _items_Interleave = _items_Sequence = _items_order

    def _items_either(self, parts):
        found = [self.possible_items(p) for p in parts]
        return None if None in found else tuple(dict.fromkeys(found[0] + found[1]))

    def _items_SetOp(self, node):
        return self._items_either((node.left, node.right))

    def _items_IfDomain(self, node):
        return self._items_either((node.then, node.orelse))

    def _items_none(self, node):   # not an order: no items
        return None
    _items_Range = _items_Values = _items_Closure = _items_none

    # ------------------------------------------------------------------------------ domains
    def _domain(self, node):
        return self.dispatch("_domain_", node)

    def _domain_Permutation(self, node):
        try:
            check_items(node, f"`{to_source(node)}`")
        except SpaceDefinitionError as exc:
            self.refuse(exc.message, exc.hint)
        return ORDER
    _domain_Interleave = _domain_Permutation

    def _domain_Sequence(self, node):
        self._domain_Permutation(node)
        for part in (node.min_len, node.max_len):
            if self.visit(part) != INT:
                self.refuse(f"sequence length `{to_source(part)}` is not an integer in `{to_source(node)}`",
                            "sequence(items, min_len, max_len) takes integer lengths")
        return ORDER

    def _domain_Range(self, node):
        for part in (node.start, node.stop, node.step):
            if self.visit(part) == STR:
                self.refuse(f"range bound `{to_source(part)}` is a string in `{to_source(node)}`",
                            "range bounds are integers")
        return INT

    def _domain_Values(self, node):
        kind = None
        for item in node.items:
            kind = _join(kind, self.visit(item))
        if kind == _MIXED:
            self._mixed(node, node.items)
        return kind

    def _domain_either(self, node, parts):
        kind = _join(self._domain(parts[0]), self._domain(parts[1]))
        if kind == _MIXED:
            self._mixed(node, parts)
        return kind

    def _domain_SetOp(self, node):
        return self._domain_either(node, (node.left, node.right))

    def _domain_IfDomain(self, node):
        self.visit(node.cond)
        return self._domain_either(node, (node.then, node.orelse))

    def _domain_Closure(self, node):
        return self._closure(node)

    def _closure(self, node: ir.Closure):
        try:
            values = self.model.closures.table(node).values  # refuses a closure yielding both kinds
        except SpaceDefinitionError:
            raise
        except SpaceEvaluationError:
            return None  # cannot be tabulated: the reference checks each call (evaluate.ClosureTable)
        kinds = {STR if type(v) is str else INT for v in values}
        return kinds.pop() if kinds else None
