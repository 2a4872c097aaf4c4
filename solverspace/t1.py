"""T1 interop: read and write the autotuning community's T1 tuning-problem JSON format.

A T1 file describes a space as `ConfigurationSpace.TuningParameters[]` (`Name`, `Type`,
`Values`) and `ConfigurationSpace.Conditions[]` (`Parameters`, `Expression`). `Values` is a
string holding a Python list expression (`"[2**i for i in range(0, 6)]"`) and `Expression` a
Python boolean expression in which `/` is true division. A configuration is valid iff every
condition holds; nothing else is implied.

Import (`load_t1`) never runs the file's strings. Both kinds are parsed with `ast`:

- `Values` are evaluated by a small whitelisted evaluator (`_ListEvaluator`): literals, lists,
  `+ - * // % / **` on integers, `+` and `*` on lists, `range(...)`, `list(...)` and list
  comprehensions (with `if` filters) whose variables are the only names allowed.
- Each `Expression` must stay inside the expression subset of our language (arithmetic,
  comparisons, `and`/`or`/`not`, `x if c else y`, `min`/`max`/`abs`); it is wrapped in a
  synthetic `def condition_N(): return <expression>` and lowered by `FunctionLowerer`, with every
  free name resolved to a tuning parameter. `/` is exact division, as in our language.

Anything else is refused with the file, the parameter or condition, the offending text and its
column. Import adds no constraint the file does not state (Kernel Tuner adds a block-size limit
of its own; we do not), and a T1 file has no settings.

Export (`export_t1`) writes a model as T1. Each parameter becomes a value list. A parameter
whose range depends on other parameters becomes a *superset* list (every value its domain takes
for some values of its inputs, themselves taken from their own lists) plus a condition stating
membership (`start <= p < stop and (p - start) % step == 0` for `range(start, stop, step)`).
Derived values are inlined into the conditions (`ir.substitute`); a derived value that may divide
by zero adds a condition that evaluates it (`e == e`), because in our semantics an undefined
derived value makes the configuration invalid even where no constraint reads it. Constraints are
printed with `to_source`; `reject_if` constraints as `not (...)`. Closure (generator) iterators
with inputs cannot be written as value lists and are refused. Exported files carry no
`KernelSpecification` (the space has no kernel), and Kernel Tuner evaluates `/` as floating point
where we compare exact fractions.
"""
from __future__ import annotations

import ast
import itertools
import json
import keyword
import re
from fractions import Fraction
from pathlib import Path

from . import ir
from .errors import Location, SettingError, SpaceDefinitionError, SpaceEvaluationError, did_you_mean
from .model import Constraint, Model, Parameter
from .printing import to_source

T1_TYPES = ("int", "uint", "float", "bool", "string")
MAX_VALUES = 1_000_000          # the longest value list a `Values` string may produce
MAX_WORK = 2_000_000            # steps (comprehension iterations, list elements built) one `Values` may take
MAX_EXPORT_COMBINATIONS = 1_000_000  # input combinations evaluated to build one superset list
_MAX_POWER_BITS = 4096          # `**` results larger than this are refused (no runaway integers)

_LIST_FUNCTIONS = ("range", "list")
_CONDITION_FUNCTIONS = ("min", "max", "abs")
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_CMPOPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


# --------------------------------------------------------------------------------- import

def load_t1(path: str | Path, settings: dict | None = None) -> Model:
    """Load a T1 JSON file as a `Model` (parameters and constraints, no derived values).

    `settings` must be empty: a T1 file has no settings to override.
    """
    path = Path(path)
    if settings:
        name = next(iter(settings))
        raise SettingError(f"unknown setting {name!r}: a T1 file ({path}) has no settings",
                           hint="remove --set; T1 spaces are fixed by their value lists and conditions")
    from .loader import read_text
    return load_t1_text(read_text(path, "T1 file"), str(path))


