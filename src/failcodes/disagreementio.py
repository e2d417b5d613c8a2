"""Disagreement files: written streaming from trace columns, read back, selected from files.

- :func:`select_from_files` reads trace and label files and selects the disagreements the way
  their shape allows (sentence groups, a key scan for groups whose claims are scattered, or
  the trace columns: issue 18); :func:`stream_disagreements` writes such a selection with its
  claims' full traces, fetched from the trace files a chunk at a time
  (:mod:`failcodes.columnar`).
- :func:`write_disagreement_records` writes disagreement records (JSONL or Parquet,
  atomically: :class:`~failcodes.fileio.AtomicBatch`);
  :func:`json_line_encoder` gives ``json.dumps``' bytes, faster.
- :func:`read_disagreements`, :func:`read_disagreement_traces`,
  :func:`iter_disagreement_records` and :func:`iter_disagreement_claims` read them back,
  with the one-line errors of the file layer (path, 1-based line or Parquet row, field).

The models and the selection are the core's (:mod:`failcodes.disagreements`, which does no file
I/O); trace files as columns are :mod:`failcodes.columnar`'s.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import re
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, cast, get_args, get_origin

import msgspec
from pydantic import BaseModel, ValidationError

from failcodes import columnar
from failcodes.columnar import ExactReaderNeededError, construct_passages
from failcodes.errors import InputError
from failcodes.fileio import AtomicBatch, check_regular_file
from failcodes.jsonio import REPR_RANGE as _REPR_RANGE  # noqa: F401 (tests read it here)
from failcodes.jsonio import (
    byte_lines,
    iter_jsonl,
    jsonl_lines,
    keys_vouched,
    peek_jsonl,
    repr_scores,
    struct_fields,
)
from failcodes.labels import LabelIndex, refuse_claim_labels
from failcodes.labelscope import DataShape, QuestionScope
from failcodes.parquetio import open_parquet
from failcodes.tableio import (
    EXTENSIONS,
    Format,
    arrow_schema,
    msgspec_type,
    pyarrow_modules,
    write_in_batch,
)
from failcodes.tracecols import SentenceColumns, TraceColumns
from failcodes.traces import EvidenceSource, Passage, Trace
from failcodes.verdicts import Verdict

if TYPE_CHECKING:  # disagreements imports metrics (and pandas on use): imported on use here
    from failcodes.disagreements import GroupSelection, Selected
    from failcodes.mapping import ErrorMapping
    from failcodes.metrics import Level, WithoutClaimsPolicy

#: A decoded passage's rank (ranks of a list are checked distinct with one C-level map).
_RANK_OF = operator.attrgetter("rank")
#: Read buffer of the line scans: disagreement lines (~20 kB) longer than the default 8 kB
#: buffer are assembled from several reads.
_SCAN_BUFFER = 1 << 20
#: Write buffer of JSONL outputs: a disagreement line (~20 kB) larger than the default 8 kB
#: buffer was one write call each (~4x the CPU of writing 1 MB at a time).
_WRITE_BUFFER = 1 << 20


def _disagreement_format(path: Path) -> Format:
    suffix = path.suffix.lower()
    fmt = EXTENSIONS.get(suffix)
    if fmt is None or fmt is Format.CSV:
        raise InputError(
            f"unsupported disagreements file type {suffix!r} (use .jsonl or .parquet)", path=path
        )
    return fmt


def is_disagreements_file(path: Path) -> bool:
    """True if ``path`` holds disagreements (records with ``kind`` and ``claims``)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        rec = peek_jsonl(path)  # None when unreadable: the trace reader reports it
        return rec is not None and "claims" in rec and "kind" in rec
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        try:
            names = set(pq.read_schema(path).names)
        except Exception:
            return False
        return {"claims", "kind"} <= names
    return False


_NUMBER = re.compile(rb"-?[0-9][0-9.eE+-]*")
#: Separator runs between strings seen by :func:`json_line_encoder` (bounded cache).
_SEPARATORS_CACHED = 4_096


def _json_number(match: re.Match[bytes]) -> bytes:
    token = match.group()
    if b"." in token or b"e" in token or b"E" in token:
        return repr(float(token)).encode()  # json.dumps writes float.__repr__
    return token


