"""``failcodes ingest ADAPTER PATH... -o OUT``: convert pipeline outputs and labels.

Thin: the options are :class:`failcodes.commands.ingest.IngestRequest`'s fields.
"""

from __future__ import annotations

from failcodes.cli.main import app
from failcodes.cli.options import RAW_CSV, raw_csv_cells
from failcodes.cli.output_format import print_lines
from failcodes.cli.requests import add_command
from failcodes.commands.ingest import IngestRequest


def _handle(request: IngestRequest, raw_csv: bool) -> None:
    raw_csv_cells(raw_csv)
    print_lines(request)


def _doc() -> str:
    from failcodes.ingest import names

    return f"{IngestRequest.__doc__}\n\nAdapters: {', '.join(names())}."


add_command(app, IngestRequest, _handle, extra=[RAW_CSV], doc=_doc())
