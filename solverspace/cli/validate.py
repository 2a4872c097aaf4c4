"""`solverspace validate`: run every backend that accepts the space and compare them
(`solverspace.validation.validate`)."""
from __future__ import annotations

from solverspace.cli.commands import Command, add_common, parse_settings
from solverspace.cli.outputs import add_json, print_json
from solverspace.core.options import NON_NEGATIVE, POSITIVE_FLOAT, SEED, THREADS, WORKERS
from solverspace.validation.validate import ALL_BACKENDS, validate


class Validate(Command):
    example = "solverspace validate gemm --set device=tiny"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("--reference-limit", type=NON_NEGATIVE, default=100_000, metavar="N",
                       help="run the pure-Python reference only when the space has at most N configurations "
                            "(default 100000)")
        p.add_argument("--backends", metavar="LIST",
                       help="comma-separated subset of c,c-literal,cpsat,reference,sample (default: all)")
        p.add_argument("--threads", type=THREADS, default=None, metavar="N", help="C backend threads (default: all cores)")
        p.add_argument("--samples", type=NON_NEGATIVE, default=20, metavar="N",
                       help="configurations to sample and check (default 20)")
        p.add_argument("--seed", type=SEED, default=0, help="sampling seed (default 0)")
        p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS", help="CP-SAT: stop after SECONDS")
        p.add_argument("--workers", type=WORKERS, default=None, metavar="N", help="CP-SAT: solver threads (default: all cores)")
        p.add_argument("--count-only", action="store_true",
                       help="C: count without listing (no digests; for very large spaces)")
        add_json(p, "{\"space\", \"settings\", \"status\" (the exit code), \"agree\", \"verdict\", \"problems\", "
                    "\"backends\": [{\"backend\", \"status\", \"count\", \"undefined\", \"digest\", \"seconds\", "
                    "\"note\"}], \"counterexamples\"}")

    def run(self, args) -> int:
        """Run every backend that accepts the space and compare them; exit 0 agree, 1 disagree, 2 could not run."""
        backends = [b.strip() for b in args.backends.split(",") if b.strip()] if args.backends else ALL_BACKENDS
        cpsat_options = {k: v for k, v in (("time_limit", args.time_limit), ("workers", args.workers)) if v is not None}
        report = validate(args.space, settings=parse_settings(args.set), backends=backends,
                          reference_limit=args.reference_limit, threads=args.threads, samples=args.samples,
                          seed=args.seed, cpsat_options=cpsat_options, max_closure_values=args.max_closure_values,
                          listing=not args.count_only)
        print_json(report.as_dict()) if args.json else print(report.render())
        return report.status
