"""``failcodes report RUN_DIR -o reports/NAME/``: tables, figures and a self-contained HTML page.

Thin: the options are :class:`failcodes.commands.report.ReportRequest`'s fields.
"""

from __future__ import annotations

import typer

from failcodes.cli.main import app
from failcodes.cli.options import RAW_CSV, raw_csv_cells
from failcodes.cli.requests import add_command
from failcodes.commands.report import ReportRequest


def _handle(request: ReportRequest, raw_csv: bool) -> None:
    raw_csv_cells(raw_csv)
    notes: list[str] = []
    result = request.run(note=notes.append)  # a study edited since `failcodes run`: said first
    for line in result.lines():
        typer.echo(line)
    for line in notes:  # after the report's line, as they always came
        typer.echo(line, err=True)


add_command(app, ReportRequest, _handle, extra=[RAW_CSV])
