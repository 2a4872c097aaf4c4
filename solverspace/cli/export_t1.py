"""`solverspace export-t1`: the space as a T1 tuning-problem JSON file (`solverspace.io.t1`)."""
from __future__ import annotations

from pathlib import Path

from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.outputs import add_json, check_json_output, check_output, report_written
from solverspace.core.output import check_output_path
from solverspace.io.t1 import write_t1


class ExportT1(Command):
    example = "solverspace export-t1 gemm -o gemm.t1.json"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("-o", "--output", required=True, help="the T1 .json file to write")
        add_json(p, "what was written, {\"output\", \"parameters\", \"conditions\"} (how many of each), instead of "
                    "the line on standard error; not with -o -")

    def run(self, args) -> int:
        """`export-t1`: the space as a T1 JSON file (dependent ranges as superset lists + conditions)."""
        check_json_output(args)
        check_output_path(args.output, "-o")
        space = commands.load_space(args)
        check_output(args, space, rows=False)
        document = write_t1(space.model, args.output, name=Path(args.space).stem)
        configuration = document["ConfigurationSpace"]
        parameters, conditions = len(configuration["TuningParameters"]), len(configuration["Conditions"])
        report_written(args, f"wrote {args.output}: {parameters} parameters, {conditions} conditions",
                       {"output": args.output, "parameters": parameters, "conditions": conditions})
        return 0
