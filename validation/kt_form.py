"""Both forms of a space agree: its Kernel Tuner form (flat value lists, restriction strings) and
the form it was written in, and the structured plan of a Kernel Tuner-form space and its literal one.

Two checks, each returning a list of differences (empty when the forms agree):

- `compare_forms(source)`: a space file and its own `export-t1` (`solverspace.io.t1.export_t1`, every
  parameter a value list, every dependency a restriction string), loaded back as a T1 file: the same
  count, the same rows in the reference and in C (as sets: the export's loop order is the plan's, but
  a value list walks in its own order), and every row of one form valid in the other.
- `compare_structured(t1_text)`: a T1 file walked by its default (structured) plan, where value lists
  become ranges bounded by the restrictions (`solverspace.analysis.structure`), against its literal
  plan (every value of every list tried): the same count and undefined tally in the reference, the
  same rows in the same order in the reference and in C, the same C count, CP-SAT count, seeded
  samples and configurations at positions.

`kt_spaces()` draws T1 files in Kernel Tuner's form that exercise the structuring: long arithmetic
value lists beside short ones (integers and strings), restrictions that bound, stride, fix, divide
(by a value that may be zero: undefined operations), join with `or` and `not`, and filter short
lists by earlier ones. Run by `tests/test_kt_form.py`.
"""
from __future__ import annotations

import json

from hypothesis import strategies as st

from solverspace.analysis.plan import make_plan
from solverspace.core.errors import SolverspaceError
from solverspace.io.loader import load_source
from solverspace.space import Space
from solverspace.io.t1.read import load_t1_text
from solverspace.io.t1.write import export_t1

__all__ = ["kt_form", "compare_forms", "compare_structured", "kt_spaces"]


def kt_form(source: str) -> str | None:
    """The T1 text `export-t1` writes for a space file's source; None where the export refuses."""
    try:
        return json.dumps(export_t1(load_source(source, "generated.py"), name="generated"))
    except SolverspaceError:
        return None


def _rows(space: Space, backend: str) -> list[tuple] | str:
    try:
        return list(space.rows(backend))
    except SolverspaceError as exc:
        return f"refused: {type(exc).__name__}"


def compare_forms(source: str, backends=("reference", "c")) -> list[str]:
    """Differences between a space file and its Kernel Tuner form (see the module docstring)."""
    text = kt_form(source)
    if text is None:
        return []
    written, exported = Space.from_source(source, filename="generated.py"), Space(load_t1_text(text, "generated.json"))
    problems = []
    expected = _rows(written, "reference")
    if isinstance(expected, str):
        return []
    for backend in backends:
        got = _rows(exported, backend)
        if isinstance(got, str):
            if backend == "reference":
                problems.append(f"export: reference {got}")
            continue
        if sorted(map(repr, got)) != sorted(map(repr, expected)):
            problems.append(f"export: {backend} lists {len(got)} rows, the space file {len(expected)}")
    return problems


