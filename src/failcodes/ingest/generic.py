"""The ``generic`` adapter: any claim- or sentence-level table, or the trace format itself.

Two ways in: **any table** (JSONL, CSV or Parquet, one row per claim or per sentence) with
options alone (:mod:`failcodes.ingest.table`; nested output: :mod:`failcodes.ingest.nested`), or
**a trace CSV with its passages table** (``X.csv`` + ``X.passages.csv``, or ``--passages``),
read as the trace format (:func:`failcodes.traceio.read_traces`). ``generic-labels`` reads
clinical label files in failcodes' label format. The options: docs/trace-format.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from failcodes import labelio, tableio, traceio
from failcodes.consensus import Rule, Ties, combine
from failcodes.errors import ConfigError, InputError
from failcodes.ingest.base import AdapterOptions, FileAdapter, IngestResult, Output
from failcodes.ingest.label_rule import parse_label_rule
from failcodes.ingest.label_targets import LABEL_LEVEL_WAY, refuse_answer_labels
from failcodes.ingest.nested import is_document, parse_rows_path, rows_of
from failcodes.ingest.table import (
    LABEL_TARGETS,
    SENTENCE_ID_MODES,
    PassageColumn,
    TableSpec,
    TableStream,
    check_option,
    label_from_row,
    refuse_correct_as_error,
)
from failcodes.labels import Label
from failcodes.numbertext import underscore_clause
from failcodes.sheetio import is_spreadsheet
from failcodes.spelling import spelling_key
from failcodes.traces import Trace
from failcodes.verdicts import Verdict

OPTIONS: tuple[str, ...] = (
    "ids",
    "duplicates",
    "unmapped",
    "sentence_ids",
    "rows",
    "label_level",
    "label_scope",
    "verdict_threshold",
    "below_threshold",
    "score_means",
    "no_verdict",
    "systems",
)
LABEL_OPTIONS: tuple[str, ...] = (
    "sentence_ids",
    "rows",
    "consensus",
    "ties",
    "duplicates",
    "label_level",
)


def _table_spec(options: AdapterOptions) -> TableSpec:
    return TableSpec(
        column_map=options.column_map,
        passage_columns=tuple(PassageColumn(c, s) for c, s in options.passage_columns),
        label_rule=parse_label_rule(options.label_rule) if options.label_rule else None,
        aliases=options.aliases,
        system=options.system,
        verifier=options.verifier,
        retriever=options.retriever,
        ids=options.extra.get("ids", "columns"),
        duplicates=options.extra.get("duplicates", "refuse"),
        unmapped=options.extra.get("unmapped", "error"),
        sentence_ids=options.extra.get("sentence_ids", "global"),
        rows=parse_rows_path(options.extra["rows"]) if "rows" in options.extra else None,
        label_level=options.extra.get("label_level", "auto"),
        label_scope=options.extra.get("label_scope", "shared"),
        label_scope_given="label_scope" in options.extra,
        no_verdict=options.extra.get("no_verdict", "error"),
        verdict_threshold=_threshold(options),
        below_threshold=Verdict(
            options.option("below_threshold", ("no_evidence", "refuted"), "no_evidence")
        ),
        score_means=(
            options.option("score_means", ("support", "error"), "support")
            if "score_means" in options.extra
            else None
        ),
        verdict_columns=options.verdict_columns,
        declared_verdicts=options.verdicts,
        systems=(
            frozenset(s.strip() for s in options.extra["systems"].split(",") if s.strip())
            if "systems" in options.extra
            else None
        ),
    )


def _threshold(options: AdapterOptions) -> float | None:
    """``--option verdict_threshold=T`` as a number (None when not given)."""
    text = options.extra.get("verdict_threshold")
    if text is None:
        for name in ("below_threshold", "score_means"):
            if name in options.extra:
                raise ConfigError(f"--option {name} goes with --option verdict_threshold=T")
        return None
    try:
        value = math.nan if underscore_clause(text) else float(text)  # '0_5' was 5.0
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        underscore = underscore_clause(text)
        raise ConfigError(
            f"--option verdict_threshold={text!r}: expected a number, e.g. 0.5"
            + (f": {underscore}" if underscore else "")
        )
    return value


def _has_passages_table(paths: Sequence[Path], options: AdapterOptions) -> bool:
    if options.passages is not None:
        return True
    return any(
        not is_document(p)
        and not is_spreadsheet(p)
        and tableio.detect_format(p) is tableio.Format.CSV
        and tableio.passages_path_for(p).exists()
        for p in paths
    )


def _read_traces(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """Any claim- or sentence-level table (JSONL, CSV, Parquet, Excel, JSON) or traces -> traces.

    Tables via --map, --passage-column and --label-rule (which adds labels); a trace CSV with
    its passages table is read as the trace format. ``paths`` are concatenated; (system,
    claim_id) must be unique across all.
    """
    spec = _table_spec(options)
    if not _has_passages_table(paths, options):
        stream = TableStream(paths, spec)
        read = list(stream)
        return IngestResult(
            traces=read, labels=stream.labels, notes=stream.notes, dropped=stream.dropped
        )
    if options.passages is not None and len(paths) != 1:
        raise ConfigError("--passages goes with exactly one CSV traces file")
    table_only = {
        "--passage-column": bool(options.passage_columns),
        "--label-rule": options.label_rule is not None,
        "--verifier": options.verifier is not None,
        "--retriever": options.retriever is not None,
        "--option": bool(options.extra),
        "--verdict-column": bool(options.verdict_columns),
        "--verdict": bool(options.verdicts),
    }
    used = [name for name, on in table_only.items() if on]
    if used:
        raise ConfigError(
            f"{', '.join(used)} read foreign tables; a trace CSV with a passages table is "
            "read as the trace format (put passages in text columns instead)"
        )
    seen: dict[tuple[str, str], tuple[Path, int]] = {}
    traces: list[Trace] = []
    for path in paths:
        traces.extend(
            traceio.read_traces(
                path,
                passages_path=options.passages,
                aliases=options.aliases,
                column_map=options.renames(),
                seen=seen,
                default_system=options.system,
            )
        )
    return IngestResult(traces=traces)


def _stream_traces(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """:func:`_read_traces`, with a foreign table's traces read one at a time (``stream``)."""
    if _has_passages_table(paths, options):
        return _read_traces(paths, options)
    return IngestResult(stream=TableStream(paths, _table_spec(options), lines=True))


