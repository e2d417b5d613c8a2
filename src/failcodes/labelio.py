"""Labels and sentences files: flat models, one record per line or row (JSONL, CSV or Parquet).

:func:`read_labels` reads clinical labels: a model per label, or with ``columns=True`` a
:class:`~failcodes.labelcols.LabelColumns` (a JSONL file is then decoded by msgspec straight into
columns when every line is one pydantic accepts unchanged). It refuses two labels for one
target by one annotator (:func:`label_once`, :func:`target_once`) and, given traces, a label
for a sentence or claim they do not hold (:func:`validate_labels`); sentence-level analysis
against labels that are all claim-level is refused (:func:`refuse_claim_labels`).
:func:`write_labels` and :func:`write_sentences` (answer sentences) write atomically.
Rows, formats and record validation come from :mod:`failcodes.tableio`; every error names the
file, line and field.
"""

from __future__ import annotations

import array
import functools
import itertools
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, TypeVar, overload

from failcodes import jsonio
from failcodes.errors import InputError
from failcodes.fileio import AtomicBatch, a_path
from failcodes.jsonio import iter_jsonl, keys_vouched
from failcodes.labelcols import (
    LABEL_FIELDS,
    TOTAL_ID_FIELDS,
    LabelColumns,
    first_total_id,
    label_column,
    label_scope_problem,
    total_id_problem,
)
from failcodes.tableio import (
    CELL_ERRORS,
    NO_ID,
    NUMBER_ID_FIELDS,
    NUMBER_NAME_FIELDS,
    UTF8_BOM,
    Format,
    checked_csv_rows,
    checked_parquet_rows,
    detect_format,
    drop_nones,
    exponent_problem,
    first_in_exponent,
    id_problem,
    id_text,
    name_text,
    refuse_excel_error,
    rename_fields,
    required_fields,
    stage_table,
    validate_record,
    write_in_batch,
)

if TYPE_CHECKING:  # no pydantic model imported to read and write a JSONL labels file (issue 30)
    from pydantic import BaseModel

    from failcodes.labelmodel import Label
    from failcodes.sentences import Sentence
    from failcodes.tracecols import TraceColumns
    from failcodes.traces import Trace

M = TypeVar("M", bound="BaseModel")


# ------------------------------------------------------------------------------------------
# Flat model files (labels, sentences)
# ------------------------------------------------------------------------------------------


