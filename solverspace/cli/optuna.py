"""The options Optuna adds to `tune`: `--optuna-storage URL [--optuna-study NAME]` records every
measurement of the run into an Optuna study as a trial, as it is made
(`solverspace.integrations.optuna.OptunaRecorder`, a `tune` sink), so `optuna-dashboard URL` shows
a `tune` run while it runs. Optuna is an extra: it is imported only when a storage is given."""
from __future__ import annotations

from pathlib import Path

from solverspace.cli.tune_options import TuneOptions
from solverspace.core.errors import OptionError
from solverspace.core.messages import say


def default_study(space_argument: str) -> str:
    """The study's name when `--optuna-study` is not given: the space file's stem (`gemm` for the
    built-in space)."""
    return Path(space_argument).stem or space_argument


class OptunaStudy(TuneOptions):
    """`tune --optuna-storage URL [--optuna-study NAME]`: an `OptunaRecorder` sink."""

    title = "an Optuna study"

    def __init__(self):
        self.recorder = self.study = None

    options = {
        "--optuna-storage": ("also record every measurement as a trial of an Optuna study in this storage (e.g. "
                             "sqlite:///optuna.db), as it is made (the optuna extra)", "URL"),
        "--optuna-study": ("the study of --optuna-storage (default: the space file's stem); created when missing, "
                           "continued when it exists (a configuration it holds is not added again)", "NAME"),
    }

    def check(self, args) -> None:
        if args.optuna_storage is None and args.optuna_study is not None:
            raise OptionError("tune: --optuna-study names a study of --optuna-storage, which is not given",
                              hint="e.g. --optuna-storage sqlite:///optuna.db --optuna-study my-run")

    def sinks(self, args, space):
        if args.optuna_storage is None:
            return
        try:
            from solverspace.integrations.optuna.sampler import OptunaRecorder
        except ImportError as exc:
            raise OptionError(f"tune --optuna-storage: {exc}", hint="pip install 'solverspace[optuna]'") from None
        if args.quiet:
            import optuna
            optuna.logging.set_verbosity(optuna.logging.WARNING)      # "A new study created ..." is progress
        self.study = args.optuna_study if args.optuna_study is not None else default_study(args.space)
        self.recorder = OptunaRecorder(space, args.optuna_storage, self.study)
        yield self.recorder

    def finish(self, args) -> None:
        if self.recorder is not None and not args.quiet:
            say(f"optuna: {self.recorder.added} trial(s) recorded in study {self.study!r} of {args.optuna_storage} "
                f"({len(self.recorder.held)} configuration(s) there now)")
