"""Kernel Tuner cache files as records of `tune`, and T4 results files.

Kernel Tuner's cache format (`kernel_tuner.util.process_cache`, `store_cache`, `read_cache`,
version 1.5): one JSON object

    {"device_name": ..., "kernel_name": ..., "problem_size": ..., "tune_params_keys": [names in order],
     "tune_params": {name: [values]}, "objective": "time",
     "cache": {"v1,v2,...": {name: value, ..., "time": ms, "times": [ms, ...], ...}, ...}}

written *open*: the header up to `"cache": {`, then one line per result (`\\n"key": {...},`), and
closed (`}\\n}` in place of the last comma) at the end. The key of a configuration is its values in
`tune_params_keys` order, each as Python's `str`, joined by commas. A failed configuration has the
string `InvalidConfig`, `CompilationFailedConfig` or `RuntimeFailedConfig` as its time (any field
holding one of those, or `ErrorConfig`, marks the entry failed). Times are milliseconds.

- `read_cache(path)`: a cache as Kernel Tuner reads it: an open (still being written, or cut after a
  complete line) file is closed in memory first, exactly as `kernel_tuner.util.correct_open_cache`
  does; the file itself is never changed. It is read through `core.sources` (a regular file of at
  most 1 GiB, decompressed to at most as much when gzip-compressed, as the benchmark hub ships its
  caches; JSON nested too deeply is refused by name). A key given twice with different
  entries is kept as Kernel Tuner keeps it (the later), and remembered (`repeated_keys`); so is an
  entry whose parameter fields are not its key (`disagreeing_fields`): `check_cache` reports both,
  and `CacheMeasure` refuses to take a time from either.
- `CacheWriter`: a `tune` sink (`solverspace.analysis.tune.Sink`) writing each measurement as it is
  made, in Kernel Tuner's own layout, so Kernel Tuner (and KernelTuner/dashboard) reads a running
  `tune`, resumes from it, or simulates from it. An existing cache of the same kernel, device and
  parameters is continued (entries already there are not written twice, as Kernel Tuner does);
  one of anything else is refused, the difference named. Our statuses: `ok` and `below bound`
  are times; `failed`, `timeout` and `invalid output` are `RuntimeFailedConfig`.
- `CacheMeasure`: a `tune` measurement (`solverspace.analysis.tune.Measurer`) taking the time of a
  configuration from a complete cache (milliseconds / 1000 = seconds); a failed entry is a failed
  measurement; a valid configuration the cache lacks stops `tune` (the cache is not complete:
  `solverspace cache-check` lists what is missing). A cache of other parameters, or of the same
  parameters in another order, is refused with the difference named.
- `check_cache(space, path)`: the valid configurations a cache lacks (they crash Kernel Tuner's
  simulation mode) and its entries the space calls invalid (an entry marked `InvalidConfig` that
  the space also calls invalid agrees with it and is not counted).
- `T4Writer`: a sink writing the run's measurements as a T4 results file (the community's results
  schema, odgaard/TuningSchema `results-schema.json`, version 1.0.0; as Kernel Tuner's
  `get_t4_results` writes it) when `tune` ends.
"""
from __future__ import annotations

import hashlib
import json
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from solverspace.core.errors import OptionError, OutputError
from solverspace.core.sources import check_output_target, read_bytes, read_json, read_limit, read_text

__all__ = ["ERROR_STRINGS", "CacheCheck", "CacheMeasure", "CacheWriter", "T4Writer", "cache_key", "check_cache",
           "disagreeing_fields", "entry_error", "read_cache", "repeated_keys"]

ERROR_STRINGS = ("ErrorConfig", "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig")
FAILED = "RuntimeFailedConfig"      # what our failed, timeout and invalid-output measurements are written as
T4_SCHEMA_VERSION = "1.0.0"
T4_INVALIDITY = {"ok": "correct", "below bound": "correct", "failed": "runtime", "timeout": "timeout",
                 "invalid output": "runtime"}


def cache_key(values) -> str:
    """Kernel Tuner's key of a configuration: its values (in `tune_params_keys` order) as `str`, joined by commas."""
    return ",".join(str(v) for v in values)


