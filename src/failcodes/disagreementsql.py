r"""Disagreements built by the engine from the tool's own Parquet traces (issue 30).

The disagreements stream (:func:`failcodes.disagreementio.stream_disagreements`) fetches each
disagreement's claims as Python values and encodes every claim record, passages included
(~500 MB of JSON at paper scale): its CPU is spread over decoding, Python objects, per-row
checks and encoding. For traces the tool wrote itself (Parquet whose footer carries the
validated marker, :func:`failcodes.engine.is_validated`) DuckDB encodes the claim records
instead and joins them to the disagreements; Python gives each disagreement's head (its
label and id, ~26,000 at paper scale) and spaces the compact lines DuckDB returns as
``json.dumps`` does (``msgspec.json.format``, in C). Trace JSONL files, which the strict scan
vouched for, take the same heads: their claims' lines are read again by byte offset, each
once for every mapping (:func:`_line_rows`), not once per disagreement as the stream does.

The lines are byte-identical to the stream's (``json.dumps(record, ensure_ascii=False)``):
DuckDB's ``to_json`` escapes strings as the stdlib does but for the control characters it
writes with upper-case hex (``\\u001F``), and writes a float as ``repr`` does when it is 0 or
its magnitude is in [1e-4, 1e16) (checked on 600,000 doubles of every magnitude); a line
with such an escape or another float is decoded and encoded again by the stdlib.

A Parquet output of the tool's own Parquet is built as Arrow columns (:func:`_write_tables`):
the needed claim rows are read once, in file order, into a scratch Arrow file, then taken
from it 2,000 disagreements at a time in output order, each such group one row group as the
stream writes it (``pyarrow``'s writer, the same schema: the same bytes). Memory follows a
group, whatever the output order (at 10x the paper scale, copies of the questions with
suffixed ids, their rows interleave in it: 640 MB peak against 504 MB at 1x).

A chunk is the disagreements of every mapping whose rows fall within a window of a file
(:data:`_WINDOW_ROWS`): DuckDB reads that window's row groups once for all mappings (each
mapping's lines after the first's wait in a temporary file). Memory follows a chunk (its
lines, ~40 MB) and DuckDB's limit. A row the validated writer cannot have written (an empty
text the models read as missing, a NaN score, a rank below 1, an unknown verdict or evidence
source, a null claim or passage list), a row gone from the file, or an engine error leaves
nothing behind: the stream then writes the file, and says the exact one-line error if any.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import json
import operator
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _json_string  # json.dumps' own
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from failcodes import engine
from failcodes.fileio import AtomicBatch, temp_path
from failcodes.tableio import Format, pyarrow_modules, write_in_batch
from failcodes.traces import EvidenceSource
from failcodes.verdicts import Verdict

if TYPE_CHECKING:
    from failcodes.disagreements import GroupSelection
    from failcodes.tracecols import SentenceColumns

#: Most claim rows of a chunk, all mappings (its lines: ~4 kB a claim).
_CHUNK_ROWS = 16_384
#: A chunk's rows lie within this many consecutive rows of a file (the rows DuckDB reads).
_WINDOW_ROWS = 16_384
#: Claim rows the engine hands over at a time (their JSON text: ~12 MB at paper scale).
_FETCH_ROWS = 2_048
#: Write buffer of the output.
_WRITE_BUFFER = 1 << 20
#: Sentence groups whose JSONL lines are decoded at a time (a chunk's are up to 16,384 lines).
_LINE_GROUPS = 256
#: A disagreement's first claim row (the order of a chunk's reads).
_FIRST = operator.attrgetter("first")
#: A mapping's disagreement numbers start at its index times this (output order).
_MAPPING_STRIDE = 1 << 40


class _DeclinedError(Exception):
    """The engine cannot vouch for these lines: the stream writes the file."""


def _quoted_list(values: Iterable[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


_VERDICTS = _quoted_list(v.value for v in Verdict)
_SOURCES = _quoted_list(e.value for e in EvidenceSource)

#: A passage the validated writer cannot have written (the stream takes the model's steps).
_ODD_PASSAGE = (
    "p.passage_id IS NULL OR p.text IS NULL OR p.rank IS NULL OR p.rank < 1 "
    "OR p.passage_id = '' OR p.text = '' OR p.source = '' OR p.title = '' "
    "OR isnan(p.score) OR isinf(p.score) "
    f"OR (p.gold_verdict IS NOT NULL AND p.gold_verdict NOT IN ({_VERDICTS}))"
)
#: Per row, the worst of its passages: 2 one the writer cannot have written, 1 a score DuckDB
#: writes unlike ``repr`` (not 0 and its magnitude outside [1e-4, 1e16)), else 0 (one pass).
_PASSAGES_CODE = (
    "coalesce(list_max(list_transform(t.passages, lambda p: CASE "
    f"WHEN coalesce({_ODD_PASSAGE}, false) THEN 2 "
    "WHEN p.score IS NOT NULL AND p.score <> 0 "
    "AND NOT (abs(p.score) >= 1e-4 AND abs(p.score) < 1e16) THEN 1 ELSE 0 END)), 0)"
)
#: A trace row the validated writer cannot have written.
_ODD_ROW = (
    f"t.claim IS NULL OR t.passages IS NULL OR t.verdict NOT IN ({_VERDICTS}) "
    "OR t.claim = '' OR t.sentence = '' OR t.raw_verdict = '' OR t.reasoning = '' "
    "OR t.verifier = '' OR t.retriever = '' OR t.evidence_source = '' "
    f"OR (t.evidence_source IS NOT NULL AND t.evidence_source NOT IN ({_SOURCES}))"
)
#: The evidence source of a trace (declared, else derived as Trace.evidence derives it).
_EVIDENCE = (
    "coalesce(t.evidence_source, CASE WHEN len(t.passages) > 0 OR t.retriever IS NOT NULL "
    f"THEN '{EvidenceSource.RETRIEVED.value}' ELSE '{EvidenceSource.NONE.value}' END)"
)


@dataclass(slots=True)
class _Head:
    """A disagreement's own fields (its label's, no claim's) and where its claims are."""

    mapping: int
    first: int  # its first claim's file row
    rows: int  # its claims (consecutive rows)
    group: int  # its sentence group (-1: none)
    uid: str
    system: str
    question: str
    sentence: str  # its sentence id
    has_error: bool  # its label's
    predicted: bool
    rationale: str | None
    severity: str | None
    annotator: str | None
    text: str | None  # its label's sentence (when no claim has one)


