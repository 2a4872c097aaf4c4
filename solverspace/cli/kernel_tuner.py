"""The handlers of the Kernel Tuner record options: `tune --kt-cache FILE` (a Kernel Tuner
cache written as `tune` measures), `tune --measure-from CACHE` (times from a complete cache instead
of a command), `tune --t4 FILE` (T4 results), and `cache-check SPACE CACHE` (exit 1 when valid
configurations are missing from the cache or it holds entries the space calls invalid)."""
from __future__ import annotations

import json

from solverspace.cli.commands import load_space
from solverspace.core.errors import OptionError
from solverspace.core.messages import say


def cmd_tune_records(args) -> int:
    """`tune`, with the Kernel Tuner cache and T4 options; without them, `search_commands.cmd_tune` as it is."""
    from solverspace.cli.search_commands import cmd_tune
    if (args.measure is None) == (args.measure_from is None):
        raise OptionError("tune: give exactly one of --measure CMD (run a command) and --measure-from CACHE "
                          "(times from a Kernel Tuner cache)" if args.measure is None else
                          "tune: --measure and --measure-from both given: give one",
                          hint="e.g. --measure './bench {x}' or --measure-from brute_force.json")
    if args.measure_from is None and args.kt_cache is None and args.t4 is None:
        return cmd_tune(args)
    from solverspace.integrations.kernel_tuner.cache import CacheMeasure, CacheWriter, T4Writer
    space = load_space(args)
    sinks: list = list(getattr(args, "sinks", ()))   # sinks of other options (--optuna-storage)
    try:
        if args.measure_from is not None:
            args.measure = CacheMeasure(space, args.measure_from, kernel_name=args.kt_kernel_name,
                                        device_name=args.kt_device_name)
        if args.kt_cache is not None:
            sinks.append(CacheWriter(space, args.kt_cache, kernel_name=args.kt_kernel_name,
                                     device_name=args.kt_device_name or "solverspace tune"))
        if args.t4 is not None:
            sinks.append(T4Writer(space, args.t4))
        args.sinks = sinks
        return cmd_tune(args)
    finally:
        for sink in sinks:      # closed by tune already, unless it never started (closing twice is harmless)
            try:
                sink.close()
            except Exception as exc:     # a close failure is said, the exit code stays tune's
                say(f"warning: closing {sink!r} failed: {exc}")


def cmd_cache_check(args) -> int:
    """`cache-check SPACE CACHE`: the valid configurations a Kernel Tuner cache lacks, and its
    entries the space calls invalid; exit 1 when either exists."""
    from solverspace.integrations.kernel_tuner.cache import check_cache
    space = load_space(args)
    result = check_cache(space, args.cache)
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        print(result.summary(limit=args.limit))
    return 0 if result.ok else 1