def _read_labels(paths: Sequence[Path], options: AdapterOptions) -> IngestResult:
    """Clinical labels in the failcodes label format (JSONL, CSV, Parquet, Excel).

    Reads and concatenates the label files: ``--map`` renames; ``--label-rule`` gives
    ``has_error`` from a categorical column; ``--option consensus=majority|any|all`` makes one
    label per target of several annotators' (:mod:`failcodes.consensus`; ``--option
    ties=...`` for majority ties).
    """
    spec = _table_spec(options)
    check_option("sentence_ids", spec.sentence_ids, SENTENCE_ID_MODES)
    spec.check_index_columns()
    rule = options.extra.get("consensus", "")
    if "consensus" in options.extra:  # consensus= (empty) combined nothing, silently
        check_option("consensus", rule, [r.value for r in Rule])
    ties = options.option("ties", [t.value for t in Ties], Ties.REFUSE.value)
    if "ties" in options.extra and rule != Rule.MAJORITY:
        raise ConfigError("--option ties=... says what a majority tie is: give consensus=majority")
    # duplicates=same: a target labelled again alike (the shared labels each per-system file
    # carries, merged by a study) is one label; labelled otherwise it is refused
    same = options.option("duplicates", ["refuse", "same"], "refuse") == "same"
    # label_level=sentence: a rule's column named as the answer's holds the sentences' own
    as_written = options.option("label_level", ["auto", "sentence"], "auto") == "sentence"
    if as_written and not spec.label_rule:  # (before the fast path: t21src2 pins its steps)
        raise ConfigError(
            "--option label_level=sentence is the level of the labels --label-rule makes: "
            "give --label-rule (or drop the option)"
        )
    ruled: list[tuple[Label, Path, int]] = []
    labels: list[Label] = []
    seen: labelio.LabelsSeen = {}
    first: dict[tuple[str | None, ...], tuple[Label, Path, int]] = {}
    repeated = 0
    # ``label_annotator`` etc. name label fields in a traces table; here the row is the label
    renames = {k: LABEL_TARGETS.get(v, v) for k, v in options.renames().items()}
    refuse_correct_as_error(renames, paths[0], spec)
    plain = spec.rows is None and not any(is_document(p) or is_spreadsheet(p) for p in paths)
    scope = _OneScope()
    if (
        spec.label_rule is None
        and spec.sentence_ids == "global"
        and plain
        and not rule
        and not same
    ):
        if len(paths) == 1:  # held as columns: no model per label (issue 30)
            return IngestResult(
                labels=labelio.read_labels(paths[0], column_map=renames, columns=True)
            )
        for path in paths:
            read = labelio.read_labels(path, column_map=renames, seen=seen)
            if read:
                scope.check(read[0], path, 1, whole_file=True)
            labels.extend(read)
        return IngestResult(labels=labels)
    skipped = 0
    empty = [0]
    votes: list[tuple[Label, Path, int]] = []
    for path in paths:
        columns: set[str] = set()
        for line, _, raw in rows_of(
            path,
            spec.rows,
            spec.index_columns,
            empty,
            columns,
            rule=spec.label_rule,
            sentence_from=spec.sentence_from,
        ):
            label = label_from_row(raw, spec, renames, path, line)
            if label is not None:
                scope.check(label, path, line)
            if label is None:
                skipped += 1
            elif rule:
                votes.append((label, path, line))
            elif same and _same_again(first, label, path, line):
                repeated += 1
            else:
                labelio.label_once(seen, label, path, line)
                labels.append(label)
                if spec.label_rule is not None and not as_written:
                    ruled.append((label, path, line))
        if spec.label_rule is not None and spec.label_rule.column not in columns:
            # every row got the rule's 'otherwise' label (or none), exit 0
            have = ", ".join(sorted(columns)[:12]) or "none"
            raise InputError(
                f"no row has the --label-rule column (have: {have})",
                path=path,
                field=spec.label_rule.column,
            )
    if not labels and not votes and empty[0]:
        assert spec.rows is not None
        raise InputError(
            f"no rows: the lists of --option rows={spec.rows.text} are missing or empty in "
            f"every record ({empty[0]:,}); are the keys those of the file?",
            path=", ".join(str(p) for p in paths),
        )
    notes = [f"{skipped:,} row(s) skipped by the label rule"] if skipped else []
    if repeated:
        notes.append(
            f"{repeated:,} label(s) repeated alike in another file or row (--option "
            "duplicates=same): each target kept once"
        )
    if spec.label_rule is not None:
        refuse_answer_labels(ruled, spec.label_rule.column, LABEL_LEVEL_WAY)
        notes.extend(spec.label_rule.notes())
    if rule:
        labels, summary = combine(votes, Rule(rule), Ties(ties))
        notes.append(summary.note())
    return IngestResult(labels=labels, notes=notes)


