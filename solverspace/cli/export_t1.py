"""`solverspace export-t1`: the space as a T1 tuning-problem JSON file (`solverspace.io.t1`)."""
from __future__ import annotations

from pathlib import Path

from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.outputs import check_output, summary_stream
from solverspace.core.output import check_output_path
from solverspace.io.t1 import write_t1


class ExportT1(Command):
    def add_arguments(self, p):
        add_common(p)
        p.add_argument("-o", "--output", required=True, help="the T1 .json file to write")

    def run(self, args) -> int:
        """`export-t1`: the space as a T1 JSON file (dependent ranges as superset lists + conditions)."""
        check_output_path(args.output, "-o")
        space = commands.load_space(args)
        check_output(args, space)
        document = write_t1(space.model, args.output, name=Path(args.space).stem)
        configuration = document["ConfigurationSpace"]
        print(f"wrote {args.output}: {len(configuration['TuningParameters'])} parameters, "
              f"{len(configuration['Conditions'])} conditions", file=summary_stream(args.output))
        return 0
