"""The handler of `tune --optuna-storage URL [--optuna-study NAME]`: every measurement
of the run also goes into an Optuna study as a trial, as it is made (`solverspace.integrations.optuna.
OptunaRecorder`, a `tune` sink), so `optuna-dashboard URL` shows a `tune` run while it runs.
Without these options `tune` is exactly the Kernel Tuner records handler's (`cli.kernel_tuner`)."""
from __future__ import annotations

from pathlib import Path

from solverspace.cli.commands import load_space
from solverspace.core.errors import OptionError
from solverspace.core.messages import say


def default_study(space_argument: str) -> str:
    """The study's name when `--optuna-study` is not given: the space file's stem (`gemm` for the
    built-in space)."""
    return Path(space_argument).stem or space_argument


def cmd_tune_optuna(args) -> int:
    """`tune`, recording into an Optuna storage with `--optuna-storage`; otherwise as it was."""
    from solverspace.cli.kernel_tuner import cmd_tune_records
    if args.optuna_storage is None:
        if args.optuna_study is not None:
            raise OptionError("tune: --optuna-study names a study of --optuna-storage, which is not given",
                              hint="e.g. --optuna-storage sqlite:///optuna.db --optuna-study my-run")
        return cmd_tune_records(args)
    try:
        from solverspace.integrations.optuna.sampler import OptunaRecorder
    except ImportError as exc:
        raise OptionError(f"tune --optuna-storage: {exc}", hint="pip install 'solverspace[optuna]'") from None
    if args.quiet:
        import optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)      # "A new study created ..." is progress
    study = args.optuna_study if args.optuna_study is not None else default_study(args.space)
    recorder = OptunaRecorder(load_space(args), args.optuna_storage, study)
    args.sinks = [*getattr(args, "sinks", ()), recorder]
    try:
        return cmd_tune_records(args)
    finally:
        if not args.quiet:
            say(f"optuna: {recorder.added} trial(s) recorded in study {study!r} of {args.optuna_storage} "
                f"({len(recorder.held)} configuration(s) there now)")