def load_t1_text(text: str, filename: str = "<t1>") -> Model:
    """Load T1 JSON from its text (the tests' entry point)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpaceDefinitionError(f"not valid JSON: {exc.msg} (column {exc.colno})",
                                   where=Location(filename, exc.lineno)) from None
    except RecursionError:
        raise SpaceDefinitionError("JSON nested too deeply to read", where=Location(filename),
                                   hint="a T1 file is a few levels deep: ConfigurationSpace.TuningParameters[]") from None
    return _T1Importer(data, text, filename).run()


class _T1Importer:
    def __init__(self, data, text: str, filename: str):
        self.data = data
        self.filename = filename
        self.text = text
        self.names: dict[str, Parameter] = {}

    def error(self, what: str, message: str, line=None, *, source: str | None = None,
              node=None, col: int | None = None, hint: str | None = None) -> SpaceDefinitionError:
        """A refusal naming what (parameter/condition), the text and the column."""
        if node is not None:
            col = getattr(node, "col_offset", None)
            snippet = ast.get_source_segment(source, node) if source is not None else None
            if snippet and snippet != source.strip():
                message += f": `{snippet}`"
        if source is not None:
            if col is not None:
                lines = source.split("\n")
                row = (getattr(node, "lineno", 1) or 1) - 1 if node is not None else 0
                row = min(max(row, 0), len(lines) - 1)
                message += f" (column {col + 1})\n    {lines[row]}\n    {' ' * col}^"
            else:
                message += f"\n    {source}"
        return SpaceDefinitionError(f"{what}: {message}", where=Location(self.filename, line), hint=hint)

    # ------------------------------------------------------------------------------ structure
    def run(self) -> Model:
        where = Location(self.filename)
        if not isinstance(self.data, dict) or not isinstance(self.data.get("ConfigurationSpace"), dict):
            raise SpaceDefinitionError("not a T1 file: no `ConfigurationSpace` object", where=where,
                                       hint="a T1 file has ConfigurationSpace.TuningParameters[] with Name, Type, Values")
        space = self.data["ConfigurationSpace"]
        params = space.get("TuningParameters")
        if not isinstance(params, list) or not params:
            raise SpaceDefinitionError("`ConfigurationSpace.TuningParameters` must be a non-empty list",
                                       where=where)
        conditions = space.get("Conditions", []) or []
        if not isinstance(conditions, list):
            raise SpaceDefinitionError("`ConfigurationSpace.Conditions` must be a list", where=where)
        value_lines = _key_lines(self.text, "Values", len(params))
        condition_lines = _key_lines(self.text, "Expression", len(conditions))

        for index, entry in enumerate(params):
            parameter = self.parameter(index, entry, value_lines[index])
            self.names[parameter.name] = parameter
        parameters = list(self.names.values())
        constraints = [self.condition(index, entry, condition_lines[index])
                       for index, entry in enumerate(conditions)]
        return Model(self.filename, tuple(parameters), (), tuple(constraints), ())

    def parameter(self, index: int, entry, line) -> Parameter:
        what = f"tuning parameter {index + 1}"
        if not isinstance(entry, dict):
            raise self.error(what, "must be an object with Name, Type and Values", line)
        name = entry.get("Name")
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise self.error(what, f"Name {name!r} is not a Python identifier", line,
                             hint="conditions refer to parameters by name, so names must be identifiers")
        what = f"tuning parameter {name!r}"
        if name in self.names:
            raise self.error(what, "is defined twice", line)
        kind = entry.get("Type")
        if kind not in T1_TYPES:
            raise self.error(what, f"Type {kind!r} is not one of {list(T1_TYPES)}", line)
        if kind == "float":
            raise self.error(what, "Type 'float' is not supported: parameter values are integers or strings", line,
                             hint="scale the values to integers (e.g. percent) or make them strings")
        if "Values" not in entry:
            raise self.error(what, "has no Values", line)
        raw = entry["Values"]
        if isinstance(raw, str):
            values = self.values_from_text(what, raw, line)
        elif isinstance(raw, list):
            values = raw
        else:
            raise self.error(what, f"Values must be a string holding a Python list, not {type(raw).__name__}", line)
        checked = [self.check_value(what, kind, v, line) for v in values]
        return Parameter(name, ir.Values(tuple(ir.Const(v) for v in checked)), "expression", line)

    def values_from_text(self, what: str, raw: str, line) -> list:
        what = f"{what} Values"
        source = _strip(raw)
        try:
            tree = _parse(source)
        except SyntaxError as exc:
            raise self.error(what, f"syntax error: {exc.msg}", line, source=source,
                             col=(exc.offset or 1) - 1) from None
        value = _ListEvaluator(self, what, source, line).evaluate(tree.body, {})
        if isinstance(value, range):
            value = list(value)
        if not isinstance(value, list):
            raise self.error(what, f"is not a list (got {_kind(value)})", line, source=source)
        return value

    def check_value(self, what: str, kind: str, value, line):
        if isinstance(value, float) or isinstance(value, Fraction):
            raise self.error(what, f"value {value!r} is not an integer or a string", line,
                             hint="parameter values are integers or strings")
        if kind in ("int", "uint"):
            if type(value) not in (int, bool):
                raise self.error(what, f"value {value!r} is not an integer (Type is {kind!r})", line)
            if kind == "uint" and value < 0:
                raise self.error(what, f"value {value!r} is negative (Type is 'uint')", line)
            return int(value)
        if kind == "bool":
            if type(value) is bool or (type(value) is int and value in (0, 1)):
                return bool(value)
            raise self.error(what, f"value {value!r} is not a bool (Type is 'bool')", line)
        if type(value) is not str:
            raise self.error(what, f"value {value!r} is not a string (Type is 'string')", line)
        return value

    # ------------------------------------------------------------------------------ conditions
    def condition(self, index: int, entry, line) -> Constraint:
        name = f"condition_{index + 1}"
        what = f"condition {index + 1}"
        if not isinstance(entry, dict) or not isinstance(entry.get("Expression"), str):
            raise self.error(what, "must be an object with an `Expression` string", line)
        listed = entry.get("Parameters", [])
        if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
            raise self.error(what, "`Parameters` must be a list of parameter names", line)
        for p in listed:
            if p not in self.names:
                raise self.error(what, f"`Parameters` names {p!r}, which is not a tuning parameter", line,
                                 hint=did_you_mean(p, self.names))
        source = _strip(entry["Expression"])
        try:
            tree = _parse(source)
        except SyntaxError as exc:
            raise self.error(what, f"syntax error: {exc.msg}", line, source=source,
                             col=(exc.offset or 1) - 1) from None
        self.check_condition_syntax(what, tree.body, source, line)
        body = tree.body
        if line is not None:
            ast.increment_lineno(tree, line - 1)
        func = ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                                            kw_defaults=[], kwarg=None, defaults=[]),
                               body=[ast.Return(value=body)], decorator_list=[], returns=None)
        func.lineno = line or 1
        func.col_offset = 0
        ast.fix_missing_locations(func)

        def resolve(ref: str, _line) -> ir.Node:
            if ref in self.names:
                return ir.Ref(ref)
            raise self.error(what, f"unknown name {ref!r}", line, source=source,
                             hint=did_you_mean(ref, self.names) or "names in a condition must be tuning parameters")

        from .lowering import FunctionLowerer, fold_tree
        try:
            lowered = FunctionLowerer(func, self.filename, resolve).lower()
        except SpaceDefinitionError as exc:
            if exc.message.startswith(what):
                raise
            message = exc.message.split(": ", 1)[-1] if exc.message.startswith("in function") else exc.message
            raise self.error(what, message, line, source=source, hint=exc.hint) from None
        if isinstance(lowered, ir.Domain):
            raise self.error(what, "is a list of values, not a condition", line, source=source)
        return Constraint(name, fold_tree(lowered), False, "expression", line)

    def check_condition_syntax(self, what, node, source, line):
        """Refuse, with its column, the first construct outside the language's expression subset."""
        called = {sub.func for sub in ast.walk(node) if isinstance(sub, ast.Call)}
        for sub in ast.walk(node):
            problem = hint = None
            if isinstance(sub, (ast.expr_context, ast.boolop, ast.unaryop, ast.cmpop, ast.operator)):
                continue  # judged with the node that holds them
            if isinstance(sub, (ast.BoolOp, ast.IfExp)):
                continue
            if isinstance(sub, ast.BinOp):
                if not isinstance(sub.op, _BINOPS):
                    problem = "this operator is not part of the language"
                    hint = "arithmetic is + - * / // % and ** with a constant exponent"
                elif isinstance(sub.op, ast.Pow) and not (isinstance(sub.right, ast.Constant)
                                                          and type(sub.right.value) is int and sub.right.value >= 0):
                    problem = "`**` takes only a non-negative integer constant exponent"
            elif isinstance(sub, ast.UnaryOp):
                if isinstance(sub.op, ast.Invert):
                    problem, hint = "bitwise `~` is not part of the language", "use `not` for negation"
            elif isinstance(sub, ast.Compare):
                bad = [op for op in sub.ops if not isinstance(op, _CMPOPS)]
                if bad:
                    problem = f"comparison `{type(bad[0]).__name__}` is not part of the language"
                    hint = ("comparisons are < <= > >= == !=; write `x in [1, 2]` as `x == 1 or x == 2`"
                            if isinstance(bad[0], (ast.In, ast.NotIn)) else "comparisons are < <= > >= == !=")
            elif isinstance(sub, ast.Call):
                fname = sub.func.id if isinstance(sub.func, ast.Name) else None
                if fname not in _CONDITION_FUNCTIONS:
                    problem = "this call is not part of the language"
                    hint = "functions available in conditions: " + ", ".join(_CONDITION_FUNCTIONS)
                elif sub.keywords or any(isinstance(a, ast.Starred) for a in sub.args):
                    problem = f"{fname}() takes plain positional arguments only"
            elif isinstance(sub, (ast.List, ast.Tuple)):
                if not _is_minmax_list(node, sub):
                    problem = "lists are not values in a condition"
                    hint = "compare values directly, e.g. `x == 1 or x == 2`"
            elif isinstance(sub, ast.Name):
                if sub.id not in self.names and sub not in called:
                    problem = f"unknown name {sub.id!r}"
                    hint = did_you_mean(sub.id, self.names) or "names in a condition must be tuning parameters"
            elif isinstance(sub, ast.Constant):
                if type(sub.value) not in (int, str, bool):
                    problem = f"constant {sub.value!r} is not an integer, bool or string"
                    hint = "the language has integers, exact fractions (a / b) and strings"
            else:
                problem = f"{type(sub).__name__} is not part of the language"
            if problem:
                raise self.error(what, problem, line, source=source, node=sub, hint=hint)