def _plain(value):
    """A value as JSON holds it (an order, a tuple, as a list)."""
    return list(value) if isinstance(value, tuple) else value


def entry_error(entry: dict) -> str | None:
    """The Kernel Tuner error string marking an entry failed (None: it has results)."""
    for value in entry.values():
        if isinstance(value, str) and value in ERROR_STRINGS:
            return value
    return None


# ---------------------------------------------------------------------------------- reading
CACHE = "Kernel Tuner cache"
_READ_HINT = "give the path of a cache file written by Kernel Tuner (cache=...) or --kt-cache"
REPEATED = "__repeated__"       # the key of `read_cache`'s record of keys given twice with different entries


GZIP_MAGIC = b"\x1f\x8b"


def read_cache_bytes(path) -> bytes:
    """The bytes of a cache file (`core.sources.read_bytes`: a regular file, bounded), decompressed
    when it is gzip-compressed (`.json.gz`), at most the same bound decompressed."""
    data = read_bytes(path, CACHE, error=OutputError, hint=_READ_HINT)
    if not data.startswith(GZIP_MAGIC):
        return data
    limit, plain, rest = read_limit(CACHE), b"", data
    while rest:                                # one gzip member after another, as gzip.open reads them
        inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            plain += inflate.decompress(rest, limit + 1 - len(plain))
        except zlib.error as exc:
            raise OutputError(f"{CACHE} {str(path)!r} is gzip-compressed but cannot be decompressed: {exc}",
                              hint="give the cache again, complete (or decompressed)") from None
        if len(plain) > limit:
            raise OutputError(f"{CACHE} {str(path)!r} decompresses to more than the {limit:,} bytes read for a "
                              f"{CACHE}", hint="set SOLVERSPACE_MAX_READ_BYTES to a larger number of bytes if it is "
                                               "meant to be this large")
        if not inflate.eof:
            raise OutputError(f"{CACHE} {str(path)!r} is gzip-compressed but cut short (the stream does not end)",
                              hint="give the cache again, complete (or decompressed)")
        rest = inflate.unused_data.lstrip(b"\0")   # zero padding after a member, as gzip.open skips it
    return plain


def read_cache(path, data: bytes | None = None) -> dict:
    """A Kernel Tuner cache file as Kernel Tuner 1.5 reads it (`util.read_cache(open_cache=False)`):
    an open file (no closing `}\\n}`) has a trailing comma removed and `}\\n}` appended in memory.
    Each failed entry gains `"__error__"`: its error string; keys given twice with different entries
    are recorded (`repeated_keys`). Not a cache: `OutputError` naming the file. `data`: the file's
    bytes, when read already."""
    path = Path(path)
    data = read_cache_bytes(path) if data is None else data
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise OutputError(f"{CACHE} {str(path)!r} is not UTF-8 text (byte offset {exc.start})",
                          hint=_READ_HINT) from None
    if text and text[-3:] not in ("}\n}", "}}}"):
        if text[-1] == ",":
            text = text[:-1]
        text += "}\n}"
    repeated: dict = {}         # id(object) -> (the object, {key: [its entries, in file order]})

    def pairs(items: list) -> dict:
        result = dict(items)
        if len(result) != len(items):
            seen: dict = {}
            for key, value in items:
                seen.setdefault(key, []).append(value)
            repeated[id(result)] = (result, {k: v for k, v in seen.items() if len(v) > 1})
        return result
    cache = read_json(text, path, CACHE, error=OutputError, object_pairs_hook=pairs,
                      invalid="is not readable as Kernel Tuner reads it",
                      hint="a cache cut inside a line (a crash while writing) must be repaired by removing its "
                           "last, partial line")
    if not isinstance(cache, dict) or not isinstance(cache.get("cache"), dict) \
            or not isinstance(cache.get("tune_params_keys"), list):
        raise OutputError(f"{str(path)!r} is not a Kernel Tuner cache file (no \"tune_params_keys\" and \"cache\")",
                          hint="give a cache file written by Kernel Tuner (cache=...) or by `tune --kt-cache`")
    twice = repeated.get(id(cache["cache"]), (None, {}))[1]
    cache[REPEATED] = {key: entries for key, entries in twice.items()
                       if any(entry != entries[0] for entry in entries[1:])}
    for entry in cache["cache"].values():
        error = entry_error(entry) if isinstance(entry, dict) else None
        if error is not None:
            entry["__error__"] = error
    return cache


