"""``metrics`` and ``disagreements`` as use cases (the study's measuring steps).

:class:`MetricsRequest` computes the metrics (or the verdict distributions) and writes them
as JSON or CSV when given ``out``; :class:`DisagreementsRequest` selects every FN/FP and
writes them. Tables for people are the CLI's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from failcodes.commands.base import Note, Request, ignore_note, option
from failcodes.csvcells import safe_frame
from failcodes.errors import ConfigError, InputError
from failcodes.labels import (
    errors_no_claim_carries,
    no_claim_carries_clause,
    refuse_claim_labels,
    sentence_errors_no_claim_carries,
)
from failcodes.labelscope import QuestionScope, assumptions_line
from failcodes.mapping import DEFAULT_MAPPING, NAMED_MAPPINGS, resolve_mappings
from failcodes.measurenames import DEFAULT_WITHOUT_CLAIMS, Level, WithoutClaimsPolicy
from failcodes.stats.names import MAX_RESAMPLES
from failcodes.traces import closed_book_line
from failcodes.verdicts import truths_line

#: How a file of rows is written: JSON rows or CSV.
RowFormat = Literal["json", "csv"]

MAPPING_HELP = (
    "Error mapping (repeatable): "
    + ", ".join(NAMED_MAPPINGS)
    + ", or comma-separated verdicts such as 'refuted,ambiguous'."
)
WITHOUT_CLAIMS_HELP = (
    "Labelled sentences a system has no claim for: count as 'no error flagged' (default: a "
    "labelled error there is a miss, an FN with no claims) or leave out (reported)."
)
QUESTION_SCOPE_HELP = (
    "Shared labels: which labelled sentences count for a system. answered: those of the "
    "questions it made a claim in; all: every one (the seed's design: every system verifies "
    "one answer); auto (default): answered when each labelled question was answered by one "
    "system only, else all. Per-system labels (a system column) count each system's own."
)


def verdicts_read(truths: Mapping[str, int]) -> str | None:
    """How verdicts of the traces the default aliases read were read (None: there were none).

    ``truths``: per alias word. The analysis commands read them as ingest does, but said
    nothing: a detector's true (hallucinated) read as supported inverted every count.
    """
    return truths_line(truths, "ingest the traces with") if truths else None


@dataclass
class MetricsResult:
    """The metrics report (or verdict distributions) and the file written, if any."""

    report: Any = None
    distributions: list[Any] = field(default_factory=list)
    #: The rows as JSON or CSV text (when a row format was asked for).
    text: str | None = None
    written: str | None = None
    #: Rows the ingest left out for want of a verdict, as the traces' footer records them.
    dropped: str | None = None
    #: How the verdicts were read, where a default assumed it (:func:`verdicts_read`).
    read: str | None = None
    #: Systems of the input with no row left (each row dropped at ingest), in one line.
    vanished: str | None = None
    #: At claim level, sentences labelled an error no claim label carries (labels).
    hidden: str | None = None
    #: At claim level, how claims without their own label took their sentence's.
    inherited: str | None = None

    @property
    def assumed(self) -> str | None:
        """What the metrics (or the distributions) assumed of the data, in one line.

        First, a system of the input with no row: the tables show the others with no word.
        """
        first = self.report.assumptions() if self.report is not None else None
        return "; ".join(x for x in (self.vanished, first, self.hidden, self.read) if x) or None

    @property
    def coverage(self) -> str | None:
        """How many units the labels cover, when not all (None: all, or verdicts only).

        Per system, the first mapping's units counted and units without a label (the
        counts the subset note at the end gives): the same line ``disagreements`` prints.
        """
        if self.report is None or not self.report.results:
            return None
        first = self.report.results[0]
        from failcodes.metrics import coverage_line

        rows = [r for r in self.report.results if r.mapping == first.mapping]
        cover = {r.system: (r.n, r.n + r.n_unlabelled) for r in rows}
        errors_only = all(r.fp + r.tn == 0 for r in rows) and any(r.tp + r.fn for r in rows)
        return coverage_line(cover, first.level.value, errors_only)

    @property
    def later(self) -> list[str]:
        """The notes under the metrics table (not beside rows written as text: their fields)."""
        return self.report.notes() if self.report is not None and self.text is None else []

    def lines(self) -> list[str]:
        """The result as plain lines (a study step's log): what was assumed, what written."""
        return [line for line in (self.assumed, self.coverage, self.dropped, self.written) if line]

    def aside(self) -> list[str]:
        """What rows printed as JSON or CSV hold no field for (the CLI's stderr lines)."""
        alone = self.report.units_alone() if self.report is not None else None
        alone = f"Assumed: {alone}" if alone else None
        said = (self.vanished, self.inherited, alone, self.hidden, self.read, self.dropped)
        return [line for line in said if line]

    def said(self) -> list[str]:
        """What ``failcodes run`` says on stderr too: what a default assumed of the data.

        The CLI's first line where not every system answered every labelled question (how
        the others' sentences count: ``--question-scope``), and its second, labels covering
        part of the units: they were in the step's log alone, a run whose system left a
        question unanswered counting its sentences as missed with no word on its output.
        """
        from failcodes.labelscope import QuestionShape

        shape = getattr(self.report, "shape", None)
        partial = shape is not None and shape.questions not in (None, QuestionShape.COMMON)
        first = self.assumed if partial else "; ".join(x for x in (self.vanished, self.hidden) if x)
        return [line for line in (first, self.coverage) if line]


class MetricsRequest(Request):
    """Precision, recall, F1, specificity, balanced accuracy, Youden J, accuracy per system."""

    command: ClassVar[tuple[str, ...]] = ("metrics",)

    traces: list[Path] = option(
        help="Trace file (.jsonl/.csv/.parquet); repeat for several.", min_length=1
    )
    labels: Path | None = option(None, help="Clinical labels file (not needed with --verdicts).")
    mapping: list[str] = option(default_factory=list, flags=("-m", "--mapping"), help=MAPPING_HELP)
    level: Level = option(Level.SENTENCE, help="Unit of the metrics.")
    bootstrap: int = option(
        0, help="Cluster-bootstrap resamples (0 = no CIs).", ge=0, le=MAX_RESAMPLES
    )
    seed: int = option(0, help="Bootstrap seed.")
    confidence: float = option(0.95, help="CI level.", ge=0.5, le=0.999)
    without_claims: WithoutClaimsPolicy = option(DEFAULT_WITHOUT_CLAIMS, help=WITHOUT_CLAIMS_HELP)
    question_scope: QuestionScope = option(QuestionScope.AUTO, help=QUESTION_SCOPE_HELP)
    verdicts: bool = option(
        False,
        help="Print each system's verdict distribution (seed 001 Table 5 shape: counts and "
        "shares of the five canonical verdicts) instead of the metrics.",
    )
    out: Path | None = option(
        None,
        flags=("-o", "--out"),
        help="Write the JSON or CSV here instead of printing it (format from --format, or from "
        "the extension .json/.csv); e.g. a study's metrics/<dataset>.json.",
    )
    out_format: RowFormat | None = option(
        None, help="Format of the rows written (default: the extension of --out).", cli=False
    )

    def row_format(self) -> RowFormat | None:
        """What ``out`` is written as (None: nothing is written)."""
        if self.out is None:
            return self.out_format
        if self.out_format is not None:
            return self.out_format
        by_suffix: dict[str, RowFormat] = {".json": "json", ".csv": "csv"}
        if self.out.suffix.lower() not in by_suffix:
            raise ConfigError(f"-o {self.out}: use a .json or .csv file, or pass --format json|csv")
        return by_suffix[self.out.suffix.lower()]

    def run(self, *, note: Note = ignore_note) -> MetricsResult:
        """Compute the metrics; write them to ``out`` as JSON or CSV when asked."""
        # (the engine here, not at the top: `metrics --help` builds this request, numpy-free)
        from failcodes.columnar import load_columns, load_sentence_columns, read_trace_columns
        from failcodes.fileio import check_not_input
        from failcodes.metrics import compute_metrics, verdict_distributions
        from failcodes.stats.bootstrap import check_seed
        from failcodes.traceio import refuse_empty_trace_files

        del note
        fmt = self.row_format()
        check_not_input([self.out], [*self.traces, self.labels])
        refuse_empty_trace_files(self.traces)
        if self.bootstrap:
            check_seed(self.seed)  # an option error before any file is read
        maps = resolve_mappings(self.mapping or [DEFAULT_MAPPING])
        if self.labels is None:
            if not self.verdicts:
                raise ConfigError("--labels is required (only --verdicts works without labels)")
            read = read_trace_columns(self.traces)
            dists = verdict_distributions(read)
            return self._distributions(dists, fmt, self._dropped("these shares"), read.truths)
        level = self.level
        try:
            if level is Level.SENTENCE:  # memory follows the sentences, not the claims
                columns, label_list = load_sentence_columns(self.traces, self.labels)
                refuse_claim_labels(label_list, self.labels, traces=columns)
            else:
                columns, label_list = load_columns(self.traces, self.labels)
        except InputError as exc:
            raise _with_dropped(exc, self.traces) from None
        report = compute_metrics(
            columns,
            label_list,
            maps,
            level=level,
            bootstrap=self.bootstrap,
            seed=self.seed,
            confidence=self.confidence,
            without_claims=self.without_claims,
            question_scope=self.question_scope,
        )
        if self.verdicts:
            dropped = self._dropped("these shares")
            return self._distributions(report.distributions, fmt, dropped, columns.truths)
        hidden = (
            sentence_errors_no_claim_carries(label_list, columns) if level is Level.CLAIM else []
        )
        result = MetricsResult(
            report=report,
            distributions=list(report.distributions),
            dropped=self._dropped("the metrics"),
            read=verdicts_read(columns.truths),
            vanished=_vanished(self.traces, [d.system for d in report.distributions]),
            hidden=no_claim_carries_clause(len(hidden), hidden[0][1]) if hidden else None,
            inherited=_inherited(report) if level is Level.CLAIM else None,
        )
        if fmt is not None:
            if fmt == "json":
                rows = [_with_hidden(r.flat(), hidden) for r in report.results]
                text = json.dumps(rows, indent=2, allow_nan=False) + "\n"
            else:
                frame = safe_frame(report.to_dataframe(), self.out or "<stdout>")
                text = frame.to_csv(index=False, lineterminator="\n")
            result.text = text
            result.written = self._write(text, f"{len(report.results)} metric rows")
        return result

    def _dropped(self, what: str) -> str | None:
        return _dropped(self.traces, what)

    def _distributions(
        self, dists: Any, fmt: RowFormat | None, dropped: str | None, truths: Mapping[str, int]
    ) -> MetricsResult:

        read = verdicts_read(truths)
        vanished = _vanished(self.traces, [d.system for d in dists])
        result = MetricsResult(
            distributions=list(dists), dropped=dropped, read=read, vanished=vanished
        )
        if fmt == "json":
            text = json.dumps([d.flat() for d in dists], indent=2, allow_nan=False) + "\n"
        elif fmt == "csv":
            from failcodes.metrics import distributions_dataframe

            frame = safe_frame(distributions_dataframe(dists), self.out or "<stdout>")
            text = frame.to_csv(index=False, lineterminator="\n")
        else:
            return result
        result.text = text
        result.written = self._write(text, f"{len(dists)} verdict distribution rows")
        return result

    def _write(self, text: str, what: str) -> str | None:
        """Write ``text`` to ``out`` (None: the caller prints it) and say so."""
        from failcodes.fileio import atomic_write_text

        if self.out is None:
            return None
        atomic_write_text(self.out, text)
        return f"wrote {what} -> {self.out}"


def _inherited(report: Any) -> str | None:
    """The claim-level clause of the first line, for rows printed as CSV or JSON (or None).

    The table's first line says how the claims took their labels; rows printed to stdout
    said it in no word (4 sentence labels read as 7 claim labels, a right claim of a wrong
    sentence counted a miss: FN 1; the rows' ``claims_by_sentence`` counts alone). Said where
    some claim took its sentence's label.
    """
    from failcodes.labelscope import claim_rule

    shape = getattr(report, "shape", None)
    taken = None if shape is None else shape.claims_by_sentence
    return None if taken is None else f"Assumed: {claim_rule(taken)}"


def _dropped(traces: list[Path], what: str) -> str | None:
    """The rows the trace files' ingest left out for want of a verdict, in one line."""
    from failcodes.dropped import dropped_line, read_dropped

    return dropped_line([d for d in map(read_dropped, traces) if d is not None], what)


def _errors_only(index: Any) -> bool:
    """Whether every label of ``index`` is an error (none says a unit is correct)."""
    from failcodes.labelcols import LabelColumns

    labels = index.labels
    if isinstance(labels, LabelColumns):
        flags: Sequence[Any] = labels.column("has_error")
    else:
        flags = [label.has_error for label in labels]
    return len(flags) > 0 and all(flags)


def _with_hidden(row: dict[str, Any], hidden: Sequence[tuple[Any, Any]]) -> dict[str, Any]:
    """A claim-level JSON row with its sentence errors no claim label carries, where any.

    The report's metrics section says them from these fields (run's stderr alone said them:
    the report page showed recall 1/1 for a clinician's error counted nowhere, no word).
    """
    mine = [sid for system, sid in hidden if system is None or system == row.get("system")]
    if not mine:
        return row
    return {**row, "n_errors_no_claim_carries": len(mine), "first_error_no_claim_carries": mine[0]}


def _vanished(traces: list[Path], present: list[str]) -> str | None:
    """The systems of the input every row of which the ingest dropped, in one line."""
    from failcodes.dropped import read_dropped, vanished_line, vanished_systems

    found = [d for d in map(read_dropped, traces) if d is not None]
    return vanished_line(vanished_systems(found, present), present) if found else None


def _with_dropped(exc: InputError, traces: list[Path]) -> InputError:
    """``exc`` naming the rows dropped at ingest when it is a label no trace has.

    A separate labels file and a question whose every row lacked a verdict: "no trace has
    sentence_id '3'" named no cause (t21red3).
    """
    line = _dropped(traces, "the traces") if "no trace has" in exc.reason else None
    if line is None:
        return exc
    why = f"{exc.reason}; {line}: its rows among them? leave such labels out"
    return InputError(why, path=exc.path, line=exc.line, field=exc.field)


@dataclass
class DisagreementsResult:
    """The disagreements found and how many were written where."""

    items: list[Any]
    count: int
    out: Path
    #: What the selection assumed of the data, in one line (failcodes.labelscope).
    assumed: str | None = None
    #: How many of the traces' units (sentences, or claims at claim level) the labels cover,
    #: when not all (metrics.coverage_line).
    coverage: str | None = None
    #: The rows the traces' ingest left out for want of a verdict (their labels may still
    #: give FNs 'with no claims'), when the tool's Parquet records them.
    dropped: str | None = None

    @property
    def written(self) -> str:
        """The line saying how many were written where."""
        return f"wrote {self.count} disagreements to {self.out}"

    def lines(self) -> list[str]:
        """The result as plain lines (a study step's log): what was assumed, what written."""
        shown = (self.assumed, self.dropped, self.coverage, self.written)
        return [line for line in shown if line]


class DisagreementsRequest(Request):
    """Every sentence where a system's mapped verdict differs from the clinical label."""

    command: ClassVar[tuple[str, ...]] = ("disagreements",)

    traces: list[Path] = option(
        help="Trace file (.jsonl/.csv/.parquet); repeat for several.", min_length=1
    )
    labels: Path = option(help="Clinical labels file.")
    out: Path = option(flags=("-o", "--out"), help="Output file: .jsonl or .parquet.")
    mapping: list[str] = option(default_factory=list, flags=("-m", "--mapping"), help=MAPPING_HELP)
    level: Level = option(Level.SENTENCE, help="Unit compared.")
    without_claims: WithoutClaimsPolicy = option(DEFAULT_WITHOUT_CLAIMS, help=WITHOUT_CLAIMS_HELP)
    question_scope: QuestionScope = option(QuestionScope.AUTO, help=QUESTION_SCOPE_HELP)

    def run(self, *, note: Note = ignore_note) -> DisagreementsResult:
        """Select every FN/FP of every system under each mapping and write them."""
        from failcodes import disagreementio
        from failcodes.dropped import DISAGREEMENTS
        from failcodes.fileio import check_not_input, check_output_file
        from failcodes.metrics import coverage_line, label_coverage, unlabelled_systems
        from failcodes.traceio import refuse_empty_trace_files

        del note
        check_not_input([self.out], [*self.traces, self.labels])
        check_output_file(self.out)  # before reading: a bad -o is said first, not after the work
        refuse_empty_trace_files(self.traces)
        maps = resolve_mappings(self.mapping or [DEFAULT_MAPPING])
        try:
            found = disagreementio.select_from_files(
                self.traces,
                self.labels,
                maps,
                level=self.level,
                without_claims=self.without_claims,
                question_scope=self.question_scope,
            )
        except InputError as exc:
            raise _with_dropped(exc, self.traces) from None
        count = found.write(self.out)
        assumed = assumptions_line(found.shape) if found.shape is not None else None
        read = verdicts_read(found.columns.truths)
        bare = closed_book_line(found.columns.undeclared or {}, via=" when ingesting the traces")
        # unlabelled units cannot disagree: say how many (claims at claim level, as metrics)
        cover = label_coverage(found.columns, found.index, self.level)
        unnamed = unlabelled_systems(cover, self.level.value)  # 0 disagreements, not 0 errors
        gone = _vanished(self.traces, list(cover))  # a system with no row: first
        # passages and reasonings a trace file wrote as 'N/A': none, as ingest reads them
        marked = found.columns.marks.lines() if found.columns.marks is not None else []
        hidden = (
            errors_no_claim_carries(found.index.labels, found.columns)
            if self.level is Level.CLAIM
            else None
        )
        said = (gone, assumed, hidden, unnamed, bare, *marked, read)
        assumed = "; ".join(x for x in said if x) or None
        covered = coverage_line(cover, self.level.value, _errors_only(found.index))
        dropped = _dropped(self.traces, DISAGREEMENTS)
        return DisagreementsResult(list(found.items), count, self.out, assumed, covered, dropped)
