"""Trace files as columns: the bounded-memory readers behind metrics and disagreements.

Issue 18. :func:`read_trace_columns` reads trace files (JSONL, CSV or Parquet) into
:class:`~failcodes.tracecols.TraceColumns`, keeping only the columns asked for;
:func:`read_sentence_columns` keeps the sentence groups sentence-level metrics need;
:func:`load_columns` and :func:`load_sentence_columns` read the clinical labels with them and
check them against the traces. :func:`claim_fetcher` fetches the claims of selected
disagreements by file offset (passages as decoded JSON); the engine lists the rows of
sentence groups whose claims are no run of rows (:func:`read_sentence_columns` with
``locate``); :func:`iter_trace_claims` streams a trace file's records for the dry run. The
rules and the one-line errors are those of :func:`failcodes.traceio.read_traces`: a line
the msgspec decoder cannot vouch for goes through that reader's own steps.

The rest of the file layer lives beside this module: rows of any table, formats and record
validation in :mod:`failcodes.tableio`, labels and sentences in :mod:`failcodes.labelio`, trace
files as models in :mod:`failcodes.traceio` (formats: docs/trace-format.md), the disagreement
files in :mod:`failcodes.disagreementio` (which reads traces through this module). Every
problem raises :class:`~failcodes.errors.InputError` with the path, the 1-based line (Parquet:
row), the field and what was expected.
"""

from __future__ import annotations

import bisect
import csv
import itertools
import json
import math
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
import numpy.typing as npt

from failcodes import engine, labelio
from failcodes.errors import InputError
from failcodes.fileio import check_regular_file
from failcodes.ingest.repeats import KeyHashes
from failcodes.jsonio import byte_blocks, byte_lines, jsonl_lines, jsonl_object
from failcodes.labelcols import LabelColumns
from failcodes.labels import (
    SYSTEM_TWO_WAYS,
    Label,
    TraceTexts,
    label_systems,
    labelled_texts,
    system_written_two_ways,
    validate_labels,
)
from failcodes.numbertext import whole_number_text
from failcodes.parquetio import check_decoded, check_metadata, open_parquet
from failcodes.spelling import spelling_key, two_ways
from failcodes.tableio import (
    CELL_ERRORS,
    NO_ID,
    NUMBER_ID_FIELDS,
    SHOWN_EXPONENT,
    UTF8_BOM,
    Format,
    check_columns,
    detect_format,
    drop_nones,
    pyarrow_modules,
    required_fields,
    string_array,
)
from failcodes.tracecols import (
    KEY_COLUMNS,
    SCALAR_COLUMNS,
    VERDICTS,
    GroupOrigin,
    Origin,
    ScatteredRows,
    SentenceColumns,
    TraceColumns,
    VerdictCounts,
    numpy_of,
)
from failcodes.traceio import (
    TRACE_ENGINE_COLUMNS,
    duplicate_claim,
    prepare_trace,
    read_trace_files,
    read_traces,
    split_sentence,
    trace_arrow_schema,
    two_texts,
)
from failcodes.tracelines import TRACE_IDS, TraceLine, Voucher
from failcodes.traces import (
    UNDECLARED_KEY,
    EvidenceSource,
    Marks,
    Passage,
    Trace,
    derived_evidence_source,
    tally_undeclared,
)
from failcodes.verdicts import Verdict, alias_word, normalize_verdict

if TYPE_CHECKING:  # disagreements imports metrics; this module imports it on use
    from failcodes.disagreements import ClaimView


#: A decoded passage's rank (ranks of a list are checked distinct with one C-level map).
_RANK_OF = operator.attrgetter("rank")
#: Rows a JSONL scan buffers before it inserts them into the engine (at 16,384 the engine's
#: table held ~10 MB more at paper scale).
_SINK_ROWS = 4_096
#: Read buffer of the line scans: trace lines (~5 kB) longer than the default 8 kB buffer
#: are assembled from several reads (~0.3 s more per 600 MB).
_SCAN_BUFFER = 1 << 20
#: Read buffer of the by-offset fetches (a seek outside it reads it anew: kept small).
_GATHER_BUFFER = 1 << 16


class _UseObjectReaderError(Exception):
    """The fast reader cannot reproduce the object reader exactly here: use that one."""


def _verdict_entry(raw: Any) -> str | None:
    """The canonical verdict of a raw one, or None if it is not one."""
    try:
        return normalize_verdict(raw).value
    except InputError:
        return None


