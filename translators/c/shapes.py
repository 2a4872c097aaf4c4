"""One compiled module for every generated program of one shape: settings as runtime inputs.

Two values of a setting (a device's thread limit, a problem size) often generate the same C
program except for some integer constants. The program's *shape* is its text with every
`INT64_C(n)` literal taken out; everything else (identifiers, operators, loop structure, tables,
categorical strings, every other number) must be identical. The first program of a shape compiles
as it is, every constant folded by the compiler. When a second program of the same shape needs a
module, the literals where the two differ become entries of a runtime array (`ss_k[i]`, set by
`ss_set_constants` before every call), and that one module then serves every program of the shape
whose literals differ only at those places. A sweep over n values of a setting compiles twice, not
n times.

This is sound by construction: the shared module run with a program's own literals is that
program, token for token (`INT64_C(n)` and `ss_k[i]` are both `int64_t` expressions of the same
value). A literal in a place where C needs a compile-time constant (a static initializer, a case
label) makes the shared module fail to compile; the shape is then marked as not shareable and
every program of it compiles on its own, as before.

Entries (`shape_<key>.json` beside the modules) hold the first program's literals and the places
made runtime inputs (or `"never"`); they are written atomically and hold their own key.
"""
from __future__ import annotations

import hashlib
import re

from .build import CompilerError, build, is_built, read_entry, write_entry

FORMAT = 1
LITERAL = re.compile(r"INT64_C\((-?\d+)\)")
SET_CONSTANTS_CDEF = "\nvoid ss_set_constants(const int64_t *k);\n"


def split_literals(source: str) -> tuple[list[str], list[int]]:
    """The program's shape (the text between its `INT64_C` literals) and the literals' values."""
    parts = LITERAL.split(source)
    return parts[0::2], [int(x) for x in parts[1::2]]


def shape_key(texts: list[str], cdef: str) -> str:
    digest = hashlib.sha256(f"{FORMAT}\0{cdef}\0".encode())
    for text in texts:
        digest.update(text.encode() + b"\0")
    return digest.hexdigest()


def shared_source(texts: list[str], base: list[int], places: list[int]) -> str:
    """The program with the literals at `places` read from `ss_k` and the others as in `base`."""
    slot = {place: i for i, place in enumerate(places)}
    out = [f"#include <stdint.h>\nstatic int64_t ss_k[{len(places)}];\n"
           f"void ss_set_constants(const int64_t *k) {{ for (int i = 0; i < {len(places)}; i++) ss_k[i] = k[i]; }}\n"]
    for i, text in enumerate(texts):
        out.append(text)
        if i < len(base):
            out.append(f"ss_k[{slot[i]}]" if i in slot else f"INT64_C({base[i]})")
    return "".join(out)


def _load(key: str) -> dict | None:
    try:
        entry = read_entry("shape", key, FORMAT)
        if entry is None:
            return None
        base, places = [int(x) for x in entry["base"]], entry["places"]
        if places is not None and places != "never":
            places = sorted(int(p) for p in places)
            if not all(0 <= p < len(base) for p in places):
                return None
        return {"base": base, "places": places}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _store(key: str, base: list[int], places) -> None:
    write_entry("shape", key, FORMAT, {"base": base, "places": places})  # unwritten: only compiles more


class Shaped:
    """A program's compiled module and, for a shared module, the constants that make it this program."""

    def __init__(self, module, constants: list[int] | None):
        self.module, self.constants = module, constants

    def set_constants(self) -> None:
        """Make the shared module this program (call on the thread that then runs it)."""
        if self.constants is not None:
            k = self.module.ffi.new("int64_t[]", self.constants or [0])
            self.module.lib.ss_set_constants(k)


def _plan(source: str, cdef: str):
    """(shape, its key, the literals, the shape's entry, the places that differ from its first program)."""
    texts, literals = split_literals(source)
    key = shape_key(texts, cdef)
    entry = _load(key)
    if entry is None or len(entry["base"]) != len(literals):
        return texts, key, literals, None, []
    return texts, key, literals, entry, [i for i, (a, b) in enumerate(zip(entry["base"], literals)) if a != b]


def build_shaped(source: str, cdef: str, quick: bool = False) -> Shaped:
    """The module for a generated program: its own when compiled or first of its shape, else the
    module shared by its shape (compiled now if the places where it differs are new). `quick`:
    the quick (-O0) builds of the same sources (the shapes' entries are the same for both: which
    literals differ does not depend on the flags), so a cold sweep of a small space compiles twice."""
    texts, key, literals, entry, differ = _plan(source, cdef)
    if entry is None:   # the first program of its shape: the one the others are compared with
        _store(key, literals, None)
    if entry is None or not differ or entry["places"] == "never" or is_built(source, cdef, quick=quick):
        return Shaped(build(source, cdef, quick=quick), None)
    places = sorted(set(differ) | set(entry["places"] or []))
    try:
        module = build(shared_source(texts, entry["base"], places), cdef + SET_CONSTANTS_CDEF, quick=quick)
    except CompilerError:
        module = build(source, cdef, quick=quick)  # raises if the compiler itself is the problem
        _store(key, entry["base"], "never")
        return Shaped(module, None)
    if places != entry["places"]:
        _store(key, entry["base"], places)
    return Shaped(module, [literals[p] for p in places])


def is_built_shaped(source: str, cdef: str, quick: bool = False) -> bool:
    """Whether running this program compiles nothing (its own module or its shape's is built);
    `quick`: its quick builds."""
    if is_built(source, cdef, quick=quick):
        return True
    texts, _, _, entry, differ = _plan(source, cdef)
    if entry is None or not differ or entry["places"] in (None, "never") or not set(differ) <= set(entry["places"]):
        return False
    return is_built(shared_source(texts, entry["base"], entry["places"]), cdef + SET_CONSTANTS_CDEF, quick=quick)