def _same_again(
    first: dict[tuple[str | None, ...], tuple[Label, Path, int]],
    label: Label,
    path: Path,
    line: int,
) -> bool:
    """Whether ``label``'s target was labelled before, alike; labelled otherwise is an error.

    The target is :func:`failcodes.labelio.target_once`'s (claim or sentence, annotator,
    system); alike means the same ``has_error`` and question.
    """
    kind, key = ("claim", label.claim_id) if label.claim_id else ("sentence", label.sentence_id)
    target = (kind, key, label.annotator, label.system)
    if target not in first:
        first[target] = (label, path, line)
        return False
    was, was_path, was_line = first[target]
    where = f"line {was_line}" if was_path == path else f"{was_path}:{was_line}"
    if (was.has_error, was.question_id) == (label.has_error, label.question_id):
        if was.sentence is None or label.sentence is None:
            return True
        if spelling_key(was.sentence) == spelling_key(label.sentence):
            return True
        # one id, two sentences: each file was its own system's answer (d74f101's shape
        # across files), and one shared label would score each system on the other's
        raise InputError(
            f"{kind} {key!r} reads {label.sentence!r} here but {was.sentence!r} at {where}: "
            "two sentences, one id (if each file is its own system's answer, give its ingest "
            "--option label_scope=system, generic-labels --system NAME, so each label names "
            "its system)",
            path=path,
            line=line,
            field=f"{kind}_id",
        )
    raise InputError(
        f"{kind} {key!r} is labelled has_error={str(label.has_error).lower()} here, question "
        f"{label.question_id!r}, and has_error={str(was.has_error).lower()}, question "
        f"{was.question_id!r} at {where}: one target, two labels; two systems' answers "
        "numbered alike (one file each)? each label must name its system: a system field or "
        "column in every record (atomic: the files ingested in one call; generic: --option "
        "label_scope=system; generic-labels: --system NAME, one call per file)",
        path=path,
        line=line,
        field=f"{kind}_id",
    )


class _OneScope:
    """Labels of several files (or rows) either all name their system or none does."""

    def __init__(self) -> None:
        self.first: tuple[bool, Path, int] | None = None

    def check(self, label: Label, path: Path, line: int, *, whole_file: bool = False) -> None:
        """Refuse ``label`` if it names a system and the first did not, or the other way."""
        named = label.system is not None
        if self.first is None:
            self.first = (named, path, line)
            return
        first_named, first_path, first_line = self.first
        if named == first_named:
            return
        where = (
            str(first_path)
            if whole_file
            else f"line {first_line}"
            if first_path == path
            else f"{first_path}:{first_line}"
        )
        here = "the labels of this file" if whole_file else "this label"
        which = ("name" if whole_file else "names") + (" a system" if named else " none")
        other = "none" if named else "one"
        raise InputError(
            f"{here} {which}, but {where} names {other}: either every label names the "
            "system whose answer it labels (per-system labels) or none does (shared by "
            "every system)",
            path=path,
            line=None if whole_file else line,
            field="system",
        )


ADAPTER = FileAdapter(
    "generic", Output.TRACES, _read_traces, options=OPTIONS, streamer=_stream_traces
)
LABELS_ADAPTER = FileAdapter("generic-labels", Output.LABELS, _read_labels, options=LABEL_OPTIONS)
ADAPTERS = {ADAPTER.name: ADAPTER, LABELS_ADAPTER.name: LABELS_ADAPTER}
