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

- `locks`: the run identities being tuned now (process id, host, since): a second `tune` of
  the same run is refused while the first is alive; a lock left by a dead process is taken over.

Each measurement is committed when it is recorded, so an interrupted run loses nothing; a run
with the same identity reuses the rows, and rows of other identities are never read as results.
A write that fails (the file locked by another program past `BUSY_TIMEOUT`, a directory made
read-only, a full disk) is retried once waiting `RETRY_TIMEOUT`; then the measurement just made
is set aside in a side file (`<db>.unsaved.jsonl`, else in the temporary directory), which the
next run reads back into the database, and `tune` stops saying what was kept.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import sqlite3
import sys
import tempfile
import time
import uuid
from fractions import Fraction
from pathlib import Path

from solverspace.core.errors import OptionError, OutputError

SCHEMA = 1
APPLICATION = "solverspace tune"
BUSY_TIMEOUT = 5.0      # seconds a write waits for a lock held by another connection
RETRY_TIMEOUT = 60.0    # the longer wait of the one retry of a failed write
_HELD: set = set()      # the lock tokens this process holds (a same-pid lock not in it is stale)

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
CREATE TABLE IF NOT EXISTS locks (run TEXT PRIMARY KEY, pid INTEGER, host TEXT, started TEXT, token TEXT,
    since REAL);