def _is_minmax_list(root, target) -> bool:
    for sub in ast.walk(root):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in ("min", "max") \
                and len(sub.args) == 1 and sub.args[0] is target:
            return all(not isinstance(e, ast.Starred) for e in target.elts)
    return False


def _parse(source: str) -> ast.Expression:
    """`ast.parse` in eval mode; inputs it cannot handle become syntax errors."""
    try:
        return ast.parse(source, mode="eval")
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SyntaxError(f"cannot be parsed ({type(exc).__name__})") from None


def _strip(text: str) -> str:
    """Python's eval ignores leading blanks; so do we (columns count from the first non-blank)."""
    return text.lstrip(" \t").rstrip()


def _key_lines(text: str, key: str, count: int) -> list:
    """1-based JSON line of each occurrence of `"key":`, when the count matches (else Nones)."""
    lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r'"%s"\s*:' % re.escape(key), text)]
    return lines if len(lines) == count else [None] * count


def _kind(value) -> str:
    return {int: "an integer", bool: "a bool", str: "a string", list: "a list", range: "a range"}.get(
        type(value), type(value).__name__)


class _ListEvaluator:
    """Evaluate a `Values` string's AST: only list-building constructs, no Python `eval`."""

    def __init__(self, importer: _T1Importer, what: str, source: str, line):
        self.importer, self.what, self.source, self.line = importer, what, source, line
        self.work = 0

    def spend(self, node, steps: int):
        """Count work before doing it: a comprehension that yields little can still loop for
        hours (`[x for x in range(10**6) for y in range(10**6) if False]`)."""
        self.work += steps
        if self.work > MAX_WORK:
            raise self.fail(node, f"takes more than {MAX_WORK} steps to evaluate (comprehension iterations "
                                  "and list elements built)",
                            hint="write the list with fewer or shorter loops, or give Values as a JSON list")

    def fail(self, node, message, hint=None):
        return self.importer.error(self.what, message, self.line, source=self.source, node=node, hint=hint)

    def evaluate(self, node, env: dict):
        method = getattr(self, "_eval_" + type(node).__name__, None)
        if method is None:
            raise self.fail(node, f"{type(node).__name__} is not allowed in a value list",
                            hint="value lists may use literals, + and * of lists, range(), list() and "
                                 "comprehensions such as [2**i for i in range(0, 6)]")
        return method(node, env)

    def _eval_Constant(self, node, env):
        if type(node.value) in (int, str, bool):
            return node.value
        raise self.fail(node, f"constant {node.value!r} is not an integer, bool or string",
                        hint="parameter values are integers or strings")

    def _eval_List(self, node, env):
        values = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                items = self.iterable(element.value, env)
                self.spend(element, len(items))
                values.extend(items)
            else:
                self.spend(element, 1)
                values.append(self.scalar(element, env))
            self.check_size(node, len(values))
        return values

    _eval_Tuple = _eval_List

    def _eval_Name(self, node, env):
        if node.id in env:
            return env[node.id]
        raise self.fail(node, f"unknown name {node.id!r}",
                        hint="the only names a value list may use are its comprehension variables")

    def scalar(self, node, env):
        value = self.evaluate(node, env)
        if isinstance(value, (list, range)):
            raise self.fail(node, f"{_kind(value)} where a single value is expected")
        return value

    def iterable(self, node, env):
        value = self.evaluate(node, env)
        if not isinstance(value, (list, range)):
            raise self.fail(node, f"{_kind(value)} where a list or range is expected")
        return value

    def integer(self, node, env):
        value = self.evaluate(node, env)
        if type(value) not in (int, bool):
            raise self.fail(node, f"{_kind(value)} where an integer is expected")
        return int(value)

    def check_size(self, node, size):
        if size > MAX_VALUES:
            raise self.fail(node, f"produces more than {MAX_VALUES} values")

    def _eval_UnaryOp(self, node, env):
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.integer(node.operand, env)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node.op, ast.Not):
            return not self.evaluate(node.operand, env)
        raise self.fail(node, "this operator is not allowed in a value list")

    def _eval_BinOp(self, node, env):
        left, right = self.evaluate(node.left, env), self.evaluate(node.right, env)
        op = type(node.op)
        if isinstance(left, (list, range)) or isinstance(right, (list, range)):
            if op is ast.Add and isinstance(left, list) and isinstance(right, list):
                self.check_size(node, len(left) + len(right))
                self.spend(node, len(left) + len(right))
                return left + right
            if op is ast.Mult:
                seq, times = (left, right) if isinstance(left, (list, range)) else (right, left)
                if type(times) is int and isinstance(seq, list):
                    self.check_size(node, len(seq) * max(times, 0))
                    self.spend(node, len(seq) * max(times, 0))
                    return seq * times
            raise self.fail(node, f"unsupported operation between {_kind(left)} and {_kind(right)}",
                            hint="as in Python: lists add to lists (wrap a range in list(...))")
        if type(left) is str or type(right) is str:
            raise self.fail(node, "arithmetic on strings is not allowed in a value list")
        a, b = int(left), int(right)
        if op is ast.Add:
            return a + b
        if op is ast.Sub:
            return a - b
        if op is ast.Mult:
            return a * b
        if op in (ast.FloorDiv, ast.Mod, ast.Div):
            if b == 0:
                raise self.fail(node, "division by zero")
            if op is ast.FloorDiv:
                return a // b
            if op is ast.Mod:
                return a % b
            quotient = Fraction(a, b)
            if quotient.denominator != 1:
                raise self.fail(node, f"{a} / {b} is not an integer",
                                hint="parameter values are integers; use // for integer division")
            return int(quotient)
        if op is ast.Pow:
            if b < 0:
                raise self.fail(node, "a negative exponent gives a fraction, not an integer")
            if max(abs(a).bit_length(), 1) * b > _MAX_POWER_BITS:
                raise self.fail(node, f"the power is too large (more than {_MAX_POWER_BITS} bits)")
            return a ** b
        raise self.fail(node, f"operator {op.__name__} is not allowed in a value list")

    def _eval_Compare(self, node, env):
        left = self.scalar(node.left, env)
        for op, comparator in zip(node.ops, node.comparators):
            right = self.scalar(comparator, env)
            if not isinstance(op, _CMPOPS):
                raise self.fail(node, f"comparison {type(op).__name__} is not allowed in a value list")
            if type(left) is str or type(right) is str:
                if not isinstance(op, (ast.Eq, ast.NotEq)):
                    raise self.fail(node, "strings can only be compared with == and !=")
            outcome = {ast.Lt: lambda: left < right, ast.LtE: lambda: left <= right, ast.Gt: lambda: left > right,
                       ast.GtE: lambda: left >= right, ast.Eq: lambda: left == right,
                       ast.NotEq: lambda: left != right}[type(op)]()
            if not outcome:
                return False
            left = right
        return True

    def _eval_BoolOp(self, node, env):
        value = None
        for operand in node.values:
            value = self.scalar(operand, env)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value

    def _eval_IfExp(self, node, env):
        return self.evaluate(node.body, env) if self.scalar(node.test, env) else self.evaluate(node.orelse, env)

    def _eval_Call(self, node, env):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _LIST_FUNCTIONS or name in env:
            raise self.fail(node, "this call is not allowed in a value list",
                            hint="value lists may call " + " and ".join(_LIST_FUNCTIONS))
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.fail(node, f"{name}() takes plain positional arguments only")
        if name == "list":
            if len(node.args) != 1:
                raise self.fail(node, "list() takes one argument")
            items = self.iterable(node.args[0], env)
            self.spend(node, len(items))
            return list(items)
        if not 1 <= len(node.args) <= 3:
            raise self.fail(node, f"range expected 1 to 3 arguments, got {len(node.args)}")
        bounds = [self.integer(a, env) for a in node.args]
        if len(bounds) == 3 and bounds[2] == 0:
            raise self.fail(node, "range step is 0", hint="a range step must be a non-zero integer")
        result = range(*bounds)
        try:
            size = len(result)
        except OverflowError:  # more than sys.maxsize values
            size = MAX_VALUES + 1
        self.check_size(node, size)
        return result

    def _eval_ListComp(self, node, env):
        results: list = []

        def generate(index, scope):
            if index == len(node.generators):
                results.append(self.scalar(node.elt, scope))
                self.check_size(node, len(results))
                return
            gen = node.generators[index]
            if gen.is_async:
                raise self.fail(node, "async comprehensions are not allowed")
            if not isinstance(gen.target, ast.Name):
                raise self.fail(gen.target, "a comprehension variable must be a single name")
            for item in self.iterable(gen.iter, scope):
                self.spend(gen, 1)
                inner = {**scope, gen.target.id: item}
                if all(self.scalar(cond, inner) for cond in gen.ifs):
                    generate(index + 1, inner)

        generate(0, dict(env))
        return results


