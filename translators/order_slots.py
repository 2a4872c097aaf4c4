"""Orders for the counting backends: each order parameter as one parameter per position.

The C enumerator and CP-SAT know integers and categorical strings, not tuples. An order
parameter `seq = permutation(items)` of n items becomes n slot parameters `seq__0 .. seq__{n-1}`
(categorical like the items), slot k taking the items not used by slots 0..k-1 (a loop over
positions with a used set, written as the iterator algebra both backends already compile:
`iterator(items) - iterator([seq__0, ..., seq__{k-1}])`), so every loop placement, hoisting,
splitting and solver lowering applies unchanged. Each configuration of the order model is
exactly one configuration of the slot model, so counts are equal.

- `interleave(a, b, ...)`: a permutation of all the items whose slot k also excludes an item
  whose predecessor in its sequence is not yet used (`iterator([x if pred used else END])`).
- `sequence(items, lo, hi)`: slots that may hold END (the sentinel: "" for string items, one
  below the smallest for integer items) once at least `lo` items are placed, END forever after,
  END only from slot `hi` on; non-constant lengths add a length constraint. END comes first in
  a slot's domain, so the slots' loops list selections in `orders.sequences`' depth-first order
  (for every order iterator the slots list orders in the reference's order).
- Order functions become expressions of the slots: `contains` an `or` of equalities, `position`
  and `len` conditional chains, `first`/`last` the slot (undefined on an empty order, through an
  undefined `1 // 0` in a guard), `before(o, a, b)` "a in o, b in o, and every slot holding b has
  a in an earlier slot"; a constraint's top-level conjunction is split into one constraint per
  part, so each part is tested at the earliest loop that binds its slots (a precedence rule on a
  permutation prunes as soon as `b` is placed).

Refused (`UnsupportedConstruct`, naming the construct and suggesting `--backend reference`): an
order parameter whose iterator is not directly one of the three (conditional or combined order
iterators), a derived value holding an order, an order used other than through the order
functions or `==`/`!=` with another order parameter (compared slot by slot, each order's END
matching the other's), and an order passed to a closure iterator.
"""
from __future__ import annotations

from solverspace.lang import ir
from solverspace.core.errors import BackendUnavailableError
from solverspace.lang.kinds import ORDER
from solverspace.lang.lowering import fold, make_boolop, make_if
from solverspace.lang.model import Constraint, ConstraintKind, Model, Parameter, ParameterKind
from solverspace.lang.order_domains import has_orders, order_items
from solverspace.analysis.plan import Plan, loop_order, make_plan

from .errors import UnsupportedConstruct

HINT = "use --backend reference (the Python enumerator supports every order construct)"
_UNDEFINED = ir.Compare("==", ir.BinOp("//", ir.Const(1), ir.Const(0)), ir.Const(0))  # never defined


def undefined_like(value: ir.Expr) -> ir.Expr:
    """An expression of `value`'s kind whose evaluation is always undefined."""
    return ir.IfExp(_UNDEFINED, value, value)