def repeated_keys(data: dict) -> dict:
    """{key: [its entries, in file order]} of the keys a cache (`read_cache`) gives twice or more
    with different entries (Kernel Tuner, as JSON, keeps the last)."""
    return data.get(REPEATED, {})


def disagreeing_fields(entry, names: list, key: str) -> str | None:
    """The key an entry's parameter fields make when it holds every parameter and that is not its
    key (None otherwise): the entry's fields say one configuration, its key another."""
    if not isinstance(entry, dict) or not all(n in entry for n in names):
        return None
    fields = cache_key(entry[n] for n in names)
    return None if fields == key else fields


def _objective_text(value) -> str:
    """A cached objective for a message (an integer of any length without converting it to text)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length():,} bits"
    return repr(value)[:80]


def _parameter_difference(cached: list, ours: list) -> str | None:
    """What differs between a cache's `tune_params_keys` and the space's parameters (None: equal)."""
    if cached == ours:
        return None
    if sorted(map(str, cached)) == sorted(ours):
        return (f"the same parameters in another order: the cache has {cached}, the space {ours} (Kernel Tuner "
                "looks configurations up by their values in this order)")
    missing = [p for p in ours if p not in cached]
    extra = [p for p in cached if p not in ours]
    parts = []
    if missing:
        parts.append(f"the cache lacks {missing}")
    if extra:
        parts.append(f"the cache has parameters the space does not: {extra}")
    return "other parameters: " + "; ".join(parts)


def _check_header(data: dict, space, path, kernel_name: str | None, device_name: str | None) -> None:
    names = list(space.parameters)
    difference = _parameter_difference(data["tune_params_keys"], names)
    if difference:
        raise OptionError(f"Kernel Tuner cache {str(path)!r} is for {difference}",
                          hint="give the cache of this space (the same parameters in the same order)")
    for what, expected in (("kernel_name", kernel_name), ("device_name", device_name)):
        if expected is not None and data.get(what) != expected:
            raise OptionError(f"Kernel Tuner cache {str(path)!r} is for another {what.split('_')[0]}: "
                              f"{data.get(what)!r}, not {expected!r}",
                              hint=f"give the cache of {expected!r}, or leave the {what.replace('_', ' ')} out")


# ---------------------------------------------------------------------------------- measuring from a cache
class CacheMeasure:
    """Measurements from a complete Kernel Tuner cache (a `tune.Measurer`)."""

    def __init__(self, space, path, *, kernel_name: str | None = None, device_name: str | None = None,
                 objective: str = "time"):
        self.path = Path(path)
        raw = read_cache_bytes(self.path)
        self.data = read_cache(self.path, raw)
        _check_header(self.data, space, self.path, kernel_name, device_name)
        self.names = list(space.parameters)
        self.objective = objective
        self.describe = f"kernel-tuner-cache:{self.path.resolve()}#{objective}"
        self.identity = hashlib.sha256(raw).hexdigest()[:20]
        self.cache = self.data["cache"]
        self.repeated = repeated_keys(self.data)

    def __str__(self) -> str:
        return self.describe

    def once(self, configuration: dict) -> float:
        from solverspace.analysis.tune_measure import DidNotRun, time_of
        values = [configuration[n] for n in self.names]
        key = cache_key(values)
        entry = self.cache.get(key)
        if entry is None:
            raise OptionError(
                f"--measure-from {str(self.path)!r}: the configuration {key} ({', '.join(self.names)}) is not in the "
                f"cache: it is not complete",
                hint="list what the cache lacks with `solverspace cache-check SPACE CACHE`; measure those first")
        if key in self.repeated:
            times = ", ".join(_objective_text(e.get(self.objective)) if isinstance(e, dict) else _objective_text(e)
                              for e in self.repeated[key])
            raise OptionError(f"--measure-from {str(self.path)!r}: the key {key} is given {len(self.repeated[key])} "
                              f"times with different entries ({self.objective}: {times}): which one was measured?",
                              hint="keep one entry of each key; `solverspace cache-check SPACE CACHE` lists them all")
        fields = disagreeing_fields(entry, self.names, key)
        if fields is not None:
            raise OptionError(f"--measure-from {str(self.path)!r}: the entry of key {key} holds the parameter "
                              f"values {fields}: its key and its fields name different configurations",
                              hint="correct the key or the fields; `solverspace cache-check SPACE CACHE` lists them all")
        if "__error__" in entry:
            raise DidNotRun("failed", f"Kernel Tuner: {entry['__error__']}")
        if self.objective not in entry:
            raise DidNotRun("invalid output", f"the cache entry has no {self.objective!r}")
        value = entry[self.objective]
        text = _objective_text(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                value = value / 1000.0
            except OverflowError:
                raise DidNotRun("invalid output", f"the cache's {self.objective} {text} (ms) is past the range of a "
                                                  f"float: not a time") from None
        return time_of(value, text)


# ---------------------------------------------------------------------------------- writing as tune measures
class CacheWriter:
    """A `tune` sink writing Kernel Tuner's cache format as the measurements are made."""

    def __init__(self, space, path, *, kernel_name: str | None = None, device_name: str = "solverspace tune",
                 problem_size=None, tune_params: dict | None = None, objective: str = "time"):
        self.path = Path(path)
        self.names = list(space.parameters)
        self.kernel_name = kernel_name or Path(str(space.model.source)).stem or "solverspace"
        self.device_name = device_name
        self.objective = objective
        if tune_params is None:
            tune_params = {name: [_plain(v) for v in values] for name, values in space.value_lists().items()}
        self.written: set = set()
        self.closed = False
        header = {"device_name": device_name, "kernel_name": self.kernel_name,
                  "problem_size": list(problem_size) if problem_size is not None else [],
                  "tune_params_keys": self.names, "tune_params": tune_params, "objective": objective, "cache": {}}
        if self.path.is_dir():
            raise OutputError(f"--kt-cache {str(self.path)!r} is a directory", hint="give a file name, e.g. run.json")
        if self.path.suffix == ".gz":
            raise OutputError(f"--kt-cache {str(self.path)!r}: tune writes a plain cache, a line per measurement as it "
                              "is made (as Kernel Tuner does), not a gzip-compressed one",
                              hint="give a .json name (compress it once the run is over, if you like)")
        check_output_target(self.path, "--kt-cache")
        if not self.path.parent.is_dir():
            raise OutputError(f"--kt-cache {str(self.path)!r}: the directory {str(self.path.parent)!r} does not exist",
                              hint="create it, or give a file in an existing directory")
        if self.path.exists() and self.path.stat().st_size > 0:
            self._continue(space)
        else:
            text = json.dumps(header, indent="", ensure_ascii=False)[:-3]    # open: up to `"cache": {`
            self._write(text, "w")

    def _continue(self, space) -> None:
        """Continue an existing cache of this kernel, device and parameters, as Kernel Tuner does."""
        with open(self.path, "rb") as existing:
            if existing.read(2) == GZIP_MAGIC:
                raise OutputError(f"--kt-cache {str(self.path)!r} is gzip-compressed: tune appends to a plain "
                                  "cache as it measures",
                                  hint="decompress it (gunzip) and give the .json, or give a new file")
        data = read_cache(self.path)
        _check_header(data, space, self.path, self.kernel_name, self.device_name)
        self.written = set(data["cache"])
        text = read_text(self.path, CACHE, error=OutputError).strip()
        if text[-3:] in ("}\n}", "}}}"):
            text = text[:-3] + ("," if data["cache"] else "")
            self._write(text, "w")

    def _write(self, text: str, mode: str) -> None:
        try:
            with open(self.path, mode, encoding="utf-8") as out:
                out.write(text)
                out.flush()
        except OSError as exc:
            raise OutputError(f"--kt-cache {str(self.path)!r}: cannot write: {exc.strerror or exc}",
                              hint="give a file in a writable directory") from None

    def add(self, measurement) -> None:
        values = [measurement.configuration[n] for n in self.names]
        key = cache_key(values)
        if key in self.written:
            return
        entry = {n: _plain(v) for n, v in zip(self.names, values)}
        if measurement.ran:
            entry["time"] = measurement.time * 1000.0
            entry["times"] = [t * 1000.0 for t in measurement.times]
        else:
            entry["time"] = FAILED
        entry["timestamp"] = time.strftime("%Y-%m-%d %H:%M:%S")
        self._write("\n" + json.dumps({key: entry}, ensure_ascii=False)[1:-1] + ",", "a")
        self.written.add(key)

    def close(self) -> None:
        """Close the file as Kernel Tuner's `close_cache` does (`}\\n}` in place of the last comma)."""
        if self.closed:
            return
        self.closed = True
        text = read_text(self.path, CACHE, error=OutputError)
        if text.endswith(","):
            self._write(text[:-1] + "}\n}", "w")
        elif text.endswith("{"):
            self._write(text + "}\n}", "w")

    def __repr__(self) -> str:
        return f"CacheWriter({str(self.path)!r})"


