"""The manifest of a sharded output directory (`enumerate --engine dask`): what it holds, so
that a rerun resumes it and nothing from another space or other settings is ever mixed in.

`_manifest.json` (the leading underscore keeps Parquet readers, which skip `_` and `.` files,
reading the directory as one dataset) records the identity of the run (a hash of the space's
source, every setting, the options and the generator's version), the prefix depth and a digest
of the prefix table, and per partition its unit range, file, row count, and, once written, the
file's size and SHA-256. It is rewritten atomically after every shard.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .errors import SolverspaceError
from .output import atomic_output

NAME = "_manifest.json"
FORMAT = "solverspace-shards"
VERSION = 1


class ManifestError(SolverspaceError, ValueError):
    """An output directory whose manifest belongs to another space, settings or version."""


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
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ManifestError(f"cannot read the manifest {str(path)!r}: {exc}",
                            hint="remove the directory (or the manifest and its shards) and run again") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ManifestError(f"{str(path)!r} is not a solverspace shard manifest",
                            hint="write to an empty or new directory")
    return manifest


def check_same_run(manifest: dict, identity: str, directory: Path, run: dict) -> None:
    """Refuse a manifest written for another space, settings, options, format or version
    (`run`: this run's description, as the manifest records it, to say what differs)."""
    if manifest.get("version") == VERSION and manifest.get("identity") == identity:
        return
    theirs = manifest.get("run", {})
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
    try:
        return file_digest(path) == (entry["bytes"], entry["sha256"])
    except OSError:
        return False