@dataclass(frozen=True)
class _Mapping:
    """What a disagreement line says of its mapping."""

    name: str
    verdicts: list[str]  # the verdicts it counts as error, as the line lists them
    errors: frozenset[str]

    @classmethod
    def of(cls, selection: GroupSelection) -> _Mapping:
        """The mapping of a selection."""
        m = selection.mapping
        return cls(m.name, m.verdict_names(), frozenset(v.value for v in m.error_verdicts))


@dataclass
class _Chunk:
    """Disagreements of every mapping, in output order each, their claims in one file window."""

    heads: list[_Head] = field(default_factory=list)
    file: int = -1
    lo: int = 0
    hi: int = -1

    def add(self, head: _Head, file: int) -> None:
        self.heads.append(head)
        if head.rows:
            last = head.first + head.rows - 1
            if self.file < 0:
                self.file, self.lo, self.hi = file, head.first, last
            self.lo, self.hi = min(self.lo, head.first), max(self.hi, last)

    def need(self) -> Any:
        """The file rows of the chunk's claims, sorted, each once."""
        runs = [np.arange(h.first, h.first + h.rows) for h in self.heads if h.rows]
        return np.unique(np.concatenate(runs)) if runs else np.zeros(0, dtype=np.int64)


#: Where a disagreement's claims are: (file, first file row, rows, group); (-1, 0, 0, -1): none.
_Where = tuple[int, int, int, int]


class _Stream:
    """One mapping's disagreements in output order, each with where its claims are.

    The order and the fields of :meth:`GroupSelection.__iter__ <failcodes.disagreements.
    GroupSelection.__iter__>` and :func:`~failcodes.disagreements.disagreement_json`, read
    from the selection's arrays and the labels' columns: no label or record built (~26,000
    of them at paper scale cost ~1 CPU-s built).
    """

    def __init__(self, selection: GroupSelection, m: int, starts: Sequence[int]) -> None:
        self.selection = selection
        self.m = m
        self.mapping = selection.mapping.name
        self.starts = starts
        self.items = heapq.merge(self._groups(), self._missing(), key=operator.itemgetter(0))
        self.next: tuple[tuple[str, str, str, str], bool, _Where] | None = None
        self._advance()

    def _groups(self) -> Iterator[tuple[tuple[str, str, str, str], bool, _Where]]:
        if self.selection.cols.origin is None:
            raise _DeclinedError
        starts = self.starts
        for g, pred, run, first, system, question, sentence in self.selection.located():
            if not run:
                raise _DeclinedError  # (scattered groups are the stream's)
            file = bisect.bisect_right(starts, first) - 1
            if file + 1 < len(starts) and first + run > starts[file + 1]:
                raise _DeclinedError
            yield self._key(system, question, sentence), pred, (file, first - starts[file], run, g)

    def _missing(self) -> Iterator[tuple[tuple[str, str, str, str], bool, _Where]]:
        for miss in self.selection.missing:
            yield self._key(miss.system, miss.question_id, miss.sentence_id), False, (-1, 0, 0, -1)

    def _key(self, system: str, question: str, sentence: str) -> tuple[str, str, str, str]:
        """The output order (system, question, sentence, id) of a sentence's disagreement."""
        from failcodes.disagreements import disagreement_id
        from failcodes.metrics import Level

        uid = disagreement_id(system, self.mapping, Level.SENTENCE, question, sentence, None)
        return system, question, sentence, uid

    def _advance(self) -> None:
        self.next = next(self.items, None)

    def take(self, chunk: _Chunk) -> None:
        """Move the next disagreement into ``chunk``."""
        head, file = self._head()
        chunk.add(head, file)
        self._advance()

    def heads(self) -> Iterator[_Head]:
        """The disagreements one after another, ``first`` a row number across the files."""
        while self.next is not None:
            head, file = self._head()
            if head.rows:
                head.first += self.starts[file]
            yield head
            self._advance()

    def _head(self) -> tuple[_Head, int]:
        """The next disagreement and the file of its claims."""
        assert self.next is not None
        (system, question, sentence, uid), pred, (file, first, rows, group) = self.next
        has_error, rationale, severity, annotator, text = self.selection.index.sentence_fields(
            sentence, _LABEL_FIELDS
        )
        head = _Head(
            self.m,
            first,
            rows,
            group,
            uid,
            system,
            question,
            sentence,
            bool(has_error),
            pred,
            rationale,
            severity,
            annotator,
            text,
        )
        return head, file


