"""Pictures of a space: the pruning funnel and the dependency DAG with its level sets.

Needs the optional `plot` extra (matplotlib). Text stays text in SVG files (svg.fonttype
'none'), so every parameter and constraint name can be found in them.
"""
from __future__ import annotations

from pathlib import Path

from solverspace.core.errors import SolverspaceError


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SolverspaceError("plotting needs matplotlib", hint='install the plot extra: pip install "solverspace[plot]"') from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.fonttype"] = "none"
    return plt


def _check_suffix(path: Path):
    if path.suffix.lower() not in (".svg", ".png", ".pdf"):
        raise SolverspaceError(f"cannot draw to {str(path)!r}", hint="use a .svg, .png or .pdf file name")


def check_plot_path(path) -> Path:
    """A drawable output path (suffix, directory), checked before the work that precedes drawing."""
    from solverspace.core.output import check_output_path
    path = check_output_path(path, "--plot")
    _check_suffix(path)
    return path


def _save(fig, path: Path) -> None:
    """Draw to a temporary file renamed when complete (`solverspace.core.output`)."""
    from solverspace.core.output import atomic_output
    with atomic_output(path, "wb", option="--plot") as handle:
        fig.savefig(handle, format=path.suffix.lower().lstrip("."))


def plot_funnel(funnel, path) -> None:
    """Horizontal bars, one per constraint in test order: candidates that reached it and the
    part it kept (log scale), annotated with the fraction kept and 'redundant' where alone = 0."""
    path = Path(path)
    _check_suffix(path)
    plt = _pyplot()
    rows = funnel.constraints
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.8))
    labels = [f"{c.name}  [{c.level}]" for c in rows]
    y = list(range(len(rows)))[::-1]
    ax.barh(y, [max(c.reached, 1) for c in rows], color="#c6dbef", label="reached")
    ax.barh(y, [max(c.kept, 1) for c in rows], color="#2171b5", label="kept")
    for yy, c in zip(y, rows):
        note = f"{100 * c.kept_fraction:.2f}% kept" + ("  (redundant here)" if c.alone == 0 and c.reached else "")
        ax.text(max(c.reached, 1) * 1.15, yy, note, va="center", fontsize=8)
    ax.set_xscale("log")
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlabel("candidates (log scale)")
    ax.set_title(f"pruning funnel: {funnel.count} valid configurations")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def plot_dag(plan, path) -> None:
    """The dependency DAG by level set (the BEAST paper, Fig. 16): parameters as circles, constraints
    as octagons, each in the column of its level; edges from the parameters each one uses."""
    path = Path(path)
    _check_suffix(path)
    plt = _pyplot()
    model = plan.model
    dag = model.analysis.dag
    columns: dict[int, list[tuple[str, str]]] = {}
    for p in model.parameters:
        columns.setdefault(dag.level[p.name], []).append((p.name, "parameter"))
    for c in model.constraints:
        columns.setdefault(dag.level[c.name], []).append((c.name, "constraint"))
    position = {}
    height = max(len(v) for v in columns.values())
    for level, nodes in columns.items():
        for row, (name, kind) in enumerate(nodes):
            position[name] = (level * 3.0 + (1.2 if kind == "constraint" else 0.0), -float(row))
    fig, ax = plt.subplots(figsize=(4 + 3.2 * len(columns), 1 + 0.6 * height))
    for name, (x, y) in position.items():
        inputs = dag.parameter_inputs.get(name, ())
        for source in inputs:
            sx, sy = position[source]
            ax.annotate("", xy=(x, y), xytext=(sx, sy),
                        arrowprops=dict(arrowstyle="->", color="#999999", lw=0.6, shrinkA=8, shrinkB=8))
    for name, (x, y) in position.items():
        is_parameter = name in model.parameter
        ax.scatter([x], [y], s=260, marker="o" if is_parameter else "8",
                   color="#4292c6" if is_parameter else "#de2d26", zorder=3)
        ax.text(x, y - 0.42, name, ha="center", va="top", fontsize=7, zorder=4)
    for level in columns:
        ax.text(level * 3.0 + 0.6, 1.0, f"L{level}", ha="center", fontsize=10, weight="bold")
    ax.scatter([], [], marker="o", color="#4292c6", label="parameter (iterator)")
    ax.scatter([], [], marker="8", color="#de2d26", label="constraint")
    ax.legend(loc="lower left", fontsize=8)
    ax.set_axis_off()
    ax.set_title("dependency DAG and level sets", pad=28)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
