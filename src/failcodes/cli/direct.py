"""``failcodes metrics`` and ``failcodes ingest`` from a command line read here, without typer.

A command line this parser takes exactly as the request would (options as ``--flag value`` or
``--flag=value``, each value taken as it is) runs here; anything else goes to the typer CLI
untouched, which says what is wrong as it always did. Which lines, and why (typer's build
cost): docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import gc
import re
import signal
import sys
import threading
import types
import typing
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

from failcodes.commandline import (
    echo,
    one_line_errors,
    path_problem,
    process_defaults,
    terminate_like_interrupt,
)

#: A whole number or a decimal as written plainly (no sign, exponent, space or underscore).
_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?")

#: How a flag's value is read (None: a flag without a value) and whether the flag repeats.
_Reader = tuple[str, Callable[[str], Any] | None, bool]


def _plain(pattern: re.Pattern[str], kind: type) -> Callable[[str], Any]:
    def read(text: str) -> Any:
        if not pattern.fullmatch(text):
            raise ValueError(text)
        return kind(text)

    return read


def _reader(annotation: Any) -> tuple[Callable[[str], Any], bool] | None:
    """How a field's value is read from its text, and whether it repeats (None: typer's)."""
    repeats = typing.get_origin(annotation) is list
    if repeats:
        (annotation,) = typing.get_args(annotation)
    elif typing.get_origin(annotation) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(inner) != 1:
            return None
        annotation = inner[0]
    if annotation is int:
        return _plain(_WHOLE, int), repeats
    if annotation is float:
        return _plain(_DECIMAL, float), repeats
    if annotation in (str, Path) or (isinstance(annotation, type) and issubclass(annotation, Enum)):
        return annotation, repeats
    return None


def _flags(model: Any) -> dict[str, _Reader]:
    """Each flag of ``model``'s fields this parser reads: (field, reader, repeats); --raw-csv."""
    from failcodes.commands.base import field_flags, is_argument, on_cli

    out: dict[str, _Reader] = {"--raw-csv": ("raw_csv", None, False)}
    for name, info in model.model_fields.items():
        if not on_cli(model, name) or is_argument(model, name):
            continue
        found = (None, False) if info.annotation is bool else _reader(info.annotation)
        if found is not None:
            out.update(dict.fromkeys(field_flags(model, name), (name, *found)))
    return out


def parse(
    flags: dict[str, _Reader], argv: list[str], arguments: list[str] | None = None
) -> dict[str, Any] | None:
    """The fields ``argv`` gives, or None where typer is to read it (see the module).

    ``arguments``: the positional arguments (a word not beginning with ``-``) are appended
    to it, in order; without it, one is typer's.
    """
    values: dict[str, Any] = {}
    tokens = iter(argv)
    for token in tokens:
        if arguments is not None and token and not token.startswith("-"):
            arguments.append(token)
            continue
        flag, eq, text = token.partition("=") if token.startswith("--") else (token, "", "")
        if flag not in flags:
            return None
        name, read, repeats = flags[flag]
        if read is None:  # a flag without a value
            if eq or name in values:
                return None
            values[name] = True
            continue
        given = text if eq else next(tokens, "")
        if not given or given.startswith("-") or (name in values and not repeats):
            return None
        try:
            value = read(given)
        except ValueError:
            return None
        if repeats:
            values.setdefault(name, []).append(value)
        else:
            values[name] = value
    return values


def run(argv: list[str]) -> None:
    """Run ``failcodes ARGV`` and exit; return, nothing done, to leave it to typer.

    Called with the garbage collector paused (failcodes.cli.start): the objects start-up
    made are frozen and collection resumes before the command runs, as the CLI does.
    """
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, terminate_like_interrupt)
    process_defaults()  # before numpy is imported
    if path_problem(argv) is not None:
        return
    from failcodes.errors import FailcodesError

    try:
        found = _metrics(argv[1:]) if argv[0] == "metrics" else _ingest(argv[1:])
    except FailcodesError:  # a request the model refuses: typer's CLI says it
        return
    if found is None:
        return
    from failcodes.csvcells import keep_raw, raw_cells

    gc.freeze()
    gc.enable()
    with one_line_errors(), raw_cells(False):
        if found[1]:
            keep_raw()
        try:
            found[0]()
        except KeyboardInterrupt:  # as typer's command: exit 130, no word
            sys.exit(130)
    sys.exit(0)


