"""Read T1 tuning-problem JSON into a `Model` (`load_t1`, `load_t1_text`), never running its strings.

A T1 file describes a space as `ConfigurationSpace.TuningParameters[]` (`Name`, `Type`,
`Values`) and `ConfigurationSpace.Conditions[]` (`Parameters`, `Expression`). `Values` is a
string holding a Python list expression (`"[2**i for i in range(0, 6)]"`) and `Expression` a
Python boolean expression in which `/` is true division. A configuration is valid iff every
condition holds; nothing else is implied.

Both kinds of string are parsed with `ast`:

- `Values` are evaluated by a small whitelisted evaluator (`_ListEvaluator`): literals, lists,
  `+ - * // % / **` on integers, `+` and `*` on lists, `range(...)`, `list(...)` and list
  comprehensions (with `if` filters) whose variables are the only names allowed.
- Each `Expression` is a Kernel Tuner restriction (Python): `t1.conditions.read_condition`
  checks it node by node and rewrites the forms Python has into the language with Python's
  meaning (`in` a list, `and`/`or` as values, truth of a value, float literals, powers by a
  parameter, ...) or refuses the form by name; the result is wrapped in a synthetic
  `def condition_N(): return <expression>` and lowered by `FunctionLowerer`, with every free name
  resolved to a tuning parameter. `/` is exact division, as in our language.

Anything else is refused with the file, the parameter or condition, the offending text and its
column. Import adds no constraint the file does not state (Kernel Tuner adds a block-size limit
of its own; we do not), and a T1 file has no settings.
"""
from __future__ import annotations

import ast
import json
import keyword
import re
from fractions import Fraction
from pathlib import Path

from solverspace.lang import ir
from solverspace.core.errors import (
    Location, SettingError, SpaceDefinitionError, check_text, did_you_mean, python_name)
from solverspace.lang.evaluate import allow_integers_of_any_length
from solverspace.lang.lowering import FunctionLowerer, balance_chains, fold_tree, normalise_truth
from solverspace.lang.model import Constraint, ConstraintKind, Model, Parameter, ParameterKind, one_spelling
from solverspace.core.sources import read_text
from solverspace.io.t1.conditions import ConditionRefused, read_condition
from solverspace.io.t1.format import MAX_VALUES, T1_TYPES

__all__ = ["load_t1", "load_t1_text", "T1_TYPES", "MAX_VALUES", "MAX_WORK"]

MAX_WORK = 2_000_000            # steps (comprehension iterations, list elements built) one `Values` may take
_MAX_POWER_BITS = 4096          # `**` results larger than this are refused (no runaway integers)
_MAX_INT_BITS = 65_536          # any integer a `Values` string computes (a 5,000-digit value is 16,610 bits)

_LIST_FUNCTIONS = ("range", "list")
_CMPOPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def load_t1(path: str | Path, settings: dict | None = None) -> Model:
    """Load a T1 JSON file as a `Model` (parameters and constraints, no derived values).

    `settings` must be empty: a T1 file has no settings to override.

    >>> import json, tempfile, pathlib
    >>> from solverspace import export_t1, load_source
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "problem.json"
    >>> _ = path.write_text(json.dumps(export_t1(load_source("x = range(1, 4)\\ny = range(x, 4)"))))
    >>> load_t1(path).parameter_names
    ('x', 'y')
    """
    path = Path(path)
    if settings:
        name = next(iter(settings))
        raise SettingError(f"unknown setting {name!r}: a T1 file ({path}) has no settings",
                           hint="remove --set; T1 spaces are fixed by their value lists and conditions")
    return load_t1_text(read_text(path, "T1 file"), str(path))


def load_t1_text(text: str, filename: str = "<t1>") -> Model:
    """Load T1 JSON from its text (the tests' entry point)."""
    allow_integers_of_any_length()   # a value of 5,000 digits is a value
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpaceDefinitionError(f"not valid JSON: {exc.msg} (column {exc.colno})",
                                   where=Location(filename, exc.lineno)) from None
    except ValueError as exc:   # a number Python will not convert (its digit limit, if set again)
        raise SpaceDefinitionError(f"a number in the file cannot be read: {exc}", where=Location(filename),
                                   hint="write long integers as a `Values` string expression, e.g. \"[10**5000]\"") from None
    except RecursionError:
        raise SpaceDefinitionError("JSON nested too deeply to read", where=Location(filename),
                                   hint="a T1 file is a few levels deep: ConfigurationSpace.TuningParameters[]") from None
    return _T1Importer(data, text, filename).run()


