"""``failcodes agree FILE``: inter-rater agreement on a ratings table or annotation run.

Thin: the options are :class:`failcodes.commands.agree.AgreeRequest`'s fields.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from failcodes.cli.main import app
from failcodes.cli.options import data_console
from failcodes.cli.output_format import FORMAT_PARAM, OutputFormat, require_format
from failcodes.cli.requests import add_command
from failcodes.commands.agree import AgreeRequest
from failcodes.stats.names import SET_DISTANCES


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:z.3f}"  # z: -0.0004 prints 0.000, not -0.000


def _group_cell(row: dict[str, Any], key: str) -> str:
    """A grouping cell; a dimension compared on code sets says so (``inference [sets]``)."""
    value = row.get(key)
    text = "-" if value is None else str(value)
    if key == "dimension" and row.get("sets"):
        text = "pooled [sets]" if value is None else f"{text} [sets]"
    if key == "code" and row.get("prevalence"):  # each coder's share of units carrying it
        shares = ", ".join(f"{c} {p:.2f}" for c, p in row["prevalence"].items())
        text = f"{text} (prevalence {shares})"
    return text


def _alpha_kind(row: dict[str, Any]) -> str:
    """`` (nominal)`` after alpha; `` (masi)``/`` (jaccard)`` for alpha on code sets."""
    if row["statistic"] != "krippendorff":
        return ""
    return f" ({row['weights'] if row['weights'] in SET_DISTANCES else row['level']})"


def _print_table(rows: list[dict[str, Any]], group_keys: list[str]) -> None:
    # the level --confidence asked for: `--confidence 0.5` printed its intervals under "95% CI"
    level = "/".join(f"{100 * c:g}%" for c in sorted({r["confidence"] for r in rows})) or "95%"
    table = Table(show_lines=False)
    header = f"{level} CI"
    for key in [*group_keys, "statistic", "weights", "value", header, "se", "units", "raters"]:
        table.add_column(key)
    table.add_column("note")
    for row in rows:
        ci = (
            "-"
            if row["ci_low"] is None
            else f"[{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}] {row['ci_method']}"
            + (f" ±{row['ci_mc_error']:.3f}" if row.get("ci_mc_error") is not None else "")
        )
        table.add_row(
            *[_group_cell(row, k) for k in group_keys],
            row["statistic"] + _alpha_kind(row),
            row["weights"],
            _fmt(row["value"]) + (f" {row['beside']}" if row.get("beside") else ""),
            ci,
            _fmt(row["se"]),
            str(row["n_units"])
            + (f" ({row['n_rows']} rows)" if row.get("n_rows") is not None else "")
            + (f" +{row['n_single_rated']} single" if row.get("n_single_rated") else ""),
            str(row["n_raters"]),
            row["undefined_reason"] or (f"warning: {row['warning']}" if row["warning"] else ""),
        )
    data_console(width=160).print(table)


def _handle(request: AgreeRequest, fmt: OutputFormat) -> None:
    require_format(fmt, OutputFormat.TABLE, OutputFormat.JSON, command="agree")
    result = request.run(note=lambda line: typer.echo(line, err=True))
    if fmt is OutputFormat.JSON:
        # `> STUDY/agreement/NAME.json`: the inputs named from the study, as -o names them
        # (Linux says where stdout goes; elsewhere absolute paths, "not checked" once moved)
        with contextlib.suppress(OSError):
            target = Path("/proc/self/fd/1").readlink()
            if request.out is None and target.parent.name == "agreement" and target.is_file():
                record = request.provenance(target)
                for row in result.rows:
                    row.update(record)
        typer.echo(json.dumps(result.rows, indent=2))
    else:
        for line in result.notes:
            typer.echo(line)
        _print_table(result.rows, result.group_keys)


add_command(app, AgreeRequest, _handle, extra=[FORMAT_PARAM])
