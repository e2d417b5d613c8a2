"""``failcodes ingest ADAPTER PATH... -o OUT``: convert pipeline outputs and labels.

Thin: the options are :class:`failcodes.commands.ingest.IngestRequest`'s fields.
"""

from __future__ import annotations

import typer

from failcodes.cli.main import app
from failcodes.cli.options import RAW_CSV, raw_csv_cells
from failcodes.cli.requests import add_command
from failcodes.commands.ingest import IngestRequest


def _handle(request: IngestRequest, raw_csv: bool) -> None:
    raw_csv_cells(raw_csv)
    result = request.run(note=lambda line: typer.echo(line, err=True))
    for line in result.lines():
        typer.echo(line)


def _doc() -> str:
    from failcodes.ingest import names

    return f"{IngestRequest.__doc__}\n\nAdapters: {', '.join(names())}."


add_command(app, IngestRequest, _handle, extra=[RAW_CSV], doc=_doc())