def json_line_encoder() -> Callable[[Any], bytes]:
    r"""A function giving ``(json.dumps(value, ensure_ascii=False) + "\n").encode()``, faster.

    msgspec encodes the value (compact, ~5x faster than the stdlib on records with long
    strings); when the result has no backslash (no escaped character), every quote delimits
    a string, so the bytes between strings hold all the structure: there each ``,`` and
    ``:`` gets the stdlib's following space and each float its ``repr`` (msgspec writes
    ``1e16``/``0.00001`` where Python writes ``1e+16``/``1e-05``). Anything else (escapes,
    integers msgspec refuses) is encoded by ``json.dumps`` itself: the same bytes either way
    for finite numbers (NaN and infinities, which the trace models refuse, would become
    ``null``).
    """
    encode = msgspec.json.Encoder().encode
    cache: dict[bytes, bytes] = {}

    def between(part: bytes) -> bytes:
        out = cache.get(part)
        if out is None:
            out = part.replace(b",", b", ").replace(b":", b": ")
            if any(c in part for c in b"0123456789"):
                out = _NUMBER.sub(_json_number, out)
            if len(cache) < _SEPARATORS_CACHED:
                cache[part] = out
        return out

    def dumps(value: Any) -> bytes:
        try:
            raw = encode(value)
        except (msgspec.EncodeError, TypeError, OverflowError):
            raw = b"\\"
        if b"\\" in raw:
            text = json.dumps(value, ensure_ascii=False, default=struct_fields)
            return (text + "\n").encode("utf-8")
        parts = raw.split(b'"')
        looked = list(map(cache.get, parts[::2]))  # a C-level lookup per part
        if None in looked:
            parts[::2] = [between(part) for part in parts[::2]]
        else:
            parts[::2] = cast(list[bytes], looked)
        return b'"'.join(parts) + b"\n"

    return dumps


#: Disagreements written per Parquet row group.
_RECORDS_PER_CHUNK = 2_000
#: Disagreements whose traces the stream fetches at a time: their decoded lines stay in the
#: processor's caches (~50 lines; 2,000 disagreements took ~1.4x as long at paper scale).
#: Parquet rows alike: a file's reader keeps its decoded batch from one chunk to the next.
_GATHERED_PER_CHUNK = 16


def write_disagreement_records(
    path: str | Path, records: Iterable[dict[str, Any]], *, batch: AtomicBatch | None = None
) -> int:
    """Write JSON-ready disagreement records streaming (JSONL or Parquet); return the count.

    Records are ``Disagreement.model_dump(mode="json")`` dicts (passages may also be the
    decoded msgspec structs of the trace reader, written as their field dicts), one JSON
    object a line exactly as ``json.dumps(record, ensure_ascii=False)`` (see
    :func:`json_line_encoder`).
    The file is staged and moved into place atomically (with ``batch``: when it commits).
    """
    from failcodes.disagreements import Disagreement

    target = Path(path)
    fmt = _disagreement_format(target)
    if fmt is Format.JSONL:
        encode = json_line_encoder()
        return _write_lines(target, map(encode, records), batch)
    count = 0

    def write(b: AtomicBatch) -> None:
        nonlocal count
        tmp = b.stage(target)
        pa, pq = pyarrow_modules()
        schema = arrow_schema(Disagreement)
        with pq.ParquetWriter(tmp, schema) as writer:
            chunk: list[dict[str, Any]] = []
            for rec in records:
                for claim in rec["claims"]:  # decoded passage structs -> dicts for Arrow
                    claim["passages"] = [
                        p if isinstance(p, dict) else struct_fields(p) for p in claim["passages"]
                    ]
                chunk.append(rec)
                count += 1
                if len(chunk) == _RECORDS_PER_CHUNK:
                    writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
                    chunk = []
            writer.write_table(pa.Table.from_pylist(chunk, schema=schema))

    write_in_batch(batch, write)
    return count


