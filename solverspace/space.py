"""`Space`: the Python API facade over load -> model -> plan -> backend."""
from __future__ import annotations

import numbers
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from solverspace.registry.backends import backends_with, get_backend
from solverspace.lang.dag import DAG
from solverspace.core.errors import ArgumentTypeError, SpaceDefinitionError, did_you_mean
from solverspace.io.loader import load_source, load_text, read_space
from solverspace.lang.model import Model, one_spelling
from solverspace.core.options import check_kind, check_path, check_seed, check_separator, check_whole
from solverspace.analysis.plan import Plan, make_plan
from solverspace.core.results import Stats
from solverspace.scale.sweep import sweep

if TYPE_CHECKING:
    from solverspace.analysis.check import CheckResult


#: Where C refuses a space: positions (`get`, `space[i]`, `index`, `len`, designs, repair) are those of
#: the C enumerator's order, and the reference answers the rest.
POSITIONS_HINT = ("positions (`get`, space[i], space.index, len(space), design, repair) are those of the C "
                  "enumerator's order, so a space that C refuses has none; the reference counts, lists and "
                  "samples it: `count --backend reference`, `enumerate --backend reference -o FILE`, "
                  "`sample --method reference` (space.count('reference'), space.rows('reference'))")


def _backend(backend, capability: str, **options):
    """`get_backend`, refusing by name what is neither a backend's name nor a backend object."""
    if not isinstance(backend, str) and not hasattr(backend, "name"):
        raise ArgumentTypeError(f"backend={backend!r}: expected a backend name "
                                f"({', '.join(backends_with(capability))}) or a backend object, "
                                f"not {type(backend).__name__}", hint="e.g. backend='c'")
    return get_backend(backend, capability, **options)


def _reloaded(kind: str, text: str, filename: str, settings: dict, options: dict) -> "Space":
    """A pickled Space, loaded again from its text (`Space.__reduce__`)."""
    build = Space._from_text if kind == "file" else Space.from_source
    return build(text, settings, filename, **options)


