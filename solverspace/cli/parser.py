"""The `solverspace` command line parser: `build_parser` and the argument types it uses.

To add a subcommand:

1. write its handler, `cmd_NAME(args) -> int` (the exit code: 0 done, 1 a negative answer, errors
   raised as `SolverspaceError`, which `main` prints and turns into exit code 2), in a module of
   the `solverspace.cli` package: `commands` for the general ones, `search_commands` for `best` and
   `tune`, or a new module of your own (`solverspace/cli/NAME_commands.py`; it may import the
   shared `load_space`, `Progress` and `backend_options` from `solverspace.cli.commands`);
2. in `build_parser` below, add its sub-parser (`p = sub.add_parser("NAME", help=...)`, the shared
   argument groups `common(p)`, `running(p, ...)`, `engine(p)`, `optimizations(p)` as it needs,
   its own arguments) and route it with `p.set_defaults(func=cmd_NAME)`, importing the handler at
   the top of this module.

`build_parser(command)` builds only that command's sub-parser (`_OneCommand`), so a sub-parser is
built by plain calls on `sub`; nothing else needs registering. `solverspace --help` lists the
commands in the order they are added.
"""
from __future__ import annotations

import argparse
import os
import sys

from solverspace.registry.backends import backends_with
from solverspace.cli.commands import (
    cmd_check_cpsat, cmd_count, cmd_emit_c, cmd_enumerate, cmd_explain, cmd_export_t1, cmd_funnel, cmd_get,
    cmd_sample, cmd_settings, cmd_sweep, cmd_validate)
from solverspace.cli.search_commands import cmd_best
from solverspace.cli.neighbors import cmd_neighbors
from solverspace.cli.moves_b import cmd_design, cmd_repair, cmd_sample_or_given
from solverspace.cli.kernel_tuner import cmd_cache_check
from solverspace.cli.optuna import cmd_tune_optuna
from solverspace.core.options import (
    NON_NEGATIVE, POSITIVE, POSITIVE_FLOAT, PROBABILITY, SEED, SEPARATOR, THREADS, WORKERS)

LISTING_BACKENDS = backends_with("write")  # the backends that write configurations (CP-SAT counts only)


