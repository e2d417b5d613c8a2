"""``failcodes disagreements``: write every FN/FP sentence (or claim) with its evidence."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table

from failcodes import dataio
from failcodes.cli.claims_option import WithoutClaimsOpt
from failcodes.cli.main import app
from failcodes.cli.options import (
    LabelsOpt,
    MappingOpt,
    TracesOpt,
    load_columns,
    load_sentence_columns,
    make_console,
    refuse_claim_labels,
)
from failcodes.disagreements import (
    Disagreement,
    GroupSelection,
    Selected,
    count_by_kind,
    select_disagreements,
    select_group_disagreements,
)
from failcodes.fileio import check_not_input, check_output_file
from failcodes.labels import LabelIndex
from failcodes.mapping import DEFAULT_MAPPING, resolve_mappings
from failcodes.metrics import DEFAULT_WITHOUT_CLAIMS, Level
from failcodes.tracecols import SentenceColumns, TraceColumns


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
    columns: TraceColumns | SentenceColumns
    if level is Level.SENTENCE:
        # sentence groups first (memory follows the sentences, issue 18); the same errors,
        # in the same order, as the trace columns give
        columns, label_list = load_sentence_columns(traces, labels, locate=True)
        refuse_claim_labels(label_list, labels)
    else:
        columns, label_list = load_columns(traces, labels)
    index = LabelIndex(label_list)
    items: Sequence[Selected | GroupSelection] = []
    if isinstance(columns, SentenceColumns):
        found = select_group_disagreements(
            columns, label_list, index, maps, without_claims=without_claims
        )
        if found is not None:
            found = _located(columns, found)
        if found is not None:
            items = found
            columns = found[0].cols if found else columns
        else:  # claims the groups cannot find: the trace columns find them
            del found, columns, index
            columns, label_list = load_columns(traces, labels)
            index = LabelIndex(label_list)
    if isinstance(columns, TraceColumns):
        items = [
            s
            for m in maps
            for s in select_disagreements(
                columns, index, m, level=level, without_claims=without_claims
            )
        ]
    count = dataio.stream_disagreements(out, columns, _each(items), index)
    console = make_console()
    console.print(summary_table(items))
    console.print(f"wrote {count} disagreements to {out}", highlight=False)


def _located(columns: SentenceColumns, found: list[GroupSelection]) -> list[GroupSelection] | None:
    """The selections with every disagreeing group's claims located, or None.

    Groups whose claims are no run of rows (systems interleaved, a sentence split) are
    found by a scan of the group keys (JSONL only: None for Parquet).
    """
    missing = [s.unlocated() for s in found]
    if not any(len(m) for m in missing):
        return found
    located = dataio.locate_scattered(columns, np.unique(np.concatenate(missing)))
    if located is None:
        return None
    return [replace(s, cols=located) for s in found]


def _each(items: Sequence[Selected | GroupSelection]) -> Iterator[Selected]:
    """The disagreements one at a time (a selection's built as they are written)."""
    for item in items:
        if isinstance(item, GroupSelection):
            yield from item
        else:
            yield item