class Space:
    """A loaded space with its plan.

    A Space pickles as what it was loaded from: the text of its file (read when it was loaded)
    or source, its file name, the setting overrides and load options; unpickling loads that text
    again (so it runs the space file's code, as loading does). A Space built directly from a
    `Model` (`Space(model, plan)`) has no text and is refused with a message.

    >>> space = Space.from_source("x = range(1, 5)\\ny = range(x, 5)\\nrequire(x + y < 6)")
    >>> space.count()
    6
    >>> list(space.rows())
    [(1, 1), (1, 2), (1, 3), (1, 4), (2, 2), (2, 3)]
    """

    def __init__(self, model: Model, plan: Plan | None = None):
        self.model = model
        self.plan = plan or make_plan(model)
        self._origin: tuple | None = None   # (kind, text, file name, settings, options): what pickles

    @classmethod
    def load(cls, space: str | Path, settings: dict | None = None, **options) -> "Space":
        """Load a space file or a built-in space (`"gemm"`), with setting overrides."""
        text, filename = read_space(space)
        return cls._from_text(text, settings, filename, **options)

    @classmethod
    def _from_text(cls, text: str, settings: dict | None, filename: str, **options) -> "Space":
        """A space from the text of the file `filename` (`Space.load` once the file is read)."""
        return cls(load_text(text, filename, settings, **options))._remember("file", text, filename, settings, options)

    def _remember(self, kind: str, text: str, filename: str, settings, options: dict) -> "Space":
        self._origin = (kind, text, filename, dict(settings or {}), dict(options))
        return self

    def __reduce__(self):
        if self._origin is None:
            raise ArgumentTypeError("cannot pickle this Space: it was built from a Model (Space(model, plan)), "
                                    "not loaded from a file or source text, so there is no text to load again",
                                    hint="pickle a Space made by Space.load(path) or Space.from_source(text), "
                                         "or pickle the path and settings yourself")
        return _reloaded, self._origin

    @classmethod
    def sweep(cls, space: str | Path, grid: dict, backend="auto", *, base: dict | None = None,
              max_closure_values: int = 100_000, strict: bool = False, **options):
        """Count a space file for every combination of setting values (`solverspace.scale.sweep`):
        `Space.sweep("gemm", {"device": ["k40c", "v100"], "precision": ["single", "double"]})`
        yields a `SweepPoint` (settings, count, undefined, exact, seconds, backend, method) per
        combination; `one_pass=False` counts every combination on its own."""
        return sweep(lambda settings: cls.load(space, settings, max_closure_values=max_closure_values), grid,
                     backend, base=base, strict=strict, **options)

    @classmethod
    def from_source(cls, source: str, settings: dict | None = None, filename: str = "<space>", **options) -> "Space":
        """A space from the text of a space file (`filename` names it in messages), with setting
        overrides, as `Space.load` reads a file.

        >>> Space.from_source("N = 4\\nx = range(1, N)", {"N": 6}).count()
        5
        """
        return cls(load_source(source, filename, settings, **options))._remember("source", source, filename, settings,
                                                                                  options)

    # ------------------------------------------------------------------------------ facts
    @property
    def parameters(self) -> tuple[str, ...]:
        return self.model.parameter_names

    @property
    def settings(self) -> dict:
        return {s.name: s.value for s in self.model.settings}

    @property
    def dag(self) -> DAG:
        return self.model.analysis.dag

    def columns(self, with_derived=()) -> tuple[str, ...]:
        """The columns of a listing: the parameters in definition order, then `with_derived`.

        >>> Space.from_source("x = range(1, 4)\\ny = x * 2").columns(("y",))
        ('x', 'y')
        """
        return self.parameters + tuple(self._check_derived(with_derived))

    def _check_derived(self, names):
        if isinstance(names, str) or not isinstance(names, Iterable):
            raise ArgumentTypeError(f"with_derived={names!r}: expected a sequence of derived value names, "
                                    f"not {type(names).__name__}",
                                    hint=f"e.g. with_derived=({names if isinstance(names, str) else 'name'!r},)")
        for name in names:
            check_kind(name, "with_derived", str, "derived value names (str)", "with_derived=('name',)")
            if name not in self.model.derived_value:
                raise SpaceDefinitionError(f"{name!r} is not a derived value of this space",
                                           hint=did_you_mean(name, self.model.derived_value))
        return tuple(names)

    @property
    def literal_plan(self) -> Plan:
        """The plan over the space as written: the same loop order, every domain as written, every
        constraint a test (`plan` may hold domains the constraints narrowed and tabulated,
        `solverspace.analysis.structure`). What names rules (`check`, `complete`) or measures
        them (`funnel`) reads this one, so it names the user's rules and domains."""
        if self.plan.model is self.model:
            return self.plan
        if getattr(self, "_literal_plan", None) is None:
            self._literal_plan = make_plan(self.model, list(self.plan.order), structured=False)
        return self._literal_plan

    # ------------------------------------------------------------------------------ answers
    # Every answer: `get_backend(name, capability, **options)` from the one registry
    # (solverspace.registry.backends), then the backend's method for that capability.
    def stats(self, backend="reference", *, strict: bool = False,
              progress: Callable[[int, int], None] | None = None, **options) -> Stats:
        """Count valid configurations, with the undefined-operation tally (`Stats`). `backend` is a
        name or a backend object, as `solverspace count --backend`: "reference" (the default: the
        ground truth; the command line's default is "auto"), "auto" (the reference for a small space,
        the compiled enumerator when it is built or the space is big), "c", "cpsat"; `options`
        configure it (e.g. threads=).

        >>> stats = Space.from_source("x = range(1, 5)\\ny = range(1, 5)\\nrequire(x // (y - 2) > 0)").stats()
        >>> stats.count, stats.undefined   # y == 2 divides by zero: 4 configurations are undefined
        (7, 4)
        """
        return _backend(backend, "count", **options).count(self.plan, strict=strict, progress=progress)

    def count(self, backend="reference", *, strict: bool = False, **options) -> int:
        """The exact number of valid configurations, as `solverspace count SPACE` prints it.

        `backend` picks who counts, as `--backend` does: "reference" (the default here: pure Python,
        the ground truth; slow on big spaces), "auto" (the command line's default: the reference for
        a small space, the compiled enumerator for a big one or one already built), "c" (compiled
        C/OpenMP) or "cpsat" (counts without listing); or a backend
        object. `strict=True` makes an undefined operation (a division by zero) an error instead of
        an invalid configuration; `options` go to the backend (`threads=2`, `time_limit=10.0`).
        `stats()` gives the count with the undefined-operation tally.

        >>> space = Space.from_source("x = range(1, 5)\\ny = range(x, 5)\\nrequire(x + y < 6)")
        >>> space.count()
        6
        >>> space.count("auto")
        6
        """
        return self.stats(backend, strict=strict, **options).count

    def rows(self, backend="reference", *, strict: bool = False, with_derived=(),
             progress: Callable[[int, int], None] | None = None, **options) -> Iterator[tuple]:
        """Valid configurations, parameter values in definition order (plus derived columns), in
        the plan's loop order; `backend` as in `count` ("reference" by default).

        >>> list(Space.from_source("x = range(1, 4)\\ny = range(x, 3)").rows())
        [(1, 1), (1, 2), (2, 2)]
        """
        return _backend(backend, "list", **options).rows(self.plan, strict=strict,
                                                            with_derived=self._check_derived(with_derived),
                                                            progress=progress)

    def to_array(self, backend="c", *, strict: bool = False, with_derived=(), progress=None, **options):
        """All valid configurations as a NumPy structured array (one field per column, the
        smallest integer type that holds its proven range; categorical columns as strings);
        `backend` as in `count` ("c" by default).

        >>> Space.from_source("x = range(1, 4)\\ny = range(x, 3)").to_array()["y"].tolist()
        [1, 2, 2]
        """
        return _backend(backend, "list", **options).array(self.plan, strict=strict,
                                                             with_derived=self._check_derived(with_derived),
                                                             progress=progress)

    def to_frame(self, backend="c", **kwargs):
        """All valid configurations as a pandas DataFrame (needs pandas; `to_array` otherwise)."""
        try:
            import pandas
        except ImportError:
            raise SpaceDefinitionError("to_frame needs pandas",
                                       hint="pip install pandas, or use to_array() for a NumPy structured array") from None
        return pandas.DataFrame(self.to_array(backend, **kwargs))

    def approximate_count(self, epsilon: float = 0.8, delta: float = 0.2, *, seed: int = 0, backend="cpsat",
                          **options):
        """An estimate within a factor 1 + epsilon with probability 1 - delta (ApproxMC2)."""
        for name, value in (("epsilon", epsilon), ("delta", delta)):
            check_kind(value, name, numbers.Real, "a number", f"{name}=0.5")
        return _backend(backend, "approximate", **options).approximate_count(self.plan, epsilon, delta, seed=seed)

    # ------------------------------------------------------------------------------ sampling
    def sample(self, n: int, seed: int = 0, *, replace: bool = False, method: str = "exact", threads=None,
               given=None):
        """n valid configurations drawn uniformly at random (distinct unless `replace`), as a
        structured array; identical for the same seed whatever the thread count. `given`: a partial
        assignment {parameter: value}; the draw is then uniform over the valid configurations that
        agree with it (`solverspace.moves.designs.sample_given`; none: an error saying why)."""
        return self.draw(n, seed, replace=replace, method=method, threads=threads, given=given)[0]

    def draw(self, n: int, seed: int = 0, *, replace: bool = False, method: str = "exact", threads=None,
             progress=None, given=None):
        """`sample` with what reproduces it: (structured array, `sampling.SampleInfo`)."""
        from solverspace.scale.sampling import sample
        n = check_whole(n, "n", "a whole number of configurations")
        if given is not None:
            from solverspace.moves.designs import sample_given
            return sample_given(self, n, seed, given, replace=replace, method=method, threads=threads)
        return sample(self.plan, n, seed, replace=replace, method=method, threads=threads, progress=progress)

    def __len__(self) -> int:
        size = self.position_index().size()
        if size > sys.maxsize:  # len() must fit in a C ssize_t
            raise OverflowError(f"the space has {size} configurations, more than len() can return; "
                                f"space.count('c') gives the exact count")
        return size

    def __getitem__(self, position: int) -> tuple:
        """The configuration at `position` of the canonical (C enumerator) order."""
        position = check_whole(position, "position", "a whole number (a position of the canonical order)")
        size = self.position_index().size()
        if position < 0:
            position += size
        if not 0 <= position < size:
            raise IndexError(f"configuration index {position} out of range: the space has {size} configurations")
        return tuple(self.position_index().rows_at([position])[0].tolist())

    def index(self, config) -> int:
        """Position of a valid configuration (dict or tuple in column order) in the canonical order."""
        check_kind(config, "config", (Mapping, tuple, list), "a dict {parameter: value} or a tuple in column order",
                   f"config={dict.fromkeys(self.parameters, 1)!r}")
        if isinstance(config, Mapping):   # names as Python reads them (`ﬁ` is `fi`), one spelling each
            spelled: dict = {}
            values = {one_spelling(spelled, name, "parameter"): value for name, value in config.items()}
        else:
            values = dict(zip(self.parameters, config))
        missing = [p for p in self.parameters if p not in values]
        if missing:
            raise SpaceDefinitionError(f"configuration lacks parameters {missing}")
        position = self.position_index().index(values)
        if position is None:
            raise ValueError(f"{values} is not a valid configuration of this space")
        return position

    def position_index(self):
        """The engine behind `space[i]`, `index` and `len`: the C enumerator's positions (by independent
        groups where that pays), made once. Where C refuses the space, its refusal with a hint that
        says what positions are and what answers instead (C's own hint names options `get` lacks)."""
        if getattr(self, "_cached_positions", None) is None:
            from solverspace.translators.errors import UnsupportedConstruct
            try:
                self._cached_positions = get_backend("c", "positions").positions(self.plan)
            except UnsupportedConstruct as refusal:
                refusal.hint = POSITIONS_HINT
                refusal.args = (refusal.render(),)
                raise
        return self._cached_positions

    # ------------------------------------------------------------------------------ moves: value lists
    def value_lists(self) -> dict[str, tuple]:
        """Each parameter's value list: the superset domain `export-t1` writes, numbers ascending,
        strings and orders in `best`'s tie order (`solverspace.moves.value_lists`)."""
        return dict(zip(self.parameters, self._moves().param_index().lists))

    def param_indices(self, config) -> tuple[int, ...]:
        """The positions of a configuration's values (dict or tuple in column order) in the value
        lists; a value in no value list is an error naming it."""
        return self._moves().param_index().indices(self._configuration(config))

    def from_param_indices(self, indices) -> tuple:
        """The configuration of values at a point of the index box (not checked for validity)."""
        check_kind(indices, "indices", (tuple, list), "a tuple of parameter indices in column order",
                   f"indices={(0,) * len(self.parameters)!r}")
        return self._moves().param_index().values(tuple(indices))

    def is_valid(self, config) -> bool:
        """Whether a full configuration (dict or tuple in column order) is valid: `check`'s answer,
        through the reference's compiled levels (`solverspace.analysis.config_check`)."""
        return self._moves().checker().valid(self._configuration(config))

    def _configuration(self, config) -> tuple:
        """A full configuration as a tuple in column order (names as Python reads them)."""
        check_kind(config, "config", (Mapping, tuple, list), "a dict {parameter: value} or a tuple in column order",
                   f"config={dict.fromkeys(self.parameters, 1)!r}")
        if isinstance(config, Mapping):
            spelled: dict = {}
            values = {one_spelling(spelled, name, "parameter"): value for name, value in config.items()}
            unknown = [name for name in values if name not in self.model.parameter]
            if unknown:
                raise SpaceDefinitionError(f"{unknown[0]!r} is not a parameter of this space",
                                           hint=did_you_mean(unknown[0], self.parameters))
            missing = [p for p in self.parameters if p not in values]
            if missing:
                raise SpaceDefinitionError(f"configuration lacks parameters {missing}",
                                           hint="give every parameter a value")
            return tuple(values[p] for p in self.parameters)
        if len(config) != len(self.parameters):
            raise SpaceDefinitionError(f"configuration has {len(config)} values; the space has "
                                       f"{len(self.parameters)} parameters ({', '.join(self.parameters)})")
        return tuple(config)

    # ------------------------------------------------------------------------------ moves: neighbours
    def neighbors(self, config, method: str = "Hamming") -> list[tuple]:
        """The valid neighbours of a valid configuration by one of Kernel Tuner's methods
        ("strictly-adjacent", "adjacent", "Hamming", "Hamming-adjacent", "closest-param-indices":
        README "Search moves"), sorted by parameter indices, the configuration itself excluded;
        found by walks of the plan's loops, never a scan of the space."""
        return self._moves().neighbors().neighbors(self._configuration(config), method)

    def count_neighbors(self, config, method: str = "Hamming") -> int:
        """The number of valid neighbours (`neighbors`)."""
        return self._moves().neighbors().count(self._configuration(config), method)

    def random_neighbor(self, config, method: str = "Hamming", seed: int = 0) -> tuple | None:
        """One valid neighbour drawn uniformly (seeded), or None when there is none."""
        seed = check_seed(seed)
        return self._moves().neighbors().random(self._configuration(config), method, seed)

    # ------------------------------------------------------------------------------ moves: designs, repair
    def from_unit(self, point) -> tuple:
        """The valid configuration at a point of [0, 1)^D (one coordinate per parameter, column
        order) by conditional quantiles: parameter by parameter in plan order, the value whose
        cumulative count of valid completions covers the coordinate (`solverspace.moves.designs`); a
        uniform random point gives an exactly uniform valid configuration."""
        return self._moves().quantiles().from_unit(point)

    def from_unit_many(self, points):
        """`from_unit` of each row of an (n, D) array, as a structured array (`sample`'s dtype)."""
        return self._moves().quantiles().from_unit_many(points)

    def design(self, n: int, method: str = "lhs", seed: int = 0):
        """A space-filling design of n valid configurations: `lhs` (Latin hypercube), `sobol`
        (scrambled Sobol) or `random` points of the unit cube (SciPy's `scipy.stats.qmc`), seeded,
        mapped by conditional quantiles (`from_unit`); a structured array (`sample`'s dtype)."""
        from solverspace.moves.designs import unit_design
        quantiles = self._moves().quantiles()
        return quantiles.from_unit_many(unit_design(n, len(self.parameters), method, seed))

    def repair(self, point=None, *, indices=None) -> tuple:
        """The valid configuration nearest to `point` (a configuration of values from the value
        lists, dict or tuple, need not be valid) or to `indices` (parameter indices): the smallest
        L1 distance in parameter indices, exactly (branch and bound, `solverspace.moves.repair`; ties: the
        smallest (|i - t|, i) per parameter in plan order). An empty space is an error."""
        return self._repaired(point, indices)[0]

    def repair_distance(self, point=None, *, indices=None) -> int:
        """The L1 distance in parameter indices from `point` (or `indices`) to its `repair`."""
        return self._repaired(point, indices)[1]

    def _repaired(self, point, indices) -> tuple[tuple, int]:
        if (point is None) == (indices is None):
            raise ArgumentTypeError("repair takes a configuration or indices=, exactly one of them",
                                    hint=f"space.repair({dict.fromkeys(self.parameters[:2], 1)!r}) or "
                                         f"space.repair(indices={(0,) * len(self.parameters)!r})")
        if indices is not None:
            self.from_param_indices(indices)     # checked: one whole number per parameter, in range
            target = tuple(int(i) for i in indices)
        else:
            target = self.param_indices(point)
        return self._moves().repaired(target)

    def _moves(self):
        """The engines of this space's moves (`solverspace.moves.engine.Moves`): they choose compiled or
        reference, once."""
        if getattr(self, "_cached_moves", None) is None:
            from solverspace.moves.engine import Moves
            self._cached_moves = Moves(self)
        return self._cached_moves

    # ------------------------------------------------------------------------------ files
    def write(self, path: str | Path, backend="reference", *, fmt: str | None = None, strict: bool = False,
              with_derived=(), progress=None, sep: str = ",", **options) -> int:
        """Write every valid configuration to CSV (header + rows), JSON Lines (`.jsonl`: one
        object per row), `.npy` or Parquet (`.parquet`, needs the `parquet` extra); the format
        comes from the file's extension (anything else is CSV) unless `fmt` is given. The file
        appears only when complete; `-` is standard output (CSV or JSON Lines). As
        `solverspace enumerate SPACE -o PATH`; `backend` as in `count` ("reference" by default).
        Returns how many configurations were written.

        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "xy.csv"
        >>> Space.from_source("x = range(1, 4)\\ny = range(x, 3)").write(path)
        3
        >>> path.read_text().splitlines()
        ['x,y', '1,1', '1,2', '2,2']
        """
        from solverspace.core.formats import FORMATS, check_stream_format, format_of   # only where a file is written
        path = self._output(path)
        if fmt is not None:
            check_kind(fmt, "fmt", str, "a format name (str)", "fmt='csv'")
        fmt = fmt or format_of(path)
        if fmt not in FORMATS.values():
            raise SpaceDefinitionError(f"unknown output format {fmt!r}",
                                       hint=f"formats: {', '.join(sorted(set(FORMATS.values())))}")
        check_stream_format(path, fmt)
        check_separator(sep)
        chosen = _backend(backend, "write", **options)
        return chosen.write(self.plan, path, fmt, strict=strict, with_derived=self._check_derived(with_derived),
                            progress=progress, sep=sep)

    def write_csv(self, path: str | Path, backend="reference", *, strict: bool = False,
                  with_derived=(), progress=None, sep: str = ",", **options) -> int:
        """Write a header and one row per configuration, row by row from `rows()`; the file
        appears only when complete; `-` is standard output."""
        from solverspace.core.formats import write_rows
        path = self._output(path)
        check_separator(sep)
        rows = self.rows(backend, strict=strict, with_derived=with_derived, progress=progress, **options)
        return write_rows(path, self.columns(with_derived), rows, "csv", sep)

    def _check_assignment(self, assignment) -> None:
        check_kind(assignment, "assignment", Mapping, "a dict {parameter: value}",
                   f"assignment={dict.fromkeys(self.parameters[:2], 1)!r}")

    def _output(self, path) -> Path:
        """An output path that can be written and is not this space's own file."""
        # core.output (shutil, tempfile, bz2, lzma: milliseconds a process) only where a file is written
        from solverspace.core.output import check_not_input, check_output_path
        path = check_output_path(check_path(path))
        check_not_input(path, self.model.source, option="path")
        return path

    # ------------------------------------------------------------------------------ analysis
    def check(self, assignment: dict) -> CheckResult:
        """Validity of a full assignment with every rejecting rule, or a completion of a partial one."""
        self._check_assignment(assignment)
        return get_backend("reference", "check").check(self.literal_plan, assignment)

    def complete(self, assignment: dict, backend="cpsat", **options):
        """A valid completion of a partial assignment, or (CP-SAT) a minimal set of rules that
        together rule it out."""
        self._check_assignment(assignment)
        return _backend(backend, "check", **options).complete(self.literal_plan, assignment)

    def best(self, objective: str | None = None, *, maximize: bool | None = None, top: int = 10, backend="bnb",
             progress=None, **options):
        """The `top` best distinct configurations by `objective` (an expression of the space's names),
        as `solverspace best`: a `BestResult` whose `ranked` lists (rank, exact objective,
        configuration), ties in the one tie order of every engine. Without `objective`, the
        space's declared `cost(...)`, minimised (as `best` without `--minimize`/`--maximize`);
        a given objective is maximised unless `maximize=False`. `backend`: a search engine (`bnb`,
        the default, and `exhaustive`: compiled C; `bnb-reference`, `exhaustive-reference`:
        Python; `cpsat`). `progress(done, total)`: told as the search goes (C engines: work
        units; the Python walks: the outermost loop's values; cpsat: configurations ranked out of
        `top`).

        >>> space = Space.from_source("x = range(1, 5)\\ny = range(1, 5)\\ncost(x / 2 + 4 / y)")
        >>> [(str(r.objective), r.configuration) for r in space.best(top=2, backend="bnb-reference").ranked]
        [('3/2', {'x': 1, 'y': 4}), ('11/6', {'x': 1, 'y': 3})]
        >>> space.best("x - y", top=1, backend="bnb-reference").ranked[0].configuration
        {'x': 4, 'y': 1}
        """
        if objective is None:
            from solverspace.analysis.objective import model_or_declared
            _, objective = model_or_declared(self.model, None, "objective")
            maximize = bool(maximize)
        elif maximize is None:
            maximize = True
        check_kind(objective, "objective", str, "an expression of the space's names (str)", "objective='x * y'")
        top = check_whole(top, "top", "a whole number of configurations")
        return _backend(backend, "best", **options).best(self.plan, objective, maximize=maximize, top=top,
                                                             progress=progress)

    def tune(self, measure, bound: str | None = None, *, top: int = 1, max_measurements: int | None = None,
             time_limit: float | None = None, repeat: int = 1, aggregate: str = "min", db=None,
             timeout: float | None = None, progress=None, sinks=()):
        """Measured search (`solverspace.analysis.tune`): the fastest configuration by `measure` (a callable
        configuration -> seconds, or a shell command template "./bench {dim_m} ..."), measuring only
        what the lower bound `bound` (a model in the space language; None: the space's declared
        cost) cannot rule out. Returns a `TuneResult` (best, time, proven, gap, ...). `db`: the
        SQLite file of measurements (default `<space stem>.tune.sqlite` next to the space file, in
        the current directory for a built-in space, none for a space given as text). `sinks`: objects
        with `add(measurement)` and `close()` given every measurement as it is made (`tune.Sink`)."""
        from solverspace.analysis.tune import tune
        if db is None:
            db = self.default_tune_db()
        return tune(self.plan, measure, bound, top=top, max_measurements=max_measurements, time_limit=time_limit,
                    repeat=repeat, aggregate=aggregate, db=str(db), timeout=timeout, progress=progress,
                    sinks=sinks)

    def default_tune_db(self) -> str:
        """Where `tune` keeps its measurements when no `db` is given (also `solverspace tune`'s default)."""
        from solverspace.io.loader import BUILTIN_SPACES, resolve_space_path
        from solverspace.analysis.tune_db import default_path
        builtin = next((name for name in BUILTIN_SPACES
                        if str(resolve_space_path(name)) == self.model.source), None)
        return default_path(self.model.source, builtin)

    def funnel(self, backend="c", *, progress=None, **options):
        """Per constraint: candidates reached, rejected, undefined and kept (`solverspace.analysis.funnel`),
        on the literal plan: every value of every domain as written, the constraints as filters (the
        plan's structured domains, `solverspace.analysis.structure`, would hide what they prune)."""
        return _backend(backend, "funnel", **options).funnel(self.literal_plan, progress=progress)

    def emit(self, backend="c", *, with_derived=(), **options) -> str:
        """The program a compiling backend generates for this space (C for `c`)."""
        return _backend(backend, "emit", **options).emit(self.plan, self._check_derived(with_derived))

    def __repr__(self):
        return f"Space({self.model.source!r}, parameters={list(self.parameters)})"