def _sample_size(text: str) -> int:
    """`-n`: an integer in digits only (1e11 is refused, not rounded: a sample size is exact)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        digits = f" (-n {int(float(text))})" if float(text).is_integer() else ""
    except (ValueError, OverflowError):
        digits = ""
    raise argparse.ArgumentTypeError(f"{text!r} is not an integer: write the sample size out in digits{digits}")

def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, without importing shutil (with bz2 and lzma, about 2 ms
    of every command): `$COLUMNS`, else the terminal's width, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter with the default width found as argparse finds it, without
    shutil: argparse makes a formatter for every `add_argument` (to check its metavar)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class _OneCommand:
    """Subparsers that build only `command`'s parser: the others' arguments are not added
    (a warm `count` spends ~25 ms building every command's parser otherwise)."""

    def __init__(self, subparsers, command: str):
        self.subparsers, self.command, self.built = subparsers, command, False

    def add_parser(self, name, **kwargs):
        if name != self.command:
            return _Skipped()
        self.built = True
        kwargs.setdefault("formatter_class", _Formatter)
        return self.subparsers.add_parser(name, **kwargs)


class _Skipped:
    """Stands for a parser that is not built: every call is accepted and ignored."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: self


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser; with `command`, only that subcommand's parser is built (the
    parser then knows no other command: `_main` falls back to the whole one)."""
    parser = argparse.ArgumentParser(prog="solverspace", description="Count, list and explain autotuning search spaces.",
                                     formatter_class=_Formatter)
    sub = parser.add_subparsers(dest="command", required=True)
    if command is not None:
        sub = _OneCommand(sub, command)

    def common(p):
        p.add_argument("space", help="a space file, or a built-in space name (gemm)")
        p.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a setting (repeatable)")
        p.add_argument("--max-closure-values", type=POSITIVE, default=100_000, metavar="N",
                       help="stop a closure (generator) iterator that yields more than N values (default 100000)")

    def optimizations(p):
        p.add_argument("--literal", action="store_true",
                       help="C backend: every optimization off (the benchmark baseline)")
        p.add_argument("--disable", action="append", metavar="OPT", choices=["break", "tighten", "solve", "hoist", "split"],
                       help="C backend: switch one optimization off (break, tighten, solve, hoist, split; "
                            "repeatable)")

    def engine(p, listing=False):
        p.add_argument("--engine", default="local", choices=["local", "dask"],
                       help="local (this process, default) or dask (partitions run on dask.distributed: a local "
                            "cluster, or --scheduler; needs the dask extra; C backend only)")
        p.add_argument("--scheduler", metavar="ADDRESS",
                       help="--engine dask: an existing Dask scheduler (tcp://HOST:8786) instead of a local cluster")
        p.add_argument("--partitions", type=POSITIVE, default=None, metavar="N",
                       help="--engine dask: how many partitions (default: 4 per worker, at least one per 4Mi rows)")
        if listing:
            p.add_argument("--format", choices=["parquet", "npy"], default=None,
                           help="--engine dask: the shards' format (-o names a directory)")

    def running(p, backends):
        named = {"auto": "auto (default: c when compiled already or the space is big, else reference)",
                 "c": "c (compiled C/OpenMP)", "reference": "reference (pure Python)", "cpsat": "cpsat"}
        p.add_argument("--backend", default="auto", choices=backends,
                       help=", ".join(named.get(b, b) for b in backends))
        p.add_argument("--threads", type=THREADS, default=None, metavar="N", help="C backend threads (default: all cores)")
        p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS",
                       help="CP-SAT backend: stop after SECONDS (a count stopped early is a lower bound)")
        p.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                       help="CP-SAT backend: solver threads (default: all cores); --engine dask: worker processes "
                            "of the local cluster (default: all cores)")
        optimizations(p)
        p.add_argument("--strict", action="store_true", help="make an undefined operation an error")
        p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")

    p = sub.add_parser("count", help="number of valid configurations")
    common(p), running(p, backends_with("count")), engine(p)
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--approximate", action="store_true",
                   help="estimate with random XOR cells (ApproxMC2 over CP-SAT): within a factor 1+epsilon of the "
                        "count with probability 1-delta; for spaces whose exact count does not finish")
    p.add_argument("--epsilon", type=POSITIVE_FLOAT, default=0.8, help="tolerance of --approximate (default 0.8)")
    p.add_argument("--delta", type=PROBABILITY, default=0.2, help="failure probability of --approximate (default 0.2)")
    p.add_argument("--seed", type=SEED, default=0, help="random seed of --approximate (default 0)")
    p.set_defaults(func=cmd_count)

    p = sub.add_parser("sweep", help="count the space for every combination of settings, in one process")
    p.add_argument("space", help="a space file, or a built-in space name (gemm)")
    p.add_argument("--set", action="append", metavar="NAME=V1,V2,...",
                   help="a setting and the values to sweep, comma-separated (repeatable; the last varies fastest)")
    p.add_argument("--max-closure-values", type=POSITIVE, default=100_000, metavar="N",
                   help="stop a closure (generator) iterator that yields more than N values (default 100000)")
    running(p, backends_with("count"))
    p.add_argument("--json", action="store_true", help="one JSON object per combination")
    p.add_argument("--per-point", action="store_true",
                   help="count every combination on its own (by default the C backend counts combinations that "
                        "differ only in constants in one walk)")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("enumerate", help="write every valid configuration to a file")
    common(p), running(p, LISTING_BACKENDS), engine(p, listing=True)
    p.add_argument("-o", "--output", required=True,
                   help="output file: .csv (header + rows), .jsonl (one JSON object per row), .npy, or .parquet "
                        "(needs the parquet extra); the extension picks the format; --engine dask: a directory")
    p.add_argument("--sep", type=SEPARATOR, default=",",
                   help="CSV field separator, one character (default ','; ';' for ATF-style tools)")
    p.add_argument("--derived", help="comma-separated derived values to add as columns")
    p.set_defaults(func=cmd_enumerate)

    p = sub.add_parser("sample", help="uniform random valid configurations, reproducible by seed")
    common(p)
    p.add_argument("-n", type=_sample_size, required=True,
                   help="how many configurations: an integer written out in digits (at most 2**30)")
    p.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    p.add_argument("--with-replacement", action="store_true", help="allow the same configuration twice")
    p.add_argument("--method", default="exact", choices=["exact", "reference", "cpsat", "cpsat-xor"],
                   help="exact (compiled per-prefix counts, default), cpsat (exact CP-SAT counts by "
                        "self-reducibility, for spaces the C backend refuses) or reference (lists the space in Python): "
                        "all three exactly uniform; cpsat-xor: near-uniform with random XOR cells (UniGen2, "
                        "probabilities within a factor 17 of uniform), for spaces whose exact counts do not finish")
    p.add_argument("--threads", type=THREADS, default=None, metavar="N",
                   help="threads of the C enumerator, or CP-SAT workers (the sample is the same for any number)")
    p.add_argument("-o", "--output", help="write .csv, .jsonl, .npy or .parquet (plus FILE.meta.json with seed "
                                         "and method) instead of printing CSV")
    p.add_argument("--sep", type=SEPARATOR, default=",", help="CSV field separator, one character")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    engine(p)
    p.add_argument("--workers", type=WORKERS, default=None, metavar="N",
                   help="--engine dask: worker processes of the local cluster (default: all cores)")
    p.add_argument("--given", nargs="+", metavar="NAME=VALUE",
                   help="uniform over the valid configurations with these values (exact; none: exit 2, saying why)")
    p.set_defaults(func=cmd_sample_or_given)

    p = sub.add_parser("export-t1", help="write the space as a T1 tuning-problem JSON file")
    common(p)
    p.add_argument("-o", "--output", required=True, help="the T1 .json file to write")
    p.set_defaults(func=cmd_export_t1)

    p = sub.add_parser("get", help="the configuration(s) at the given position(s) of the canonical order")
    common(p)
    p.add_argument("index", type=int, nargs="+", help="positions (negative counts from the end)")
    p.set_defaults(func=cmd_get)

    p = sub.add_parser("emit-c", help="print the generated C/OpenMP enumerator")
    common(p), optimizations(p)
    p.add_argument("--derived", help="comma-separated derived values to add as columns")
    p.set_defaults(func=cmd_emit_c)

    p = sub.add_parser("funnel", help="per constraint: candidates reached, rejected, undefined, kept; redundancy")
    common(p)
    p.add_argument("--backend", default="c", choices=backends_with("funnel"))
    p.add_argument("--threads", type=THREADS, default=None, metavar="N")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--plot", metavar="FILE", help="also draw the funnel (.svg, .png or .pdf; needs the plot extra)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_funnel)

    p = sub.add_parser("explain", help="settings, parameters, DAG level sets and the loop plan")
    common(p)
    p.add_argument("--plot", metavar="FILE", help="also draw the DAG by level set (.svg/.png/.pdf; needs the plot extra)")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("settings", help="list the settings with their allowed values")
    common(p)
    p.set_defaults(func=cmd_settings)

    p = sub.add_parser("check", help="is a configuration valid? which rules reject it?")
    common(p)
    p.add_argument("assignment", nargs="*", metavar="NAME=VALUE")
    p.set_defaults(func=cmd_check_cpsat)

    p = sub.add_parser("design", help="a space-filling design of valid configurations (conditional quantiles)")
    common(p)
    p.add_argument("-n", type=_sample_size, required=True, help="how many design points (at least 1)")
    p.add_argument("--method", default="lhs", choices=["lhs", "sobol", "random"],
                   help="lhs (Latin hypercube, default), sobol (scrambled Sobol; n a power of two keeps its balance) "
                        "or random points of the unit cube, each mapped to a valid configuration")
    p.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    p.add_argument("-o", "--output", help="write .csv, .jsonl, .npy or .parquet ('-': standard output, the default)")
    p.add_argument("--sep", type=SEPARATOR, default=",", help="CSV field separator, one character")
    p.set_defaults(func=cmd_design)

    p = sub.add_parser("repair", help="the valid configuration nearest to a point (L1 distance in parameter indices)")
    common(p)
    p.add_argument("assignment", nargs="*", metavar="NAME=VALUE",
                   help="a value from each parameter's value list (the point need not be valid)")
    p.add_argument("--indices", metavar="I,J,...", help="the point as parameter indices, in column order")
    p.set_defaults(func=cmd_repair)

    p = sub.add_parser("neighbors", help="the valid neighbours of a valid configuration (Kernel Tuner's methods)")
    common(p)
    p.add_argument("assignment", nargs="*", metavar="NAME=VALUE", help="a valid configuration: every parameter")
    p.add_argument("--method", default="Hamming",
                   help="strictly-adjacent, adjacent, Hamming (default), Hamming-adjacent or closest-param-indices "
                        "(Kernel Tuner's; any letter case)")
    p.add_argument("--random", action="store_true", help="one neighbour drawn uniformly (exit 1 if there is none)")
    p.add_argument("--seed", type=SEED, default=0, help="random seed of --random (default 0)")
    p.add_argument("--count", action="store_true", help="print the number of neighbours")
    p.add_argument("--json", action="store_true", help="print JSON (a list of objects; with --count an object)")
    p.set_defaults(func=cmd_neighbors)

    p = sub.add_parser("best", help="the K best configurations by an objective (branch and bound, CP-SAT)")
    common(p)
    goal = p.add_mutually_exclusive_group()
    goal.add_argument("--maximize", metavar="EXPR", help="an expression of parameters, derived values and settings")
    goal.add_argument("--minimize", metavar="EXPR", help="an expression of parameters, derived values and settings "
                                                          "(default: the space's declared cost(...))")
    p.add_argument("--top", type=int, default=10, metavar="K", help="how many configurations (default 10)")
    p.add_argument("--engine", choices=backends_with("best"), default="bnb",
                   help="bnb (default): branch and bound with sound bounds of the objective on partial "
                        "configurations, compiled in C; exhaustive: evaluate every valid configuration in C; "
                        "bnb-reference, exhaustive-reference: the same in Python (any space); cpsat: OR-Tools")
    p.add_argument("--json", action="store_true", help="one JSON object per configuration: parameters and objective")
    p.add_argument("--quiet", "-q", action="store_true", help="no search statistics on stderr")
    p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS", help="stop after SECONDS")
    p.add_argument("--workers", type=WORKERS, default=None, metavar="N", help="CP-SAT threads (default: all cores)")
    p.add_argument("--threads", type=THREADS, default=None, metavar="N",
                   help="bnb, exhaustive: OpenMP threads (default: all cores)")
    p.set_defaults(func=cmd_best)

    p = sub.add_parser("tune", help="the fastest configuration by measurement, measuring only what a lower-bound "
                                    "model cannot rule out (proven best)")
    common(p)
    p.add_argument("--measure", metavar="CMD",
                   help="command template run without a shell, fields {NAME} (parameters or derived values) each "
                        "one argument; only plain tokens (letters, digits, _ . + - , : = / @ %%) are pasted: a "
                        "template that would paste another value is refused; every run has each value in "
                        "$SOLVERSPACE_NAME; for a shell write sh -c '...' (fields become those variables there); "
                        "the last number it prints on stdout is the time in seconds; a non-zero exit is a failed "
                        "configuration")
    p.add_argument("--measure-from", metavar="CACHE",
                   help="instead of --measure: the times of a complete Kernel Tuner cache file (ms; its failed "
                        "entries are failed configurations; a valid configuration it lacks stops tune)")
    p.add_argument("--kt-cache", metavar="FILE",
                   help="also write every measurement to FILE in Kernel Tuner's cache format, as it is made")
    p.add_argument("--kt-kernel-name", metavar="NAME",
                   help="the kernel name of --kt-cache (default: the space file's stem); with --measure-from, "
                        "the cache must be of this kernel")
    p.add_argument("--kt-device-name", metavar="NAME",
                   help="the device name of --kt-cache (default 'solverspace tune'); with --measure-from, the cache "
                        "must be of this device")
    p.add_argument("--t4", metavar="FILE", help="also write the measurements as T4 results (JSON) to FILE")
    p.add_argument("--bound", metavar="EXPR",
                   help="a lower bound on the time (seconds) in the space language (default: the space's cost)")
    p.add_argument("--strategy", choices=["model", "random"], default=None,
                   help="a statistical search instead of the bound's proof: model (Bayesian optimisation over the "
                        "valid configurations; the default when there is no --bound and no declared cost) or random "
                        "(exact uniform, without replacement)")
    p.add_argument("--seed", type=NON_NEGATIVE, default=0, metavar="S", help="the statistical search's seed (default 0)")
    p.add_argument("--prior", metavar="CACHE_OR_DB",
                   help="another device's measurements of this space (a Kernel Tuner cache, .json or .json.gz, or a "
                        "tune database), read as a prior on the ranking (model strategy)")
    p.add_argument("--top", type=POSITIVE, default=1, metavar="K", help="prove the K fastest (default 1)")
    p.add_argument("--repeat", type=POSITIVE, default=1, metavar="N", help="runs per configuration (default 1)")
    p.add_argument("--aggregate", choices=["min", "median"], default="min",
                   help="how the repeats make one time (default min)")
    p.add_argument("--max-measurements", type=NON_NEGATIVE, default=None, metavar="N",
                   help="stop after N new measurements (stored ones are reused for free)")
    p.add_argument("--time-limit", type=POSITIVE_FLOAT, default=None, metavar="SECONDS",
                   help="stop after SECONDS (a measurement under way finishes)")
    p.add_argument("--timeout", type=POSITIVE_FLOAT, default=None, metavar="SECONDS",
                   help="a command running longer is killed and recorded as timeout")
    p.add_argument("--db", metavar="PATH",
                   help="the SQLite file of measurements (default: SPACE_STEM.tune.sqlite next to the space file; "
                        "for a built-in space, in the current directory)")
    p.add_argument("--explain", action="store_true",
                   help="which part of the bound set it: at the best configuration and the largest cut subtrees")
    p.add_argument("--json", action="store_true", help="one JSON object with the result")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.add_argument("--optuna-storage", metavar="URL",
                   help="also record every measurement as a trial of an Optuna study in this storage (e.g. "
                        "sqlite:///optuna.db), as it is made (the optuna extra)")
    p.add_argument("--optuna-study", metavar="NAME",
                   help="the study of --optuna-storage (default: the space file's stem); created when missing, "
                        "continued when it exists (a configuration it holds is not added again)")
    p.set_defaults(func=cmd_tune_optuna)

    p = sub.add_parser("cache-check", help="which valid configurations a Kernel Tuner cache lacks, and its entries "
                                           "the space calls invalid (exit 1 when any)")
    common(p)
    p.add_argument("cache", help="a Kernel Tuner cache file (JSON, open or closed)")
    p.add_argument("--limit", type=NON_NEGATIVE, default=20, metavar="N", help="list at most N of each (default 20)")
    p.add_argument("--json", action="store_true", help="one JSON object with everything found")
    p.set_defaults(func=cmd_cache_check)

    p = sub.add_parser("validate", help="run every backend that accepts the space; do they agree?")
    common(p)
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
    p.set_defaults(func=cmd_validate)
    if command is not None and not sub.built:
        return build_parser()
    return parser