def _records(
    path: Path,
    model: type[BaseModel],
    column_map: Mapping[str, str],
    columns: Sequence[str] | None = None,
    convert: str | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    fmt = detect_format(path)
    cols = list(columns if columns is not None else model.model_fields)
    rows: Iterable[tuple[int, dict[str, Any]]]
    if fmt is Format.JSONL:
        rows = ((line, rename_fields(rec, column_map)) for line, rec in iter_jsonl(path))
    elif fmt is Format.CSV:  # text cells: no number ids
        yield from checked_csv_rows(path, cols, required_fields(model), column_map, convert=convert)
        return
    else:
        rows = checked_parquet_rows(path, cols, required_fields(model), column_map, convert=convert)
    # a number id as text (the rule of every reader), named by the file's own column
    ids = [
        (n, next((k for k, v in column_map.items() if v == n), n))
        for n in NUMBER_ID_FIELDS
        if n in model.model_fields
    ]
    names = [
        (n, next((k for k, v in column_map.items() if v == n), n))
        for n in NUMBER_NAME_FIELDS
        if n in model.model_fields
    ]
    for line, rec in rows:
        for name, column in ids:
            if name in rec:
                rec[name] = id_text(rec[name], path=path, line=line, field=column)
        for name, column in names:
            if name in rec:
                rec[name] = name_text(rec[name], path=path, line=line, field=column)
        yield line, drop_nones(rec)


def _iter_flat(
    path: str | Path,
    model: type[M],
    column_map: Mapping[str, str] | None,
    shared: Sequence[str] = (),
    convert: str | None = None,
) -> Iterator[tuple[int, M]]:
    """Read and validate every record; values of the ``shared`` fields are stored once.

    Labels repeat their question id, annotator, severity (and often rationale) across
    thousands of rows: one string object per distinct value instead of one per row.
    """
    p = Path(path)
    values: dict[str, str] = {}
    for line, rec in _records(p, model, column_map or {}, convert=convert):
        for name in shared:
            value = rec.get(name)
            if type(value) is str:
                rec[name] = values.setdefault(value, value)
        yield line, validate_record(model, rec, p, line, convert=convert)


#: Label fields whose values repeat across rows (one string object per distinct value).
_SHARED_LABEL_FIELDS = ("question_id", "rationale", "severity", "annotator")


#: Where each label target was first read: (kind, id, annotator, system) -> (path, line,
#: question).
LabelsSeen = dict[tuple[str, str, str | None, str | None], tuple[Path, int, str | None]]


def label_once(seen: LabelsSeen, label: Label, path: Path, line: int) -> None:
    """Record ``label``'s target as read at ``path:line``; a second label for it is an error.

    Sentence ids are unique across the data set (a sentence label applies to that sentence
    id wherever it occurs), so two labels for one sentence id under different questions are
    sentences numbered per answer: the message says so.
    """
    target_once(
        seen,
        label.claim_id,
        label.sentence_id,
        label.question_id,
        label.annotator,
        path=path,
        line=line,
        system=label.system,
    )


def target_once(
    seen: LabelsSeen,
    claim_id: str | None,
    sentence_id: str | None,
    question_id: str | None,
    annotator: str | None,
    *,
    path: Path,
    line: int,
    system: str | None = None,
) -> None:
    """:func:`label_once` given the label's target fields (labels held as columns).

    Per-system labels are keyed by their system too: one sentence id labelled for two
    systems is two targets (each system's answer has its own sentence of that id).
    """
    kind, key = ("claim", claim_id) if claim_id else ("sentence", sentence_id)
    assert key is not None
    k = (kind, key, annotator, system)
    if k in seen:
        first_path, first_line, first_question = seen[k]
        where = f"line {first_line}" if first_path == path else f"{first_path}:{first_line}"
        hint = ""
        questions = (first_question, question_id)
        if kind == "sentence" and None not in questions and questions[0] != questions[1]:
            hint = (
                f"; under questions {first_question!r} and {question_id!r}: sentence "
                "ids are unique across the data set, not numbered per answer (the "
                "generic adapters' --option sentence_ids=question makes them "
                f"'{question_id}:{key}'; the traces need the same)"
            )
        elif first_path != path:  # each system's claim table with the shared labels
            hint = (
                "; the same labels in several files? failcodes ingest generic-labels FILES -o "
                "OUT --option duplicates=same keeps one of each target labelled alike"
            )
        else:  # a row per error code of a sentence (co-occurring codes), each row an error
            hint = (
                f"; an id a spreadsheet read as a number? it saves the ids {key}0 and {key} "
                f"both as {key} (import the column as Text)"
                if _DECIMAL_ID.fullmatch(key) and not key.endswith("0")
                else ""
            ) + (
                f"; a row per code of one {kind} (several codes)? failcodes ingest "
                "generic-labels FILE -o OUT --option duplicates=same keeps one of each target "
                "labelled alike"
            )
            if system is None:  # or two systems' labels, each of its own answer, stacked
                hint += (
                    "; labels of several systems' answers stacked? ingest each system's with "
                    "--system NAME (or --option label_scope=system) so each label names its "
                    "system"
                )
        raise InputError(
            f"duplicate label for {kind} {key!r}"
            + (f" of system {system!r}" if system is not None else "")
            + (f" by {annotator!r}" if annotator else "")
            + f" (first at {where}){hint}",
            path=path,
            line=line,
            field=f"{kind}_id",
        )
    seen[k] = (path, line, question_id)


#: An id a spreadsheet reads as a decimal number, so ``1.10`` and ``1.1`` are one (``1.1``).
_DECIMAL_ID = re.compile(r"[0-9]+\.[0-9]+")


def _targets_distinct(
    claim_ids: Sequence[str | None],
    sentence_ids: Sequence[str | None],
    annotators: Sequence[str | None],
    systems: Sequence[str | None],
) -> bool:
    """True if no two labels share a target key as :func:`target_once` forms it.

    One 64-bit hash per label in a set (~7 MB at 100k labels, where the ``seen`` map of
    :func:`target_once` holds ~19 MB; no numpy, which ``ingest`` of labels would import for
    this alone). Equal hashes (a duplicate, or a collision) say nothing for sure: the caller
    then runs :func:`target_once` for the exact error.
    """
    if not any(claim_ids):  # sentence labels: the key is (sentence, annotator, system)
        if len(set(annotators)) == len(set(systems)) == 1:  # one annotator, one system
            return len(set(sentence_ids)) == len(claim_ids)
        keys = zip(sentence_ids, annotators, systems, strict=True)
        return len(set(map(hash, keys))) == len(claim_ids)
    hashes = {
        hash(("claim", c, a, y) if c else ("sentence", s, a, y))
        for c, s, a, y in zip(claim_ids, sentence_ids, annotators, systems, strict=True)
    }
    return len(hashes) == len(claim_ids)


@functools.lru_cache(maxsize=1)
def _label_decoder() -> Any:
    """A msgspec decoder that accepts only label lines pydantic accepts unchanged.

    Fields in :class:`Label` order (keyword-only), typed as there, unknown fields refused.
    A line it refuses is not necessarily invalid (pydantic coerces ``"true"``, drops
    ``null``): the exact reader then reads the file and accepts it or raises its error.
    """
    import msgspec

    fields = [(n, bool) if n == "has_error" else (n, str | None, None) for n in LABEL_FIELDS]
    line = msgspec.defstruct(
        "LabelLine", fields, kw_only=True, forbid_unknown_fields=True, gc=False
    )
    return msgspec.json.Decoder(line)


#: Bytes of a labels file decoded at once by :func:`_fast_label_columns` (whole lines).
_PIECE = 1 << 18


def _fast_label_columns(path: Path, column_map: Mapping[str, str] | None) -> LabelColumns | None:
    r"""A JSONL labels file decoded by msgspec into columns, or None to use the exact reader.

    Equal to what the exact reader (:func:`_iter_flat`: ``json`` + pydantic per line) gives,
    without its dict and model per line. The file is decoded a piece of whole lines at a time
    (:func:`_labels_of_piece`); None, for the whole file, at the first line it cannot vouch
    for: one msgspec refuses, one without a target, a duplicate key or explicit ``null``, a
    ``\r`` inside a line (the text reader splits lines there), a file it cannot open. The
    exact reader then reads the file from the start and accepts it or raises its usual error.
    """
    if column_map or detect_format(path) is not Format.JSONL:
        return None
    names = LABEL_FIELDS
    columns: list[list[Any]] = [[] for _ in names]
    given: list[set[str]] = []
    lines: array.array[int] = array.array("q")
    # one set of given fields per pattern of absent ones, shared by its labels
    patterns: dict[tuple[bool, ...], set[str]] = {}
    # equal values of the repeating fields held once (decoded, each is its own object)
    shared: list[dict[Any, Any] | None] = [
        {} if name in _SHARED_LABEL_FIELDS else None for name in names
    ]
    try:
        fh = path.open("rb")
    except OSError:
        return None
    with fh:
        for found in _label_pieces(fh, names):
            if found is None:
                return None
            held, at = found
            for column, values, seen in zip(columns, held, shared, strict=True):
                column.extend(values if seen is None else map(seen.setdefault, values, values))
            absent = list(_absent(held))
            for pattern in set(absent).difference(patterns):
                patterns[pattern] = {n for n, a in zip(names, pattern, strict=True) if not a}
            given.extend(map(patterns.__getitem__, absent))
            lines.extend(at)
    out = LabelColumns.from_columns(dict(zip(names, columns, strict=True)), given)
    out.lines = lines
    return out


def _label_pieces(
    fh: BinaryIO, names: Sequence[str]
) -> Iterator[tuple[list[list[Any]], Iterable[int]] | None]:
    """Each piece of whole lines of the open labels file ``fh`` as columns and their lines.

    :func:`_labels_of_piece` of ``_PIECE`` bytes at a time; None (and nothing after it) at
    the first piece holding a line it cannot vouch for.
    """
    rest = fh.read(_PIECE).removeprefix(UTF8_BOM)
    read = 0  # lines before the piece
    while True:
        more = fh.read(_PIECE)
        if more:
            rest += more
            cut = rest.rfind(b"\n") + 1
            if not cut:  # no line ends yet (past MAX_LINE: the exact reader refuses it)
                if len(rest) > jsonio.MAX_LINE:
                    yield None
                    return
                continue
            piece, rest = rest[:cut], rest[cut:]
        elif rest:  # the last line may lack its line end
            piece, rest = rest if rest.endswith(b"\n") else rest + b"\n", b""
        else:
            return
        found = _labels_of_piece(piece, read, names)
        yield found
        if found is None:
            return
        read += piece.count(b"\n")


def _absent(columns: Sequence[Sequence[Any]]) -> Iterator[tuple[bool, ...]]:
    """Each label's pattern of absent fields (True where its value is None), in C."""
    return zip(*(map(operator.is_, c, itertools.repeat(None)) for c in columns), strict=True)


def _labels_of_piece(
    piece: bytes, before: int, names: Sequence[str]
) -> tuple[list[list[Any]], Iterable[int]] | None:
    r"""The labels of ``piece`` (whole lines, each ending in ``\n``) as columns, and their lines.

    ``before``: the file's lines before the piece. At once (:func:`_whole_piece`) where the
    piece is one label a line, else a line at a time; None where a line cannot be vouched for.
    """
    held = _whole_piece(piece, names)
    if held is not None:
        return held, range(before + 1, before + 1 + len(held[0]))
    import msgspec

    decode = _label_decoder().decode
    astuple = msgspec.structs.astuple
    claim, sentence = names.index("claim_id"), names.index("sentence_id")
    rows: list[tuple[Any, ...]] = []
    at: list[int] = []
    for lineno, raw in enumerate(piece.split(b"\n")[:-1], start=before + 1):
        body = raw.removesuffix(b"\r")
        if not body.strip():
            continue
        if b"\r" in body:
            return None
        try:
            row = astuple(decode(body))
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        if row[claim] is None and row[sentence] is None:
            return None
        present = len(row) - row.count(None)
        # one field (has_error) is no string: the rest present are string values
        if not keys_vouched(body, present, present - 1):
            return None
        rows.append(row)
        at.append(lineno)
    return [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in names], at


def _whole_piece(piece: bytes, names: Sequence[str]) -> list[list[Any]] | None:
    r"""The labels of ``piece`` decoded at once as columns, if it is one label a line.

    msgspec decodes every object of the piece at once (no Python step per line); the piece's
    bytes then vouch that they were one label per line, each as a line at a time reads it. A
    ``}`` followed by a line end is no string's (a string holds no raw line break) and ends a
    label (no label value is an object): as many labels, ``}``-line ends and line ends means
    one whole label on each line, no blank line and nothing after a ``}``. Keys: without a
    backslash a quote only delimits a key or a string value, so the piece holds two quotes
    per key given and per string value (every given field but ``has_error``); an extra key (a
    duplicate, an explicit ``null``) adds quotes. With one, each line is counted
    (:func:`~failcodes.jsonio.keys_vouched`). None: read it a line at a time.
    """
    import msgspec

    if b"\r" in piece:  # a raw \r is no string's: a line end, then, or a refusal
        piece = piece.replace(b"\r\n", b"\n")
        if b"\r" in piece:
            return None
    try:
        labels = _label_decoder().decode_lines(piece)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    n = len(labels)
    if piece.count(b"\n") != n or piece.count(b"}\n") != n:
        return None
    held = [list(map(operator.attrgetter(name), labels)) for name in names]
    del labels
    claims, sentences = held[names.index("claim_id")], held[names.index("sentence_id")]
    if (None, None) in zip(claims, sentences, strict=True):  # a line without a target
        return None
    if b"\\" not in piece:
        given = sum(n - values.count(None) for values in held)
        return held if piece.count(b'"') == 2 * (2 * given - n) else None
    given_per_line = [len(names) - row.count(None) for row in zip(*held, strict=True)]
    lines = piece.split(b"\n")[:-1]
    vouched = map(keys_vouched, lines, given_per_line, [k - 1 for k in given_per_line])
    return held if all(vouched) else None


@overload
def read_labels(
    path: str | Path,
    *,
    column_map: Mapping[str, str] | None = ...,
    traces: Sequence[Trace] | TraceColumns | None = ...,
    seen: LabelsSeen | None = ...,
    columns: Literal[False] = ...,
) -> list[Label]: ...


@overload
def read_labels(
    path: str | Path,
    *,
    column_map: Mapping[str, str] | None = ...,
    traces: Sequence[Trace] | TraceColumns | None = ...,
    seen: LabelsSeen | None = ...,
    columns: Literal[True],
) -> LabelColumns: ...


def read_labels(
    path: str | Path,
    *,
    column_map: Mapping[str, str] | None = None,
    traces: Sequence[Trace] | TraceColumns | None = None,
    seen: LabelsSeen | None = None,
    columns: bool = False,
) -> list[Label] | LabelColumns:
    """Read clinical labels; with ``traces``, also check that every label's target exists.

    Two labels for the same target (sentence or claim) by the same annotator are an error, as
    is (with ``traces``) a label for a sentence or claim the traces do not contain (see
    :func:`failcodes.labels.check_labels_against_traces` for the exact rule). ``seen`` lets a
    caller check duplicates across several files. With ``columns`` the labels are kept as
    :class:`~failcodes.labelcols.LabelColumns` (same labels and errors, no model per label).
    """
    p = a_path(path)  # a file object: one line, not a TypeError
    # a foreign field's refusal names the --map of ingest generic-labels (metrics has none);
    # given a column map, the caller is that command
    convert = None if column_map is not None else "generic-labels"
    labels: list[Label] | LabelColumns
    if columns:
        held = _fast_label_columns(p, column_map)
        if held is None:  # a model per label (pydantic imported only here)
            from failcodes.labelmodel import Label

            held = LabelColumns()
            for line, label in _iter_flat(p, Label, column_map, _SHARED_LABEL_FIELDS, convert):
                held.append(label)
                held.lines.append(line)
        held.compact()
        held.path = p
        labels = held
        lines = held.lines
    else:
        from failcodes.labelmodel import Label

        listed = list(_iter_flat(p, Label, column_map, _SHARED_LABEL_FIELDS, convert))
        labels = [label for _, label in listed]
        lines = array.array("q", (line for line, _ in listed))
        del listed
    claim_ids = label_column(labels, "claim_id")
    sentence_ids = label_column(labels, "sentence_id")
    annotators = label_column(labels, "annotator")
    systems = label_column(labels, "system")
    for name, ids in (
        ("sentence_id", sentence_ids),
        ("claim_id", claim_ids),
        ("question_id", label_column(labels, "question_id")),
        ("system", systems),
    ):
        # named by the file's own column (a --map renamed it)
        column = next((k for k, v in (column_map or {}).items() if v == name), name)
        _check_label_ids(p, column, ids, lines, totals=name in TOTAL_ID_FIELDS)
    for name in _TEXT_LABEL_FIELDS:  # '#REF!' text (a CSV's cell is refused as such)
        column = next((k for k, v in (column_map or {}).items() if v == name), name)
        _check_label_texts(p, column, label_column(labels, name), lines)
    scope = label_scope_problem(labels)
    if scope is not None:  # labels with and without a system: refused where the mix begins
        column = next((k for k, v in (column_map or {}).items() if v == "system"), "system")
        raise InputError(scope.message, path=p, line=lines[scope.position], field=column)
    if seen is not None or not _targets_distinct(claim_ids, sentence_ids, annotators, systems):
        seen = {} if seen is None else seen
        targets = zip(
            lines,
            claim_ids,
            sentence_ids,
            label_column(labels, "question_id"),
            annotators,
            systems,
            strict=True,
        )
        for line, claim, sentence, question, annotator, system in targets:
            target_once(
                seen, claim, sentence, question, annotator, path=p, line=line, system=system
            )
    if traces is not None:
        from failcodes.labels import validate_labels

        validate_labels(labels, traces, path=p, lines=lines)
    return labels


#: A label's free texts, refused where one is Excel's error value (:func:`_check_label_texts`).
_TEXT_LABEL_FIELDS = ("annotator", "rationale", "sentence")


def _check_label_texts(
    path: Path, name: str, texts: Sequence[str | None], lines: Sequence[int]
) -> None:
    """Refuse a text that is Excel's error value (``#REF!``: a formula that failed).

    A CSV's cell so written is refused (:func:`~failcodes.tableio.checked_csv_rows`); a labels
    frame read from a workbook and saved as JSONL or Parquet kept the text: an annotator
    ``#REF!`` was an annotator of its own, a sentence ``#REF!`` the label's sentence text.
    Looked at in C (a compacted column's few distinct values once).
    """
    held: Sequence[Any] = texts if isinstance(texts, list) else list(set(texts))
    if CELL_ERRORS.isdisjoint(held):
        return
    for pos, value in enumerate(texts):
        refuse_excel_error(value, path, lines[pos], name)


def _check_label_ids(
    path: Path, name: str, ids: Sequence[str | None], lines: Sequence[int], *, totals: bool
) -> None:
    """Refuse a blank, padded (``" 0:c1"`` missed ``0:c1`` without a word) or totals row's id.

    A totals row: :func:`failcodes.labelcols.total_id_problem`.
    """
    # looked at in C (a few distinct values of a compacted column once); ``filter`` drops None
    held: Sequence[Any] = ids if isinstance(ids, list) else list(set(ids))
    stripped = map(str.strip, filter(None, held))
    if (
        "" in held
        or not all(map(str.__eq__, filter(None, held), stripped))
        or not NO_ID.isdisjoint(held)  # '#N/A', 'nan': no id
    ):
        for pos, value in enumerate(ids):
            problem = id_problem(value)
            if problem is not None:
                raise InputError(problem, path=path, line=lines[pos], field=name)
    at = first_total_id(ids) if totals else None
    if at is not None:
        problem = total_id_problem(name, ids[at])
        raise InputError(str(problem), path=path, line=lines[at], field=name)
    at = first_in_exponent(held)  # 1.23457E+11: an id a spreadsheet cut (the readers' rule)
    if at is not None:
        at = list(ids).index(held[at])
        raise InputError(exponent_problem(str(ids[at])), path=path, line=lines[at], field=name)


def write_labels(
    path: str | Path, labels: Iterable[Label], *, batch: AtomicBatch | None = None
) -> None:
    """Write labels atomically in the format given by the extension of ``path``.

    Shared labels (none names a system) are written without a ``system`` column. Labels
    held as :class:`~failcodes.labelcols.LabelColumns` go to JSONL from their columns.
    """
    if isinstance(labels, LabelColumns) and detect_format(path) is Format.JSONL:
        held = labels
        write_in_batch(batch, lambda b: _stage_label_lines(b, Path(path), held))
        return
    from failcodes.labelmodel import Label

    rows = list(labels)
    omit = () if any(label.system is not None for label in rows) else ("system",)
    _write_flat(path, Label, rows, batch, omit)


class _UnvouchedError(Exception):
    """:func:`copy_labels` met what it leaves to :func:`read_labels` (nothing written)."""


def copy_labels(path: Path, target: Path) -> int | None:
    """Write the JSONL labels file ``path`` to ``target`` a piece at a time: how many, or None.

    As :func:`read_labels` (columns) and :func:`write_labels` would: the same bytes and the
    same checks, without holding the labels (read_labels held them all: 100,000 labels
    peaked 1.67x a 10,000-label file's RSS, 45.8 MB against 27.4; issue 30). Per piece of
    lines: the fast reader's vouching, the ids' checks, one scope; across the file one hash
    a target (a set of ints, ~70 bytes a label). None, nothing written, at the first thing
    it cannot vouch for or that may be an error (a repeated hash: a duplicate or a
    collision; no label): the caller then runs read_labels, which reads the file from the
    start and accepts it or raises its usual error at its usual line.
    """
    if detect_format(path) is not Format.JSONL or detect_format(target) is not Format.JSONL:
        return None
    try:
        fh = path.open("rb")
    except OSError:
        return None
    try:
        with fh, AtomicBatch() as batch:
            return _copy_pieces(fh, path, batch.stage(target))
    except _UnvouchedError:
        return None


def _copy_pieces(fh: BinaryIO, path: Path, staged: Path) -> int:
    """:func:`copy_labels`'s loop: the labels of ``fh`` checked and written to ``staged``."""
    import msgspec

    names = LABEL_FIELDS
    at_claim, at_sentence = names.index("claim_id"), names.index("sentence_id")
    at_annotator, at_system = names.index("annotator"), names.index("system")
    checked = [
        (names.index(name), name in TOTAL_ID_FIELDS)
        for name in ("sentence_id", "claim_id", "question_id", "system")
    ]
    encode_lines = msgspec.json.Encoder().encode_lines
    line_of = _label_line()
    targets: set[int] = set()
    count = 0
    shared: bool | None = None  # no label names a system (None: no label yet)
    with staged.open("wb") as out:
        for found in _label_pieces(fh, names):
            if found is None:
                raise _UnvouchedError
            held, at = found
            n = len(held[0])
            if not n:
                continue
            lines = list(at)
            for pos, totals in checked:
                try:
                    _check_label_ids(path, names[pos], held[pos], lines, totals=totals)
                except InputError:
                    raise _UnvouchedError from None
            systems = held[at_system]
            if shared is None:
                shared = systems[0] is None
            if systems.count(None) != (n if shared else 0):
                raise _UnvouchedError
            claims, annotators = held[at_claim], held[at_annotator]
            if any(claims):
                sentences = held[at_sentence]
                keys: Iterable[Any] = (
                    ("claim", c, a, y) if c else (s, a, y)
                    for c, s, a, y in zip(claims, sentences, annotators, systems, strict=True)
                )
            else:  # sentence labels: (sentence, annotator, system)
                keys = zip(held[at_sentence], annotators, systems, strict=True)
            targets.update(map(hash, keys))
            count += n
            if len(targets) != count:
                raise _UnvouchedError
            out.write(encode_lines(list(map(line_of, *held))))
    if not count:
        raise _UnvouchedError
    return count


#: Labels encoded at once by :func:`_stage_label_lines`.
_LINES_AT_ONCE = 8192


@functools.lru_cache(maxsize=1)
def _label_line() -> Any:
    """A msgspec struct of :class:`Label`'s fields, in order, its unset (None) ones left out."""
    import msgspec

    fields = [(name, Any, None) for name in LABEL_FIELDS]
    return msgspec.defstruct("LabelOut", fields, omit_defaults=True, gc=False)


def _stage_label_lines(b: AtomicBatch, path: Path, labels: LabelColumns) -> None:
    """Stage ``labels`` as JSONL from their columns: no model per label (issue 30).

    Each line is the one :func:`~failcodes.tableio.stage_table` writes (pydantic's
    ``model_dump_json(exclude_none=True)``: fields in order, ``None`` left out, text as
    UTF-8 with the same escapes); tests/test_ingest_labels.py holds the two equal.
    """
    import msgspec

    encode_lines = msgspec.json.Encoder().encode_lines
    rows = map(_label_line(), *map(labels.column, LABEL_FIELDS))
    with b.stage(path).open("wb") as fh:
        while chunk := list(itertools.islice(rows, _LINES_AT_ONCE)):
            fh.write(encode_lines(chunk))


def write_sentences(
    path: str | Path, sentences: Iterable[Sentence], *, batch: AtomicBatch | None = None
) -> None:
    """Write answer sentences atomically in the format given by the extension of ``path``."""
    from failcodes.sentences import Sentence

    _write_flat(path, Sentence, list(sentences), batch)


def _write_flat(
    path: str | Path,
    model: type[BaseModel],
    rows: Sequence[BaseModel],
    batch: AtomicBatch | None,
    omit: Sequence[str] = (),
) -> None:
    detect_format(path)  # an unknown extension fails before anything is staged
    columns = tuple(model.model_fields)
    write_in_batch(batch, lambda b: stage_table(b, Path(path), model, rows, columns, omit=omit))
