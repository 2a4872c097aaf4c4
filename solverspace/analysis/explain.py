"""`explain`: settings, parameters with their domains, level sets, and the loop plan showing
where each derived value is computed and each constraint tested."""
from __future__ import annotations

from solverspace.lang.bounds import Bounds
from solverspace.analysis.plan import Plan
from solverspace.lang.printing import to_source


def explain(plan: Plan) -> str:
    model = plan.model
    dag = model.analysis.dag
    bounds = model.analysis.bounds
    out: list[str] = [f"space: {model.source}", ""]

    out.append(f"settings ({len(model.settings)}):")
    width = max((len(s.name) for s in model.settings), default=0)
    for s in model.settings:
        allowed = f"  one of {list(s.choices)}" if s.choices else ""
        marker = "  (overridden)" if s.overridden else ""
        doc = f"  # {s.doc}" if s.doc else ""
        out.append(f"  {s.name:<{width}} = {s.value!r}{marker}{allowed}{doc}")

    out += ["", f"parameters ({len(model.parameters)}, in column order):"]
    width = max(len(p.name) for p in model.parameters)
    for p in model.parameters:
        out.append(f"  {p.name:<{width}} = {to_source(p.domain)}    [{p.kind}, values in {_bounds(bounds, p.name)}]")

    if model.derived:
        out += ["", f"derived values ({len(model.derived)}):"]
        width = max(len(d.name) for d in model.derived)
        for d in model.derived:
            out.append(f"  {d.name:<{width}} = {to_source(d.expr)}    [{_bounds(bounds, d.name)}]")

    out += ["", f"constraints ({len(model.constraints)}):"]
    for c in model.constraints:
        line = f", line {c.line}" if c.line else ""
        out.append(f"  {c.polarity} {c.name}: {to_source(c.expr)}    [{c.kind}{line}]")

    out += ["", "level sets (the dependency DAG's levels, as in the BEAST paper):"]
    for index, level in enumerate(dag.level_sets):
        out.append(f"  L{index}: parameters {', '.join(level['parameters']) or '-'}")
        if level["constraints"]:
            out.append(f"      constraints {', '.join(level['constraints'])}")

    out += ["", "loop plan (each derived value computed and each constraint tested at the earliest loop):"]
    for d in plan.prelude_derived:
        out.append(f"  {d.name} = {to_source(d.expr)}")
    for c in plan.prelude_constraints:
        out.append(f"  test {c.name}")
    for depth, level in enumerate(plan.levels):
        indent = "  " * (depth + 1)
        out.append(f"{indent}for {level.parameter.name} in {to_source(level.parameter.domain)}:")
        for d in level.derived:
            out.append(f"{indent}  {d.name} = {to_source(d.expr)}")
        for c in level.constraints:
            out.append(f"{indent}  test {c.name}")
    return "\n".join(out)


def _bounds(bounds: Bounds, name: str) -> str:
    try:
        return str(bounds.of(name))
    except ValueError as exc:
        return f"unbounded: {exc}"


def explain_dict(plan: Plan) -> dict:
    """What `explain` shows, as plain data (`explain --json`): the space file, its settings,
    parameters (column order), derived values, constraints, the DAG's level sets and the loop plan
    (each derived value and constraint placed at the earliest loop; `prelude`: before any loop).
    Expressions are written as the space language reads them (`to_source`)."""
    model = plan.model
    bounds = model.analysis.bounds
    return {
        "space": str(model.source),
        "settings": [{"name": s.name, "value": s.value, "default": s.default, "overridden": bool(s.overridden),
                      "choices": list(s.choices) if s.choices else None, "doc": s.doc or None}
                     for s in model.settings],
        "parameters": [{"name": p.name, "domain": to_source(p.domain), "kind": p.kind, "values_in": _bounds(bounds, p.name)}
                       for p in model.parameters],
        "derived": [{"name": d.name, "expr": to_source(d.expr), "values_in": _bounds(bounds, d.name)} for d in model.derived],
        "constraints": [{"name": c.name, "polarity": c.polarity, "expr": to_source(c.expr), "kind": c.kind,
                         "line": c.line or None} for c in model.constraints],
        "level_sets": [{"parameters": list(level["parameters"]), "constraints": list(level["constraints"])}
                       for level in model.analysis.dag.level_sets],
        "loop_plan": {"prelude": {"derived": [d.name for d in plan.prelude_derived],
                                  "constraints": [c.name for c in plan.prelude_constraints]},
                      "loops": [{"parameter": level.parameter.name, "domain": to_source(level.parameter.domain),
                                 "derived": [d.name for d in level.derived],
                                 "constraints": [c.name for c in level.constraints]} for level in plan.levels]},
    }