def _write_lines(target: Path, lines: Iterable[bytes], batch: AtomicBatch | None) -> int:
    """Stage ``target`` with the encoded lines (each ending in a newline); return the count."""
    count = 0

    def write(b: AtomicBatch) -> None:
        nonlocal count
        with b.stage(target).open("wb", buffering=_WRITE_BUFFER) as fh:
            for line in lines:
                fh.write(line)
                count += 1

    write_in_batch(batch, write)
    return count


@dataclass(frozen=True)
class Selection:
    """Disagreements selected from trace and label files, ready for :func:`stream_disagreements`.

    ``items`` are :class:`~failcodes.disagreements.GroupSelection` (one per mapping, found on
    located sentence groups) or :class:`~failcodes.disagreements.Selected` (found on the
    trace columns); ``columns`` are those they were found on, ``index`` the labels.
    """

    columns: TraceColumns | SentenceColumns
    items: Sequence[Selected | GroupSelection]
    index: LabelIndex
    #: What the selection assumed of the data (failcodes.labelscope.assumptions_line).
    shape: DataShape | None = None

    def __iter__(self) -> Iterator[Selected]:
        """The disagreements one at a time (a group selection's built as they are written)."""
        from failcodes.disagreements import Selected

        for item in self.items:
            if isinstance(item, Selected):
                yield item
            else:
                yield from item

    def write(self, path: str | Path, *, batch: AtomicBatch | None = None) -> int:
        """:func:`stream_disagreements` of this selection; returns the count written.

        JSONL or Parquet of the tool's own Parquet traces, and JSONL of trace JSONL files,
        are written from the disagreements' heads instead (:mod:`failcodes.disagreementsql`:
        the same bytes).
        """
        from failcodes import disagreementsql

        def stream() -> int:
            return stream_disagreements(path, self.columns, iter(self), self.index, batch=batch)

        target = Path(path)
        if any(
            disagreementsql.applies(self.columns, self.items, self.index, target, lines)
            for lines in (False, True)
        ):
            cols = cast("SentenceColumns", self.columns)
            items = cast("list[GroupSelection]", list(self.items))
            return disagreementsql.write(target, cols, items, batch=batch, fallback=stream)
        return stream()


def select_from_files(
    trace_paths: Sequence[Path],
    labels_path: Path,
    mappings: Sequence[ErrorMapping],
    *,
    level: Level,
    without_claims: WithoutClaimsPolicy | str,
    question_scope: QuestionScope | str = QuestionScope.AUTO,
) -> Selection:
    """Every FN/FP of every system under each mapping, read the lightest way the files allow.

    At sentence level the traces are read as sentence groups (memory follows the sentences,
    issue 18) and the disagreements selected on them; the engine lists the rows of groups
    whose claims are no run of rows (systems interleaved, a sentence split over files).
    Labels the groups cannot match (claim labels, a label fitting no trace) take the
    trace columns, as claim level always does: the same disagreements, in the same order,
    and the same one-line errors either way. Sentence level against labels that are all
    claim-level is refused (:func:`~failcodes.labels.refuse_claim_labels`).
    """
    from failcodes.disagreements import select_group_disagreements, select_with_shape
    from failcodes.metrics import Level

    columns: TraceColumns | SentenceColumns
    if level is Level.SENTENCE:
        # sentence groups first; the same errors, in the same order, as the trace columns give
        columns, label_list = columnar.load_sentence_columns(trace_paths, labels_path, locate=True)
        refuse_claim_labels(label_list, labels_path, traces=columns)
    else:
        columns, label_list = columnar.load_columns(trace_paths, labels_path)
    _refuse_mixed_evidence(columns, trace_paths)
    if isinstance(columns, SentenceColumns):
        # the labels looked up through their match to the groups (no dict of positions)
        found = select_group_disagreements(
            columns,
            label_list,
            None,
            mappings,
            without_claims=without_claims,
            question_scope=question_scope,
        )
        if found is not None:
            found = _located(found)
        if found is not None:
            index = found[0].index if found else LabelIndex(label_list)
            shape = found[0].shape if found else None
            return Selection(found[0].cols if found else columns, found, index, shape)
        # two labels for one sentence: the index's error, before any other work (as ever)
        LabelIndex(label_list)
        # claims the groups cannot find: the trace columns find them
        del found, columns
        columns, label_list = columnar.load_columns(trace_paths, labels_path)
    index = LabelIndex(label_list)
    items: list[Selected] = []
    shape = None
    for m in mappings:
        chosen, shape = select_with_shape(
            columns,
            index,
            m,
            level=level,
            without_claims=without_claims,
            question_scope=question_scope,
        )
        items.extend(chosen)
    return Selection(columns, items, index, shape)


