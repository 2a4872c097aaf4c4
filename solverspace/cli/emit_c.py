"""`solverspace emit-c`: print the generated C/OpenMP enumerator."""
from __future__ import annotations

from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common, add_optimizations, backend_options
from solverspace.cli.outputs import add_json, print_json


class EmitC(Command):
    example = "solverspace emit-c gemm --set device=tiny > gemm_tiny.c"

    def add_arguments(self, p):
        add_common(p), add_optimizations(p)
        p.add_argument("--derived", help="comma-separated derived values to add as columns")
        add_json(p, "{\"language\": \"c\", \"source\": the program's text}")

    def run(self, args) -> int:
        space = commands.load_space(args)
        derived = tuple(n for n in (args.derived or "").split(",") if n)
        source = space.emit("c", with_derived=derived, **backend_options(args, "c"))
        print_json({"language": "c", "source": source}) if args.json else print(source)
        return 0
