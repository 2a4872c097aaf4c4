"""`solverspace explain`: settings, parameters, DAG level sets and the loop plan
(`solverspace.analysis.explain`); `--plot` draws the DAG."""
from __future__ import annotations

from solverspace.analysis.explain import explain
from solverspace.analysis.pictures import check_plot_path, plot_dag
from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.core.messages import say


class Explain(Command):
    def add_arguments(self, p):
        add_common(p)
        p.add_argument("--plot", metavar="FILE", help="also draw the DAG by level set (.svg/.png/.pdf; needs the plot extra)")

    def run(self, args) -> int:
        if args.plot is not None:
            check_plot_path(args.plot)
        space = commands.load_space(args)
        if args.plot is not None:
            plot_dag(space.plan, args.plot)
            say(f"drew the dependency DAG to {args.plot}")
        print(explain(space.plan))
        return 0