def _refuse_mixed_evidence(
    columns: TraceColumns | SentenceColumns, trace_paths: Sequence[Path]
) -> None:
    """Refuse a system read partly closed-book, partly retrieved, as ingest refuses it.

    ``disagreements`` writes each claim's evidence source, derived where the trace declares
    none, and ``attribute`` reads it as declared: traces ingest never read (written in the
    trace format, or ingested before it refused this) had a retrieval pipeline's claims
    without passages attributed to verification, not to the retrieval.
    """
    from failcodes.traces import refuse_mixed_evidence

    if columns.undeclared:
        files = " ".join(str(p) for p in trace_paths)
        via = f" when ingesting the traces (failcodes ingest generic {files} -o NEW.jsonl)"
        refuse_mixed_evidence(columns.undeclared, ", ".join(map(str, trace_paths)), via=via)


def _located(found: list[GroupSelection]) -> list[GroupSelection] | None:
    """The selections, or None if a disagreeing group's claims are not located.

    The engine lists the rows of every group whose claims are no run of rows (systems
    interleaved, a sentence split over files): None only for groups read without them.
    """
    if any(len(s.unlocated()) for s in found):
        return None
    return found


def stream_disagreements(
    path: str | Path,
    columns: TraceColumns | SentenceColumns,
    selected: Iterable[Any],
    index: Any,
    *,
    batch: AtomicBatch | None = None,
) -> int:
    """Write selected disagreements with their claims' full traces, streaming; return count.

    ``selected`` comes from :func:`failcodes.disagreements.select_with_shape` on
    ``columns`` (or, one :class:`~failcodes.disagreements.GroupSelection` after another,
    from ``select_group_disagreements`` on located sentence groups); the traces of each
    chunk of disagreements are fetched from the source files
    (:func:`~failcodes.columnar.claim_fetcher`; a group's claims as one run of lines), so
    memory stays proportional to a chunk, not to the passages (nor, with groups, to the
    disagreements).
    """
    from failcodes.disagreements import disagreement_json

    fetch = columnar.claim_fetcher(columns)

    def records() -> Iterator[tuple[dict[str, Any], bool]]:
        # each record, and whether msgspec writes its floats (passage scores) as repr does
        items = iter(selected)
        while chunk := list(itertools.islice(items, _GATHERED_PER_CHUNK)):
            fetched = fetch(chunk)
            plain = {r: p is not None and repr_scores(p) for r, (_, p) in fetched.items()}
            for s in chunk:
                claims = [fetched[r] for r in s.rows]
                rec = disagreement_json(
                    s, [t for t, _ in claims], index, passages=[p for _, p in claims]
                )
                yield rec, all(plain[r] for r in s.rows)

    target = Path(path)
    if _disagreement_format(target) is Format.JSONL:
        return _write_lines(target, _spaced_lines(records()), batch)
    return write_disagreement_records(target, (rec for rec, _ in records()), batch=batch)


def _spaced_lines(records: Iterable[tuple[Any, bool]]) -> Iterator[bytes]:
    """:func:`json_line_encoder`'s lines, reformatted by msgspec in C when that is exact.

    A record flagged plain (every float printed as ``repr`` does) whose compact encoding has
    no backslash (no escaped character) is spaced by ``msgspec.json.format`` (``", "`` and
    ``": "``, as ``json.dumps``); any other goes through the encoder.
    """
    encode = msgspec.json.Encoder().encode
    spaced = msgspec.json.format
    exact = json_line_encoder()
    for rec, plain in records:
        if plain:
            try:
                raw = encode(rec)
            except (msgspec.EncodeError, TypeError, OverflowError):
                raw = b"\\"  # the encoder decides (as json_line_encoder does)
            if b"\\" not in raw:
                yield spaced(raw, indent=0) + b"\n"
                continue
        yield exact(rec)


