"""Trace files as models: :func:`read_traces` and :func:`write_traces` (JSONL, CSV or Parquet).

A trace CSV is two tables: ``X.csv`` (one row per trace, :data:`TRACE_COLUMNS`) and
``X.passages.csv`` (one row per passage, :data:`PASSAGE_COLUMNS`, joined on
:data:`PASSAGE_KEY`; see :func:`~failcodes.tableio.passages_path_for`); reading a trace CSV
without its passages table gives traces without passages. A Parquet file holds the passages as
a ``list<struct>`` column (:func:`trace_arrow_schema`). Every record goes through
:func:`prepare_trace` (ids, verdict aliases, nested passages) and pydantic; ``(system,
claim_id)`` is unique (:func:`claim_once`). The columnar readers behind metrics and
disagreements live in :mod:`failcodes.columnar`.
"""

from __future__ import annotations

import array
import itertools
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from failcodes.errors import InputError
from failcodes.fileio import AtomicBatch, a_path
from failcodes.jsonio import iter_jsonl
from failcodes.spelling import spelling_key
from failcodes.tableio import (
    ARROW_ROWS,
    CELL_ERRORS,
    NO_ID,
    NUMBER_ID_FIELDS,
    NUMBER_NAME_FIELDS,
    CsvTable,
    Format,
    arrow_schema,
    checked_csv_rows,
    checked_parquet_rows,
    detect_format,
    drop_nones,
    id_problem,
    id_text,
    name_text,
    passages_path_for,
    refuse_excel_error,
    rename_fields,
    required_fields,
    stage_table,
    validate_record,
    write_in_batch,
)
from failcodes.tracelines import (
    TRACE_IDS,
    TraceLine,
    clean_record,
    json_of,
    missing_mark,
    refuse_reference,
    trace_of,
)
from failcodes.traces import Marks, Passage, Trace
from failcodes.verdicts import Verdict, alias_word, normalize_verdict

#: Columns of the passages table of a trace CSV, in order (the join key first).
PASSAGE_KEY = ("system", "claim_id")


#: The ways through a repeated (system, claim_id): claim ids numbered within each question
#: (q1/c1, q2/c1), or two per-system files under one system name (a format's default name, as
#: two medscore files' 'medscore', kept for both).
WITHIN_QUESTION = (
    "claim ids numbered within each question? give each claim its own id: --map claim_id= "
    "--option ids=claim --option sentence_ids=question"
)
ONE_NAME = "a file per system under one system name? ingest each file apart with --system NAME"


def duplicate_claim(
    system: str, claim: str, path: Path, line: int, first: tuple[Path, int], *, way: bool = True
) -> InputError:
    """The error of ``(system, claim)`` at ``path:line``, read first at ``first``.

    With ``way``, it ends with the way through: :data:`ONE_NAME` when the two are in two
    files, else :data:`WITHIN_QUESTION` (as ``failcodes ingest generic`` takes it).
    """
    apart = first[0] != path
    where = f"{first[0]}:{first[1]}" if apart else f"line {first[1]}"
    tail = ONE_NAME if apart else f"{WITHIN_QUESTION} (failcodes ingest generic)"
    return InputError(
        f"duplicate (system, claim_id) = ({system!r}, {claim!r}); first at {where}"
        + (f"; {tail}" if way else ""),
        path=path,
        line=line,
        field="claim_id",
    )


def claim_once(
    seen: dict[tuple[str, str], tuple[Path, int]],
    trace: Trace,
    path: Path,
    line: int,
    *,
    way: bool = True,
) -> tuple[str, str]:
    """Record ``trace``'s (system, claim_id) as read at ``path:line``; return that key.

    Raises :func:`duplicate_claim`'s error if ``seen`` already holds the key.
    """
    key = (trace.system, trace.claim_id)
    if key in seen:
        raise duplicate_claim(trace.system, trace.claim_id, path, line, seen[key], way=way)
    seen[key] = (path, line)
    return key


def trace_arrow_schema() -> Any:
    """Return the Arrow schema of a trace Parquet file (passages as ``list<struct>``)."""
    return arrow_schema(Trace)