class _Order:
    """One order parameter as slots: their references, its items, END, and what it is."""

    def __init__(self, parameter: Parameter, taken: set[str]):
        domain = parameter.domain
        self.parameter = parameter
        self.items = tuple(i.value for i in order_items(domain))
        self.optional = isinstance(domain, ir.Sequence)
        if self.items and type(self.items[0]) is int:
            self.end = min(self.items) - 1
        else:
            self.end = ""
        names = []
        for k in range(len(self.items)):
            name = f"{parameter.name}__{k}"
            while name in taken:
                name += "_"
            taken.add(name)
            names.append(name)
        self.names = names
        self.slots = [ir.Ref(n) for n in names]

    def eq(self, k: int, value: ir.Expr) -> ir.Expr:
        return fold(ir.Compare("==", self.slots[k], value))

    def is_end(self, k: int) -> ir.Expr:
        return self.eq(k, ir.Const(self.end))

    def used(self, k: int, value: ir.Expr) -> ir.Expr:
        """Whether `value` is in slots 0..k-1."""
        return make_boolop(ir.Or, tuple(self.eq(j, value) for j in range(k)))

    def always_present(self, item: ir.Expr) -> bool:
        return not self.optional and isinstance(item, ir.Const) and item.value in self.items

    # -------------------------------------------------------------------- the slot parameters
    def parameters(self) -> list[Parameter]:
        domain, line = self.parameter.domain, self.parameter.line
        items = ir.Values(tuple(ir.Const(v) for v in self.items))
        end = ir.Values((ir.Const(self.end),))
        preds = {}
        if isinstance(domain, ir.Interleave):
            for part in domain.parts:
                for p, x in zip(part.items, part.items[1:]):
                    preds[x.value] = p
        result = []
        for k in range(len(self.items)):
            excluded = [*self.slots[:k]]
            excluded += [make_if(self.used(k, p), ir.Const(self.end), ir.Const(x)) for x, p in preds.items()]
            base = ir.SetOp("difference", items, ir.Values(tuple(excluded))) if excluded else items
            if isinstance(domain, ir.Sequence):
                reached_high = fold(ir.Compare(">=", ir.Const(k), domain.max_len))
                reached_low = fold(ir.Compare(">=", ir.Const(k), domain.min_len))
                body = make_if(reached_high, end, make_if(reached_low, ir.SetOp("union", end, base), base))
                dom = body if k == 0 else make_if(self.is_end(k - 1), end, body)
            else:
                dom = base
            result.append(Parameter(self.names[k], dom, ParameterKind.EXPRESSION, line))
        return result

    def length(self) -> ir.Expr:
        if not self.optional:
            return ir.Const(len(self.items))
        value: ir.Expr = ir.Const(len(self.items))
        for k in reversed(range(len(self.items))):
            value = make_if(self.is_end(k), ir.Const(k), value)
        return value

    def length_constraint(self) -> Constraint | None:
        """The lengths `sequence` allows, when the slots' domains do not already say so."""
        domain = self.parameter.domain
        if not self.optional:
            return None
        lo, hi = domain.min_len, domain.max_len
        if isinstance(lo, ir.Const) and isinstance(hi, ir.Const) and max(lo.value, 0) <= min(hi.value, len(self.items)):
            return None
        length = self.length()
        accept = make_boolop(ir.And, (fold(ir.Compare("<=", lo, length)), fold(ir.Compare("<=", length, hi))))
        return Constraint(f"{self.parameter.name}#length", accept, False, ConstraintKind.EXPRESSION,
                          self.parameter.line)

    # -------------------------------------------------------------------- the order functions
    def function(self, fn: str, args: tuple[ir.Expr, ...]) -> ir.Expr:
        n = len(self.items)
        if fn == "len":
            return self.length()
        if fn == "contains":
            item = args[0]
            if self.always_present(item):
                return ir.Const(True)
            return make_boolop(ir.Or, tuple(self.eq(k, item) for k in range(n)))
        if fn == "position":
            item = args[0]
            value = ir.Const(n - 1) if self.always_present(item) else undefined_like(ir.Const(0))
            for k in reversed(range(n - 1 if self.always_present(item) else n)):
                value = make_if(self.eq(k, item), ir.Const(k), value)
            return value
        if fn == "first":
            if n == 0:
                return undefined_like(ir.Const(self.end))
            return make_if(self.is_end(0), undefined_like(self.slots[0]), self.slots[0]) if self.optional \
                else self.slots[0]
        if fn == "last":
            if n == 0:
                return undefined_like(ir.Const(self.end))
            if not self.optional:
                return self.slots[-1]
            value = undefined_like(self.slots[0])
            for k in range(n):
                value = make_if(fold(ir.Not(self.is_end(k))), self.slots[k], value)
            return value
        a, b = args  # before
        parts = [self.function("contains", (a,)), self.function("contains", (b,))]
        parts += [make_boolop(ir.Or, (fold(ir.Compare("!=", self.slots[k], b)), self.used(k, a))) for k in range(n)]
        return make_boolop(ir.And, tuple(parts))