# ---------------------------------------------------------------------------------- T4 results
class T4Writer:
    """A `tune` sink writing a T4 results file (odgaard/TuningSchema results-schema.json 1.0.0) at the end."""

    def __init__(self, space, path, *, objective: str = "time"):
        self.path = Path(path)
        self.names = list(space.parameters)
        self.objective = objective
        self.results: list = []
        if self.path.is_dir() or not self.path.parent.is_dir():
            raise OutputError(f"--t4 {str(self.path)!r}: not a file in an existing directory",
                              hint="give a file name, e.g. results.json")
        # a device or a pipe is written into, once, at the end (`--t4 /dev/stdout`); unlike --kt-cache,
        # which reads what it continues, it is never read

    def add(self, measurement) -> None:
        config = {n: _plain(measurement.configuration[n]) for n in self.names}
        runtimes = [t * 1000.0 for t in measurement.times]
        result = {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%S"), "configuration": config,
                  "objectives": [self.objective], "times": {"runtimes": runtimes},
                  "invalidity": T4_INVALIDITY[measurement.status], "correctness": 1,
                  "measurements": ([{"name": self.objective, "value": measurement.time * 1000.0, "unit": "ms"}]
                                   if measurement.ran else [])}
        self.results.append(result)

    def close(self) -> None:
        if getattr(self, "written", False):
            return
        self.written = True
        document = {"schema_version": T4_SCHEMA_VERSION, "results": self.results,
                    "metadata": {"timeunit": "milliseconds"}}
        from solverspace.core.output import atomic_output   # a device or pipe (/dev/null) written, never replaced
        with atomic_output(self.path, "w", option="--t4", encoding="utf-8") as handle:
            handle.write(json.dumps(document, ensure_ascii=False))

    def __repr__(self) -> str:
        return f"T4Writer({str(self.path)!r})"