#: The label fields a disagreement line carries.
_LABEL_FIELDS = ("has_error", "rationale", "severity", "annotator", "sentence")


def _text(value: str | None) -> str:
    """A string (or None) as ``json.dumps(value, ensure_ascii=False)`` writes it."""
    return "null" if value is None else _json_string(value)


def _chunks(streams: Sequence[_Stream]) -> Iterator[_Chunk]:
    """Chunks of every mapping's disagreements, each within a window of one file's rows."""
    while any(s.next is not None for s in streams):
        chunk = _Chunk()
        placed = [s.next[2][:2] for s in streams if s.next is not None and s.next[2][2]]
        window = min(placed, default=(-1, 0))
        taken = 0
        for stream in streams:
            while stream.next is not None and taken < _CHUNK_ROWS:
                file, first, rows, _ = stream.next[2]
                if rows and (file != window[0] or first + rows > window[1] + _WINDOW_ROWS):
                    break
                stream.take(chunk)
                taken += rows
        if not chunk.heads:  # (a run longer than the window): it alone
            next(s for s in streams if s.next is not None).take(chunk)
        yield chunk


def _query(path: Path, lo: int, hi: int) -> str:
    """The SQL of a window's needed rows (``need`` registered): compact JSON parts, checks."""
    return f"""
        SELECT *, contains(pre, '\\u00') AS pre_escaped, contains(post, '\\u00') AS post_escaped
        FROM (SELECT t.file_row_number AS frow, t.sentence, t.verdict, t.claim_id,
            to_json({{'claim_id': t.claim_id, 'claim': t.claim, 'verdict': t.verdict,
                'raw_verdict': t.raw_verdict}})::VARCHAR AS pre,
            to_json({{'reasoning': t.reasoning, 'verifier': t.verifier,
                'retriever': t.retriever, 'passages': t.passages,
                'evidence_source': {_EVIDENCE}}})::VARCHAR AS post,
            coalesce({_ODD_ROW}, false) AS odd, {_PASSAGES_CODE} AS code
        FROM read_parquet({engine.quoted(path)}, file_row_number = true) t
        WHERE t.file_row_number BETWEEN {lo} AND {hi}
            AND t.file_row_number IN (SELECT frow FROM need))
        ORDER BY frow"""


@dataclass
class _Rows:
    """A window's needed rows as ``json.dumps`` text pieces, in file row order."""

    frow: Any  # numpy int64, sorted
    sentence: list[str | None]
    verdict: list[str]
    cid: list[bytes]  # the claim id's JSON
    pre: list[bytes]  # '{"claim_id": ..., "raw_verdict": ...' (no closing brace)
    post: list[bytes]  # '"reasoning": ..., "evidence_source": ...}' (no opening brace)