class _Rewriter:
    """The slot model of a model with orders."""

    def __init__(self, model: Model, backend: str):
        self.model = model
        self.backend = backend
        taken = set(model.parameter) | set(model.derived_value) | set(model.constraint)
        self.orders: dict[str, _Order] = {}
        for p in model.parameters:
            if model.kinds.of(p.name) == ORDER:
                if not isinstance(p.domain, ir.ORDER_DOMAINS):
                    self.refuse(p.domain, "an order parameter's iterator must be permutation(), interleave() or "
                                          "sequence() itself, not a conditional or combined iterator of orders", p)
                self.orders[p.name] = _Order(p, taken)
        for d in model.derived:
            if model.kinds.of(d.name) == ORDER:
                self.refuse(d.expr, "a derived value cannot hold an order", d)

    def refuse(self, node, message, owner):
        raise UnsupportedConstruct(self.backend, node, message, owner=owner, model=self.model, hint=HINT)

    def rewrite(self, node: ir.Node, owner) -> ir.Node:
        if isinstance(node, ir.OrderFn):
            order = node.args[0]
            if not (isinstance(order, ir.Ref) and order.name in self.orders):
                self.refuse(node, "the order must be an order parameter itself", owner)
            args = tuple(self.rewrite(a, owner) for a in node.args[1:])
            return self.orders[order.name].function(node.fn, args)
        if isinstance(node, ir.Compare) and node.op in ("==", "!=") and all(
                isinstance(side, ir.Ref) and side.name in self.orders for side in (node.left, node.right)):
            same = equal(self.orders[node.left.name], self.orders[node.right.name])
            return same if node.op == "==" else fold(ir.Not(same))
        if isinstance(node, ir.Ref):
            if node.name in self.orders:
                self.refuse(node, "an order can only be used through position/before/first/last/contains/len "
                                  "or compared (== / !=) with another order parameter here", owner)
            return node
        if isinstance(node, ir.Closure):
            if any(d in self.orders for d in node.deps):
                self.refuse(node, "a closure iterator cannot take an order as input", owner)
            return node
        if isinstance(node, ir.Const):
            return node
        rebuilt = ir.map_children(node, lambda child: self.rewrite(child, owner))
        return fold(rebuilt) if isinstance(rebuilt, ir.Expr) else rebuilt

    def model_with_slots(self) -> Model:
        m = self.model
        parameters, constraints = [], []
        for p in m.parameters:
            if p.name in self.orders:
                order = self.orders[p.name]
                if isinstance(p.domain, ir.Sequence):  # lengths may use other orders: their slots
                    lengths = (self.rewrite(p.domain.min_len, p), self.rewrite(p.domain.max_len, p))
                    order.parameter = Parameter(p.name, ir.Sequence(p.domain.items, *lengths), p.kind, p.line)
                parameters += order.parameters()
                extra = self.orders[p.name].length_constraint()
                if extra is not None:
                    constraints.append(extra)
            else:
                parameters.append(Parameter(p.name, self.rewrite(p.domain, p), p.kind, p.line))
        derived = [type(d)(d.name, self.rewrite(d.expr, d), d.line) for d in m.derived]
        for c in m.constraints:
            if not any(isinstance(n, ir.OrderFn) for n in ir.walk(c.expr)):
                constraints.append(Constraint(c.name, self.rewrite(c.expr, c), c.rejects, c.kind, c.line))
                continue
            parts = conjuncts(self.rewrite(c.accept_expr, c))
            for i, part in enumerate(parts):
                name = c.name if len(parts) == 1 else f"{c.name}#{i}"
                constraints.append(Constraint(name, part, False, c.kind, c.line))
        return Model(m.source, tuple(parameters), tuple(derived), tuple(constraints), m.settings,
                     m.closure_globals, m.max_closure_values)


