"""The manifest of a sharded output directory (`enumerate --engine dask`): what it holds, so
that a rerun resumes it and nothing from another space or other settings is ever mixed in.

`_manifest.json` (the leading underscore keeps Parquet readers, which skip `_` and `.` files,
reading the directory as one dataset) records the identity of the run (a hash of the space's
source, every setting, the options and the generator's version), the prefix depth and a digest
of the prefix table, and per partition its unit range, file, row count, and, once written, the
file's size and SHA-256. It is rewritten atomically after every shard.

A manifest read back is trusted only as far as it is checked (`check_layout`, `check_counts`):
its partitions are listed in order, named as the writer names them (so no entry points outside
the directory), cover the units contiguously, and hold the rows the space has, which add up to
the total. Anything else is refused: resuming over it could report rows that are not written.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from solverspace.core.errors import SolverspaceError
from solverspace.core.output import atomic_output
from solverspace.core.sources import read_json, read_text

NAME = "_manifest.json"
FORMAT = "solverspace-shards"
VERSION = 1


class ManifestError(SolverspaceError, ValueError):
    """An output directory whose manifest belongs to another space, settings or version, or
    that was edited or damaged."""


def _restart_hint(directory: Path) -> str:
    return (f"the manifest was edited or damaged, so its shards cannot be trusted: delete the directory "
            f"{str(directory)!r} and run the command again (or write to a new directory)")


def shard_name(index: int, parts: int, fmt: str) -> str:
    """`part-00000.parquet`: zero-padded so that name order is partition (prefix) order."""
    width = max(5, len(str(max(parts - 1, 0))))
    return f"part-{index:0{width}d}.{fmt}"


def file_digest(path: Path) -> tuple[int, str]:
    """(size in bytes, SHA-256 hex) of a file, read in 1 MiB blocks."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def read(directory: Path) -> dict | None:
    """The directory's manifest, None if it has none; an unreadable one is an error (never
    overwritten: it may describe shards worth keeping)."""
    path = Path(directory) / NAME
    if not os.path.lexists(path):
        return None
    hint = "remove the directory (or the manifest and its shards) and run again"
    manifest = read_json(read_text(path, "manifest", error=ManifestError, hint=hint), path, "manifest",
                         error=ManifestError, hint=hint)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ManifestError(f"{str(path)!r} is not a solverspace shard manifest",
                            hint="write to an empty or new directory")
    return manifest


def check_same_run(manifest: dict, identity: str, directory: Path, run: dict) -> None:
    """Refuse a manifest written for another space, settings, options, format or version
    (`run`: this run's description, as the manifest records it, to say what differs)."""
    if manifest.get("version") == VERSION and manifest.get("identity") == identity:
        return
    theirs = manifest.get("run") if isinstance(manifest.get("run"), dict) else {}
    differs = [f"{key} {theirs.get(key)!r} there, {run[key]!r} here" for key in run if theirs.get(key) != run[key]]
    if isinstance(theirs.get("settings"), dict) and "settings" in run:
        differs = [d for d in differs if not d.startswith("settings ")] + [
            f"setting {name} {theirs['settings'].get(name)!r} there, {value!r} here"
            for name, value in run["settings"].items() if theirs["settings"].get(name) != value]
    raise ManifestError(
        f"{str(Path(directory) / NAME)!r} describes another run ("
        + ("; ".join(differs) if differs else "another solverspace version, or another space file's contents")
        + "): its shards are not mixed with this one's",
        hint="write to another directory, or remove this one to start over")