# --------------------------------------------------------------------------------- export

class T1ExportError(SpaceDefinitionError):
    """The space cannot be written as T1 (the message says what and why)."""


def export_t1(model: Model, *, name: str | None = None) -> dict:
    """The model as a T1 document (a dict ready for `json.dump`).

    >>> from solverspace.loader import load_source
    >>> doc = export_t1(load_source("x = range(1, 4)\\ny = range(x, 4)\\nreject_if(x + y > 4)"))
    >>> [(p["Name"], p["Values"]) for p in doc["ConfigurationSpace"]["TuningParameters"]]
    [('x', '[1, 2, 3]'), ('y', '[1, 2, 3]')]
    >>> [c["Expression"] for c in doc["ConfigurationSpace"]["Conditions"]]
    ['x <= y and y < 4', 'not (x + y > 4)']
    """
    return _T1Exporter(model).run(name or Path(model.source).stem)


def write_t1(model: Model, path: str | Path, *, name: str | None = None) -> dict:
    """Export to a T1 file (written to a temporary name, then renamed); returns the document."""
    from .output import atomic_output, check_output_path
    path = check_output_path(path)
    document = export_t1(model, name=name)
    with atomic_output(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
    return document


class _T1Exporter:
    def __init__(self, model: Model):
        self.model = model
        self.where = lambda line=None: Location(model.source, line)
        self.inlined = self.inline_derived()
        self.guards: list[ir.Expr] = []
        self._bounds = None

    def refuse(self, message, line=None, hint=None):
        return T1ExportError(f"cannot export to T1: {message}", where=self.where(line), hint=hint)

    def inline_derived(self) -> dict[str, ir.Expr]:
        """Every derived value as an expression of parameters only."""
        import graphlib
        model = self.model
        graph = {d.name: {r for r in d.depends_on if r in model.derived_value} for d in model.derived}
        result: dict[str, ir.Expr] = {}
        for name in graphlib.TopologicalSorter(graph).static_order():
            result[name] = ir.substitute(model.derived_value[name].expr, result)
        return result

    def expand(self, node: ir.Node) -> ir.Node:
        return ir.substitute(node, self.inlined)

    def run(self, name: str) -> dict:
        from .plan import loop_order
        model = self.model
        order = loop_order(model, model.analysis.dag)
        supersets: dict[str, list] = {}
        membership: dict[str, ir.Expr | None] = {}
        for pname in order:
            p = model.parameter[pname]
            supersets[pname], membership[pname] = self.parameter(p, supersets)
        tuning = []
        for p in model.parameters:
            values = supersets[p.name]
            kinds = {type(v) for v in values}
            if kinds - {int, str}:
                raise self.refuse(f"parameter {p.name!r} has values {values[:5]} that are not integers or strings",
                                  p.line)
            if kinds == {int, str}:
                raise self.refuse(f"parameter {p.name!r} mixes integer and string values; T1 types a parameter "
                                  "as one or the other", p.line)
            tuning.append({"Name": p.name, "Type": "string" if kinds == {str} else "int", "Values": _values_text(values)})
        conditions = []

        def add(expr: ir.Expr):
            expr = _fold(expr)
            if isinstance(expr, ir.Const) and expr.value is True:
                return
            params = [q for q in model.parameter_names if q in ir.refs(expr)]
            conditions.append({"Parameters": params, "Expression": to_source(expr)})

        for p in model.parameters:
            if membership[p.name] is not None:
                add(membership[p.name])
        for d in model.derived:
            for guard in self.definedness(d):
                add(guard)
        for c in model.constraints:
            expr = self.expand(c.expr)
            if c.rejects:
                conditions.append({"Parameters": [q for q in model.parameter_names if q in ir.refs(expr)],
                                   "Expression": f"not ({to_source(expr)})"})
            else:
                add(expr)
        return {"General": {"FormatVersion": 1, "BenchmarkName": name},
                "ConfigurationSpace": {"TuningParameters": tuning, "Conditions": conditions}}

    def definedness(self, derived) -> list[ir.Expr]:
        """Conditions true exactly where the derived value is defined (our semantics reject a
        configuration whose derived value divides by zero even if no constraint reads it).
        Without short-circuit operators every division is evaluated, so the conditions are
        `divisor != 0`, inner divisions first; otherwise the value is compared with itself."""
        divisions = [n for n in _postorder(derived.expr)
                     if isinstance(n, ir.BinOp) and n.op in ("//", "%", "/") and not self.nonzero(n.right)]
        if not divisions:
            return []
        if any(isinstance(n, (ir.IfExp, ir.And, ir.Or)) for n in ir.walk(derived.expr)):
            expr = self.inlined[derived.name]
            return [ir.Compare("==", expr, expr)]
        guards = []
        for n in divisions:
            guard = ir.Compare("!=", self.expand(n.right), ir.Const(0))
            if guard not in guards and guard not in self.guards:
                guards.append(guard)
        self.guards.extend(guards)
        return guards

    def nonzero(self, divisor: ir.Expr) -> bool:
        """Whether interval analysis proves a divisor non-zero."""
        if isinstance(divisor, ir.Const):
            return divisor.value != 0
        try:
            interval = self.bounds.expr(divisor)
        except Exception:  # unanalysable: keep the guard
            return False
        return interval.empty or interval.lo > 0 or interval.hi < 0

    def sign(self, expr: ir.Expr) -> int:
        """1 or -1 where interval analysis proves the sign of a range step, else 0."""
        try:
            interval = self.bounds.expr(expr)
        except Exception:
            return 0
        return 1 if interval.lo > 0 else -1 if interval.hi < 0 else 0

    @property
    def bounds(self):
        if self._bounds is None:
            self._bounds = self.model.analysis.bounds
        return self._bounds

    def parameter(self, p: Parameter, supersets: dict) -> tuple[list, ir.Expr | None]:
        """The value list (exact, or a superset) and the membership condition (None if exact)."""
        from .evaluate import Undefined, compile_domain
        domain = self.expand(p.domain)
        closures = [n for n in ir.walk(domain) if isinstance(n, ir.Closure)]
        for c in closures:
            if c.deps:
                raise self.refuse(f"parameter {p.name!r} is a closure (generator) iterator with inputs "
                                  f"({', '.join(c.deps)}): its values cannot be written as one T1 value list",
                                  p.line, hint="T1 can hold such a space only if the generator takes no inputs")
        inputs = [q for q in self.model.parameter_names if q in ir.refs(domain)]
        evaluate = compile_domain(domain, p.name, closure_globals=dict(self.model.closure_globals),
                                  max_closure_values=self.model.max_closure_values)
        if not inputs:
            try:
                values = list(evaluate({}))
            except Undefined:
                values = []
            if len(values) > MAX_VALUES:
                raise self.refuse(f"parameter {p.name!r} has {len(values)} values (limit {MAX_VALUES})", p.line)
            return values, None
        combinations = 1
        for q in inputs:
            combinations *= max(len(supersets[q]), 1)
        if combinations > MAX_EXPORT_COMBINATIONS:
            raise self.refuse(f"parameter {p.name!r} depends on {', '.join(inputs)}: {combinations} combinations of "
                              f"their values to evaluate (limit {MAX_EXPORT_COMBINATIONS})", p.line)
        seen: dict = {}
        for combo in itertools.product(*(supersets[q] for q in inputs)):
            try:
                values = evaluate(dict(zip(inputs, combo)))
            except Undefined:
                continue
            except SpaceEvaluationError as exc:
                raise self.refuse(f"parameter {p.name!r}: {exc.message} for "
                                  + ", ".join(f"{k}={v}" for k, v in zip(inputs, combo)), p.line) from None
            for v in values:
                seen.setdefault(v, None)
            if len(seen) > MAX_VALUES:
                raise self.refuse(f"parameter {p.name!r} takes more than {MAX_VALUES} values", p.line)
        return list(seen), self.member(ir.Ref(p.name), domain, p)

    def member(self, x: ir.Expr, node: ir.Domain, p: Parameter) -> ir.Expr:
        """An expression true exactly when `x` is one of the domain's values."""
        if isinstance(node, ir.Values):
            return _or(tuple(ir.Compare("==", x, item) for item in node.items))
        if isinstance(node, ir.Range):
            start, stop, step = node.start, node.stop, node.step
            if isinstance(step, ir.Const) and type(step.value) is int:
                if step.value > 0:
                    bounds = _and((ir.Compare("<=", start, x), ir.Compare("<", x, stop)))
                else:
                    bounds = _and((ir.Compare("<", stop, x), ir.Compare("<=", x, start)))
                if abs(step.value) == 1:
                    return bounds
                offset = ir.BinOp("-", x, start) if step.value > 0 else ir.BinOp("-", start, x)
                return _and((bounds, ir.Compare("==", ir.BinOp("%", offset, ir.Const(abs(step.value))), ir.Const(0))))
            upward = _and((ir.Compare("<=", start, x), ir.Compare("<", x, stop)))
            downward = _and((ir.Compare("<", stop, x), ir.Compare("<=", x, start)))
            sign = self.sign(step)
            bounds = upward if sign > 0 else downward if sign < 0 else \
                ir.IfExp(ir.Compare(">", step, ir.Const(0)), upward, downward)
            return _and((bounds, ir.Compare("==", ir.BinOp("%", ir.BinOp("-", x, start), step), ir.Const(0))))
        if isinstance(node, ir.SetOp):
            left, right = self.member(x, node.left, p), self.member(x, node.right, p)
            if node.op == "union":
                return _or((left, right))
            if node.op == "intersection":
                return _and((left, right))
            return _and((left, ir.Not(right)))
        if isinstance(node, ir.IfDomain):
            return ir.IfExp(node.cond, self.member(x, node.then, p), self.member(x, node.orelse, p))
        if isinstance(node, ir.Closure):  # no inputs (checked above): its fixed value list
            from .evaluate import compile_domain
            values = compile_domain(node, p.name, closure_globals=dict(self.model.closure_globals),
                                    max_closure_values=self.model.max_closure_values)({})
            return _or(tuple(ir.Compare("==", x, ir.Const(v)) for v in values))
        raise self.refuse(f"parameter {p.name!r}: {type(node).__name__} domains cannot be expressed", p.line)


def _values_text(values: list) -> str:
    """A value list as Python text; an arithmetic progression as `list(range(...))`."""
    if len(values) >= 4 and all(type(v) is int for v in values):
        step = values[1] - values[0]
        if step and all(b - a == step for a, b in zip(values, values[1:])):
            args = [values[0], values[-1] + step] + ([step] if step != 1 else [])
            return f"list(range({', '.join(map(str, args))}))"
    return repr(values)


def _postorder(node: ir.Node):
    for child in node.children():
        yield from _postorder(child)
    yield node


def _and(operands):
    flat = []
    for o in operands:
        flat.extend(o.operands if isinstance(o, ir.And) else (o,))
    return flat[0] if len(flat) == 1 else ir.And(tuple(flat))


def _or(operands):
    if not operands:
        return ir.Const(False)
    flat = []
    for o in operands:
        flat.extend(o.operands if isinstance(o, ir.Or) else (o,))
    return flat[0] if len(flat) == 1 else ir.Or(tuple(flat))


def _fold(expr):
    from .lowering import fold_tree
    return fold_tree(expr)
