"""`solverspace funnel`: per constraint, the candidates reached, rejected, undefined and kept, and
which constraints are redundant; `--plot` draws it."""
from __future__ import annotations

from solverspace.analysis.pictures import check_plot_path, plot_funnel
from solverspace.cli import commands
from solverspace.cli.commands import Command, Progress, add_common, backend_options
from solverspace.core.options import THREADS
from solverspace.core.messages import say
from solverspace.registry.backends import backends_with


class Funnel(Command):
    example = "solverspace funnel gemm --set device=tiny"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("--backend", default="c", choices=backends_with("funnel"))
        p.add_argument("--threads", type=THREADS, default=None, metavar="N")
        p.add_argument("--json", action="store_true",
                       help="print one JSON document: {\"count\", \"levels\": [{\"parameter\", \"candidates\", \"undefined\"}], "
                            "\"constraints\": [{\"name\", \"level\", \"reached\", \"rejected\", \"undefined\", \"alone\", \"kept\", "
                            "\"kept_fraction\"}], \"overlap\"}")
        p.add_argument("--plot", metavar="FILE", help="also draw the funnel (.svg, .png or .pdf; needs the plot extra)")
        p.add_argument("--quiet", "-q", action="store_true", help="no progress bar; only warnings and errors on stderr")

    def run(self, args) -> int:
        if args.plot is not None:
            check_plot_path(args.plot)
        space = commands.load_space(args)
        progress = Progress(not args.quiet, "funnel")
        try:
            funnel = space.funnel(args.backend, progress=progress, **backend_options(args, args.backend))
        finally:
            progress.close()
        if args.plot is not None:
            plot_funnel(funnel, args.plot)
            say(f"drew the funnel to {args.plot}")
        print(funnel.to_json() if args.json else funnel.table())
        return 0