#: :func:`trace_arrow_schema` as DuckDB reads it (:func:`failcodes.engine.columns_of`): the
#: engine checks a file's columns against it without importing pyarrow (issue 30).
TRACE_ENGINE_COLUMNS: tuple[tuple[str, str], ...] = (
    *(
        (name, "VARCHAR")
        for name in (
            *("system", "question_id", "sentence_id", "claim_id", "claim", "sentence"),
            *("verdict", "raw_verdict", "reasoning", "verifier", "retriever"),
        )
    ),
    (
        "passages",
        'STRUCT(passage_id VARCHAR, rank BIGINT, "text" VARCHAR, "source" VARCHAR, '
        "title VARCHAR, score DOUBLE, gold BOOLEAN, gold_verdict VARCHAR)[]",
    ),
    ("evidence_source", "VARCHAR"),
)


TRACE_COLUMNS: tuple[str, ...] = tuple(n for n in Trace.model_fields if n != "passages")
PASSAGE_COLUMNS: tuple[str, ...] = (*PASSAGE_KEY, *Passage.model_fields)


def prepare_trace(
    record: dict[str, Any],
    path: Path,
    line: int,
    aliases: Mapping[str, Verdict] | None,
    column_map: Mapping[str, str],
    *,
    convert: str | None = None,
    marks: Marks | None = None,
) -> Trace:
    """Validate one read trace record (our field names; ``record`` is changed in place).

    Ids must not be blank or padded; the verdict goes through the alias table (the raw text
    kept in ``raw_verdict``); nested passages lose their missing values (and are renamed by
    ``column_map``); a reasoning or passage text that is a missing mark is none (counted in
    ``marks``), one that is a reference alone refused (:func:`~failcodes.tracelines.
    clean_record`). Errors name path, line and field.
    """
    for name in NUMBER_ID_FIELDS:  # a number id as text (the rule of every reader)
        if name in record:
            field = next((k for k, v in column_map.items() if v == name), name)
            record[name] = id_text(record[name], path=path, line=line, field=field)
    for name in NUMBER_NAME_FIELDS:  # a system numbered 7, as CSV's '7'
        if name in record:
            field = next((k for k, v in column_map.items() if v == name), name)
            record[name] = name_text(record[name], path=path, line=line, field=field)
    for name in TRACE_IDS:
        problem = id_problem(record.get(name))
        if problem is not None:
            raise InputError(problem, path=path, line=line, field=name)
    _refuse_excel_errors(record, path, line, column_map)
    raw = record.get("verdict")
    if raw is not None:
        verdict = normalize_verdict(raw, aliases, path=path, line=line)
        record["verdict"] = verdict.value
        if record.get("raw_verdict") is None:
            raw_text = str(raw)
            if raw_text != verdict.value:
                record["raw_verdict"] = raw_text
    passages = record.get("passages")
    if isinstance(passages, list) and column_map:
        record["passages"] = [
            drop_nones(rename_fields(p, column_map)) if isinstance(p, dict) else p for p in passages
        ]
    elif isinstance(passages, list):
        record["passages"] = [drop_nones(p) if isinstance(p, dict) else p for p in passages]
    clean_record(record, path, line, marks)
    return validate_record(Trace, record, path, line, convert=convert)


def _refuse_excel_errors(
    record: Mapping[str, Any], path: Path, line: int, column_map: Mapping[str, str]
) -> None:
    """Refuse a text of ``record`` (a field or a passage's) that is Excel's error value.

    A CSV's cell so written is refused (:func:`~failcodes.tableio.checked_csv_rows`); a frame
    ``pandas.read_excel`` read and saved as JSONL or Parquet kept the failed formula's text:
    a claim ``#VALUE!`` was judged against its passages (6 retrieval units for 4), a passage
    ``#REF!`` coded as one (5 for 4), a reasoning ``#VALUE!`` coded as the verifier's, exit 0.
    """
    held = "the file"
    for name, value in record.items():
        if isinstance(value, str) and value in CELL_ERRORS:
            field = next((k for k, v in column_map.items() if v == name), name)
            refuse_excel_error(value, path, line, field, held)
    passages = record.get("passages")
    for i, p in enumerate(passages if isinstance(passages, list) else ()):
        for name, value in p.items() if isinstance(p, dict) else ():
            if isinstance(value, str) and value in CELL_ERRORS:
                refuse_excel_error(value, path, line, f"passages[{i}].{name}", held)