def equal(a: _Order, b: _Order) -> ir.Expr:
    """Two orders are equal: slot by slot, END (each order's own) matching END."""
    def end(o, k):
        return o.is_end(k) if o.optional else ir.Const(False)
    parts = []
    for k in range(max(len(a.items), len(b.items))):
        if k < len(a.items) and k < len(b.items):
            both_end = make_boolop(ir.And, (end(a, k), end(b, k)))
            parts.append(make_boolop(ir.Or, (fold(ir.Compare("==", a.slots[k], b.slots[k])), both_end)))
        else:
            parts.append(end(a, k) if k < len(a.items) else end(b, k))
    return make_boolop(ir.And, tuple(parts))


def conjuncts(expr: ir.Expr) -> list[ir.Expr]:
    """The parts of a top-level conjunction (`not (a or b)` is `not a and not b`); the set of
    configurations accepted by every part is the set `expr` accepts."""
    if isinstance(expr, ir.And):
        return [p for o in expr.operands for p in conjuncts(o)]
    if isinstance(expr, ir.Not) and isinstance(expr.operand, ir.Or):
        return [p for o in expr.operand.operands for p in conjuncts(fold(ir.Not(o)))]
    if isinstance(expr, ir.Not) and isinstance(expr.operand, ir.Not):
        return conjuncts(expr.operand.operand)
    if isinstance(expr, ir.Const) and expr.value:
        return []
    return [expr]


class SlotLayout:
    """How rows of the slot model map back to rows of the order model and back."""

    def __init__(self, plan: Plan, orders: dict[str, _Order]):
        self.columns = plan.model.parameter_names
        self.orders = {name: (tuple(o.names), o.end) for name, o in orders.items()}

    def rows(self, decoded, with_derived=()) -> list[tuple]:
        """Rows (decoded slot columns) as tuples in the order model's columns, orders as tuples."""
        columns = []
        for name in (*self.columns, *with_derived):
            if name in self.orders:
                names, end = self.orders[name]
                slots = [decoded[n].tolist() for n in names]
                columns.append([tuple(v for v in values if v != end) for values in zip(*slots)] if slots
                               else [()] * len(decoded))
            else:
                columns.append(decoded[name].tolist())
        return list(zip(*columns)) if columns else [()] * len(decoded)

    def slot_values(self, values: dict) -> dict | None:
        """A configuration of the order model as one of the slot model (None: no such row)."""
        out = {}
        for name, value in values.items():
            if name not in self.orders:
                out[name] = value
                continue
            names, end = self.orders[name]
            if type(value) is str:
                from solverspace.core.orders import parse_order
                value = parse_order(value, () if end == "" else (0,))
            if type(value) not in (tuple, list) or len(value) > len(names):
                return None
            out.update(zip(names, (*value, *[end] * (len(names) - len(value)))))
        return out


_PLANS: dict[int, tuple[Plan, Plan, SlotLayout]] = {}  # id(plan) -> (plan, slot plan, layout): plan kept alive


def slot_plan(plan: Plan, backend: str) -> Plan:
    """The plan itself when its model has no orders, else the plan of its slot model (memoised)."""
    return slots(plan, backend)[0]


def slots(plan: Plan, backend: str) -> tuple[Plan, SlotLayout | None]:
    """The slot plan and its layout (the plan itself and None when the model has no orders)."""
    if not has_orders(plan.model):
        return plan, None
    found = _PLANS.get(id(plan))
    if found is None or found[0] is not plan:
        rewriter = _Rewriter(plan.model, backend)
        model = rewriter.model_with_slots()
        model.kinds.check()
        layout = SlotLayout(plan, rewriter.orders)
        layout.rewrite = rewriter.rewrite   # an expression of the order model (an objective) in slots
        found = _PLANS[id(plan)] = (plan, make_plan(model, slot_loop_order(plan, model, rewriter.orders)), layout)
    return found[1], found[2]


