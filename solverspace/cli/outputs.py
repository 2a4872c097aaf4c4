"""What the commands share about their answers and the files they write: `-o` (and its sidecars)
must not be the space file being read and must name a format the command knows (`check_output`);
what was written is said on standard error (`say`), never mixed with an answer on standard
output; and `--json` answers are one JSON document on standard output (`print_json`,
`configuration_json`)."""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from solverspace.core.errors import OptionError, OutputError
from solverspace.core.messages import say
from solverspace.core.orders import format_value
from solverspace.core.output import check_not_input, is_stdout


def check_output(args, space, *paths, rows: bool = True) -> None:
    """`-o` (and its sidecars) must not be the space file being read: refused, exit 2. With
    `rows` (a file of configurations), `-o` must also name one of the formats rows are written in
    (`check_rows_format`)."""
    for path in (args.output, *paths):
        check_not_input(path, space.model.source)
    if rows:
        check_rows_format(args.output)


def check_rows_format(path, option: str = "-o") -> None:
    """Refuse an output file whose extension is no format of rows (`-o out.xyz` would otherwise
    be written as CSV). A name without an extension (`/dev/null`, a named pipe) and `-` (standard
    output) take CSV."""
    from solverspace.core.formats import FORMATS
    if path is None or is_stdout(path):
        return
    suffix = Path(path).suffix
    if suffix and suffix.lower() not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise OutputError(f"{option} {str(path)!r}: unknown output extension {suffix!r} (known: {known})",
                          hint=f"name the file with one of them, e.g. {option} {Path(path).with_suffix('.csv')}")


def print_json(document) -> None:
    """A `--json` answer: one JSON document, one line, on standard output (an exact fraction as
    its text, `"7/2"`; any other value JSON has no type for, a setting's, as its `str`)."""
    print(json.dumps(document, default=lambda value: json_value(value) if isinstance(value, Fraction) else str(value)))


def json_value(value):
    """A value as JSON holds it: an order (a tuple of items) as the text every output writes
    (`i>j>k`, as in CSV and JSON Lines files, `get` and `best --json`); an exact fraction (a
    derived value) as its text, `"7/2"`."""
    if type(value) is tuple:
        return format_value(value)
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    return value


def configuration_json(names, values) -> dict:
    """A configuration as a JSON object: parameter name -> value (`json_value`)."""
    return {name: json_value(value) for name, value in zip(names, values)}


def add_json(p, what: str) -> None:
    """`--json` on a command's parser; `what` describes the document (its keys), for `--help`."""
    p.add_argument("--json", action="store_true", help=f"print one JSON document on standard output: {what}")


def check_json_output(args) -> None:
    """`--json` with `-o -`: both would be standard output; refused before anything runs."""
    if getattr(args, "json", False) and args.output is not None and is_stdout(args.output):
        raise OptionError("--json with -o -: the JSON report and the rows would both go to standard output",
                          hint="write the rows to a file (-o FILE), or leave out -o for the rows as JSON")


def report_written(args, line: str, document: dict) -> None:
    """What a command wrote to a file: `line` on standard error, or with `--json` the `document`
    on standard output (the answer of a command whose rows went to a file is this report)."""
    if getattr(args, "json", False):
        print_json(document)
    else:
        say(line)


def rows_json(rows) -> list[dict]:
    """The rows of a table held in memory (a structured array: a sample, a design) as JSON
    objects (orders are already their text there)."""
    return [configuration_json(rows.dtype.names, row.tolist()) for row in rows]