def read_disagreements(path: str | Path) -> list[Any]:
    """Read a disagreements file written by :func:`write_disagreement_records` (JSONL or Parquet).

    Raises :class:`InputError` naming the file, line (JSONL) or row (Parquet) and field.
    """
    from failcodes.disagreements import Disagreement

    source = Path(path)
    fmt = _disagreement_format(source)
    check_regular_file(source)

    def validate(rec: Any, line: int | None) -> Any:
        try:
            return Disagreement.model_validate(rec)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or None
            raise InputError(err["msg"], path=source, line=line, field=field) from None

    if fmt is Format.JSONL:
        return [validate(rec, no) for no, rec in iter_jsonl(source)]
    pa, _ = pyarrow_modules()
    pf = open_parquet(source)  # its limits checked: it decodes to a bounded size
    out: list[Disagreement] = []
    try:
        for batch in pf.iter_batches(batch_size=1024, use_threads=False):
            out += [validate(rec, len(out) + 1) for rec in batch.to_pylist()]
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"unreadable Parquet file: {exc}", path=source) from None
    return out


def record_line(path: Path, number: int) -> tuple[int, str]:
    """The line of a disagreements file's ``number``-th record (blank lines skipped), or its row.

    With the word for it (``"line"``, ``"row"``). For an error message: the file is read again,
    up to that record.
    """
    if _disagreement_format(path) is not Format.JSONL:
        return number, "row"  # a Parquet file's rows are its lines (as read_disagreements has it)
    return next(itertools.islice(jsonl_lines(path), number - 1, None))[0], "line"


def _struct_of(model: type[BaseModel], name: str) -> Any:
    """A msgspec struct type mirroring ``model`` (nested models and tuples included).

    Every field is required (no defaults): the fast reader vouches only for lines with every
    field present, as :func:`write_disagreement_records` writes them.
    """
    fields: list[tuple[str, Any]] = []
    for field_name, info in model.model_fields.items():
        annotation = info.annotation
        optional = False
        if get_origin(annotation) in (Union, types.UnionType):
            inner = [a for a in get_args(annotation) if a is not type(None)]
            optional = len(inner) < len(get_args(annotation))
            annotation = inner[0]
        if get_origin(annotation) is tuple:
            item = get_args(annotation)[0]
            kind: Any = list[  # type: ignore[misc]
                _struct_of(item, f"{name}_{field_name}")
                if isinstance(item, type) and issubclass(item, BaseModel)
                else msgspec_type(item, ())
            ]
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            kind = _struct_of(annotation, f"{name}_{field_name}")
        else:
            kind = msgspec_type(annotation, info.metadata)
        fields.append((field_name, kind | None if optional else kind))
    return msgspec.defstruct(name, fields, forbid_unknown_fields=True, gc=False)  # no cycles


def _non_null(kind: Any) -> list[Any]:
    """The members of a union type other than None (``[kind]`` for a type that is no union)."""
    if get_origin(kind) in (Union, types.UnionType):
        return [a for a in get_args(kind) if a is not type(None)]
    return [kind]


def _is_text(kind: Any) -> bool:
    """Whether a msgspec field type holds only JSON strings (or null): str or a Literal."""
    if get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    inner = [get_args(a)[0] if get_origin(a) is Annotated else a for a in _non_null(kind)]
    return all(a is str or get_origin(a) is Literal for a in inner)


