"""Load a space file into a `Model`.

The file is executed as Python with the language's names in scope. Module-level assignments are
intercepted (the locals mapping given to `exec`), and what is assigned decides what the name is:

- an iterator (`range(...)`, `iterator([...])`, iterator algebra)   -> a parameter
- an `@iterator` function (a generator function: a closure iterator) -> a parameter
- an expression over parameters                                    -> a derived value
- `require(...)`, `reject_if(...)`, `@require`, `@reject_if`         -> a constraint
- `setting(...)` or a plain int/str/bool constant                   -> a setting (overridable)
- anything else (lists, helper functions, modules)                 -> a plain module constant

A plain `def` (a helper function) stays a Python function for plain values; called with a
parameter, derived value or iterator it is inlined (its body lowered like a @require body), and
calls to it in function bodies are inlined too. Python's `in` cannot be overloaded on parameters
(`__contains__` is coerced to bool), so module-level `a in b` / `a not in b` are rewritten in the
AST into calls of `dsl.membership`, which is Python's `in` on plain values. A float (a module
constant, a literal, or `/` between plain numbers, which is Python's float division at load time)
is the exact rational of its shortest decimal text in a performance model and in a derived value,
and refused in a constraint or an iterator, directly or through a derived value (`decimals`).

Function bodies are lowered after the whole file has run, so deferred definitions may come in
any order. Settings overrides are applied at the assignment, so module-level `if` on a setting
sees the overridden value, and an explicit override wins over values computed from other settings.
"""
from __future__ import annotations

import ast
import builtins
import functools
import re
import sys
import warnings
from collections.abc import MutableMapping
from pathlib import Path
from types import FunctionType

from solverspace.lang import ir
from solverspace.lang.dag import check_acyclic
from solverspace.lang.decimals import exact_tree, float_node, floats_in, note as decimal_note, refuse as refuse_float
from solverspace.lang.dsl import (
    FLOAT_HINT, MEMBERSHIP, ConstraintDecl, CostDecl, DeclKind, Deferred, DomainObj, LANGUAGE_NAMES,
    SettingDecl, Sym, as_node, make_namespace_functions, membership, values_domain)
from solverspace.core.errors import (
    Location, SettingError, SolverspaceError, SolverspaceNote, SolverspaceWarning, SpaceDefinitionError, check_text,
    did_you_mean)
from solverspace.lang.kinds import ValueKind
from solverspace.lang.evaluate import allow_integers_of_any_length
from solverspace.lang.lint import categorical_typos
from solverspace.lang.lowering import (
    FunctionLowerer, as_domain, balance_chains, bind_arguments, fold_tree, normalise_truth)
from solverspace.lang.model import (
    Constraint, ConstraintKind, Derived, Model, Parameter, ParameterKind, Setting, one_spelling)
from solverspace.core.options import check_kind, check_path, check_settings
from solverspace.core.value_text import integer_refusal, integer_text
from solverspace.core.sources import read_text, space_kind  # read_text: validation imports it from here

CO_GENERATOR = 0x20   # inspect.CO_GENERATOR: a generator function's code flag (inspect itself costs ~3 ms to import)

BUILTIN_SPACES = {"gemm": ("solverspace.gemm", "space.py")}


def resolve_space_path(space: str | Path) -> Path:
    """A built-in space name (`gemm`) or a path to a space file."""
    if isinstance(space, str) and space in BUILTIN_SPACES:
        from importlib.util import find_spec   # not importlib.resources: it imports zipfile (~5 ms a process)
        package, filename = BUILTIN_SPACES[space]
        return Path(find_spec(package).submodule_search_locations[0]) / filename
    path = Path(space)
    if not path.is_file():
        raise SpaceDefinitionError(
            f"space file {str(space)!r} does not exist" if not path.exists() else f"{str(space)!r} is not a file",
            hint=f"give a path to a space file, a T1 .json file or a built-in space name ({', '.join(BUILTIN_SPACES)})")
    return path