def _rows(con: Any, path: Path, chunk: _Chunk) -> _Rows:
    """The chunk's claim rows read and encoded by the engine (raises :class:`_DeclinedError`).

    Fetched a batch of :data:`_FETCH_ROWS` at a time: the whole chunk as one Arrow table (its
    claims' JSON text, ~100 MB at paper scale) was memory the engine filled anew for every
    chunk (page faults: system time).
    """
    pa, _ = pyarrow_modules()
    need = chunk.need()
    if not len(need):
        return _Rows(need, [], [], [], [], [])
    con.register("need", pa.table({"frow": need}))
    try:
        reader = con.sql(_query(path, chunk.lo, chunk.hi)).to_arrow_reader(_FETCH_ROWS)
        parts = [_batch_rows(pa.Table.from_batches([batch])) for batch in reader]
    finally:
        con.unregister("need")
    frow = np.concatenate([p.frow for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    if not np.array_equal(frow, need):
        raise _DeclinedError  # a row gone from the file: the stream says so
    joined = (
        list(itertools.chain.from_iterable(getattr(p, name) for p in parts))
        for name in ("sentence", "verdict", "cid", "pre", "post")
    )
    return _Rows(frow, *joined)


def _batch_rows(got: Any) -> _Rows:
    """One fetched batch's rows (an Arrow table of :func:`_query`'s columns) as pieces."""
    code = got.column("code").to_numpy()
    if bool(got.column("odd").to_numpy().any()) or bool((code == 2).any()):
        raise _DeclinedError  # a row the validated writer cannot have written: the stream's
    pre = _spaced(got.column("pre"), (~got.column("pre_escaped").to_numpy()).tolist())
    post_exact = (code == 0) & ~got.column("post_escaped").to_numpy()
    post = _spaced(got.column("post"), post_exact.tolist())
    return _Rows(
        frow=got.column("frow").to_numpy(),
        sentence=got.column("sentence").to_pylist(),
        verdict=got.column("verdict").to_pylist(),
        cid=[_text(c).encode("utf-8") for c in got.column("claim_id").to_pylist()],
        pre=[p[:-1] for p in pre],
        post=[p[1:] for p in post],
    )


def _line_rows(columns: SentenceColumns, chunk: _Chunk) -> _Rows:
    """The chunk's claim rows from JSONL lines the scan vouched for, each line read once.

    The lines are those the stream reads (:func:`~failcodes.columnar.gather_runs`, a few
    hundred groups at a time), each group's once for every mapping. Each decoded line (its
    struct: the trace's fields in the model's order, nulls written) is encoded once by
    msgspec and spaced as ``json.dumps`` spaces (``msgspec.json.format``); the pieces are cut
    from it (the claim record's fields but its sentence) where that is exact (no escape,
    every score printed as ``repr``), else written by the stdlib. A line msgspec cannot vouch
    for is the stream's (raises :class:`_DeclinedError`).
    """
    import msgspec

    from failcodes.columnar import gather_runs
    from failcodes.jsonio import repr_scores, struct_fields

    encode, spaced = msgspec.json.encode, msgspec.json.format
    heads = sorted({h.first: h for h in chunk.heads if h.rows}.values(), key=_FIRST)
    origin = columns.origin
    assert origin is not None
    out: list[list[Any]] = [[], [], [], [], []]
    for at in range(0, len(heads), _LINE_GROUPS):
        groups = [h.group for h in heads[at : at + _LINE_GROUPS]]
        files, lines, offsets, counts = origin.where(groups, columns.first)
        runs = gather_runs(
            origin.paths, origin.formats, files, lines, offsets, counts, {}, views=False
        )
        t: Any  # (the vouched struct of the line)
        for t, passages in itertools.chain.from_iterable(runs):
            if passages is None:
                raise _DeclinedError  # a line the model reads: the stream's
            if t.evidence_source is None:  # as Trace.evidence derives it
                retrieved = passages or t.retriever is not None
                source = EvidenceSource.RETRIEVED if retrieved else EvidenceSource.NONE
                t.evidence_source = source.value
            text = encode(t)
            if b"\\" not in text and repr_scores(passages):
                # '{"system": ..., "claim_id": ..., "sentence": ..., "verdict": ...}'
                line = spaced(text, indent=0)
                cid = line.index(b', "claim_id": ')
                sentence = line.index(b', "sentence": ', cid)
                verdict = line.index(b', "verdict": ', sentence)
                reasoning = line.index(b', "reasoning": ', verdict)
                pre = b"{" + line[cid + 2 : sentence] + line[verdict:reasoning]
                post = line[reasoning + 2 :]
            else:
                fields = msgspec.structs.asdict(t).items()
                record = {k: v for k, v in fields if k not in _HEAD_FIELDS}
                whole = json.dumps(record, ensure_ascii=False, default=struct_fields)
                cut = whole.index(', "reasoning": ')
                pre, post = whole[:cut].encode("utf-8"), whole[cut + 2 :].encode("utf-8")
            claim_id = _json_string(t.claim_id).encode("utf-8")
            for column, value in zip(
                out, (t.sentence, t.verdict, claim_id, pre, post), strict=True
            ):
                column.append(value)
    rows = [h.first + i for h in heads for i in range(h.rows)]
    return _Rows(np.array(rows, dtype=np.int64), *out)


#: A trace's fields a claim record leaves out (the others are its fields, in its order).
_HEAD_FIELDS = frozenset({"system", "question_id", "sentence_id", "sentence"})


def _spaced(column: Any, exact: Sequence[bool]) -> list[bytes]:
    r"""Compact JSON objects as ``json.dumps`` writes them (``msgspec.json.format``, in C).

    One DuckDB cannot write exactly (not ``exact``: a float unlike ``repr``, a ``\\u00``
    escape written with upper-case hex) is decoded and encoded again by the stdlib.
    """
    import msgspec

    spaced = msgspec.json.format
    out: list[bytes] = []
    for arr in column.chunks:
        if not len(arr):
            continue
        _, offsets, data = arr.buffers()
        ends = np.frombuffer(offsets, dtype=np.int32)[arr.offset : arr.offset + len(arr) + 1]
        view = memoryview(data)  # Arrow's buffer itself, not copied
        base = len(out)
        for i, (lo, hi) in enumerate(zip(ends[:-1].tolist(), ends[1:].tolist(), strict=True)):
            if exact[base + i]:
                out.append(spaced(view[lo:hi], indent=0))
            else:
                again = json.dumps(json.loads(bytes(view[lo:hi])), ensure_ascii=False)
                out.append(again.encode("utf-8"))
    return out


def _column_query(path: Path, lo: int, hi: int) -> str:
    """The SQL of a window's needed rows (``need`` registered) as claim record columns."""
    return f"""
        SELECT t.file_row_number AS frow, t.sentence, t.claim_id, t.claim, t.verdict,
            t.raw_verdict, t.reasoning, t.verifier, t.retriever, t.passages,
            {_EVIDENCE} AS evidence_source,
            coalesce({_ODD_ROW}, false) OR {_PASSAGES_CODE} = 2 AS odd
        FROM read_parquet({engine.quoted(path)}, file_row_number = true) t
        WHERE t.file_row_number BETWEEN {lo} AND {hi}
            AND t.file_row_number IN (SELECT frow FROM need)
        ORDER BY frow"""


#: Disagreements a row group of the Parquet output holds (the stream's, as it writes them).
_RECORDS_PER_GROUP = 2_000
#: Claim rows a batch of the scratch file holds.
_SPILL_ROWS = 8_192


def _needed_rows(columns: SentenceColumns, items: Sequence[GroupSelection]) -> Any:
    """The rows (numbered across the files) of every disagreement's claims, sorted, once.

    Raises :class:`_DeclinedError` as :class:`_Stream` does: claims not one run of rows of
    one file.
    """
    origin = columns.origin
    assert origin is not None
    starts = np.asarray(origin.starts, dtype=np.int64)
    bounds = np.append(starts[1:], np.iinfo(np.int64).max)
    runs = []
    for sel in items:
        first = columns.first[sel.groups].astype(np.int64)
        count = origin.run[sel.groups].astype(np.int64)
        file = np.searchsorted(starts, first, side="right") - 1
        if (count == 0).any() or (first + count > bounds[file]).any():
            raise _DeclinedError  # (scattered groups, a group over two files: the stream's)
        ends = np.cumsum(count)
        runs.append(
            np.repeat(first - (ends - count), count) + np.arange(int(ends[-1]) if len(ends) else 0)
        )
    return np.unique(np.concatenate(runs)) if runs else np.zeros(0, dtype=np.int64)


def _spill(con: Any, paths: Sequence[Path], starts: Sequence[int], need: Any, out: Path) -> None:
    """Write the needed rows' claim columns to ``out`` (an Arrow file), in order.

    Each file is read once, a window of :data:`_WINDOW_ROWS` rows a query. Raises
    :class:`_DeclinedError` for a row the validated writer cannot have written or a row
    gone from the file (the stream then says so).
    """
    pa, _ = pyarrow_modules()
    writer = None
    edges = np.searchsorted(need, [*starts, np.iinfo(np.int64).max])
    try:
        with pa.OSFile(str(out), "wb") as sink:
            for f, path in enumerate(paths):
                rows = need[edges[f] : edges[f + 1]] - starts[f]
                at = 0
                while at < len(rows):
                    end = int(np.searchsorted(rows, rows[at] + _WINDOW_ROWS))
                    window = rows[at : min(end, at + _CHUNK_ROWS)]
                    table = _column_rows(con, path, window)
                    if writer is None:
                        schema = table.schema
                        writer = pa.ipc.new_file(sink, schema)
                    writer.write_table(table.cast(schema), max_chunksize=_SPILL_ROWS)
                    at += len(window)
            if writer is not None:
                writer.close()
    except pa.ArrowException:
        raise _DeclinedError from None  # (files of other column types: the stream's)


def _column_rows(con: Any, path: Path, window: Any) -> Any:
    """The claim columns of a window's rows (file row numbers, ascending), as one table."""
    pa, _ = pyarrow_modules()
    con.register("need", pa.table({"frow": window}))
    try:
        got = con.sql(_column_query(path, int(window[0]), int(window[-1])))
        table = got.to_arrow_reader(_FETCH_ROWS).read_all()
    finally:
        con.unregister("need")
    if bool(np.asarray(table.column("odd")).any()):
        raise _DeclinedError
    if not np.array_equal(np.asarray(table.column("frow")), window):
        raise _DeclinedError  # a row gone from the file: the stream says so
    return table.drop_columns(["frow", "odd"])


class _Spilled:
    """The spilled claim rows (an Arrow file), mapped into memory a group at a time.

    Only the pages of the rows a group takes are read; they are copied out and the file
    unmapped (mapped pages count in the process's memory): any output order, the order of
    the file or not, costs the rows it takes.
    """

    def __init__(self, path: Path, need: Any) -> None:
        self.path, self.need = path, need

    def claims(self, heads: Sequence[_Head]) -> Any:
        """The heads' claim rows one after another (a table), or None if they have none."""
        pa, _ = pyarrow_modules()
        with_rows = [h for h in heads if h.rows]
        if not with_rows:
            return None
        at = np.searchsorted(self.need, [h.first for h in with_rows]).tolist()
        with pa.memory_map(str(self.path)) as source:
            table = pa.ipc.open_file(source).read_all()
            pieces = [table.slice(a, h.rows) for a, h in zip(at, with_rows, strict=True)]
            got = pa.concat_tables(pieces)
            # copied out of the map (``concat_arrays`` copies one array too): it is closed
            columns = [pa.concat_arrays(column.chunks) for column in got.columns]
        return pa.Table.from_arrays(columns, schema=got.schema)


def _write_tables(
    con: Any, columns: SentenceColumns, scratch: Path, items: Sequence[GroupSelection]
) -> int:
    """Write the selections' disagreements to ``scratch`` as Parquet; the count.

    The claims' rows are read in file order once (whatever the output order: copies of the
    same questions, their ids suffixed, interleave in it) into a scratch Arrow file, then
    taken from it :data:`_RECORDS_PER_GROUP` disagreements at a time in output order, each
    such group one row group as the stream writes it (the last the rest, empty too).
    """
    from failcodes.disagreements import Disagreement
    from failcodes.tableio import arrow_schema

    origin = columns.origin
    assert origin is not None
    paths, starts = origin.paths, [int(s) for s in origin.starts]
    pa, pq = pyarrow_modules()
    schema = arrow_schema(Disagreement)
    maps = [_Mapping.of(sel) for sel in items]
    need = _needed_rows(columns, items)
    count = 0
    spill = temp_path(scratch)
    try:
        _spill(con, paths, starts, need, spill)
        con.close()  # (the engine's memory let go before the row groups are built)
        spilled = _Spilled(spill, need)
        streams = [_Stream(sel, m, starts) for m, sel in enumerate(items)]
        heads = itertools.chain.from_iterable(s.heads() for s in streams)
        with pq.ParquetWriter(scratch, schema) as writer:
            while group := list(itertools.islice(heads, _RECORDS_PER_GROUP)):
                claims = spilled.claims(group)
                at = 0
                parts = []
                for m, run in itertools.groupby(group, key=_MAPPING):
                    hs = list(run)
                    n = sum(h.rows for h in hs)
                    part = claims.slice(at, n) if n else None
                    parts.append(_mapping_table(schema, maps[m], hs, part))
                    at += n
                writer.write_table(pa.concat_tables(parts).combine_chunks())
                count += len(group)
            if count % _RECORDS_PER_GROUP == 0:  # (the stream's last write: what is left)
                writer.write_table(schema.empty_table())
    finally:
        spill.unlink(missing_ok=True)
    return count


def _mapping_table(schema: Any, mapping: _Mapping, heads: list[_Head], taken: Any) -> Any:
    """One mapping's disagreements as an Arrow table of the output's ``schema``.

    ``taken`` holds their claims' rows one after another (the query's columns). The records
    :func:`~failcodes.disagreements.disagreement_json` builds, as columns: each claim record
    is its row's columns with its mapped flag and its label's (no Python value per claim or
    passage); a disagreement's sentence is its first claim's that has one, else its label's.
    """
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    pa, _ = pyarrow_modules()
    n = len(heads)
    counts = np.fromiter((h.rows for h in heads), dtype=np.int64, count=n)
    ends = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ends[1:])
    lab = [h.has_error for h in heads]
    sentence = [h.text for h in heads]
    claim_type = schema.field("claims").type
    fields = list(claim_type.value_type)
    if taken is not None:
        errors = pa.array(sorted(mapping.errors), pa.string())
        maps = _one(pc.is_in(taken.column("verdict"), value_set=errors))
        columns = [taken.column(name) for name in _CLAIM_COLUMNS]
        columns[4:6] = [maps, pa.array(np.repeat(np.array(lab, dtype=bool), counts))]
        claims = pa.StructArray.from_arrays(
            [_one(c).cast(f.type) for c, f in zip(columns, fields, strict=True)], fields=fields
        )
        flagged = np.zeros(len(taken) + 1, dtype=np.int64)
        np.cumsum(np.asarray(maps), out=flagged[1:])
        error_ids = _one(taken.column("claim_id")).filter(maps)
        error_ends = flagged[ends]
        found = taken.column("sentence").to_pylist()
        for i in range(n):
            given = next((x for x in found[ends[i] : ends[i + 1]] if x), None)
            if given is not None:
                sentence[i] = given
    else:
        claims = pa.array([], type=claim_type.value_type)
        error_ids = pa.array([], type=pa.string())
        error_ends = np.zeros(n + 1, dtype=np.int64)
    values = {
        "id": [h.uid for h in heads],
        "kind": [_KIND[x] for x in lab],
        "level": ["sentence"] * n,
        "system": [h.system for h in heads],
        "mapping": [mapping.name] * n,
        "error_verdicts": [mapping.verdicts] * n,
        "question_id": [h.question for h in heads],
        "sentence_id": [h.sentence for h in heads],
        "sentence": sentence,
        "claim_id": [None] * n,
        "label_has_error": lab,
        "predicted_error": [h.predicted for h in heads],
        "label_rationale": [h.rationale for h in heads],
        "label_severity": [h.severity for h in heads],
        "label_annotator": [h.annotator for h in heads],
    }
    arrays = [pa.array(values[f.name], type=f.type) for f in schema if f.name in values]
    arrays.append(_lists(pa, ends, claims, claim_type))
    arrays.append(_lists(pa, error_ends, error_ids, schema.field("error_claim_ids").type))
    return pa.Table.from_arrays(arrays, schema=schema)


#: A disagreement's kind by its label.
_KIND = {True: "FN", False: "FP"}
#: A head's mapping (a group's heads come a mapping at a time).
_MAPPING = operator.attrgetter("mapping")
#: The claim record's fields as the query's columns (``maps_to_error`` and
#: ``label_has_error``, the 5th and 6th, are put in their places).
_CLAIM_COLUMNS = (
    "claim_id",
    "claim",
    "verdict",
    "raw_verdict",
    "verdict",
    "verdict",
    "reasoning",
    "verifier",
    "retriever",
    "passages",
    "evidence_source",
)


def _one(column: Any) -> Any:
    """A chunked Arrow column as one array (an array as it is)."""
    return column.combine_chunks() if hasattr(column, "combine_chunks") else column


def _lists(pa: Any, ends: Any, values: Any, kind: Any) -> Any:
    """A list array of ``kind``: item ``i`` is ``values[ends[i]:ends[i + 1]]``."""
    return pa.ListArray.from_arrays(pa.array(ends.astype(np.int32)), values, type=kind)


_MAPS = {
    True: b', "maps_to_error": true, "label_has_error": ',
    False: b', "maps_to_error": false, "label_has_error": ',
}


def _write_chunk(
    sinks: Sequence[IO[bytes]], chunk: _Chunk, rows: _Rows, maps: Sequence[_Mapping]
) -> None:
    """Write each disagreement's line, assembled from its head and its claims' pieces."""
    frow = rows.frow
    verdicts = [json.dumps(m.verdicts, ensure_ascii=False) for m in maps]
    for h in chunk.heads:
        lab = b"true" if h.has_error else b"false"
        mapping = maps[h.mapping]
        before = (
            f'{{"id": "{h.uid}", "kind": "{"FN" if h.has_error else "FP"}", '
            f'"level": "sentence", "system": {_text(h.system)}, '
            f'"mapping": {_text(mapping.name)}, "error_verdicts": {verdicts[h.mapping]}, '
            f'"question_id": {_text(h.question)}, "sentence_id": {_text(h.sentence)}, '
            '"sentence": '
        )
        after = (
            f', "claim_id": null, "label_has_error": {lab.decode()}, '
            f'"predicted_error": {"true" if h.predicted else "false"}, '
            f'"label_rationale": {_text(h.rationale)}, "label_severity": {_text(h.severity)}, '
            f'"label_annotator": {_text(h.annotator)}, "claims": ['
        )
        found = None
        parts = [before.encode("utf-8"), b"", after.encode("utf-8")]
        errors: list[bytes] = []
        if h.rows:
            at = int(np.searchsorted(frow, h.first))
            for i in range(at, at + h.rows):
                err = rows.verdict[i] in mapping.errors
                parts += (rows.pre[i], _MAPS[err], lab, b", ", rows.post[i], b", ")
                if err:
                    errors.append(rows.cid[i])
                if found is None and rows.sentence[i]:
                    found = rows.sentence[i]
            parts.pop()  # (the last claim's separator)
        parts[1] = _text(found if found is not None else h.text).encode("utf-8")
        parts += (b'], "error_claim_ids": [', b", ".join(errors), b"]}\n")
        sinks[h.mapping].write(b"".join(parts))


def applies(
    columns: Any, items: Sequence[Any], index: Any, target: Path, lines: bool = False
) -> bool:
    """Whether the engine writes these disagreements: JSONL or Parquet of the tool's own Parquet.

    Sentence groups (one selection per mapping), shared sentence labels, every group's claims
    one run of rows, every trace file validated Parquet (``lines``: JSONL output, every trace
    file JSONL, each needed line read again, :func:`_line_rows`).
    """
    from failcodes.disagreements import GroupSelection
    from failcodes.tracecols import SentenceColumns
    from failcodes.traceio import TRACE_ENGINE_COLUMNS

    suffix = target.suffix.lower()
    if suffix not in (".jsonl", ".parquet", ".pq") or (lines and suffix != ".jsonl") or not items:
        return False
    if not isinstance(columns, SentenceColumns) or columns.origin is None:
        return False
    if not all(isinstance(i, GroupSelection) and i.cols is columns for i in items):
        return False
    if getattr(index, "per_system", True) is not None or len(index.claim):
        return False  # claim labels or per-system ones: the stream's lookups
    origin = columns.origin
    if origin.scattered is not None or not origin.paths:
        return False
    if lines:
        return all(f == Format.JSONL.value for f in origin.formats)
    return all(engine.is_validated(p, schema=TRACE_ENGINE_COLUMNS) for p in origin.paths)


@engine.translate_out_of_memory
def write(
    target: Path,
    columns: SentenceColumns,
    items: Sequence[GroupSelection],
    *,
    batch: AtomicBatch | None = None,
    fallback: Callable[[], int],
) -> int:
    """Write the selections' disagreements (JSONL lines or Parquet) by the engine; the count.

    ``fallback`` writes the file through the stream instead (and returns its count); it is
    called when the engine cannot vouch for the lines (see the module's docstring).
    """
    import duckdb

    origin = columns.origin
    assert origin is not None
    count = 0
    scratch = temp_path(target)  # moved into the batch once every line is written
    lines = all(f == Format.JSONL.value for f in origin.formats)  # (else validated Parquet)
    con = None if lines else engine.connect()
    try:
        if target.suffix.lower() == ".jsonl":
            count = _write_lines(con, columns, scratch, items)
        else:
            assert con is not None
            count = _write_tables(con, columns, scratch, items)
    except (_DeclinedError, duckdb.Error):
        scratch.unlink(missing_ok=True)
        return fallback()
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise
    finally:
        if con is not None:
            con.close()
    return _committed(scratch, target, batch, count)


def _write_lines(
    con: Any, columns: SentenceColumns, scratch: Path, items: Sequence[GroupSelection]
) -> int:
    """Write the selections' disagreements to ``scratch`` as JSONL lines; the count.

    ``con`` None: the claims' JSONL lines are read again (:func:`_line_rows`).
    """
    origin = columns.origin
    assert origin is not None
    paths, starts = origin.paths, [int(s) for s in origin.starts]
    count = 0
    with (
        scratch.open("wb", buffering=_WRITE_BUFFER) as out,
        _parts(scratch.parent, len(items) - 1) as parts,
    ):
        sinks = [out, *parts]
        maps = [_Mapping.of(sel) for sel in items]
        streams = [_Stream(sel, m, starts) for m, sel in enumerate(items)]

        def read(chunk: _Chunk) -> _Rows:
            if con is None:
                return _line_rows(columns, chunk)
            return _rows(con, paths[max(chunk.file, 0)], chunk)

        # the engine reads the next chunk's rows (on its threads) while this one is written
        with ThreadPoolExecutor(max_workers=1) as ahead:
            chunks = _chunks(streams)
            chunk = next(chunks, None)
            pending = ahead.submit(read, chunk) if chunk is not None else None
            while chunk is not None and pending is not None:
                following = next(chunks, None)
                rows = pending.result()
                pending = ahead.submit(read, following) if following is not None else None
                _write_chunk(sinks, chunk, rows, maps)
                count += len(chunk.heads)
                chunk = following
        out.flush()
        for part in parts:  # each later mapping's lines after the one before
            _append(part, out.fileno())
    return count


def _committed(scratch: Path, target: Path, batch: AtomicBatch | None, count: int) -> int:
    """Move the written ``scratch`` into ``target`` (in ``batch``); the count written."""

    def move(b: AtomicBatch) -> None:
        scratch.replace(b.stage(target))

    write_in_batch(batch, move)
    return count


def _append(part: IO[bytes], fd: int) -> None:
    """Append the temporary file ``part`` to the file open at ``fd`` (at its position).

    Copied by the kernel (``copy_file_range``: at paper scale ~250 MB, which a copy through
    Python reads into its buffers and writes again); through Python where it cannot.
    """
    part.flush()
    size = os.fstat(part.fileno()).st_size
    done = 0
    try:
        while done < size:
            copied = os.copy_file_range(part.fileno(), fd, size - done, done)
            if not copied:
                break
            done += copied
    except OSError:
        pass  # (another kind of file system, an old kernel): the rest through Python
    part.seek(done)
    with open(fd, "wb", buffering=_WRITE_BUFFER, closefd=False) as sink:  # (at its position)
        shutil.copyfileobj(part, sink, _WRITE_BUFFER)


class _parts:  # noqa: N801 (a context manager used as a function)
    """``n`` anonymous temporary files in ``folder`` (deleted when closed)."""

    def __init__(self, folder: Path, n: int) -> None:
        self.folder, self.n = folder, n
        self.files: list[IO[bytes]] = []

    def __enter__(self) -> list[IO[bytes]]:
        for _ in range(self.n):
            self.files.append(tempfile.TemporaryFile(dir=self.folder, buffering=_WRITE_BUFFER))
        return self.files

    def __exit__(self, *exc: object) -> None:
        for fh in self.files:
            fh.close()


__all__ = ["applies", "write"]
