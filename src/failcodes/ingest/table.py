"""Any claim-level or sentence-level table -> traces and labels (the generic adapter's rules).

A foreign table (JSONL, CSV or Parquet; one row per claim, or per sentence) becomes traces
with options alone: ``column_map`` (``--map``), the ids' defaults and ``ids``, nested passages,
``passage_columns``, ``label_rule``, the constant ``system``/``verifier``/``retriever`` and
``unmapped`` do what docs/trace-format.md's "Your own table" says.
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import itertools
import json
import math
import operator
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from failcodes import tableio, traceio
from failcodes.dropped import Dropped, carried
from failcodes.errors import ConfigError, InputError, clip
from failcodes.fileio import check_regular_file
from failcodes.hashing import content_hash
from failcodes.ingest.label_rule import LabelRule, Outcome, false_as_written, spells_truth
from failcodes.ingest.label_targets import RuleLabels, numbering_gaps
from failcodes.ingest.nested import INDEX_MARK, RowsPath, is_document, rows_of
from failcodes.ingest.repeats import KeyHashes, KeyValues
from failcodes.ingest.runcolumns import RunColumns
from failcodes.jsonio import byte_blocks, jsonl_lines, jsonl_object
from failcodes.labelcols import TOTAL_ID_FIELDS, total_id_problem
from failcodes.labels import Label
from failcodes.numbertext import underscore_clause
from failcodes.polarity import (
    CORRECT_FLAG,
    ERROR_FLAG,
    judged_stage,
    judges_a_verdict,
    names_absent_error,
    says_correct,
)
from failcodes.sheetio import ShownNumber, title_hint
from failcodes.spelling import name_key, spelling_key, two_ways
from failcodes.tracelines import TraceLine, Voucher, missing_mark, refuse_reference
from failcodes.traces import Marks, Passage, Trace
from failcodes.verdicts import (
    ASSERTED,
    NO_VERDICT_MARKS,
    Verdict,
    alias_word,
    aliased_keys,
    truths_line,
)

#: Map targets that fill the label (not the trace), with the Label field they fill.
LABEL_TARGETS: dict[str, str] = {
    "label_rationale": "rationale",
    "label_severity": "severity",
    "label_annotator": "annotator",
}
TRACE_FIELDS: tuple[str, ...] = tuple(Trace.model_fields)
#: Map targets renamed inside each nested passage object (none is also a trace field).
PASSAGE_FIELDS: tuple[str, ...] = tuple(f for f in Passage.model_fields if f not in TRACE_FIELDS)
ID_FIELDS: tuple[str, ...] = tableio.NUMBER_ID_FIELDS
ID_MODES: tuple[str, ...] = ("columns", "line", "claim")
SENTENCE_ID_MODES: tuple[str, ...] = ("global", "question")
LABEL_LEVELS: tuple[str, ...] = ("auto", "sentence", "claim")
LABEL_SCOPES: tuple[str, ...] = ("shared", "system")
UNMAPPED_MODES: tuple[str, ...] = ("error", "drop")
NO_VERDICT_MODES: tuple[str, ...] = ("error", "drop")


@dataclass(frozen=True)
class PassageColumn:
    """A text column that becomes passages, with the source name they get (if any)."""

    column: str
    source: str | None = None


@dataclass(frozen=True)
class TableSpec:
    """How the rows of a foreign table become traces and labels (see the module docstring)."""

    column_map: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    passage_columns: tuple[PassageColumn, ...] = ()
    label_rule: LabelRule | None = None
    aliases: Mapping[str, Verdict] = field(default_factory=dict)
    system: str | None = None
    verifier: str | None = None
    retriever: str | None = None
    ids: str = "columns"
    #: with ``ids=line``, a row repeating an earlier row cell for cell: "refuse" or "keep"
    duplicates: str = "refuse"
    unmapped: str = "error"
    sentence_ids: str = "global"
    rows: RowsPath | None = None
    label_level: str = "auto"
    #: shared: one label per target for every system's rows; system: each row's label is
    #: its own system's (each system judged on its own answer, ids may recur across systems)
    label_scope: str = "shared"
    #: whether ``--option label_scope`` was given (shared on purpose: rows of two systems
    #: may name one sentence with different texts)
    label_scope_given: bool = False
    verdict_threshold: float | None = None
    below_threshold: Verdict = Verdict.NO_EVIDENCE
    #: what a high score means: "support" (the claim holds) or "error" (a hallucination
    #: score); None: not said (support, refused for a column named as an error flag)
    score_means: str | None = None
    no_verdict: str = "error"
    verdict_columns: tuple[tuple[str, str], ...] = ()
    declared_verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    #: ``--option systems=A,B``: the systems read; another's rows are left out, counted
    #: (None: every system, but none named like the reference or a consensus)
    systems: frozenset[str] | None = None

    @property
    def sentence_from(self) -> frozenset[str]:
        """The columns that give the sentence id (``--map X=sentence_id``, else its own)."""
        mapped = frozenset(c for c, t in self.column_map.items() if "sentence_id" in t)
        return mapped or frozenset({"sentence_id"} - set(self.column_map))

    @property
    def index_columns(self) -> frozenset[str]:
        """The ``<list path>#`` columns ``--map`` names (see :mod:`failcodes.ingest.nested`)."""
        return frozenset(c for c in self.column_map if c.endswith(INDEX_MARK))

    def check(self) -> None:
        """Refuse contradictory settings with one line (a :class:`ConfigError`)."""
        known = {*TRACE_FIELDS, *LABEL_TARGETS, *PASSAGE_FIELDS}
        owner: dict[str, str] = {}
        for src, targets in self.column_map.items():
            for target in targets:
                if target not in known:
                    raise ConfigError(
                        f"--map {src}={target}: {target!r} is not a trace field "
                        f"(fields: {', '.join(TRACE_FIELDS)}; label: {', '.join(LABEL_TARGETS)}; "
                        f"inside passages: {', '.join(PASSAGE_FIELDS)})"
                    )
                if target in owner:
                    raise ConfigError(
                        f"--map: field {target!r} is filled from both {owner[target]!r} and {src!r}"
                    )
                owner[target] = src
        used = [p.column for p in self.passage_columns]
        for col in used:
            if used.count(col) > 1:
                raise ConfigError(f"--passage-column {col!r} given twice")
            if col in self.column_map:
                raise ConfigError(f"column {col!r} is both mapped (--map) and a passage column")
        if self.passage_columns and "passages" in owner:
            raise ConfigError("--passage-column and --map ...=passages do not mix")
        self._check_verdicts(owner)
        check_option("ids", self.ids, ID_MODES)
        check_option("duplicates", self.duplicates, ("refuse", "keep"))
        if self.duplicates == "keep" and self.ids != "line":
            raise ConfigError("--option duplicates=keep goes with --option ids=line")
        check_option("sentence_ids", self.sentence_ids, SENTENCE_ID_MODES)
        check_option("unmapped", self.unmapped, UNMAPPED_MODES)
        check_option("label_level", self.label_level, LABEL_LEVELS)
        check_option("label_scope", self.label_scope, LABEL_SCOPES)
        check_option("no_verdict", self.no_verdict, NO_VERDICT_MODES)
        for name, value, default, what in (
            ("label_level", self.label_level, "auto", "is the level of"),
            ("label_scope", self.label_scope, "shared", "says whose are"),
        ):
            if value != default and self.label_rule is None:
                raise ConfigError(
                    f"--option {name}={value} {what} the labels --label-rule makes: give "
                    "--label-rule (or drop the option)"
                )
        self.check_index_columns()

    def shared_column(self, columns: Iterable[str]) -> tuple[str, str] | None:
        """The first of ``columns`` every system's trace gets whose name is one system's.

        ``--map gpt_reasoning=reasoning`` beside ``--verdict-column gpt --verdict-column
        claude``: claude's traces held GPT's reasoning, coded as claude's (exit 0). Returns
        ``(column, the reason)``; refused where the column is read (``check_header``: the
        file's header line; a headerless file once read).
        """
        if len(self.verdict_columns) < 2:
            return None
        names = {n.casefold(): s for c, s in self.verdict_columns for n in (c, s)}
        names = dict(sorted(names.items(), key=lambda kv: -len(kv[0])))  # gpt-4o before gpt
        shared = {c for c, t in self.column_map.items() if set(t) - set(LABEL_TARGETS)}
        shared |= {p.column for p in self.passage_columns}
        # --label-rule 'gpt_label = wrong -> error': claude scored on GPT's labels (FP 1, FN 1
        # for TP 1, TN 2 on its own claude_label, exit 0)
        rule = self.label_rule.column if self.label_rule is not None else None
        for column in columns:
            if column != rule and column not in shared:
                continue
            for name, system in names.items():
                if re.search(rf"(?<![^\W_]){re.escape(name)}(?![^\W_])", column.casefold()):
                    other = next(s for _, s in self.verdict_columns if s != system)
                    own = (
                        "; its own --label-rule, --option label_scope=system; the label "
                        "files made one with ingest generic-labels A B -o OUT"
                    )
                    return column, (
                        f"column {column!r} names system {system!r}, but --verdict-column gives "
                        f"every system's trace the same columns ({other}'s would hold it too): "
                        "ingest each system apart (its --verdict-column, its own --map"
                        f"{own if column == rule else ''}) "
                        "and give the trace files together"
                    )
        return None

    def _check_verdicts(self, owner: Mapping[str, str]) -> None:
        """Refuse ``--verdict-column``/``--verdict`` settings that contradict the others."""
        columns = [c for c, _ in self.verdict_columns]
        systems = [s for _, s in self.verdict_columns]
        for name, values in (("column", columns), ("system", systems)):
            twice = next((v for v in values if values.count(v) > 1), None)
            if twice is not None:
                raise ConfigError(f"--verdict-column: {name} {twice!r} given twice")
        if self.verdict_columns:
            for target in ("verdict", "system"):
                if target in owner:
                    raise ConfigError(
                        f"--verdict-column gives each row's {target} (one trace per column); "
                        f"drop --map {owner[target]}={target}"
                    )
            if self.system is not None:
                raise ConfigError("--verdict-column names each column's system; drop --system")
            mapped = [c for c in columns if c in self.column_map]
            if mapped:
                raise ConfigError(
                    f"column {mapped[0]!r} is both mapped (--map) and a --verdict-column"
                )
        if self.verdict_threshold is not None:
            _one_score_direction(columns)
        elif _read_by_column(self.aliases):
            _one_score_direction(columns, by_alias=True)
        both = sorted(set(systems) & set(self.declared_verdicts))
        if both:
            raise ConfigError(
                f"system {both[0]!r} has a --verdict-column and a declared --verdict; give one"
            )
        if "*" in self.declared_verdicts:
            if "verdict" in owner:
                raise ConfigError(
                    "--verdict declares every claim's verdict (an asserting pipeline); drop "
                    f"--map {owner['verdict']}=verdict, or name the systems it is for: "
                    "--verdict SYSTEM=VERDICT"
                )
            if self.verdict_threshold is not None:
                raise ConfigError(
                    "--verdict declares every claim's verdict: there is no score for --option "
                    "verdict_threshold to read"
                )

    def verdict_of(self, system: object) -> Verdict | None:
        """The verdict declared for ``system`` (its own ``--verdict``, else the plain one)."""
        if not self.declared_verdicts:
            return None
        key = str(system) if system is not None else ""
        return self.declared_verdicts.get(key, self.declared_verdicts.get("*"))

    def check_index_columns(self) -> None:
        """Refuse ``--map X#=...`` unless ``X`` is a list on ``--option rows`` (ConfigError)."""
        for src in sorted(self.index_columns - {INDEX_MARK}):  # '#' alone: the record's place
            if self.rows is None:
                raise ConfigError(
                    f"--map {src}=...: {src!r} is the place of a row in a list exploded by "
                    "--option rows=...; without that option there is no such column"
                )
            lists = [name + INDEX_MARK for name in self.rows.names]
            if src not in lists:
                raise ConfigError(
                    f"--map {src}=...: no list {src.removesuffix(INDEX_MARK)!r} on --option "
                    f"rows={self.rows.text} (its places: {', '.join(lists)})"
                )


def check_option(name: str, value: str, modes: Sequence[str]) -> None:
    """Refuse an ``--option NAME=VALUE`` whose value is not one of ``modes``."""
    if value not in modes:
        raise ConfigError(f"--option {name}={value!r} is not one of: {', '.join(modes)}")


