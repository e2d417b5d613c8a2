"""``failcodes disagreements``: write every FN/FP sentence (or claim) with its evidence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from failcodes.cli.main import app
from failcodes.cli.options import make_console
from failcodes.cli.requests import add_command
from failcodes.commands.measure import DisagreementsRequest

if TYPE_CHECKING:  # (numpy: imported by the command, not by its --help)
    from failcodes.disagreements import Disagreement, GroupSelection, Selected


def summary_table(items: Sequence[Disagreement | Selected | GroupSelection]) -> Table:
    """Rich table of FN/FP counts per system x mapping."""
    from failcodes.disagreements import count_by_kind

    table = Table(title="Disagreements")
    for col in ("system", "mapping", "FN (missed)", "FP (false alarm)"):
        table.add_column(col, justify="left" if col in ("system", "mapping") else "right")
    for (system, mapping), counts in sorted(count_by_kind(items).items()):
        table.add_row(system, mapping, str(counts["FN"]), str(counts["FP"]))
    return table


def _handle(request: DisagreementsRequest) -> None:
    result = request.run()
    if result.assumed:  # the first line: what was assumed of the data
        typer.echo(result.assumed)
    if result.dropped:  # rows the ingest dropped: their labels may still be FNs here
        typer.echo(result.dropped)
    if result.coverage:  # the next: how many sentences the labels leave out
        typer.echo(result.coverage)
    console = make_console()
    console.print(summary_table(result.items))
    console.print(result.written, highlight=False)


add_command(app, DisagreementsRequest, _handle)
