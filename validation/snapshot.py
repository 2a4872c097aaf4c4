"""Behaviour snapshots: every count, digest, sample, position and output file of a set of spaces.

A refactoring must not change what the tool answers. `write` records, for each space, what every
backend answers (counts with undefined tallies, or the error class and message of a refusal), the
SHA-256 of the files `enumerate` writes (CSV, JSON Lines, .npy with its category sidecar), a seeded
sample, the configuration at a middle position, and the generated C; `compare` recomputes the
same things and lists every difference. The spaces: the 16 K40c GEMM variants, the T1 files under
`tests/data/peer_spaces/`, the test corpus and a fixed list of generated spaces (stored in the
snapshot file itself, so a comparison replays exactly the same sources).

    python -m solverspace.validation.snapshot write  SNAPSHOT.json [--quick]
    python -m solverspace.validation.snapshot compare SNAPSHOT.json [--quick]

`--quick` leaves out the GEMM variants (the default test suite compares the rest; the whole
snapshot is a `slow` test).
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import re
import sys
import tempfile
import warnings
from pathlib import Path

from solverspace import Space

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT / "tests" / "data" / "peer_spaces"
CORPUS = ROOT / "tests" / "corpus"
GEMM_VARIANTS = [{"precision": p, "arithmetic": a, "trans_a": ta, "trans_b": tb}
                 for p in ("single", "double") for a in ("real", "complex") for ta in (0, 1) for tb in (0, 1)]
REFERENCE_LIMIT = 20_000      # the reference lists spaces up to this many configurations
FILE_LIMIT = 10_000_000       # files are written for spaces up to this many configurations
CPSAT_LIMIT = 400_000         # CP-SAT counts spaces up to this many (by the C count)


def _module(name: str):
    """A module of this project by its installed name (`solverspace.translators.c.codegen`),
    falling back to the old top-level name, so that one script snapshots both layouts."""
    try:
        return importlib.import_module(f"solverspace.{name}")
    except ImportError:
        return importlib.import_module(name)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _error(exc: BaseException) -> dict:
    """A refusal, with the checkout's location written as <ROOT> (so two checkouts compare)."""
    return {"error": type(exc).__name__, "message": str(exc).replace(str(ROOT), "<ROOT>").replace(str(PEER), "<PEER>")}


def _stats(space, backend: str) -> dict:
    try:
        stats = space.stats(backend)
    except Exception as exc:  # a refusal is part of the behaviour
        return _error(exc)
    return {"count": int(stats.count), "undefined": int(stats.undefined),
            "exact": bool(getattr(stats, "exact", True))}


def _files(space, folder: Path) -> dict:
    result = {}
    for fmt in ("csv", "jsonl", "npy"):
        path = folder / f"out.{fmt}"
        try:
            written = space.write(path, "c")
        except Exception as exc:
            result[fmt] = _error(exc)
            continue
        entry = {"rows": written, "sha256": _sha(path.read_bytes())}
        sidecar = Path(f"{path}.categories.json")
        if sidecar.exists():
            entry["categories_sha256"] = _sha(sidecar.read_bytes())
            sidecar.unlink()
        path.unlink()
        result[fmt] = entry
    return result


def _emit_c(space) -> dict:
    try:
        codegen = _module("translators.c.codegen")
        optimize = _module("translators.c.optimize")
        source = codegen.CGenerator(space.plan, optimize.Options()).generate().source
    except Exception as exc:
        return _error(exc)
    # the generator named the scratch arrays of iterator algebra after id(node) % 100000 at
    # first (different in every run; numbered now): written as rN_/rnN_ before hashing, so a
    # snapshot taken before compares with one taken after
    return {"sha256": _sha(re.sub(r"\b(rn?)\d+_", r"\1N_", source).encode())}