"""


class _WriteFailed(Exception):
    """A write failed twice (the second time after waiting `RETRY_TIMEOUT`)."""


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


def check_path(path: str) -> None:
    """A database path SQLite can open and write: not a directory, in a directory that exists and
    where a file can be created (SQLite creates the database and its journal there; it would only
    say "unable to open database file", or fail at the first write)."""
    if path == ":memory:":
        return
    where = Path(path)
    if where.is_dir():
        raise OutputError(f"tune database {path!r} is a directory",
                          hint=f"give --db (db=...) a file, e.g. {where / 'space.tune.sqlite'}")
    parent = where.parent
    if parent.exists() and not parent.is_dir():
        raise OutputError(f"tune database {path!r}: {str(parent)!r} is not a directory",
                          hint="give --db (db=...) a file in a directory")
    if not parent.is_dir():
        raise OutputError(f"tune database {path!r}: the directory {str(parent)!r} does not exist",
                          hint="create it, or give --db (db=...) a file in an existing directory")
    probe = parent / f".{where.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.probe"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise OutputError(f"tune database {path!r}: the directory {str(parent)!r} is not writable "
                          f"({exc.strerror or exc}): SQLite creates the database and its journal there",
                          hint="give --db (db=...) a file in a directory you can write") from None
    probe.unlink(missing_ok=True)
    if where.exists() and not os.access(where, os.R_OK | os.W_OK):
        raise OutputError(f"tune database {path!r}: the file is not writable (or not readable): tune records "
                          "every measurement there", hint="give --db (db=...) a file you can read and write, "
                                                          f"or make it so (chmod u+rw {path})")


class TuneDB:
    """The rows of one run identity in a tune database, locked for this process while open."""

    def __init__(self, path: str, run: str, description: dict):
        self.path, self.run = str(path), run
        self.token: str | None = None
        self.kept = 0               # measurements this run committed
        self.read_back = 0          # set-aside measurements of an earlier run read back
        check_path(self.path)
        try:
            self.db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT)
        except sqlite3.Error as exc:
            raise OutputError(f"tune database {self.path!r}: {exc}",
                              hint="give another file with --db (db=...): it is created when missing") from None
        try:
            self._open(description)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise OutputError(f"tune database {self.path!r}: {exc}",
                              hint="give another file with --db (db=...): it is created when missing") from None
        except BaseException:
            self.close()
            raise

    def _open(self, description: dict) -> None:
        self._check_or_create()
        self._lock()
        self.read_back = self._read_back()
        self.db.execute("INSERT OR IGNORE INTO runs (run, space, settings, bound, measure, repeat, aggregate, "
                        "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (self.run, description["space"], json.dumps(description["settings"], default=str),
                         description["bound"], description["measure"], description["repeat"],
                         description["aggregate"], time.time()))
        self.db.commit()
        self.reusable = self._count("run = ?")
        self.others = self._count("run != ?")
        self.created = self.db.execute("SELECT created FROM runs WHERE run = ?", (self.run,)).fetchone()[0]

    def _count(self, where: str) -> int:
        return self.db.execute(f"SELECT COUNT(*) FROM measurements WHERE {where}", (self.run,)).fetchone()[0]

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

    # ------------------------------------------------------------------------------ one tune per run
    def _lock(self) -> None:
        """Take this run's lock, or refuse: two `tune` processes on one run would measure the same
        configurations twice. A lock whose process is gone is taken over."""
        if self.path == ":memory:":
            return                  # private to this connection
        self.db.execute("BEGIN IMMEDIATE")
        try:
            row = self.db.execute("SELECT pid, host, started, token, since FROM locks WHERE run = ?",
                                  (self.run,)).fetchone()
            if row is not None and _alive(*row[:4]):
                pid, host, _, _, since = row
                raise OutputError(
                    f"tune database {self.path!r}: this run ({self.run}) is being tuned now by process {pid} on "
                    f"{host} (since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))}); two tune "
                    "processes on one run would measure the same configurations twice",
                    hint="wait for it to finish (its measurements are then reused) or stop it; if that process "
                         f"is gone, remove its lock: sqlite3 {self.path} \"DELETE FROM locks WHERE run = '{self.run}'\"")
            token = uuid.uuid4().hex
            self.db.execute("INSERT OR REPLACE INTO locks VALUES (?, ?, ?, ?, ?, ?)",
                            (self.run, os.getpid(), socket.gethostname(), _start_time(os.getpid()), token,
                             time.time()))
            self.db.commit()
        except BaseException:
            self.db.rollback()
            raise
        self.token = token
        _HELD.add(token)

    def _unlock(self) -> None:
        if self.token is None:
            return
        _HELD.discard(self.token)
        try:
            self.db.execute("DELETE FROM locks WHERE run = ? AND token = ?", (self.run, self.token))
            self.db.commit()
        except sqlite3.Error:
            pass                    # left behind: the next run finds its process gone and takes it over
        self.token = None

    # ------------------------------------------------------------------------------ measurements
    def lookup(self, key: str) -> dict | None:
        """The stored measurement of a configuration (None: not measured yet); a database that
        cannot be read (locked past both waits) stops the search with what was kept."""
        found: list = []
        try:
            self._write(lambda db: found.append(db.execute(
                "SELECT times, value, status, error FROM measurements WHERE run = ? AND key = ?",
                (self.run, key)).fetchone()))
        except _WriteFailed as exc:
            raise OutputError(
                f"tune database {self.path!r}: cannot read it ({exc}; waited {BUSY_TIMEOUT:g} s, then "
                f"{RETRY_TIMEOUT:g} s more): tune stopped. Kept in the database: the {self.reusable} measurement(s) "
                f"of this run stored before it and the {self.kept} it recorded",
                hint="free the database (another program holds it locked), then run again: stored measurements "
                     "are reused") from None
        row = found[-1]
        if row is None:
            return None
        return {"times": json.loads(row[0]), "value": row[1], "status": row[2], "error": row[3]}

    def record(self, key: str, configuration: dict, times: list, value, bound, status: str,
               bottleneck: str | None, error: str | None, seconds: float) -> None:
        """One measured configuration, committed at once; when that fails for good, set aside
        (never lost) and `OutputError` saying what was kept."""
        row = [self.run, key, json.dumps(configuration, ensure_ascii=False), json.dumps(times), value,
               bound_text(bound), _real(bound), status, bottleneck, error, seconds, time.time()]
        try:
            self._write(lambda db: db.execute("INSERT OR REPLACE INTO measurements VALUES "
                                              "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row))
        except _WriteFailed as exc:
            where = self._set_aside(row)
            raise OutputError(
                f"tune database {self.path!r}: cannot record a measurement ({exc}; waited {BUSY_TIMEOUT:g} s, "
                f"then {RETRY_TIMEOUT:g} s more): tune stopped. Kept in the database: the {self.reusable} "
                f"measurement(s) of this run stored before it and the {self.kept} it recorded; the measurement just "
                f"made ({json.dumps(configuration, ensure_ascii=False)}: {status}, {value} s) {where}",
                hint="free the database (another program holds it locked) or make its directory writable, then run "
                     "again: stored measurements are reused and the set-aside one is read back") from None
        self.kept += 1

    def stored(self) -> list[dict]:
        """Every stored measurement of this run, oldest first: its configuration (as recorded),
        times, value, status and error (a strategy search is told them all before it proposes)."""
        rows = self.db.execute("SELECT configuration, times, value, status, error FROM measurements WHERE run = ? "
                               "ORDER BY measured_at, rowid", (self.run,)).fetchall()
        return [{"configuration": json.loads(c), "times": json.loads(t), "value": v, "status": st, "error": e}
                for c, t, v, st, e in rows]

    def forget(self, keys: list) -> None:
        """Remove rows of this run (failures that say nothing about their configuration)."""
        try:
            self._write(lambda db: db.executemany("DELETE FROM measurements WHERE run = ? AND key = ?",
                                                  [(self.run, k) for k in keys]))
        except _WriteFailed:
            pass                    # they stay recorded as failed: still correct, only not retried

    def record_pruned(self, cuts: list) -> None:
        """The largest pruned subtrees of the last search (replacing an earlier search's)."""
        rows = [(self.run, rank, json.dumps(cut.prefix, ensure_ascii=False), cut.depth, bound_text(cut.bound),
                 _real(cut.bound), cut.bottleneck, json.dumps([[term, _number(lo)] for term, lo in cut.terms]))
                for rank, cut in enumerate(cuts, 1)]

        def write(db):
            db.execute("DELETE FROM pruned WHERE run = ?", (self.run,))
            db.executemany("INSERT INTO pruned VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        self._write(write)

    def finish(self, status: str, proven: bool, best_time, lower, gap) -> None:
        self._write(lambda db: db.execute(
            "UPDATE runs SET finished = ?, status = ?, proven = ?, best_time = ?, lower_bound = ?, gap = ? "
            "WHERE run = ?", (time.time(), status, int(proven), best_time, _number(lower), _number(gap), self.run)))

    def close(self) -> None:
        self._unlock()
        self.db.close()

    # ------------------------------------------------------------------------------ failing writes
    def _write(self, statements) -> None:
        """Run `statements(db)` and commit (a read too: it may meet a lock); retried once waiting
        `RETRY_TIMEOUT` for a lock; `_WriteFailed` when the retry fails too."""
        for attempt in (1, 2):
            try:
                statements(self.db)
                self.db.commit()
                return
            except sqlite3.Error as exc:
                try:
                    self.db.rollback()
                except sqlite3.Error:
                    pass
                if attempt == 2:
                    raise _WriteFailed(str(exc)) from None
                self.db.execute(f"PRAGMA busy_timeout = {int(RETRY_TIMEOUT * 1000)}")

    def _side_files(self) -> list[Path]:
        """Where set-aside measurements go: beside the database, else in the temporary directory
        (named after the database's absolute path)."""
        if self.path == ":memory:":
            return []
        absolute = os.path.abspath(self.path)
        digest = hashlib.sha256(absolute.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return [Path(absolute + ".unsaved.jsonl"),
                Path(tempfile.gettempdir()) / f"solverspace-tune-{digest}.unsaved.jsonl"]

    def _set_aside(self, row: list) -> str:
        line = json.dumps(row, ensure_ascii=False) + "\n"
        for side in self._side_files():
            try:
                with open(side, "a", encoding="utf-8") as out:
                    out.write(line)
                return f"was written to {side} (the next run reads it back into the database)"
            except OSError:
                continue
        return f"could not be written anywhere; here it is: {line.strip()}"

    def _read_back(self) -> int:
        """Measurements an earlier run set aside, read back into the database (then the side
        file is removed). Returns how many."""
        rows = []
        for side in self._side_files():
            try:
                lines = side.read_text(encoding="utf-8").splitlines()
            except OSError:
                continue
            for line in lines:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue        # a line cut by a crash
                if isinstance(row, list) and len(row) == 12:
                    rows.append((side, row))
        if not rows:
            return 0
        self.db.executemany("INSERT OR IGNORE INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [row for _, row in rows])
        self.db.commit()
        for side in {side for side, _ in rows}:
            try:
                side.unlink()
            except OSError:
                pass                # read back again next time: INSERT OR IGNORE
        return len(rows)


def _alive(pid: int, host: str, started, token) -> bool:
    """Whether the process holding a lock may still be running (another host: assume so)."""
    if host != socket.gethostname():
        return True
    if pid == os.getpid():
        return token in _HELD
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return started is None or _start_time(pid) in (None, started)


def _start_time(pid: int) -> str | None:
    """When a process started (Linux: /proc/PID/stat field 22), to tell a reused pid apart."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()[19]


def bound_text(value) -> str:
    """A bound's exact text: an int, a fraction "n/d", "undefined" (-inf: no bound)."""
    if value == -math.inf:
        return "undefined"
    if isinstance(value, float):
        return repr(value)
    exact = Fraction(value)
    return _digits(exact.numerator) + ("" if exact.denominator == 1 else f"/{_digits(exact.denominator)}")


def _digits(value: int) -> str:
    """An int's decimal text, past Python's 4,300-digit conversion limit too."""
    try:
        return str(value)
    except ValueError:
        limit = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            return str(value)
        finally:
            sys.set_int_max_str_digits(limit)


def _real(value):
    """A bound for a REAL column: a float (±inf past the float range); None when undefined."""
    if value is None or value == -math.inf:
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _number(value):
    """A bound for a REAL column (None stays None; infinities become None: no bound)."""
    value = _real(value)
    return value if value is None or math.isfinite(value) else None


__all__ = ["BUSY_TIMEOUT", "RETRY_TIMEOUT", "TuneDB", "bound_text", "canonical_key", "check_path", "default_path"]


def measured_values(db) -> list[tuple[dict, object, str]]:
    """(configuration, value, status) of every measurement of every run in a `tune` database,
    opened read-only: what another device's search reads as a prior (`solverspace.strategies.prior`)."""
    try:
        con = sqlite3.connect(f"file:{Path(db)}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT configuration, value, status FROM measurements").fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise OptionError(f"{str(db)!r} is not a tune database ({exc})",
                          hint="give a database written by `solverspace tune`, or a Kernel Tuner cache") from None
    return [(json.loads(text), value, status) for text, value, status in rows]


def read_records(db, run: str | None = None) -> tuple[str, list[dict]]:
    """(run identity, its measurements in the order they were made) from a `tune` database, opened
    read-only; `run`: which run (None: the only run holding measurements; several: refused, listed).
    Other tools read measurements only through this (the Optuna export among them)."""
    path = Path(db)
    if not path.is_file():
        raise OptionError(f"tune database {str(db)!r} does not exist", hint="give the file `tune` wrote (--db)")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise OptionError(f"tune database {str(db)!r}: {exc}") from None
    try:
        try:
            meta = dict(con.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError:
            meta = {}
        if meta.get("application") != APPLICATION:
            raise OptionError(f"{str(db)!r} is not a tune database", hint="give the file `tune` wrote (--db)")
        runs = con.execute("SELECT r.run, r.space, r.measure, COUNT(m.key) FROM runs r JOIN measurements m "
                           "ON m.run = r.run GROUP BY r.run ORDER BY r.created").fetchall()
        if run is None:
            if len(runs) != 1:
                listed = "; ".join(f"{r} ({space}, measure {measure!r}: {n} measurements)"
                                   for r, space, measure, n in runs) or "none"
                raise OptionError(f"tune database {str(db)!r} holds measurements of {len(runs)} runs: {listed}",
                                  hint="name one with run=RUN" if runs else "run tune first")
            run = runs[0][0]
        elif run not in {r[0] for r in runs}:
            raise OptionError(f"tune database {str(db)!r} has no measurements of run {run!r}",
                              hint=f"runs there: {', '.join(r[0] for r in runs) or 'none'}")
        rows = con.execute("SELECT key, configuration, times, value, bound, bound_value, status, bottleneck, error, "
                           "seconds, measured_at FROM measurements WHERE run = ? ORDER BY measured_at, key",
                           (run,)).fetchall()
    finally:
        con.close()
    columns = ("key", "configuration", "times", "value", "bound_exact", "bound", "status", "bottleneck", "error",
               "seconds", "measured_at")
    records = []
    for row in rows:
        record = dict(zip(columns, row))
        record["configuration"] = json.loads(record["configuration"])
        record["times"] = json.loads(record["times"])
        record["run"] = run
        records.append(record)
    return run, records