def load(space: str | Path, settings: dict | None = None, *, max_closure_values: int = 100_000) -> Model:
    """Load a space file (or a built-in space by name) with optional setting overrides; a
    `.json` path is a T1 tuning-problem file (`solverspace.io.t1.read.load_t1`).

    Returns the `Model` (`Space.load` wraps it with its plan, and answers).

    >>> load("gemm", {"device": "tiny"}).parameter_names[:2]
    ('dim_m', 'dim_n')
    """
    return load_text(*read_space(space), settings, max_closure_values=max_closure_values)


def read_space(space: str | Path) -> tuple[str, str]:
    """(text, file name) of a space file, a T1 `.json` file or a built-in space: what `load` loads
    (`Space` keeps the text: it pickles as its text and settings)."""
    path = resolve_space_path(check_path(space, "space", "gemm"))
    return read_text(path, space_kind(path)), str(path)


def load_text(text: str, filename: str, settings: dict | None = None, *, max_closure_values: int = 100_000) -> Model:
    """A space from the text of the file `filename`: T1 JSON where its name ends in `.json`."""
    settings = check_settings(settings)
    if Path(filename).suffix.lower() == ".json":   # load_t1 refuses settings, naming the file, before reading
        from solverspace.io.t1.read import load_t1, load_t1_text   # only T1 files need it
        return load_t1(filename, settings) if settings else load_t1_text(text, filename)
    return load_source(text, filename, settings, max_closure_values=max_closure_values)


def load_source(source: str, filename: str = "<space>", settings: dict | None = None, *,
                max_closure_values: int = 100_000) -> Model:
    """Load a space from its source text (the tests' and the API's entry point) as a `Model`.

    >>> load_source("x = range(1, 4)\\ny = range(x, 4)").parameter_names
    ('x', 'y')
    """
    check_kind(source, "source", str, "the space file's text (str)", "source='x = range(4)'")
    return _Loader(source, filename, check_settings(settings), max_closure_values).run()


class _Locals(MutableMapping):
    """The module-level namespace: every store goes through `_Loader.bind`."""

    def __init__(self, loader):
        self.loader = loader
        self.store: dict = {}

    def __getitem__(self, name):
        return self.store[name]

    def __setitem__(self, name, value):
        self.loader.bind(name, value)

    def __delitem__(self, name):
        """`del` of a plain value (as `except ... as err` does at the end of its handler) forgets
        it; a parameter, derived value, constraint or setting cannot be deleted. CPython turns
        any error here into a NameError, so the refusal is kept for `run` to raise."""
        loader = self.loader
        if loader.kind_of(name) or name in loader.settings:
            loader.refused_delete = SpaceDefinitionError(
                f"`del {name}`: {name!r} is {loader.kind_of(name) or 'a setting'}, which cannot be deleted",
                where=Location(loader.filename, loader.current_line()), hint="leave it, or choose another name")
        elif name in self.store:
            del self.store[name]
            loader.globals.pop(name, None)
            loader.constants.pop(name, None)
            return
        raise KeyError(name)

    def __iter__(self):
        return iter(self.store)

    def __len__(self):
        return len(self.store)


_COMPILED: dict[tuple[str, str], tuple[list, object]] = {}   # (source, filename) -> (defs, code)


def _compiled(source: str, filename: str) -> tuple[list, object]:
    """The space file's `def` nodes and its code object, parsed and compiled once per process
    (a sweep loads the same file once per combination of settings; neither depends on them, and
    neither is changed by a load: the defs are only read, the code only run)."""
    key = (source, filename)
    if key not in _COMPILED:
        try:
            tree = balance_chains(ast.parse(source, filename=filename))   # long sums: not 1,000 levels deep
        except SyntaxError as exc:
            raise SpaceDefinitionError(f"syntax error: {exc.msg}", where=Location(filename, exc.lineno)) from None
        except (RecursionError, MemoryError):
            raise SpaceDefinitionError("an expression is nested too deeply for Python's parser",
                                       where=Location(filename),
                                       hint="split it into named derived values") from None
        if not source.isascii():
            _check_spellings(tree, source, filename)
        defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        code = compile(ast.fix_missing_locations(_ModuleMembership().visit(tree)), filename, "exec")
        if len(_COMPILED) >= 8:
            _COMPILED.clear()
        _COMPILED[key] = (defs, code)
    return _COMPILED[key]


