"""``failcodes ingest ADAPTER PATH... -o OUT``: convert pipeline outputs and labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from failcodes import dataio
from failcodes.cli.main import app
from failcodes.errors import ConfigError
from failcodes.ingest import AdapterOptions, Output, get_adapter, names
from failcodes.traces import (
    check_declared_systems,
    parse_evidence_declarations,
    with_evidence_source,
)
from failcodes.verdicts import Verdict


def _pairs(values: list[str], option: str) -> dict[str, str]:
    """Parse repeated ``KEY=VALUE`` options (the value may be empty)."""
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _aliases(values: list[str]) -> dict[str, Verdict]:
    out: dict[str, Verdict] = {}
    for raw, canonical in _pairs(values, "--alias").items():
        try:
            out[raw] = Verdict(canonical)
        except ValueError:
            known = ", ".join(v.value for v in Verdict)
            raise ConfigError(
                f"--alias {raw}={canonical}: {canonical!r} is not a canonical verdict ({known})"
            ) from None
    return out


@app.command("ingest")
def ingest(
    adapter: Annotated[str, typer.Argument(help="Adapter name: " + ", ".join(names()) + ".")],
    paths: Annotated[list[Path], typer.Argument(help="Input file(s).")],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="Main output (.jsonl/.csv/.parquet): traces, or labels for label adapters.",
        ),
    ],
    labels_out: Annotated[
        Path | None, typer.Option("--labels-out", help="Also write the adapter's labels here.")
    ] = None,
    sentences_out: Annotated[
        Path | None,
        typer.Option("--sentences-out", help="Also write the split answer sentences here."),
    ] = None,
    mapping: Annotated[
        list[str] | None,
        typer.Option("--map", help="Rename a foreign column: FOREIGN=ours (FOREIGN= drops it)."),
    ] = None,
    alias: Annotated[
        list[str] | None,
        typer.Option("--alias", help="Extra verdict spelling: RAW=canonical (e.g. Yes=supported)."),
    ] = None,
    system: Annotated[
        str | None, typer.Option("--system", help="System name for inputs that lack one.")
    ] = None,
    passages: Annotated[
        Path | None,
        typer.Option(
            "--passages", help="Passages table of a CSV traces file (default X.passages.csv)."
        ),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", help="Adapter-specific setting KEY=VALUE (see docs)."),
    ] = None,
    evidence: Annotated[
        list[str] | None,
        typer.Option(
            "--evidence",
            help="Declare the pipeline's evidence source on every trace: retrieved, provided "
            "or none (closed-book); SYSTEM=SOURCE for one system (repeatable). Default: the "
            "adapter's, else retrieved when a trace has passages or a retriever, none otherwise.",
        ),
    ] = None,
) -> None:
    """Read PATH... with ADAPTER and write failcodes traces/labels (format by extension)."""
    chosen = get_adapter(adapter)
    declared = parse_evidence_declarations(evidence or [])
    if declared and chosen.output is not Output.TRACES:
        raise ConfigError(f"adapter {adapter!r} writes labels; --evidence describes traces")
    options = AdapterOptions(
        column_map=_pairs(mapping or [], "--map"),
        aliases=_aliases(alias or []),
        system=system,
        passages=passages,
        extra=_pairs(option or [], "--option"),
    )
    # Check every output extension before any reading, so a typo fails fast.
    for target in (out, labels_out, sentences_out):
        if target is not None:
            dataio.detect_format(target)
    result = chosen.read(list(paths), options)
    if declared:
        check_declared_systems(declared, (t.system for t in result.traces))
        result.traces = with_evidence_source(result.traces, declared)
    if chosen.output is Output.LABELS and labels_out is not None:
        raise ConfigError(f"adapter {adapter!r} writes its labels to -o; drop --labels-out")
    if sentences_out is not None and not result.sentences:
        raise ConfigError(f"adapter {adapter!r} produces no sentences for --sentences-out")
    if labels_out is not None and not result.labels:
        raise ConfigError(f"adapter {adapter!r} produced no labels for --labels-out")
    written: list[str] = []
    with dataio.AtomicBatch() as batch:
        if chosen.output is Output.TRACES:
            dataio.write_traces(out, result.traces, batch=batch)
            written.append(f"{len(result.traces):,} traces -> {out}")
            if labels_out is not None:
                dataio.write_labels(labels_out, result.labels, batch=batch)
                written.append(f"{len(result.labels):,} labels -> {labels_out}")
        else:
            dataio.write_labels(out, result.labels, batch=batch)
            written.append(f"{len(result.labels):,} labels -> {out}")
        if sentences_out is not None:
            dataio.write_sentences(sentences_out, result.sentences, batch=batch)
            written.append(f"{len(result.sentences):,} sentences -> {sentences_out}")
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    if result.labels and labels_out is None and chosen.output is Output.TRACES:
        typer.echo(
            f"note: {len(result.labels):,} reference labels not written (use --labels-out)",
            err=True,
        )
    for line in written:
        typer.echo(f"wrote {line}")