def _object_line(raw: bytes, lineno: int, path: Path, facts: _Facts | None = None) -> Trace | None:
    """One line through the object reader's own steps: a Trace, None (blank) or its error.

    ``facts`` counts a verdict a default alias read (:func:`alias_word`), and the passages
    and reasonings read as none (:class:`~failcodes.traces.Marks`).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _UseObjectReaderError from None  # its message names a byte offset of its own reads
    if lineno == 1 and text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        return None
    obj = jsonl_object(text, path, lineno)
    word = alias_word(obj.get("verdict")) if isinstance(obj, dict) else None
    if facts is not None and word:
        facts.truths[word] += 1
    marks = None if facts is None else facts.marks
    return prepare_trace(drop_nones(obj), path, lineno, None, {}, convert="generic", marks=marks)


def _fast_line(body: bytes, vouch: Voucher, *, accepted: bool = False) -> TraceLine | None:
    """The line as ``vouch`` vouches for it (its verdict canonical), or None.

    None when msgspec refuses the line or cannot vouch for it (duplicate keys, nulls,
    repeated ranks, unknown verdict): the line then takes the object reader's steps.
    ``accepted`` says the line was read (and accepted) before: its ids, keys and ranks are
    not checked again.
    """
    return vouch(body, checked=accepted)


def construct_passages(raw: Iterable[Any]) -> tuple[Passage, ...]:
    """:class:`Passage` objects from decoded passages a fast path vouched for (no validation).

    The trace reader's passage structs, or those of the disagreement reader (same fields).
    """
    return tuple(
        Passage.model_construct(
            passage_id=p.passage_id,
            rank=p.rank,
            text=p.text,
            source=p.source,
            title=p.title,
            score=p.score,
            gold=p.gold,
            gold_verdict=Verdict(p.gold_verdict) if p.gold_verdict is not None else None,
        )
        for p in raw
    )


def _claim_view(rec: TraceLine, view: type[ClaimView]) -> ClaimView:
    """The claim-record fields of a line :func:`_fast_line` vouched for (no model built).

    ``view`` is :class:`~failcodes.disagreements.ClaimView`, imported once by the caller
    (this module imports the disagreements module, and metrics behind it, only on use).
    """
    source = rec.evidence_source
    return view(
        question_id=rec.question_id,
        sentence_id=rec.sentence_id,
        claim_id=rec.claim_id,
        claim=rec.claim,
        sentence=rec.sentence,
        verdict=Verdict(rec.verdict),
        raw_verdict=rec.raw_verdict,
        reasoning=rec.reasoning,
        verifier=rec.verifier,
        retriever=rec.retriever,
        evidence=EvidenceSource(source)
        if source is not None
        else derived_evidence_source(tuple(rec.passages), rec.retriever),
    )


def _scan_jsonl(
    con: Any,
    index: int,
    total: int,
    path: Path,
    facts: _Facts,
    *,
    texts: bool = False,
) -> tuple[int, InputError | None]:
    """Decode a trace JSONL file line by line into the engine's ``rows`` table.

    Each line is validated once (:meth:`Voucher.lines <failcodes.tracelines.Voucher.lines>`:
    msgspec against the trace schema, the duplicate-key count, a read of lines at a time;
    else the object reader's own steps) and its key columns, line and byte offset go to the
    engine a chunk at a time (row numbers from ``total`` on). Returns the row count after
    this file and the error of the first invalid line (reading stops there). With ``texts``,
    each row's sentence text goes too, as its hash (:func:`_texts_differ`). ``facts`` gets
    the rows of no declared evidence source and of a true/false verdict, and the file's
    ``index`` in :attr:`_Facts.vouched` when the voucher took its every line.
    """
    vouch = Voucher(rewritten=False)
    every = True  # the voucher took every line so far (none the object reader's)
    sink = _RowSink(con, index, total, texts=texts)
    add, keys, tally = sink.rows.append, _ROW_KEYS, tally_undeclared
    failure: InputError | None = None
    lineno = pos = 0
    with check_regular_file(path).open("rb", buffering=0) as fh:
        for lines, quotes in byte_blocks(fh, path):
            bodies = lines
            if not lineno and lines[0].startswith(b"\xef\xbb\xbf"):  # a BOM
                bodies = [lines[0][3:], *lines[1:]]
            returns = any(map(operator.contains, lines, itertools.repeat(b"\r")))
            for raw, rec in zip(lines, vouch.lines(bodies, quotes), strict=True):
                lineno += 1
                start = pos
                pos += len(raw)
                if returns:
                    cr = raw.find(b"\r")
                    if cr != -1 and (cr != len(raw) - 2 or raw[-1:] != b"\n"):
                        raise _UseObjectReaderError  # a bare CR ends a line for the text reader
                if rec is not None:
                    add((lineno, start, *keys(rec)))
                    if rec.evidence_source is None:
                        tally(facts.undeclared, rec.system, None, rec.passages, rec.retriever)
                    continue
                every = False
                try:
                    trace = _object_line(raw, lineno, path, facts)
                except InputError as exc:
                    failure = exc
                    break
                if trace is not None:
                    add(
                        (
                            lineno,
                            start,
                            *keys(trace)[:4],
                            trace.verdict.value,
                            trace.sentence,
                            trace.claim,
                        )
                    )
                    if trace.evidence_source is None:
                        tally(facts.undeclared, trace.system, None, trace.passages, trace.retriever)
            if failure is not None:
                break
            sink.spill()
    sink.flush()
    facts.truths += vouch.truths
    if every and failure is None:
        facts.vouched.add(index)
    return sink.row, failure


#: Each canonical verdict's index into VERDICTS (the ``rows`` table's verdict column).
_VERDICT_INDEX = {v.value: i for i, v in enumerate(VERDICTS)}


def _numbers(values: Any, dtype: Any) -> Any:
    """An Arrow array of numbers (no nulls) from a list or numpy array, built from its buffer.

    ``pyarrow.array`` would import pandas on its first call (~55 MB; see ``string_array``).
    """
    pa, _ = pyarrow_modules()
    held = np.ascontiguousarray(values, dtype=dtype)
    return pa.Array.from_buffers(
        pa.from_numpy_dtype(held.dtype), len(held), [None, pa.py_buffer(held)]
    )


#: A vouched line's values of a ``rows`` row: its ids, verdict (canonical) and sentence text.
_ROW_KEYS = operator.attrgetter(
    "system", "question_id", "sentence_id", "claim_id", "verdict", "sentence", "claim"
)


class _RowSink:
    """Rows of one file inserted into ``rows`` by chunks: appended, or given as arrays."""

    def __init__(self, con: Any, file: int, first: int, *, texts: bool = False) -> None:
        self.con, self.file, self.row = con, file, first
        #: Rows appended: (line, offset, system, question, sentence, claim, verdict, text,
        #: claim text), the verdict canonical, the text the sentence's (None: none).
        self.rows: list[tuple[Any, ...]] = []
        #: Whether ``rows`` gets each row's sentence text hashed (0: none; ``hash("")`` is 0),
        #: and its claim's where it gives no sentence text.
        self.texts = texts

    def spill(self) -> None:
        """Insert the appended rows if they are :data:`_SINK_ROWS` or more."""
        if len(self.rows) >= _SINK_ROWS:
            self.flush()

    def flush(self) -> None:
        """Insert the appended rows (as numpy arrays: a JSONL scan imports no pyarrow)."""
        if not self.rows:
            return
        lines, offsets, *keys, verdicts, texts, claims = zip(*self.rows, strict=True)
        self.rows.clear()  # (the scan holds its append)
        self.insert(
            np.array(lines, dtype=np.int64),
            np.array(offsets, dtype=np.int64),
            [np.array(k, dtype=object) for k in keys],
            np.fromiter(map(_VERDICT_INDEX.__getitem__, verdicts), np.int8, len(verdicts)),
            [
                [hash(t) if t else 0 for t in texts],
                # a claim's text where its row gives no sentence text (the labels' check)
                [hash(c) if c and not t else 0 for t, c in zip(texts, claims, strict=True)]
                if None in texts or "" in texts
                else [0] * len(texts),
            ]
            if self.texts
            else None,
        )

    def insert(
        self,
        lines: Any,
        offsets: Any,
        keys: Sequence[Any],
        verdicts: Any,
        texts: Sequence[Sequence[int]] | None = None,
    ) -> None:
        """Insert rows (lines, offsets, the four ids, verdict indexes): numpy or Arrow arrays.

        ``texts``: the rows' sentence and claim texts hashed, where ``rows`` has them (a
        JSONL scan's).
        """
        n = len(lines)
        columns = {
            "file": np.full(n, self.file, dtype=np.int32),
            "line": lines,
            "offset": offsets,
            "row": np.arange(self.row, self.row + n, dtype=np.int64),
            **dict(zip(KEY_COLUMNS[:4], keys, strict=True)),
            "verdict": verdicts,
        }
        if texts is not None:
            columns["sentence_text"] = np.array(texts[0], dtype=np.int64)
            columns["claim_text"] = np.array(texts[1], dtype=np.int64)
        if not isinstance(lines, np.ndarray):  # Arrow arrays (a Parquet scan)
            pa, _ = pyarrow_modules()
            columns = pa.table(
                {
                    k: _numbers(v, v.dtype) if isinstance(v, np.ndarray) else v
                    for k, v in columns.items()
                }
            )
            engine.register_arrow(self.con, "chunk", columns)
        else:  # numpy arrays (a JSONL scan): DuckDB's extension scans them without the package
            self.con.register("chunk", columns)
        try:
            self.con.execute("INSERT INTO rows SELECT * FROM chunk")
        finally:
            self.con.unregister("chunk")
        self.row += n


#: A text of spaces alone (RE2, str.isspace's characters: the model's ``not text.strip()``).
_BLANK_TEXT = "^[" + "".join(f"\\x{{{c:x}}}" for c in range(0x3001) if chr(c).isspace()) + "]*$"
#: Rows per Parquet batch: memory is a batch's columns, not a row group's (issue 18).
_PARQUET_BATCH_ROWS = 1_024
#: Passage fields the reader checks (nulls, bounds, ranks); the others are not read.
_CHECKED_PASSAGE_FIELDS = ("passage_id", "rank", "text", "score", "gold_verdict")


def _parquet_columns(pf: Any) -> list[str]:
    """The columns of a trace Parquet file a scan reads: key, required or checked ones.

    Passages are read as the leaf columns the checks need (``passages.list.element.rank``
    ...), not their titles, sources or gold flags; no other optional scalar.
    """
    wanted = {*KEY_COLUMNS, *required_fields(Trace), "evidence_source", "retriever", "verdict"}
    out = [n for n in pf.schema_arrow.names if n in wanted]
    if "passages" in pf.schema_arrow.names:
        leaves = [
            pf.schema.column(i).path
            for i in range(len(pf.schema))
            if pf.schema.column(i).path.startswith("passages.")
        ]
        vouched = _vouched_passage_fields(pf)
        checked = [
            p
            for p in leaves
            if p.rsplit(".", 1)[-1] in _CHECKED_PASSAGE_FIELDS
            and p.rsplit(".", 1)[-1] not in vouched
        ]
        out.extend(checked if checked else ["passages"])
    return out


#: Passage fields whose only check the row-group statistics can settle: "none" (a null is
#: refused: skipped when every row group counts 0 nulls) or "all" (only a non-null value
#: is checked: skipped when every value of every row group is null).
_STATISTICS_SETTLE = {"passage_id": "none", "text": "none", "gold_verdict": "all"}


def _vouched_passage_fields(pf: Any) -> set[str]:
    """Checked passage fields the file's statistics vouch for, so not read (issue 18).

    The passage text is ~90% of a trace file; only its nulls are checked, and the null
    count of each row group's column chunk answers that. A chunk without a null count (or
    with nulls, or, for ``gold_verdict``, a value) makes the scan read the field.
    """
    leaf = {pf.schema.column(i).path: i for i in range(len(pf.schema))}
    meta = pf.metadata
    out: set[str] = set()
    for name, rule in _STATISTICS_SETTLE.items():
        index = leaf.get(f"passages.list.element.{name}")
        if index is None:
            continue
        settled = True
        for group in range(meta.num_row_groups):
            chunk = meta.row_group(group).column(index)
            stats = chunk.statistics
            if stats is None or not stats.has_null_count:
                settled = False
            elif rule == "none":
                settled = stats.null_count == 0
            else:
                settled = stats.null_count == chunk.num_values
            if not settled:
                break
        if settled:
            out.add(name)
    return out


def _parquet_record(pf: Any, row: int) -> dict[str, Any]:
    """One row of a Parquet file as a record (every column), for the exact error path."""
    start = 0
    for group in range(pf.num_row_groups):
        rows = pf.metadata.row_group(group).num_rows
        if row < start + rows:
            table = pf.read_row_group(group)
            return drop_nones(table.slice(row - start, 1).to_pylist()[0])
        start += rows
    raise IndexError(row)  # pragma: no cover - rows come from the file itself


def _scan_parquet(
    con: Any,
    index: int,
    total: int,
    path: Path,
    facts: _Facts,
) -> tuple[int, InputError | None]:
    """Read a trace Parquet file batch by batch into ``rows``, validated per column.

    As :func:`_scan_jsonl` (a row's "line" is its 1-based row number, its offset the 0-based
    row). Files whose column types differ from :func:`trace_arrow_schema` take the object
    reader.
    """
    pa, pq = pyarrow_modules()
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    check_regular_file(path)
    try:
        # streamed through a 1 MB buffer instead of whole column chunks: a row group of
        # 10,000 traces holds ~40 MB of passage text, read in full (and kept by the pool) before
        pf = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
        schema = pf.schema_arrow
    except (pa.ArrowException, OSError):
        raise _UseObjectReaderError from None
    # the limits (rows, sizes, what it decodes to) before any column is kept
    check_metadata(path, pf.metadata)
    try:
        check_decoded(path, pf)
    except (pa.ArrowException, OSError):
        raise _UseObjectReaderError from None  # a damaged page: the exact reader says where
    check_columns(
        path, schema.names, tuple(Trace.model_fields), required_fields(Trace), convert="generic"
    )
    expected = trace_arrow_schema()
    for name in schema.names:
        got = schema.field(name).type
        if got != expected.field(name).type and got != pa.null():
            raise _UseObjectReaderError
    sink = _RowSink(con, index, total)
    pool = pa.default_memory_pool()
    verdict_table: dict[str, Any] = {}
    offset = 0
    failure: InputError | None = None
    for batch in pf.iter_batches(
        batch_size=_PARQUET_BATCH_ROWS, columns=_parquet_columns(pf), use_threads=False
    ):
        table = pa.Table.from_batches([batch])
        n = table.num_rows
        bad = np.zeros(n, dtype=bool)
        cols: dict[str, Any] = {}
        for name in (*SCALAR_COLUMNS, "passages"):
            if name in table.column_names:
                cols[name] = table.column(name)
        for name in required_fields(Trace):
            col = cols.get(name)
            if col is None or col.type == pa.null():
                bad |= True
            else:
                bad |= numpy_of(col.is_null())
                if name in TRACE_IDS:  # blank or padded ids: the exact reader's error
                    trimmed = pc.utf8_trim_whitespace(col)
                    bad |= numpy_of(pc.not_equal(trimmed, col), fill=False)
                    bad |= numpy_of(pc.utf8_length(col), fill=1) == 0
                    bad |= numpy_of(_no_id_cells(col), fill=False)  # '#N/A', 'nan': no id
                if name == "claim":  # spaces alone, '#VALUE!': the exact reader refuses it
                    blank = pc.match_substring_regex(col, _BLANK_TEXT)
                    bad |= numpy_of(blank, fill=False)
                    bad |= numpy_of(_excel_error_cells(col), fill=False)
                if name in NUMBER_ID_FIELDS:  # 1.23457E+11: the exact reader refuses it
                    shown = pc.match_substring_regex(col, f"^{SHOWN_EXPONENT}$")
                    bad |= numpy_of(shown, fill=False)
        if "evidence_source" in cols and cols["evidence_source"].type != pa.null():
            allowed = string_array([v.value for v in EvidenceSource])
            col = cols["evidence_source"]
            bad |= ~numpy_of(pc.or_(col.is_null(), pc.is_in(col, value_set=allowed)))
        raw_verdicts = cols["verdict"]
        entries = []
        for value in pc.unique(raw_verdicts).to_pylist():
            if value is not None and value not in verdict_table:
                verdict_table[value] = _verdict_entry(value)
            entries.append(value)
        known = [v for v in entries if v is not None and verdict_table[v] is not None]
        bad |= ~numpy_of(pc.is_in(raw_verdicts, value_set=string_array(known)))
        if "retriever" in cols and cols["retriever"].type != pa.null():
            bad |= numpy_of(_excel_error_cells(cols["retriever"]), fill=False)
        if "passages" in cols and cols["passages"].type != pa.null():
            bad |= _bad_passage_rows(cols["passages"], n)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            line = offset + row + 1
            record = _parquet_record(pf, offset + row)
            try:
                prepare_trace(record, path, line, None, {}, convert="generic")
            except InputError as exc:
                failure = exc
                cols = {k: v.slice(0, row) for k, v in cols.items()}
                raw_verdicts = cols["verdict"]
            else:  # pragma: no cover - a vectorised check stricter than the model
                raise _UseObjectReaderError from None
        where = pc.index_in(raw_verdicts, value_set=string_array(known))
        kept = len(raw_verdicts)
        _tally_batch(facts.undeclared, {k: v.slice(0, kept) for k, v in cols.items()})
        for value in known:
            word = alias_word(value)
            if word:
                facts.truths[word] += int(pc.sum(pc.equal(raw_verdicts, value)).as_py() or 0)
        indexes = _numbers([_VERDICT_INDEX[verdict_table[v]] for v in known], np.int8)
        sink.insert(
            _numbers(np.arange(offset + 1, offset + kept + 1), np.int64),
            _numbers(np.arange(offset, offset + kept), np.int64),
            [cols[n].cast(pa.string()) for n in KEY_COLUMNS[:4]],
            indexes.take(where),
        )
        del batch, table, cols
        pool.release_unused()  # else the allocator keeps every batch's pages (~2x the RSS)
        offset += n
        if failure is not None:
            break
    return sink.row, failure


def _tally_batch(undeclared: dict[str, list[int]], cols: dict[str, Any]) -> None:
    """:func:`tally_undeclared` of a Parquet batch's rows (its columns, as read)."""
    pa, _ = pyarrow_modules()
    import pyarrow.compute as pc

    n = len(cols["system"])
    has = np.zeros(n, dtype=bool)  # passages or a retriever
    passages = cols.get("passages")
    if passages is not None and passages.type != pa.null():
        has |= numpy_of(pc.list_value_length(passages), fill=0) > 0
    retriever = cols.get("retriever")
    if retriever is not None and retriever.type != pa.null():
        has |= ~numpy_of(retriever.is_null())
    declared = cols.get("evidence_source")
    open_: Any = np.ones(n, dtype=bool)  # no declared source
    if declared is not None and declared.type != pa.null():
        open_ = numpy_of(declared.is_null())
    names = np.asarray(cols["system"].to_pylist(), dtype=object)[open_]
    if len(names):
        systems, code = np.unique(names, return_inverse=True)
        retrieving = np.bincount(code, weights=has[open_], minlength=len(systems))
        for name, total, got in zip(systems.tolist(), np.bincount(code), retrieving, strict=True):
            seen = undeclared.setdefault(name, [0, 0])
            seen[0] += int(total - got)
            seen[1] += int(got)


