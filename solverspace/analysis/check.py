"""`check`: is one configuration valid, and if not, which rules reject it and with what values.

With every parameter given, each parameter's domain membership, each derived value and every
constraint is evaluated (not stopping at the first rejection), so the report lists all reasons.
With some parameters given, the reference enumerator looks for a valid completion.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from solverspace.core.errors import Location, OptionError, SpaceDefinitionError, SpaceEvaluationError, did_you_mean
from solverspace.core.value_text import integer_refusal, integer_text
from solverspace.lang import ir
from solverspace.lang.kinds import ORDER, STR
from solverspace.lang.model import one_spelling
from solverspace.lang.evaluate import Undefined, compile_domain, compile_expr
from solverspace.analysis.plan import Plan
from solverspace.lang.printing import to_source
from solverspace.analysis.reference import ReferenceEnumerator
from solverspace.core.orders import parse_order


@dataclass
class Rejection:
    rule: str          # a constraint name, or "domain of <param>"
    reason: str        # the rule's text
    values: dict       # the values involved
    undefined: bool = False


@dataclass
class CheckResult:
    assignment: dict
    complete: bool
    valid: bool
    rejections: list[Rejection] = field(default_factory=list)
    derived: dict = field(default_factory=dict)
    completion: dict | None = None  # for partial assignments: one valid completion, if any


def parse_assignment(model, words) -> dict:
    """`NAME=VALUE` words (the command line's `check` arguments) as an assignment: each name a
    parameter (as Python reads it: `ﬁ=3` gives `fi`), given once, with a non-empty value of a
    kind the parameter takes, read by the one rule of `solverspace.core.value_text` (decimal
    integers; other text is a categorical string, exactly): integer text becomes an integer
    unless the parameter's values are all strings.

    >>> from solverspace.io.loader import load_source
    >>> parse_assignment(load_source("x = range(4)\\nk = iterator(['a', '1'])"), ["x=3", "k=1"])
    {'x': 3, 'k': '1'}
    """
    assignment: dict = {}
    spelled: dict[str, str] = {}
    for word in words:
        name, sep, text = word.partition("=")
        name = name.strip()
        if not sep or not name:
            raise OptionError(f"{word!r}: expected NAME=VALUE", hint="e.g. solverspace check gemm dim_m=16 dim_n=16")
        name = one_spelling(spelled, name, "parameter", error=OptionError)
        check_parameter_names(model, [name])
        if name in assignment:
            raise OptionError(f"parameter {name!r} is given twice ({name}={assignment[name]} and {word})",
                              hint="give each parameter once")
        if not text and model.kinds.of(name) != ORDER:   # an empty order is `opt=`
            raise OptionError(f"{word!r}: no value for parameter {name!r}", hint=f"e.g. {name}=16")
        assignment[name] = _value_for(model, name, text)
    return assignment


def _value_for(model, name: str, text: str):
    """The value `text` means for parameter `name`, by the parameter's kind (the model's one kind
    analysis; unknown, e.g. a closure too big to tabulate: integer text is an integer)."""
    kind = model.kinds.of(name)
    if kind == STR:
        return text
    if kind == ORDER:   # items joined by orders.SEPARATOR: `seq=i>j>k`
        return parse_order(text, model.kinds.possible_items(ir.Ref(name)) or ())
    number = integer_text(text)
    if number is not None:
        return number
    if kind is None:
        return text
    message, hint = integer_refusal(f"{name}={text!r}: parameter {name!r} takes integer values", text, f"{name}=16")
    raise OptionError(message, hint=hint)


def python_assignment(assignment: dict) -> dict:
    """An assignment keyed by the names as Python reads them (`{"ﬁ": 3}` sets `fi`), two
    spellings of one parameter refused (`model.one_spelling`)."""
    spelled: dict[str, str] = {}
    return {one_spelling(spelled, name, "parameter", error=OptionError) if isinstance(name, str) else name: value
            for name, value in assignment.items()}


def check_parameter_names(model, names) -> None:
    """Every name must be a parameter of the model (with a did-you-mean otherwise)."""
    for name in names:
        if name not in model.parameter:
            raise SpaceDefinitionError(f"{name!r} is not a parameter of this space",
                                       hint=did_you_mean(name, model.parameter) or
                                       f"parameters: {', '.join(model.parameter_names)}")


def orders_as_tuples(model, assignment: dict) -> dict:
    """An order given as written in files (`i>j>k`) or as a list, as the tuple it is."""
    out = dict(assignment)
    for name, value in assignment.items():
        if model.kinds.of(name) == ORDER:
            if type(value) is str:
                out[name] = parse_order(value, model.kinds.possible_items(ir.Ref(name)) or ())
            elif type(value) is list:
                out[name] = tuple(value)
    return out


def check(plan: Plan, assignment: dict) -> CheckResult:
    model = plan.model
    assignment = python_assignment(assignment)
    check_parameter_names(model, assignment)
    assignment = orders_as_tuples(model, assignment)
    if set(assignment) != set(model.parameter):
        return _complete(plan, assignment)
    env = dict(assignment)
    rejections: list[Rejection] = []
    derived: dict = {}
    closure_globals = dict(model.closure_globals)

    def blocked(item) -> bool:
        """An input is undefined (None) and already reported."""
        return any(env.get(n, 0) is None for n in item.depends_on)

    def compute(level_derived):
        # in plan order: a domain may use derived values computed at earlier levels
        for d in level_derived:
            if blocked(d):
                env[d.name] = derived[d.name] = None
                continue
            try:
                env[d.name] = derived[d.name] = _located(compile_expr(d.expr), env, d, model)
            except Undefined as exc:
                rejections.append(Rejection(d.name, f"undefined: {to_source(exc.expr)}",
                                            {n: env.get(n) for n in sorted(d.depends_on)}, undefined=True))
                env[d.name] = derived[d.name] = None

    compute(plan.prelude_derived)
    for level in plan.levels:
        p = level.parameter
        if not blocked(p):
            try:
                values = _located(compile_domain(p.domain, p.name, closure_globals=closure_globals,
                                                 max_closure_values=model.max_closure_values), env, p, model)
                if env[p.name] not in values:
                    inputs = {n: env[n] for n in sorted(p.depends_on)}
                    rejections.append(Rejection(f"domain of {p.name}", f"{p.name} in {to_source(p.domain)}",
                                                {p.name: env[p.name], **inputs}))
            except Undefined as exc:
                rejections.append(Rejection(f"domain of {p.name}", f"undefined: {to_source(exc.expr)}",
                                            {n: env[n] for n in sorted(p.depends_on)}, undefined=True))
        compute(level.derived)
    for c in model.constraints:
        involved = {n: env.get(n) for n in sorted(c.depends_on)}
        if blocked(c):
            continue  # an input is undefined and already reported
        try:
            if bool(_located(compile_expr(c.expr), env, c, model)) == c.rejects:
                rejections.append(Rejection(c.name, f"{c.polarity} {to_source(c.expr)}", involved))
        except Undefined as exc:
            rejections.append(Rejection(c.name, f"undefined: {to_source(exc.expr)}", involved, undefined=True))
    return CheckResult(dict(assignment), True, not rejections, rejections, derived)


def _located(fn, env, item, model):
    """fn(env), with a language error located at `item`'s definition and naming the configuration."""
    try:
        return fn(env)
    except SpaceEvaluationError as exc:
        if exc.where is None:
            exc.where = Location(model.source, item.line)
        bound = " ".join(f"{n}={env[n]!r}" for n in model.parameter_names if n in env)
        exc.message = f"{exc.message} (checking {bound})"
        exc.args = (exc.render(),)
        raise


def _complete(plan: Plan, assignment: dict) -> CheckResult:
    enumerator = ReferenceEnumerator(plan, fixed=assignment)
    completion = next(enumerator.rows(), None)
    names = plan.model.parameter_names
    found = dict(zip(names, completion)) if completion is not None else None
    return CheckResult(dict(assignment), False, found is not None, completion=found)
