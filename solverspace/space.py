"""`Space`: the Python API, one facade over load -> model -> plan -> backend.

Every answer of the command line is a method of `Space`, with the command line's defaults: a
method that takes a `backend` runs `"auto"` unless told otherwise, as `solverspace count` and
`solverspace enumerate` do (the policy of `solverspace.registry.auto`: the reference for a small
space, the compiled enumerator for a big one or one already built), so
`Space.load("gemm").count()` answers as fast as `solverspace count gemm`. Name a backend
(`"reference"`, `"c"`, `"cpsat"`, or a backend object) to choose it; the registry
(`solverspace.registry.backends`) says what each can do.

An answer does not depend on the backend that gives it. Where backends differ in what they can
tell, the API asks the one that tells all: `stats()` (the undefined-operation tally, which
follows the plan a backend walks) and strict mode are answered by the literal plan's walk
wherever an operation may be undefined (`AutoBackend`'s `exact_tally`).

Results: one type per kind of answer, whichever backend gives it.

| answer | type | methods |
|---|---|---|
| a count | `int`, exact at any size | `count`, `len(space)`, `count_neighbors` |
| a count with its undefined-operation tally | `Stats` (`solverspace.core.results`): `count`, `undefined`, `undefined_by` ({rule: candidates}), `first_undefined` ((where, configuration) or None); CP-SAT's adds `exact` | `stats` |
| an estimated count | `ApproximateCount` (`estimate`, `exact`, `epsilon`, `delta`) | `approximate_count` |
| one configuration | a tuple of values in column order (`parameters`) | `space[i]`, `from_unit`, `repair`, `random_neighbor`, `from_param_indices` |
| a configuration in a report | a dict {parameter: value} | `best(...).ranked[i].configuration`, `check(...).completion` |
| configurations, one at a time | an iterator of tuples in column order | `rows` |
| configurations, all at once | a NumPy structured array: one field per column, integers the smallest signed type that holds the column's proven range, categorical values as strings (`<U`), orders as strings (`core.orders`) | `to_array`, `sample`, `design`, `from_unit_many`, `draw` (with its `SampleInfo`) |
| configurations, in a file | the number written (CSV, JSON Lines, `.npy`, Parquet) | `write`, `write_csv` |
| a ranking | `BestResult` (`ranked`: `Ranked(rank, objective, configuration)`, `exact`) | `best` |
| a measured search | `TuneResult` | `tune` |
| a validity verdict | `bool`; with its reasons, `CheckResult` (`valid`, `rejections`, `completion`) | `is_valid`, `check`, `complete` |
| a position | `int` | `index`, `param_indices` (one per parameter) |
| counts per setting | an iterator of `SweepPoint` | `sweep` |
| the pruning funnel | `Funnel` (`solverspace.analysis.funnel`) | `funnel` |

Values: integers as Python `int` (NumPy integers in arrays), categorical values as `str`, exact
fractions (derived values with `/`) as `fractions.Fraction`; an order (a permutation, sequence or
interleaving) as a tuple of its items in `rows`, and as its items joined by `>` (`"a>b>c"`,
`solverspace.core.orders`) in arrays and in what positions give (`space[i]`).

`complete` answers with CP-SAT's `Completion` (the default) or, with `backend="reference"`, a
`CheckResult`; both hold `assignment` and `completion`.
"""
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


