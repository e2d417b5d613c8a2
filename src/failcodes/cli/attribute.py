"""``failcodes attribute``: the pipeline stage behind each disagreement (docs/attribution.md).

Thin: the options are :class:`failcodes.commands.attribute.AttributeRequest`'s fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.table import Table

from failcodes.cli.main import app
from failcodes.cli.options import RAW_CSV, data_console, raw_csv_cells
from failcodes.cli.output_format import FORMAT_PARAM, OutputFormat, require_format
from failcodes.cli.requests import add_command
from failcodes.commands.attribute import AttributeRequest

if TYPE_CHECKING:  # pandas (~0.2 s) is imported where used, so --help does not pay for it
    import pandas as pd


def _cell(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.3f}" if v == v else "–"
    return "" if v is None else str(v)


def _rich(df: pd.DataFrame, title: str) -> Table:
    table = Table(title=title)
    for col in df.columns:
        table.add_column(str(col))
    for row in df.itertuples(index=False):  # a rate of no coded row (NaN): "–", not "nan"
        table.add_row(*[_cell(v) for v in row])
    return table


def _handle(request: AttributeRequest, fmt: OutputFormat, raw_csv: bool) -> None:
    raw_csv_cells(raw_csv)
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="attribute")
    out = data_console(soft_wrap=True)
    err = data_console(stderr=True, soft_wrap=True)
    notes: list[str] = []
    result = request.run(note=notes.append)
    for line in notes[:-1] if result.heuristic else notes:  # the heuristic note comes last
        err.print(line, highlight=False)
    if fmt is OutputFormat.JSON:
        typer.echo(result.json_text())
    else:
        label = (
            ""
            if not result.heuristic
            else " (codes: include the heuristic baseline)"
            if result.mixed
            else " (codes: heuristic baseline)"
        )
        out.print(_rich(result.tables["attribution_summary"], f"Attribution{label}"))
        for name in ("retriever_all_high", "verifier_all_correct"):
            if name in result.tables:
                out.print(_rich(result.tables[name], name.replace("_", " ") + label))
        for line in result.lines():
            out.print(line, highlight=False)
    if result.heuristic:
        err.print(notes[-1], highlight=False)


add_command(app, AttributeRequest, _handle, extra=[FORMAT_PARAM, RAW_CSV])