def _string_counter(struct: Any) -> Callable[[Sequence[Any]], int]:
    """A function giving the number of JSON strings among the values of ``struct`` records.

    Non-null string fields, the items of string lists and, recursively, the strings of
    nested struct lists (the nested structs themselves have no further list of structs
    in a disagreement but any depth is counted).
    """
    texts: list[str] = []
    text_lists: list[Callable[[Any], Any]] = []
    nested: list[tuple[Callable[[Any], Any], Callable[[Sequence[Any]], int]]] = []
    for field_name in struct.__struct_fields__:
        kind = struct.__annotations__[field_name]
        if _is_text(kind):
            texts.append(field_name)
            continue
        bare = _non_null(kind)
        if len(bare) == 1 and get_origin(bare[0]) is list:
            item = get_args(bare[0])[0]
            if _is_text(item):
                text_lists.append(operator.attrgetter(field_name))
            elif hasattr(item, "__struct_fields__"):
                nested.append((operator.attrgetter(field_name), _string_counter(item)))
    width = len(texts)
    values = operator.attrgetter(*texts) if width > 1 else None

    def count(items: Sequence[Any]) -> int:
        if values is not None:
            found = list(itertools.chain.from_iterable(map(values, items)))
            n = width * len(items) - found.count(None)
        else:
            n = sum(getattr(x, texts[0]) is not None for x in items) if width else 0
        for get in text_lists:
            n += sum(map(len, map(get, items)))
        for get, inner in nested:  # the nested records of all items at once
            n += inner(list(itertools.chain.from_iterable(map(get, items))))
        return n

    return count


@functools.lru_cache(maxsize=1)
def _disagreement_decoder() -> Any:

    from failcodes.disagreements import Disagreement

    return msgspec.json.Decoder(_struct_of(Disagreement, "DisagreementLine"))


def read_disagreement_traces(path: str | Path) -> list[Trace]:
    """The traces behind a disagreements file: what ``judge --from`` codes.

    Equal to ``disagreement_traces(read_disagreements(path))`` (one trace per claim record,
    first occurrence kept), with the same errors. JSONL lines written by
    :func:`write_disagreement_records` (every field present) are decoded by msgspec against the
    model and turned into traces without a second validation; any other file, or any line
    the decoder cannot vouch for, takes that exact path instead.
    """
    from failcodes.units import disagreement_traces, once_per_claim

    source = Path(path)
    try:
        return once_per_claim(iter_disagreement_claims(source), claim_trace_of)
    except ExactReaderNeededError:
        return disagreement_traces(read_disagreements(source))


def iter_disagreement_claims(path: str | Path) -> Iterator[tuple[Any, Any]]:
    """Stream ``(disagreement, claim)`` records of a disagreements JSONL file, decoded only.

    The records are msgspec structs with the models' fields (verdicts canonical), one per
    claim record in file order, duplicates included (the caller keeps the first of a
    (system, question, sentence, claim)). Vouched for as :func:`iter_disagreement_records`.
    """
    for rec in iter_disagreement_records(path):
        for c in rec.claims:
            yield rec, c


def iter_claim_ranks(path: str | Path) -> Iterator[tuple[tuple[str, str, str, str], list[int]]]:
    """Each claim record's (system, question, sentence, claim) and its passages' ranks.

    In file order, duplicates included; the fast reader's records, then (from the first line
    it cannot vouch for) the exact reader's, which raises the file's one-line error.
    """
    done = 0
    try:
        for rec in iter_disagreement_records(path):
            for c in rec.claims:
                ids = (rec.system, rec.question_id, rec.sentence_id, c.claim_id)
                yield ids, [p.rank for p in c.passages]
            done += 1
    except ExactReaderNeededError:
        for d in read_disagreements(path)[done:]:
            for c in d.claims:
                ids = (d.system, d.question_id, d.sentence_id, c.claim_id)
                yield ids, [p.rank for p in c.passages]


def iter_disagreement_records(path: str | Path) -> Iterator[Any]:
    """Stream the disagreements of a disagreements JSONL file, decoded only (msgspec structs).

    Only lines :func:`write_disagreement_records` writes (every field present, no duplicate key or
    rank) are vouched for: anything else raises :class:`ExactReaderNeededError` (possibly
    after some records were yielded), and the caller reads the file with
    :func:`read_disagreements`, which accepts it or raises the one-line error. Memory: one
    line at a time.
    """
    vouched = vouched_disagreement_line()
    for body in disagreement_lines(path):
        rec = vouched(body)
        if rec is not None:
            yield rec