# ---------------------------------------------------------------------------------- checking a cache
@dataclass
class CacheCheck:
    cache: str
    size: int                                   # the space's valid configurations
    entries: int                                # the cache's entries
    missing: list = field(default_factory=list)     # valid configurations (tuples) the cache lacks
    invalid: list = field(default_factory=list)     # (key, error or None) the space calls invalid
    agreeing_invalid: int = 0                   # entries marked InvalidConfig the space calls invalid too
    failed: int = 0                             # valid configurations whose entry is a failure
    repeated: list = field(default_factory=list)    # (key, [objective of each entry]) given twice, differently
    disagreeing: list = field(default_factory=list)  # (key, the key its parameter fields make)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.invalid and not self.repeated and not self.disagreeing

    def summary(self, limit: int = 20) -> str:
        lines = [f"{self.cache}: {self.entries} entries; the space has {self.size} valid configurations"]
        lines.append(f"{len(self.missing)} valid configuration(s) missing from the cache"
                     + (" (Kernel Tuner's simulation mode stops at the first one it meets)" if self.missing else ""))
        _listed(lines, self.missing, limit, lambda c: f"    missing: {cache_key(c)}")
        lines.append(f"{len(self.invalid)} cache entr{'y' if len(self.invalid) == 1 else 'ies'} the space calls invalid")
        _listed(lines, self.invalid, limit,
                lambda item: f"    invalid: {item[0]}" + (f" (marked {item[1]} in the cache)" if item[1] else ""))
        if self.agreeing_invalid:
            lines.append(f"{self.agreeing_invalid} entries marked InvalidConfig that the space calls invalid too "
                         "(they agree)")
        if self.failed:
            lines.append(f"{self.failed} valid configuration(s) have a failed entry (compile or runtime failure)")
        if self.repeated:
            lines.append(f"{len(self.repeated)} key(s) given more than once with different entries (Kernel Tuner "
                         "keeps the last one given)")
            _listed(lines, self.repeated, limit,
                    lambda item: f"    repeated: {item[0]} ({', '.join(map(_objective_text, item[1]))})")
        if self.disagreeing:
            lines.append(f"{len(self.disagreeing)} entr{'y' if len(self.disagreeing) == 1 else 'ies'} whose parameter "
                         "fields are not their key (the key decides which configuration Kernel Tuner takes it for)")
            _listed(lines, self.disagreeing, limit, lambda item: f"    key {item[0]} holds the fields {item[1]}")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {"cache": self.cache, "size": self.size, "entries": self.entries, "ok": self.ok,
                "missing": [[_plain(v) for v in c] for c in self.missing],
                "invalid": [{"key": k, "error": e} for k, e in self.invalid],
                "agreeing_invalid": self.agreeing_invalid, "failed": self.failed,
                "repeated": [{"key": k, "objective": [_json_number(t) for t in times]} for k, times in self.repeated],
                "disagreeing": [{"key": k, "fields": f} for k, f in self.disagreeing]}


