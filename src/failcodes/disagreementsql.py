r"""Disagreements built by the engine from the tool's own Parquet traces (issue 30).

For traces the tool wrote itself (the validated marker, :func:`failcodes.engine.is_validated`)
DuckDB reads the needed claim rows once, in file order (a window of :data:`_WINDOW_ROWS` rows
a query). JSONL: each disagreement's line (its head, two JSON pieces a claim record) is
written as its claims come, into a file of its mapping copied onto the output in output
order (:func:`_write_lines`), byte-identical to the stream's
(:func:`failcodes.disagreementio.stream_disagreements`). Parquet: the rows go to a scratch
file, and Python takes each disagreement's claims from it in output order as Arrow columns
(:func:`_spill`, :class:`_Spilled`, :func:`_mapping_table`), :data:`_RECORDS_PER_GROUP`
disagreements a row group, the stream's bytes. Trace JSONL files the strict scan vouched for
take the same heads, their claims' lines read again by byte offset (:func:`_line_rows`). A
row the validated writer cannot have written, a row gone from the file, or an engine error
leaves nothing behind: the stream then writes the file. The design, DuckDB's JSON against the
stdlib's, and the measurements: docs/architecture.md ("The analysis engine").
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import operator
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring as _json_string  # json.dumps' own
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from failcodes import engine
from failcodes.fileio import AtomicBatch, temp_path
from failcodes.jsonio import repr_scores, struct_fields
from failcodes.tableio import Format, arrow_schema, pyarrow_modules, write_in_batch
from failcodes.traces import EvidenceSource
from failcodes.verdicts import Verdict

if TYPE_CHECKING:
    from failcodes.disagreements import GroupSelection
    from failcodes.tracecols import SentenceColumns

#: A query's rows lie within this many consecutive rows of a file (the rows DuckDB reads).
_WINDOW_ROWS = 16_384
#: Claim rows the engine hands over at a time (their JSON text: ~12 MB at paper scale).
_FETCH_ROWS = 2_048
#: Write buffer of the output.
_WRITE_BUFFER = 1 << 20
#: Parts one ``writev`` writes at most (the system's limit, 1,024 on Linux).
_IOV_MAX = 1_024
#: Whether the system has ``writev`` (POSIX).
_WRITEV = hasattr(os, "writev")
#: Sentence groups whose JSONL lines are decoded at a time.
_LINE_GROUPS = 32
#: Disagreements taken from the scratch file at a time (a row group of the Parquet output,
#: as the stream writes them).
_RECORDS_PER_GROUP = 2_000
#: Claim rows a batch of the scratch file holds.
_SPILL_ROWS = 8_192


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
    first: int  # its first claim's row (numbered across the files)
    rows: int  # its claims (consecutive rows)
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


def _heads(
    selection: GroupSelection, m: int, seen: dict[str, tuple[Any, ...]] | None = None
) -> Iterator[_Head]:
    """One mapping's disagreements in output order, each with where its claims are.

    The order and the fields of :meth:`GroupSelection.__iter__ <failcodes.disagreements.
    GroupSelection.__iter__>` and :func:`~failcodes.disagreements.disagreement_json`, read
    from :meth:`GroupSelection.keyed <failcodes.disagreements.GroupSelection.keyed>` and the
    labels' columns: no label or record built (~26,000 of them at paper scale cost ~1 CPU-s
    built). ``seen`` keeps each sentence's label fields, looked up
    once for all its systems (and mappings: the same labels).
    """
    seen = {} if seen is None else seen
    index = selection.index
    for (system, question, sentence, uid), _, pred, first, rows in selection.keyed():
        found = seen.get(sentence)
        if found is None:
            found = seen[sentence] = index.sentence_fields(sentence, _LABEL_FIELDS)
        has_error, rationale, severity, annotator, text = found
        yield _Head(
            m,
            first,
            rows,
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


#: The label fields a disagreement line carries.
_LABEL_FIELDS = ("has_error", "rationale", "severity", "annotator", "sentence")


def _text(value: str | None) -> str:
    """A string (or None) as ``json.dumps(value, ensure_ascii=False)`` writes it."""
    return "null" if value is None else _json_string(value)


def _query(path: Path, lo: int, hi: int) -> str:
    """The SQL of a window's needed rows (``need`` registered): compact JSON parts, checks."""
    return f"""
        SELECT frow, sentence, verdict, claim_id, pre, post, (CASE WHEN odd OR code = 2 THEN 4
            ELSE (NOT contains(pre, '\\u00'))::UTINYINT
                + 2 * (code = 0 AND NOT contains(post, '\\u00'))::UTINYINT END)::UTINYINT AS how
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


def _needed(columns: SentenceColumns, items: Sequence[GroupSelection]) -> tuple[Any, Any]:
    """The disagreeing groups in file order, each once, and their claims' rows.

    The rows are numbered across the files, sorted. Raises :class:`_DeclinedError` for a
    group's claims not one run of rows of one file (scattered groups, a group over two
    files: the stream's).
    """
    origin = columns.origin
    assert origin is not None
    groups = np.unique(np.concatenate([sel.groups for sel in items]))
    first = columns.first[groups].astype(np.int64)
    order = np.argsort(first, kind="stable")
    groups, first = groups[order], first[order]
    count = origin.run[groups].astype(np.int64)
    starts = np.asarray(origin.starts, dtype=np.int64)
    bounds = np.append(starts[1:], np.iinfo(np.int64).max)
    file = np.searchsorted(starts, first, side="right") - 1
    if (count == 0).any() or (first + count > bounds[file]).any():
        raise _DeclinedError
    ends = np.cumsum(count)
    rows = np.repeat(first - (ends - count), count) + np.arange(int(ends[-1]) if len(ends) else 0)
    return groups, rows


def _spill(tables: Iterable[Any], out: Path) -> None:
    """Write ``tables`` (rows in file order, one schema) to ``out``, an Arrow file.

    Raises :class:`_DeclinedError` for columns of other types (the stream's).
    """
    pa, _ = pyarrow_modules()
    writer = None
    try:
        with pa.OSFile(str(out), "wb") as sink:
            for table in tables:
                if writer is None:
                    schema = table.schema
                    writer = pa.ipc.new_file(sink, schema)
                writer.write_table(table.cast(schema), max_chunksize=_SPILL_ROWS)
            if writer is not None:
                writer.close()
    except pa.ArrowException:
        raise _DeclinedError from None


def _engine_rows(con: Any, columns: SentenceColumns, rows: Any, pieces: bool) -> Iterator[Any]:
    """The claim rows of ``rows`` read by the engine, in parts, a window of a file a query."""
    origin = columns.origin
    assert origin is not None
    starts = [int(s) for s in origin.starts]
    edges = np.searchsorted(rows, [*starts, np.iinfo(np.int64).max])
    for f, path in enumerate(origin.paths):
        mine = rows[edges[f] : edges[f + 1]] - starts[f]
        at = 0
        while at < len(mine):
            window = mine[at : int(np.searchsorted(mine, mine[at] + _WINDOW_ROWS))]
            yield from _window_rows(con, path, window, pieces)
            at += len(window)


def _window_rows(con: Any, path: Path, window: Any, pieces: bool) -> Iterator[Any]:
    """A window's rows (file row numbers, ascending) in parts, pieces or columns.

    ``pieces`` (JSONL output): :func:`_batch_rows`; else tables of the claim record's columns.

    Fetched and spilled a batch of :data:`_FETCH_ROWS` at a time: the whole window as one
    Arrow table (its claims' JSON text, ~100 MB at paper scale) was memory the engine
    filled anew for every window (page faults: system time). Raises
    :class:`_DeclinedError` for a row the validated writer cannot have written or a row
    gone from the file (the stream says so).
    """
    import pyarrow as pa  # type: ignore[import-untyped]  # (not pyarrow.parquet: ~67 M)

    query = (_query if pieces else _column_query)(path, int(window[0]), int(window[-1]))
    convert = _batch_rows if pieces else _column_batch
    # a numpy array, not an Arrow table: registering Arrow data imports pandas (~870 M
    # instructions, a third of the script's whole run; issue 30)
    con.register("need", {"frow": window})
    try:
        at = 0
        for batch in con.sql(query).to_arrow_reader(_FETCH_ROWS):
            got = pa.Table.from_batches([batch])
            frow = _numbers(got.column("frow"), np.int64)
            if not np.array_equal(frow, window[at : at + len(frow)]):
                raise _DeclinedError  # a row gone from the file: the stream says so
            at += len(frow)
            yield convert(got)
        if at != len(window):
            raise _DeclinedError
    finally:
        con.unregister("need")


def _column_batch(got: Any) -> Any:
    """One fetched batch of :func:`_column_query`'s rows, checked."""
    if bool(np.asarray(got.column("odd")).any()):
        raise _DeclinedError  # a row the validated writer cannot have written: the stream's
    return got.drop_columns(["frow", "odd"])


#: A piece of a claim row's JSON (a view of the line it was cut from, not copied).
_Piece = bytes | memoryview
#: A claim row's pieces for JSONL output, each bytes: its sentence as JSON (empty if none), its
#: verdict, its claim id's JSON, '{"claim_id": ..., "raw_verdict": ...' (no closing brace)
#: and '"reasoning": ..., "evidence_source": ...}' (no opening brace), both spaced as
#: ``json.dumps`` writes them.
_PIECES = 5


def _sentence(text: str | None) -> bytes:
    """A claim's sentence as its piece."""
    return _text(text).encode("utf-8") if text else b""


def _numbers(column: Any, dtype: Any) -> Any:
    """A chunked Arrow column of numbers without nulls as numpy (views of its buffers).

    Arrow's ``to_numpy`` (``np.asarray`` too) imports pandas on its first call: ~870 M
    instructions, a third of the DuckDB script's whole ``disagreements`` (issue 30).
    """
    if column.null_count:
        raise _DeclinedError
    parts = [
        np.frombuffer(c.buffers()[1], dtype)[c.offset : c.offset + len(c)]
        for c in column.chunks
        if len(c)
    ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


def _batch_rows(got: Any) -> list[bytes]:
    """One fetched batch's rows (an Arrow table of :func:`_query`'s columns) as pieces.

    Its ``how``: 4 for a row the validated writer cannot have written, else 1 where ``pre``
    and 2 where ``post`` is JSON that ``msgspec`` spaces exactly (see :func:`_spaced`).
    """
    how = _numbers(got.column("how"), np.uint8)
    if bool((how & 4).any()):
        raise _DeclinedError  # a row the validated writer cannot have written: the stream's
    pre = _spaced(got.column("pre"), (how & 1).astype(bool).tolist())
    post = _spaced(got.column("post"), (how & 2).astype(bool).tolist())
    rows = zip(
        map(_sentence, got.column("sentence").to_pylist()),
        (v.encode("utf-8") for v in got.column("verdict").to_pylist()),
        (_text(c).encode("utf-8") for c in got.column("claim_id").to_pylist()),
        (p[:-1] for p in pre),
        (p[1:] for p in post),
        strict=True,
    )
    return list(itertools.chain.from_iterable(rows))


def _line_rows(columns: SentenceColumns, groups: Any, ends: Any) -> list[_Piece]:
    """The claim rows of ``groups`` (in file order) as pieces, from vouched JSONL lines.

    The lines the strict scan vouched for, read again by byte offset: one ``pread`` a group,
    to ``ends`` (:func:`_line_ends`). Each line is decoded by the stream's voucher (its
    struct: the trace's fields in the model's order, nulls written), encoded once by msgspec
    and spaced as ``json.dumps`` spaces (``msgspec.json.format``); the pieces are cut from
    it (the claim record's fields but its sentence) where that is exact (no escape, every
    score printed as ``repr``), else written by the stdlib. A line msgspec cannot vouch for
    is the stream's (raises :class:`_DeclinedError`).
    """
    import msgspec

    encode, spaced = msgspec.json.encode, msgspec.json.format
    origin = columns.origin
    assert origin is not None
    out: list[_Piece] = []
    files, _, offsets, counts = origin.where(groups, columns.first)
    t: Any  # (the vouched struct of the line)
    for t in _vouched_lines(origin.paths, files, offsets, counts, ends, origin.vouched):
        passages = t.passages
        if t.evidence_source is None:  # as Trace.evidence derives it
            retrieved = passages or t.retriever is not None
            source = EvidenceSource.RETRIEVED if retrieved else EvidenceSource.NONE
            t.evidence_source = source.value
        text = encode(t)
        if b"\\" not in text and repr_scores(passages):
            # '{"system": ..., "claim_id": ..., "sentence": ..., "verdict": ...}'; with no
            # escape, a text is written alike by msgspec and json.dumps
            line = spaced(text, indent=0)
            cid = line.index(b', "claim_id": ')
            claim = line.index(b', "claim": ', cid)
            sentence = line.index(b', "sentence": ', claim)
            verdict = line.index(b', "verdict": ', sentence)
            reasoning = line.index(b', "reasoning": ', verdict)
            pre = b"{" + line[cid + 2 : sentence] + line[verdict:reasoning]
            given = line[sentence + _SENTENCE_KEY : verdict]
            out += (
                b"" if given == b"null" else given,
                t.verdict.encode("utf-8"),
                line[cid + _CLAIM_ID_KEY : claim],
                pre,
                memoryview(line)[reasoning + 2 :],  # (not copied: most of the line)
            )
            continue
        fields = msgspec.structs.asdict(t).items()
        record = {k: v for k, v in fields if k not in _HEAD_FIELDS}
        whole = json.dumps(record, ensure_ascii=False, default=struct_fields)
        cut = whole.index(', "reasoning": ')
        pre, post = whole[:cut].encode("utf-8"), whole[cut + 2 :].encode("utf-8")
        claim_id = _json_string(t.claim_id).encode("utf-8")
        out += (_sentence(t.sentence), t.verdict.encode("utf-8"), claim_id, pre, post)
    if len(out) != _PIECES * sum(counts):
        raise _DeclinedError  # (not every row a line: the stream's)
    return out


def _line_ends(columns: SentenceColumns, groups: Any) -> list[int]:
    """Where the lines of each of ``groups`` end: the next group's first byte, or -1 (EOF).

    Every group's rows are one run (no scattered group: :func:`applies`), so the lines from
    a group's first byte to the next group's (by first row, in the same file) are its rows'
    and blank lines.
    """
    origin = columns.origin
    assert origin is not None
    first = columns.first.astype(np.int64)
    order = np.argsort(first, kind="stable")
    starts = np.asarray(origin.starts, dtype=np.int64)
    file_of = np.searchsorted(starts, first, side="right") - 1
    after = np.searchsorted(first[order], first[groups], side="right")
    nxt = order[np.minimum(after, len(order) - 1)]
    same = (after < len(order)) & (file_of[nxt] == file_of[groups])
    ends: list[int] = np.where(same, origin.offset[nxt].astype(np.int64), -1).tolist()
    return ends


def _vouched_lines(
    paths: Sequence[Path],
    files: list[int],
    offsets: list[int],
    counts: list[int],
    ends: Any,
    vouched: Collection[int] = (),
) -> Iterator[Any]:
    """Each group's rows as the voucher's structs, a ``pread`` a group; blank lines no rows.

    Group ``i`` is ``counts[i]`` rows of file ``files[i]``, its lines from byte ``offsets[i]``
    to ``ends[i]`` (-1: the end of the file). Raises :class:`_DeclinedError` for a line the
    voucher cannot vouch for (the model reads it: the stream's), ``ValueError`` for a file
    that changed since it was read. A line of a file in ``vouched`` (every line of it taken
    by the scan's voucher) is only decoded and its verdict made canonical
    (:meth:`Voucher.again <failcodes.tracelines.Voucher.again>`): the check for missing
    marks and references a line read back otherwise gets was ~8 us a line, 5-6% of
    ``disagreements`` on a paper-scale JSONL file (issue 30).
    """
    from failcodes.tracelines import Voucher

    vouch = Voucher(rewritten=False)
    again = vouch.again
    fds: dict[int, int] = {}
    try:
        for file, at, n, end in zip(files, offsets, counts, ends, strict=True):
            taken = file in vouched
            fd = fds.get(file)
            if fd is None:
                fd = fds[file] = os.open(paths[file], os.O_RDONLY)
            size = (end if end >= 0 else os.fstat(fd).st_size) - at
            data = os.pread(fd, size, at) if size > 0 else b""
            if at == 0 and data.startswith(_BOM):
                data = data[len(_BOM) :]
            got = 0
            for body in data.split(b"\n"):
                if got == n:
                    break
                rec = again(body) if taken else vouch(body, checked=True)
                if rec is None:
                    if not body.decode("utf-8", "replace").strip():
                        continue  # a blank line: no row (the object reader's own test)
                    raise _DeclinedError  # a line the model reads: the stream's
                got += 1
                yield rec
            if got != n:
                raise ValueError(f"{paths[file]} changed since it was read")
    finally:
        for fd in fds.values():
            os.close(fd)


#: The byte order mark a file's first line may begin with.
_BOM = b"\xef\xbb\xbf"
#: The length of ', "sentence": ' and of ', "claim_id": ' (a value follows).
_SENTENCE_KEY, _CLAIM_ID_KEY = len(b', "sentence": '), len(b', "claim_id": ')
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


def _write_file(
    con: Any, columns: SentenceColumns, scratch: Path, items: Sequence[GroupSelection], lines: bool
) -> int:
    """Write the selections' disagreements to ``scratch`` (JSONL ``lines`` or Parquet).

    Returns the count. ``con`` None: the claims' JSONL lines are read again
    (:func:`_line_rows`).
    """
    groups, need = _needed(columns, items)
    maps = [_Mapping.of(sel) for sel in items]
    if lines:
        parts: Iterable[Any]
        if con is None:
            at = range(0, len(groups), _LINE_GROUPS)
            ends = _line_ends(columns, groups)
            parts = (
                _line_rows(columns, groups[a : a + _LINE_GROUPS], ends[a : a + _LINE_GROUPS])
                for a in at
            )
        else:
            starts = np.searchsorted(need, columns.first[groups].astype(np.int64))
            parts = _aligned(_engine_rows(con, columns, need, True), starts.tolist())
        seen: dict[int, dict[str, tuple[Any, ...]]] = {}  # per label index
        each = [list(_heads(s, m, seen.setdefault(id(s.index), {}))) for m, s in enumerate(items)]
        return _write_lines(scratch, maps, each, need, parts)
    parts = _engine_rows(con, columns, need, lines)
    heads = itertools.chain.from_iterable(_heads(sel, m) for m, sel in enumerate(items))
    spill = temp_path(scratch)
    try:
        _spill(parts, spill)
        con.close()
        grouped = iter(lambda: list(itertools.islice(heads, _RECORDS_PER_GROUP)), [])
        return _write_tables(scratch, maps, grouped, _Spilled(spill, need))
    finally:
        spill.unlink(missing_ok=True)


def _aligned(parts: Iterable[list[_Piece]], starts: list[int]) -> Iterator[list[_Piece]]:
    """``parts`` (the pieces of consecutive rows) cut where a group starts (``starts``).

    The engine hands rows over a batch at a time, a group's rows maybe in two batches; each
    part given on holds whole groups (a group's rows in one part, as :func:`_write_lines`
    takes them).
    """
    held: list[_Piece] = []
    lo = 0  # the row of ``held``'s first piece
    for got in parts:
        held += got
        hi = lo + len(held) // _PIECES
        cut = starts[bisect.bisect_right(starts, hi) - 1] if starts and starts[0] <= hi else lo
        if cut > lo:
            yield held[: _PIECES * (cut - lo)]
            held, lo = held[_PIECES * (cut - lo) :], cut
    if held:
        yield held


def _write_tables(
    scratch: Path, maps: Sequence[_Mapping], groups: Iterable[list[_Head]], spilled: _Spilled
) -> int:
    """Write the disagreements to ``scratch`` as Parquet; the count.

    Each group is one row group (the last the rest, empty too, as the stream writes them).
    """
    from failcodes.disagreements import Disagreement

    pa, pq = pyarrow_modules()
    schema = arrow_schema(Disagreement)
    count = 0
    with pq.ParquetWriter(scratch, schema) as writer:
        for group in groups:
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


def _liner(maps: Sequence[_Mapping]) -> Callable[[_Head, Sequence[_Piece]], list[_Piece]]:
    """A disagreement's JSONL line (its parts) from its head and its claims' pieces.

    Five pieces a claim row (:data:`_PIECES`).
    """
    verdicts = [json.dumps(m.verdicts, ensure_ascii=False) for m in maps]
    errors_of = [frozenset(v.encode("utf-8") for v in m.errors) for m in maps]

    def line(h: _Head, got: Sequence[_Piece]) -> list[_Piece]:
        lab = b"true" if h.has_error else b"false"
        mapping, errs = maps[h.mapping], errors_of[h.mapping]
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
        found: _Piece = b""
        parts: list[_Piece] = [before.encode("utf-8"), b"", after.encode("utf-8")]
        errors: list[_Piece] = []
        if got:
            for at in range(0, len(got), _PIECES):
                sentence, verdict, cid, pre, post = got[at : at + _PIECES]
                err = verdict in errs
                parts += (pre, _MAPS[err], lab, b", ", post, b", ")
                if err:
                    errors.append(cid)
                found = found or sentence
            parts.pop()  # (the last claim's separator)
        parts[1] = found or _text(h.text).encode("utf-8")
        parts += (b'], "error_claim_ids": [', b", ".join(errors), b"]}\n")
        return parts

    return line


def _write_lines(
    scratch: Path,
    maps: Sequence[_Mapping],
    heads: Sequence[Sequence[_Head]],
    need: Any,
    parts: Iterable[list[_Piece]],
) -> int:
    """Write the disagreements to ``scratch`` as JSONL lines as their claims' pieces come.

    ``heads`` are each mapping's disagreements in output order; ``parts`` the pieces of the
    rows of ``need`` in order, whole groups a part. Each line is written once, as its claims'
    pieces come (:class:`_Made`: file order), into a file of its mapping; no piece is stored
    or read back. A mapping's lines made in output order (the first mapping's: into
    ``scratch`` itself) are appended whole, others a run of lines in output order at a time,
    both in the kernel where it can (:func:`_append`). The count.
    """
    line = _liner(maps)
    made = [_Made.of(hs, need) for hs in heads]
    direct = made[0].in_order  # (the first mapping's lines straight into the output)
    files = [scratch if m == 0 and direct else temp_path(scratch) for m in range(len(heads))]
    try:
        with contextlib.ExitStack() as stack:
            outs = [stack.enter_context(_Gathered(f)) for f in files]
            done = [0] * len(heads)
            lo = 0
            for got in itertools.chain(parts, [None]):  # (None: the heads left, no claims)
                hi = lo + len(got) // _PIECES if got is not None else len(need)
                for m, hs in enumerate(heads):
                    write, order, key, p = outs[m].add, made[m].order, made[m].key, done[m]
                    while p < len(order) and key[p] < hi:
                        h = hs[order[p]]
                        if h.rows:
                            assert got is not None  # (every row is in a part)
                            a = _PIECES * (key[p] - lo)
                            write(line(h, got[a : a + _PIECES * h.rows]))
                        else:
                            write(line(h, ()))
                        p += 1
                    done[m] = p
                lo = hi
        with scratch.open("r+b", buffering=0) as out:  # (not "ab": see _append)
            out.seek(0, os.SEEK_END)
            for m, f in enumerate(files):
                if f != scratch:
                    _append(out, f, made[m].runs(outs[m].sizes))
    finally:
        for f in files:
            if f != scratch:
                f.unlink(missing_ok=True)
    return sum(map(len, heads))


@dataclass(frozen=True)
class _Made:
    """The order a mapping's lines are made in: their claims' (file) order.

    ``order[j]`` is the head (its place in output order) made ``j``-th, ``key[j]`` the place
    in ``need`` of its first claim row; a head without claims is made right after the one
    before it in output order (its key), or first (-1).
    """

    order: list[int]
    key: list[int]
    in_order: bool

    @classmethod
    def of(cls, heads: Sequence[_Head], need: Any) -> _Made:
        """The order of ``heads`` (one mapping's, in output order)."""
        firsts = np.array([h.first for h in heads], dtype=np.int64)
        has = np.array([h.rows > 0 for h in heads], dtype=bool)
        found = np.where(has, np.searchsorted(need, firsts), -1)
        # a head without claims takes the key of the last head with claims before it
        last = np.maximum.accumulate(np.where(has, np.arange(len(heads)), -1))
        key = np.where(last >= 0, found[np.maximum(last, 0)], -1)
        order = np.argsort(key, kind="stable")
        in_order = bool((order == np.arange(len(heads))).all())
        return cls(order.tolist(), key[order].tolist(), in_order)

    def runs(self, sizes: Sequence[int]) -> list[tuple[int, int]]:
        """``(offset, length)`` of the runs of lines, in output order, in the made file.

        ``sizes``: the lines' lengths as made. Consecutive lines of the file that follow
        each other in the output are one run (the whole file if made in output order).
        """
        n = len(self.order)
        if not n:
            return []
        lengths = np.array(sizes, dtype=np.int64)
        starts = np.zeros(n, dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        made = np.empty(n, dtype=np.int64)
        made[np.array(self.order, dtype=np.int64)] = np.arange(n)  # head -> made j-th
        at, length = starts[made], lengths[made]
        new = np.ones(n, dtype=bool)
        new[1:] = at[1:] != at[:-1] + length[:-1]
        first = np.flatnonzero(new)
        return list(zip(at[first].tolist(), np.add.reduceat(length, first).tolist(), strict=True))


class _Gathered:
    """A file written a line's parts at a time, with one ``writev`` for many lines.

    No line is joined or copied into a buffer (two copies of the ~500 MB of paper scale's
    output otherwise); :data:`_WRITE_BUFFER` bytes or :data:`_IOV_MAX` parts a call.
    """

    def __init__(self, path: Path) -> None:
        self.fh = path.open("wb", buffering=0)
        self.parts: list[_Piece] = []
        self.size = 0
        #: Each line's length, in the order written.
        self.sizes: list[int] = []

    def __enter__(self) -> _Gathered:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self.flush()
        finally:
            self.fh.close()

    def add(self, parts: list[_Piece]) -> None:
        """Write a line's parts (later)."""
        self.parts += parts
        n = sum(map(len, parts))
        self.sizes.append(n)
        self.size += n
        if self.size >= _WRITE_BUFFER or len(self.parts) >= _IOV_MAX:
            self.flush()

    def flush(self) -> None:
        """Write the parts gathered."""
        fd, parts = self.fh.fileno(), self.parts
        for at in range(0, len(parts), _IOV_MAX):
            chunk = parts[at : at + _IOV_MAX]
            written = os.writev(fd, chunk) if _WRITEV else 0
            if written < sum(map(len, chunk)):  # a short write (or no writev): the rest
                rest = memoryview(b"".join(chunk))[written:]
                while rest:
                    rest = rest[self.fh.write(rest) or 0 :]
        self.parts, self.size = [], 0


def _append(out: IO[bytes], path: Path, runs: Iterable[tuple[int, int]]) -> None:
    """Copy the ``(offset, length)`` runs of the file ``path`` onto the end of ``out``.

    In the kernel where it can (``copy_file_range``: ``out`` opened for writing, not
    appending, which the kernel refuses), else by reads.
    """
    copy = getattr(os, "copy_file_range", None)  # (Linux only)
    with path.open("rb") as src:
        fd, dst = src.fileno(), out.fileno()
        for at, left in runs:
            try:
                while copy is not None and left > 0:
                    copied = copy(fd, dst, left, at)
                    if not copied:
                        break
                    at, left = at + copied, left - copied
            except OSError:
                copy = None  # (another file system, an old kernel: the rest copied by reads)
            if left > 0:  # (``out``'s position is past what the kernel copied)
                src.seek(at)
                while left > 0:
                    chunk = memoryview(src.read(min(left, _WRITE_BUFFER)))
                    if not chunk:
                        raise OSError(f"{path} ended early")
                    left -= len(chunk)
                    while chunk:
                        chunk = chunk[out.write(chunk) or 0 :]


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
    scratch = temp_path(target)  # moved into the batch once every line is written
    lines = all(f == Format.JSONL.value for f in origin.formats)  # (else validated Parquet)
    con = None if lines else engine.connect()
    try:
        count = _write_file(con, columns, scratch, items, target.suffix.lower() == ".jsonl")
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


def _committed(scratch: Path, target: Path, batch: AtomicBatch | None, count: int) -> int:
    """Move the written ``scratch`` into ``target`` (in ``batch``); the count written."""

    def move(b: AtomicBatch) -> None:
        scratch.replace(b.stage(target))

    write_in_batch(batch, move)
    return count
