"""``failcodes ingest ADAPTER PATH... -o OUT``: convert pipeline outputs and labels."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from failcodes import fileio, labelio, tableio, traceio
from failcodes.cli.main import app
from failcodes.cli.options import EvidenceOpt
from failcodes.errors import ConfigError, InputError
from failcodes.fileio import check_not_input
from failcodes.ingest import AdapterOptions, IngestResult, Output, get_adapter, names
from failcodes.study.config import bundled_or_path
from failcodes.traces import (
    EvidenceSource,
    Trace,
    check_declared_systems,
    declared_source,
    parse_evidence_declarations,
)
from failcodes.verdicts import Verdict, parse_verdict_declarations


def _pairs(values: list[str], option: str) -> dict[str, str]:
    """Parse repeated ``KEY=VALUE`` options (the value may be empty)."""
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{option} expects KEY=VALUE, got {item!r}")
        key, value = key.strip(), value.strip()
        if key in out and out[key] != value:  # the last one silently won
            raise ConfigError(f"{option} {key} given twice ({out[key]!r} and {value!r})")
        out[key] = value
    return out


def _column_map(values: list[str]) -> dict[str, tuple[str, ...]]:
    """Parse repeated ``--map FOREIGN=ours`` into foreign -> our fields.

    A repeated key copies the column into several fields; ``FOREIGN=`` drops it (and cannot be
    combined with a target).
    """
    out: dict[str, list[str]] = {}
    for item in values:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise ConfigError(f"--map expects KEY=VALUE, got {item!r}")
        targets = out.setdefault(key, [])
        if value in targets:
            raise ConfigError(f"--map {key}={value} given twice")
        if (not value and targets) or (value and "" in targets):
            raise ConfigError(f"--map {key}= drops column {key!r}; it cannot also fill a field")
        targets.append(value)
    return {k: tuple(t for t in v if t) for k, v in out.items()}


def _passage_columns(values: list[str]) -> tuple[tuple[str, str | None], ...]:
    out = []
    for item in values:
        column, sep, source = item.partition("=")
        if not column.strip() or (sep and not source.strip()):
            raise ConfigError(f"--passage-column expects COLUMN or COLUMN=SOURCE, got {item!r}")
        out.append((column.strip(), source.strip() if sep else None))
    return tuple(out)


def _named_columns(values: list[str], option: str) -> tuple[tuple[str, str], ...]:
    """``COLUMN`` or ``COLUMN=NAME`` pairs (the name defaults to the column's)."""
    out = []
    for item in values:
        column, sep, name = item.partition("=")
        if not column.strip() or (sep and not name.strip()):
            raise ConfigError(f"{option} expects COLUMN or COLUMN=SYSTEM, got {item!r}")
        out.append((column.strip(), name.strip() if sep else column.strip()))
    return tuple(out)


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


def _write_traces(
    out: Path,
    result: IngestResult,
    declared: dict[str, EvidenceSource],
    paths: list[Path],
    batch: fileio.AtomicBatch,
) -> str:
    """Stage the traces (a stream is written as it is read), then settle ``result``.

    No trace at all, or an ``--evidence`` system no trace has, raises inside ``batch``: the
    output is never moved into place.
    """
    count = 0
    systems: set[str] = set()

    def each() -> Iterator[Trace]:
        nonlocal count
        for trace in result.each_trace():
            count += 1
            systems.add(trace.system)
            source = declared_source(declared, trace.system) if declared else None
            yield trace if source is None else trace.model_copy(update={"evidence_source": source})

    traceio.write_traces(out, each(), batch=batch)
    result.settle()
    if not count:  # an empty or whitespace-only input: no empty output, no zero exit
        raise InputError(
            "no traces found (expected at least one record)",
            path=", ".join(str(p) for p in paths),
        )
    check_declared_systems(declared, systems)
    return f"{count:,} traces -> {out}"


@app.command("ingest")
def ingest(
    adapter: Annotated[str, typer.Argument(help="Adapter name: " + ", ".join(names()) + ".")],
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Input file(s); bundled:NAME/FILE names a file of a data set shipped with "
            "failcodes (e.g. bundled:ragchecker/checking_outputs.json)."
        ),
    ],
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
        typer.Option(
            "--map",
            help="Rename a foreign column: FOREIGN=ours (FOREIGN= drops it; repeat FOREIGN to "
            "copy it into several fields, e.g. --map text=claim --map text=sentence).",
        ),
    ] = None,
    alias: Annotated[
        list[str] | None,
        typer.Option("--alias", help="Extra verdict spelling: RAW=canonical (e.g. Yes=supported)."),
    ] = None,
    system: Annotated[
        str | None, typer.Option("--system", help="System name for inputs that lack one.")
    ] = None,
    verifier: Annotated[
        str | None,
        typer.Option("--verifier", help="generic: verifier name for rows without one."),
    ] = None,
    retriever: Annotated[
        str | None,
        typer.Option("--retriever", help="generic: retriever name for rows without one."),
    ] = None,
    passage_column: Annotated[
        list[str] | None,
        typer.Option(
            "--passage-column",
            help="generic: a text column that becomes passages, COLUMN or COLUMN=SOURCE "
            "(repeatable; ranks follow the order given).",
        ),
    ] = None,
    label_rule: Annotated[
        str | None,
        typer.Option(
            "--label-rule",
            help="generic: clinical label from a categorical column, e.g. "
            "'label in {false, mixture} -> error' (write them with --labels-out; see "
            "docs/trace-format.md).",
        ),
    ] = None,
    passages: Annotated[
        Path | None,
        typer.Option(
            "--passages", help="Passages table of a CSV traces file (default X.passages.csv)."
        ),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            help="Adapter-specific setting KEY=VALUE (docs/trace-format.md; an unknown KEY "
            "lists the adapter's own).",
        ),
    ] = None,
    evidence: EvidenceOpt = None,
    verdict_column: Annotated[
        list[str] | None,
        typer.Option(
            "--verdict-column",
            help="generic: a column holding one system's verdicts, COLUMN or COLUMN=SYSTEM "
            "(repeatable: each row becomes one trace per column, e.g. three LLMs' verdicts "
            "on the same claims).",
        ),
    ] = None,
    verdict: Annotated[
        list[str] | None,
        typer.Option(
            "--verdict",
            help="generic: the verdict a pipeline asserts for every claim (no verifier), "
            "VERDICT or SYSTEM=VERDICT, e.g. supported; reviewers see 'asserted by the "
            "system'.",
        ),
    ] = None,
) -> None:
    """Read PATH... with ADAPTER and write failcodes traces/labels (format by extension).

    Without --evidence a trace keeps the adapter's evidence source, else gets retrieved when
    it has passages or a retriever, none otherwise.
    """
    chosen = get_adapter(adapter)
    generic_only = {
        "--verifier": verifier,
        "--retriever": retriever,
        "--passage-column": passage_column,
        "--label-rule": label_rule,
        "--verdict-column": verdict_column,
        "--verdict": verdict,
    }
    given = [name for name, value in generic_only.items() if value]
    if adapter == "generic-labels":  # labels from a categorical column
        given = [name for name in given if name != "--label-rule"]
    if given and adapter != "generic":
        raise ConfigError(f"{', '.join(given)}: generic adapter only (not {adapter!r})")
    if mapping and not adapter.startswith("generic"):
        raise ConfigError(f"--map applies to the generic adapters, not {adapter!r}")
    declared = parse_evidence_declarations(evidence or [])
    if declared and chosen.output is not Output.TRACES:
        raise ConfigError(f"adapter {adapter!r} writes labels; --evidence describes traces")
    named = (("--system", system), ("--verifier", verifier), ("--retriever", retriever))
    for flag, value in named:
        if value is not None and not value.strip():  # every trace would carry an empty name
            raise ConfigError(f"{flag} must not be empty")
    paths = [bundled_or_path(p) for p in paths]
    options = AdapterOptions(
        column_map=_column_map(mapping or []),
        aliases=_aliases(alias or []),
        system=system,
        passages=passages,
        extra=_pairs(option or [], "--option"),
        passage_columns=_passage_columns(passage_column or []),
        label_rule=label_rule,
        verifier=verifier,
        retriever=retriever,
        verdict_columns=_named_columns(verdict_column or [], "--verdict-column"),
        verdicts=parse_verdict_declarations(verdict or []),
    )
    check_not_input((out, labels_out, sentences_out), (*paths, passages))
    # Check every output extension before any reading, so a typo fails fast.
    for target in (out, labels_out, sentences_out):
        if target is not None:
            tableio.detect_format(target)
    opened = getattr(chosen, "open", None)  # FileAdapter: traces as a stream where it can
    result = (opened or chosen.read)(list(paths), options)
    if chosen.output is Output.LABELS:
        if not result.labels:  # an empty or whitespace-only input: no empty output
            raise InputError(
                "no labels found (expected at least one record)",
                path=", ".join(str(p) for p in paths),
            )
        if labels_out is not None:
            raise ConfigError(f"adapter {adapter!r} writes its labels to -o; drop --labels-out")
    if sentences_out is not None and not result.sentences:
        raise ConfigError(f"adapter {adapter!r} produces no sentences for --sentences-out")
    written: list[str] = []
    with fileio.AtomicBatch() as batch:  # an error inside: nothing is written
        if chosen.output is Output.TRACES:
            written.append(_write_traces(out, result, declared, paths, batch))
            if labels_out is not None:
                if not result.labels:
                    raise ConfigError(f"adapter {adapter!r} produced no labels for --labels-out")
                labelio.write_labels(labels_out, result.labels, batch=batch)
                written.append(f"{len(result.labels):,} labels -> {labels_out}")
        else:
            labelio.write_labels(out, result.labels, batch=batch)
            written.append(f"{len(result.labels):,} labels -> {out}")
        if sentences_out is not None:
            labelio.write_sentences(sentences_out, result.sentences, batch=batch)
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