def _check_spellings(tree: ast.Module, source: str, filename: str) -> None:
    """Refuse a module-level name bound under two spellings that Python reads as one (`ﬁ = ...`
    and later `fi = ...`: NFKC normalisation makes the second a redefinition of the first while
    they look like two names). A use spelled differently from the definition is Python's own
    reading (`require(ﬁ > 1)` for `fi`), as for names given as strings (`model.one_spelling`)."""
    spelled: dict[str, str] = {}
    for node, raw in _module_bindings(tree, source):
        one_spelling(spelled, raw, "the name", where=Location(filename, node.lineno))


def _module_bindings(tree: ast.Module, source: str):
    """(node, spelling as written) of every name bound at module level: assignment targets and
    `def` names; the bodies of functions, classes, lambdas and comprehensions are their own scopes."""
    lines = source.splitlines()
    pending = list(reversed(tree.body))   # a stack: nodes come out in source order
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found = re.search(r"(?:def|class)\s+(\w+)", lines[node.lineno - 1]) if node.lineno <= len(lines) else None
            if found:
                yield node, found.group(1)
            pending.extend(reversed(node.decorator_list))
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node, ast.get_source_segment(source, node) or node.id
        pending.extend(reversed(list(ast.iter_child_nodes(node))))


class _ModuleMembership(ast.NodeTransformer):
    """Module-level `a in b` / `a not in b` -> `membership(a, b, negate)`; function bodies and
    lambdas are left alone (they are lowered from their own AST, or run as Python)."""

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.In, ast.NotIn)):
            return node
        negate = ast.Constant(isinstance(node.ops[0], ast.NotIn))
        call = ast.Call(ast.Name(MEMBERSHIP, ast.Load()), [node.left, node.comparators[0], negate], [])
        return ast.copy_location(call, node)


class _Helper:
    """A plain function of the space file: run as Python on plain values; inlined (lowered like a
    function body) while the file loads when an argument is a parameter, derived value or iterator."""

    def __init__(self, func, inline):
        functools.update_wrapper(self, func)
        self.func = func
        self.inline = inline  # None once loading is over

    def __call__(self, *args, **kwargs):
        if self.inline is not None and any(isinstance(a, (Sym, DomainObj)) for a in (*args, *kwargs.values())):
            return self.inline(self.func, args, kwargs)
        return self.func(*args, **kwargs)


