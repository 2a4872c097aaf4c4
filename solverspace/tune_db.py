"""The measurement store of `tune`: one SQLite file (standard library `sqlite3`).

Tables:

- `runs`: one row per run identity (`run`: a hash of the space as loaded, its settings, the
  bound expression, the measurement and its repeat/aggregate settings; `tune.run_identity`), with
  what it was and the summary of its last finished search (`status`, `proven`, best time, gap).
- `measurements`: one row per (run, configuration): the configuration as JSON in definition
  order, `key` (canonical JSON, sorted names: the lookup key), the times of each repeat (JSON
  list), their aggregate, the bound (exact text and as a number), the status (`ok`, `failed`,
  `timeout`, `invalid output`, `below bound`), the bottleneck term of the model there, what went
  wrong (`error`), the seconds spent, when.
- `pruned`: per run, the largest subtrees cut by their bound in the last search (the loop
  parameters bound, their bound, the term that set it, every term's lower bound as JSON).

Each measurement is committed when it is recorded, so an interrupted run loses nothing; a run
with the same identity reuses the rows, and rows of other identities are never read as results.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from .errors import OutputError

SCHEMA = 1
APPLICATION = "solverspace tune"

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS runs (
    run TEXT PRIMARY KEY, space TEXT, settings TEXT, bound TEXT, measure TEXT, repeat INTEGER,
    aggregate TEXT, created REAL, finished REAL, status TEXT, proven INTEGER, best_time REAL,
    lower_bound REAL, gap REAL);
CREATE TABLE IF NOT EXISTS measurements (
    run TEXT NOT NULL, key TEXT NOT NULL, configuration TEXT, times TEXT, value REAL, bound TEXT,
    bound_value REAL, status TEXT, bottleneck TEXT, error TEXT, seconds REAL, measured_at REAL,
    PRIMARY KEY (run, key));
CREATE TABLE IF NOT EXISTS pruned (
    run TEXT NOT NULL, rank INTEGER, prefix TEXT, depth INTEGER, bound TEXT, bound_value REAL,
    bottleneck TEXT, terms TEXT, PRIMARY KEY (run, rank));
"""


def canonical_key(configuration: dict) -> str:
    """The lookup key of a configuration: JSON with sorted names, orders as lists."""
    return json.dumps(configuration, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def default_path(source: str, builtin: str | None = None) -> str:
    """Where `tune` keeps its measurements by default: `<space stem>.tune.sqlite` next to the
    space file; for a built-in space (`gemm`) in the current directory; for a space given as
    text (no file) in memory only (":memory:", nothing kept)."""
    if builtin is not None:
        return str(Path.cwd() / f"{builtin}.tune.sqlite")
    path = Path(source)
    if not path.is_file():
        return ":memory:"
    return str(path.with_name(f"{path.stem}.tune.sqlite"))


class TuneDB:
    """The rows of one run identity in a tune database."""

    def __init__(self, path: str, run: str, description: dict):
        self.path, self.run = str(path), run
        try:
            self.db = sqlite3.connect(self.path)
            self._check_or_create()
            self.db.execute("INSERT OR IGNORE INTO runs (run, space, settings, bound, measure, repeat, aggregate, "
                            "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            (run, description["space"], json.dumps(description["settings"], default=str),
                             description["bound"], description["measure"], description["repeat"],
                             description["aggregate"], time.time()))
            self.db.commit()
            self.reusable = self.db.execute("SELECT COUNT(*) FROM measurements WHERE run = ?", (run,)).fetchone()[0]
            self.others = self.db.execute("SELECT COUNT(*) FROM measurements WHERE run != ?", (run,)).fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise OutputError(f"tune database {self.path!r}: {exc}",
                              hint="give another file with --db (db=...): it is created when missing") from None

    def _check_or_create(self) -> None:
        tables = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "meta" not in tables:
            raise OutputError(f"{self.path!r} is an SQLite database of something else, not a tune database",
                              hint="give another file with --db (db=...)")
        self.db.executescript(_TABLES)
        found = dict(self.db.execute("SELECT key, value FROM meta"))
        if not found:
            self.db.executemany("INSERT INTO meta VALUES (?, ?)", [("application", APPLICATION),
                                                                  ("schema", str(SCHEMA))])
            self.db.commit()
        elif found.get("application") != APPLICATION or found.get("schema") != str(SCHEMA):
            raise OutputError(f"{self.path!r} is not a tune database of this version "
                              f"({found.get('application')!r}, schema {found.get('schema')!r})",
                              hint="give another file with --db (db=...)")

    # ------------------------------------------------------------------------------ measurements
    def lookup(self, key: str) -> dict | None:
        row = self.db.execute("SELECT times, value, status, error FROM measurements WHERE run = ? AND key = ?",
                              (self.run, key)).fetchone()
        if row is None:
            return None
        return {"times": json.loads(row[0]), "value": row[1], "status": row[2], "error": row[3]}

    def record(self, key: str, configuration: dict, times: list, value, bound, status: str,
               bottleneck: str | None, error: str | None, seconds: float) -> None:
        """One measured configuration, committed at once."""
        self.db.execute("INSERT OR REPLACE INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (self.run, key, json.dumps(configuration, ensure_ascii=False), json.dumps(times),
                         value, str(bound), float(bound), status, bottleneck, error, seconds, time.time()))
        self.db.commit()

    def record_pruned(self, cuts: list) -> None:
        """The largest pruned subtrees of the last search (replacing an earlier search's)."""
        self.db.execute("DELETE FROM pruned WHERE run = ?", (self.run,))
        self.db.executemany("INSERT INTO pruned VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [(self.run, rank, json.dumps(cut.prefix, ensure_ascii=False), cut.depth, str(cut.bound),
                              float(cut.bound), cut.bottleneck,
                              json.dumps([[term, _number(lo)] for term, lo in cut.terms]))
                             for rank, cut in enumerate(cuts, 1)])
        self.db.commit()

    def finish(self, status: str, proven: bool, best_time, lower, gap) -> None:
        self.db.execute("UPDATE runs SET finished = ?, status = ?, proven = ?, best_time = ?, lower_bound = ?, "
                        "gap = ? WHERE run = ?",
                        (time.time(), status, int(proven), best_time, _number(lower), _number(gap), self.run))
        self.db.commit()

    def close(self) -> None:
        self.db.close()


def _number(value):
    """A bound for a REAL column (None stays None; infinities become None: no bound)."""
    if value is None:
        return None
    value = float(value)
    return value if value not in (float("inf"), float("-inf")) else None


__all__ = ["TuneDB", "canonical_key", "default_path"]
