"""Options, consoles and input loading shared by several subcommands (one place, no borrowing).

``metrics``, ``disagreements`` and ``compare`` read traces + labels with the same flags;
``demo`` and ``run`` print tables on the same console; ``judge`` and ``attribute`` name the
judge's input, codebook and passage cut-off alike; ``judge`` and ``saturate recode`` call a
judge with the same endpoint, concurrency, budget, retry and cache flags.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from failcodes import dataio, labelio, traceio
from failcodes.errors import ConfigError, InputError
from failcodes.labels import Label, LabelColumns, label_column
from failcodes.mapping import NAMED_MAPPINGS
from failcodes.tracecols import SentenceColumns, TraceColumns
from failcodes.traces import Trace
from failcodes.units import UnitKind

if TYPE_CHECKING:
    from rich.console import Console

MAPPING_HELP = (
    "Error mapping (repeatable): "
    + ", ".join(NAMED_MAPPINGS)
    + ", or comma-separated verdicts such as 'refuted,ambiguous'."
)

TracesOpt = Annotated[
    list[Path],
    typer.Option("--traces", help="Trace file (.jsonl/.csv/.parquet); repeat for several."),
]
LabelsOpt = Annotated[Path, typer.Option("--labels", help="Clinical labels file.")]
MappingOpt = Annotated[list[str] | None, typer.Option("--mapping", "-m", help=MAPPING_HELP)]


# The pipeline's evidence source, declared over the traces' own: `ingest` and `attribute`.
EvidenceOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--evidence",
        help="Declare the pipeline's evidence source on every trace: retrieved, provided or "
        "none (closed-book); SYSTEM=SOURCE for one system (repeatable). See "
        "docs/attribution.md.",
    ),
]

# A ratings table's unit ids: `agree` and `compare` (failcodes.stats.tables guesses the column).
UnitColumnOpt = Annotated[
    str | None,
    typer.Option("--unit-column", help="Unit id column (default: guessed from its name)."),
]

PartOpt = Annotated[
    UnitKind, typer.Option("--part", "-p", help="Codebook part: retrieval or verification.")
]

# What a judge codes: `judge retrieval|reasoning`, `attribute` (which reads its runs),
# `saturate init --from` and `labelstudio export|push` (which build units the same way).
FromOpt = Annotated[
    Path,
    typer.Option(
        "--from", help="Traces or disagreements (JSONL): the judge's input.", show_default=False
    ),
]
CodebookFileOpt = Annotated[
    Path | None,
    typer.Option("--codebook", help="Codebook file (YAML/JSON; default: the bundled codebook)."),
]
TopKOpt = Annotated[
    int | None,
    typer.Option(
        "--top-k",
        min=1,
        help="Only passages ranked <= K (units built from traces or disagreements).",
    ),
]

# A study's data sets: `recode` and `labelstudio export|push` with a study folder.
DatasetOpt = Annotated[
    str | None, typer.Option("--dataset", help="Only this data set of the study (default: all).")
]

# How a judge is called: `judge retrieval|reasoning` and `saturate recode`.
DEFAULT_CACHE = Path("annotations") / "judge-cache.sqlite"
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Endpoint of an OpenAI/Anthropic-compatible server."),
]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Calls in flight.")]
BudgetOpt = Annotated[
    float | None, typer.Option("--budget", min=0, help="Stop cleanly after spending USD.")
]
CacheOpt = Annotated[Path, typer.Option("--cache", help="Response cache (SQLite).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the cache.")]
RetriesOpt = Annotated[int, typer.Option("--max-attempts", min=1, help="Attempts per call.")]


def load_inputs(trace_paths: Sequence[Path], labels_path: Path) -> tuple[list[Trace], list[Label]]:
    """Read traces from several files (claim ids unique across them) and check the labels."""
    seen: dict[tuple[str, str], tuple[Path, int]] = {}
    traces: list[Trace] = []
    for path in trace_paths:
        traces.extend(traceio.read_traces(path, seen=seen))
    labels = labelio.read_labels(labels_path, traces=traces)
    return traces, labels


def load_columns(
    trace_paths: Sequence[Path], labels_path: Path, *, text: bool = False
) -> tuple[TraceColumns, Sequence[Label]]:
    """Read traces into columns (claim ids unique across the files) and check the labels."""
    columns = dataio.read_trace_columns(trace_paths, text=text)
    labels = labelio.read_labels(labels_path, traces=columns, columns=True)
    return columns, labels


def refuse_claim_labels(
    labels: Sequence[Label],
    labels_path: Path,
    remedy: str = 'compare claims with --level claim (in a study: [metrics] level = "claim"), '
    "or give sentence labels",
) -> None:
    """Sentence-level comparison against labels that are all claim-level: one line, exit 2.

    No sentence would have a label, so every metric would be undefined and no disagreement
    found; ``remedy`` says what to do instead (the claim labels serve ``--level claim``).
    """
    claim_ids = label_column(labels, "claim_id")
    if claim_ids and all(c is not None for c in claim_ids):
        raise ConfigError(
            f"{labels_path}: all {len(claim_ids):,} labels are claim-level (claim_id set), so no "
            f"sentence has a label; {remedy}"
        )


def load_sentence_columns(
    trace_paths: Sequence[Path], labels_path: Path, *, locate: bool = False
) -> tuple[TraceColumns | SentenceColumns, Sequence[Label]]:
    """:func:`load_columns` for sentence-level metrics: traces reduced to sentence groups.

    Memory follows the sentences (issue 18). The labels are read first (a claim label needs
    the claims: the traces are then read as columns), their error, if any, raised after the
    traces' own, as :func:`load_columns` orders them. ``locate``: the groups know where
    their claims are (:func:`failcodes.dataio.read_sentence_columns`).
    """
    labels: LabelColumns | None = None
    failure: InputError | None = None
    try:
        labels = labelio.read_labels(labels_path, columns=True)
    except InputError as exc:
        failure = exc
    grouped = labels is not None and all(c is None for c in labels.column("claim_id"))
    columns: TraceColumns | SentenceColumns = (
        dataio.read_sentence_columns(trace_paths, labels.column("sentence_id"), locate=locate)
        if labels is not None and grouped
        else dataio.read_trace_columns(trace_paths)
    )
    if failure is not None:
        raise failure
    assert labels is not None
    labelio.validate_labels(labels, columns, path=labels_path, lines=labels.lines)
    return columns, labels


def make_console() -> Console:
    """A console for tables: the terminal's width, or 200 columns when piped."""
    from rich.console import Console  # imported here: `ingest` prints no tables

    return Console() if sys.stdout.isatty() else Console(width=200)


__all__ = [
    "DEFAULT_CACHE",
    "MAPPING_HELP",
    "BaseUrlOpt",
    "BudgetOpt",
    "CacheOpt",
    "CodebookFileOpt",
    "ConcurrencyOpt",
    "DatasetOpt",
    "EvidenceOpt",
    "FromOpt",
    "LabelsOpt",
    "MappingOpt",
    "NoCacheOpt",
    "PartOpt",
    "RetriesOpt",
    "TopKOpt",
    "TracesOpt",
    "UnitColumnOpt",
    "load_columns",
    "load_inputs",
    "load_sentence_columns",
    "make_console",
]