def disagreement_lines(path: str | Path) -> Iterator[bytes]:
    """The lines of a disagreements JSONL file as the fast readers take them (no BOM).

    Raises :class:`ExactReaderNeededError` for a file that is not JSONL and at a line the
    text reader would split (a carriage return inside it).
    """
    source = Path(path)
    if _disagreement_format(source) is not Format.JSONL or not source.is_file():
        raise ExactReaderNeededError
    with source.open("rb", buffering=_SCAN_BUFFER) as fh:
        for lineno, raw in byte_lines(fh, source):
            body = raw[3:] if lineno == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
            if b"\r" in body and b"\r" in body.rstrip(b"\r\n"):
                raise ExactReaderNeededError
            yield body


@functools.lru_cache(maxsize=1)
def vouched_disagreement_line() -> Callable[[bytes], Any]:
    """The check :func:`iter_disagreement_records` makes of a line (no line break inside).

    The returned function gives the line's record, None for a blank line, or raises
    :class:`ExactReaderNeededError`.
    """
    from failcodes.disagreements import ClaimRecord, Disagreement

    decoder = _disagreement_decoder()
    decode = decoder.decode
    strings = _string_counter(decoder.type)
    n_top, n_claim = len(Disagreement.model_fields), len(ClaimRecord.model_fields)
    n_passage = len(Passage.model_fields)

    def vouched(body: bytes) -> Any:
        try:
            rec = decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            if not body.strip():
                return None
            raise ExactReaderNeededError from None
        # every field is present (the decoder requires them all): a duplicate key is one
        # key too many
        fields = n_top + sum(n_claim + n_passage * len(c.passages) for c in rec.claims)
        if not keys_vouched(body, fields, strings([rec])):
            raise ExactReaderNeededError
        for c in rec.claims:
            if len(set(map(_RANK_OF, c.passages))) != len(c.passages):
                raise ExactReaderNeededError
        return rec

    return vouched


def iter_parquet_disagreement_claims(path: str | Path) -> Iterator[tuple[Any, Any]]:
    """:func:`iter_disagreement_claims` of a disagreements Parquet file (the dry run counts them).

    pyarrow reads the rows a batch at a time; msgspec converts each row to the struct a JSONL
    line decodes to, as strictly (no value pydantic would convert: ``1.0`` for a rank, ``1``
    for a flag; every field present, none unknown), and the checks the JSONL reader makes
    that a row still needs: ranks distinct within a claim, scores finite (a Parquet double
    may be NaN, which the model refuses). Anything else, or a file pyarrow cannot read,
    raises :class:`ExactReaderNeededError`: :func:`read_disagreements` then accepts the file
    with the same values or names the bad row.
    """
    import math

    source = Path(path)
    if EXTENSIONS.get(source.suffix.lower()) is not Format.PARQUET or not source.is_file():
        raise ExactReaderNeededError
    pa, _ = pyarrow_modules()
    kind = _disagreement_decoder().type
    convert = msgspec.convert
    try:
        pf = open_parquet(source)
        for batch in pf.iter_batches(batch_size=1024, use_threads=False):
            for row in batch.to_pylist():
                rec = convert(row, kind)
                for c in rec.claims:
                    if len(set(map(_RANK_OF, c.passages))) != len(c.passages):
                        raise ExactReaderNeededError
                    for p in c.passages:
                        if p.score is not None and not math.isfinite(p.score):
                            raise ExactReaderNeededError
                    yield rec, c
    except (InputError, msgspec.ValidationError, pa.ArrowException, OSError):
        raise ExactReaderNeededError from None


def claim_trace_of(rec: Any, claim: Any) -> Trace:
    """The trace of a claim record :func:`iter_disagreement_claims` gave (no validation).

    What :func:`failcodes.units.claim_trace` makes of the validated models.
    """
    source = claim.evidence_source
    return Trace.model_construct(
        system=rec.system,
        question_id=rec.question_id,
        sentence_id=rec.sentence_id,
        claim_id=claim.claim_id,
        claim=claim.claim,
        sentence=rec.sentence or None,  # empty as missing, as the model's validators make it
        verdict=Verdict(claim.verdict),
        raw_verdict=claim.raw_verdict or None,
        reasoning=claim.reasoning or None,
        verifier=claim.verifier or None,
        retriever=claim.retriever or None,
        passages=construct_passages(claim.passages),
        evidence_source=EvidenceSource(source) if source is not None else None,
    )
