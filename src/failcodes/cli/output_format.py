"""The one ``--format`` of every command: ``table`` for people, ``json`` / ``csv`` for scripts."""

from __future__ import annotations

import inspect
from enum import StrEnum
from typing import Annotated, Any

import typer

from failcodes.errors import ConfigError


class OutputFormat(StrEnum):
    """How a command prints its results."""

    TABLE = "table"  # rich tables and text, for people
    JSON = "json"
    CSV = "csv"


FORMAT_HELP = "table (for people), json or csv (for scripts; not every command writes csv)."

#: The ``--format`` option, shared by every command that prints results.
FormatOpt = Annotated[OutputFormat, typer.Option("--format", help=FORMAT_HELP)]
#: ``--format`` as an ``extra`` parameter of a request command (``cli.requests``).
FORMAT_PARAM = inspect.Parameter(
    "fmt", inspect.Parameter.KEYWORD_ONLY, default=OutputFormat.TABLE, annotation=FormatOpt
)


def require_format(fmt: OutputFormat, *allowed: OutputFormat, command: str) -> None:
    """Refuse a format the command cannot write (one line, exit 2)."""
    if fmt not in allowed:
        can = " or ".join(f.value for f in allowed)
        raise ConfigError(f"{command} --format {fmt.value}: this command writes {can}")


def print_result(request: Any, fmt: OutputFormat) -> None:
    """Run ``request``; print its result's ``lines()``, or its ``json_text()`` (--format json)."""
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command=" ".join(request.command))
    result = request.run()
    typer.echo(result.json_text() if fmt is OutputFormat.JSON else "\n".join(result.lines()))


def print_lines(request: Any) -> None:
    """Run ``request`` (its notes on stderr); print its result's ``lines()``."""
    for line in request.run(note=lambda line: typer.echo(line, err=True)).lines():
        typer.echo(line)