class _T1Importer:
    def __init__(self, data, text: str, filename: str):
        self.data = data
        self.filename = filename
        self.text = text
        self.names: dict[str, Parameter] = {}   # by the name as Python reads it (`errors.python_name`)
        self.spelled: dict[str, str] = {}       # python name -> the spelling of its `Name`

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
        return normalise_truth(Model(self.filename, tuple(parameters), (), tuple(constraints), ()))

    def parameter(self, index: int, entry, line) -> Parameter:
        what = f"tuning parameter {index + 1}"
        if not isinstance(entry, dict):
            raise self.error(what, "must be an object with Name, Type and Values", line)
        name = entry.get("Name")
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(python_name(name)):
            raise self.error(what, f"Name {name!r} is not a Python identifier", line,
                             hint="conditions refer to parameters by name, so names must be identifiers")
        what = f"tuning parameter {name!r}"
        name = one_spelling(self.spelled, name, "tuning parameter", where=Location(self.filename, line))
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
        if kind == "int" and all(type(v) is int for v in values):
            checked = values   # every value an integer already (what check_value would return)
        else:
            checked = [self.check_value(what, kind, v, line) for v in values]
        return Parameter(name, ir.Values(tuple(ir.Const(v) for v in checked)), ParameterKind.EXPRESSION, line)

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
        return check_text(value, what, where=Location(self.filename, line))

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
            if python_name(p) not in self.names:
                raise self.error(what, f"`Parameters` names {p!r}, which is not a tuning parameter", line,
                                 hint=did_you_mean(p, self.names))
        source = _strip(entry["Expression"])
        try:
            tree = _parse(source)
        except SyntaxError as exc:
            raise self.error(what, f"syntax error: {exc.msg}", line, source=source,
                             col=(exc.offset or 1) - 1) from None
        body = self.read_condition(what, tree.body, source, line)
        if line is not None:
            ast.increment_lineno(body, line - 1)
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

        try:
            lowered = FunctionLowerer(func, self.filename, resolve).lower()
        except SpaceDefinitionError as exc:
            if exc.message.startswith(what):
                raise
            message = exc.message.split(": ", 1)[-1] if exc.message.startswith("in function") else exc.message
            raise self.error(what, message, line, source=source, hint=exc.hint) from None
        if isinstance(lowered, ir.Domain):
            raise self.error(what, "is a list of values, not a condition", line, source=source)
        return Constraint(name, fold_tree(lowered), False, ConstraintKind.EXPRESSION, line)

    def read_condition(self, what, node, source, line) -> ast.expr:
        """The expression in the language's subset (`t1.conditions`), or a refusal naming the form
        with its column."""
        values = {name: tuple(item.value for item in parameter.domain.items)
                  for name, parameter in self.names.items()}
        try:
            return read_condition(node, values)
        except ConditionRefused as refused:
            raise self.error(what, refused.problem, line, source=source, node=refused.node,
                             hint=refused.hint) from None


def _parse(source: str) -> ast.Expression:
    """`ast.parse` in eval mode; inputs it cannot handle become syntax errors."""
    try:
        return balance_chains(ast.parse(source, mode="eval"))   # long sums: not 1,000 levels deep
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SyntaxError(f"cannot be parsed ({type(exc).__name__})") from None


def _strip(text: str) -> str:
    """Python's eval ignores leading blanks; so do we (columns count from the first non-blank)."""
    return text.lstrip(" \t").rstrip()


def _key_lines(text: str, key: str, count: int) -> list:
    """1-based JSON line of each occurrence of `"key":`, when the count matches (else Nones)."""
    lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r'"%s"\s*:' % re.escape(key), text)]
    return lines if len(lines) == count else [None] * count


def _words(value) -> int:
    """The 64-bit words of an integer value (1 for anything else)."""
    return (value.bit_length() >> 6) + 1 if isinstance(value, int) else 1


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
        hours (`[x for x in range(10**6) for y in range(10**6) if False]`), and a list of large
        integers holds their 64-bit words (each word past the first of a value, and of integer
        arithmetic, is a step)."""
        self.work += steps
        if self.work > MAX_WORK:
            raise self.fail(node, f"takes more than {MAX_WORK} steps to evaluate (comprehension iterations, "
                                  "list elements built and the 64-bit words of large integers)",
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
                value = self.scalar(element, env)
                self.spend(element, _words(value))
                values.append(value)
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
        wa, wb = _words(a), _words(b)
        self.spend(node, wa * wb - 1 if op in (ast.Mult, ast.FloorDiv, ast.Mod, ast.Div) else wa + wb - 2)
        if op is ast.Mult and a.bit_length() + b.bit_length() - 1 > _MAX_INT_BITS:
            raise self.fail(node, f"the product is too large (more than {_MAX_INT_BITS} bits)")
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
                value = self.scalar(node.elt, scope)
                self.spend(node, _words(value) - 1)
                results.append(value)
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
