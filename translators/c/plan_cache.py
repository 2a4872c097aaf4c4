"""Generated C, remembered: a warm call skips code generation and the analysis behind it
(SymPy simplification included), and goes from the loaded space straight to the compiled module.

What the generator writes (`Generated`: the C source, the columns, the names of undefined items,
the categorical codes, ...) is a function of the plan, the optimization options, the derived
columns, the kind of build (funnel, wide counts) and the generator's own code. The key of an
entry is a SHA-256 over all of them:

- the model written out in full: every parameter's domain, derived value and constraint as IR
  (with its line), every setting with its value and choices, the closure limit, the file name;
- the plan's loop order; the options, the derived columns, funnel and wide;
- `generator_version()`: a hash of the source of every module of `solverspace` and
  `solverspace.translators`, so an upgrade or a local edit of the tool is a miss.

A compiled search (`best`, `translators/c/best.py`) is remembered the same way (`search_key`:
the same written model and generator version, with the objective's IR and its direction; entries
`search_<key>.json` with the search's source and what its run needs), so a warm `best` from the
command line imports no SymPy and generates nothing either.

SymPy's simplifications of derived values (the bulk of generating a program) are remembered
too (`SimplificationStore`, `simplified_<version>.pickle`, keyed by the expression's text and
the generator version): a process that generates a program whose derived values were seen
before (the first sweep after a count: every point has the count's derived values, with other
constants elsewhere) imports no SymPy.

A model with a closure iterator (a Python function, whose behaviour is not in its written form)
is never cached. Entries live beside the compiled modules (`c.build.cache_dir()`), are written
atomically and hold their own key; one that does not parse or whose key differs is a miss.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from solverspace.lang import bounds, ir

from .build import cache_dir, read_entry, write_atomically, write_entry
from .codegen import Column, Generated
from .optimize import Options

FORMAT = 1   # of the entries' JSON
_VERSION: list[str] = []


def generator_version() -> str:
    """A hash of the tool's own code (every .py under solverspace/ and translators/), once per
    process. The hash of the files' contents is remembered by their names, sizes, inodes and
    modification and change times (`version_<stat hash>` in the cache): a warm process only
    lists them. The change time (ctime) is the kernel's: no tool sets it back, so a file written
    again (an edit, a reinstall keeping the size and a fixed mtime) is always read again."""
    if not _VERSION:
        files = []
        for folder in (Path(ir.__file__).parents[1], Path(__file__).parents[1]):
            files += sorted((path.relative_to(folder).as_posix(), path) for path in _sources(folder))
        listed = hashlib.sha256()
        for name, path in files:
            stat = path.stat()
            listed.update(f"{name}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ctime_ns}\0{stat.st_ino}\0".encode())
        remembered = cache_dir() / f"version_{listed.hexdigest()[:40]}"
        try:
            version = remembered.read_text(encoding="ascii").strip()
        except (OSError, ValueError):
            version = ""
        if len(version) != 64 or any(c not in "0123456789abcdef" for c in version):
            digest = hashlib.sha256()
            for name, path in files:
                digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
            version = digest.hexdigest()
            try:
                write_atomically(remembered, version)
            except OSError:
                pass
        _VERSION.append(version)
    return _VERSION[0]


def _sources(folder: Path):
    """Every .py file under `folder` (os.walk: cheaper than Path.rglob in a warm process)."""
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if name.endswith(".py"):
                yield Path(root, name)


def generation_key(plan, options, with_derived, funnel: bool, wide: bool) -> str | None:
    """The entry's key, or None when the plan cannot be cached (a closure iterator)."""
    model = plan.model
    if any(isinstance(n, ir.Closure) for tree in model.trees for n in ir.walk(tree)):
        return None
    settings = sorted((name, sorted(value) if isinstance(value, (set, frozenset)) else value)
                      for name, value in vars(options).items())  # a set's repr follows the hash seed
    written = repr((FORMAT, model.source, model.parameters, model.derived, model.constraints, model.settings,
                    model.max_closure_values, plan.order, type(options).__name__, settings, tuple(with_derived),
                    funnel, wide))
    if " at 0x" in written:  # an object known only by its address: its behaviour is not written here
        return None
    return hashlib.sha256((generator_version() + "\0" + written).encode()).hexdigest()