def check_header(path: Path, header: Sequence[str], spec: TableSpec) -> None:
    """Header-level errors of a CSV/Parquet table: unknown and missing columns (line 1)."""
    one_system = spec.shared_column(header)
    if one_system is not None:
        raise InputError(one_system[1], path=path, line=1, field=one_system[0])
    consumed = {p.column for p in spec.passage_columns}
    if spec.label_rule is not None:
        consumed.add(spec.label_rule.column)
    consumed.update(c for c, _ in spec.verdict_columns)
    fields: set[str] = {"verdict", "system"} if spec.verdict_columns else set()
    # ``#``, the record's place in the file, is a column of every table once --map names it
    for name in [*header, *([INDEX_MARK] if INDEX_MARK in spec.column_map else [])]:
        if not name:
            continue
        if name in spec.column_map:
            fields.update(spec.column_map[name])
        elif name in consumed:
            continue
        elif name in TRACE_FIELDS:
            fields.add(name)
        elif spec.unmapped == "error":
            near = name_key(name)
            hint = tableio.header_hint(header, near if near in TRACE_FIELDS else "")
            if hint:
                raise InputError(hint, path=path, line=1)
            # one column of verdicts per system (sysA_verdict, sysB_verdict): read as that
            wide = "verdict" in name.lower() and "verdict" not in header
            index = tableio.index_hint(name)
            raise InputError(
                f"unknown column (expected some of: {', '.join(TRACE_FIELDS)}; "
                + (f"{index}; " if index else "")
                + "rename foreign "
                "columns with --map FOREIGN=ours, drop with --map FOREIGN= or all unmapped "
                "ones with --option unmapped=drop"
                + (
                    "; a column of verdicts per system: --verdict-column COLUMN=SYSTEM for each)"
                    if wide
                    else ")"
                )
                + title_hint(header, 1),  # a title row above the column names
                path=path,
                line=1,
                field=name,
            )
    missing = [
        c
        for c in [*(p.column for p in spec.passage_columns), *(c for c, _ in spec.verdict_columns)]
        if c not in header and c not in spec.column_map
    ]
    if spec.label_rule is not None and spec.label_rule.column not in header:
        missing.insert(0, spec.label_rule.column)
    required: list[str] = []
    if not fields & {"claim_id", "sentence_id"} and spec.ids == "columns":
        required.append("claim_id")
    if not fields & {"claim", "sentence"}:
        required.append("claim")
    if "verdict" not in fields and not spec.declared_verdicts:
        required.append("verdict")
    if "system" not in fields and spec.system is None:
        required.append("system")
    for name in [*missing, *required]:
        have = ", ".join(h for h in header if h)
        hint = ""
        if name == "claim_id":
            hint = "; or claim_id from row numbers with --option ids=line"
        elif name == "system":
            hint = "; or name it with --system"
        hint += tableio.partition_hint(path, name)  # system=A/part-0.parquet
        raise InputError(
            f"missing column (have: {have}{hint})"
            # a title row above the names, read with --option unmapped=drop (no known name)
            + ("" if fields else title_hint(header, 1)),
            path=path,
            line=1,
            field=name,
        )