def read_traces(
    path: str | Path,
    *,
    passages_path: str | Path | None = None,
    aliases: Mapping[str, Verdict] | None = None,
    column_map: Mapping[str, str] | None = None,
    seen: dict[tuple[str, str], tuple[Path, int]] | None = None,
    default_system: str | None = None,
    truths: Counter[str] | None = None,
    marks: Marks | None = None,
) -> list[Trace]:
    """Read traces from JSONL, CSV (+ passages table) or Parquet.

    ``aliases`` add raw-verdict spellings (see :func:`failcodes.verdicts.normalize_verdict`);
    when the verdict cell is not already canonical, the raw text is kept in ``raw_verdict``.
    ``column_map`` renames foreign columns (``{"claim_text": "claim"}``; an empty target drops
    a column); it applies to trace and passage fields alike. For CSV, ``passages_path``
    defaults to :func:`passages_path_for` (used if it exists). ``seen`` lets a caller check
    ``(system, claim_id)`` uniqueness across several files. ``default_system`` fills the
    ``system`` of records that have none (the column may then be absent). ``truths``
    counts the records whose verdict a default alias read, per alias word (true: supported);
    ``marks`` the reasonings and passages read as none (:class:`~failcodes.traces.Marks`).
    """
    p = a_path(path)  # a file object: one line, not a TypeError
    cmap = dict(column_map or {})
    # a foreign field's refusal names the --map of ingest generic (metrics, compare have none);
    # given a column map, the caller is that command
    convert = None if column_map is not None else "generic"
    fmt = detect_format(p)
    out: list[Trace] = []
    seen = {} if seen is None else seen
    lines: dict[tuple[str, str], int] = {}
    required = [n for n in required_fields(Trace) if not (default_system and n == "system")]
    if fmt is Format.JSONL:
        rows: Iterable[tuple[int, dict[str, Any]]] = (
            (line, drop_nones(rename_fields(rec, cmap))) for line, rec in iter_jsonl(p)
        )
    elif fmt is Format.CSV:
        rows = checked_csv_rows(p, TRACE_COLUMNS, required, cmap, convert=convert)
    else:
        rows = (
            (line, drop_nones(rec))
            for line, rec in checked_parquet_rows(
                p, tuple(Trace.model_fields), required, cmap, convert=convert
            )
        )
    for line, rec in rows:
        if default_system and "system" not in rec:
            rec["system"] = default_system
        if truths is not None and (word := alias_word(rec.get("verdict"))):
            truths[word] += 1
        trace = prepare_trace(rec, p, line, aliases, cmap, convert=convert, marks=marks)
        lines[claim_once(seen, trace, p, line)] = len(out)
        out.append(trace)
    if fmt is Format.CSV:
        side = Path(passages_path) if passages_path is not None else passages_path_for(p)
        if passages_path is not None or side.exists():
            out = _attach_passages(out, lines, side, cmap, p, marks)
    elif passages_path is not None:
        raise InputError(
            "a separate passages table is only used with CSV traces", path=passages_path
        )
    return out


def refuse_empty_trace_files(paths: Iterable[str | Path]) -> None:
    """Refuse a traces file that holds no trace, naming it (metrics, disagreements, compare).

    An empty JSONL file (or one of blank lines) or a Parquet file of no rows crashed
    ``metrics`` with an IndexError traceback when it was the only file; beside other files it
    was passed over with no word, so a system whose file was empty was in no output. ``ingest``
    never writes such a file. Checked before the files are read: the first non-blank line,
    the first data row, the Parquet footer's row count.
    """
    for path in map(Path, paths):
        if _holds_no_row(path):
            raise InputError(
                "no traces found (the file holds no row; ingest never writes such a file: a "
                "system whose run made no claim has nothing to score, leave its file out)",
                path=path,
            )


def _holds_no_row(path: Path) -> bool:
    """Whether a traces file holds no row (False when it cannot tell: the reader then says)."""
    if not path.is_file():
        return False
    try:
        fmt = detect_format(path)
    except InputError:
        return False
    if fmt is Format.JSONL:
        from failcodes.jsonio import jsonl_lines

        return next(jsonl_lines(path), None) is None  # (the generator closes the file)
    if fmt is Format.CSV:
        import csv

        try:
            with path.open(encoding="utf-8-sig", newline="") as fh:
                rows = csv.reader(fh)
                next(rows, None)  # the header
                return not any(any(cell.strip() for cell in row) for row in rows)
        except (UnicodeDecodeError, csv.Error, OSError):
            return False
    from failcodes import engine  # the footer through DuckDB: metrics on the tool's own
    # Parquet imports no pyarrow (tests/test_cli_startup.py)

    try:
        return engine.footer_of(path)[1] == 0
    except (engine.core().Error, OSError):
        return False


