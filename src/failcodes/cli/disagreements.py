"""``failcodes disagreements``: write every FN/FP sentence (or claim) with its evidence."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from failcodes import disagreementio
from failcodes.cli.claims_option import WithoutClaimsOpt
from failcodes.cli.main import app
from failcodes.cli.options import LabelsOpt, MappingOpt, TracesOpt, make_console
from failcodes.disagreements import Disagreement, GroupSelection, Selected, count_by_kind
from failcodes.fileio import check_not_input, check_output_file
from failcodes.mapping import DEFAULT_MAPPING, resolve_mappings
from failcodes.metrics import DEFAULT_WITHOUT_CLAIMS, Level


def summary_table(
    items: Sequence[Disagreement | Selected | GroupSelection], *, title: str = "Disagreements"
) -> Table:
    """Rich table of FN/FP counts per system x mapping."""
    table = Table(title=title)
    for col in ("system", "mapping", "FN (missed)", "FP (false alarm)"):
        table.add_column(col, justify="left" if col in ("system", "mapping") else "right")
    for (system, mapping), counts in sorted(count_by_kind(items).items()):
        table.add_row(system, mapping, str(counts["FN"]), str(counts["FP"]))
    return table


@app.command("disagreements")
def disagreements(
    traces: TracesOpt,
    labels: LabelsOpt,
    out: Annotated[Path, typer.Option("-o", "--out", help="Output file: .jsonl or .parquet.")],
    mapping: MappingOpt = None,
    level: Annotated[Level, typer.Option("--level", help="Unit compared.")] = Level.SENTENCE,
    without_claims: WithoutClaimsOpt = DEFAULT_WITHOUT_CLAIMS,
) -> None:
    """Every sentence where a system's mapped verdict differs from the clinical label."""
    check_not_input([out], [*traces, labels])
    check_output_file(out)  # before reading: a bad -o is said first, not after the work
    maps = resolve_mappings(mapping or [DEFAULT_MAPPING])
    found = disagreementio.select_from_files(
        traces, labels, maps, level=level, without_claims=without_claims
    )
    count = found.write(out)
    console = make_console()
    console.print(summary_table(found.items))
    console.print(f"wrote {count} disagreements to {out}", highlight=False)