def _bad_passage_rows(passages: Any, n: int) -> Any:
    """Rows whose passages the model would refuse (null items/fields, bounds, ranks)."""
    pyarrow_modules()
    import pyarrow.compute as pc

    col = passages.combine_chunks()
    bad = np.zeros(n, dtype=bool)
    # list lengths from the offsets (a null list emits nothing, whatever its offsets say)
    lengths = np.diff(numpy_of(col.offsets)) * numpy_of(col.is_valid())
    parent = np.repeat(np.arange(n), lengths)
    items = pc.list_flatten(col)
    if len(items) == 0:
        return bad
    item_bad = numpy_of(items.is_null()).copy()
    # fields the file's statistics vouched for were not read (_vouched_passage_fields)
    read = {items.type.field(i).name for i in range(items.type.num_fields)}
    for name in ("passage_id", "rank", "text"):
        if name in read:
            item_bad |= numpy_of(pc.struct_field(items, name).is_null())
    if "text" in read:  # '#REF!': the exact reader refuses it
        item_bad |= numpy_of(_excel_error_cells(pc.struct_field(items, "text")), fill=False)
    rank = numpy_of(pc.struct_field(items, "rank"), fill=1)
    item_bad |= rank < 1
    score = pc.struct_field(items, "score")
    item_bad |= ~np.isfinite(numpy_of(score, fill=0.0))
    if "gold_verdict" in read:
        gold = pc.struct_field(items, "gold_verdict")
        allowed = string_array([v.value for v in Verdict])
        item_bad |= ~numpy_of(pc.or_(gold.is_null(), pc.is_in(gold, value_set=allowed)))
    np.logical_or.at(bad, parent[item_bad], True)
    # duplicate ranks within a row
    key = parent.astype(np.int64) * (int(rank.max()) + 1) + rank.astype(np.int64)
    order = np.sort(key)
    dup = order[1:][order[1:] == order[:-1]]
    if len(dup):
        bad[np.unique(dup // (int(rank.max()) + 1))] = True
    return bad


@engine.translate_out_of_memory
def read_trace_columns(
    paths: str | Path | Sequence[str | Path],
) -> TraceColumns:
    """Read traces from one or more files into columns (memory: the key columns only).

    Same rules and the same one-line errors as :func:`read_traces` (file, line, field; claim
    ids unique across all files), but the passages are validated and dropped: the result
    holds the key columns (system, question_id, sentence_id, claim_id, canonical verdict).
    Each row remembers its file, line and byte offset
    (Parquet: row), so :func:`claim_fetcher` can fetch the full traces of the rows a step
    needs. JSONL lines are decoded by msgspec against the trace schema; a line it refuses
    (or cannot judge) goes through the object reader's own steps, so errors are identical.
    CSV traces take the object reader (the result then holds them).
    """
    items = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    formats = [detect_format(p) for p in items]
    try:
        loaded = _load(items, formats)
    except _UseObjectReaderError:
        truths: Counter[str] = Counter()
        marks = Marks()
        columns = TraceColumns.from_traces(read_trace_files(items, truths=truths, marks=marks))
        return replace(columns, truths=truths, marks=marks)
    try:
        return replace(_engine_trace_columns(loaded), **_given(loaded))
    finally:
        loaded.con.close()


def _load(items: Sequence[Path], formats: Sequence[Format]) -> _Rows:
    """The rows in the engine (own Parquet straight, others validated), or _UseObjectReaderError.

    JSONL files' rows hold their sentence text's hash (:func:`_texts_differ`): one system's
    sentence id given two texts is refused (:func:`_refuse_two_texts`).
    """
    if Format.CSV in formats:
        raise _UseObjectReaderError
    loaded = _load_vouched(items, formats) or _load_scanned(items, formats)
    try:
        _refuse_split_sentence(loaded.con, items)
        if loaded.texts:
            _refuse_two_texts(loaded.con, items, "(SELECT *, NULL AS sentence FROM rows)")
        elif loaded.facts is not None and all(f is Format.PARQUET for f in formats):
            # Parquet files the tool did not write (its own: ingest refused this)
            texts = _texts_source(loaded.con, items, claims=False)
            _refuse_two_texts(
                loaded.con,
                items,
                f"""(SELECT f AS file, n + 1 AS line, NULL AS "offset",
                (f::BIGINT << 40) + n AS "row", system, question_id, sentence_id,
                coalesce(hash(sentence), 0) AS sentence_text, sentence FROM ({texts}))""",
            )
    except BaseException:
        loaded.con.close()
        raise
    return loaded


@engine.translate_out_of_memory
def read_verdict_counts(paths: str | Path | Sequence[str | Path]) -> VerdictCounts:
    """The claims' canonical verdicts counted per system (the report's Table 5).

    The files are loaded and checked as :func:`read_trace_columns` loads them (same rules and
    one-line errors, the duplicate claim included); the engine then counts, and nothing is
    kept per claim (the key columns as codes and their vocabularies held ~80 MB at 10x paper
    scale). A file the engine does not take is read by :func:`read_trace_columns`.
    """
    items = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    formats = [detect_format(p) for p in items]
    counted = _vouched_counts(items)
    if counted is not None:
        return counted
    try:
        loaded = _load(items, formats)
    except _UseObjectReaderError:
        return VerdictCounts.of_columns(read_trace_columns(items))
    try:
        query = "SELECT system, verdict, count(*) FROM rows GROUP BY ALL"
        return _verdict_counts(loaded.con.execute(query).fetchall())
    finally:
        loaded.con.close()


def asserting_systems(path: Path) -> set[str]:
    """The systems of a traces file whose every claim is asserted (``ingest --verdict``).

    A pipeline that asserts its claims (a long-form answer, no verifier) flags no error under
    any mapping: the report's note on systems the mapping never flagged said "a support
    classifier never says refuted ... measured with the non_supported mapping" of it. Read
    from the tool's own Parquet (``raw_verdict``, :data:`failcodes.verdicts.ASSERTED`) or its
    JSONL (``data/*.traces.jsonl``: each line's ``system`` and ``raw_verdict`` alone, streamed;
    it said the general words of them); any other file, or a line that is not such a record,
    gives none (the note keeps its general words).
    """
    from failcodes.verdicts import ASSERTED

    if path.suffix == ".jsonl":
        return _asserting_in_jsonl(path, ASSERTED)
    if path.suffix != ".parquet" or not engine.may_be_validated(path):
        return set()
    con = engine.connect()
    try:
        if not engine.is_validated(path, schema=TRACE_ENGINE_COLUMNS, con=con):
            return set()
        got = con.execute(
            f"""SELECT system FROM read_parquet({engine.quoted(path)}) GROUP BY system
            HAVING bool_and(raw_verdict IS NOT NULL AND raw_verdict = ?)""",
            [ASSERTED],
        ).fetchall()
    finally:
        con.close()
    return {str(system) for (system,) in got}


class _SystemVerdict(msgspec.Struct):
    """A trace line's system and raw verdict (its other fields skipped unread)."""

    system: str | None = None
    raw_verdict: str | None = None


def _asserting_in_jsonl(path: Path, asserted: str) -> set[str]:
    """:func:`asserting_systems` of a traces JSONL file, one line at a time."""
    decode = msgspec.json.Decoder(_SystemVerdict).decode
    every: dict[str, bool] = {}  # system -> every claim so far asserted
    try:
        with path.open("rb") as fh:
            for lineno, line in byte_lines(fh, path):
                body = line[3:] if lineno == 1 and line.startswith(b"\xef\xbb\xbf") else line
                if not body.strip():
                    continue
                rec = decode(body)
                key = str(rec.system)
                every[key] = every.get(key, True) and rec.raw_verdict == asserted
    except (OSError, msgspec.DecodeError, InputError):
        return set()  # the traces' own reader says what is wrong with the file
    return {system for system, yes in every.items() if yes}


def _vouched_counts(items: Sequence[Path]) -> VerdictCounts | None:
    """:func:`read_verdict_counts` of the tool's own Parquet files, straight from them.

    No ``rows`` table (147 MB against 292 MB at 10x paper scale). None where
    :func:`_load_vouched` must run instead (:func:`_vouched_source`; a null key or a verdict
    that is not canonical).
    """
    found = _vouched_source(items)
    if found is None:
        return None
    con, source, _ = found
    try:
        got = con.execute(
            f"""SELECT system, verdict, count(*), count_if({_NULL_KEYS})
            FROM ({source}) GROUP BY ALL"""
        ).fetchall()
    finally:
        con.close()
    if any(bad for *_, bad in got):
        return None
    return _verdict_counts([(system, verdict, n) for system, verdict, n, _ in got])


def _verdict_counts(got: Sequence[tuple[str, int, int]]) -> VerdictCounts:
    """``(system, verdict index, claims)`` rows as :class:`VerdictCounts`."""
    systems = sorted({system for system, _, _ in got})
    at = {system: i for i, system in enumerate(systems)}
    counts = np.zeros((len(systems), len(VERDICTS)), dtype=np.int64)
    for system, verdict, n in got:
        counts[at[system], int(verdict)] += int(n)
    return VerdictCounts(systems, counts)


@engine.translate_out_of_memory
def read_sentence_columns(
    paths: str | Path | Sequence[str | Path],
    sentence_ids: Iterable[str | None] = (),
    *,
    locate: bool = False,
    texts: bool = False,
) -> SentenceColumns | TraceColumns:
    """Read traces reduced to their sentence groups, for sentence-level metrics (issue 18).

    The rows are validated once (the tool's own Parquet: by its marker) and grouped by the
    engine (issue 30): one entry per (system, question, sentence) with its verdicts, first
    row and row count (with ``locate``, where its rows are:
    :class:`~failcodes.tracecols.GroupOrigin`, scattered rows listed). An invalid line or
    duplicate claim raises the error :func:`read_trace_columns` raises; CSV input (or lines
    past 32 bits) gives :func:`read_trace_columns` of the same files. ``sentence_ids`` (the
    labels') are shared with the groups' sentence vocabulary, not copied. ``texts``: the
    groups say whether a sentence id has two texts (``texts_differ``: JSONL and Parquet).
    """
    items = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    formats = [detect_format(p) for p in items]
    loaded = None if locate else _vouched_groups(items, formats)
    if loaded is None:
        try:
            loaded = _load(items, formats)
        except _UseObjectReaderError:
            loaded = None
    if loaded is not None:  # grouped by the engine
        try:
            differ = _texts_differ(loaded) if texts else None
            cols = replace(
                _engine_sentence_columns(loaded, locate=locate),
                texts_differ=differ,
                **_given(loaded),
            )
            given = {s: s for s in sentence_ids if s is not None}
            if given:  # the labels' own strings (not a second copy of each id)
                cols = replace(cols, sentences=[given.get(s, s) for s in cols.sentences])
            return cols
        except OverflowError:
            pass  # lines past 32 bits: the trace columns
        finally:
            loaded.con.close()
    return read_trace_columns(items)


def check_system_spellings(
    traces: Iterable[Trace] | TraceColumns | SentenceColumns, paths: Sequence[Path]
) -> None:
    """Refuse two systems whose names differ only in case, spacing or Unicode form.

    ``gpt-4`` in one file and ``GPT-4`` in another would be scored as two systems. The error
    names the first row of the later name (sorted), found by reading the files again then.
    """
    twice = system_written_two_ways(traces)
    if twice is not None:
        path, line = first_row_of_system(paths, twice[0])
        how = two_ways(*twice)
        raise InputError(SYSTEM_TWO_WAYS.format(*twice, how), path=path, line=line, field="system")


def first_row_of_system(paths: Sequence[Path], name: str) -> tuple[Path | None, int | None]:
    r"""The file and line (Parquet: row) of the first trace of system ``name``, if found.

    JSONL lines as :func:`~failcodes.jsonio.jsonl_lines` gives them (a BOM, ``\r`` line ends,
    the line bound): a BOM skipped the file and a name written with ``\u`` escapes was never
    matched, so the error named no line.
    """
    for path in paths:
        fmt = detect_format(path)
        try:
            if fmt is Format.JSONL:
                for number, text in jsonl_lines(path):
                    if (name in text or "\\" in text) and json.loads(text).get("system") == name:
                        return path, number
            elif fmt is Format.CSV:
                with path.open(encoding="utf-8-sig", newline="") as fh:
                    rows = csv.DictReader(fh)
                    for row in rows:
                        if row.get("system") == name:
                            return path, rows.line_num
            else:
                import pyarrow.parquet as pq  # type: ignore[import-untyped]

                column = pq.read_table(path, columns=["system"]).column(0).to_pylist()
                if name in column:
                    return path, column.index(name) + 1
        except (InputError, OSError, ValueError, KeyError, AttributeError, csv.Error):
            continue  # the error then names no line
    return (paths[0] if len(paths) == 1 else None), None


def load_columns(
    trace_paths: Sequence[Path], labels_path: Path
) -> tuple[TraceColumns, Sequence[Label]]:
    """Read traces into columns (claim ids unique across the files) and check the labels."""
    columns = read_trace_columns(trace_paths)
    check_system_spellings(columns, trace_paths)
    labels = labelio.read_labels(labels_path, columns=True)
    texts = _texts_of(columns, trace_paths)
    validate_labels(labels, columns, path=labels_path, lines=labels.lines, texts=texts)
    return columns, labels


def _texts_of(
    columns: TraceColumns | SentenceColumns, paths: Sequence[Path]
) -> Callable[[Sequence[str]], Iterator[TraceTexts]] | None:
    """What streams the traces' texts for the label checks (None: the columns hold them)."""
    if isinstance(columns, TraceColumns) and columns.objects is not None:
        return None
    if isinstance(columns, SentenceColumns) and columns.texts_differ is False:
        # no id has two texts: only the sentences whose labels give their text are compared
        return lambda told: trace_texts(paths, told, claims=False) if told else iter(())
    # groups where an id has two texts: a claim id's two texts where no row of its sentence
    # gives the sentence's are two answers' (the claims read then only)
    claims = not isinstance(columns, SentenceColumns) or columns.texts_differ is True
    return lambda told: trace_texts(paths, told, claims=claims)


def _parquet_texts(
    paths: Sequence[Path], told: Sequence[str] = (), *, claims: bool = True
) -> Iterator[TraceTexts]:
    """:func:`trace_texts` of Parquet files: the rows of a sentence or claim id with two texts.

    And those of the sentences ``told`` (whose labels give their text: few, if any).
    The engine finds the ids (an id with one text cannot be two systems' two texts), so the
    rows come to Python only where a check may fail (none on the seed's design: at 120,000
    traces every row in Python cost 0.5 CPU-s and 120 MB of peak memory, this 0.1 CPU-s and
    none). Texts are compared as they are; the caller folds case and spaces. A file
    without a text column gives nulls; so does every file's claim without ``claims``.
    """
    con = engine.connect()
    try:
        con.execute("SET threads = 1")  # (two threads' hash tables: memory for no gain)
        source = _texts_source(con, paths, claims=claims)
        # the ids with two texts (or a text and none: a superset, Python decides), grouped
        # on their hashes (grouping the id strings held 37 MB more at 120,000 traces)
        two: list[list[Any]] = [[], []]
        for at, (h, n) in enumerate((("hs", "sentence"), ("hc", "claim"))[: 1 + claims]):
            query = f"SELECT {h} FROM ({source}) GROUP BY 1 HAVING min(hash({n})) < max(hash({n}))"
            two[at] = [v for (v,) in con.execute(query).fetchall()]
        if told:  # and the sentences whose labels give their text
            got = con.execute("SELECT hash(unnest($1::VARCHAR[]))", [list(told)])
            two[0] += [h for (h,) in got.fetchall()]
        if not any(two):
            return
        rows = con.execute(
            f"""SELECT system, sentence_id, claim_id,
                sentence,
                CASE WHEN list_contains($2::UBIGINT[], hc) THEN claim END
            FROM ({source})
            WHERE list_contains($1::UBIGINT[], hs) OR list_contains($2::UBIGINT[], hc)
            ORDER BY f, n""",
            two,
        ).fetchall()
    finally:
        con.close()
    for system, sid, cid, sentence, claim in rows:
        yield _as_id(system), _as_id(sid), _as_id(cid), sentence, claim


def _texts_source(con: Any, paths: Sequence[Path], *, claims: bool) -> str:
    """Parquet files' rows as one SQL source: place, ids, the ids' hashes and the texts."""
    parts = []
    for index, path in enumerate(paths):  # (DuckDB reads the names: pyarrow costs 30 MB)
        got = con.execute(f"DESCRIBE SELECT * FROM read_parquet({engine.quoted(path)})")
        names = {row[0] for row in got.fetchall()} - (set() if claims else {"claim"})
        texts = ", ".join(
            f"NULLIF({n}, '') AS {n}" if n in names else f"NULL::VARCHAR AS {n}"
            for n in ("sentence", "claim")
        )
        parts.append(
            f"""SELECT {index} AS f, file_row_number AS n, system, question_id, sentence_id,
            claim_id,
            hash(sentence_id::VARCHAR) AS hs, hash(claim_id::VARCHAR) AS hc, {texts}
            FROM read_parquet({engine.quoted(path)}, file_row_number = true)"""
        )
    return " UNION ALL ".join(parts)


def _parquet_rows(path: Path) -> Iterator[TraceTexts]:
    """:func:`trace_texts` of every row of one Parquet file, a batch at a time."""
    pf = open_parquet(path)
    names = [n for n in _TextFields.__struct_fields__ if n in pf.schema_arrow.names]
    for batch in pf.iter_batches(batch_size=_BATCH_ROWS, columns=names):
        got = batch.to_pydict()
        none = [None] * batch.num_rows
        yield from zip(
            map(_as_id, got["system"]),
            map(_as_id, got["sentence_id"]),
            map(_as_id, got["claim_id"]),
            (t or None for t in got.get("sentence", none)),
            (t or None for t in got.get("claim", none)),
            strict=True,
        )


class _TextFields(msgspec.Struct):
    """A trace line's ids and texts (every other key passed over)."""

    system: Any
    sentence_id: Any
    claim_id: Any
    sentence: Any = None
    claim: Any = None


def _as_id(value: Any) -> str:
    """An id as the readers hold it: a number's whole-number text (``7``, ``7.0``: ``"7"``)."""
    return value if isinstance(value, str) else whole_number_text(value) or str(value)


def trace_texts(
    paths: Sequence[Path], told: Sequence[str] = (), *, claims: bool = True
) -> Iterator[TraceTexts]:
    """Each trace's ``(system, sentence_id, claim_id, sentence, claim)``, streamed.

    For :func:`failcodes.labels.text_mismatch` on files read and checked before: a
    JSONL line decoded for these keys only; of Parquet files only, the rows of an id that
    has two texts in them (:func:`_parquet_texts`); CSV traces are read whole. An empty text
    is missing. Memory: a line or a batch, or the rows of such ids. Without ``claims``
    (sentence labels only), Parquet files give no claim's text: not read.
    """
    decode = msgspec.json.Decoder(_TextFields).decode
    formats = [detect_format(p) for p in paths]
    if all(f is Format.PARQUET for f in formats):
        yield from _parquet_texts(paths, told, claims=claims)
        return
    for path, fmt in zip(paths, formats, strict=True):
        if fmt is Format.PARQUET:  # beside other files: every row (an id's text may differ
            yield from _parquet_rows(path)  # from another file's only)
        elif fmt is Format.JSONL:
            with path.open("rb", buffering=_SCAN_BUFFER) as fh:
                for lineno, raw in byte_lines(fh, path):
                    body = raw[3:] if lineno == 1 and raw.startswith(UTF8_BOM) else raw
                    if body.strip():
                        t = decode(body)
                        yield (
                            _as_id(t.system),
                            _as_id(t.sentence_id),
                            _as_id(t.claim_id),
                            t.sentence or None,
                            t.claim or None,
                        )
        elif fmt is Format.CSV:
            for tr in read_traces(path):
                yield tr.system, tr.sentence_id, tr.claim_id, tr.sentence, tr.claim


def load_sentence_columns(
    trace_paths: Sequence[Path], labels_path: Path, *, locate: bool = False
) -> tuple[TraceColumns | SentenceColumns, Sequence[Label]]:
    """:func:`load_columns` for sentence-level metrics: traces reduced to sentence groups.

    Memory follows the sentences (issue 18). The labels are read first (a claim label needs
    the claims: the traces are then read as columns), their error, if any, raised after the
    traces' own, as :func:`load_columns` orders them. ``locate``: the groups know where
    their claims are (:func:`read_sentence_columns`).
    """
    labels: LabelColumns | None = None
    failure: InputError | None = None
    try:
        labels = labelio.read_labels(labels_path, columns=True)
    except InputError as exc:
        failure = exc
    grouped = labels is not None and all(c is None for c in labels.column("claim_id"))
    # shared labels giving no text: compared only where an id has two texts, found in the load
    hashed = (
        labels is not None
        and grouped
        and label_systems(labels) is None
        and not labelled_texts(labels)
    )
    columns: TraceColumns | SentenceColumns = (
        read_sentence_columns(
            trace_paths, labels.column("sentence_id"), locate=locate, texts=hashed
        )
        if labels is not None and grouped
        else read_trace_columns(trace_paths)
    )
    check_system_spellings(columns, trace_paths)
    if failure is not None:
        raise failure
    assert labels is not None
    texts = _texts_of(columns, trace_paths)
    validate_labels(labels, columns, path=labels_path, lines=labels.lines, texts=texts)
    return columns, labels


def gather_runs(
    paths: Sequence[Path],
    formats: Sequence[str],
    files: list[int],
    lines: list[int],
    offsets: list[int],
    counts: list[int],
    readers: dict[int, _ParquetRows],
) -> list[list[tuple[Trace | ClaimView, list[Any] | None]]]:
    """The traces of runs of consecutive rows, each run from its first row's place.

    Run ``i`` is ``counts[i]`` rows of file ``files[i]`` from line ``lines[i]`` at byte
    ``offsets[i]`` (Parquet: row ``offsets[i]``); blank lines are no rows. A line the fast
    path vouches for gives a :class:`ClaimView` (no model) and its decoded passages (no
    model per passage); another gives its model and None. ``readers`` keeps each Parquet
    file's reader (and the batch it decoded last) from one call to the next: a stream asks
    for rows in ascending order.
    """
    from failcodes.disagreements import ClaimView

    vouch = Voucher(rewritten=False)
    out: list[list[tuple[Trace | ClaimView, list[Any] | None]]] = [[] for _ in counts]
    by_file: dict[int, list[int]] = {}
    for pos, file in enumerate(files):
        by_file.setdefault(file, []).append(pos)
    for index, positions in by_file.items():
        path = paths[index]
        if formats[index] == Format.JSONL.value:
            with path.open("rb", buffering=_GATHER_BUFFER) as fh:
                for pos in sorted(positions, key=offsets.__getitem__):
                    fh.seek(offsets[pos])
                    line, items = lines[pos], out[pos]
                    while len(items) < counts[pos]:
                        raw = fh.readline()
                        if not raw:
                            raise ValueError(f"{path} changed since it was read")
                        body = raw[3:] if line == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
                        fast = _fast_line(body, vouch, accepted=True)
                        if fast is not None:
                            # the decoded passages themselves: the JSON encoder writes these
                            # structs as the dicts ``asdict`` would give (800k of them at 1x)
                            items.append((_claim_view(fast, ClaimView), fast.passages))
                        else:
                            trace = _object_line(raw, line, path)
                            if trace is not None:  # None: a blank line
                                items.append((trace, None))
                        line += 1
        else:
            reader = readers.get(index) or _ParquetRows(path)
            readers[index] = reader
            wanted = sorted(
                (offsets[pos] + i, pos) for pos in positions for i in range(counts[pos])
            )
            records = reader.records([row for row, _ in wanted])
            for (row, pos), record in zip(wanted, records, strict=True):
                item = _parquet_item(record, vouch)
                if item is None:  # a row the decoded structs cannot vouch for: the model's steps
                    out[pos].append(
                        (
                            prepare_trace(
                                drop_nones(record), path, row + 1, None, {}, convert="generic"
                            ),
                            None,
                        )
                    )
                else:
                    out[pos].append(item)
    return out


#: Rows per batch of the Parquet fetches: every column is read, passage text included.
_FETCH_BATCH_ROWS = 128
#: Decoded batches a row group's cursor keeps (its last): 1,024 traces (an eighth of a row
#: group as the tool writes it), a few MB with their passages.
_KEPT_BATCHES = 8
#: Row groups a Parquet fetch keeps a cursor in (the least recently used one goes first):
#: each holds its batch iterator's pages (~5 MB measured on the paper-scale traces) and its
#: kept batches. A stream whose rows alternate between more places of one file than this
#: (e.g. more than 15 copies of the same questions, their ids suffixed, one after another)
#: decodes a group again from its start each time it comes back to it.
_KEPT_GROUPS = 16


class _Cursor:
    """One row group's batches decoded so far: the iterator and its last decoded batches."""

    def __init__(self, batches: Iterator[Any], start: int) -> None:
        self.batches = batches
        self.kept: list[tuple[int, Any]] = []  # (first row, batch): the group's last batches
        self.decoded_to = start  # the group's rows before this one are decoded

    def holds(self, row: int) -> bool:
        """Whether ``row`` is in a kept batch or ahead of them (no decode from the start)."""
        return not self.kept or self.kept[0][0] <= row


class _ParquetRows:
    """Rows of a trace Parquet file, fetched a batch at a time (issue 18; issue 30).

    Each row group is read by a cursor (:class:`_Cursor`): its batches
    (:data:`_FETCH_BATCH_ROWS` traces) are decoded up to the one holding the row asked
    for, the last :data:`_KEPT_BATCHES` of them kept, with the batch iterator of the group.
    Up to :data:`_KEPT_GROUPS` cursors are kept at once, so rows asked for in ascending
    order within each group, across calls, decode each row group once, however the calls
    jump between groups: a stream whose sentence groups are scattered (a file holding
    copies of the same questions one after another, its rows asked for copy after copy)
    goes back and forth between places of the file, and restarting a group at each jump
    back decoded up to a group per jump (60 CPU-s for 13.5 at twice the paper scale). A
    row group without a wanted row is skipped; a row behind, in its group, is served from
    a kept batch (a stream sorted by question, then by disagreement id, may ask for a
    question's rows behind the last batch at a chunk's start: the demo's scifact-dev from
    its own Parquet decoded 210 batches, now 126; at paper scale, 1,878 either way); a row
    behind the kept batches starts its group again. A cursor is dropped when the next
    group's is started (a scan moving on), when its group is started again, and the least
    recently used one past :data:`_KEPT_GROUPS`. Only the wanted rows become Python values
    (a group's claims, consecutive rows, one slice).
    """

    def __init__(self, path: Path) -> None:
        _, pq = pyarrow_modules()
        self.path = path
        # a 1 MB read buffer, as the scan: not whole column chunks (~40 MB of passage text)
        self.file = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
        check_metadata(path, self.file.metadata)  # the scan checked what it decodes to
        meta = self.file.metadata
        sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
        self.starts = np.cumsum([0, *sizes])
        self.cursors: dict[int, _Cursor] = {}  # by row group, the least recently used first
        self.batch: Any = None
        self.first = self.end = 0  # rows [first, end) are the batch's in use
        self.decoded = 0  # batches decoded (tests count them)

    def records(self, rows: Sequence[int]) -> list[dict[str, Any]]:
        """The rows (ascending) as records of every column (nulls kept)."""
        out: list[dict[str, Any]] = []
        at: list[int] = []
        for row in rows:
            if not self.first <= row < self.end:
                out.extend(self._take(at))
                at = []
                self._seek(row)
            at.append(row - self.first)
        out.extend(self._take(at))
        return out

    def _seek(self, row: int) -> None:
        if not 0 <= row < int(self.starts[-1]):
            raise ValueError(f"{self.path} changed since it was read")
        group = int(np.searchsorted(self.starts, row, side="right") - 1)
        cursor = self.cursors.pop(group, None)  # (put back last: the most recently used)
        if cursor is None or not cursor.holds(row):
            self.batch = cursor = None  # (freed before the next is decoded)
            self.cursors.pop(group - 1, None)  # a scan moving on: the group behind is done
            while len(self.cursors) >= _KEPT_GROUPS:
                del self.cursors[next(iter(self.cursors))]
            batches = self.file.iter_batches(
                batch_size=_FETCH_BATCH_ROWS, row_groups=[group], use_threads=False
            )
            cursor = _Cursor(batches, int(self.starts[group]))
        self.cursors[group] = cursor
        kept = cursor.kept
        if kept and row < cursor.decoded_to:
            at = bisect.bisect_right(kept, row, key=operator.itemgetter(0)) - 1
            self.first, self.batch = kept[at]  # behind the last batch: a kept one holds it
            self.end = self.first + self.batch.num_rows
            return
        while row >= cursor.decoded_to:
            batch = next(cursor.batches, None)
            if batch is None:
                raise ValueError(f"{self.path} changed since it was read")
            self.decoded += 1
            kept.append((cursor.decoded_to, batch))
            del kept[:-_KEPT_BATCHES]
            cursor.decoded_to += batch.num_rows
        self.first, self.batch = kept[-1]
        self.end = cursor.decoded_to

    def _take(self, at: list[int]) -> list[dict[str, Any]]:
        """The kept batch's rows ``at`` (ascending), each run of consecutive rows one slice.

        Slices, not ``take``: its first call on these nested columns costs ~30 MB for good.
        """
        out: list[dict[str, Any]] = []
        start = 0
        for i in range(1, len(at) + 1):
            if i == len(at) or at[i] != at[i - 1] + 1:
                out.extend(self.batch.slice(at[start], i - start).to_pylist())
                start = i
        return out


def _parquet_item(record: dict[str, Any], vouch: Voucher) -> tuple[ClaimView, list[Any]] | None:
    """A Parquet row as :func:`gather_runs` gives a JSONL line the fast path vouched for.

    The row becomes the struct msgspec decodes from the same trace written as a JSON line
    (same types and bounds; every optional field of those structs is ``X | None`` with
    default None, so a null is a missing field); the scan checked its ids and ranks. None
    when msgspec refuses it (a null passage list too), a text is empty (the model reads an
    optional one as missing) or the verdict is unknown: the model decides.
    """
    from failcodes.disagreements import ClaimView

    try:
        rec = vouch.vouch(msgspec.convert(record, vouch.type), None)
    except msgspec.ValidationError:
        return None
    if rec is None:
        return None
    return _claim_view(rec, ClaimView), rec.passages


def claim_fetcher(
    columns: TraceColumns | SentenceColumns,
) -> Callable[[Sequence[Any]], dict[int, tuple[Trace | ClaimView, list[Any] | None]]]:
    """A function fetching the claims of a chunk of selected disagreements.

    It maps each trace row of the chunk to the trace (for a line the fast path vouched for,
    its :class:`~failcodes.disagreements.ClaimView`) and its passages as decoded JSON (None
    with a model).

    A chunk is a sequence of :class:`~failcodes.disagreements.Selected` found on ``columns``
    (on sentence groups: located ones, see :func:`read_sentence_columns`); their traces are read
    from the source files (by offset; a group's claims as one run of lines).
    Chunks asked for in ascending row order read each Parquet batch once: the function keeps
    each file's reader, and the batch it decoded last, from one chunk to the next.
    """
    readers: dict[int, _ParquetRows] = {}
    if isinstance(columns, SentenceColumns):
        return _group_fetcher(columns, readers)

    def fetch(chunk: Sequence[Any]) -> dict[int, tuple[Trace | ClaimView, list[Any] | None]]:
        rows = sorted({r for s in chunk for r in s.rows})
        if columns.objects is not None:  # in-memory traces: their own objects
            return {r: (columns.objects[r], None) for r in rows}
        origin = columns.origin
        if origin is None:
            raise ValueError("these columns have neither source files nor traces")
        at = np.asarray(rows, dtype=np.int64)
        runs = gather_runs(
            origin.paths,
            origin.formats,
            origin.file[at].tolist(),
            origin.line[at].tolist(),
            origin.offset[at].tolist(),
            [1] * len(at),
            readers,
        )
        return {row: items[0] for row, items in zip(rows, runs, strict=True)}

    return fetch


def _group_fetcher(
    columns: SentenceColumns, readers: dict[int, _ParquetRows]
) -> Callable[[Sequence[Any]], dict[int, tuple[Trace | ClaimView, list[Any] | None]]]:
    """Fetch the claims of a chunk of disagreements found on groups: row -> fetched trace."""
    origin = columns.origin
    if origin is None:
        raise ValueError("sentence groups read without locate: their claims cannot be found")

    def fetch(chunk: Sequence[Any]) -> dict[int, tuple[Trace | ClaimView, list[Any] | None]]:
        groups = sorted({s.group for s in chunk if s.rows})
        files, lines, offsets, counts = origin.where(groups, columns.first)
        firsts = [int(columns.first[g]) for g in groups]
        for g in groups:  # a group found by a scan: each of its rows a run of one
            for row, file, line, offset in origin.rows_of(g):
                files.append(file)
                lines.append(line)
                offsets.append(offset)
                counts.append(1)
                firsts.append(row)
        runs = gather_runs(
            origin.paths,
            origin.formats,
            files,
            lines,
            offsets,
            counts,
            readers,
        )
        return {
            first + i: item
            for first, items, count in zip(firsts, runs, counts, strict=True)
            if count  # (a scattered group's own entry: no run)
            for i, item in enumerate(items)
        }

    return fetch


# ------------------------------------------------------------------ the engine's row table

#: The engine's table of trace rows: each row's file, 1-based line (Parquet: row number),
#: byte offset (Parquet: 0-based row), number across the files, key and verdict (an index
#: into VERDICTS). One table per connection (issue 30).
_ROWS_TABLE = (
    'CREATE TABLE rows (file INTEGER, line BIGINT, "offset" BIGINT, "row" BIGINT, '
    "system VARCHAR, question_id VARCHAR, sentence_id VARCHAR, claim_id VARCHAR, "
    "verdict TINYINT)"
)


@dataclass
class _Rows:
    """The traces' rows loaded into the engine (``rows`` table of ``con``)."""

    con: Any
    paths: tuple[Path, ...]
    formats: tuple[Format, ...]
    #: Each file's first row number.
    starts: list[int]
    #: The sentence groups' systems, questions and sentences, sorted (table ``groups``
    #: keyed by codes in them: :func:`_vouched_groups`, no ``rows``), else None.
    vocab: Sequence[list[str]] | None = None
    #: With ``vocab``: ``(system, verdict index, claims)`` of every system and verdict.
    verdicts: Sequence[tuple[str, int, int]] = ()
    #: Whether ``rows`` has each row's ``sentence_text`` (:func:`_texts_differ`).
    texts: bool = False
    #: What the scan read of the traces beside their keys (None: the tool's own Parquet).
    facts: _Facts | None = None

    @property
    def grouped(self) -> bool:
        """The sentence groups are made (table ``groups``)."""
        return self.vocab is not None


@dataclass
class _Facts:
    """What a scan counts beside the keys (:class:`~failcodes.tracecols.TraceColumns`)."""

    #: As :attr:`TraceColumns.undeclared <failcodes.tracecols.TraceColumns.undeclared>`.
    undeclared: dict[str, list[int]] = field(default_factory=dict)
    #: As :attr:`TraceColumns.truths <failcodes.tracecols.TraceColumns.truths>`.
    truths: Counter[str] = field(default_factory=Counter)
    #: As :attr:`TraceColumns.marks <failcodes.tracecols.TraceColumns.marks>`.
    marks: Marks = field(default_factory=Marks)
    #: The JSONL files (indexes) every line of which the voucher took (:func:`_scan_jsonl`).
    vouched: set[int] = field(default_factory=set)

    def given(self) -> dict[str, Any]:
        """The columns' fields they fill."""
        return {"undeclared": self.undeclared, "truths": self.truths, "marks": self.marks}


def _load_vouched(items: Sequence[Path], formats: Sequence[Format]) -> _Rows | None:
    """The key columns of the tool's own Parquet files loaded into the engine, or None.

    None unless every file carries the marker of validated traces
    (:func:`failcodes.engine.is_validated`): the strict readers then take them. The rows are
    not validated again, but a file edited in place by another tool that kept the footer
    is caught by what costs the engine one pass: a key that is null, a verdict that is not
    canonical (None: the strict readers say where); a ``(system, claim_id)`` twice is raised
    as :func:`read_traces` words it, naming the later row and the first.
    """
    found = _vouched_source(items, unique=False)
    if found is None:
        return None
    con, source, starts = found
    try:
        con.execute(_ROWS_TABLE)
        con.execute(
            f"""INSERT INTO rows SELECT file, "offset" + 1, "offset", "row", system,
            question_id, sentence_id, claim_id, verdict FROM ({source})"""
        )
        if con.execute(f"SELECT count(*) FROM rows WHERE {_NULL_KEYS}").fetchall()[0][0]:
            con.close()
            return None
        _refuse_duplicate(con, items)
    except BaseException:
        con.close()
        raise
    return _Rows(con, tuple(items), tuple(formats), starts)


def _refuse_duplicate(con: Any, items: Sequence[Path]) -> None:
    """Raise the error of the first row repeating an earlier ``(system, claim_id)``."""
    found = con.execute(
        """
        WITH twice AS (
            SELECT system, claim_id, min("row") AS first FROM rows
            GROUP BY ALL HAVING count(*) > 1)
        SELECT r.file, r.line, r.system, r.claim_id, f.file, f.line
        FROM twice t JOIN rows r USING (system, claim_id) JOIN rows f ON f."row" = t.first
        WHERE r."row" > t.first ORDER BY r."row" LIMIT 1
        """
    ).fetchall()
    if not found:
        return
    file, line, system, claim, first_file, first_line = found[0]
    raise duplicate_claim(system, claim, items[file], int(line), (items[first_file], first_line))


def _refuse_split_sentence(
    con: Any, items: Sequence[Path], source: str = "rows", line: str = "line"
) -> None:
    """Raise the error of a system's sentence whose claims two of the files give.

    As ingest refuses it (:func:`failcodes.traceio.split_sentence`): sysB's file made from
    sysA's, its system column still sysA, was pooled into sysA's sentences. The pairs are
    grouped by their hash (integers), the strings compared only for a pair found in two files.
    """
    if len(items) < 2:
        return
    found = con.execute(
        f"""
        WITH split AS (
            SELECT hash(system, sentence_id) AS h, min(file) AS first FROM {source}
            GROUP BY h HAVING min(file) <> max(file))
        SELECT r.file, r.{line}, r.system, r.sentence_id, s.first
        FROM split s JOIN {source} r ON hash(r.system, r.sentence_id) = s.h AND r.file <> s.first
        WHERE EXISTS (SELECT 1 FROM {source} f WHERE f.file = s.first AND f.system = r.system
            AND f.sentence_id = r.sentence_id)
        ORDER BY r."row" LIMIT 1
        """
    ).fetchall()
    if found:
        file, at, system, sentence, first = found[0]
        raise split_sentence(system, sentence, items[first], items[file], int(at))


def _refuse_two_texts(con: Any, items: Sequence[Path], source: str = "rows") -> None:
    """Raise :func:`~failcodes.traceio.two_texts` at the row giving a sentence id a second text.

    ``source``: rows with ``file``, ``line``, ``"offset"`` (a JSONL line's byte offset, or
    null), ``"row"`` (their order), the three ids, ``sentence_text`` (a hash; 0: none, passed
    over) and ``sentence`` (the text, or null: read at the offset). The engine finds the
    sentences whose raw texts differ (none, mostly); those are compared as ingest compares
    them (:func:`~failcodes.ingest.table._one_text`: case, space runs and Unicode form folded).
    """
    rows = con.execute(
        f"""
        WITH two AS (
            SELECT system, question_id, sentence_id FROM {source} WHERE sentence_text <> 0
            GROUP BY ALL HAVING min(sentence_text) < max(sentence_text))
        SELECT r.file, r.line, r."offset", r.system, r.question_id, r.sentence_id, r.sentence
        FROM {source} r SEMI JOIN two USING (system, question_id, sentence_id)
        WHERE r.sentence_text <> 0 ORDER BY r."row"
        """
    ).fetchall()
    firsts: dict[tuple[str, str, str], tuple[str, str, int, int]] = {}
    for file, line, offset, *key, text in rows:
        if text is None:  # a JSONL line: its text read again
            with items[file].open("rb") as fh:
                fh.seek(offset)
                raw = fh.readline()
            text = msgspec.json.decode(raw.removeprefix(UTF8_BOM)).get("sentence")
        ids = (key[0], key[1], key[2])
        first = firsts.setdefault(ids, (text, spelling_key(text), file, line))
        if text != first[0] and spelling_key(text) != first[1]:
            where = f"line {first[3]}" if first[2] == file else f"{items[first[2]]}:{first[3]}"
            raise two_texts(ids, items[file], int(line), where)


def _vocabulary(con: Any, column: str, table: str = "rows") -> list[str]:
    """A column's distinct values, sorted (code point order: DuckDB compares UTF-8 bytes)."""
    return [
        r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM {table} ORDER BY 1").fetchall()
    ]


def _given(loaded: _Rows) -> dict[str, Any]:
    """The columns' fields the load's facts fill (the tool's own Parquet: its footers').

    Its footers' :data:`~failcodes.traces.UNDECLARED_KEY` counts, summed (None: a file
    without them, written before they were).
    """
    if loaded.facts is not None:
        return loaded.facts.given()
    undeclared: dict[str, list[int]] = {}
    for path in loaded.paths:
        if not engine.footer_holds(path, UNDECLARED_KEY):
            return {}
        try:
            counts = json.loads(engine.footer_of(path, loaded.con)[0][UNDECLARED_KEY])
            for system, (bare, retrieving) in counts.items():
                seen = undeclared.setdefault(str(system), [0, 0])
                seen[0], seen[1] = seen[0] + int(bare), seen[1] + int(retrieving)
        except (engine.core().Error, KeyError, ValueError, TypeError, AttributeError):
            return {}  # a footer the tool did not write: nothing is known
    return {"undeclared": undeclared}


def _load_scanned(items: Sequence[Path], formats: Sequence[Format]) -> _Rows:
    """Any trace files validated once, their key columns loaded into the engine.

    Every line (Parquet: row) is checked as :func:`read_traces` checks it, on the way: the
    first invalid one stops the reading, and its error is raised after the first row that
    repeats an earlier ``(system, claim_id)`` before it (:func:`_refuse_duplicate`).
    JSONL files only: the rows hold their sentence text's hash too (:func:`_refuse_two_texts`).
    """
    texts = all(f is Format.JSONL for f in formats)
    con = engine.connect()
    try:
        hashes = ", sentence_text BIGINT, claim_text BIGINT)"
        con.execute(_ROWS_TABLE[:-1] + hashes if texts else _ROWS_TABLE)
        starts: list[int] = []
        total = 0
        failure: InputError | None = None
        facts = _Facts()
        for index, (path, fmt) in enumerate(zip(items, formats, strict=True)):
            starts.append(total)
            if fmt is Format.JSONL:
                total, failure = _scan_jsonl(con, index, total, path, facts, texts=texts)
            else:
                total, failure = _scan_parquet(con, index, total, path, facts)
            if failure is not None:
                break
        _refuse_duplicate(con, items)
        if failure is not None:
            raise failure
    except BaseException:
        con.close()
        raise
    return _Rows(con, tuple(items), tuple(formats), starts, texts=texts, facts=facts)


def _texts_differ(loaded: _Rows) -> bool | None:
    """Whether a sentence id, or a claim id of one sentence, has two texts (None: not known).

    JSONL files scanned with their texts: the ``rows``' hashes; Parquet files: read from
    them on the load's connection. Their 64-bit hashes differ (two texts with one hash,
    2**-64 a pair, would be missed); a row without the text is passed over, as
    :func:`failcodes.labels.text_mismatch` does. A claim's two texts are two systems' own
    answers numbered alike where no sentence text tells them apart (the labels' check).
    """
    if loaded.vocab is not None:
        systems = len(loaded.vocab[0])
    else:
        systems = loaded.con.execute("SELECT count(DISTINCT system) FROM rows").fetchone()[0]
    if systems < 2:  # (one system's labels are never compared with another's texts)
        return None
    claims = None
    if loaded.texts:
        query = """SELECT 1 FROM rows GROUP BY sentence_id
        HAVING min(NULLIF(sentence_text, 0)) < max(NULLIF(sentence_text, 0))"""
        claims = """SELECT 1 FROM rows GROUP BY sentence_id, claim_id
        HAVING min(NULLIF(claim_text, 0)) < max(NULLIF(claim_text, 0))"""
    elif all(f is Format.PARQUET for f in loaded.formats):
        source = _texts_source(loaded.con, loaded.paths, claims=False)
        query = f"""SELECT 1 FROM ({source}) WHERE sentence IS NOT NULL GROUP BY hs
        HAVING min(hash(sentence)) < max(hash(sentence))"""
        if loaded.con.execute(f"SELECT 1 FROM ({source}) WHERE sentence IS NULL").fetchone():
            # the claims' texts, read only where a row gives no sentence text (the claim
            # column cost +11% of metrics' instructions on the tool's own Parquet: issue 30)
            claims = f"""SELECT 1 FROM ({_texts_source(loaded.con, loaded.paths, claims=True)})
            WHERE sentence IS NULL AND claim IS NOT NULL GROUP BY hs, hc
            HAVING min(hash(claim)) < max(hash(claim))"""
    else:
        return None
    threads = loaded.con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    loaded.con.execute("SET threads = 1")  # (two threads' hash tables: memory for no gain)
    found = loaded.con.execute(query).fetchone() or (
        claims is not None and loaded.con.execute(claims).fetchone()
    )
    loaded.con.execute(f"SET threads = {int(threads)}")
    return bool(found)


def _engine_trace_columns(loaded: _Rows) -> TraceColumns:
    """The rows as :class:`TraceColumns`: key codes in sorted value order, each row's place."""
    con = loaded.con
    got = con.execute('SELECT file, line, "offset", verdict FROM rows ORDER BY "row"').fetchnumpy()
    encoded = {n: _sorted_codes(con, n) for n in KEY_COLUMNS[:4]}
    present = sorted({int(v) for v in np.unique(got["verdict"])}, key=lambda i: VERDICTS[i].value)
    recode = np.zeros(len(VERDICTS), dtype=np.int32)
    recode[present] = np.arange(len(present), dtype=np.int32)
    encoded["verdict"] = (
        recode[np.asarray(got["verdict"], dtype=np.int64)],
        [VERDICTS[i].value for i in present],
    )
    origin = Origin(
        paths=loaded.paths,
        formats=tuple(f.value for f in loaded.formats),
        file=np.asarray(got["file"], dtype=np.int32),
        line=np.asarray(got["line"], dtype=np.int64),
        offset=np.asarray(got["offset"], dtype=np.int64),
    )
    return TraceColumns(encoded, origin)


def _sorted_codes(
    con: Any, name: str, table: str = "rows", order: str = '"row"'
) -> tuple[npt.NDArray[np.int32], list[str]]:
    """One string column as int32 codes in sorted value order (rows by ``order``), and the values.

    One column at a time, through a table of its distinct values joined back (DuckDB's
    window ranks over three or four string columns in one query held 0.2-0.6 GB more at
    10x paper scale).
    """
    values = _vocabulary(con, name, table)
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE vocab AS
        SELECT {name}, (row_number() OVER (ORDER BY {name}) - 1)::INTEGER AS code
        FROM (SELECT DISTINCT {name} FROM {table})"""
    )
    got = con.execute(
        f"SELECT v.code FROM {table} r JOIN vocab v USING ({name}) ORDER BY r.{order}"
    ).fetchnumpy()
    con.execute("DROP TABLE vocab")
    return np.asarray(got["code"], dtype=np.int32), values


#: Most rows a group's run may hold (GroupOrigin.run is 16 bits); longer ones are scattered.
_MAX_RUN = (1 << 16) - 1
#: Highest line a group's first row may have (GroupOrigin.line is 32 bits; past it the
#: groups are given up for the trace columns).
_MAX_LINE = (1 << 32) - 1


#: A sentence group's columns, aggregated over its rows (``source``: the rows' table).
_GROUP_AGGREGATES = f"""bit_or((1 << verdict)::UTINYINT) AS verdicts, min("row") AS first,
    max("row") AS last, count(*) AS n,
    {", ".join(f"count_if(verdict = {i}) AS v{i}" for i in range(len(VERDICTS)))}"""


def _make_groups(con: Any, source: str) -> None:
    """The groups table from ``source``, an aggregate of :data:`_GROUP_AGGREGATES`.

    Numbered in sorted order, each with its run (its rows' count where they are consecutive
    and at most :data:`_MAX_RUN`; else 0). A group's rows are in one file
    (:func:`_refuse_split_sentence`).
    """
    con.execute(
        f"""CREATE TEMP TABLE groups AS
        SELECT (row_number() OVER (ORDER BY system, question_id, sentence_id) - 1)::INTEGER
                AS g, *,
            CASE WHEN last - first + 1 = n AND n <= {_MAX_RUN}
                THEN n ELSE 0 END AS run
        FROM ({source})"""
    )


#: A row of :func:`_vouched_source` with a null key or a verdict that is not canonical.
_NULL_KEYS = " OR ".join(f"{n} IS NULL" for n in (*KEY_COLUMNS[:4], "verdict"))


def _vouched_source(
    items: Sequence[Path], *, unique: bool = True
) -> tuple[Any, str, list[int]] | None:
    """A connection, the tool's own Parquet files as one SQL source, each file's first row.

    The source's columns: file, offset (the 0-based row in the file), row, the key columns
    and the verdict's index into :data:`VERDICTS` (null when not canonical:
    :data:`_NULL_KEYS` finds it). None (nothing left open) for no file, a file without the
    marker, or, with ``unique``, a claim twice (then :func:`_load_vouched` raises the error
    naming both rows).
    """
    if not items or not all(map(engine.may_be_validated, items)):
        return None
    con = engine.connect()
    try:
        if not all(engine.is_validated(p, schema=TRACE_ENGINE_COLUMNS, con=con) for p in items):
            con.close()
            return None
        codes = " ".join(f"WHEN '{v.value}' THEN {i}" for i, v in enumerate(VERDICTS))
        parts, starts, total = [], [], 0
        for index, path in enumerate(items):
            check_regular_file(path)
            starts.append(total)
            parts.append(
                f"""SELECT {index} AS file, file_row_number AS "offset",
                {total} + file_row_number AS "row", system, question_id, sentence_id,
                claim_id, CASE verdict {codes} END AS verdict
                FROM read_parquet({engine.quoted(path)}, file_row_number = true)"""
            )
            meta = "SELECT num_rows FROM parquet_file_metadata(?)"
            total += int(con.execute(meta, [str(path)]).fetchall()[0][0])
        source = " UNION ALL ".join(parts)
        # a claim twice: two equal 64-bit hashes of (system, claim_id) (or a collision: the
        # exact check of _load_vouched then finds none), sorted by numpy: 8 bytes a row,
        # where DuckDB's distinct count held 160 MB and grouping the strings 0.4 GB more at
        # 10x paper scale
        if unique:
            got = con.execute(f"SELECT hash(system, claim_id) AS h FROM ({source})")
            ordered = np.asarray(got.fetchnumpy().pop("h"), dtype=np.uint64)
            ordered.sort()  # in place: no second copy
            if len(ordered) > 1 and bool((ordered[1:] == ordered[:-1]).any()):
                con.close()
                return None
    except BaseException:
        con.close()
        raise
    return con, source, starts


def _vouched_groups(items: Sequence[Path], formats: Sequence[Format]) -> _Rows | None:
    """The sentence groups of the tool's own Parquet files, straight from them, or None.

    What :func:`_load_vouched` and the groups of :func:`_engine_sentence_columns` give,
    without the ``rows`` table (issue 30: at paper scale appending the key columns to it
    cost a third of the engine's work in ``metrics``). Scans of the files: a hash of each
    ``(system, claim_id)``; the sorted distinct systems, questions and sentences (the
    vocabularies, held by the returned rows); the groups keyed by their codes in them, a
    table of integers (grouping and numbering the id strings themselves held 0.2 GB at 10x
    paper scale, where the integers hold a fifth of it). None where :func:`_load_vouched`
    must run instead: a file without the marker, a null key or a verdict that is not
    canonical (it gives None: the strict readers say where), a claim twice (it raises the
    error naming both rows).
    """
    found = _vouched_source(items)
    if found is None:
        return None
    con, source, starts = found
    try:
        _refuse_split_sentence(con, items, f"({source})", '"offset" + 1')
        for name in _SENTENCE_KEYS:  # the vocabularies, each value's code its sorted index
            con.execute(
                f"""CREATE TEMP TABLE vocab_{name} AS
                SELECT value, (row_number() OVER (ORDER BY value) - 1)::INTEGER AS code
                FROM (SELECT DISTINCT {name} AS value FROM ({source}) WHERE {name} IS NOT NULL)"""
            )
        joins = " ".join(
            f"LEFT JOIN vocab_{n} AS {a} ON {a}.value = r.{n}"
            for n, a in zip(_SENTENCE_KEYS, "sqt", strict=True)
        )
        # on one thread: two threads' hash tables and allocator caches held ~15 MB more at
        # 10x paper scale, for no less CPU (a worker's memory goes when it stops)
        threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
        con.execute("SET threads = 1")
        con.execute(
            f"""CREATE TEMP TABLE groups AS
            SELECT s.code AS s, q.code AS q, t.code AS t,
                bit_or((1 << verdict)::UTINYINT) AS verdicts, min("row")::INTEGER AS first,
                bool_or({_NULL_KEYS}) AS bad
            FROM ({source}) AS r {joins} GROUP BY ALL"""
        )
        con.execute(f"SET threads = {int(threads)}")
        # fetched once the groups are made (held by then, not while they are made)
        vocab = [_vocabulary(con, "value", f"vocab_{n}") for n in _SENTENCE_KEYS]
        for name in _SENTENCE_KEYS:
            con.execute(f"DROP TABLE vocab_{name}")
        if con.execute("SELECT bool_or(bad) FROM groups").fetchall()[0][0]:
            con.close()
            return None
        verdicts = con.execute(
            f"SELECT system, verdict, count(*) FROM ({source}) GROUP BY ALL"
        ).fetchall()
    except BaseException:
        con.close()
        raise
    return _Rows(con, tuple(items), tuple(formats), starts, vocab=vocab, verdicts=verdicts)


#: The columns of a sentence group's key, in sort order.
_SENTENCE_KEYS = ("system", "question_id", "sentence_id")


def _engine_sentence_columns(loaded: _Rows, *, locate: bool) -> SentenceColumns:
    """The rows as sentence groups: one per (system, question, sentence), sorted.

    The groups table is made here from the ``rows`` table, unless the loader made it
    (:func:`_vouched_groups`: groups keyed by codes in its vocabularies).
    """
    if loaded.vocab is not None:
        return _coded_sentence_columns(loaded)
    con = loaded.con
    source = f"SELECT system, question_id, sentence_id, {_GROUP_AGGREGATES} FROM rows"
    _make_groups(con, source + " GROUP BY ALL")
    (s_codes, systems), (q_codes, questions), (t_codes, sentences) = (
        _sorted_codes(con, n, "groups", "g") for n in _SENTENCE_KEYS
    )
    got = con.execute(
        "SELECT verdicts, first::INTEGER AS first, run FROM groups ORDER BY g"
    ).fetchnumpy()
    counts = np.zeros((len(systems), len(VERDICTS)), dtype=np.int64)
    sums = ", ".join(f"sum(v{i})" for i in range(len(VERDICTS)))
    for system, *per in con.execute(f"SELECT system, {sums} FROM groups GROUP BY ALL").fetchall():
        counts[bisect.bisect_left(systems, system)] = per
    rows = int(counts.sum())
    origin = _group_origin(loaded, np.asarray(got["run"], dtype=np.int64)) if locate else None
    return SentenceColumns(
        systems=systems,
        questions=questions,
        sentences=sentences,
        system=s_codes,
        question=q_codes,
        sentence=t_codes,
        verdicts=np.asarray(got["verdicts"], dtype=np.uint8),
        first=np.asarray(got["first"], dtype=np.int32),
        verdict_counts=counts,
        rows=rows,
        origin=origin,
    )


def _coded_sentence_columns(loaded: _Rows) -> SentenceColumns:
    """:func:`_engine_sentence_columns` of :func:`_vouched_groups`' coded groups.

    Fetched unordered and sorted by numpy on the codes (the order of the ids they code).
    """
    assert loaded.vocab is not None
    systems, questions, sentences = loaded.vocab
    cols = loaded.con.execute("SELECT s, q, t, verdicts, first FROM groups").fetchnumpy()
    loaded.con.close()  # the engine's memory let go before the sort (its caller closes it too)
    order = np.lexsort((cols["t"], cols["q"], cols["s"]))
    counts = np.zeros((len(systems), len(VERDICTS)), dtype=np.int64)
    for system, verdict, n in loaded.verdicts:
        counts[bisect.bisect_left(systems, system), verdict] = n
    return SentenceColumns(
        systems=systems,
        questions=questions,
        sentences=sentences,
        system=np.asarray(cols.pop("s"), dtype=np.int32)[order],
        question=np.asarray(cols.pop("q"), dtype=np.int32)[order],
        sentence=np.asarray(cols.pop("t"), dtype=np.int32)[order],
        verdicts=np.asarray(cols.pop("verdicts"), dtype=np.uint8)[order],
        first=np.asarray(cols.pop("first"), dtype=np.int32)[order],
        verdict_counts=counts,
        rows=int(counts.sum()),
    )


def _group_origin(loaded: _Rows, run: npt.NDArray[np.int64]) -> GroupOrigin:
    """Where each group's rows are: its first row's line and offset, its run, scattered rows."""
    con = loaded.con
    first = con.execute(
        """SELECT r.line, r."offset" FROM groups g JOIN rows r ON r."row" = g.first
        ORDER BY g.g"""
    ).fetchnumpy()
    if len(first["line"]) and int(np.max(first["line"])) > _MAX_LINE:
        raise OverflowError("a group's first line does not fit 32 bits")
    scattered = None
    if (run == 0).any():
        rows = con.execute(
            """SELECT g.g, r."row", r.file, r.line, r."offset" FROM groups g
            JOIN rows r USING (system, question_id, sentence_id)
            WHERE g.run = 0 ORDER BY g.g, r."row\""""
        ).fetchnumpy()
        scattered = ScatteredRows(
            group=np.asarray(rows["g"], dtype=np.int64),
            row=np.asarray(rows["row"], dtype=np.int64),
            file=np.asarray(rows["file"], dtype=np.int32),
            line=np.asarray(rows["line"], dtype=np.int64),
            offset=np.asarray(rows["offset"], dtype=np.int64),
        )
    return GroupOrigin(
        line=np.asarray(first["line"], dtype=np.uint32),
        offset=np.asarray(first["offset"], dtype=np.int64),
        run=run.astype(np.uint16),
        paths=loaded.paths,
        formats=tuple(f.value for f in loaded.formats),
        starts=np.array(loaded.starts, dtype=np.int64),
        scattered=scattered,
        vouched=frozenset(loaded.facts.vouched if loaded.facts is not None else ()),
    )


class ExactReaderNeededError(Exception):
    """A fast reader cannot vouch for this input: read it with the exact (object) reader."""


def iter_trace_claims(path: str | Path) -> Iterator[tuple[Any, Any]]:
    """Stream ``(trace, trace)`` records of a traces JSONL file for the dry run's columns.

    What :func:`failcodes.judge.colestimate.unit_sizes` reads (as it reads
    :func:`iter_disagreement_claims`): each record is the msgspec struct of a line the fast
    trace reader vouches for (every check :func:`failcodes.traceio.read_traces` makes), its
    verdict canonical. A line it cannot vouch for, a (system, claim_id) seen twice (checked
    on 64-bit hashes at the end, so a hash collision only costs the slow path) or a file that
    is not JSONL raises :class:`ExactReaderNeededError`, possibly after some records: the
    caller then reads the traces with ``read_traces``, which accepts them or names the bad
    line. Memory: one line, plus 8 bytes a trace.
    """
    source = Path(path)
    if source.suffix.lower() not in (".jsonl", ".ndjson") or not source.is_file():
        raise ExactReaderNeededError
    vouch = Voucher(rewritten=False)
    keys = KeyHashes(batch=1 << 62)  # settled once, at the end
    with source.open("rb", buffering=_SCAN_BUFFER) as fh:
        for lineno, raw in byte_lines(fh, source):
            body = raw[3:] if lineno == 1 and raw.startswith(UTF8_BOM) else raw
            if not body.strip():
                continue
            if b"\r" in body.rstrip(b"\r\n"):
                raise ExactReaderNeededError
            rec = _fast_line(body, vouch)
            if rec is None:
                raise ExactReaderNeededError
            keys.add(hash((rec.system, rec.claim_id)))
            yield rec, rec
    if keys.settle():
        raise ExactReaderNeededError


#: Rows of a Parquet file converted at a time (their passages' texts held that long).
_BATCH_ROWS = 1024


def _text_cells_in(col: Any, values: frozenset[str] | set[str]) -> Any:
    """Whether each cell of a text column is one of ``values``.

    A column of another type than text (integer ids) holds none: all false.
    """
    import pyarrow.compute as pc

    pa, _ = pyarrow_modules()
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return pa.array([False] * len(col), pa.bool_())
    return pc.is_in(col, value_set=pa.array(sorted(values), col.type))


def _no_id_cells(col: Any) -> Any:
    """Whether each cell of an id column is no id (``#N/A``, ``nan``: :data:`NO_ID`)."""
    return _text_cells_in(col, NO_ID)


def _excel_error_cells(col: Any) -> Any:
    """Whether each cell of a text column is Excel's error value (:data:`CELL_ERRORS`)."""
    return _text_cells_in(col, CELL_ERRORS)


def _shown_exponent_ids(batch: Any) -> bool:
    """Whether an id of a Parquet batch is in scientific notation (``1.23457E+11``)."""
    import pyarrow.compute as pc

    pa, _ = pyarrow_modules()
    names = batch.schema.names
    return any(
        pc.any(pc.match_substring_regex(batch.column(n), f"^{SHOWN_EXPONENT}$")).as_py()
        for n in NUMBER_ID_FIELDS
        if n in names
        and (
            pa.types.is_string(batch.column(n).type)
            or pa.types.is_large_string(batch.column(n).type)
        )
    )


def iter_parquet_trace_claims(path: str | Path) -> Iterator[tuple[Any, Any]]:
    """:func:`iter_trace_claims` of a traces Parquet file (a study's ``data/*.traces.parquet``).

    pyarrow reads the rows a batch at a time and msgspec converts each to the struct a JSONL
    line decodes to (strict types, every required field given, no unknown one), which the
    ingest's :class:`~failcodes.tracelines.Voucher` then vouches for as it does a converted
    row (no empty text: the model reads an optional one as missing; a verdict the reader
    knows, made canonical); the checks a JSON text would have had are made here: no blank or
    padded id, ranks distinct, and, for a Parquet double, a finite score. A (system,
    claim_id) given twice is found on 64-bit hashes at the end. Anything else, or a file
    pyarrow cannot read, raises :class:`ExactReaderNeededError`, possibly after some records:
    the caller then reads the traces with ``read_traces``, which accepts them with the same
    values or names the bad row. Memory: one batch of rows, plus 8 bytes a trace.
    """
    import pyarrow.compute as pc

    source = Path(path)
    if source.suffix.lower() not in (".parquet", ".pq") or not source.is_file():
        raise ExactReaderNeededError
    pa, _ = pyarrow_modules()
    vouch = Voucher(rewritten=False)
    convert, kind = msgspec.convert, vouch.type
    keys = KeyHashes(batch=1 << 62)  # settled once, at the end
    try:
        pf = open_parquet(source)
        names = pf.schema_arrow.names
        if len(set(names)) != len(names) or not set(names) <= Trace.model_fields.keys():
            raise ExactReaderNeededError  # a repeated or unknown column: the reader names it
        for batch in pf.iter_batches(batch_size=_BATCH_ROWS, use_threads=False):
            if _shown_exponent_ids(batch) or any(
                pc.any(_no_id_cells(batch.column(n))).as_py() for n in TRACE_IDS if n in names
            ):
                raise ExactReaderNeededError  # 1.23457E+11, '#N/A': the reader refuses it
            for row in batch.to_pylist():
                rec = vouch.vouch(convert(row, kind), None)
                if rec is None:
                    raise ExactReaderNeededError
                s, q, t, c = rec.system, rec.question_id, rec.sentence_id, rec.claim_id
                if not (s and q and t and c) or (s, q, t, c) != (
                    s.strip(),
                    q.strip(),
                    t.strip(),
                    c.strip(),
                ):
                    raise ExactReaderNeededError  # a blank or padded id: the reader's error
                passages = rec.passages
                if passages and (
                    len(set(map(_RANK_OF, passages))) != len(passages)
                    or not all(p.score is None or math.isfinite(p.score) for p in passages)
                ):
                    raise ExactReaderNeededError
                keys.add(hash((s, c)))
                yield rec, rec
    except (InputError, msgspec.ValidationError, pa.ArrowException, OSError):
        raise ExactReaderNeededError from None
    if keys.settle():
        raise ExactReaderNeededError