def _listed(lines: list, items: list, limit: int, line) -> None:
    """The first `limit` items, one line each (`line(item)`), and how many more there are."""
    lines.extend(line(item) for item in items[:limit])
    if len(items) > limit:
        lines.append(f"    ... and {len(items) - limit} more")


def _json_number(value):
    """An objective for JSON output: an integer past 64 bits as its text (it is no time anyway)."""
    return str(value) if isinstance(value, int) and value.bit_length() > 64 else value


def check_cache(space, path, *, backend="auto") -> CacheCheck:
    """The valid configurations of `space` a Kernel Tuner cache lacks, and its entries `space`
    calls invalid (every valid configuration is listed once, by `backend`)."""
    data = read_cache(path)
    _check_header(data, space, path, None, None)
    names = list(space.parameters)
    entries = data["cache"]
    result = CacheCheck(str(path), 0, len(entries))
    objective = data.get("objective") if isinstance(data.get("objective"), str) else "time"
    result.repeated = [(key, [e.get(objective) if isinstance(e, dict) else e for e in repeated])
                       for key, repeated in repeated_keys(data).items()]
    result.disagreeing = [(key, fields) for key, entry in entries.items()
                          if (fields := disagreeing_fields(entry, names, key)) is not None]
    seen: set = set()
    for row in space.rows(backend):
        config = tuple(row[:len(names)])
        key = cache_key(config)
        result.size += 1
        entry = entries.get(key)
        if entry is None:
            result.missing.append(config)
            continue
        seen.add(key)
        if "__error__" in entry:
            result.failed += 1
    for key, entry in entries.items():
        if key in seen:
            continue
        error = entry.get("__error__") if isinstance(entry, dict) else None
        if error == "InvalidConfig" and _entry_is_configuration(entry, names, key):
            result.agreeing_invalid += 1
        else:
            result.invalid.append((key, error))
    return result


def _entry_is_configuration(entry: dict, names: list, key: str) -> bool:
    """Whether an entry holds every parameter and its key is their values (else it is not one of ours at all)."""
    if not all(n in entry for n in names):
        return False
    return cache_key(entry[n] for n in names) == key