def describe(space, *, cpsat: bool = True) -> dict:
    """Everything this snapshot records about one loaded space."""
    result = {"c": _stats(space, "c")}
    count = result["c"].get("count")
    if cpsat and (count is None or count <= CPSAT_LIMIT):
        result["cpsat"] = _stats(space, "cpsat")
    if count is not None and count <= REFERENCE_LIMIT:
        result["reference"] = _stats(space, "reference")
        try:
            result["reference_rows_sha256"] = _sha(repr(list(space.rows("reference"))).encode())
        except Exception as exc:
            result["reference_rows_sha256"] = _error(exc)
    if count is not None and 0 < count <= FILE_LIMIT:
        with tempfile.TemporaryDirectory() as folder:
            result["files"] = _files(space, Path(folder))
    if count:
        try:
            rows = space.sample(min(count, 25), seed=11, method="exact")
            result["sample_sha256"] = _sha((repr(rows.dtype) + repr(rows.tolist())).encode())
        except Exception as exc:
            result["sample_sha256"] = _error(exc)
        try:
            result["middle"] = repr(space[count // 2])
        except Exception as exc:
            result["middle"] = _error(exc)
    result["emit_c"] = _emit_c(space)
    return result


def _load(kind: str, target: str, settings: dict | None):
    if kind == "generated":
        return Space.from_source(target, settings, filename="generated.py")
    return Space.load(target if kind == "gemm" else str(ROOT / target) if kind == "corpus" else str(PEER / target),
                      settings)


KINDS = ("gemm", "t1", "corpus", "generated")


def targets(quick: bool, generated: list[str], kinds=KINDS) -> list[tuple[str, str, dict | None]]:
    """(kind, target, settings) for every space of the snapshot (of the given kinds)."""
    found = []
    if not quick:
        found += [("gemm", "gemm", variant) for variant in GEMM_VARIANTS]
    found += [("t1", str(p.relative_to(PEER)), None) for p in sorted(PEER.rglob("*.json"))]
    found += [("corpus", str(p.relative_to(ROOT)), None) for p in sorted(CORPUS.glob("*.py"))]
    found += [("generated", source, None) for source in generated]
    return [target for target in found if target[0] in kinds]


def _key(kind: str, target: str, settings) -> str:
    if kind == "generated":
        return f"generated:{_sha(target.encode())[:16]}"
    return f"{kind}:{target}" + (f":{json.dumps(settings, sort_keys=True)}" if settings else "")


def record(quick: bool, generated: list[str], progress=None, kinds=KINDS) -> dict:
    entries = {}
    for kind, target, settings in targets(quick, generated, kinds):
        key = _key(kind, target, settings)
        if progress:
            progress(key)
        try:
            space = _load(kind, target, settings)
        except Exception as exc:
            entries[key] = {"load": _error(exc)}
            continue
        entries[key] = describe(space, cpsat=kind != "gemm" or settings == {"precision": "double",
                                                                            "arithmetic": "real",
                                                                            "trans_a": 0, "trans_b": 0})
    return entries


def generate_sources(n: int) -> list[str]:
    from hypothesis.errors import NonInteractiveExampleWarning
    generate = _module("validation.generate")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        return [generate.spaces(max_candidates=2000).example() for _ in range(n)]


def differences(expected: dict, actual: dict) -> list[str]:
    """One line per space whose record differs, naming the fields."""
    lines = []
    for key in sorted(set(expected) | set(actual)):
        old, new = expected.get(key), actual.get(key)
        if old == new:
            continue
        if old is None or new is None:
            lines.append(f"{key}: {'missing before' if old is None else 'missing now'}")
            continue
        fields = sorted(f for f in set(old) | set(new) if old.get(f) != new.get(f))
        lines.append(f"{key}: " + "; ".join(f"{f}: {old.get(f)!r} -> {new.get(f)!r}" for f in fields))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solverspace.validation.snapshot", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["write", "compare"])
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--quick", action="store_true", help="leave out the 16 GEMM variants")
    parser.add_argument("--generated", type=int, default=60, help="generated spaces recorded by `write` (default 60)")
    parser.add_argument("--generated-from", type=Path, metavar="SNAPSHOT",
                        help="`write`: record the generated spaces of this earlier snapshot instead of new ones")
    args = parser.parse_args(argv)
    progress = lambda key: print(key[:100], file=sys.stderr, flush=True)  # noqa: E731
    if args.action == "write":
        try:
            generated = (json.loads(args.generated_from.read_text(encoding="utf-8"))["generated"]
                         if args.generated_from else generate_sources(args.generated))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"snapshot: error: cannot read the generated spaces of {args.generated_from} "
                  f"({type(exc).__name__}: {exc})", file=sys.stderr)
            return 2
        document = {"generated": generated, "entries": record(args.quick, generated, progress)}
        args.snapshot.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {len(document['entries'])} spaces to {args.snapshot}")
        return 0
    try:
        document = json.loads(args.snapshot.read_text(encoding="utf-8"))
        generated, entries = document["generated"], document["entries"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"snapshot: error: cannot read {args.snapshot} as a snapshot ({type(exc).__name__}: {exc})\n"
              f"  hint: make one with `write {args.snapshot}`", file=sys.stderr)
        return 2
    actual = record(args.quick, generated, progress)
    expected = {k: v for k, v in entries.items() if k in actual}
    lines = differences(expected, actual)
    for line in lines:
        print(line)
    print(f"{len(actual)} spaces compared, {len(lines)} differ")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
