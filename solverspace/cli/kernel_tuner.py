"""Kernel Tuner on the command line (`solverspace.integrations.kernel_tuner.cache`): the command
`cache-check SPACE CACHE` (exit 1 when valid configurations are missing from the cache or it holds
entries the space calls invalid), and the options it adds to `tune` (`KernelTunerFiles`):
`--measure-from CACHE` (times from a complete cache instead of a command), `--kt-cache FILE` (a
Kernel Tuner cache written as `tune` measures) and `--t4 FILE` (T4 results)."""
from __future__ import annotations

import json

from solverspace.cli import commands
from solverspace.cli.commands import Command, add_common
from solverspace.cli.tune_options import TuneOptions
from solverspace.core.options import NON_NEGATIVE
from solverspace.integrations.kernel_tuner.cache import CacheMeasure, CacheWriter, T4Writer, check_cache


class CacheCheck(Command):
    example = "solverspace cache-check my_kernel.py brute_force_cache.json --limit 5"

    def add_arguments(self, p):
        add_common(p)
        p.add_argument("cache", help="a Kernel Tuner cache file (JSON, open or closed)")
        p.add_argument("--limit", type=NON_NEGATIVE, default=20, metavar="N", help="list at most N of each (default 20)")
        p.add_argument("--json", action="store_true", help="print one JSON object with everything found: {\"cache\", \"size\", \"entries\", \"ok\", \"missing\", "
                            "\"invalid\", \"failed\", \"repeated\", \"disagreeing\", ...}")

    def run(self, args) -> int:
        """`cache-check SPACE CACHE`: the valid configurations a Kernel Tuner cache lacks, and its
        entries the space calls invalid; exit 1 when either exists."""
        space = commands.load_space(args)
        result = check_cache(space, args.cache)
        if args.json:
            print(json.dumps(result.as_dict()))
        else:
            print(result.summary(limit=args.limit))
        return 0 if result.ok else 1


class KernelTunerFiles(TuneOptions):
    """`tune --measure-from CACHE` (a `CacheMeasure`), `--kt-cache FILE` (a `CacheWriter` sink) and
    `--t4 FILE` (a `T4Writer` sink), with the kernel and device names the cache files carry."""

    title = "Kernel Tuner caches and T4 results"
    measures = ("measure_from", "--measure-from CACHE", "times from a Kernel Tuner cache",
                "--measure-from brute_force.json")

    options = {
        "--measure-from": ("instead of --measure: the times of a complete Kernel Tuner cache file (.json or "
                           ".json.gz; ms; its failed entries are failed configurations; a valid configuration it "
                           "lacks stops tune)", "CACHE"),
        "--kt-cache": ("also write every measurement to FILE in Kernel Tuner's cache format, as it is made", "FILE"),
        "--kt-kernel-name": ("the kernel name of --kt-cache (default: the space file's stem); with --measure-from, "
                             "the cache must be of this kernel", "NAME"),
        "--kt-device-name": ("the device name of --kt-cache (default 'solverspace tune'); with --measure-from, the "
                             "cache must be of this device", "NAME"),
        "--t4": ("also write the measurements as T4 results (JSON) to FILE", "FILE"),
    }

    def measurer(self, args, space):
        return CacheMeasure(space, args.measure_from, kernel_name=args.kt_kernel_name,
                            device_name=args.kt_device_name)

    def sinks(self, args, space):
        if args.kt_cache is not None:
            yield CacheWriter(space, args.kt_cache, kernel_name=args.kt_kernel_name,
                              device_name=args.kt_device_name or "solverspace tune")
        if args.t4 is not None:
            yield T4Writer(space, args.t4)