class _Loader:
    def __init__(self, source, filename, overrides, max_closure_values):
        self.source = source
        self.filename = filename
        self.overrides = _python_overrides(overrides)
        self.max_closure_values = max_closure_values
        self.params: dict[str, tuple] = {}      # name -> (ParameterKind, node or Deferred, line)
        self.derived: dict[str, tuple] = {}     # name -> (expr, line)
        self.constraints: list = []             # ConstraintDecl or Deferred, in definition order
        self.costs: list = []                   # CostDecl or Deferred (@cost): at most one
        self.settings: dict[str, Setting] = {}
        self.constants: dict[str, object] = {}  # plain module values
        self.refused_delete: SpaceDefinitionError | None = None  # see _Locals.__delitem__
        self.hidden_count = 0
        self.locals = _Locals(self)
        self.globals: dict = {"__builtins__": builtins, "__name__": "__space__", "__file__": filename}
        self.globals.update(make_namespace_functions(self.current_line, self.constraints, self.costs))
        self.globals[MEMBERSHIP] = membership
        self.helpers: list[_Helper] = []

    # ---------------------------------------------------------------------------------- helpers
    def current_line(self) -> int | None:
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def where(self, line=None):
        return Location(self.filename, line if line is not None else self.current_line())

    def kind_of(self, name):
        if name in self.params:
            return "a parameter"
        if name in self.derived:
            return "a derived value"
        if any(getattr(c, "name", None) == name for c in self.constraints):
            return "a constraint"
        return None

    def store(self, name, value):
        self.locals.store[name] = value
        self.globals[name] = value

    # ------------------------------------------------------------------------------ binding
    def bind(self, name, value):
        line = self.current_line()
        if name.startswith("__") and name.endswith("__"):
            self.store(name, value)
            return
        if isinstance(value, complex):
            raise SpaceDefinitionError(f"{name!r} = {value!r} is a complex number", where=self.where(line),
                                       hint=FLOAT_HINT)
        previous = self.kind_of(name)
        if previous == "a derived value" and type(value) in (int, str, bool, float):
            node = float_node(value, f"{name!r}") if type(value) is float else ir.Const(value)
            self.bind_derived(name, node, line)  # a later assignment, as for expressions
            return
        if previous and not (previous == "a derived value" and isinstance(value, Sym)):
            raise SpaceDefinitionError(f"{name!r} is already {previous}; it cannot be redefined",
                                       where=self.where(line), hint="choose another name")
        if isinstance(value, CostDecl) or isinstance(value, Deferred) and value.kind == DeclKind.COST:
            self.store(name, value)             # recorded by cost(...) itself
        elif isinstance(value, Deferred):
            if value.kind in (DeclKind.ITERATOR, DeclKind.CLOSURE):
                kind = ParameterKind.CLOSURE if value.kind == DeclKind.CLOSURE else ParameterKind.DEFERRED
                self.params[name] = (kind, value, line)
                self.store(name, Sym(ir.Ref(name)))
            else:
                value.name = name
                self.constraints.append(value)
                self.store(name, value)
        elif isinstance(value, DomainObj):
            self.params[name] = (ParameterKind.EXPRESSION, value.node, line)
            self.store(name, Sym(ir.Ref(name)))
        elif isinstance(value, Sym):
            self.bind_derived(name, value.node, line)
        elif isinstance(value, ConstraintDecl):
            value.name = name
            self.store(name, value)
        elif isinstance(value, SettingDecl):
            self.bind_setting(name, value.default, value.choices, value.doc, line)
        elif type(value) in (int, str, bool) and not name.startswith("_"):
            self.bind_setting(name, value, None, None, line)
        elif self.is_helper(value):
            helper = _Helper(value, self.inline_helper)
            self.helpers.append(helper)
            self.constants[name] = helper
            self.store(name, helper)
        else:
            self.constants[name] = value
            self.store(name, value)

    def is_helper(self, value) -> bool:
        """A plain `def` of this space file (not a lambda, not a generator)."""
        return isinstance(value, FunctionType) and value.__code__.co_filename == self.filename \
            and value.__name__ != "<lambda>" and not value.__code__.co_flags & CO_GENERATOR

    def helper_def(self, func) -> ast.FunctionDef:
        for d in self.function_defs:
            if d.name == func.__name__ and d.lineno == func.__code__.co_firstlineno:
                return d
        raise SpaceDefinitionError(f"cannot find the source of helper function {func.__name__!r}",
                                   where=Location(self.filename, func.__code__.co_firstlineno))

    def find_helper(self, name: str) -> ast.FunctionDef | None:
        """The `def` of helper function `name`, for calls in function bodies."""
        value = self.constants.get(name)
        if callable(value) and not isinstance(value, _Helper):
            raise SpaceDefinitionError(f"{name!r} is not a function defined with `def` in the space file, so "
                                       "it cannot be inlined", hint=f"define it as `def {name}(...):` in the space file")
        return self.helper_def(value.func) if isinstance(value, _Helper) else None

    def inline_helper(self, func, args, kwargs):
        """A module-level call of a helper with symbolic arguments: its body, lowered."""
        helper = self.helper_def(func)
        lowerer = FunctionLowerer(helper, self.filename, self.resolve, self.find_helper, (helper.name,))
        bound = bind_arguments(helper, [_argument_node(a) for a in args],
                               {k: _argument_node(v) for k, v in kwargs.items()}, lambda d: lowerer.expr(d, {}))
        if isinstance(bound, str):
            raise SpaceDefinitionError(bound, hint=f"call it as {helper.name}({', '.join(a.arg for a in helper.args.args)})")
        result = fold_tree(lowerer.lower(bound))  # symbolic even where constant, as `x * 0` is
        return DomainObj(result) if isinstance(result, ir.Domain) else Sym(result)

    def bind_setting(self, name, default, choices, doc, line):
        existing = self.settings.get(name)
        if existing is not None:
            if name in self.overrides:  # an explicit value wins over later assignments
                return
            value = default
        elif name in self.overrides:
            value = _coerce_setting(name, self.overrides[name], default, choices, self.where(line))
        else:
            value = default
        if choices is not None and value not in choices:
            raise SettingError(f"setting {name}={value!r} is not one of {list(choices)}", where=self.where(line))
        self.settings[name] = Setting(name, value, default, choices, doc, line)
        self.store(name, value)

    def bind_derived(self, name, node, line):
        if isinstance(node, ir.Ref) and node.name == name:
            return  # `x = x`
        if name in self.derived:
            old_expr, old_line = self.derived.pop(name)
            if self.is_used(name):
                self.hidden_count += 1
                hidden = f"{name}__v{self.hidden_count}"
                self.derived[hidden] = (old_expr, old_line)
                self.rename_everywhere(name, hidden)
                node = ir.substitute(node, {name: ir.Ref(hidden)})
            else:
                node = ir.substitute(node, {name: old_expr})
        self.derived[name] = (node, line)
        self.store(name, Sym(ir.Ref(name)))

    def is_used(self, name) -> bool:
        nodes = [e for e, _ in self.derived.values()]
        nodes += [n for kind, n, _ in self.params.values() if kind == ParameterKind.EXPRESSION]
        nodes += [c.node for c in self.constraints if isinstance(c, ConstraintDecl)]
        nodes += [c.node for c in self.costs if isinstance(c, CostDecl)]
        return any(name in ir.refs(n) for n in nodes)

    def rename_everywhere(self, name, hidden):
        mapping = {name: ir.Ref(hidden)}
        self.derived = {k: (ir.substitute(e, mapping), l) for k, (e, l) in self.derived.items()}
        self.params = {k: (kind, ir.substitute(n, mapping) if kind == ParameterKind.EXPRESSION else n, l)
                       for k, (kind, n, l) in self.params.items()}
        for c in [*self.constraints, *self.costs]:
            if isinstance(c, (ConstraintDecl, CostDecl)):
                c.node = ir.substitute(c.node, mapping)

    # ------------------------------------------------------------------------------ running
    def run(self) -> Model:
        allow_integers_of_any_length()   # a value of 5,000 digits is a value (printed, written, parsed)
        self.function_defs, code = _compiled(self.source, self.filename)
        try:
            exec(code, self.globals, self.locals)  # the space file is a program in our language
        except SolverspaceError as exc:
            if exc.where is None:
                exc.where = Location(self.filename, _traceback_line(exc, self.filename))
                exc.args = (exc.render(),)
            raise
        except NameError as exc:
            if self.refused_delete is not None:
                raise self.refused_delete from None
            known = [*self.locals.store, *LANGUAGE_NAMES]
            hint = did_you_mean(exc.name, known) if getattr(exc, "name", None) else None
            raise SpaceDefinitionError(
                f"unknown name: {exc}", where=Location(self.filename, _traceback_line(exc, self.filename)),
                hint=hint or "module-level code runs top to bottom: define a name before using it, "
                             "or use an @iterator / @require function, which may come in any order") from None
        except (Exception, SystemExit) as exc:  # SystemExit: `sys.exit()` in a space file ends only the load
            raise SpaceDefinitionError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
                                       where=Location(self.filename, _traceback_line(exc, self.filename)),
                                       hint="a space file only defines the space" if isinstance(exc, SystemExit)
                                       else None) from None
        finally:
            for helper in self.helpers:  # from now on (closures) helpers are plain Python
                helper.inline = None
        unknown = sorted(set(self.overrides) - set(self.settings))
        if unknown:
            name = unknown[0]
            raise SettingError(f"unknown setting {name!r} for space {self.filename}",
                               hint=did_you_mean(name, self.settings) or
                               f"settings of this space: {', '.join(self.settings) or '(none)'}")
        return self.build()

    def build(self) -> Model:
        self.carriers = self.float_carriers()
        parameters = [self.build_parameter(name, *spec) for name, spec in self.params.items()]
        derived = [Derived(name, fold_tree(exact_tree(expr)), line) for name, (expr, line) in self.derived.items()]
        constraints, seen = [], set()
        for c in self.constraints:
            constraint = self.build_constraint(c)
            if constraint.name in seen:
                raise SpaceDefinitionError(f"constraint {constraint.name!r} is defined twice",
                                           where=Location(self.filename, constraint.line))
            seen.add(constraint.name)
            constraints.append(constraint)
        closure_globals = {**self.constants, **{s.name: s.value for s in self.settings.values()}}
        cost, cost_floats = self.build_cost()
        model = Model(self.filename, tuple(parameters), tuple(derived), tuple(constraints),
                      tuple(self.settings.values()), tuple(closure_globals.items()), self.max_closure_values,
                      cost=cost)
        if not model.parameters:
            raise SpaceDefinitionError("the space defines no parameters", where=Location(self.filename),
                                       hint="define at least one iterator, e.g. `x = range(1, 9)`")
        _check_texts(model)
        check_acyclic(model)
        model = normalise_truth(model)   # Python's truth and and/or values, explicit for every backend
        model.kinds.check()
        if model.cost is not None and model.kinds.expr(model.cost) in (ValueKind.STR, ValueKind.ORDER):
            raise SpaceDefinitionError("cost(...) must be a number (a lower bound on the run time), "
                                       "not a categorical value or an order",
                                       where=Location(self.filename, self.costs[0].line))
        for message in categorical_typos(model):
            warnings.warn(message, SolverspaceWarning, stacklevel=2)
        read = decimal_note([*cost_floats, *(v for e, _ in self.derived.values() for v in floats_in(e))],
                            self.filename)
        if read:
            warnings.warn(read, SolverspaceNote, stacklevel=2)
        return model

    # ------------------------------------------------------------------------------ floats
    def float_carriers(self) -> dict[str, float]:
        """Derived values that hold a float, directly or through another derived value: name ->
        the first such float."""
        carriers = {name: found[0] for name, (expr, _) in self.derived.items() if (found := floats_in(expr))}
        grew = True
        while grew:   # through other derived values (a cycle is refused later, by check_acyclic)
            grew = False
            for name, (expr, _) in self.derived.items():
                via = None if name in carriers else next(
                    (n.name for n in ir.walk(expr) if isinstance(n, ir.Ref) and n.name in carriers), None)
                if via is not None:
                    carriers[name], grew = carriers[via], True
        return carriers

    def refuse_floats(self, tree: ir.Node, what: str, line: int | None) -> None:
        """A float in a constraint or an iterator (validity stays exact), or a derived value there
        that holds one, is refused, naming it."""
        where = Location(self.filename, line)
        found = floats_in(tree)
        if found:
            raise refuse_float(found[0], what, where)
        for node in ir.walk(tree):
            if isinstance(node, ir.Ref) and node.name in self.carriers:
                raise refuse_float(self.carriers[node.name], what, where, through=node.name)

    def build_parameter(self, name, kind, spec, line) -> Parameter:
        if kind == ParameterKind.EXPRESSION:
            self.refuse_floats(spec, f"iterator {name!r}", line)
            return Parameter(name, fold_tree(spec), kind, line)
        func_def = self.find_def(spec)
        if kind == ParameterKind.CLOSURE:
            deps = self.closure_dependencies(func_def)
            self.refuse_floats(ir.Values(tuple(ir.Ref(d) for d in deps)), f"iterator {name!r}", line)
            return Parameter(name, ir.Closure(name, spec.func, deps, line), ParameterKind.CLOSURE, line)
        lowered = FunctionLowerer(func_def, self.filename, self.resolve, self.find_helper).lower()
        self.refuse_floats(lowered, f"iterator {name!r}", line)
        return Parameter(name, fold_tree(as_domain(lowered)), ParameterKind.DEFERRED, line)

    def build_constraint(self, c) -> Constraint:
        if isinstance(c, ConstraintDecl):
            name = c.name or f"{'reject_if' if c.rejects else 'require'}_line{c.line}"
            self.refuse_floats(c.node, f"constraint {name!r}", c.line)
            return Constraint(name, fold_tree(c.node), c.rejects, ConstraintKind.EXPRESSION, c.line)
        func_def = self.find_def(c)
        lowered = FunctionLowerer(func_def, self.filename, self.resolve, self.find_helper).lower()
        if isinstance(lowered, ir.Domain):
            raise SpaceDefinitionError(f"@{c.kind} function {c.name!r} returns an iterator, not a condition",
                                       where=Location(self.filename, c.line))
        self.refuse_floats(lowered, f"constraint {c.name!r}", c.line)
        return Constraint(c.name, fold_tree(lowered), c.kind == DeclKind.REJECT_IF, ConstraintKind.FUNCTION, c.line)

    def build_cost(self) -> tuple[ir.Expr | None, list[float]]:
        """The declared performance model (an IR expression, its floats exact) or None, at most one
        per space; and the floats it was written with."""
        if not self.costs:
            return None, []
        if len(self.costs) > 1:
            lines = " and ".join(str(c.line) for c in self.costs)
            raise SpaceDefinitionError(f"cost(...) is declared more than once (lines {lines})",
                                       where=Location(self.filename, self.costs[1].line),
                                       hint="a space has one performance model; combine the terms, e.g. max(a, b) + c")
        decl = self.costs[0]
        if isinstance(decl, CostDecl):
            lowered = decl.node
        else:
            lowered = FunctionLowerer(self.find_def(decl), self.filename, self.resolve, self.find_helper).lower()
        if isinstance(lowered, ir.Domain):
            raise SpaceDefinitionError(f"@cost function {decl.name!r} returns an iterator, not a number",
                                       where=Location(self.filename, decl.line))
        return fold_tree(exact_tree(lowered)), floats_in(lowered)

    def find_def(self, deferred: Deferred) -> ast.FunctionDef:
        candidates = [d for d in self.function_defs if d.name == deferred.func.__name__]
        for d in candidates:
            if deferred.line in (d.lineno, *(dec.lineno for dec in d.decorator_list)):
                return d
        if len(candidates) == 1:
            return candidates[0]
        raise SpaceDefinitionError(f"cannot find the source of function {deferred.func.__name__!r}",
                                   where=Location(self.filename, deferred.line))

    def resolve(self, name: str, line: int) -> ir.Node:
        """What a free name in a function body means."""
        if name in self.params or name in self.derived:
            return ir.Ref(name)
        if name in self.settings:
            return ir.Const(self.settings[name].value)
        value = self.constants.get(name)
        if type(value) in (int, str, bool):
            return ir.Const(value)
        if type(value) is float:   # exact in a performance model, refused in a constraint (`decimals`)
            return float_node(value, f"{name!r}")
        if isinstance(value, (list, tuple)) and all(type(v) in (int, str, bool) for v in value):
            return ir.Values(tuple(ir.Const(v) for v in value))  # a module-level value list
        if any(getattr(c, "name", None) == name for c in self.constraints):
            raise SpaceDefinitionError(f"constraint {name!r} is used as a value", where=Location(self.filename, line),
                                       hint="constraints are not values; use a derived value for shared logic")
        if name in self.constants:
            raise SpaceDefinitionError(
                f"{name!r} is a module constant of type {type(value).__name__} that a function body cannot use",
                where=Location(self.filename, line),
                hint="bodies use parameters, derived values, settings, int/str constants and lists or tuples of them")
        known = [*self.params, *self.derived, *self.settings]
        raise SpaceDefinitionError(
            f"unknown name {name!r}", where=Location(self.filename, line),
            hint=did_you_mean(name, known) or "names in function bodies must be parameters, derived values, "
                                              "settings or integer/string constants of the space")

    def closure_dependencies(self, func_def: ast.FunctionDef) -> tuple[str, ...]:
        """Parameters and derived values a generator reads: its arguments and free names."""
        local = {a.arg for a in func_def.args.args}
        stored = {n.id for n in ast.walk(func_def) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        deps = []
        for arg in func_def.args.args:
            if arg.arg in self.params or arg.arg in self.derived:
                deps.append(arg.arg)
            elif arg.arg not in self.settings and arg.arg not in self.constants:
                self.resolve(arg.arg, func_def.lineno)  # raises a did-you-mean error
        for n in ast.walk(func_def):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local | stored \
                    and (n.id in self.params or n.id in self.derived) and n.id not in deps:
                deps.append(n.id)
        return tuple(deps)


def _check_texts(model: Model) -> None:
    """Every string of the space is a value of the language (`errors.check_text`: no NUL), named
    by the parameter, derived value or constraint that holds it."""
    items = [("parameter", p.name, p.domain, p.line) for p in model.parameters]
    items += [("derived value", d.name, d.expr, d.line) for d in model.derived]
    items += [("constraint", c.name, c.expr, c.line) for c in model.constraints]
    items += [("cost(...)", "", model.cost, None)] if model.cost is not None else []
    for what, name, tree, line in items:
        for node in ir.walk(tree):
            if isinstance(node, ir.Const) and type(node.value) is str:
                check_text(node.value, f"{what} {name!r}" if name else what, where=Location(model.source, line))


def _argument_node(value) -> ir.Node:
    """A module-level argument of an inlined helper call, as IR."""
    if isinstance(value, DomainObj):
        return value.node
    if isinstance(value, (list, tuple)):
        return values_domain(value)
    return as_node(value, "a helper function's argument")


def _python_overrides(overrides: dict) -> dict:
    """Setting overrides keyed by the name as Python reads it (`--set ﬁ=3` sets `fi`); two
    spellings of one setting are refused, both named."""
    spelled: dict[str, str] = {}
    return {one_spelling(spelled, name, "setting", error=SettingError) if isinstance(name, str) else name: value
            for name, value in overrides.items()}


#: The words a boolean setting takes besides 1 and 0.
BOOL_WORDS = {"true": True, "false": False, "True": True, "False": False}


def _coerce_setting(name, raw, default, choices, where):
    """Turn an override (often a command-line string) into the setting's type."""
    value = raw
    if isinstance(raw, str) and type(default) in (int, bool):   # text: the rule of core.value_text
        if type(default) is bool and raw in BOOL_WORDS:
            value = BOOL_WORDS[raw]
        else:
            value = integer_text(raw)
            if type(default) is bool:
                if value not in (0, 1):
                    raise SettingError(f"setting {name}={raw!r}: expected true, false, 1 or 0 (the default is "
                                       f"{default!r})", where=where, hint=f"e.g. --set {name}=true")
                value = bool(value)
            elif value is None:
                message, hint = integer_refusal(f"setting {name}={raw!r}: expected an integer (the default is "
                                                f"{default!r})", raw, f"{name}={default}")
                raise SettingError(message, where=where, hint=hint)
    elif type(raw) is not type(default) and not (type(default) is int and type(raw) is bool):
        if type(default) is str:
            value = str(raw)
        else:
            raise SettingError(f"setting {name}={raw!r}: expected {type(default).__name__} like the default {default!r}",
                               where=where)
    if choices is not None and value not in choices:
        raise SettingError(f"setting {name}={raw!r} is not one of the allowed values {list(choices)}",
                           where=where, hint=did_you_mean(str(raw), [str(c) for c in choices]))
    return value


def _traceback_line(exc: BaseException, filename: str) -> int | None:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