def write(directory: Path, manifest: dict) -> None:
    """Replace the manifest atomically."""
    with atomic_output(Path(directory) / NAME, "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=1)
        handle.write("\n")


def complete_shard(directory: Path, entry: dict) -> bool:
    """Whether a partition's shard is in place and whole: recorded as written, with the size and
    SHA-256 the manifest holds."""
    if entry.get("sha256") is None:
        return False
    path = Path(directory) / entry["file"]
    if not path.is_file():          # a FIFO or a device in its place is not a shard (and never ends)
        return False
    try:
        return file_digest(path) == (entry["bytes"], entry["sha256"])
    except OSError:
        return False


def _is_count(value) -> bool:
    """A non-negative JSON integer (a bool is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def refuse(directory: Path, what: str):
    """Raise the error for a manifest that cannot be trusted: `what` is wrong, and start again."""
    raise ManifestError(f"{str(Path(directory) / NAME)!r}: {what}", hint=_restart_hint(directory))


def check_layout(manifest: dict, directory: Path, fmt: str) -> None:
    """Refuse a manifest whose partitions are not exactly those the writer makes: listed by
    index from 0, each named `shard_name(index, parts, fmt)`, covering the units [0, units) in
    contiguous ranges, with row counts adding up to the total, and a written shard's size with
    its SHA-256 (a null SHA-256: not written). (Before any file of the directory is used.)"""
    for key in ("depth", "units", "total"):
        if not _is_count(manifest.get(key)):
            refuse(directory, f"{key!r} is {manifest.get(key)!r}, not a non-negative integer")
    entries = manifest.get("partitions")
    if not isinstance(entries, list) or not entries:
        refuse(directory, f"'partitions' is {entries!r}, not a list of partitions")
    end = 0
    for i, entry in enumerate(entries):
        _check_entry(entry, i, len(entries), end, directory, fmt)
        end = entry["units"][1]
    if end != manifest["units"]:
        refuse(directory, f"the partitions cover units [0, {end}) of the {manifest['units']}: "
                           f"units {end} to {manifest['units'] - 1} are in no partition")
    rows = sum(e["rows"] for e in entries)
    if rows != manifest["total"]:
        refuse(directory, f"the partitions hold {rows} rows, the manifest's total is {manifest['total']}")


def _check_entry(entry, i: int, parts: int, start: int, directory: Path, fmt: str) -> None:
    """Partition `i` of `parts`: its index, name, unit range (from `start`), rows and digest."""
    if not isinstance(entry, dict):
        refuse(directory, f"partition entry {i} is {entry!r}, not an object")
    if entry.get("index") != i or isinstance(entry.get("index"), bool):
        refuse(directory, f"partition entry {i} has index {entry.get('index')!r}: the partitions must be "
                           f"listed 0, 1, 2, ... without a gap")
    expected = shard_name(i, parts, fmt)
    if entry.get("file") != expected:
        refuse(directory, f"partition {i} names the file {entry.get('file')!r}; the writer names it {expected!r} "
                           f"(shards are written only inside the directory, under their own names)")
    units = entry.get("units")
    if not (isinstance(units, list) and len(units) == 2 and all(map(_is_count, units))):
        refuse(directory, f"partition {i} has units {units!r}, not a [first, end) pair of unit numbers")
    if units[0] != start or units[1] < units[0]:
        refuse(directory, f"partition {i} covers units {units!r}, but the partitions before it end at unit {start}: "
                           f"the partitions must cover the units contiguously")
    if not _is_count(entry.get("rows")):
        refuse(directory, f"partition {i} has rows {entry.get('rows')!r}, not a non-negative integer")
    size, digest = entry.get("bytes"), entry.get("sha256")
    if digest is None:
        return   # not written (yet): whatever size is recorded, the shard is written again
    if not (_is_count(size) and isinstance(digest, str) and len(digest) == 64
            and all(c in "0123456789abcdef" for c in digest)):
        refuse(directory, f"partition {i} records bytes {size!r} and sha256 {digest!r}: not a size and a "
                           f"SHA-256 (or a null sha256: not written)")


def check_counts(manifest: dict, directory: Path, counts: list) -> None:
    """Refuse a manifest (already `check_layout`ed) whose units or rows are not this space's:
    `counts` is the exact row count of each unit of this run's prefix table."""
    if manifest["units"] != len(counts):
        refuse(directory, f"the manifest has {manifest['units']} units, this run's prefix table {len(counts)}")
    if manifest["total"] != sum(counts):
        refuse(directory, f"the manifest's total is {manifest['total']} rows, the space has {sum(counts)}")
    for entry in manifest["partitions"]:
        a, b = entry["units"]
        if sum(counts[a:b]) != entry["rows"]:
            refuse(directory, f"partition {entry['index']} holds {entry['rows']} rows, its units "
                               f"hold {sum(counts[a:b])} in this space")
