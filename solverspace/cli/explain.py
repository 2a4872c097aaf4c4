"""`solverspace explain`: settings, parameters, DAG level sets and the loop plan
(`solverspace.analysis.explain`); `--plot` draws the DAG."""
from __future__ import annotations

from solverspace.analysis.explain import explain, explain_dict
from solverspace.analysis.pictures import check_plot_path, plot_dag
from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.outputs import add_json, print_json
from solverspace.core.messages import say


class Explain(Command):
    example = "solverspace explain gemm --set device=tiny"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("--plot", metavar="FILE", help="also draw the DAG by level set (.svg/.png/.pdf; needs the plot extra)")
        add_json(p, "{\"space\", \"settings\", \"parameters\", \"derived\", \"constraints\", \"level_sets\", "
                    "\"loop_plan\": {\"prelude\", \"loops\"}}, expressions as the space language writes them")

    def run(self, args) -> int:
        if args.plot is not None:
            check_plot_path(args.plot)
        space = commands.load_space(args)
        if args.plot is not None:
            plot_dag(space.plan, args.plot)
            say(f"drew the dependency DAG to {args.plot}")
        print_json(explain_dict(space.plan)) if args.json else print(explain(space.plan))
        return 0