def _exact_tally(backend, options: dict) -> dict:
    """`options` with `exact_tally=True` for the `auto` backend, whose `stats()` answer is the
    undefined-operation tally (`AutoBackend`: the literal plan's walk wherever an operation may be
    undefined; its strict mode walks it always), unless the caller said otherwise."""
    if isinstance(backend, str) and backend == "auto" and "exact_tally" not in options:
        return {**options, "exact_tally": True}
    return options


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
        """A space from a loaded `Model` and its plan (`make_plan(model)` when none is given).

        Most code calls `Space.load` or `Space.from_source`, which load the model too; this one is for
        a model loaded or built elsewhere (a T1 file's, `load_t1_text`), or another loop order.

        Args:
            model: the loaded model (`solverspace.lang.model.Model`).
            plan: its loop nest (`solverspace.analysis.plan.make_plan(model, order)`); the default
                plan when None.

        Examples:
            >>> from solverspace.analysis.plan import make_plan
            >>> space = Space.from_source("x = range(1, 3)\\ny = range(1, 3)\\nrequire(x <= y)")
            >>> Space(space.model, make_plan(space.model, ["y", "x"])).plan.order
            ('y', 'x')
        """
        self.model = model
        self.plan = plan or make_plan(model)
        self._origin: tuple | None = None   # (kind, text, file name, settings, options): what pickles

    @classmethod
    def load(cls, space: str | Path, settings: dict | None = None, **options) -> "Space":
        """Load a space file or a built-in space, with setting overrides.

        Args:
            space: a path to a space file (Python, or a Kernel Tuner T1 `.json`) or a built-in name
                (`"gemm"`).
            settings: values of the space's settings by name, overriding the file's (as
                `--set name=value` on the command line).
            **options: load options (`max_closure_values=`: the most values a closure iterator is
                tabulated to).

        Returns:
            The loaded `Space`.

        Examples:
            >>> space = Space.load("gemm", {"device": "tiny", "precision": "single"})
            >>> space.count()
            2000
        """
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
        """Count a space file for every combination of setting values, as `solverspace sweep`.

        Args:
            space: the space file or built-in name (as `Space.load`).
            grid: {setting: values}: every combination is counted.
            backend: who counts each point ("auto" by default, as `solverspace sweep`).
            base: setting overrides common to every point.
            max_closure_values: as `Space.load`.
            strict: an undefined operation is an error instead of an invalid configuration.
            **options: the backend's options; `one_pass=False` counts every combination on its own
                (by default the points of a group share one walk where they can).

        Returns:
            An iterator of `SweepPoint` (`settings`, `count`, `undefined`, `exact`, `seconds`,
            `backend`, `method`), one per combination (`solverspace.scale.sweep`).

        Examples:
            >>> points = Space.sweep("gemm", {"device": ["tiny"], "precision": ["single", "double"]})
            >>> [(p.settings["precision"], p.count) for p in points]
            [('single', 2000), ('double', 336)]
        """
        return sweep(lambda settings: cls.load(space, settings, max_closure_values=max_closure_values), grid,
                     backend, base=base, strict=strict, **options)

    @classmethod
    def from_source(cls, source: str, settings: dict | None = None, filename: str = "<space>", **options) -> "Space":
        """A space from the text of a space file, as `Space.load` reads a file.

        Args:
            source: the text of a space file.
            settings: setting overrides (as `Space.load`).
            filename: the name messages give the text.
            **options: load options (as `Space.load`).

        Returns:
            The loaded `Space`.

        Examples:
            >>> Space.from_source("N = 4\\nx = range(1, N)", {"N": 6}).count()
            5
        """
        return cls(load_source(source, filename, settings, **options))._remember("source", source, filename, settings,
                                                                                  options)

    # ------------------------------------------------------------------------------ facts
    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameter names in definition order (the columns of a listing).

        Examples:
            >>> Space.from_source("x = range(1, 3)\\ny = range(x, 3)").parameters
            ('x', 'y')
        """
        return self.model.parameter_names

    @property
    def settings(self) -> dict:
        """The space's settings with the values this space was loaded with.

        Examples:
            >>> Space.from_source("N = setting(4)\\nx = range(1, N)", {"N": 6}).settings
            {'N': 6}
        """
        return {s.name: s.value for s in self.model.settings}

    @property
    def dag(self) -> DAG:
        """The dependency graph of parameters, derived values and constraints (`solverspace.lang.dag.DAG`).

        Examples:
            >>> [level["parameters"] for level in Space.from_source("x = range(1, 3)\\ny = range(x, 3)").dag.level_sets]
            [['x'], ['y']]
        """
        return self.model.analysis.dag

    def columns(self, with_derived=()) -> tuple[str, ...]:
        """The columns of a listing: the parameters in definition order, then `with_derived`.

        Args:
            with_derived: names of derived values to add as columns.

        Returns:
            The column names, a tuple of str.

        Examples:
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
        """The plan over the space as written.

        The same loop order, every domain as written, every constraint a test (`plan` may hold
        domains the constraints narrowed and tabulated, `solverspace.analysis.structure`). What names
        rules (`check`, `complete`) or measures them (`funnel`) reads this one, so it names the
        user's rules and domains.

        Examples:
            >>> Space.from_source("x = range(1, 3)").literal_plan.order
            ('x',)
        """
        if self.plan.model is self.model:
            return self.plan
        if getattr(self, "_literal_plan", None) is None:
            self._literal_plan = make_plan(self.model, list(self.plan.order), structured=False)
        return self._literal_plan

    # ------------------------------------------------------------------------------ answers
    # Every answer: `get_backend(name, capability, **options)` from the one registry
    # (solverspace.registry.backends), then the backend's method for that capability.
    def stats(self, backend="auto", *, strict: bool = False,
              progress: Callable[[int, int], None] | None = None, **options) -> Stats:
        """The exact number of valid configurations with the tally of undefined operations.

        As `solverspace count` counts, with what it saw: candidate configurations lost to an
        undefined operation (a division or modulo by zero, the position of an absent item), in
        total and per rule, and the first one met. The tally is that of the literal plan's walk
        (each rule tested at its earliest loop, in definition order), whoever answers: with
        `"auto"` (the default), a space where no operation can be undefined is counted by the
        fastest backend (its tally is empty); any other by the reference within auto's budget,
        past it by C's walk of the literal plan where that tallies nothing (the GEMM space: a few
        seconds, where `count()` takes a fraction of one), and otherwise refused
        (`TallyBeyondBudgetError`, with what answers instead). A named backend gives its own
        walk's tally: `"c"` counts on its optimized plan, which visits fewer candidates, and
        attributes no rule; `"cpsat"` tallies per rule with another first witness.

        Args:
            backend: "auto" (the default, as the command line), "reference", "c", "cpsat", or a
                backend object.
            strict: the first undefined operation raises `UndefinedOperationError` (naming the
                expression and the configuration) instead of being tallied.
            progress: called as `progress(done, total)` while counting.
            **options: the backend's options (`threads=2`; `time_limit=10.0` for cpsat;
                `exact_tally=False` for auto: the command line's choice, tally as it comes).

        Returns:
            `Stats`: `count`, `undefined`, `undefined_by` ({rule: candidates}), `first_undefined`
            ((where, configuration) or None).

        Examples:
            >>> stats = Space.from_source("x = range(1, 5)\\ny = range(1, 5)\\nrequire(x // (y - 2) > 0)").stats()
            >>> stats.count, stats.undefined, stats.undefined_by   # y == 2 divides by zero
            (7, 4, {'require_line3': 4})
        """
        options = _exact_tally(backend, options)
        return _backend(backend, "count", **options).count(self.plan, strict=strict, progress=progress)

    def count(self, backend="auto", *, strict: bool = False, **options) -> int:
        """The exact number of valid configurations, as `solverspace count SPACE` prints it.

        Args:
            backend: who counts, as `--backend`: "auto" (the default, as on the command line: the
                reference for a small space, the compiled enumerator for a big one or one already
                built), "c" (compiled C/OpenMP), "reference" (pure Python, the ground truth; slow on
                big spaces), "cpsat" (counts without listing), or a backend object.
            strict: an undefined operation (a division by zero) raises instead of making the
                configuration invalid (under "auto", on the literal plan's walk, as `stats`).
            **options: the backend's options (`threads=2`, `time_limit=10.0`).

        Returns:
            The count, an `int` (exact at any size; CP-SAT stopped by a time limit gives a
            `LowerBound`, an `int` that says so). `stats()` gives the count with the
            undefined-operation tally.

        Examples:
            >>> space = Space.from_source("x = range(1, 5)\\ny = range(x, 5)\\nrequire(x + y < 6)")
            >>> space.count()
            6
            >>> space.count("reference") == space.count("c") == 6
            True
        """
        return _backend(backend, "count", **options).count(self.plan, strict=strict).count

    def rows(self, backend="auto", *, strict: bool = False, with_derived=(),
             progress: Callable[[int, int], None] | None = None, **options) -> Iterator[tuple]:
        """Valid configurations one at a time, in the plan's loop order, as `solverspace enumerate`.

        Args:
            backend: as `count` ("auto" by default; "reference" walks lazily in Python, the first
                row at once; C lists in batches).
            strict: an undefined operation raises instead of making the configuration invalid.
            with_derived: names of derived values to add as columns after the parameters.
            progress: called as `progress(done, total)` while listing.
            **options: the backend's options.

        Returns:
            An iterator of tuples, the values in column order (`columns(with_derived)`).

        Examples:
            >>> list(Space.from_source("x = range(1, 4)\\ny = range(x, 3)").rows())
            [(1, 1), (1, 2), (2, 2)]
            >>> list(Space.from_source("x = range(1, 3)\\nd = x * 10").rows(with_derived=("d",)))
            [(1, 10), (2, 20)]
        """
        return _backend(backend, "list", **options).rows(self.plan, strict=strict,
                                                            with_derived=self._check_derived(with_derived),
                                                            progress=progress)

    def to_array(self, backend="auto", *, strict: bool = False, with_derived=(), progress=None, **options):
        """All valid configurations as a NumPy structured array, in the plan's loop order.

        One field per column; integers the smallest signed type that holds the column's proven
        range (int8 .. int64), categorical values as strings, the same whichever backend lists
        (`solverspace.core.results.listing_array`).

        Args:
            backend: as `count` ("auto" by default).
            strict, with_derived, progress, **options: as `rows`.

        Returns:
            A NumPy structured array, one row per configuration.

        Examples:
            >>> array = Space.from_source("x = range(1, 4)\\ny = range(x, 3)").to_array()
            >>> array["y"].tolist(), array.dtype["y"].name
            ([1, 2, 2], 'int8')
        """
        return _backend(backend, "list", **options).array(self.plan, strict=strict,
                                                             with_derived=self._check_derived(with_derived),
                                                             progress=progress)

    def to_frame(self, backend="auto", **kwargs):
        """All valid configurations as a pandas DataFrame (needs pandas; `to_array` otherwise).

        Args:
            backend: as `count` ("auto" by default).
            **kwargs: as `to_array`.

        Returns:
            A `pandas.DataFrame`, one column per field of `to_array`.

        Examples:
            >>> Space.from_source("x = range(1, 4)\\ny = range(x, 3)").to_frame()["x"].tolist()
            [1, 1, 2]
        """
        try:
            import pandas
        except ImportError:
            raise SpaceDefinitionError("to_frame needs pandas",
                                       hint="pip install pandas, or use to_array() for a NumPy structured array") from None
        return pandas.DataFrame(self.to_array(backend, **kwargs))

    def approximate_count(self, epsilon: float = 0.8, delta: float = 0.2, *, seed: int = 0, backend="cpsat",
                          **options):
        """An estimate of the count within a factor 1 + epsilon with probability 1 - delta (ApproxMC2).

        As `solverspace count --approximate`: for spaces whose exact count does not finish; random
        XOR cells enumerated by CP-SAT.

        Args:
            epsilon: the tolerance.
            delta: the probability of missing it.
            seed: draws the hashes.
            backend: "cpsat" (the one that estimates), or a backend object.
            **options: the backend's options (`workers=`).

        Returns:
            `ApproximateCount`: `estimate`, `exact` (True where the space was small enough to count),
            `epsilon`, `delta`.

        Examples:
            >>> Space.from_source("x = range(1, 5)\\ny = range(x, 5)").approximate_count().estimate
            10
        """
        for name, value in (("epsilon", epsilon), ("delta", delta)):
            check_kind(value, name, numbers.Real, "a number", f"{name}=0.5")
        return _backend(backend, "approximate", **options).approximate_count(self.plan, epsilon, delta, seed=seed)

    # ------------------------------------------------------------------------------ sampling
    def sample(self, n: int, seed: int = 0, *, replace: bool = False, method: str = "exact", threads=None,
               given=None):
        """n valid configurations drawn uniformly at random, as `solverspace sample`.

        Distinct unless `replace`; identical for the same seed whatever the thread count.

        Args:
            n: how many.
            seed: the random seed.
            replace: draw with replacement.
            method: "exact" (the default, as the command line: positions of the compiled
                enumerator, exactly uniform), "reference" (the space listed in Python), "cpsat",
                "cpsat-xor" (near-uniform, for spaces C cannot list).
            threads: threads of the compiled count behind the positions.
            given: a partial assignment {parameter: value}: the draw is uniform over the valid
                configurations that agree with it (none: an error saying why).

        Returns:
            A NumPy structured array (`to_array`'s dtype), one row per configuration.

        Examples:
            >>> space = Space.from_source("x = range(1, 5)\\ny = range(x, 5)\\nrequire(x + y < 6)")
            >>> rows = space.sample(3, seed=1).tolist()
            >>> len(set(rows)), set(rows) <= set(space.rows())
            (3, True)
        """
        return self.draw(n, seed, replace=replace, method=method, threads=threads, given=given)[0]

    def draw(self, n: int, seed: int = 0, *, replace: bool = False, method: str = "exact", threads=None,
             progress=None, given=None):
        """`sample` with what reproduces it.

        Args:
            n, seed, replace, method, threads, given: as `sample`.
            progress: called as `progress(done, total)` while counting.

        Returns:
            (the structured array of `sample`, `SampleInfo`: method, seed, n, replace, size,
            guarantee).

        Examples:
            >>> rows, info = Space.from_source("x = range(1, 5)").draw(2, seed=3)
            >>> len(rows), info.size, info.method
            (2, 4, 'exact')
        """
        from solverspace.scale.sampling import sample
        n = check_whole(n, "n", "a whole number of configurations")
        if given is not None:
            from solverspace.moves.designs import sample_given
            return sample_given(self, n, seed, given, replace=replace, method=method, threads=threads)
        return sample(self.plan, n, seed, replace=replace, method=method, threads=threads, progress=progress)

    def __len__(self) -> int:
        """The number of valid configurations, as `count()` (an `OverflowError` past `sys.maxsize`).

        Examples:
            >>> len(Space.from_source("x = range(1, 5)\\ny = range(x, 5)"))
            10
        """
        size = self.position_index().size()
        if size > sys.maxsize:  # len() must fit in a C ssize_t
            raise OverflowError(f"the space has {size} configurations, more than len() can return; "
                                f"space.count('c') gives the exact count")
        return size

    def __getitem__(self, position: int) -> tuple:
        """The configuration at `position` of the canonical order (the compiled enumerator's).

        Args:
            position: 0 .. len - 1; negative counts from the end.

        Returns:
            A tuple of values in column order.

        Examples:
            >>> space = Space.from_source("x = range(1, 5)\\ny = range(x, 5)")
            >>> space[0], space[-1]
            ((1, 1), (4, 4))
        """
        position = check_whole(position, "position", "a whole number (a position of the canonical order)")
        size = self.position_index().size()
        if position < 0:
            position += size
        if not 0 <= position < size:
            raise IndexError(f"configuration index {position} out of range: the space has {size} configurations")
        return tuple(self.position_index().rows_at([position])[0].tolist())

    def index(self, config) -> int:
        """The position of a valid configuration in the canonical order (inverse of `space[i]`).

        Args:
            config: a dict {parameter: value} or a tuple in column order.

        Returns:
            The position, an `int`; a configuration that is not valid raises `ValueError`.

        Examples:
            >>> Space.from_source("x = range(1, 5)\\ny = range(x, 5)").index({"x": 2, "y": 3})
            5
        """
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
        """The engine behind `space[i]`, `index` and `len`: the compiled enumerator's positions.

        Made once (by independent groups where that pays). Where C refuses the space, its refusal
        with a hint that says what positions are and what answers instead.

        Returns:
            The positions engine (`size()`, `rows_at(positions)`, `index(values)`).

        Examples:
            >>> Space.from_source("x = range(1, 5)\\ny = range(x, 5)").position_index().size()
            10
        """
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
        """Each parameter's value list: the superset domain `export-t1` writes.

        Numbers ascending, strings and orders in `best`'s tie order (`solverspace.moves.value_lists`).

        Returns:
            {parameter: tuple of values}.

        Examples:
            >>> Space.from_source("x = range(1, 4)\\ny = range(x, 4)").value_lists()
            {'x': (1, 2, 3), 'y': (1, 2, 3)}
        """
        return dict(zip(self.parameters, self._moves().param_index().lists))

    def param_indices(self, config) -> tuple[int, ...]:
        """The positions of a configuration's values in the value lists (`value_lists`).

        Args:
            config: a dict {parameter: value} or a tuple in column order; a value in no value list
                is an error naming it.

        Returns:
            A tuple of indices, one per parameter.

        Examples:
            >>> Space.from_source("x = range(1, 4)\\ny = range(x, 4)").param_indices({"x": 2, "y": 3})
            (1, 2)
        """
        return self._moves().param_index().indices(self._configuration(config))

    def from_param_indices(self, indices) -> tuple:
        """The configuration at a point of the index box (`param_indices`'s inverse; not checked for validity).

        Args:
            indices: one index into each parameter's value list, in column order.

        Returns:
            A tuple of values in column order.

        Examples:
            >>> Space.from_source("x = range(1, 4)\\ny = range(x, 4)").from_param_indices((1, 2))
            (2, 3)
        """
        check_kind(indices, "indices", (tuple, list), "a tuple of parameter indices in column order",
                   f"indices={(0,) * len(self.parameters)!r}")
        return self._moves().param_index().values(tuple(indices))

    def is_valid(self, config) -> bool:
        """Whether a full configuration is valid: `check`'s verdict, without its reasons.

        Args:
            config: a dict {parameter: value} or a tuple in column order.

        Returns:
            A `bool`.

        Examples:
            >>> space = Space.from_source("x = range(1, 4)\\ny = range(x, 4)")
            >>> space.is_valid((1, 3)), space.is_valid({"x": 3, "y": 1})
            (True, False)
        """
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
        """The valid neighbours of a valid configuration, by one of Kernel Tuner's methods.

        Found by walks of the plan's loops, never a scan of the space.

        Args:
            config: a dict {parameter: value} or a tuple in column order.
            method: "strictly-adjacent", "adjacent", "Hamming" (the default, as `solverspace
                neighbors`), "Hamming-adjacent" or "closest-param-indices".

        Returns:
            A list of tuples, sorted by parameter indices, the configuration itself excluded.

        Examples:
            >>> Space.from_source("x = range(1, 4)\\ny = range(x, 4)").neighbors((2, 2))
            [(1, 2), (2, 3)]
        """
        return self._moves().neighbors().neighbors(self._configuration(config), method)

    def count_neighbors(self, config, method: str = "Hamming") -> int:
        """The number of valid neighbours (`neighbors`), without listing them.

        Examples:
            >>> Space.from_source("x = range(1, 4)\\ny = range(x, 4)").count_neighbors((2, 2))
            2
        """
        return self._moves().neighbors().count(self._configuration(config), method)

    def random_neighbor(self, config, method: str = "Hamming", seed: int = 0) -> tuple | None:
        """One valid neighbour (`neighbors`) drawn uniformly, seeded.

        Returns:
            A tuple in column order, or None when there is none.

        Examples:
            >>> Space.from_source("x = range(1, 4)\\ny = range(x, 4)").random_neighbor((2, 2), seed=0) in [(1, 2), (2, 3)]
            True
        """
        seed = check_seed(seed)
        return self._moves().neighbors().random(self._configuration(config), method, seed)

    # ------------------------------------------------------------------------------ moves: designs, repair
    def from_unit(self, point) -> tuple:
        """The valid configuration at a point of the unit cube [0, 1)^D, by conditional quantiles.

        Parameter by parameter in plan order, the value whose cumulative count of valid completions
        covers the coordinate (`solverspace.moves.designs`): a uniform random point gives an exactly
        uniform valid configuration.

        Args:
            point: one coordinate in [0, 1) per parameter, column order.

        Returns:
            A tuple in column order.

        Examples:
            >>> space = Space.from_source("x = range(1, 5)\\ny = range(x, 5)")
            >>> space.from_unit((0.0, 0.0)), space.from_unit((0.99, 0.99))
            ((1, 1), (4, 4))
        """
        return self._moves().quantiles().from_unit(point)

    def from_unit_many(self, points):
        """`from_unit` of each row of an (n, D) array of points.

        Returns:
            A NumPy structured array (`sample`'s dtype).

        Examples:
            >>> Space.from_source("x = range(1, 5)\\ny = range(x, 5)").from_unit_many([[0.0, 0.0], [0.99, 0.99]]).tolist()
            [(1, 1), (4, 4)]
        """
        return self._moves().quantiles().from_unit_many(points)

    def design(self, n: int, method: str = "lhs", seed: int = 0):
        """A space-filling design of n valid configurations, as `solverspace design`.

        Points of the unit cube (SciPy's `scipy.stats.qmc`), seeded, mapped by conditional
        quantiles (`from_unit`).

        Args:
            n: how many.
            method: "lhs" (Latin hypercube, the default), "sobol" (scrambled Sobol) or "random".
            seed: the random seed.

        Returns:
            A NumPy structured array (`sample`'s dtype).

        Examples:
            >>> len(Space.from_source("x = range(1, 5)\\ny = range(x, 5)").design(4, seed=2))
            4
        """
        from solverspace.moves.designs import unit_design
        quantiles = self._moves().quantiles()
        return quantiles.from_unit_many(unit_design(n, len(self.parameters), method, seed))

    def repair(self, point=None, *, indices=None) -> tuple:
        """The valid configuration nearest to a point, as `solverspace repair`.

        Nearest by the L1 distance in parameter indices, exactly (branch and bound,
        `solverspace.moves.repair`); ties: the smallest (|i - t|, i) per parameter in plan order.
        An empty space is an error.

        Args:
            point: a configuration of values from the value lists (dict or tuple; need not be valid).
            indices: parameter indices instead of `point` (exactly one of the two).

        Returns:
            A tuple in column order.

        Examples:
            >>> Space.from_source("x = range(1, 4)\\ny = range(1, 4)\\nrequire(x < y)").repair({"x": 3, "y": 3})
            (2, 3)
        """
        return self._repaired(point, indices)[0]

    def repair_distance(self, point=None, *, indices=None) -> int:
        """The L1 distance in parameter indices from `point` (or `indices`) to its `repair`.

        Examples:
            >>> Space.from_source("x = range(1, 4)\\ny = range(1, 4)\\nrequire(x < y)").repair_distance({"x": 3, "y": 3})
            1
        """
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
    def write(self, path: str | Path, backend="auto", *, fmt: str | None = None, strict: bool = False,
              with_derived=(), progress=None, sep: str = ",", **options) -> int:
        """Write every valid configuration to a file, as `solverspace enumerate SPACE -o PATH`.

        CSV (header + rows), JSON Lines (`.jsonl`: one object per row), `.npy` or Parquet
        (`.parquet`, needs the `parquet` extra); the format comes from the file's extension
        (anything else is CSV) unless `fmt` is given. The file appears only when complete; `-` is
        standard output (CSV or JSON Lines).

        Args:
            path: the output file, or "-".
            backend: as `count` ("auto" by default).
            fmt: "csv", "jsonl", "npy" or "parquet", instead of the extension.
            strict, with_derived, progress: as `rows`.
            sep: the CSV field separator.
            **options: the backend's options.

        Returns:
            How many configurations were written.

        Examples:
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

    def write_csv(self, path: str | Path, backend="auto", *, strict: bool = False,
                  with_derived=(), progress=None, sep: str = ",", **options) -> int:
        """Write a header and one CSV row per configuration, row by row from `rows()`.

        The file appears only when complete; `-` is standard output.

        Args:
            path, backend, strict, with_derived, progress, sep, **options: as `write`.

        Returns:
            How many configurations were written.

        Examples:
            >>> import tempfile, pathlib
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "xy.csv"
            >>> Space.from_source("x = range(1, 4)\\ny = range(x, 3)").write_csv(path, sep=";")
            3
            >>> path.read_text().splitlines()[:2]
            ['x;y', '1;1']
        """
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
        """Whether a full assignment is valid, with every rule that rejects it, as `solverspace check`.

        A partial assignment gets a valid completion if one exists (found by listing: `complete`
        answers big spaces).

        Args:
            assignment: {parameter: value}.

        Returns:
            `CheckResult`: `valid`, `complete`, `rejections` (each `rule` with its `reason`),
            `derived` (their values), `completion`.

        Examples:
            >>> space = Space.from_source("x = range(1, 4)\\ny = range(1, 4)\\nrequire(x < y)")
            >>> result = space.check({"x": 3, "y": 2})
            >>> result.valid, [r.rule for r in result.rejections]
            (False, ['require_line3'])
        """
        self._check_assignment(assignment)
        return get_backend("reference", "check").check(self.literal_plan, assignment)

    def complete(self, assignment: dict, backend="cpsat", **options):
        """A valid completion of a partial assignment, or a minimal set of rules that rules it out.

        Args:
            assignment: {parameter: value} for some parameters.
            backend: "cpsat" (the default: the minimal set of rules when none exists) or
                "reference" (by listing; its answer is a `CheckResult`, as `check`'s).
            **options: the backend's options (`time_limit=`).

        Returns:
            CP-SAT's `Completion`: `feasible`, `completion` ({parameter: value}), `conflict` (the
            rules that together rule the assignment out).

        Examples:
            >>> space = Space.from_source("x = range(1, 4)\\ny = range(1, 4)\\nrequire(x < y)")
            >>> space.complete({"x": 2}).completion
            {'x': 2, 'y': 3}
            >>> space.complete({"x": 3}).conflict
            ['require_line3']
        """
        self._check_assignment(assignment)
        return _backend(backend, "check", **options).complete(self.literal_plan, assignment)

    def best(self, objective: str | None = None, *, maximize: bool | None = None, top: int = 10, backend="bnb",
             progress=None, **options):
        """The `top` best distinct configurations by an objective, as `solverspace best`.

        Ties in the one tie order of every engine. Without `objective`, the space's declared
        `cost(...)`, minimised (as `best` without `--minimize`/`--maximize`); a given objective is
        maximised unless `maximize=False`.

        Args:
            objective: an expression of the space's names (str), or None for the declared cost.
            maximize: the direction (see above).
            top: how many.
            backend: a search engine: "bnb" (the default, as the command line) and "exhaustive"
                (compiled C), "bnb-reference" and "exhaustive-reference" (Python), "cpsat".
            progress: called as `progress(done, total)` as the search goes (C engines: work
                units; the Python walks: the outermost loop's values; cpsat: configurations ranked
                out of `top`).
            **options: the engine's options (`time_limit=`, `threads=`).

        Returns:
            `BestResult`: `ranked` (a list of `Ranked(rank, objective, configuration)`, the exact
            objective and a dict configuration), `exact`, `engine`, `seconds`.

        Examples:
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
             timeout: float | None = None, progress=None, sinks=(), stop_after_failures: int | None = None):
        """Measured search for the fastest configuration, as `solverspace tune`.

        Measures only what the lower bound `bound` cannot rule out (`solverspace.analysis.tune`).

        Args:
            measure: a callable configuration -> seconds, or a shell command template
                ("./bench {dim_m} ...").
            bound: a model in the space language; None: the space's declared cost.
            top: how many of the best to keep.
            max_measurements, time_limit: where to stop.
            repeat, aggregate: measurements per configuration and how to combine them ("min").
            db: the SQLite file of measurements (default `default_tune_db()`).
            timeout: seconds per measurement.
            progress: called as measurements are made.
            sinks: objects with `add(measurement)` and `close()` given every measurement.
            stop_after_failures: stop (`OptionError`, saying why) when the first this many
                measurements all failed the same way; 0: never; None: the command line's default (10).

        Returns:
            `TuneResult`: `top` (the best measured, fastest first), `proven`, `status`, `measured`, ...

        Examples:
            >>> space = Space.from_source("x = range(1, 5)\\ncost(x)")   # seconds: at least x
            >>> result = space.tune(lambda c: c["x"] + 0.5, db=":memory:")
            >>> result.top[0].configuration, result.proven
            ({'x': 1}, True)
        """
        from solverspace.analysis.tune import tune
        if db is None:
            db = self.default_tune_db()
        limit = {} if stop_after_failures is None else {"stop_after_failures": stop_after_failures}
        return tune(self.plan, measure, bound, top=top, max_measurements=max_measurements, time_limit=time_limit,
                    repeat=repeat, aggregate=aggregate, db=str(db), timeout=timeout, progress=progress,
                    sinks=sinks, **limit)

    def default_tune_db(self) -> str:
        """Where `tune` keeps its measurements when no `db` is given (also `solverspace tune`'s default).

        Returns:
            The path of the SQLite file: `<space stem>.tune.sqlite` next to the space file, in the
            current directory for a built-in space.

        Examples:
            >>> Path(Space.load("gemm").default_tune_db()).name
            'gemm.tune.sqlite'
        """
        from solverspace.io.loader import BUILTIN_SPACES, resolve_space_path
        from solverspace.analysis.tune_db import default_path
        builtin = next((name for name in BUILTIN_SPACES
                        if str(resolve_space_path(name)) == self.model.source), None)
        return default_path(self.model.source, builtin)

    def funnel(self, backend="c", *, progress=None, **options):
        """Per constraint: candidates reached, rejected, undefined and kept, as `solverspace funnel`.

        On the literal plan (`solverspace.analysis.funnel`): every value of every domain as
        written, the constraints as filters (the plan's structured domains would hide what they
        prune).

        Args:
            backend: "c" (the default, as the command line) or "reference".
            progress: called as `progress(done, total)`.
            **options: the backend's options.

        Returns:
            `Funnel`: `constraints` (`ConstraintFunnel`: reached, rejected, undefined, alone, kept),
            `levels`, `overlap`, `count`.

        Examples:
            >>> funnel = Space.from_source("x = range(1, 5)\\nrequire(x % 2 == 0)").funnel("reference")
            >>> [(c.name, c.reached, c.rejected) for c in funnel.constraints], funnel.count
            ([('require_line2', 4, 2)], 2)
        """
        return _backend(backend, "funnel", **options).funnel(self.literal_plan, progress=progress)

    def emit(self, backend="c", *, with_derived=(), **options) -> str:
        """The program a compiling backend generates for this space (C for `c`), as `solverspace emit-c`.

        Args:
            backend: "c".
            with_derived: derived values as extra output columns.

        Returns:
            The program's source text.

        Examples:
            >>> "walk_count" in Space.from_source("x = range(1, 5)").emit()
            True
        """
        return _backend(backend, "emit", **options).emit(self.plan, self._check_derived(with_derived))

    def __repr__(self):
        """The space's file and parameters.

        Examples:
            >>> Space.from_source("x = range(1, 3)")
            Space('<space>', parameters=['x'])
        """
        return f"Space({self.model.source!r}, parameters={list(self.parameters)})"
