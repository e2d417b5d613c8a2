"""Options, consoles and input loading shared by several subcommands (one place, no borrowing).

``metrics``, ``disagreements`` and ``compare`` read traces + labels with the same flags;
``demo`` and ``run`` print tables on the same console; ``judge`` and ``attribute`` name the
judge's input, codebook and passage cut-off alike. A judge's own options (endpoint,
concurrency, budget, retries, cache, ...) are not here: they are fields of
:class:`failcodes.commands.judge.JudgeOptions`, which ``judge``, ``recode`` and ``saturate
recode`` build their flags from.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from failcodes import labelio, traceio
from failcodes.errors import ConfigError
from failcodes.labels import Label
from failcodes.mapping import NAMED_MAPPINGS
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


def int_list(text: str, option: str, *, high: int, most: int) -> tuple[int, ...]:
    """A comma-separated option value of whole numbers in [1, ``high``], at most ``most`` of them.

    Each value is work (``rtv --sensitivity-k`` runs retrieval and the judge once per value):
    20,000 values ran past two minutes before anything was said. A value given twice is kept
    once.
    """
    parts = [x.strip() for x in text.split(",") if x.strip()]
    if not parts:
        raise ConfigError(f"{option} {text!r}: give comma-separated whole numbers, e.g. 1,3,5")
    if len(parts) > most:
        raise ConfigError(f"{option}: {len(parts)} values; at most {most} (e.g. 1,3,5)")
    values: list[int] = []
    for part in parts:
        try:
            value = int(part)
        except ValueError:
            raise ConfigError(
                f"{option}: {part!r} is not a whole number (comma-separated, e.g. 1,3,5)"
            ) from None
        if not 1 <= value <= high:
            raise ConfigError(f"{option}: {value} is out of range; each value is 1 to {high}")
        values.append(value)
    return tuple(dict.fromkeys(values))


def raw_csv_cells(raw: bool) -> None:
    """``--raw-csv``: this command writes CSV cells as they are (see failcodes.csvcells)."""
    if raw:
        from failcodes.csvcells import keep_raw

        keep_raw()


# CSV cells as they are (no quote before a formula-leading text): every command writing CSV.
RawCsvOpt = Annotated[
    bool,
    typer.Option(
        "--raw-csv",
        help="Write CSV cells as they are. By default a text cell beginning with =, +, -, @, "
        "a tab or a carriage return gets a ' in front so a spreadsheet shows it as text and "
        "does not run it as a formula (OWASP); failcodes' readers take it off.",
    ),
]
#: ``--raw-csv`` as an extra option of a request's command (``request_command(extra=...)``).
RAW_CSV = inspect.Parameter(
    "raw_csv", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=RawCsvOpt
)

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

# The judge's response cache: `cache stats|clear` (judge options are request fields:
# failcodes.commands.judge.JudgeOptions).
from failcodes.commands.judge import DEFAULT_CACHE  # noqa: E402 - one definition

CacheOpt = Annotated[Path, typer.Option("--cache", help="Response cache (SQLite).")]


def load_inputs(trace_paths: Sequence[Path], labels_path: Path) -> tuple[list[Trace], list[Label]]:
    """Read traces from several files (claim ids unique across them) and check the labels."""
    seen: dict[tuple[str, str], tuple[Path, int]] = {}
    traces: list[Trace] = []
    for path in trace_paths:
        traces.extend(traceio.read_traces(path, seen=seen))
    labels = labelio.read_labels(labels_path, traces=traces)
    return traces, labels


def data_console(**kwargs: Any) -> Console:
    """A console for text that comes from data: rich markup, emoji codes and highlighting off.

    A model named ``openai:m`` or a code ``[red]`` prints as written (rich drew ``:m...:`` as
    an emoji and ate ``[...]`` as markup).
    """
    from rich.console import Console  # imported here: `ingest` prints no tables

    return Console(markup=False, emoji=False, highlight=False, **kwargs)


def make_console() -> Console:
    """A console for tables: the terminal's width, or 200 columns when piped (data-safe)."""
    return data_console() if sys.stdout.isatty() else data_console(width=200)


__all__ = [
    "DEFAULT_CACHE",
    "MAPPING_HELP",
    "CacheOpt",
    "CodebookFileOpt",
    "DatasetOpt",
    "EvidenceOpt",
    "FromOpt",
    "LabelsOpt",
    "MappingOpt",
    "PartOpt",
    "TopKOpt",
    "TracesOpt",
    "UnitColumnOpt",
    "data_console",
    "load_inputs",
    "make_console",
]
