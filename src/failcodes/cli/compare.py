"""``failcodes compare FILE``: significance tests between systems on the same units.

Thin: the options are :class:`failcodes.commands.compare.CompareRequest`'s fields.
"""

from __future__ import annotations

import json

import typer
from rich.table import Table

from failcodes.cli.main import app
from failcodes.cli.options import data_console
from failcodes.cli.output_format import FORMAT_PARAM, OutputFormat, require_format
from failcodes.cli.requests import add_command
from failcodes.commands.compare import CompareRequest, CompareResult
from failcodes.measurenames import WITHOUT_CLAIMS_RULE, WithoutClaimsPolicy


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _handle(request: CompareRequest, fmt: OutputFormat) -> None:
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="compare")
    result = request.run()
    if fmt is OutputFormat.JSON:
        typer.echo(json.dumps(result.payload(), indent=2))
        return
    if result.assumed:  # the first line: what was assumed of the data
        typer.echo(result.assumed)
    if result.coverage:  # the next: how many sentences the labels leave out
        typer.echo(result.coverage)
    data_console(width=160).print(_table(result))
    holm = result.holm_note()
    if holm:
        typer.echo(holm)
    if result.claims_note:
        note = result.claims_note
        counts = ", ".join(f"{s}: {n}" for s, n in sorted(note["n_without_claims"].items()))
        rule = WITHOUT_CLAIMS_RULE[WithoutClaimsPolicy(note["without_claims_policy"])]
        typer.echo(f"sentences without claims: {rule}; per system: {counts}")


def _table(result: CompareResult) -> Table:
    table = Table()
    head = ["mapping"] if result.with_mapping else []
    for col in (*head, "test", "comparison", "statistic", "df", "p", "p (Holm)", "effect", "n"):
        table.add_column(col)
    table.add_column("note")
    for m, r in result.results:
        table.add_row(
            *([m or ""] if result.with_mapping else []),
            r.test,
            r.comparison,
            _fmt(r.statistic),
            "-" if r.df is None else str(r.df),
            _fmt(r.p_value),
            _fmt(r.p_holm),
            "-" if r.effect is None else f"{r.effect_name}={r.effect:.4g}",
            str(r.n),
            r.undefined_reason or result.note(m, r) or "",
        )
    return table


add_command(app, CompareRequest, _handle, extra=[FORMAT_PARAM])