def read_trace_files(
    paths: Iterable[str | Path],
    *,
    truths: Counter[str] | None = None,
    marks: Marks | None = None,
) -> list[Trace]:
    """The traces of several files: ``(system, claim_id)`` unique, each sentence in one file.

    A system's sentence whose claims two files give is refused (:func:`split_sentence`).
    ``truths``, ``marks``: as :func:`read_traces`'.
    """
    seen: dict[tuple[str, str], tuple[Path, int]] = {}
    first: dict[tuple[str, str], Path] = {}
    texts: dict[tuple[str, str, str], tuple[str, str, int]] = {}  # first text, folded, line
    out: list[Trace] = []
    for path in map(Path, paths):
        for trace in read_traces(path, seen=seen, truths=truths, marks=marks):
            where = first.setdefault((trace.system, trace.sentence_id), path)
            if where != path:
                line = seen[(trace.system, trace.claim_id)][1]
                raise split_sentence(trace.system, trace.sentence_id, where, path, line)
            if trace.sentence:
                line = seen[(trace.system, trace.claim_id)][1]
                key = (trace.system, trace.question_id, trace.sentence_id)
                told = texts.get(key)
                if told is None:
                    texts[key] = (trace.sentence, spelling_key(trace.sentence), line)
                elif trace.sentence != told[0] and spelling_key(trace.sentence) != told[1]:
                    raise two_texts(key, path, line, f"line {told[2]}")
            out.append(trace)
    return out


def two_texts(key: tuple[str, str, str], path: Path, line: int | None, first: str) -> InputError:
    """The error of a system's sentence id of one question given two sentence texts.

    As ingest refuses it (:func:`failcodes.ingest.table._one_text`), for trace files it never
    read: sentence '1' of question '41' in two sub-sets of the data, one system, would be one
    sentence, its claims pooled.
    ``key``: system, question, sentence; ``first``: where the other text is.
    """
    system, question, sentence = key
    return InputError(
        f"sentence {sentence!r} of question {question!r} (system {system!r}) has another text "
        f"here than at {first}: two sentences with one id would be one, their claims pooled; "
        "give each sentence its own id (ids repeated across sub-sets of the data: put the "
        "sub-set into the ids)",
        path=path,
        line=line,
        field="sentence",
    )


def split_sentence(
    system: str,
    sentence_id: str,
    first: Path,
    path: Path,
    line: int | None,
    *,
    ingest: bool = False,
) -> InputError:
    """The error of a system's sentence whose claims two files give.

    sysB's file copied from sysA's, its system column still sysA, claim ids its own (or two
    runs of sysA): each sentence would pool both files' claims into one sysA row.
    """
    name = "--system with --map system=" if ingest else "ingest generic --system --map system="
    return InputError(
        f"sentence {sentence_id!r} of system {system!r} has claims in {first} and in this "
        "file: its claims would be pooled into one sentence (two runs, or another system's "
        f"file naming this system?); name each file's system ({name}), or, if the files "
        "split one run, concatenate them",
        path=path,
        line=line,
        field="sentence_id",
    )


def _attach_passages(
    traces: list[Trace],
    index: Mapping[tuple[str, str], int],
    path: Path,
    column_map: Mapping[str, str],
    traces_path: Path,
    marks: Marks | None = None,
) -> list[Trace]:
    grouped: dict[int, list[tuple[int, Passage]]] = {}
    ranks: dict[tuple[int, int], int] = {}
    for line, rec in checked_csv_rows(
        path, PASSAGE_COLUMNS, (*PASSAGE_KEY, *required_fields(Passage)), column_map
    ):
        key = (rec.pop("system"), rec.pop("claim_id"))
        pos = index.get(key)
        if pos is None:
            raise InputError(
                f"no trace with (system, claim_id) = {key!r} in {traces_path}",
                path=path,
                line=line,
                field="claim_id",
            )
        text = rec.get("text")
        refuse_reference(text, path, line, "text")
        if isinstance(text, str) and missing_mark(text):  # no passage (the retriever's none)
            if marks is not None:
                marks.add(path, line, passages=1)
            continue
        passage = validate_record(Passage, rec, path, line)
        if (pos, passage.rank) in ranks:
            raise InputError(
                f"duplicate rank {passage.rank} for {key!r} "
                f"(first at line {ranks[(pos, passage.rank)]})",
                path=path,
                line=line,
                field="rank",
            )
        ranks[(pos, passage.rank)] = line
        grouped.setdefault(pos, []).append((line, passage))
    out = list(traces)
    for pos, items in grouped.items():
        ordered = tuple(p for _, p in sorted(items, key=lambda item: item[1].rank))
        out[pos] = out[pos].model_copy(update={"passages": ordered})
    return out