def slot_loop_order(plan: Plan, model: Model, orders: dict) -> list[str]:
    """The slot model's loops in the order plan's order: each order's slots where the order was.

    The slot model's own loop order may differ (an order whose length folds to a constant no longer
    feeds what read it), and then its rows come out in another order than the reference's: the
    positions, samples and listings of the two would disagree. The original order is legal for the
    slot model: a slot reads only what its order's domain read, and earlier slots of its order."""
    position = {name: i for i, name in enumerate(plan.order)}
    origin = {slot: name for name, order in orders.items() for slot in order.names}
    return sorted(loop_order(model, model.analysis.dag), key=lambda name: position[origin.get(name, name)])


class OrderRefusal(UnsupportedConstruct, BackendUnavailableError):
    """A backend answers this question only for spaces without orders (callers that fall back
    to the reference on `BackendUnavailableError`, as `check` does, fall back here too)."""


def refuse_orders(plan: Plan, backend: str, what: str) -> None:
    """Refuse a model with orders for what this backend only does without them (listing,
    positions, sampling, ...): the slot model counts orders, but its rows are not orders."""
    if has_orders(plan.model):
        node = next(n for n in _order_params(plan.model))
        raise OrderRefusal(
            backend, node.domain, f"the {backend} backend counts spaces with order parameters but cannot {what} them",
            owner=node, model=plan.model, hint=HINT)


def _order_params(model):
    found = [p for p in model.parameters if model.kinds.of(p.name) == ORDER]
    return found or [next(iter(model.parameters))]



# ------------------------------------------------------------------------------ the wrapper
class SlotJoins:
    """How one backend family's answers on a slot model are joined back into orders: each a
    function of the family's `orders` module (`translators/c/orders.py`, `translators/cpsat/orders.py`),
    or None where the family has none (the question then goes to the backend with the plan as it
    is, which answers or refuses it). A backend declares its joins as its class's `order_slots`.

    - `rows`, `array`, `write`: `(inner, plan, ...)` with the backend's own keywords;
    - `positions`, `sampler`: `(the slot plan's positions or sampler, plan)`;
    - `complete`: `(plan, assignment, complete_slot_plan)`; `best`: `(plan, objective, best_of_slot_plan, **kw)`."""

    def __init__(self, family: str, *, rows=None, array=None, write=None, positions=None, sampler=None,
                 complete=None, best=None):
        self.family = family   # the backend's name in the slot model's refusals ("C", "CP-SAT")
        self.rows, self.array, self.write = rows, array, write
        self.positions, self.sampler, self.complete, self.best = positions, sampler, complete, best