def _passages(
    raw: Mapping[str, Any], spec: TableSpec, claim_id: str, path: Path, line: int
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    # a text column keeps its place when blank: passage_2 blank on a row left passage_3 rank
    # 2 there, so --top-k 2 took the third hit as a top-2 one
    rank = 0
    for pc in spec.passage_columns:
        cell = raw.get(pc.column)
        if cell is None:
            rank += 1
            continue
        if isinstance(cell, str):
            cell = _listed_texts(cell, pc.column, path, line)
        if isinstance(cell, str):
            items = [cell] if cell.strip() and not missing_mark(cell) else []
            ids = [f"{claim_id}:{pc.column}"]
            rank += 1
            ranks = [rank]
        elif isinstance(cell, list) and all(isinstance(x, str | None) for x in cell):
            # a missing item (a Parquet list's null) is no passage, as a blank one is not
            items = [x for x in cell if x is not None and x.strip() and not missing_mark(x)]
            ids = [f"{claim_id}:{pc.column}:{i}" for i in range(1, len(items) + 1)]
            ranks = list(range(rank + 1, rank + len(items) + 1))
            rank += len(items)
        else:
            held = type(cell).__name__
            if isinstance(cell, list):  # an item that is no text (a number, an object)
                odd = next(x for x in cell if not isinstance(x, str | None))
                held = f"a list holding {type(odd).__name__}"
            raise InputError(
                f"a passage column holds text or a list of texts, got {held}",
                path=path,
                line=line,
                field=pc.column,
            )
        for pid, text, place in zip(ids, items, ranks, strict=False):
            refuse_reference(text, path, line, pc.column)
            passage: dict[str, Any] = {"passage_id": pid, "rank": place, "text": text}
            if pc.source is not None:
                passage["source"] = pc.source
            out.append(passage)
    return out


def _count_marks(tally: _Tally, row: _Row, spec: TableSpec, reasoning: Sequence[str]) -> None:
    """Count the row's passage and reasoning cells holding a missing mark, once a row.

    ``--verdict-column`` makes one row a trace per system: the row's cells count once.
    """
    if tally.last_marked == (row.path, row.line):
        return
    tally.last_marked = (row.path, row.line)
    n = sum(
        isinstance(cell := row.raw.get(pc.column), str) and missing_mark(cell)
        for pc in spec.passage_columns
    )
    if n:
        tally.marked += n
        tally.first_marked = tally.first_marked or (row.path, row.line)
    if row.trace.reasoning is None and any(
        isinstance(cell := row.raw.get(c), str) and missing_mark(cell) for c in reasoning
    ):
        if row.path.suffix.lower() in _RECORD_SUFFIXES:  # a record's field, no cell
            tally.objects.add(row.path, row.line, reasoning=True)
        else:
            tally.reasoned += 1
            tally.first_reasoned = tally.first_reasoned or (row.path, row.line)


#: Files whose rows are records (JSON objects, the trace format's rows), not a sheet's cells:
#: their missing marks are said as :class:`~failcodes.traces.Marks` says them.
_RECORD_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json", ".parquet", ".pq"})


def _count_unordered(tally: _Tally, row: _Row) -> None:
    """Count a row whose passages' scores run in no order of their ranks (3 or more scored).

    A retrieval list written unsorted (a dict of documents by id, scores 0.12, 0.91, 0.40)
    was ranked by its place in the list: ``--top-k 1`` took the 0.12 passage as the top hit,
    attribution named it rank 1, unsaid. A reranker's order is as likely, so the ranks stay
    as given and the note says so.
    """
    scores = [p.score for p in sorted(row.trace.passages, key=_RANK)]
    if len(scores) < 3 or any(x is None for x in scores):
        return
    pairs = list(itertools.pairwise(scores))
    if all(a >= b for a, b in pairs) or all(a <= b for a, b in pairs):
        return
    tally.unordered += 1
    if tally.first_unordered is None:
        shown = ", ".join(f"{x:g}" for x in scores[:5]) + (", ..." if len(scores) > 5 else "")
        tally.first_unordered = (row.path, row.line, shown)


_RANK = operator.attrgetter("rank")


def _sources_of(target: str, spec: TableSpec) -> list[str]:
    """The columns a row's ``target`` field is read from (``--map``, else its own name)."""
    mapped = [c for c, targets in spec.column_map.items() if target in targets]
    return mapped or ([] if target in spec.column_map else [target])


def _list_literal(cell: str) -> list[Any] | None:
    """A cell holding a list written as text: JSON (``["a", "b"]``) or Python's (``['a', 'b']``).

    A CSV (or a sheet) cannot hold a list: ``json.dumps`` writes it as JSON text, pandas'
    ``to_csv`` as Python's. ``None`` when the cell is no such list.
    """
    text = cell.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return value if isinstance(value, list) else None


def _listed_texts(cell: str, column: str, path: Path, line: int) -> str | list[Any]:
    """A passage column's text cell, or the list of texts it writes as text.

    A CSV of retrieved contexts (a list column saved by pandas, ``"['Aspirin reduces
    fever.', 'x']"``) was read as one passage whose text was the list: 1 passage a claim for
    2, Table 8's units and attribution's "none of the 1 retrieved passages" counted so, exit
    0. A list of passage objects is the ``passages`` field's (``--map COLUMN=passages``).
    """
    value = _list_literal(cell)
    if value is None or not value:
        return cell if value is None else []
    if all(isinstance(x, str | None) for x in value):
        return value
    if any(isinstance(x, dict) for x in value):
        raise InputError(
            "a passage column's cell holds a list of objects (passages with fields?): map "
            f"it to the passages field, --map {column}=passages, and name the text key "
            "(--map KEY=text)",
            path=path,
            line=line,
            field=column,
        )
    return cell


def _text_ids(
    rec: dict[str, Any],
    spec: TableSpec,
    path: Path,
    line: int,
    column_of: Mapping[str, str] | None = None,
) -> None:
    """Number ids as text; with ``sentence_ids="question"`` sentence ids qualified.

    The number rule is :func:`~failcodes.tableio.id_text` (its errors name the column each id
    came from, ``column_of``). A sentence id to qualify on a row without a question id is an
    error (it stayed bare and silently joined any other answer's sentence of the same number).
    """
    for name in ID_FIELDS:
        if name in rec:
            field = (column_of or {}).get(name, name)
            rec[name] = tableio.id_text(rec[name], path=path, line=line, field=field)
    if spec.sentence_ids == "question" and "sentence_id" in rec:
        if "question_id" not in rec:
            raise InputError(
                "no question id to qualify the sentence id with (--option "
                "sentence_ids=question); map the column that names the answer: --map "
                "COLUMN=question_id, or, if the records name none, number them: --map "
                "'#=question_id'",
                path=path,
                line=line,
                field="question_id",
            )
        rec["sentence_id"] = f"{rec['question_id']}:{rec['sentence_id']}"


def _no_total(
    rec: Mapping[str, Any], path: Path, line: int, columns: Mapping[str, str] | None = None
) -> None:
    """Refuse a label row of totals (:func:`failcodes.labels.total_id_problem`)."""
    for name in TOTAL_ID_FIELDS:
        problem = total_id_problem(name, rec.get(name))
        if problem is not None:
            raise InputError(problem, path=path, line=line, field=(columns or {}).get(name, name))


def label_from_row(
    raw: Mapping[str, Any],
    spec: TableSpec,
    renames: Mapping[str, str],
    path: Path,
    line: int,
) -> Label | None:
    """One row of a label table as a :class:`Label` (``None``: the label rule skips it).

    ``renames`` maps foreign columns to label fields ('' drops); the label rule's column
    becomes ``has_error`` and is not itself a field.
    """
    rule = spec.label_rule
    rec: dict[str, Any] = {}
    for key, value in raw.items():
        if rule is not None and key == rule.column:
            continue
        target = renames.get(key, key)
        if target:
            rec[target] = value
    columns = {target: k for k, target in reversed(list(renames.items())) if target}
    if rule is not None:
        if "has_error" in rec:  # overwritten by the rule's label, unsaid (true read as ok)
            given = columns.get("has_error", "has_error")
            raise InputError(
                f"column {given!r} gives has_error and --label-rule reads {rule.column!r}: "
                f"which one is the label? leave out the rule, or the column (--map {given}=)",
                path=path,
                line=line,
                field=given,
            )
        outcome = rule.outcome(raw.get(rule.column), path=str(path), line=line)
        if outcome is Outcome.SKIP:
            return None
        rec["has_error"] = outcome is Outcome.ERROR
    _no_total(rec, path, line, columns)
    _text_ids(rec, spec, path, line, columns)
    for name in ("sentence_id", "claim_id", "question_id"):
        problem = tableio.id_problem(rec.get(name))
        if problem is not None:  # written as is, it would be refused by every later reader
            raise InputError(problem, path=path, line=line, field=columns.get(name, name))
    return tableio.validate_record(Label, rec, path, line)


def _json_list(cell: str, path: Path, line: int) -> Any:
    """A passages cell of a CSV: a JSON list (of passage objects or texts); empty is none."""
    if not cell.strip():
        return []
    value = _list_literal(cell)  # pandas' to_csv writes a list as Python's text
    if not isinstance(value, list):
        raise InputError(
            "a passages cell holds a JSON list of passage objects or texts "
            f"(got {cell[:40]!r}{'...' if len(cell) > 40 else ''})",
            path=path,
            line=line,
            field="passages",
        )
    return value


def _ranked_alike(passages: list[Any], spec: TableSpec, path: Path, line: int) -> None:
    """Refuse a passage list where some objects have a rank and some none.

    An unranked passage gets its place in the list, a rank only when the list is in rank
    order: beside ranks 5 and 1 the passage between them was ranked 2 (and one before a
    rank 1 made 'rank 1 appears twice'), where its rank is unknown.
    """
    names = {"rank", *(k for k, v in spec.column_map.items() if "rank" in v)}
    given = [isinstance(p, dict) and any(p.get(n) is not None for n in names) for p in passages]
    if any(given) and not all(given):
        place = given.index(False)
        raise InputError(
            f"passage {place + 1} of {len(passages)} has no rank where others have one: its "
            "place in the list is no rank unless the list is in rank order; give every "
            "passage its rank, or none (the list's order then ranks them)",
            path=path,
            line=line,
            field=f"passages[{place}].rank",
        )


def _nested_passage(obj: Mapping[str, Any], place: int, spec: TableSpec) -> dict[str, Any]:
    """One passage object of a foreign table in our field names (see the module docstring)."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        mapped = spec.column_map.get(key)
        if mapped is not None:
            targets = tuple(t for t in mapped if t in PASSAGE_FIELDS)
        elif spec.unmapped == "drop" and key not in PASSAGE_FIELDS:
            continue
        else:
            targets = (key,)
        for target in targets:
            out[target] = value
    if out.get("rank") is None:
        out["rank"] = place
    number = out.get("passage_id")
    if type(number) is int or isinstance(number, ShownNumber):  # (ShownNumber: as shown)
        out["passage_id"] = getattr(number, "shown", None) or str(int(number))
    if out.get("passage_id") is None and isinstance(out.get("text"), str):
        out["passage_id"] = f"sha256:{content_hash(out['text'])}"
    return out


def _marked(passage: object) -> bool:
    """Whether a passage object's text is a missing mark (:func:`missing_mark`): no passage."""
    return (
        isinstance(passage, dict)
        and isinstance(text := passage.get("text"), str)
        and missing_mark(text)
    )


def _row(
    raw: Mapping[str, Any], spec: TableSpec, path: Path, line: int, where: str, tally: _Tally
) -> tuple[Trace, Label | None]:
    consumed = {p.column for p in spec.passage_columns}
    if spec.label_rule is not None:
        consumed.add(spec.label_rule.column)
    rec: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for key, value in raw.items():
        mapped = spec.column_map.get(key)
        if mapped is not None and (not mapped or any(t not in PASSAGE_FIELDS for t in mapped)):
            targets = tuple(t for t in mapped if t not in PASSAGE_FIELDS)
        elif key in consumed or (spec.unmapped == "drop" and key not in TRACE_FIELDS):
            continue
        else:
            targets = (key,)
        for target in targets:
            if target in rec:
                raise InputError(
                    f"field {target!r} comes from both column {origin[target]!r} and column "
                    f"{key!r}; drop one with --map {key}=",
                    path=path,
                    line=line,
                    field=target,
                )
            rec[target] = value
            origin[target] = key
    label_extra = {LABEL_TARGETS[k]: rec.pop(k) for k in list(rec) if k in LABEL_TARGETS}
    for name in ID_FIELDS:  # named by the column it came from, before ids fill each other
        problem = tableio.id_problem(rec.get(name))
        if problem is not None:
            raise InputError(problem, path=path, line=line, field=origin.get(name, name))
    _text_ids(rec, spec, path, line, origin)
    if "claim_id" not in rec and "sentence_id" not in rec and spec.ids == "line":
        rec["claim_id"] = f"L{line}"
    if "claim_id" not in rec and spec.ids == "claim" and isinstance(rec.get("claim"), str):
        # whitespace folded, one Unicode form (NFC): one claim exported with a trailing space,
        # a line break ("\r\n" in a cell) or decomposed umlauts (a macOS export) kept one id
        # in every system's file (it got two, its label lost)
        text = unicodedata.normalize("NFC", " ".join(rec["claim"].split()))
        parts = [rec.get("question_id"), rec.get("sentence_id"), text]
        rec["claim_id"] = f"{rec.get('sentence_id', '')}:c{content_hash(parts, length=10)}"
    if "claim_id" not in rec and "sentence_id" in rec:
        rec["claim_id"] = rec["sentence_id"]
    if "sentence_id" not in rec and "claim_id" in rec:
        rec["sentence_id"] = rec["claim_id"]
    if "question_id" not in rec and "sentence_id" in rec:
        rec["question_id"] = rec["sentence_id"]
    if "claim" not in rec and "sentence" in rec:
        rec["claim"] = rec["sentence"]
    for name, value in (
        ("system", spec.system),
        ("verifier", spec.verifier),
        ("retriever", spec.retriever),
    ):
        if value is not None and name not in rec:
            rec[name] = value
    if isinstance(rec.get("reasoning"), str) and missing_mark(rec["reasoning"]):
        del rec["reasoning"]  # the verifier gave none (R's NA, a program's None)
    if spec.passage_columns:
        if "passages" in rec:
            raise InputError(
                "the row has passages and --passage-column adds more; use one or the other",
                path=path,
                line=line,
                field="passages",
            )
        claim_id = rec.get("claim_id")
        rec["passages"] = _passages(raw, spec, str(claim_id), path, line)
    else:
        if isinstance(rec.get("passages"), str):  # a CSV cell: the list as JSON text
            rec["passages"] = _json_list(rec["passages"], path, line)
        if isinstance(rec.get("passages"), list):
            _ranked_alike(rec["passages"], spec, path, line)
            rec["passages"] = [
                _nested_passage({"text": p} if isinstance(p, str) else p, i, spec)
                if isinstance(p, dict | str)
                else p
                for i, p in enumerate(rec["passages"], start=1)
            ]
            for i, p in enumerate(rec["passages"]):
                if isinstance(p, dict):
                    refuse_reference(p.get("text"), path, line, f"passages[{i}].text")
            kept = [p for p in rec["passages"] if not _marked(p)]
            if len(kept) < len(rec["passages"]) and tally.last_objects != (path, line):
                # (counted once a row: --verdict-column makes it a trace per system)
                tally.last_objects = (path, line)
                tally.objects.add(path, line, passages=len(rec["passages"]) - len(kept))
            rec["passages"] = kept
    declared = spec.verdict_of(rec.get("system"))
    if declared is not None:
        own = rec.get("verdict")
        if own is not None and not (isinstance(own, str) and not own.strip()):
            raise InputError(
                f"the row has a verdict ({clip(repr(own))}) and --verdict declares "
                f"{declared.value!r} for system {rec.get('system')!r}: a declared verdict is "
                "for a pipeline that asserts its claims; drop one",
                path=path,
                line=line,
                field=origin.get("verdict", "verdict"),
            )
        rec["verdict"] = declared
        rec["raw_verdict"] = ASSERTED
    elif spec.verdict_threshold is not None:
        _score_verdict(rec, spec, path, line)
    trace = traceio.prepare_trace(rec, path, line, spec.aliases, {})
    tally.runs.check(raw, trace, spec, path, line)  # two versions' claims of one sentence
    label: Label | None = None
    rule = spec.label_rule
    if rule is not None:
        shared = spec.verdict_columns and spec.label_scope != "system"
        once = (path, line, where) if shared else None
        outcome = rule.outcome(raw.get(rule.column), path=str(path), line=line, row=once)
        if outcome is not Outcome.SKIP:
            label = Label(
                sentence_id=trace.sentence_id,
                claim_id=trace.claim_id,
                question_id=trace.question_id,
                has_error=outcome is Outcome.ERROR,
                sentence=trace.sentence,
                system=trace.system if spec.label_scope == "system" else None,
                **{k: str(v) for k, v in label_extra.items()},
            )
    return trace, label


def _hollow_labels(
    raw: Mapping[str, Any], spec: TableSpec, path: Path, line: int, where: str
) -> list[Label]:
    """The labels of a sentence whose claims list is empty (``raw``: its enclosing values).

    Only where the label rule's column is a key of the object that holds the empty list (the
    sentence's own label, not its answer's: an answer-level ``gold = wrong`` does not say a
    sentence without claims is wrong) and a sentence id is among those values; each system's
    with ``--verdict-column`` and per-system labels.
    """
    rule = spec.label_rule
    if rule is None or spec.rows is None or raw.get(rule.column) is None:
        return []
    owner = spec.rows.names[-1].rpartition(".")[0]  # the path of the list's holder
    if owner and not rule.column.startswith(owner + "."):
        return []
    rec: dict[str, Any] = {}
    for key, value in raw.items():
        if key == rule.column:
            continue
        mapped = spec.column_map.get(key)
        for target in (key,) if mapped is None else mapped:
            if target in ("sentence_id", "question_id", "sentence", "system"):
                rec.setdefault(target, value)
    if "sentence_id" not in rec:
        return []
    try:
        for name in ("sentence_id", "question_id"):
            problem = tableio.id_problem(rec.get(name))
            if problem is not None:
                raise InputError(problem, path=path, line=line, field=name)
        _no_total(rec, path, line)
        _text_ids(rec, spec, path, line)
        outcome = rule.outcome(raw.get(rule.column), path=str(path), line=line)
    except InputError as exc:
        raise _in_row(exc, where) from None
    if outcome is Outcome.SKIP:
        return []
    rec.setdefault("question_id", rec["sentence_id"])
    rec["has_error"] = outcome is Outcome.ERROR
    systems: list[object] = (
        [s for _, s in spec.verdict_columns]
        if spec.verdict_columns
        else [rec.pop("system", spec.system)]
    )
    rec.pop("system", None)
    out = []
    for system in systems if spec.label_scope == "system" else [None]:
        fields = {**rec, "system": system} if system is not None else rec
        out.append(tableio.validate_record(Label, fields, path, line))
    return out


def _score_of(value: object) -> float | None:
    """A support score from a cell: a number, its text, or a percent's (``85%``: 0.85)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError):  # an integer past float range: no score
            return float(value)
    elif isinstance(value, str):
        text = value.strip()
        with contextlib.suppress(ValueError):  # a percent, as a sheet shows one: its share
            return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    return None


def _score_verdict(rec: dict[str, Any], spec: TableSpec, path: Path, line: int) -> None:
    """A verifier's support score as a verdict: supported at or above the threshold.

    Score-based verifiers (MiniCheck, AlignScore, an NLI entailment probability) give no
    label; below the threshold the verdict is ``spec.below_threshold`` (no_evidence unless
    said otherwise). The score is kept as the raw verdict. A percent text is its share
    (``85%`` is 0.85: it was refused as no number).
    """
    value = rec.get("verdict")
    underscore = underscore_clause(value)  # '0_4' was 4.0 (Python's digit grouping)
    score = None if underscore else _score_of(value)
    if score is None or not math.isfinite(score):
        raise InputError(
            "--option verdict_threshold: expected a support score (a number), got "
            + clip(repr(value))
            + (f": {underscore}" if underscore else ""),
            path=path,
            line=line,
            field="verdict",
        )
    rec.setdefault("raw_verdict", str(value).strip())
    assert spec.verdict_threshold is not None
    supported = (score >= spec.verdict_threshold) != (spec.score_means == "error")
    rec["verdict"] = Verdict.SUPPORTED if supported else spec.below_threshold


#: A JSONL file of at least this many bytes is read as bytes (:class:`_ByteLines`): the quote
#: count imports numpy (~0.1 CPU-s; a small ingest imports no heavy library), which the read
#: pays back from ~250 MB (~0.3 CPU-s less per 675 MB).
BYTE_LINES_FROM = 256 << 20


class _ByteLines:
    r"""``(line, text, vouched)`` of a JSONL file's first lines, read as bytes a block at a time.

    The lines :func:`~failcodes.jsonio.jsonl_lines` gives, blank ones too (``text`` is ``""``
    where the line is vouched for: :meth:`Voucher.lines <failcodes.tracelines.Voucher.lines>`,
    one quote count a block), until a block holds a ``\r``, a line is not UTF-8 or is too
    long (none of a file under :data:`BYTE_LINES_FROM` bytes): there it stops, ``ended``
    False, for :func:`~failcodes.jsonio.jsonl_lines` to read on from the line after the last
    one given (its lines, line numbers and errors). Issue 30: the line by line read and quote
    count were ~0.3 of ~4.4 CPU-s of a paper-scale ingest.
    """

    def __init__(self, path: Path, vouch: Voucher) -> None:
        self.path, self.vouch = path, vouch
        #: Whether every line was given (False: stopped early, or not read to its end yet).
        self.ended = False

    def __iter__(self) -> Iterator[tuple[int, str, TraceLine | None]]:
        try:
            if self.path.stat().st_size < BYTE_LINES_FROM:
                return  # (numpy is not worth importing: the text reader reads it all)
        except OSError:
            return  # the text reader's error
        lineno = 0
        try:
            with check_regular_file(self.path).open("rb", buffering=0) as fh:
                for lines, quotes in byte_blocks(fh, self.path):
                    if any(map(operator.contains, lines, itertools.repeat(b"\r"))):
                        return  # a line end of the text reader's: it reads from here
                    if not lineno and lines[0].startswith(codecs.BOM_UTF8):
                        lines = [lines[0][3:], *lines[1:]]
                    vouched_lines = self.vouch.lines(lines, quotes)
                    for raw, vouched in zip(lines, vouched_lines, strict=True):
                        if vouched is not None:
                            lineno += 1
                            yield lineno, "", vouched
                            continue
                        try:
                            text = raw.decode("utf-8")
                        except UnicodeDecodeError:
                            return  # the text reader's error
                        lineno += 1
                        yield lineno, text, None
        except InputError:  # a line too long: the text reader's error (a \r may end it)
            return
        self.ended = True


class TableStream:
    """Traces of foreign tables produced one at a time; labels and notes once all are read.

    With ``lines``, a JSONL line in the trace format read with no option that changes it may
    come as a vouched line (:mod:`failcodes.tracelines`), not a model: ``ingest`` writes it
    back without building one.

    Iterating reads the tables (once, unless a (system, claim_id) may repeat); ``labels`` and
    ``notes`` are complete when the iteration has ended. ``ingest`` writes the traces as they
    come, so memory follows one trace, 8 bytes a trace for the keys
    (:class:`~failcodes.ingest.repeats.KeyHashes`) and the labels, not every trace with its
    passages; 16 bytes a sentence for its text and its verifier (:class:`_Checks`). A
    repeated key, a sentence's second text or second verifier is checked in batches: it is
    raised at the latest when the stream ends, and always before any later error of the input
    (the same first error, with the line it first appeared at, as a check row by row would
    give), so a consumer must not act on the traces before the stream has ended (``ingest``
    stages its output).
    """

    def __init__(self, paths: Iterable[Path], spec: TableSpec, *, lines: bool = False) -> None:
        spec.check()
        self.paths = list(paths)
        self.spec = spec
        self.lines = lines
        self.labels: list[Label] = []
        self.notes: list[str] = []
        #: rows left out for want of a verdict (complete when the iteration has ended)
        self.dropped = Dropped(0)
        #: rows left out by ``--option systems``, per system (known once all are read)
        self.unlisted: dict[str, int] = {}
        self._flags = _error_flag_columns(spec)
        #: the --alias words, when verdicts read by the default aliases are said in a note
        self._said = aliased_keys(spec.aliases) if spec.verdict_threshold is None else None
        #: ids from '#', the record's place, which counts from 1 in each of several files
        self._placed = INDEX_MARK in spec.column_map and len(self.paths) > 1
        self._places = {path: n for n, path in enumerate(self.paths)}
        #: sentence ids from a list's places, which count from 1 in each record
        self._listed = any(
            c != INDEX_MARK and "sentence_id" in spec.column_map[c] for c in spec.index_columns
        )
        #: records exploded into rows: a system's sentence comes from one record
        self._nested = spec.rows is not None

    def __iter__(self) -> Iterator[Trace | TraceLine]:
        tally = _Tally(RuleLabels(self.spec.label_level, same_text=not self.spec.label_scope_given))
        tally.scores.error = self.spec.score_means == "error"
        checks = _Checks()
        reasoning_columns = _sources_of("reasoning", self.spec)
        try:
            for row in self._rows(tally, lines=self.lines):
                checks.rows, checks.texted = checks.rows + 1, False
                # (a second verifier is said before its claim id's repeat)
                full = row.trace.verifier is not None and checks.verifier(row.trace)
                if checks.keys.add(_key_hash(row.trace)) or full:
                    self._confirm(checks)
                if row.trace.claim_id != row.trace.sentence_id:
                    tally.labels.claim_level()
                if row.label is not None:
                    tally.labels.add(
                        row.label,
                        row.path,
                        row.line,
                        system=row.trace.system,
                        claim=row.trace.claim,
                    )
                if row.trace.system not in tally.systems:
                    tally.new_system(row.trace.system, row.path, row.line, self.spec.systems)
                if self._placed:
                    _one_file(tally.files, row, self.spec)
                if self._nested:
                    _one_record(tally.records, row, self._places, listed=self._listed)
                if len(self.paths) > 1:
                    _sentence_in_one_file(tally.sentence_files, row, self._places)
                checks.texted = True
                if row.trace.sentence and checks.text(row.trace):
                    self._confirm(checks)
                if self.spec.verdict_threshold is not None:
                    tally.scores.add(row.trace, row.path, row.line)
                if self._flags:
                    _refuse_error_flag(row, self._flags, self.spec)
                said = self._said  # a vouched line's (row.raw empty): counted by its voucher
                word = (
                    None
                    if said is None or not row.raw
                    else alias_word(_verdict_cell(row.raw, self.spec), said)
                )
                if word:
                    tally.truths.setdefault(row.path, Counter())[word] += 1
                if row.raw and (self.spec.passage_columns or reasoning_columns):
                    _count_marks(tally, row, self.spec, reasoning_columns)
                if row.raw and len(row.trace.passages) > 2:
                    _count_unordered(tally, row)
                yield row.trace
        except InputError:
            self._confirm(checks)  # a repeated key before the bad row is the first error
            raise
        self._confirm(checks)
        self._finish(tally)

    def _rows(self, tally: _Tally, *, lines: bool = False) -> Iterator[_Row]:
        """Every row kept, as a trace (and label), in reading order; then the column checks.

        Rows without a verdict are dropped (``no_verdict="drop"``, counted in ``tally``) or
        refused. With ``lines``, a JSONL line in the trace format read with no option that
        changes it is a vouched line where :class:`~failcodes.tracelines.Voucher` takes it.
        """
        spec = self.spec
        for path in self.paths:
            header = None if spec.rows or is_document(path) else tableio.table_columns(path)
            if header is not None:
                check_header(path, header, spec)
            columns: set[str] = set(header or ())
            if lines and header is None and not is_document(path) and _as_is(spec):
                yield from self._line_rows(path, tally, columns)
            elif lines and header is not None and _as_is(spec) and _own_traces(path):
                yield from self._own_rows(path, tally, columns)
            else:
                hollow: list[tuple[int, str, dict[str, Any]]] = []
                rows = rows_of(
                    path,
                    spec.rows,
                    spec.index_columns,
                    tally.empty,
                    columns,
                    hollow,
                    spec.label_rule,
                    spec.sentence_from,
                )
                for line, where, raw in _per_system(rows, spec, path):
                    row = self._kept(path, line, where, raw, tally, columns)
                    if row is not None:
                        yield row
                for line, where, raw in hollow:
                    system = _row_system(raw, spec)
                    if spec.systems is not None and str(system) not in spec.systems:
                        continue  # left out (a listed system's row never has None)
                    if system is not None:
                        key = str(system)
                        tally.hollow_systems[key] = tally.hollow_systems.get(key, 0) + 1
                    for label in _hollow_labels(raw, spec, path, line, where):
                        tally.hollow.append((label, path, line))
            if header is None:
                _check_consumed(path, columns, spec)
            tally.columns |= columns
        if tally.count:
            _check_mapped(self.paths, tally.columns, spec)

    def _line_rows(self, path: Path, tally: _Tally, columns: set[str]) -> Iterator[_Row]:
        """The rows of a JSONL file read as it is: vouched lines, the others as records.

        A vouched line's row has no record (``raw`` is empty): only :meth:`_confirm` reads
        records, and it reads the input again without vouching.
        """
        vouch = Voucher(self.spec.aliases)
        # the lines whose verdict cell a default alias read (not a kept raw_verdict: the tool's
        # own traces, a study's parts, were said again at the merge), said with the records'
        vouch.truths = tally.truths.setdefault(path, Counter())
        given, read = 0, _ByteLines(path, vouch)  # then the text reader, after ``given``
        for line, text, vouched in read:
            given = line
            if vouched is None:
                if text.isspace():
                    continue
                row = self._record_row(path, line, text, tally, columns)
                if row is not None:
                    yield row
                continue
            tally.count += 1
            yield _Row(vouched, None, {}, path, line, "")
        if read.ended:
            return
        for line, text in jsonl_lines(path):
            if line <= given:
                continue
            vouched = vouch(text)
            if vouched is not None:
                tally.count += 1
                yield _Row(vouched, None, {}, path, line, "")
                continue
            row = self._record_row(path, line, text, tally, columns)
            if row is not None:
                yield row

    def _own_rows(self, path: Path, tally: _Tally, columns: set[str]) -> Iterator[_Row]:
        """The rows of the tool's own Parquet traces: vouched structs, the others as records.

        A study's parts merged from the tool's Parquet went row by row through the generic
        reader (a model per trace, then dumped again): 3.9x the merge of the same parts as
        JSONL, whose lines the voucher takes (bench/bench_study_parts.py). A row becomes the
        struct msgspec decodes from the same trace as a JSON line (:func:`msgspec.convert`,
        as :func:`failcodes.columnar.gather_runs` reads such rows): ids neither blank nor
        padded, ranks unique, a verdict the aliases know; anything else (a file edited by
        another tool that kept the footer) takes the exact reader's steps and errors.
        """
        import msgspec

        vouch = Voucher(self.spec.aliases)
        vouch.truths = tally.truths.setdefault(path, Counter())
        convert, kind, refused = msgspec.convert, vouch.type, msgspec.ValidationError
        for line, record in tableio.checked_parquet_rows(path, None, (), {}):
            try:
                rec = convert(record, kind)
            except refused:
                rec = None
            vouched = None if rec is None or vouch.keys(rec) is None else vouch.finish(rec)
            if vouched is None:
                row = self._kept(path, line, "", tableio.drop_nones(record), tally, columns)
                if row is not None:
                    yield row
                continue
            tally.count += 1
            yield _Row(vouched, None, {}, path, line, "")

    def _record_row(
        self, path: Path, line: int, text: str, tally: _Tally, columns: set[str]
    ) -> _Row | None:
        """A JSONL line no voucher took, read as :func:`rows_of` reads it."""
        record = tableio.drop_nones(jsonl_object(text, path, line))
        columns.update(record)
        return self._kept(path, line, "", record, tally, columns)

    def _kept(
        self,
        path: Path,
        line: int,
        where: str,
        raw: dict[str, Any],
        tally: _Tally,
        columns: set[str],
    ) -> _Row | None:
        """One row as a trace (and label); None if it has no verdict and such rows drop."""
        spec = self.spec
        if spec.systems is not None:  # a gold key beside the answers: left out, counted
            system = _row_system(raw, spec)
            if system is not None and str(system) not in spec.systems:
                tally.unlisted[str(system)] = tally.unlisted.get(str(system), 0) + 1
                return None
        if _no_verdict(raw, spec):
            claimless = _claimless(raw, spec, columns)
            if spec.no_verdict == "drop":
                tally.unverdicted += 1
                tally.claimless += claimless
                if tally.first_unverdicted is None:
                    tally.first_unverdicted = line
                system = _row_system(raw, spec)
                if system is not None:
                    tally.dropped[str(system)] = tally.dropped.get(str(system), 0) + 1
                return None
            reason = CLAIMLESS if claimless else _no_verdict_reason(raw, spec, columns)
            error = InputError(reason, path=path, line=line, field="verdict")
            raise _in_row(_verdict_column(error, raw, spec), where)
        _ids_given_alike(raw, spec, tally, path, line)
        try:
            trace, label = _row(raw, spec, path, line, where, tally)
        except InputError as exc:
            raise _in_row(_verdict_column(exc, raw, spec), where) from None
        if spec.ids == "line" and trace.claim_id == f"L{line}" and not where:
            _one_row_a_line(tally, raw, path, line, spec.duplicates == "keep")
        if not tally.id_given[(path, "sentence_id")][0]:
            lined = spec.ids == "line" and spec.duplicates != "keep"
            _one_sentence_one_id(tally.made_ids, trace, path, line, where, lined=lined)
        if trace.claim == trace.sentence and _claimless(raw, spec, columns):
            # a blank claim cell beside a claim column: the sentence's text, said (_finish)
            tally.sentence_claims += 1
            tally.first_sentence_claim = tally.first_sentence_claim or (path, line)
        tally.count += 1
        return _Row(trace, label, raw, path, line, where)

    def _confirm(self, checks: _Checks) -> None:
        """Raise the first repeated key, second verifier or second text of the rows so far.

        A repeated (system, claim_id), a sentence's verifier or text other than its first.
        Only when a hash says one may be there: the input is read again up to the last row
        checked, running the checks row by row on those keys alone (:func:`_one_verifier`,
        :func:`_claim_once`, :func:`_one_text`, in the stream's order), so the error names the
        first row at fault and where its key first appeared, as a check row by row would.
        """
        repeats, texts = checks.keys.settle(), checks.texts.settle()
        verifiers = checks.verifiers.settle()
        if not (repeats or texts or verifiers):
            return
        seen: dict[tuple[str, str], tuple[Path, int]] = {}
        firsts: dict[tuple[str, str], Trace] = {}
        text_of: dict[int, int] = {}
        verifier_of: dict[int, int] = {}
        read = 0
        for row in self._rows(_Tally(RuleLabels("sentence"))):
            trace = row.trace
            sentence = _sentence_hash(trace) if texts or verifiers else 0
            if trace.verifier is not None and sentence in verifiers:
                _one_verifier(verifier_of, row, self.spec)
            if _key_hash(trace) in repeats:
                firsts.setdefault((trace.system, trace.claim_id), trace)
                _claim_once(seen, row, self.spec, firsts)
            read += 1
            if read == checks.rows and not checks.texted:
                return  # (the last row's text was not checked yet)
            if trace.sentence and sentence in texts:
                _one_text(text_of, row)
            if read == checks.rows:
                return  # different keys sharing a hash: nothing repeats
        what = (
            "a (system, claim_id) may repeat"
            if repeats
            else "a sentence may have a second text or verifier"
        )
        raise InputError(  # a file changed (or a pipe) under the stream
            f"{what}, but reading the input again gave {read:,} "
            f"rows, not {checks.rows:,}: did a file change while it was read?",
            path=", ".join(str(p) for p in self.paths),
        )

    def _finish(self, tally: _Tally) -> None:
        count, empty = tally.count, tally.empty[0]
        if not count and (tally.unverdicted or empty):
            where = ", ".join(str(p) for p in self.paths)
            if tally.unverdicted:
                raise InputError(
                    f"no traces: every row ({tally.unverdicted:,}) has no verdict, and --option "
                    "no_verdict=drop left each out (is the verdict column the right one?)",
                    path=where,
                )
            assert self.spec.rows is not None
            raise InputError(
                f"no rows: the lists of --option rows={self.spec.rows.text} are missing or "
                f"empty in every record ({empty:,}); are the keys those of the file?",
                path=where,
            )
        # a system whose every claims list is empty has no row: the footer carries it too
        hollow = {s: n for s, n in tally.hollow_systems.items() if s not in tally.systems}
        own = Dropped(tally.unverdicted, count, dict(tally.dropped), hollow)
        # a study's merge of parts: each part's record of rows it left out is carried on
        self.dropped = carried(own, self.paths, tally.systems)
        self.unlisted = tally.unlisted
        # (a listed system whose every row lacks a verdict has rows: said below when dropped)
        seen = tally.systems | set(tally.dropped)
        absent = sorted((self.spec.systems or frozenset()) - seen)
        if absent:  # a typo in the list would leave out the system it meant, unsaid
            have = ", ".join(sorted(seen | set(tally.unlisted))[:12])
            raise InputError(
                f"--option systems names {', '.join(map(repr, absent))}, which no row has "
                f"(the rows' systems: {have})",
                path=", ".join(str(p) for p in self.paths),
                field="system",
            )
        given = self.spec.system
        if given is not None and given in tally.systems and len(tally.systems) > 1:
            # --system names the system of rows without one: on a table whose every row
            # names its own (a blank among them is refused), --system A kept B's rows too,
            # written beside A's with exit 0, as if it chose A
            have = ", ".join(sorted(tally.systems)[:12])
            raise ConfigError(
                f"--system {given!r} names the system of rows that give none, but every row "
                f"names its own ({have}), so it chose none of them: give --option "
                f"systems={given} to read the rows of {given!r} alone, or drop --system to keep "
                "every system's"
            )
        if tally.unverdicted:
            # per system: a system that lost every row (a verdict column left empty: the
            # verifier failed on all) vanished from every output with this note alone
            by_system = ", ".join(f"{s} {n:,}" for s, n in sorted(tally.dropped.items()))
            self.notes.append(
                f"{tally.unverdicted:,} row(s) without a verdict left out (first at line "
                f"{tally.first_unverdicted}; --option no_verdict=drop"
                + (f"; {by_system}" if by_system else "")
                + "): their claims count in no metric"
                + (
                    f"; {tally.claimless:,} of them give no claim either (sentences without "
                    "claims?): no label of theirs is written, so they count in no metric, "
                    f"where metrics count a labelled sentence without claims as no error "
                    f"flagged; {LABELS_APART}"
                    if tally.claimless
                    else ""
                )
                + (
                    "; a sentence left with no claim of one system, its shared label kept by "
                    "another system's row, counts for the first as one it made no claim for "
                    "(metrics' default: no error flagged, an FN where the label is an error), "
                    "while one every system's row of which was dropped has no label and counts "
                    "for none: metrics --without-claims exclude leaves the first out too"
                    if self.spec.label_rule is not None
                    and self.spec.label_scope != "system"
                    and len(tally.systems | set(tally.dropped)) > 1
                    else ""
                )
            )
            gone = sorted(set(tally.dropped) - tally.systems)
            if gone:
                self.notes.append(
                    f"system(s) with no verdict on any row, so no trace and in no output: "
                    f"{', '.join(gone)}"
                )
        left_out = _left_out(tally.columns, self.spec)
        if left_out:  # a rater or consensus column beside the verdicts went with no word
            shown = ", ".join(left_out[:12]) + (", ..." if len(left_out) > 12 else "")
            self.notes.append(
                f"--option unmapped=drop left out {len(left_out):,} column(s) no field or "
                f"option reads: {shown}"
            )
        if tally.first_marked is not None:
            marked_path, marked_line = tally.first_marked
            self.notes.append(
                f"{tally.marked:,} passage cell(s) holding a missing mark (NA, N/A, #N/A, nan, "
                f"null, None or -; first at {marked_path}:{marked_line}) read as no passage, as "
                "a blank cell is: the retriever found nothing there"
            )
        self.notes.extend(tally.objects.lines())  # (passage objects, records: no cells)
        if tally.first_sentence_claim is not None:
            # a sentence table's default (no claim column) was taken cell by cell, unsaid:
            # the judge coded passages and reasoning against the whole sentence
            blank_path, at = tally.first_sentence_claim
            self.notes.append(
                f"{tally.sentence_claims:,} claim(s) whose claim cell is blank (first at "
                f"{blank_path}:{at}) read as their sentence's text, as a table without a claim "
                "column is: the verdict and the judge's codes are of the whole sentence there; "
                "if the pipeline checked claims of it, give their texts"
            )
        if tally.first_unordered is not None:
            unordered_path, at, shown = tally.first_unordered
            self.notes.append(
                f"{tally.unordered:,} row(s) whose passages' scores follow no order of their "
                f"ranks (first at {unordered_path}:{at}, scores by rank {shown}): ranked as "
                "given, or by "
                "their place in the list; if the scores rank them (a list written unsorted), "
                "give each passage its rank"
            )
        if tally.first_reasoned is not None:
            marked_path, marked_line = tally.first_reasoned
            self.notes.append(
                f"{tally.reasoned:,} reasoning cell(s) holding a missing mark (first at "
                f"{marked_path}:{marked_line}) read as no reasoning: judge reasoning has none "
                "of theirs to code"
            )
        for path, truths in tally.truths.items():  # a detector's "true: hallucinated"
            # read as supported, unsaid; named by its file: three inputs' notes read alike
            if +truths:
                self.notes.append(f"{path}: {truths_line(truths)}")
        threshold = self.spec.verdict_threshold
        if threshold is not None and tally.scores.count:
            tally.scores.past_one(threshold, self.paths)
            self.notes.append(tally.scores.note(threshold, self.spec.below_threshold))
        absent = sorted(set(self.spec.declared_verdicts) - {"*"} - tally.systems)
        if absent:  # a study passes its pipelines' verdicts to each of its ingests
            self.notes.append(f"--verdict names system(s) with no row here: {', '.join(absent)}")
        if empty:
            self.notes.append(
                f"{empty:,} list(s) or object(s) on the rows path missing or empty: no rows "
                "from them"
            )
            # a system whose every answer has an empty claims list (answers keyed by
            # system) vanished from every output with the count above alone
            hollow_only = sorted(set(tally.hollow_systems) - tally.systems)
            if hollow_only:
                shown = ", ".join(f"{s} ({tally.hollow_systems[s]:,})" for s in hollow_only)
                self.notes.append(
                    f"system(s) whose every claims list is empty, so no trace and in no "
                    f"output: {shown}"
                )
        rule = self.spec.label_rule
        if rule is not None and tally.hollow:
            # labelled sentences whose claims list is empty: without their labels, metrics
            # never saw them, so an error there was no miss (recall 3/8 where it is 3/11)
            kept = 0
            for label, path, line in tally.hollow:
                kept += tally.labels.add_sentence(label, path, line)
            errors = sum(lb.has_error for lb, _, _ in tally.hollow)
            self.notes.append(
                f"{len(tally.hollow):,} labelled sentence(s) with an empty claims list "
                f"({errors:,} with an error): "
                + (
                    "labels written, so metrics count them as sentences without claims "
                    "(--without-claims)"
                    if kept
                    else "labels per claim (a claim id differs from its sentence's), so no "
                    "label of theirs is written and they count in no metric; --option "
                    "label_level=sentence labels sentences"
                )
            )
        if rule is not None:
            level = tally.labels.level
            self.labels = tally.labels.settle(rule.column)
            n_skipped = count - tally.labels.rows
            self.notes.append(
                f"label rule {rule.text!r}: {sum(lb.has_error for lb in self.labels):,} "
                f"error / {sum(not lb.has_error for lb in self.labels):,} no-error {level} "
                f"labels" + (f", {n_skipped:,} row(s) skipped" if n_skipped else "")
            )
            self.notes.extend(rule.notes())
            # every row labelled (none skipped or dropped): a number no label has, no row has
            gaps = None if n_skipped or tally.unverdicted else numbering_gaps(self.labels)
            if gaps is not None:
                self.notes.append(gaps)


def refuse_correct_as_error(
    renames: Mapping[str, str], path: Path, spec: TableSpec | None = None
) -> None:
    """Refuse ``--map is_correct=has_error``: a column whose true marks no error.

    ``has_error`` reads true as an error: every correct sentence was labelled an error and
    every wrong one not (TP 0, FP 2, FN 2, TN 0 for TP 2, TN 2), exit 0. The rule it names
    spells false as the column does (``= 0`` on 1/0: ``= false`` was refused, no row has it);
    ``spec`` says how to read ``path``'s rows (None: as a plain table).
    """
    for column, target in renames.items():
        if target == "has_error" and judges_a_verdict(column):  # the rule below, not its way
            raise InputError(
                f"--map {column}={target}: the column's name says it judges the pipeline's "
                "verdict (right or wrong), not the sentence: has_error is the clinicians' "
                "truth, an error where a right verdict flagged one or a wrong one flagged "
                "none; give a column of that truth",
                path=path,
                line=1,
                field=column,
            )
        stage = judged_stage(column) if target == "has_error" else None
        if stage is not None:
            raise InputError(
                f"--map {column}={target}: the column's name says it judges the pipeline's "
                f"{stage} (right or wrong, relevant or not), not the sentence: has_error is "
                "the clinicians' truth, which a stage's judgement does not give; give a "
                "column of that truth (rename the column if it is one)",
                path=path,
                line=1,
                field=column,
            )
        if target == "has_error" and (says_correct(column) or names_absent_error(column)):
            false, words = _false_in(path, spec, column)
            way = (
                f"'{column} = {false} -> error' instead (or, if true marks an error, rename "
                "the column)"
                if false is not None or not words
                else f"'{column} = VALUE -> error' naming the value that marks an error (its "
                f"values: {', '.join(repr(w) for w in words)})"
            )
            raise InputError(
                f"--map {column}={target}: the column's name says true means correct (no "
                f"error), but has_error reads true as an error; give --label-rule {way}",
                path=path,
                line=1,
                field=column,
            )


#: Rows :func:`_false_in` reads for a column's false before naming ``false``.
_FALSE_ROWS = 10_000


def _false_in(path: Path, spec: TableSpec | None, column: str) -> tuple[str | None, list[str]]:
    """How ``column`` of ``path`` writes false (its first such value), and its other words.

    ``(None, words)`` where the rows hold values that spell no truth value (``correct``,
    ``incorrect``: ``= false`` named there matched no row, every sentence no error, exit 0
    with a note); ``("false", [])`` where the rows read say neither.
    """
    rows = spec.rows if spec is not None else None
    index = spec.index_columns if spec is not None else frozenset()
    words: list[str] = []
    with contextlib.suppress(InputError):  # an unreadable file is refused as it is read
        for _, _, raw in itertools.islice(rows_of(path, rows, index, [0]), _FALSE_ROWS):
            value = raw.get(column, "")
            written = false_as_written(value)
            if written is not None:
                return written, []
            text = str(value).strip()
            if text and not spells_truth(value) and text not in words and len(words) < 6:
                words.append(text)
    return (None, words) if words else ("false", [])


def _read_by_column(aliases: Mapping[str, Verdict]) -> bool:
    """Whether an ``--alias`` names a value whose meaning is its column's: true/false, yes/no, 1/0.

    ``--alias 1=supported`` reads a 1 as supported in every ``--verdict-column``; a column
    whose 1 flags a hallucination is then read backwards. A verdict's word (``Not
    Supported=refuted``) means the same in every column.
    """
    for key in aliased_keys(aliases):
        if key in _TRUTH_WORDS or key.lstrip("+-").replace(".", "", 1).isdigit():
            return True
    return False


#: Words whose meaning (the claim holds, or an error) is the column's, as a number's is.
_TRUTH_WORDS = frozenset({"true", "false", "yes", "no", "y", "n", "t", "f"})


def _one_score_direction(columns: Sequence[str], *, by_alias: bool = False) -> None:
    """Refuse score columns named in opposite directions under one threshold (ConfigError).

    ``--option score_means`` and ``verdict_threshold`` apply to every ``--verdict-column``:
    ``minicheck_support`` beside ``selfcheck_hallucination`` read with ``score_means=error``
    (the refusal of the second named it) took minicheck's high support as errors (TP 0, FP 2,
    FN 2, TN 0 for TP 2, TN 2, exit 0); read as support, the other way round. ``by_alias``:
    so does an ``--alias`` of true/false or a code (:func:`_read_by_column`): ``--alias
    true=refuted --alias false=supported``, the way the refusal of ``selfcheck_hallucination``'s
    true/false names, read ``minicheck_support``'s true as refuted (TP 0, FP 2, FN 2, TN 0 for
    TP 2, TN 2, exit 0); ``--alias 1=supported --alias 0=refuted`` on 0/1 codes the other
    column so.
    """
    errors = [c for c in columns if ERROR_FLAG.search(c)]
    support = [
        c
        for c in columns
        if not ERROR_FLAG.search(c) and (CORRECT_FLAG.search(c) or "entail" in c.lower())
    ]
    if errors and support and by_alias:
        raise ConfigError(
            f"--verdict-column {errors[0]!r} is named as an error flag and {support[0]!r} as "
            "a support one, but --alias reads true/false (or a code: 1, 0) the same way in "
            "every column (one of the two would be read backwards): ingest each system apart, "
            "each with its own --alias, and give the trace files together"
        )
    if errors and support:
        raise ConfigError(
            f"--verdict-column {errors[0]!r} is named as an error score and {support[0]!r} as "
            "a support score, but --option verdict_threshold and score_means read every "
            "column one way (one of the two would be read backwards): ingest each system "
            "apart, each with its own --option score_means, and give the trace files together"
        )


def _error_flag_columns(spec: TableSpec) -> dict[str | None, str]:
    """The verdict columns named as error flags, by system (None: every row's column).

    Empty when ``--alias`` says what true or false means or, for scores, ``--option
    score_means`` what a high one means.
    """
    if spec.verdict_threshold is not None and spec.score_means is not None:
        return {}
    if {"true", "false"} & aliased_keys(spec.aliases):  # --alias says what true/false mean
        return {}
    out: dict[str | None, str] = {}
    for src, targets in spec.column_map.items():  # (one column is mapped to the verdict)
        if "verdict" in targets and ERROR_FLAG.search(src):
            out[None] = src
    out.update((system, col) for col, system in spec.verdict_columns if ERROR_FLAG.search(col))
    return out


def _refuse_error_flag(row: _Row, flags: Mapping[str | None, str], spec: TableSpec) -> None:
    """Refuse a true/false verdict or a score read from a column named as an error flag.

    The default aliases read true as supported, false as refuted (a verifier's "the claim is
    true"). From ``is_hallucination`` that is backwards: every flagged claim read as
    supported and every clean one as refuted (TP 0, FP 2, FN 2, TN 0 for TP 2, TN 2), exit 0.
    So is a score at or above ``--option verdict_threshold`` read as supported from
    ``hallucination_score``.
    """
    column = flags.get(row.trace.system, flags.get(None))
    if column is None:
        return
    if spec.verdict_threshold is not None:
        raise InputError(
            f"column {column!r} holds scores read as support (at or above "
            f"{spec.verdict_threshold:g}: supported), but its name says a high score marks an "
            "error: give --option score_means=error (or score_means=support if a high score "
            "means the claim holds)"
            + (
                "; it applies to every --verdict-column: if another's high score means "
                "support, ingest each system apart"
                if len(spec.verdict_columns) > 1
                else ""
            ),
            path=row.path,
            line=row.line,
            field=column,
        )
    if str(row.trace.raw_verdict).strip().casefold() not in ("true", "false"):
        return
    raise InputError(
        f"column {column!r} holds true/false, which read as supported/refuted (true: the "
        "claim holds), but its name says true marks an error: give --alias true=refuted "
        "--alias false=supported (or no_evidence for true), or, if true means the claim "
        "holds, --alias true=supported --alias false=refuted"
        + (
            "; --alias applies to every --verdict-column: if another's true means the claim "
            "holds, ingest each system apart"
            if len(spec.verdict_columns) > 1
            else ""
        ),
        path=row.path,
        line=row.line,
        field=column,
    )


@dataclass
class _Row:
    """One row of a table as a trace (and its label), with where it was read."""

    trace: Trace | TraceLine
    label: Label | None
    raw: Mapping[str, Any]
    path: Path
    line: int
    where: str


@dataclass
class _Scores:
    """How the support scores fell about ``--option verdict_threshold``, and their range.

    Scores of 0-100 (a percentage) read with a threshold of 0.5 made every claim supported
    with no word: the note gives the split and the range, so a threshold off the scores'
    scale shows.
    """

    count: int = 0
    above: int = 0
    low: float = math.inf
    high: float = -math.inf
    #: Each system's own (--verdict-column: verifiers whose scores may be on other scales).
    systems: dict[str, _Scores] = field(default_factory=dict)
    #: A high score marks an error (``--option score_means=error``): above is unsupported.
    error: bool = False
    #: Where the first score past 1 was read (file, line): see :meth:`past_one`.
    first_past: tuple[Path, int] | None = None

    def add(self, trace: Trace | TraceLine, path: Path, line: int) -> None:
        """Count one trace whose verdict came from its score (kept as its raw verdict)."""
        self.systems.setdefault(trace.system, _Scores(error=self.error)).count_one(
            trace, path, line
        )
        self.count_one(trace, path, line)

    def count_one(self, trace: Trace | TraceLine, path: Path, line: int) -> None:
        """Count one trace in this tally alone."""
        self.count += 1
        self.above += (trace.verdict == Verdict.SUPPORTED) != self.error
        score = _score_of(str(trace.raw_verdict))  # (None: a raw_verdict column of its own)
        if score is not None:
            self.low, self.high = min(self.low, score), max(self.high, score)
            if score > 1 and self.first_past is None:
                self.first_past = (path, line)

    def past_one(self, threshold: float, paths: Sequence[Path]) -> None:
        """Refuse a system's scores of 0 and up past 1 read with a threshold of at most 1.

        A threshold of 0.5 is a share of 1 (a probability); scores from 0 to 88 are a
        percentage (or a 1-5 scale): 88, 64 and 12 read as supported, 0 alone not (TP 1,
        FN 1, TN 2 for TP 2, TN 2 at 50, exit 0, said only in the note's range; beside a
        verifier's 0-1 scores it read as a split). Scores below 0 (logits) are left alone.
        """
        if not 0 < threshold <= 1:
            return
        for name, one in sorted(self.systems.items()):
            if one.first_past is None or one.low < 0:
                continue
            path, line = one.first_past
            side = "the error side" if self.error else "supported"
            raise InputError(
                f"system {name!r}: scores from {one.low:g} to {one.high:g}, past 1, where "
                f"--option verdict_threshold={threshold:g} is a share of 1 (a percentage or a "
                f"1-5 scale read so put {one.above:,} of {one.count:,} at or above it, "
                f"{side}): give the threshold on these scores' scale (verdict_threshold=50 "
                "for percentages), ingesting a system whose scores are shares of 1 apart with "
                "its own, or write the scores as shares (0.85, or 85%)",
                path=path if len(paths) > 1 else paths[0],
                line=line,
                field="verdict",
            )

    def note(self, threshold: float, below: Verdict) -> str:
        """The note: how many scores at or above the threshold, how many below, the range."""
        high, low = (below.value, "supported") if self.error else ("supported", below.value)
        text = (
            f"--option verdict_threshold={threshold:g}: {self.above:,} of {self.count:,} "
            f"scores at or above it ({high}), {self.count - self.above:,} below ({low})"
        )
        if self.low <= self.high:
            text += f"; the scores run from {self.low:g} to {self.high:g}"
        if self.above in (0, self.count):
            text += ": every score on one side (is the threshold on the scores' scale?)"
        elif len(self.systems) > 1:  # 0-1 and 0-100 scores pooled: 6 of 8 read as a split
            text += "; per system: " + "; ".join(
                f"{name} {s.above:,} of {s.count:,} at or above ({s.spread()})"
                for name, s in sorted(self.systems.items())
            )
        return text

    def spread(self) -> str:
        """One system's range, and whether its scores all fell on one side."""
        parts = [f"from {self.low:g} to {self.high:g}"] if self.low <= self.high else []
        if self.above in (0, self.count):
            parts.append("every score on one side, is the threshold on its scores' scale?")
        return ": ".join(parts) or "no score read"


@dataclass
class _Tally:
    """What the rows of a :class:`TableStream` leave for its labels and notes."""

    labels: RuleLabels
    count: int = 0
    runs: RunColumns = field(default_factory=RunColumns)
    empty: list[int] = field(default_factory=lambda: [0])
    unverdicted: int = 0
    first_unverdicted: int | None = None
    #: rows left out for want of a verdict, per system
    dropped: dict[str, int] = field(default_factory=dict)
    systems: set[str] = field(default_factory=set)
    #: labels of the sentences whose claims list is empty (nested rows), where they were read
    hollow: list[tuple[Label, Path, int]] = field(default_factory=list)
    #: empty claims lists (nested rows) per system
    hollow_systems: dict[str, int] = field(default_factory=dict)
    #: Each system's name folded (case, spacing, Unicode form) -> (name, file, line).
    folded: dict[str, tuple[str, Path, int]] = field(default_factory=dict)
    #: the support scores read as verdicts (``--option verdict_threshold``)
    scores: _Scores = field(default_factory=lambda: _Scores())
    #: every column of the rows read (JSONL lines read as they are add none)
    columns: set[str] = field(default_factory=set)
    #: rows whose verdict a default alias read, per input file and alias word (true/false:
    #: a direction)
    truths: dict[Path, Counter[str]] = field(default_factory=dict)
    #: rows left out as their system's is not among ``--option systems``, per system
    unlisted: dict[str, int] = field(default_factory=dict)
    #: each system's first file, when '#' (counted per file) fills an id
    files: dict[str, Path] = field(default_factory=dict)
    #: the file (its place) each (system, sentence) was first read from, by the pair's hash,
    #: when several are read (120,000 sentences in 3 files: peak 97 -> 108 MB)
    sentence_files: dict[int, int] = field(default_factory=dict)
    #: per file and id field a row may leave to its default (sentence_id, question_id):
    #: whether the file's first row gave it, and its line (:func:`_ids_given_alike`)
    id_given: dict[tuple[Path, str], tuple[bool, int]] = field(default_factory=dict)
    #: the record (file place, line) each (system, question, sentence) was first read from,
    #: by its hash, when records are exploded into rows
    records: dict[int, tuple[int, int, str]] = field(default_factory=dict)
    #: with ``--option ids=line``: each row's content (file, cells) by its hash -> its line
    contents: dict[str, int] = field(default_factory=dict)
    #: rows left out for want of a verdict that give no claim either
    claimless: int = 0
    #: with ``--option ids=line``: the file and line of the row read last
    last_line: tuple[Path, int] | None = None
    #: passage objects and records' reasonings holding a missing mark, read as none
    objects: Marks = field(default_factory=Marks)
    #: passage cells holding a missing mark, read as no passage, and the first one's line
    marked: int = 0
    first_marked: tuple[Path, int] | None = None
    last_marked: tuple[Path, int] | None = None
    #: rows whose reasoning cell holds a missing mark, read as no reasoning, and the first
    last_objects: tuple[Path, int] | None = None  # (passage objects: see _row)
    reasoned: int = 0
    first_reasoned: tuple[Path, int] | None = None
    #: traces whose claim cell is blank beside a claim column, read as their sentence's
    #: text (``claim`` defaults to ``sentence``), and the first one's line
    sentence_claims: int = 0
    first_sentence_claim: tuple[Path, int] | None = None
    #: rows whose passages' scores follow no order of their ranks, and the first (its scores)
    unordered: int = 0
    first_unordered: tuple[Path, int, str] | None = None
    #: sentence ids the tool made (no column gives one), by the hash of (system, question,
    #: sentence text) of a claim row: the id and its line (:func:`_one_sentence_one_id`)
    made_ids: dict[int, tuple[str, int]] = field(default_factory=dict)

    def new_system(
        self, system: str, path: Path, line: int, listed: frozenset[str] | None = None
    ) -> None:
        """Add a system first seen at ``path:line`` (:func:`check_system_name`)."""
        check_system_name(self.folded, system, path, line, listed)
        self.systems.add(system)


#: The way past a system named like the reference, in a table's rows.
_REFERENCE_REMEDY = (
    "give the reference as labels (--label-rule on its column), or name the systems with "
    "--option systems=A,B (the others' rows are left out; name it to keep it)"
)


def check_system_name(
    folded: dict[str, tuple[str, Path, int]],
    system: str,
    path: Path,
    line: int,
    listed: frozenset[str] | None = None,
    remedy: str = _REFERENCE_REMEDY,
) -> None:
    """Refuse another spelling of a known system, or one named like the reference.

    ``folded``: each system's name folded (case, spacing, Unicode form) -> (name, file, line).
    ``GPT-4`` and ``gpt-4`` (keys of two records' answers) were two systems, each scored
    on part of the answers, with exit 0. Refused too, without ``listed`` (``--option
    systems``, whose others' rows are left out before), one named like the reference or
    a consensus (a ``gold`` key beside the answers, ``--verdict-column gold``), which
    metrics scored as one more system (a perfect pipeline's row) with no word.
    """
    from failcodes.stats.summaries import reference_reason

    why = None if listed is not None else reference_reason(system)
    if why is not None:
        raise InputError(
            f"system {system!r} is named like the reference or a consensus of the "
            f"systems ({why}): metrics would score it as one more system; {remedy}",
            path=path,
            line=line,
            field="system",
        )
    key = name_key(system)
    first = folded.setdefault(key, (system, path, line))
    if first[0] != system:
        raise InputError(
            f"system {system!r} is {first[0]!r} ({first[1]}:{first[2]}) written another "
            f"way ({two_ways(system, first[0])}): it would be scored as a system of its "
            "own; write it one way",
            path=path,
            line=line,
            field="system",
        )


def _own_traces(path: Path) -> bool:
    """Whether ``path`` is the tool's own Parquet traces: its marker, its rows as the footer's.

    Told from the footer (:func:`failcodes.engine.marker_holds`); a file the tool did not
    write, one whose rows no longer number the marker's, or whose footer is not the one its
    marker was sealed in, is read as any table.
    """
    from failcodes.engine import marker_holds, may_be_validated
    from failcodes.parquetio import open_parquet

    if not may_be_validated(path):
        return False
    meta = open_parquet(path).metadata
    return marker_holds(path, meta.metadata, meta.num_rows)


def _as_is(spec: TableSpec) -> bool:
    """Whether ``spec`` reads a trace-format row as it is (no option changes a complete one).

    ``ids``, ``unmapped`` and ``no_verdict`` only act on rows that lack a field or have an
    unknown one, which the voucher leaves to the exact reader.
    """
    return not (
        spec.column_map
        or spec.passage_columns
        or spec.label_rule is not None
        or spec.verifier is not None
        or spec.retriever is not None
        or spec.sentence_ids != "global"
        or spec.rows is not None
        or spec.verdict_threshold is not None
        or spec.verdict_columns
        or spec.declared_verdicts
        or spec.systems is not None
    )


def _key_hash(trace: Trace | TraceLine) -> int:
    return hash((trace.system, trace.claim_id))


def _sentence_hash(trace: Trace | TraceLine) -> int:
    return hash((trace.system, trace.question_id, trace.sentence_id))


@dataclass
class _Checks:
    """The stream's checks of every row against the rows before it, kept as hashes.

    Each (system, claim_id) once (8 bytes a row); each (system, question, sentence) with one
    text, up to :func:`spelling_key`, and one verifier (16 bytes a sentence each: recorded
    once per run of rows of one sentence with one text or verifier, the folded text computed
    once a run). Only a hash that says a row may be at fault sends :meth:`TableStream._confirm`
    back over the input for the rows themselves. A dict of each sentence's hashes and line
    (:func:`_one_text`, :func:`_one_verifier` row by row) held ~220 bytes a sentence for the
    whole file: 366 MB peak for the traces at 10x paper scale, 2.02x its 1x peak (issue 30).
    """

    keys: KeyHashes = field(default_factory=KeyHashes)
    texts: KeyValues = field(default_factory=KeyValues)
    verifiers: KeyValues = field(default_factory=KeyValues)
    #: rows read so far; whether the last one's text was checked (recorded) yet
    rows: int = 0
    texted: bool = False
    last_text: tuple[object, ...] = ()
    last_verifier: tuple[object, ...] = ()

    def text(self, trace: Trace | TraceLine) -> bool:
        """Record the sentence's text (once a run); True when a batch is full."""
        run = (trace.system, trace.question_id, trace.sentence_id, trace.sentence)
        if run == self.last_text:
            return False
        self.last_text = run
        return self.texts.add(hash(run[:3]), hash(spelling_key(trace.sentence or "")))

    def verifier(self, trace: Trace | TraceLine) -> bool:
        """Record the sentence's verifier (once a run); True when a batch is full."""
        run = (trace.system, trace.question_id, trace.sentence_id, trace.verifier)
        if run == self.last_verifier:
            return False
        self.last_verifier = run
        return self.verifiers.add(hash(run[:3]), hash(trace.verifier))


def _one_row_a_line(
    tally: _Tally, raw: Mapping[str, Any], path: Path, line: int, keep: bool
) -> None:
    """Refuse a row on the line of the row before it, or repeating an earlier row (``ids=line``).

    Each row is a sentence of its own under ``ids=line``: a row the export wrote twice was
    a second sentence, counted again (TP 1, TN 2, FP 1 for TP 1, TN 1, FP 1, exit 0);
    ``keep`` keeps those. A JSON list written on one line (pandas' ``to_json(orient=
    "records")``) gave every record the id ``L1``: refused as a repeated claim id, with no
    way through named.
    """
    if tally.last_line == (path, line):
        raise InputError(
            "a second record starts on this line (a JSON list written on one line, as pandas' "
            "to_json writes it): --option ids=line numbers the rows by their line; number "
            "them by their place in the list with --map '#=sentence_id' instead",
            path=path,
            line=line,
        )
    tally.last_line = (path, line)
    if keep:
        return
    key = content_hash([str(path), sorted((k, repr(v)) for k, v in raw.items())])
    first = tally.contents.setdefault(key, line)
    if first != line:
        raise InputError(
            f"the row repeats line {first} cell for cell: with --option ids=line each row is a "
            "sentence of its own, so this one would count twice (a row the export copied?); "
            "delete the copy, or, if the answer says it twice, give each row its sentence id "
            "(a sentence_id column); rows a published data set holds twice: --option "
            "duplicates=keep keeps each as a sentence of its own",
            path=path,
            line=line,
        )


#: Ids a row may leave out, each then filled from another (``sentence_id`` from the claim id,
#: ``question_id`` from the sentence id): what one row leaves out, every row must.
_DEFAULTED_IDS = ("sentence_id", "question_id")


def _ids_given_alike(
    raw: Mapping[str, Any], spec: TableSpec, tally: _Tally, path: Path, line: int
) -> None:
    """Refuse a row that gives a defaulted id where its file's first row did not, or the reverse.

    A sheet that names each sentence on its first claim's row alone (the rows under it left
    blank, as a reader fills down by eye) made each blank row's claim a sentence of its own:
    its verdict left its sentence (a refuted claim of an error sentence: TP 0, FN 1 for TP 1,
    exit 0, no word); a blank question cell made its row a question (a cluster) of its own.
    """
    if not raw:  # a JSONL line read as it is (vouched): a trace, every id given
        return
    # a --system constant is a default too: a system column filled on its first rows alone
    # made the blank rows that system's, its claims scored as another system's, exit 0
    for name in (*_DEFAULTED_IDS, "system") if spec.system is not None else _DEFAULTED_IDS:
        gives = any(
            name in ((key,) if spec.column_map.get(key) is None else spec.column_map[key])
            for key, value in raw.items()
            if value is not None and not (isinstance(value, str) and not value.strip())
        )
        first = tally.id_given.setdefault((path, name), (gives, line))
        if first[0] == gives:
            continue
        had, at = first
        what = (
            f"no {name} here, where line {at} gives one"
            if had
            else f"a {name} here, where line {at} gives none"
        )
        read = {
            "sentence_id": "as its own sentence (its claim id)",
            "question_id": "as its own question (its sentence id)",
            "system": f"as system {spec.system!r} (--system)",
        }[name]
        raise InputError(
            f"{what}: a row without one is read {read}"
            f" (a sheet that names each {name.removesuffix('_id')} on its first row alone? "
            "fill the column on every row, or leave it out of every row)",
            path=path,
            line=line,
            field=name,
        )


def _one_sentence_one_id(
    made: dict[int, tuple[str, int]],
    trace: Trace,
    path: Path,
    line: int,
    where: str,
    *,
    lined: bool = False,
) -> None:
    """Refuse one sentence's claims given two sentence ids the tool made (no column gives one).

    A claim table of question, sentence text, claim and verdict (``--option ids=line`` or
    ``ids=claim``, or a claim id column alone) made each claim a sentence of its own: the
    sentence 'Aspirin cures cancer and lowers fever.' of two claims, one refuted, counted
    twice (n 4, TP 1, FN 1, TN 2 where by hand its 3 sentences give TP 1, TN 2), exit 0.
    A row whose claim is its sentence (a sentence-level table) is no claim of another's.
    With ``lined`` (``ids=line``: each row a sentence), a claim text a question gives twice
    is refused too: a row per retrieved passage, the claim's verdict on each, counted the
    claim once per passage (n 5, FN 3 for n 3, FN 1), as ``ids=claim`` refuses it.
    """
    sentence = spelling_key(trace.sentence or "")
    claim = spelling_key(trace.claim)
    if sentence and claim != sentence:
        key, what, text = (
            hash((0, trace.system, trace.question_id, sentence)),
            "sentence",
            trace.sentence,
        )
    elif lined and trace.claim_id == f"L{line}":
        key, what, text = hash((1, trace.system, trace.question_id, claim)), "claim", trace.claim
    else:
        return
    first, at = made.setdefault(key, (trace.sentence_id, line))
    if first == trace.sentence_id:
        return
    way = (
        "give each row its sentence id (--map COLUMN=sentence_id), or make it from the text: "
        "--map SENTENCE_COLUMN=sentence_id beside --map SENTENCE_COLUMN=sentence, with "
        "--option ids=claim --option sentence_ids=question"
        if what == "sentence"
        else "a row per passage or per retriever? give one row per claim, its passages a list "
        "(--map COLUMN=passages), or each retriever a system (--map retriever=system); if "
        "the answer says it twice, give each row its sentence id (a sentence_id column)"
    )
    raise _in_row(
        InputError(
            f"{what} {clip(text or '')!r} of question {trace.question_id!r} (system "
            f"{trace.system!r}) is at line {at} too, with no sentence id: each row would be "
            f"a sentence of its own ({first!r}, {trace.sentence_id!r}), the {what} counted "
            f"once per row; {way}",
            path=path,
            line=line,
            field=what,
        ),
        where,
    )


def _in_row(exc: InputError, where: str) -> InputError:
    """``exc`` naming the row's JSON path inside its record, when the record was exploded."""
    if not where:
        return exc
    return InputError(f"{exc.reason} (row {where})", path=exc.path, line=exc.line, field=exc.field)


def _row_error(row: _Row, field: str, message: str) -> InputError:
    """An error naming ``row``'s file, line and ``field`` (and its JSON path: :func:`_in_row`)."""
    return _in_row(InputError(message, path=row.path, line=row.line, field=field), row.where)


def _left_out(columns: set[str], spec: TableSpec) -> list[str]:
    """The columns ``--option unmapped=drop`` dropped: no trace field, --map or option reads them.

    Flat rows only: the keys of nested records (``--option rows=``) are their structure.
    """
    if spec.unmapped != "drop" or spec.rows is not None:
        return []
    read = {p.column for p in spec.passage_columns} | {c for c, _ in spec.verdict_columns}
    if spec.label_rule is not None:
        read.add(spec.label_rule.column)
    read.update(TRACE_FIELDS, spec.column_map, [""])
    return sorted(columns - read)


def _check_consumed(path: Path, columns: set[str], spec: TableSpec) -> None:
    """A headerless file (JSON, JSONL, exploded rows) must have the columns the options read.

    As ``check_header`` does for a CSV's header: a --label-rule column no row has gave every
    row the rule's 'otherwise' label (exit 0), a --passage-column no row has no passages.
    """
    one_system = spec.shared_column(sorted(columns))
    if one_system is not None:
        raise InputError(one_system[1], path=path, field=one_system[0])
    wanted = [p.column for p in spec.passage_columns] + [c for c, _ in spec.verdict_columns]
    if spec.label_rule is not None:
        wanted.insert(0, spec.label_rule.column)
    for name in wanted:
        if name not in columns and name not in spec.column_map:
            have = ", ".join(sorted(columns)[:12]) + (", ..." if len(columns) > 12 else "")
            raise InputError(
                f"no row has this column (have: {have or 'none'})", path=path, field=name
            )


def _check_mapped(paths: Sequence[Path], columns: set[str], spec: TableSpec) -> None:
    """Refuse a ``--map`` column that no file has (a typo filled no field, silently).

    Keys renamed inside nested passage objects (``--map snippet=text``) and the ``X#``
    places of exploded lists are not row columns; ``--map X=`` (drop) is never an error.
    """
    for src, targets in spec.column_map.items():
        if src.endswith(INDEX_MARK) or src in columns:
            continue
        if not targets or all(t in PASSAGE_FIELDS for t in targets):
            continue
        have = ", ".join(sorted(columns)[:12]) + (", ..." if len(columns) > 12 else "")
        raise InputError(
            f"--map {src}={','.join(targets)}: no column {src!r} (have: {have or 'none'})",
            path=", ".join(str(p) for p in paths),
            field=src,
        )


#: A JSON key the --option rows path names as it is (no dot, bracket, star or space).
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


#: The way to a flat table's labelled sentences without claims: their labels apart.
LABELS_APART = (
    "write the sentences' labels apart, failcodes ingest generic-labels FILE --label-rule "
    "RULE --map CLAIM_COLUMN= --map VERDICT_COLUMN=, and the claims' rows with --option "
    "no_verdict=drop"
)

#: A row with neither claim nor verdict: a sentence without claims, not a failed verifier.
CLAIMLESS = (
    "no claim and no verdict: a sentence without claims? each row here is a claim, and "
    "--option no_verdict=drop would leave out its label too (it would count in no metric, "
    "where metrics count a labelled sentence without claims as no error flagged, an FN for an "
    f"error): {LABELS_APART}"
)


def _claimless(raw: Mapping[str, Any], spec: TableSpec, seen: set[str]) -> bool:
    """Whether the row leaves the claim column(s) of its file blank (a sentence without claims).

    A sentence table giving each answer sentence a row, its claim and verdict cells blank
    where the pipeline extracted no claim: ``--option no_verdict=drop``, the refusal's way,
    left each such labelled sentence out (n 2, TP 1, TN 1 for n 4, TP 1, FN 1, TN 2 by the
    seed's rule, exit 0), said as rows whose claims count in no metric.
    """
    sources = [k for k, targets in spec.column_map.items() if "claim" in targets]
    sources = sources or ["claim"]
    if not seen & set(sources):
        return False  # no claim column: the claim is the sentence's text
    return all(
        raw.get(k) is None or (isinstance(raw.get(k), str) and not str(raw.get(k)).strip())
        for k in sources
    )


def _no_verdict_reason(raw: Mapping[str, Any], spec: TableSpec, seen: set[str]) -> str:
    """Why a row has no verdict, and the way through (``seen``: the file's columns so far)."""
    failed = "--option no_verdict=drop leaves such rows out, counted in a note"
    columns = clip(", ".join(k for k in raw if k != INDEX_MARK), 300)
    mapped = [k for k, t in spec.column_map.items() if "verdict" in t]
    given = [f"--map {k}=verdict" for k in mapped] or [
        f"--verdict-column {c}" for c, _ in spec.verdict_columns
    ]
    names = mapped or [c for c, _ in spec.verdict_columns]
    if names and not seen & set(names):  # JSON: a typo, or a nested key's dotted path
        return (
            f"no verdict: no row so far gives column {names[0]!r} a value ({given[0]}: a "
            "typo? a key inside an object? flatten the records first, as "
            f"pandas.json_normalize does; this row's columns: {columns}); if the verifier "
            f"failed on this claim, {failed}"
        )
    if spec.verdict_columns or mapped:
        return f"no verdict (did the verifier fail on this claim? {failed})"
    # nothing is mapped to the verdict: most likely the pipeline calls it something else
    values = [v for k, v in raw.items() if k != INDEX_MARK]
    if spec.rows is None and values and all(isinstance(v, list) for v in values):
        keys = [k for k in raw if k != INDEX_MARK]
        if len(keys) == 1 and _PLAIN_KEY.fullmatch(keys[0]):
            # {"data": [...]}: an envelope's one list (named a system's way it read 'data' as
            # a system); rows=data[] reads it
            return (
                f"no verdict (this row's column {keys[0]} holds a list: the records are nested "
                f"in it); name the list that holds the rows with --option rows=PATH: --option "
                f"'rows={keys[0]}[]' (or, if '{keys[0]}' names a system, --option 'rows=*[]' "
                "--map '*=system') (docs/trace-format.md, nested output)"
            )
        # {"gpt": [...], "claude": [...]}: the records are nested under each system's key
        return (
            f"no verdict (this row's columns {columns} all hold lists: the records are nested "
            "in them); name the lists that hold the rows with --option rows=PATH, e.g. --option "
            "'rows=*[]' --map '*=system' for the records listed under each system's name "
            "(docs/trace-format.md, nested output)"
        )
    keyed = [  # {"systems": {"A": {"verdict": ...}, "B": {...}}}: each system's answer
        k
        for k, v in raw.items()
        if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values())
    ]
    if spec.rows is None and keyed and _PLAIN_KEY.fullmatch(keyed[0]):
        k = keyed[0]
        return (
            f"no verdict (this row's column {k} holds an object per key "
            f"({clip(', '.join(raw[k]), 60)}): each system's answer nested under its name?); "
            f"--option 'rows={k}.*' --map '{k}.*=system' reads a row per key "
            "(docs/trace-format.md, nested output)"
        )
    return (
        f"no verdict (this row's columns: {columns}): name the verdict's column with --map "
        f"COLUMN=verdict; if the verifier failed on this claim, {failed}"
    )


def _row_system(raw: Mapping[str, Any], spec: TableSpec) -> object:
    """The system a row's trace will name (its mapped column, a ``system`` column, --system)."""
    sources = [k for k, targets in spec.column_map.items() if "system" in targets]
    for key in sources or ["system"]:
        if raw.get(key) is not None:
            return raw[key]
    return spec.system


def _per_system(
    rows: Iterable[tuple[int, str, dict[str, Any]]], spec: TableSpec, path: Path
) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """Each row as it is, or, with ``--verdict-column``, once per column: that system's row.

    The other columns are every system's; the verdict column becomes ``verdict`` and its
    system ``system``. A ``system`` or ``verdict`` column of the table itself, unmapped, is
    refused: each column's row replaced it, with no word (the rows' systems gpt and llama
    pooled into each column's system, as ``--map gen=system`` is refused for).
    """
    if not spec.verdict_columns:
        yield from rows
        return
    names = {c for c, _ in spec.verdict_columns}
    for line, where, raw in rows:
        for own in ("system", "verdict"):
            value = raw.get(own)
            if own not in names and value is not None and own not in spec.column_map:
                way = (
                    "if its systems are pipelines of their own, ingest each one's rows apart"
                    if own == "system"
                    else f"if it is a system's, give it as --verdict-column {own}=SYSTEM"
                )
                raise InputError(
                    f"a {own} column ({clip(str(value))!r} here) beside --verdict-column, which "
                    f"gives each trace its {own}: the column would be read for no trace; drop "
                    f"or rename it in the table ({way})",
                    path=path,
                    line=line,
                    field=own,
                )
        shared = {k: v for k, v in raw.items() if k not in names}
        for column, system in spec.verdict_columns:
            yield line, where, {**shared, "verdict": raw.get(column), "system": system}


def _verdict_column(exc: InputError, raw: Mapping[str, Any], spec: TableSpec) -> InputError:
    """``exc`` naming the ``--verdict-column`` the row's verdict came from, not 'verdict'."""
    column = next((c for c, s in spec.verdict_columns if s == raw.get("system")), None)
    if column is None or exc.field != "verdict":
        return exc
    return InputError(exc.reason, path=exc.path, line=exc.line, field=column)


def _verdict_cell(raw: Mapping[str, Any], spec: TableSpec) -> object:
    """The row's verdict cell as read (None: none, or a vouched line's empty record).

    What a default alias reads, where the trace's ``raw_verdict`` may be the input's own (the
    tool's traces keep the pipeline's word beside their canonical verdict).
    """
    sources = [k for k, targets in spec.column_map.items() if "verdict" in targets]
    return next((raw[k] for k in sources or ["verdict"] if raw.get(k) is not None), None)


def _no_verdict(raw: Mapping[str, Any], spec: TableSpec) -> bool:
    """Whether the row's verdict is missing, empty or a missing mark (a verifier that failed).

    A system whose verdict is declared (``--verdict``) has none of its own to miss. A mark no
    ``--alias`` names (R's ``NA``: :data:`~failcodes.verdicts.NO_VERDICT_MARKS`) is no verdict:
    refused as an unknown verdict, its way through (``--alias NA=no_evidence``) read a failed
    verifier as one that found no evidence (an error under ``-m non_supported``).
    """
    if spec.verdict_of(_row_system(raw, spec)) is not None:
        return False
    sources = [k for k, targets in spec.column_map.items() if "verdict" in targets]
    values = [raw.get(k) for k in sources or ["verdict"]]
    aliased = {str(k).strip().casefold() for k in spec.aliases}
    return all(
        v is None
        or (isinstance(v, str) and v.strip().casefold() in NO_VERDICT_MARKS - aliased | {""})
        for v in values
    )


def _claim_once(
    seen: dict[tuple[str, str], tuple[Path, int]],
    row: _Row,
    spec: TableSpec,
    firsts: Mapping[tuple[str, str], Trace],
) -> None:
    """Record the row's (system, claim_id) in ``seen``; one seen before is the row's error.

    ``firsts``: each key's first trace. The same claim of one sentence on two rows (a row per
    passage or per retriever) was sent to ``--option ids=claim``, which gave both rows one id
    again, and the error its own advice once more.
    """
    first = seen.get((row.trace.system, row.trace.claim_id))
    before = firsts[(row.trace.system, row.trace.claim_id)]
    try:
        traceio.claim_once(seen, row.trace, row.path, row.line, way=False)
    except InputError as exc:
        assert first is not None
        reason = exc.reason  # traceio.claim_once names this row's file, line and claim_id
        if first[0] != row.path and _id_from_record_place(row.raw, spec):
            # '#' restarts in each file: the two rows are different records of two files
            reason += (
                " ('#', the record's place, counts from 1 in each file and "
                f"fills the id here, so record {row.raw[INDEX_MARK]} of {row.path.name} "
                f"takes the id of one in {first[0].name}: concatenate the files into one "
                "input, or map a column that names each record)"
            )
            raise _row_error(row, "claim_id", reason) from None
        if (
            first[0] == row.path
            and spec.ids == "columns"
            and "claim_id" not in _sources(row.raw, spec)
        ):
            reason += (
                " (claim_id defaults to sentence_id: with several claims "
                "per sentence, --option ids=claim gives each claim its own id)"
            )
        places = [
            k
            for k in row.raw
            if k.endswith(INDEX_MARK) and k != INDEX_MARK
            and "claim_id" in spec.column_map.get(k, ())
        ]  # fmt: skip
        if places:
            reason += (
                f" ({places[0]} counts from 1 in every record: map it to "
                "sentence_id with --option sentence_ids=question, which prefixes the record's "
                "question id)"
            )
        mine = (row.trace.question_id, row.trace.sentence_id, row.trace.claim)
        same = (before.question_id, before.sentence_id, before.claim) == mine
        if reason == exc.reason and same and first[0] == row.path:
            reason += (
                "; the same claim of one sentence on two rows (the row twice, or a row per "
                "passage or per retriever?): give one row per claim, its passages a list "
                "(--map COLUMN=passages), or each retriever a system (--map retriever=system)"
            )
            if before.retriever != row.trace.retriever:
                reason += _grid_way(row.raw, spec, "retriever")
        if reason == exc.reason:  # no cause named above: the ways through of every input
            reason += f"; {traceio.ONE_NAME if first[0] != row.path else traceio.WITHIN_QUESTION}"
        raise _row_error(row, "claim_id", reason) from None


def _one_file(files: dict[str, Path], row: _Row, spec: TableSpec) -> None:
    """Refuse a system's rows in a second file when '#' fills an id (it restarts per file).

    Shards of one dump, numbered with ``--map '#=question_id'``: record 1 of each file was
    question '1', and their sentences '1:1' one sentence whose claims (ids of their own)
    were pooled: n 2, TP 1, FP 1 for n 4, TP 1, FP 1, FN 1, TN 1, exit 0.
    """
    first = files.setdefault(row.trace.system, row.path)
    if first == row.path:
        return
    field = sorted(spec.column_map[INDEX_MARK])[0]
    raise _row_error(
        row,
        field,
        f"system {row.trace.system!r} has records in {first.name} and {row.path.name}, "
        f"and '#', the record's place, counts from 1 in each file and fills {field}: "
        f"record {row.raw[INDEX_MARK]} of each would be one (its sentences' claims pooled); "
        "concatenate the files into one input, or map a column that names each record",
    )


def _sentence_in_one_file(files: dict[int, int], row: _Row, paths: dict[Path, int]) -> None:
    """Refuse a system's sentence whose claims two input files give.

    sysB's file copied from sysA's, its system column still sysA, claim ids its own (or two
    runs of sysA): merged (a study's parts too), each sentence pooled both files' claims,
    one sysA row (TP 1, FP 1 for sysA TP 1, TN 1 and sysB FP 1, FN 1, exit 0).
    """
    trace = row.trace
    here = paths[row.path]
    first = files.setdefault(hash((trace.system, trace.sentence_id)), here)
    if first == here:
        return
    error = traceio.split_sentence(
        trace.system, trace.sentence_id, list(paths)[first], row.path, row.line, ingest=True
    )
    raise _in_row(error, row.where)


#: :func:`_one_text`'s packing: the folded text's hash, above the text's, above a line number.
_HASH_BITS, _LINE_BITS, _FOLDED_AT = (1 << 64) - 1, 40, 104
_LINE_MASK = (1 << _LINE_BITS) - 1


def _one_text(texts: dict[int, int], row: _Row) -> None:
    """Refuse a system's sentence id of one question given with two sentence texts.

    Question ids repeated across a table's sub-benchmarks (RAGChecker's meta-evaluation: query
    '41' of kiwi and of bioasq), sentence '1' of each, claims of their own ids (``--option
    ids=claim``, the duplicate claim id's way through): the two sentences were one, their
    claims pooled (n 2, FP 1, FN 1 for n 4, FP 1, FN 2, TN 1 by hand), exit 0. Texts that
    differ only in case, runs of spaces or Unicode form (:func:`spelling_key`: a cell with a
    trailing space) are one text: the sentence was refused, with no way through.
    """
    trace, sentence = row.trace, row.trace.sentence or ""
    key = hash((trace.system, trace.question_id, trace.sentence_id))
    text = hash(sentence) & _HASH_BITS
    first = texts.get(key)
    if first is None:  # the folded text hashed once a sentence, again only where texts differ
        folded = hash(spelling_key(sentence)) & _HASH_BITS
        texts[key] = folded << _FOLDED_AT | text << _LINE_BITS | row.line
        return
    if (first >> _LINE_BITS) & _HASH_BITS == text or first >> _FOLDED_AT == hash(
        spelling_key(sentence)
    ) & _HASH_BITS:
        return
    raise _row_error(
        row,
        "sentence",
        f"sentence {trace.sentence_id!r} of question {trace.question_id!r} (system "
        f"{trace.system!r}) has another text here than at line {first & _LINE_MASK}: two "
        "sentences with one id would be one, their claims pooled; give each sentence its own "
        "id (ids repeated across sub-sets of the data: map the sub-set into the ids, or ingest "
        "each sub-set apart)",
    )


def _one_verifier(verifiers: dict[int, int], row: _Row, spec: TableSpec) -> None:
    """Refuse a system's sentence of one question that two verifiers checked.

    A long table, a row per claim and model, its system column the pipeline's (``rag``) and
    the model mapped to ``verifier``: with ``--option ids=claim`` (the duplicate claim id's way
    through) each model's claims of sentence s1 were one sentence's, pooled (TP 1, FP 1, where
    gpt-4o by hand gives TP 1, TN 1 and llama FN 1, FP 1), exit 0.
    """
    trace = row.trace
    key = hash((trace.system, trace.question_id, trace.sentence_id))
    verifier = hash(trace.verifier) & _HASH_BITS
    first = verifiers.setdefault(key, verifier << _LINE_BITS | row.line)
    if first >> _LINE_BITS == verifier:
        return
    column = next((k for k, t in spec.column_map.items() if "verifier" in t), "verifier")
    raise _row_error(
        row,
        "verifier",
        f"sentence {trace.sentence_id!r} of question {trace.question_id!r} (system "
        f"{trace.system!r}) was checked by verifier {trace.verifier!r} here and by another at "
        f"line {first & _LINE_MASK}: two pipelines under one system name, their claims pooled "
        f"into one sentence; give each its own system: --map {column}=system beside --map "
        f"{column}=verifier (a system column kept: --map system=retriever, or --map system=)"
        + _grid_way(row.raw, spec, "verifier"),
    )


def _grid_way(raw: Mapping[str, Any], spec: TableSpec, field: str) -> str:
    """The way through for a grid of retrievers x verifiers, each pair a pipeline ("" if not).

    A long table, a row per claim and (retriever, verifier) pair, the system column the
    verifier's: the duplicate claim's way (each retriever a system, ``field`` "retriever")
    met the two verifiers' refusal, whose way (each verifier a system, ``field``
    "verifier") met the duplicate claim again; no option names a system by two columns.
    Said when the system comes from a column of the row other than ``field``'s.
    """
    own = next((c for c in _sources_of(field, spec) if c in raw), None)
    system = next((c for c in _sources_of("system", spec) if c in raw), None)
    if own is None or system is None or own == system:
        return ""
    if field == "verifier" and "retriev" not in system.casefold():
        return ""  # a pipeline's own system column (rag): --map model=system is the way
    pair = f"df[{own!r}] + '/' + df[{system!r}]"
    role = "verifier" if field == "retriever" else "retriever"
    return (
        f" (a grid, each ({own}, {system}) pair a pipeline? no option names a system by two "
        f"columns: write one naming the pair, pandas: df['pipeline'] = {pair}, then --map "
        f"pipeline=system --map {system}={role})"
    )


def _one_record(
    records: dict[int, tuple[int, int, str]], row: _Row, paths: dict[Path, int], *, listed: bool
) -> None:
    """Refuse a system's sentence of one question that two records give.

    One system's two runs of a question, two records with one question id and claims with
    ids of their own: sentence 'q1:1' (a list's place, ``listed``) or 's1' (given) of each
    run was one sentence, its claims pooled (n 2, TP 1, FP 1 for n 4, TP 1, FP 1, FN 1,
    TN 1, exit 0). Records are told apart by where they start (the line, and on a line
    holding several, the record's place: ``[1]`` of the row's path).
    """
    trace = row.trace
    place = row.where.split(".", 1)[0] if row.where.startswith("[") else ""
    here = (paths[row.path], row.line, place)
    first = records.setdefault(hash((trace.system, trace.question_id, trace.sentence_id)), here)
    if first == here:
        return
    where = f"line {first[1]}" if first[0] == here[0] else f"{list(paths)[first[0]]}:{first[1]}"
    where += f" (record {first[2] or '[0]'})" if place or first[2] else ""
    why = (
        "its id is a place in a list, counted from 1 in each record, so the two records' "
        "sentences would be one"
        if listed
        else "its claims would be pooled into one sentence"
    )
    raise _row_error(
        row,
        "sentence_id",
        f"sentence {trace.sentence_id!r} of system {trace.system!r} comes from this record "
        f"and from the one at {where}: {why} (question {trace.question_id!r} twice: two "
        "runs?); give each record its own question id, or each run its own system",
    )


def _id_from_record_place(raw: Mapping[str, Any], spec: TableSpec) -> bool:
    """Whether the row's claim id is made from ``#``, the record's place in its file."""
    if INDEX_MARK not in raw:
        return False
    filled = set(spec.column_map.get(INDEX_MARK, ()))
    sources = _sources(raw, spec)
    if "claim_id" in filled:
        return True
    if "claim_id" in sources and spec.ids == "columns":
        return False  # a column of its own names the claim
    # claim_id defaults to (or, with ids=claim, is made from) the sentence id
    qualified = spec.sentence_ids == "question" or spec.ids == "claim"
    return "sentence_id" in filled or ("question_id" in filled and qualified)


def _sources(raw: Mapping[str, Any], spec: TableSpec) -> set[str]:
    """The trace fields the columns of ``raw`` fill."""
    return {t for key in raw for t in spec.column_map.get(key, (key,))}