#: A command to run and whether it writes CSV cells as they are (``--raw-csv``).
_Found = tuple[Callable[[], None], bool]


def _metrics(argv: list[str]) -> _Found | None:
    """``failcodes metrics ARGV`` writing rows, or None (typer's: see the module)."""
    from failcodes.commands.base import build
    from failcodes.commands.measure import MetricsRequest, RowFormat

    flags = _flags(MetricsRequest)
    rows = _plain(re.compile("|".join(typing.get_args(RowFormat))), str)
    flags["--format"] = ("out_format", rows, False)
    values = parse(flags, argv)
    if values is None or not ("out_format" in values or "out" in values):
        return None  # (no rows to write: the tables are typer's command's)
    raw = values.pop("raw_csv", False)
    request = build(MetricsRequest, values)

    def write() -> None:
        result = request.run()
        if result.written is not None:
            for line in result.lines():
                echo(line)
        elif result.text is not None:
            sys.stdout.write(result.text)
            for said in result.aside():  # no row field holds them (as typer's)
                print(said, file=sys.stderr)

    return write, raw


def _ingest(argv: list[str]) -> _Found | None:
    """``failcodes ingest ADAPTER PATH... ARGV``, or None (typer's: see the module)."""
    labels = _labels_file(argv)
    if labels is not None:
        return labels
    from failcodes.commands.base import build
    from failcodes.commands.ingest import IngestRequest

    flags = _flags(IngestRequest)
    words: list[str] = []
    values = parse(flags, argv, words)
    if values is None or len(words) < 2:
        return None
    raw = values.pop("raw_csv", False)
    values.update(adapter=words[0], paths=[Path(w) for w in words[1:]])
    request = build(IngestRequest, values)

    def write() -> None:  # as cli/output_format.print_lines
        for line in request.run(note=lambda line: echo(line, err=True)).lines():
            echo(line)

    return write, raw


def _labels_file(argv: list[str]) -> _Found | None:
    """``ingest generic-labels FILE -o OUT``, both JSONL and no other option, or None.

    What :class:`~failcodes.commands.ingest.IngestRequest` runs for it (generic-labels with no
    option reads one JSONL file by :func:`~failcodes.labelio.read_labels` as columns and
    writes them by :func:`~failcodes.labelio.write_labels`, its lines and refusals), without
    the request: importing pydantic and the models was ~0.1 of the 0.19 CPU-s a study's
    labels step took, 5x the JSON parse of its file (issue 30).
    """
    from failcodes import fileio, labelio, tableio
    from failcodes.errors import FailcodesError, InputError

    out = ("out", Path, False)
    words: list[str] = []
    values = parse({"-o": out, "--out": out}, argv, words)
    if values is None or "out" not in values or len(words) != 2 or words[0] != "generic-labels":
        return None
    path, target = Path(words[1]), values["out"]
    try:
        formats = {tableio.detect_format(path), tableio.detect_format(target)}
    except FailcodesError:
        return None
    if formats != {tableio.Format.JSONL} or words[1].startswith("bundled:"):
        return None

    def write() -> None:  # IngestRequest.run's steps for it, in its order
        fileio.check_not_input((target,), (path,))
        # a piece at a time, nothing held; else (an error, or what it cannot vouch for) whole
        count = labelio.copy_labels(path, target)
        if count is None:
            labels = labelio.read_labels(path, column_map={}, columns=True)
            if not labels:
                raise InputError("no labels found (expected at least one record)", path=str(path))
            labelio.write_labels(target, labels)  # atomically, in a batch of its own
            count = len(labels)
        echo(f"wrote {count:,} labels -> {target}")

    return write, False
