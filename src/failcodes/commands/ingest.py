"""``ingest ADAPTER PATH...`` as a use case: :class:`IngestRequest` -> :class:`IngestResult`.

:class:`IngestOptions` are the settings a study's ``[[datasets.ingest]]`` entry may hold
(column renames, verdict spellings, names for inputs that lack them, adapter settings);
:class:`IngestRequest` adds the adapter, the inputs, the outputs and the evidence
declarations (which a study derives from its pipelines).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import field_validator

from failcodes import fileio, labelio, tableio, traceio
from failcodes.commands.base import Note, Options, Request, ignore_note, option
from failcodes.errors import ConfigError, InputError
from failcodes.fileio import check_not_input
from failcodes.verdicts import Verdict, parse_verdict_declarations

#: ``--evidence`` (ingest, attribute).
EVIDENCE_HELP = (
    "Declare the pipeline's evidence source on every trace: retrieved, provided, none "
    "(closed-book) or post-hoc (sources cited after writing); SYSTEM=SOURCE for one system "
    "(repeatable). See docs/attribution.md."
)


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


def _checked(parse: Any) -> Any:
    """A field validator running ``parse`` (its ConfigError is the field's error)."""

    def check(cls: Any, values: list[str]) -> list[str]:
        del cls
        try:
            parse(values)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return values

    return classmethod(check)


def _named(value: str | None) -> str | None:
    if value is not None and not value.strip():  # every trace would carry an empty name
        raise ValueError("must not be empty")
    return value


class IngestOptions(Options):
    """How an adapter reads its inputs: the fields a study's ingest entry holds."""

    map: list[str] = option(
        default_factory=list,
        help="Rename a foreign column: FOREIGN=ours (FOREIGN= drops it; repeat FOREIGN to "
        "copy it into several fields, e.g. --map text=claim --map text=sentence).",
    )
    alias: list[str] = option(
        default_factory=list, help="Extra verdict spelling: RAW=canonical (e.g. Yes=supported)."
    )
    system: str | None = option(None, help="System name for inputs that lack one.")
    verifier: str | None = option(None, help="generic: verifier name for rows without one.")
    retriever: str | None = option(None, help="generic: retriever name for rows without one.")
    passage_column: list[str] = option(
        default_factory=list,
        help="generic: a text column that becomes passages, COLUMN or COLUMN=SOURCE "
        "(repeatable; ranks follow the order given).",
    )
    label_rule: str | None = option(
        None,
        help="generic: clinical label from a categorical column, e.g. "
        "'label in {false, mixture} -> error' (write them with --labels-out; see "
        "docs/trace-format.md).",
    )
    verdict_column: list[str] = option(
        default_factory=list,
        help="generic: a column holding one system's verdicts, COLUMN or COLUMN=SYSTEM "
        "(repeatable: each row becomes one trace per column, e.g. three LLMs' verdicts on the "
        "same claims).",
    )
    verdict: list[str] = option(
        default_factory=list,
        help="generic: the verdict a pipeline asserts for every claim (no verifier), VERDICT or "
        "SYSTEM=VERDICT, e.g. supported; reviewers see 'asserted by the system'.",
    )
    passages: Path | None = option(
        None, help="Passages table of a CSV traces file (default X.passages.csv)."
    )
    option: list[str] = option(
        default_factory=list,
        help="Adapter-specific setting KEY=VALUE (docs/trace-format.md; an unknown KEY lists "
        "the adapter's own).",
    )

    _map = field_validator("map")(_checked(_column_map))
    _alias = field_validator("alias")(_checked(_aliases))
    _passage_column = field_validator("passage_column")(_checked(_passage_columns))
    _option = field_validator("option")(_checked(lambda v: _pairs(v, "--option")))
    _verdict_column = field_validator("verdict_column")(
        _checked(lambda v: _named_columns(v, "--verdict-column"))
    )
    _verdict = field_validator("verdict")(_checked(parse_verdict_declarations))
    _names = field_validator("system", "verifier", "retriever")(_named)

    def check_adapter(self, adapter: str) -> None:
        """Refuse options the adapter does not take (generic-only ones, ``--map``)."""
        generic_only = {
            "--verifier": self.verifier,
            "--retriever": self.retriever,
            "--passage-column": self.passage_column,
            "--label-rule": self.label_rule,
            "--verdict-column": self.verdict_column,
            "--verdict": self.verdict,
        }
        given = [name for name, value in generic_only.items() if value]
        if adapter == "generic-labels":  # labels from a categorical column
            given = [name for name in given if name != "--label-rule"]
        if given and adapter != "generic":
            raise ConfigError(f"{', '.join(given)}: generic adapter only (not {adapter!r})")
        if self.map and not adapter.startswith("generic"):
            raise ConfigError(f"--map applies to the generic adapters, not {adapter!r}")

    def adapter_options(self, passages: Path | None = None) -> Any:
        """The adapter's :class:`~failcodes.ingest.AdapterOptions`."""
        from failcodes.ingest import AdapterOptions

        return AdapterOptions(
            column_map=_column_map(self.map),
            aliases=_aliases(self.alias),
            system=self.system,
            passages=passages if passages is not None else self.passages,
            extra=_pairs(self.option, "--option"),
            passage_columns=_passage_columns(self.passage_column),
            label_rule=self.label_rule,
            verifier=self.verifier,
            retriever=self.retriever,
            verdict_columns=_named_columns(self.verdict_column, "--verdict-column"),
            verdicts=parse_verdict_declarations(self.verdict),
        )


@dataclass
class IngestResult:
    """What an ingest wrote (``N traces -> PATH`` lines) and the adapter's notes."""

    written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The result as plain lines (a study step's log)."""
        return [f"wrote {line}" for line in self.written]

    def said(self) -> list[str]:
        """What ``failcodes run`` says on stderr too: evidence derived, verdicts read so.

        A study's [[datasets.pipelines]] naming some systems left the others' evidence read
        trace by trace (no passages: closed-book, disagreements blamed on verification), and
        verdicts read by the default aliases (a detector's true as supported, FEVER's NEI as
        no_evidence) were said only in the step's log (the metrics step reads them canonical).
        """
        from failcodes.verdicts import READ_MARKS

        read = [n for n in self.notes if any(m in n for m in READ_MARKS)]
        # a system of the input with no row left (every verdict missing under
        # no_verdict=drop, every claims list empty) is in no output: said in the step's log
        # alone, and a study's parts (JSONL) carry no record of it to the merged traces
        gone = [n for n in self.notes if "so no trace and in no" in n]
        return [f"wrote {line}" for line in self.written if _UNDECLARED in line] + read + gone


class IngestRequest(IngestOptions, Request):
    """Read PATH... with ADAPTER and write failcodes traces/labels (format by extension).

    Without --evidence a trace keeps the adapter's evidence source, else gets retrieved when
    it has passages or a retriever, none otherwise (a system with both kinds is refused).
    """

    command: ClassVar[tuple[str, ...]] = ("ingest",)

    adapter: str = option(argument=True, help="Adapter name (failcodes ingest --help).")
    paths: list[Path] = option(
        argument=True,
        help="Input file(s); bundled:NAME/FILE names a file of a data set shipped with "
        "failcodes (e.g. bundled:ragchecker/checking_outputs.json).",
        min_length=1,
    )
    out: Path = option(
        flags=("-o", "--out"),
        help="Main output (.jsonl/.csv/.parquet): traces, or labels for label adapters.",
    )
    labels_out: Path | None = option(None, help="Also write the adapter's labels here.")
    sentences_out: Path | None = option(None, help="Also write the split answer sentences here.")
    evidence: list[str] = option(default_factory=list, help=EVIDENCE_HELP)
    part: bool = option(
        False,
        cli=False,
        help="A study's part of a data set: its pipelines' evidence is checked where the parts "
        "are merged (a system declared there is not said undeclared here).",
    )

    def run(self, *, note: Note = ignore_note) -> IngestResult:
        """Read the inputs with the adapter and write the outputs (all or nothing)."""
        from failcodes.bundled import bundled_or_path
        from failcodes.ingest import Output, get_adapter
        from failcodes.sheetio import first_sheet_hint
        from failcodes.traces import parse_evidence_declarations

        chosen = get_adapter(self.adapter)
        self.check_adapter(self.adapter)
        declared = parse_evidence_declarations(self.evidence)
        if declared and chosen.output is not Output.TRACES:
            raise ConfigError(
                f"adapter {self.adapter!r} writes labels; --evidence describes traces"
            )
        paths = [bundled_or_path(p) for p in self.paths]
        outputs = (self.out, self.labels_out, self.sentences_out)
        check_not_input(outputs, (*paths, self.passages))
        for target in outputs:  # every output extension before any reading: a typo fails fast
            if target is not None:
                tableio.detect_format(target)
        with first_sheet_hint():  # a README sheet before the table: its header refused
            return self._read_write(chosen, paths, declared, note)

    def _read_write(
        self, chosen: Any, paths: list[Path], declared: Any, note: Note
    ) -> IngestResult:
        from failcodes.ingest import Output

        opened = getattr(chosen, "open", None)  # FileAdapter: traces as a stream where it can
        result = (opened or chosen.read)(list(paths), self.adapter_options())
        self._check_result(chosen, result)
        done = IngestResult()
        with fileio.AtomicBatch() as batch:  # an error inside: nothing is written
            if chosen.output is Output.TRACES:
                done.written.append(
                    _write_traces(
                        self.out, result, (declared, self.system, self.part), paths, batch
                    )
                )
                if self.labels_out is not None:
                    if not result.labels:  # known once the traces are read
                        raise ConfigError(
                            f"adapter {self.adapter!r} produced no labels for --labels-out"
                        )
                    labelio.write_labels(self.labels_out, result.labels, batch=batch)
                    done.written.append(f"{len(result.labels):,} labels -> {self.labels_out}")
            else:
                labels, named = _system_labels(result.labels, self.system)
                labelio.write_labels(self.out, labels, batch=batch)
                done.written.append(f"{len(labels):,} labels -> {self.out}{named}")
            if self.sentences_out is not None:
                labelio.write_sentences(self.sentences_out, result.sentences, batch=batch)
                done.written.append(f"{len(result.sentences):,} sentences -> {self.sentences_out}")
        done.notes = [f"note: {n}" for n in result.notes]
        if result.labels and self.labels_out is None and chosen.output is Output.TRACES:
            done.notes.append(
                f"note: {len(result.labels):,} reference labels not written (use --labels-out)"
            )
        for line in done.notes:
            note(line)
        return done

    def _check_result(self, chosen: Any, result: Any) -> None:
        from failcodes.ingest import Output

        if chosen.output is Output.LABELS:
            if not result.labels:  # an empty or whitespace-only input: no empty output
                raise InputError(
                    "no labels found (expected at least one record)",
                    path=", ".join(str(p) for p in self.paths),
                )
            if self.labels_out is not None:
                raise ConfigError(
                    f"adapter {self.adapter!r} writes its labels to -o; drop --labels-out"
                )
        if self.sentences_out is not None and not result.sentences:
            raise ConfigError(f"adapter {self.adapter!r} produces no sentences for --sentences-out")


def _write_traces(
    out: Path,
    result: Any,
    given: tuple[dict[str, Any], str | None, bool],
    paths: list[Path],
    batch: Any,
) -> str:
    """Stage the traces (a stream is written as it is read), then settle ``result``.

    ``given``: the ``--evidence`` declarations, ``--system`` and whether the output is a
    study's part (its evidence is declared at the merge). No trace at all, or an
    ``--evidence`` or ``--system`` system no trace has, raises inside ``batch``: the output is
    never moved into place.
    """
    from failcodes.dropped import Dropped
    from failcodes.tracelines import TraceLine, with_evidence
    from failcodes.traces import (
        UNDECLARED_KEY,
        Trace,
        check_declared_systems,
        closed_book_line,
        declared_source,
        refuse_mixed_evidence,
        tally_undeclared,
    )

    declared, system, part = given
    count = 0
    systems: dict[str, int] = {}
    # per system, traces of no declared evidence: [without passages or retriever, with one]
    derived: dict[str, list[int]] = {}
    # per (system, its trace's own source, the declared one): traces a declaration overrode
    overridden: dict[tuple[str, str, str], int] = {}

    def each() -> Iterator[Trace | TraceLine]:
        nonlocal count
        for trace in result.each_trace():
            count += 1
            systems[trace.system] = systems.get(trace.system, 0) + 1
            source = declared_source(declared, trace.system) if declared else None
            if source is None:
                tally_undeclared(
                    derived, trace.system, trace.evidence_source, trace.passages, trace.retriever
                )
            elif trace.evidence_source is not None and str(trace.evidence_source) != source.value:
                key = (trace.system, str(trace.evidence_source), source.value)
                overridden[key] = overridden.get(key, 0) + 1
            yield trace if source is None else with_evidence(trace, source)

    def dropped() -> dict[bytes, bytes]:  # asked once the stream has ended
        left_out: Dropped = result.dropped if result.stream is None else result.stream.dropped
        return {**left_out.footer(), UNDECLARED_KEY: json.dumps(derived, sort_keys=True).encode()}

    traceio.write_traces(out, each(), batch=batch, footer=dropped)
    result.settle()
    if part and tableio.detect_format(out) is not tableio.Format.PARQUET:
        # a study's JSONL part: its record beside it (always: no earlier run's left standing)
        from failcodes.dropped import beside, record_text

        left: Dropped = result.dropped if result.stream is None else result.stream.dropped
        batch.stage(beside(out)).write_text(record_text(left), encoding="utf-8")
    if not count:  # an empty or whitespace-only input: no empty output, no zero exit
        raise InputError(
            "no traces found (expected at least one record)", path=", ".join(str(p) for p in paths)
        )
    if not part:  # a part's systems are the data set's in part: checked at the merge
        check_declared_systems(declared, systems)
        refuse_mixed_evidence(derived, ", ".join(str(p) for p in paths))
    if overridden:
        # C's traces saying evidence_source none (closed-book: given per trace, or declared
        # when a shard was ingested) under a study's system = "*" evidence = "retrieved":
        # each became retrieved with no passage, its disagreements blamed on retrieval ("no
        # passage retrieved") for verification, exit 0
        (name, own, wanted), n = next(iter(sorted(overridden.items())))
        raise ConfigError(
            f"--evidence declares {wanted} for system {name!r}, whose traces give their own "
            f"evidence_source {own} ({n:,} of {systems[name]:,}): a declaration would override "
            f"them; declare {name!r} as its traces do (--evidence {name}={own}, a study's "
            "[[datasets.pipelines]] entry for it), or leave it undeclared to keep each "
            "trace's own"
        )
    shown = ", ".join(f"{s} {n:,}" for s, n in sorted(systems.items())[:12])
    more = ", ..." if len(systems) > 12 else ""
    if system is not None and system not in systems:
        # one file per system whose system column names another (copied from sysA's file):
        # --system sysB went unused and its claims were scored as sysA's, the two merged
        # (sysA TP 1, FP 1 for sysA TP 1, TN 1 and sysB FP 1, FN 1, exit 0)
        raise ConfigError(
            f"--system {system!r} names no trace: every record of the input names its own "
            f"system ({shown}{more}), so its traces would be scored as those; drop --system "
            "to keep the records' systems, or leave their system field out (generic: --map "
            f"system=) to name every trace {system!r}"
        )
    if (
        result.dropped.rows
        and tableio.detect_format(out) is not tableio.Format.PARQUET
        and not part
    ):
        result.notes.append(
            f"{result.dropped.rows:,} row(s) without a verdict are recorded in no field of "
            f"{out}: metrics and report on it will not say them (only a .parquet output "
            "carries the count, and an ingest merging .parquet files keeps it; a study's parts "
            "keep it beside them)"
        )
    if declared and derived and not part:
        # the pipelines a study's [[datasets.pipelines]] (or --evidence) left out: derived
        # from each trace, said where the others are declared
        more += f"; {_UNDECLARED}" + ", ".join(
            f"{s} (read from its traces: "
            + ("retrieved, passages or a retriever)" if n[1] else "none, closed-book)")
            for s, n in sorted(derived.items())
        )
    # the systems found, first: a gold key or column read as one was scored as a system
    if result.unlisted:
        more += "; left out, not among --option systems: " + ", ".join(
            f"{s} {n:,}" for s, n in sorted(result.unlisted.items())
        )
    # nothing declared: said last; a study's part, of the systems its study does not declare
    said = None if declared and not part else closed_book_line(derived)
    if said:
        more += f"; {said}"
    return f"{count:,} traces -> {out} ({len(systems):,} system(s): {shown}{more})"


#: Where the first line of an ingest names the systems whose evidence is derived.
_UNDECLARED = "evidence not declared for "


def _system_labels(labels: Any, system: str | None) -> tuple[Any, str]:
    """``labels`` with ``--system`` as the system of those that name none; what to say of it.

    A labels adapter ignored ``--system``: the labels of system A's answer (``--system A
    --label-rule 'A_label = wrong -> error'``) were written shared, and system B was scored
    on them too, with exit 0.
    """
    if system is None:
        return labels, ""
    filled = [lb if lb.system else lb.model_copy(update={"system": system}) for lb in labels]
    took = sum(lb.system is None for lb in labels)
    if not took:
        raise ConfigError(
            f"--system {system!r} names no label: every label of the input names its own "
            "system; drop --system to keep them"
        )
    return filled, f" (system {system!r} for {took:,} of them, from --system: per-system labels)"


def ingest_options_of(options: IngestOptions) -> dict[str, Any]:
    """The :class:`IngestOptions` fields of ``options`` (to build a request from them)."""
    return {name: getattr(options, name) for name in IngestOptions.model_fields}