def compare_structured(t1_text: str, *, samples: int = 5, seed: int = 0, cpsat: bool = True) -> list[str]:
    """Differences between a T1 file's structured plan and its literal plan (see the module docstring)."""
    model = load_t1_text(t1_text, "kt.json")
    structured = Space(model)
    literal = Space(model, make_plan(model, list(structured.plan.order), structured=False))
    problems = []
    truth = literal.stats("reference")
    rows = list(literal.rows("reference"))
    got = structured.stats("reference")
    if (got.count, got.undefined) != (truth.count, truth.undefined):
        problems.append(f"reference: structured count/undefined {got.count}/{got.undefined}, "
                        f"literal {truth.count}/{truth.undefined}")
    for backend in ("reference", "c"):
        listed = _rows(structured, backend)
        if isinstance(listed, str) and backend == "c":
            continue
        if listed != rows:
            problems.append(f"{backend}: structured rows differ from the literal plan's "
                            f"({len(listed) if not isinstance(listed, str) else listed} against {len(rows)})")
    counts = {}
    for backend in ("c", "cpsat") if cpsat else ("c",):
        try:
            counts[backend] = structured.count(backend)
        except SolverspaceError:
            counts[backend] = None      # refused: the rows above said so, or it is not this check's business
        if counts[backend] is not None and counts[backend] != truth.count:
            problems.append(f"{backend}: structured count {counts[backend]}, literal reference {truth.count}")
    c_count = counts["c"]
    if truth.count and c_count is not None:
        drawn = [tuple(r) for r in structured.sample(min(samples, truth.count), seed).tolist()]
        listed_once = set(map(repr, rows))
        if any(repr(tuple(r)) not in listed_once for r in drawn):
            problems.append("sample: a drawn configuration is not a valid row")
        both = [tuple(r) for r in literal.sample(min(samples, truth.count), seed).tolist()]
        if drawn != both:
            problems.append(f"sample: structured {drawn} against literal {both}")
        for position in sorted({0, truth.count // 2, truth.count - 1}):
            if repr(structured[position]) != repr(literal[position]) or repr(structured[position]) != repr(rows[position]):
                problems.append(f"position {position}: structured {structured[position]}, literal {literal[position]}, "
                                f"row {rows[position]}")
    return problems


# ---------------------------------------------------------------------------------- the strategy
_LONG = "long"


@st.composite
def kt_spaces(draw, *, max_parameters: int = 4, max_candidates: int = 40_000) -> str:
    """A T1 file in Kernel Tuner's form (see the module docstring); at most `max_candidates` in its box."""
    n = draw(st.integers(2, max_parameters))
    names = [f"p{i}" for i in range(n)]
    lists: list[list] = []
    box = 1
    for i in range(n):
        kind = draw(st.sampled_from((_LONG, _LONG, "short", "strings") if i else (_LONG, "short")))
        if kind == _LONG and box * 16 <= max_candidates:
            length = draw(st.integers(16, max(16, min(40, max_candidates // box))))
            start, step = draw(st.integers(-3, 4)), draw(st.integers(1, 3))
            values = list(range(start, start + step * length, step))
        elif kind == "strings" and i:
            values = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True))
        else:
            values = sorted(draw(st.lists(st.integers(-2, 8), min_size=1, max_size=5, unique=True)))
        box *= len(values)
        lists.append(values)
    conditions = []
    for i in range(1, n):
        if all(isinstance(v, str) for v in lists[i]) or draw(st.booleans()) and i > 1 and draw(st.booleans()):
            if all(isinstance(v, str) for v in lists[i]):
                ints = [j for j in range(i) if not isinstance(lists[j][0], str)]
                if ints:
                    y = names[draw(st.sampled_from(ints))]
                    conditions.append(([y, names[i]], f"{names[i]} != 'a' or {y} > {draw(st.integers(-1, 5))}"))
                continue
        x = names[i]
        earlier = [j for j in range(i) if not isinstance(lists[j][0], str)]
        if not earlier:
            continue
        parts, used = [], {x}
        for _ in range(draw(st.integers(1, 3))):
            y = names[draw(st.sampled_from(earlier))]
            used.add(y)
            c = draw(st.integers(-2, 6))
            parts.append(draw(st.sampled_from([
                f"{y} <= {x}", f"{x} < {y} + {c}", f"{x} * {y} <= {abs(c) * 20 + 5}", f"{y} * {x} >= {c * 3}",
                f"{x} == {y} + {c}", f"{x} * {y} == {abs(c) * 6}", f"({x} - {y}) % {y} == 0", f"{x} % {y} == 0",
                f"({x} + {y}) % {abs(c) + 1} == 0", f"{y} % {x} == 0", f"{x} // {y} < {c}",
                f"({x} < {y} or {x} % 2 == 0)", f"not ({x} > {y} + {c})", f"not ({x} * 2 > {y} + 20)",
                f"{x} <= {y} // 2 + {c}", f"{x} >= max({y}, {c})", f"{x} in [{c}, {c + 3}, {c + 5}]",
                f"{x} * 2 < 3 * {y}", f"{y} != 0 and {x} % {y} == 0",
            ])))
        conditions.append((sorted(used, key=names.index), " and ".join(parts)))
    document = {
        "General": {"FormatVersion": 1, "BenchmarkName": "kt"},
        "ConfigurationSpace": {
            "TuningParameters": [{"Name": name, "Type": "string" if isinstance(values[0], str) else "int",
                                  "Values": json.dumps(values)} for name, values in zip(names, lists)],
            "Conditions": [{"Parameters": params, "Expression": text} for params, text in conditions],
        },
    }
    return json.dumps(document)