def write_traces(
    path: str | Path,
    traces: Iterable[Trace | TraceLine],
    *,
    batch: AtomicBatch | None = None,
    footer: Callable[[], dict[bytes, bytes]] | None = None,
) -> list[Path]:
    """Write traces atomically; returns the files written (CSV: the table and its passages).

    ``traces`` may hold vouched lines (:mod:`failcodes.tracelines`): JSONL and Parquet write
    them as they are (the same bytes as their models), CSV their models. A CSV always
    gets its ``X.passages.csv`` (header only when no trace has passages), so a stale
    passages table from an earlier run can never be paired with new traces. ``footer``
    (asked once every trace is written) adds key-value metadata to a Parquet file's footer
    (the rows an ingest left out: :mod:`failcodes.dropped`); other formats have none.
    """
    p = Path(path)
    fmt = detect_format(p)
    # every format is written as the traces come (a stream is never held): JSONL line by
    # line, a CSV with its passages table row by row, Parquet a row group at a time
    written = [p]

    def write(b: AtomicBatch) -> None:
        if fmt is Format.PARQUET:  # the engine reads it without validating again
            vouched = _Vouched(traces)

            def metadata() -> dict[bytes, bytes] | None:
                return {**(vouched.marker() or {}), **(footer() if footer else {})} or None

            stage_table(b, p, Trace, vouched, TRACE_COLUMNS, footer=metadata)
            return
        if fmt is not Format.CSV:
            with b.stage(p).open("wb", buffering=1 << 20) as fh:
                for t in traces:
                    fh.write(json_of(t) + b"\n")
            return
        side = passages_path_for(p)
        written.append(side)
        main_tmp, side_tmp = b.stage(p), b.stage(side)
        with (
            main_tmp.open("w", encoding="utf-8", newline="") as main_fh,
            side_tmp.open("w", encoding="utf-8", newline="") as side_fh,
        ):
            table = CsvTable(main_fh, p, TRACE_COLUMNS)
            passages = CsvTable(side_fh, side, PASSAGE_COLUMNS)
            for t in map(trace_of, traces):
                table.write([getattr(t, c) for c in TRACE_COLUMNS])
                for ps in t.passages:
                    passages.write(
                        [t.system, t.claim_id, *(getattr(ps, c) for c in Passage.model_fields)]
                    )

    write_in_batch(batch, write)
    return written


def _id_problems(ids: list[str]) -> bool:
    """Whether any of ``ids`` is blank, padded or no id (:func:`~failcodes.tableio.id_problem`)."""
    return (
        "" in ids or not all(map(str.__eq__, ids, map(str.strip, ids))) or not NO_ID.isdisjoint(ids)
    )


class _Vouched:
    """Traces passed through to a Parquet writer, checked for the engine's marker (issue 30).

    The models (or vouched lines) are valid traces with canonical verdicts; this adds what a
    file of them must also hold: ids neither blank nor padded, no ``(system, claim_id)`` twice
    (64-bit hashes, 8 bytes a trace: a collision only leaves the marker out). :meth:`marker`
    is the footer's :func:`~failcodes.engine.validated_marker`, or None when a check failed.
    """

    def __init__(self, rows: Iterable[Trace | TraceLine]) -> None:
        self.rows = rows
        self.count = 0
        self.keys = array.array("q")
        self.clean = True

    def __iter__(self) -> Iterator[Trace | TraceLine]:
        rows = iter(self.rows)
        # the rows the writer makes into Arrow at a time, each check over a column
        while chunk := list(itertools.islice(rows, ARROW_ROWS)):
            ids = {n: list(map(operator.attrgetter(n), chunk)) for n in TRACE_IDS}
            if self.clean:
                self.clean = not any(map(_id_problems, ids.values()))
            self.keys.extend(map(hash, zip(ids["system"], ids["claim_id"], strict=True)))
            self.count += len(chunk)
            yield from chunk

    def marker(self) -> dict[bytes, bytes] | None:
        import numpy as np

        from failcodes.engine import validated_marker

        keys = np.sort(np.frombuffer(self.keys, dtype=np.int64)) if self.count else None
        if not self.clean or (keys is not None and bool((keys[1:] == keys[:-1]).any())):
            return None
        return validated_marker("traces", self.count)