class OrderSlots:
    """A backend that answers spaces with order-valued parameters through their slot model.

    The registry (`solverspace.registry.factories`) wraps every backend whose class declares `order_slots`
    (its `SlotJoins`): given a plan with orders, each question goes to the inner backend with the
    slot plan, and what comes back (rows, arrays, files, positions, samplers, completions, best
    configurations) is joined into orders; counts and generated programs are the slot plan's
    (a bijection: the same count). A plan without orders goes to the inner backend as it is. The
    inner backend's methods never ask whether a plan has orders: this wrapper decides.
    Everything else (the backend's settings, `enumerator`, ...) is the inner backend's."""

    def __init__(self, inner):
        self.inner = inner
        self.joins: SlotJoins = inner.order_slots

    def __getattr__(self, name):
        if name == "inner":   # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"OrderSlots({self.inner!r})"

    @staticmethod
    def through_slots(plan) -> bool:
        """Whether `plan` is answered through its slot model (it has order-valued parameters),
        so that the inner backend never sees the plan itself: no module of it is built or looked
        up, and undefined tallies are the slot plan's."""
        return has_orders(plan.model)

    def inner_plan(self, plan):
        """The plan the inner backend runs for `plan`: its slot plan, or itself without orders."""
        return slots(plan, self.joins.family)[0]

    def _joiner(self, question: str, plan):
        joiner = getattr(self.joins, question)
        return joiner if joiner is not None and self.through_slots(plan) else None

    # ------------------------------------------------------------------ what the slot plan answers alike
    def count(self, plan, *, strict=False, progress=None, **more):
        return self.inner.count(self.inner_plan(plan), strict=strict, progress=progress, **more)

    def approximate_count(self, plan, epsilon: float = 0.8, delta: float = 0.2, *, seed: int = 0):
        return self.inner.approximate_count(self.inner_plan(plan), epsilon, delta, seed=seed)

    def emit(self, plan, with_derived=()) -> str:
        return self.inner.emit(self.inner_plan(plan), with_derived)

    def is_built(self, plan, with_derived=()) -> bool:
        """Whether running `plan` compiles and generates nothing (`auto` asks before choosing);
        never through slots: `auto` tries the reference first on a space with orders."""
        return not self.through_slots(plan) and self.inner.is_built(plan, with_derived)

    # ------------------------------------------------------------------ answers joined back into orders
    def rows(self, plan, *, strict=False, with_derived=(), progress=None):
        join = self._joiner("rows", plan)
        if join is None:
            return self.inner.rows(plan, strict=strict, with_derived=with_derived, progress=progress)
        return join(self.inner, plan, strict=strict, with_derived=with_derived, progress=progress)

    def array(self, plan, *, strict=False, with_derived=(), progress=None):
        join = self._joiner("array", plan)
        if join is None:
            return self.inner.array(plan, strict=strict, with_derived=with_derived, progress=progress)
        return join(self.inner, plan, strict=strict, with_derived=with_derived, progress=progress)

    def write(self, plan, path, fmt="csv", *, strict=False, with_derived=(), progress=None, sep=",") -> int:
        join = self._joiner("write", plan)
        if join is None:
            return self.inner.write(plan, path, fmt, strict=strict, with_derived=with_derived, progress=progress,
                                    sep=sep)
        return join(self.inner, plan, path, fmt, strict=strict, with_derived=with_derived, progress=progress, sep=sep)

    def positions(self, plan):
        join = self._joiner("positions", plan)
        if join is None:
            return self.inner.positions(plan)
        return join(self.inner.positions(self.inner_plan(plan)), plan)

    def sampler(self, plan, method=None, *, seed=0, progress=None):
        """`method` None: the inner backend's default method."""
        given = {} if method is None else {"method": method}
        join = self._joiner("sampler", plan)
        if join is None:
            return self.inner.sampler(plan, seed=seed, progress=progress, **given)
        return join(self.inner.sampler(self.inner_plan(plan), seed=seed, progress=progress, **given), plan)

    def complete(self, plan, assignment: dict):
        join = self._joiner("complete", plan)
        if join is None:
            return self.inner.complete(plan, assignment)
        return join(plan, assignment, lambda slot, mapped: self.inner.complete(slot, mapped))

    def best(self, plan, objective: str, *, maximize: bool = True, top: int = 10, progress=None):
        join = self._joiner("best", plan)
        if join is None:
            return self.inner.best(plan, objective, maximize=maximize, top=top, progress=progress)
        return join(plan, objective, lambda slot, text, **kw: self.inner.best(slot, text, **kw),
                    maximize=maximize, top=top, progress=progress)

    def funnel(self, plan, *, progress=None):
        return self.inner.funnel(plan, progress=progress)   # no joins: the slot model's constraints are its parts


def with_order_slots(backend):
    """`backend` wrapped in `OrderSlots` when its class declares `order_slots`, else itself."""
    return OrderSlots(backend) if getattr(type(backend), "order_slots", None) is not None else backend