def load_generated(key: str) -> Generated | None:
    """The remembered generator output for `key`, or None (absent, unreadable, another key)."""
    try:
        entry = read_entry("plan", key, FORMAT)
        if entry is None:
            return None
        return Generated(
            source=entry["source"],
            columns=[Column(c["name"], c["dtype"], c["ctype"],
                            None if c["categorical"] is None else tuple(c["categorical"])) for c in entry["columns"]],
            items=list(entry["items"]), max_prefix_depth=int(entry["max_prefix_depth"]),
            codes={str(k): int(v) for k, v in entry["codes"].items()}, count_words=int(entry["count_words"]),
            hoisted=tuple(entry["hoisted"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def store_generated(key: str, generated: Generated) -> None:
    """Remember a generator output (atomically; a cache that cannot be written is only slower)."""
    entry = {"source": generated.source,
             "columns": [{"name": c.name, "dtype": c.dtype, "ctype": c.ctype,
                          "categorical": None if c.categorical is None else list(c.categorical)}
                         for c in generated.columns],
             "items": list(generated.items), "max_prefix_depth": generated.max_prefix_depth,
             "codes": dict(generated.codes), "count_words": generated.count_words,
             "hoisted": list(generated.hoisted)}
    write_entry("plan", key, FORMAT, entry)
    flush_simplifications()


def search_key(plan, expr, maximize: bool) -> str | None:
    """The key of a compiled search's entry: `generation_key`'s written model (default options,
    no derived columns) with the objective's IR and its direction; None where either cannot be
    written out (a closure)."""
    base = generation_key(plan, Options(), (), False, False)
    if base is None or any(isinstance(n, ir.Closure) for n in ir.walk(expr)):
        return None
    written = repr(("best", FORMAT, expr, bool(maximize)))
    if " at 0x" in written:
        return None
    return hashlib.sha256((base + "\0" + written).encode()).hexdigest()


def load_search(key: str) -> dict | None:
    """The remembered compiled search for `key` (its fields as `store_search` was given them), or
    None (absent, unreadable, another key)."""
    try:
        entry = read_entry("search", key, FORMAT)
        if entry is None or not isinstance(entry.get("fields"), dict):
            return None
        return entry["fields"]
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def store_search(key: str, fields: dict) -> None:
    """Remember a compiled search's generated fields (JSON values; atomically; a cache that
    cannot be written is only slower)."""
    write_entry("search", key, FORMAT, {"fields": fields})
    flush_simplifications()


class SimplificationStore:
    """`bounds.STORES`' entry for this cache: SymPy's simplifications of derived values, by the
    expression's text, in `simplified_<generator version>.pickle` beside the cached programs
    (the tool's own version in the name: an edit of the tool starts a new file). Read once per
    file and process; what a process adds is written by `flush` (merged with what other
    processes wrote meanwhile, atomically), which `store_generated`, `store_search` and the
    sweep call once a program is generated. A file that does not load, or holds another
    version than its name says, is a miss."""

    FORMAT = 1
    MAX_ENTRIES = 5_000   # a file past it keeps its newest entries (a validation run meets many spaces)

    def __init__(self):
        self.loaded: dict[Path, dict] = {}
        self.added: dict[Path, dict] = {}

    def path(self) -> Path:
        return cache_dir() / f"simplified_{generator_version()[:40]}.pickle"

    @classmethod
    def read(cls, path: Path) -> dict:
        import pickle   # here: a warm process that generates nothing never needs it
        try:
            with open(path, "rb") as handle:
                entry = pickle.load(handle)
            if (isinstance(entry, dict) and entry.get("format") == cls.FORMAT
                    and entry.get("version") == generator_version() and isinstance(entry.get("entries"), dict)):
                return entry["entries"]
        except (OSError, EOFError, ValueError, TypeError, AttributeError, ImportError, IndexError,
                pickle.UnpicklingError):
            pass
        return {}

    def get(self, key):
        path = self.path()
        if path not in self.loaded:
            self.loaded[path] = self.read(path)
        return self.loaded[path].get(key, bounds.MISSING)

    def put(self, key, value) -> None:
        if self.get(key) != value:   # unknown (MISSING) or another value
            path = self.path()
            self.loaded[path][key] = value
            self.added.setdefault(path, {})[key] = value

    def flush(self) -> None:
        """Write what this process added (a cache that cannot be written is only slower)."""
        import pickle
        for path, added in list(self.added.items()):
            entries = {**self.read(path), **added}
            if len(entries) > self.MAX_ENTRIES:
                entries = dict(list(entries.items())[-self.MAX_ENTRIES:])
            try:
                write_atomically(path, pickle.dumps({"format": self.FORMAT, "version": generator_version(),
                                                     "entries": entries}))
            except (OSError, pickle.PicklingError, TypeError, AttributeError):
                pass
            del self.added[path]


SIMPLIFICATIONS = SimplificationStore()
if not any(isinstance(store, SimplificationStore) for store in bounds.STORES):
    bounds.STORES.append(SIMPLIFICATIONS)


def flush_simplifications() -> None:
    """Write the simplifications this process found (the store `bounds.STORES` holds)."""
    for store in bounds.STORES:
        if isinstance(store, SimplificationStore):
            store.flush()
