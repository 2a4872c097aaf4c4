"""What an integration adds to `solverspace tune`: a `TuneOptions` declares its arguments (an
argument group of `tune --help`), refuses a bad combination of them before anything is opened, and
gives the measurer that stands for `--measure` and the sinks every measurement goes to
(`solverspace.analysis.tune.Sink`). `solverspace.cli.tune.Tune` opens them, runs the search once
and closes the sinks in one place.

`TUNE_OPTIONS` registers them as `"module:class"` strings, imported when `tune` builds its parser
(no other command imports them): Kernel Tuner's caches and T4 results, an Optuna study."""
from __future__ import annotations

TUNE_OPTIONS = ("solverspace.cli.kernel_tuner:KernelTunerFiles", "solverspace.cli.optuna:OptunaStudy")


class TuneOptions:
    """One integration's options of `tune` (a new instance per run: it may keep what it opened)."""

    #: the title of the options' group in `tune --help`
    title = ""
    #: the option that measures instead of `--measure`, or None: (its attribute in the parsed
    #: arguments, its usage, what it measures with, an example), as `Tune` names it in a message
    measures: tuple[str, str, str, str] | None = None
    #: the options, declared beside the engine they drive: {flag: (help, metavar)}, in the order of
    #: `tune --help` (the single source of the help text and of the generated CLI reference)
    options: dict[str, tuple[str, str]] = {}

    def add_arguments(self, group) -> None:
        """Add the declared `options` to `group` (an argument group of the `tune` parser)."""
        for flag, (text, metavar) in self.options.items():
            group.add_argument(flag, metavar=metavar, help=text)

    def check(self, args) -> None:
        """Refuse a bad combination of the options (an `OptionError`), before the space is loaded."""

    def measurer(self, args, space):
        """What measures a configuration (`tune`'s `measure`); called when the option of `measures`
        is given."""
        raise NotImplementedError

    def sinks(self, args, space):
        """The sinks the given options ask for, each yielded as soon as it is open (an error opening
        the next one leaves the earlier ones to be closed)."""
        return ()

    def finish(self, args) -> None:
        """What to say once the run is over and the sinks are closed (whether it succeeded or not)."""
