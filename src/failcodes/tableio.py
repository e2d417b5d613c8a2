"""Rows of any table in (JSONL, CSV or Parquet, by extension), and what every model file shares.

The format from the extension (:func:`detect_format`), the rows of a CSV or Parquet table with
their column checks (:func:`checked_csv_rows`, :func:`checked_parquet_rows`, :func:`check_columns`,
:func:`header_hint`), any table as is (:func:`table_rows`, :func:`csv_rows`,
:func:`table_columns`), a record validated as a pydantic model with the file, line and field of
its first problem (:func:`validate_record`), and a table of models staged for an atomic write
(:func:`stage_table`, Arrow schemas derived from the models). Labels and sentences files are
read in :mod:`failcodes.labelio`, traces in :mod:`failcodes.traceio`, traces as columns in
:mod:`failcodes.columnar` and the disagreement files in :mod:`failcodes.disagreementio`.

CSV: one row per record with a header; empty cells are missing values (in a required column:
the empty string). Line numbers are 1-based: for CSV the physical line where the data row
starts (the header is line 1), for Parquet the row number. pyarrow is imported on first use
(:func:`pyarrow_modules`).
"""

from __future__ import annotations

import array
import contextlib
import csv
import datetime
import decimal
import itertools
import operator
import re
import struct
import types
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from failcodes.csvcells import check_nul, neutralise, restore
from failcodes.errors import InputError, clip, listed
from failcodes.fileio import AtomicBatch
from failcodes.jsonio import (
    check_unchanged,
    decode_error,
    file_state,
    iter_jsonl,
    json_field_line,
    open_text,
    read_json,
)
from failcodes.parquetio import open_parquet, parquet_schema_names
from failcodes.sheetio import (
    ERRORS,
    MAX_CELL,
    ShownNumber,
    column_letter,
    is_spreadsheet,
    sheet_header,
    sheet_rows,
    title_hint,
)
from failcodes.spelling import first_unseen_difference, name_key, unseen_note
from failcodes.verdicts import MISSING_MARKS, NO_VERDICT_WAY

if TYPE_CHECKING:  # imported where used: reading a labels file imports no pydantic (issue 30)
    from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound="BaseModel")


def pyarrow_modules() -> tuple[Any, Any]:
    """Return ``(pyarrow, pyarrow.parquet)``, imported on first use (~0.2 s; Parquet only)."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    return pa, pq


class Format(StrEnum):
    """A file format failcodes reads and writes."""

    JSONL = "jsonl"
    CSV = "csv"
    PARQUET = "parquet"


EXTENSIONS: dict[str, Format] = {
    ".jsonl": Format.JSONL,
    ".ndjson": Format.JSONL,
    ".csv": Format.CSV,
    ".parquet": Format.PARQUET,
    ".pq": Format.PARQUET,
}


def detect_format(path: str | Path) -> Format:
    """Return the format of ``path`` from its extension, or raise :class:`InputError`."""
    suffix = Path(path).suffix.lower()
    if is_spreadsheet(path):
        raise InputError(
            "an Excel workbook: failcodes reads its traces and labels as .jsonl, .csv or "
            ".parquet; turn the sheet into one with `failcodes ingest generic` (traces) or "
            "`failcodes ingest generic-labels` (labels)",
            path=path,
        )
    try:
        return EXTENSIONS[suffix]
    except KeyError:
        packed = suffix in (".gz", ".zip", ".bz2", ".xz", ".zst")
        raise InputError(
            f"cannot tell the format from the extension {suffix or '(none)'!r}; "
            "expected .jsonl, .csv or .parquet"
            + (partitions_hint(path) if not suffix else "")
            + (" (a compressed file: decompress it and give the file it holds)" if packed else "")
            + (
                " (a JSON document? `failcodes ingest generic` (traces) or `failcodes ingest "
                "generic-labels` (labels) reads it)"
                if suffix == ".json"
                else ""
            )
            + (
                " (a spreadsheet in another format: save it as an Excel Workbook, .xlsx, which "
                "`failcodes ingest generic` and `generic-labels` read, or as CSV UTF-8)"
                if suffix in (".xls", ".xlsb", ".ods", ".numbers")
                else ""
            ),
            path=path,
        ) from None


def passages_path_for(path: str | Path) -> Path:
    """Return the passages table that goes with a trace CSV: ``X.csv`` -> ``X.passages.csv``."""
    p = Path(path)
    return p.with_name(f"{p.stem}.passages.csv")


# ------------------------------------------------------------------------------------------
# Atomic writes (see failcodes.fileio)
# ------------------------------------------------------------------------------------------


def write_in_batch(batch: AtomicBatch | None, write: Callable[[AtomicBatch], None]) -> None:
    """Run ``write`` in ``batch``, or in a batch of its own committed when it returns."""
    if batch is not None:
        write(batch)
        return
    with AtomicBatch() as own:
        write(own)


# ------------------------------------------------------------------------------------------
# Rows in, rows out
# ------------------------------------------------------------------------------------------


def rename_fields(record: dict[str, Any], column_map: Mapping[str, str]) -> dict[str, Any]:
    """Apply a foreign->ours column map; an empty target drops the column."""
    if not column_map:
        return record
    out: dict[str, Any] = {}
    for key, value in record.items():
        new = column_map.get(key, key)
        if new:
            out[new] = value
    return out


#: Largest CSV cell read, in characters, as a workbook's (the csv module's default, 128 KiB, is
#: smaller than cells we write). A 100 MB cell took ingest 0.9 GB (the csv module holds a cell
#: at 4 bytes a character): at 1 GB a cell (an unclosed quote swallowing the file) took GBs
#: before any word.
CSV_FIELD_LIMIT = MAX_CELL


#: Excel's error values as a CSV it saved holds them (``#N/A`` apart: a missing mark, as
#: ``NA``, which label rules and ``agree`` read as such or refuse with their own way through).
CELL_ERRORS = ERRORS - {"#N/A"}


def csv_lines(fh: IO[str], path: Path, hashes: list[int] | None = None) -> Iterator[str]:
    """The lines of a CSV file for ``csv.reader``; one past :data:`CSV_FIELD_LIMIT` is refused.

    The csv module is given a line whole before it checks its field limit: one line of 400 MB
    (a cell of it unquoted, or a header) took ingest and agree 0.9 GB before their one line,
    2 GB would take 4. Read at most that many characters at once, the memory is bounded.

    A line after the first that starts with a byte-order mark is refused: files each written
    with one (``encoding="utf-8-sig"``, Excel's CSV UTF-8) joined with ``cat`` put it in the
    first cell of a row, an id of its own (``\ufeffq2`` beside ``q2``: one question counted
    as two, ``n_questions`` 3 for 2, exit 0).

    ``hashes``: the numbers of the lines holding a ``#`` are added to it (one search in C a
    line), for :func:`checked_csv_rows` to look for Excel's error values in those rows alone.
    """
    read, line = fh.readline, 0
    while text := read(CSV_FIELD_LIMIT + 1):
        line += 1
        if len(text) > CSV_FIELD_LIMIT:
            raise InputError(
                f"a line of over {CSV_FIELD_LIMIT >> 20} M characters (no trace or label row "
                "is that long)",
                path=path,
                line=line,
            )
        if text[0] == "\ufeff" and line > 1:
            raise InputError(
                "the line starts with a byte-order mark (U+FEFF), which only begins a file: "
                "files joined with cat, each saved with one (CSV UTF-8, utf-8-sig)? it would "
                "be part of the row's first cell: delete it",
                path=path,
                line=line,
            )
        if hashes is not None and "#" in text:
            hashes.append(line)
        yield text


def checked_csv_rows(
    path: Path,
    columns: Sequence[str] | None,
    required: Sequence[str],
    column_map: Mapping[str, str],
    delimiter: str = ",",
    *,
    convert: str | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV file; an empty cell is a missing value, except in a required column.

    In a required column it is the empty string (an empty claim or passage text round-trips
    as it does in JSONL; a required number or flag then fails validation with its line).
    """
    csv.field_size_limit(CSV_FIELD_LIMIT)
    keep_empty = set(required)
    with open_text(path) as fh:
        opened = file_state(fh)
        try:
            hashes: list[int] = []
            reader = csv.reader(csv_lines(fh, path, hashes), delimiter=delimiter)
            try:
                header_raw = next(reader)
            except StopIteration:
                raise InputError("empty file, expected a header row", path=path, line=1) from None
            except csv.Error as exc:
                raise InputError(f"malformed CSV ({exc})", path=path, line=1) from None
            _check_nul(path, 1, header_raw, header_raw)
            _check_sep_line(path, header_raw)
            header = [column_map.get(h, h) for h in header_raw]
            check_columns(path, header, columns, required, convert=convert)
            # (a trailing comma: "a,b,"; a column the map drops, --map notes=, is named)
            unnamed = [i for i, r in enumerate(header_raw) if not (r or header[i])]
            last = reader.line_num
            hashes.clear()
            while True:
                try:
                    row = next(reader)
                except StopIteration:
                    check_unchanged(fh, path, opened)
                    break
                except csv.Error as exc:
                    why = f"malformed CSV ({exc})"
                    if "field limit" in str(exc):
                        why = (
                            f"a cell of over {CSV_FIELD_LIMIT >> 20} MB from this line on (an "
                            'unclosed " quote? no trace or label cell is that long)'
                        )
                    raise InputError(why, path=path, line=last + 1) from None
                lineno, last = last + 1, reader.line_num
                if not row or all(not cell.strip() for cell in row):
                    continue
                if len(row) != len(header):
                    # a ';' header with decimal commas in the rows ('1;2,5;2,5'): the
                    # header's one cell against the rows' commas said "expected 1 cells"
                    hint = header_hint(header_raw, "")
                    if hint:
                        raise InputError(hint, path=path, line=1)
                    raise InputError(
                        f"expected {len(header)} cells (as in the header), got {len(row)}"
                        + title_hint(header_raw, 1),
                        path=path,
                        line=lineno,
                    )
                _check_nul(path, lineno, header_raw, row)
                if hashes:
                    hashes.clear()
                    if not CELL_ERRORS.isdisjoint(row):
                        _check_excel_error(path, lineno, header_raw, row)
                if unnamed:
                    _check_unnamed(path, lineno, unnamed, row, title_hint(header_raw, 1))
                yield (
                    lineno,
                    {
                        h: restore(v)  # a cell neutralised against formulas, as it was
                        for h, v in zip(header, row, strict=True)
                        if h and (v != "" or h in keep_empty)
                    },
                )
        except UnicodeDecodeError as exc:
            raise decode_error(path, exc, delimiter) from None


_NUL_WHY = "(binary data, or a table saved as UTF-16? save it as CSV UTF-8)"


def _check_excel_error(path: Path, line: int, header: Sequence[str], row: Sequence[str]) -> None:
    """Refuse a cell holding an Excel error value (``#REF!``, ``#VALUE!``...), as a sheet's.

    A workbook's is refused (:mod:`failcodes.sheetio`); the CSV Excel saves of the same sheet
    holds its text, which was read as a value: a label rule gave two ``#VALUE!`` rows (their
    label formula failed) the rule's opposite, 1 error label for 2, exit 0 with a note; a
    ``#REF!`` rating was a category of its own (agreement 3/6 for 3/5); a ``#VALUE!`` system
    one more system.
    """
    for name, cell in zip(header, row, strict=False):
        if cell in CELL_ERRORS:
            refuse_excel_error(cell, path, line, name, "the CSV")


def refuse_excel_error(
    cell: object, path: str | Path | None, line: int | None, field: str, held: str = "the file"
) -> None:
    """Refuse ``cell`` if it is an Excel error value (:data:`CELL_ERRORS`) that ``held`` keeps.

    A frame ``pandas.read_excel`` read and saved as JSONL or Parquet keeps a failed formula's
    text as a CSV does: a label rule gave two ``#VALUE!`` rows its opposite (1 error label for
    2), ``agree`` read a ``#REF!`` rating as a category (percent 3/5 for 3/4), exit 0.
    """
    if isinstance(cell, str) and cell in CELL_ERRORS:
        raise InputError(
            f"Excel error value {cell} (a formula that failed; {held} holds its text): fix "
            "or clear the cell",
            path=path,
            line=line,
            field=field,
        )


def _check_sep_line(path: Path, header: Sequence[str]) -> None:
    """Refuse Excel's ``sep=,`` first line (it names the separator; the header is below it).

    It was read as a header of one column ``sep=``: "unknown column 'sep='" named no cause.
    """
    if header and header[0].startswith("sep=") and not any(header[1:]) and len(header[0]) < 7:
        raise InputError(
            f"the first line {','.join(header)!r} is the separator line Excel writes, not the "
            "header: delete the line (the column names are on the line below it)",
            path=path,
            line=1,
        )


def _check_unnamed(
    path: Path, line: int, unnamed: Sequence[int], row: Sequence[str], title: str = ""
) -> None:
    """Refuse a value under a header cell left empty, as a workbook's is refused.

    It was dropped unsaid (a verdict in a last column whose name was left out: the row read
    as if it had none); ``agree`` took such a column as one more rater, 'Unnamed: 3'.
    """
    for i in unnamed:
        if row[i].strip():
            # column A: pandas' to_csv writes its row index so unless index=False
            pandas = (
                " (a row index? write the file with pandas' to_csv(index=False) or R's "
                "write.csv(row.names = FALSE))"
            )
            raise InputError(
                f"a value in column {column_letter(i)}, which has no header name"
                + (pandas if i == 0 else title),
                path=path,
                line=line,
            )


def _check_nul(path: Path, line: int, header: Sequence[str], row: Sequence[str]) -> None:
    """Refuse a NUL byte in a CSV cell (binary data, or UTF-16 text saved by a spreadsheet)."""
    if "\x00" not in "".join(row):
        return
    column = next(i for i, cell in enumerate(row) if "\x00" in cell)
    name = header[column] if column < len(header) else ""
    raise InputError(
        f"NUL byte in column {column + 1} {_NUL_WHY}",
        path=path,
        line=line,
        field=name if name and "\x00" not in name else None,
    )


def header_hint(header: Sequence[str], wanted: str) -> str:
    """Why a CSV header lacks the column ``wanted`` it seems to mean ("" if it is not clear).

    A header that is one cell holding ``;`` or tabs: a European Excel export (``;``) or a TSV
    named ``.csv``. A column that is ``wanted`` but for case or spaces: which one.
    """
    cells = [h for h in header if h]
    nul = [i for i, h in enumerate(header) if "\x00" in h]
    if nul:
        return f"NUL byte in column {nul[0] + 1} {_NUL_WHY}"
    if len(cells) == 1:
        for sep, what in ((";", "semicolons (European Excel?)"), ("\t", "tabs (a TSV file?)")):
            if len(cells[0].split(sep)) > 1:
                return (
                    f"the header is separated by {what}, expected commas: save the table as "
                    "CSV (comma delimited)"
                )
    near = [h for h in cells if h != wanted and name_key(h) == wanted]
    if not near:
        return ""
    unseen = first_unseen_difference(near[0], wanted)
    shows = f"; it holds {unseen}, a character that shows as nothing" if unseen else ""
    return f"column {near[0]!r}: did you mean {wanted!r}? (names are exact: case, spaces{shows})"


def map_hint(convert: str | None) -> str:
    """How to rename a foreign file's fields: the ``--map`` of this or another command.

    ``None``: this command has it (an ``ingest`` command); else the ingest command ``convert``
    that has it (``metrics`` has none, and its refusal said "rename foreign fields with --map
    FOREIGN=ours"). A field to leave out (a rater's column beside the adjudicated one a
    label rule reads) is ``--map FOREIGN=``, said too: renaming was the only way named.
    """
    if convert is None:
        return "rename foreign fields with --map FOREIGN=ours, leave one out with --map FOREIGN="
    return f"a foreign file: convert it with failcodes ingest {convert} --map FOREIGN=ours"


#: The way through for a wide labels table (a column per sentence, clinician or system).
WIDE_LABELS = (
    "a wide labels table (a column per sentence, per clinician or per system)? one row per "
    "label: pandas' df.melt(id_vars=ID_COLUMNS, var_name='sentence_id' (or 'annotator', then "
    "--option consensus=majority; or 'system', the columns named by their systems first, "
    "then each label is its system's), value_name='has_error'); or read one column: --map "
    "COLUMN=has_error, the others --map OTHER="
)
#: The column pandas' ``to_parquet`` writes a row index to (unless ``index=False``).
_PANDAS_INDEX = re.compile(r"__index_level_\d+__")
#: The name pandas' ``read_csv`` gives a row index ``to_csv`` wrote (an empty header cell),
#: kept as a column when the table is written again.
_PANDAS_UNNAMED = re.compile(r"Unnamed: \d+")


def index_hint(name: str) -> str:
    """The way for a column that is pandas' row index, written as a column ('' for others).

    ``ingest generic`` refused a Parquet file's ``__index_level_0__`` as an unknown column
    with no word of the index, as ``metrics`` names it (t29red).
    """
    if _PANDAS_INDEX.fullmatch(name):
        return "pandas' row index: write the file with to_parquet(index=False)"
    if _PANDAS_UNNAMED.fullmatch(name):
        return (
            "pandas' row index read back as a column: read the CSV with read_csv(index_col=0), "
            "or write it with index=False"
        )
    return ""


def check_columns(
    path: Path,
    header: Sequence[str],
    columns: Sequence[str] | None,
    required: Sequence[str],
    *,
    convert: str | None = None,
) -> None:
    """Refuse repeated, unknown (``columns`` None: any name is known) and missing columns.

    ``convert``: the ingest command that renames a foreign file's columns (:func:`map_hint`).
    """
    seen: set[str] = set()
    for name in header:
        if not name:
            continue
        if name in seen:
            raise InputError("column appears twice in the header", path=path, line=1, field=name)
        seen.add(name)
        if columns is not None and name not in columns:
            near = name_key(name)
            hint = header_hint(header, near if near in columns else "")
            if hint:
                raise InputError(hint, path=path, line=1)
            hint = (
                "rename foreign columns with --map FOREIGN=ours, drop with --map FOREIGN="
                if convert is None
                else f"{map_hint(convert)}, drop a column with --map FOREIGN="
            )
            if index_hint(name):
                hint = f"{index_hint(name)}; {hint}"
            elif "has_error" in columns and sum(h not in columns for h in header if h) > 1:
                hint += f"; {WIDE_LABELS}"  # refused with no word that it must be reshaped
            raise InputError(
                f"unknown column (expected some of: {', '.join(columns)}; {hint})"
                + title_hint(header, 1),  # a title row above the column names
                path=path,
                line=1,
                field=name,
            )
    for name in required:
        if name not in seen:
            hint = header_hint(header, name)
            have = ", ".join(h for h in header if h)
            raise InputError(
                hint
                or f"missing column (have: {have}{partition_hint(path, name)})"
                # a title row above the names: its one name is no column of the file's kind
                + ("" if seen & {*required, *(columns or ())} else title_hint(header, 1)),
                path=path,
                line=1,
                field=name,
            )


def partition_hint(path: str | Path, name: str) -> str:
    """A clause for a missing column ``name`` a folder above ``path`` is named for, or "".

    A hive-partitioned table (``system=A/part-0.parquet``: ``pyarrow.parquet.write_to_dataset``,
    Spark, DuckDB's ``PARTITION_BY``) keeps a column in its folders' names, not its files. It
    is not read from there: pyarrow types the folder's value (``question_id=007`` and
    ``question_id=7`` both read as the number 7: two questions one), so the refusal says it.
    """
    for folder in list(Path(path).parents)[:4]:
        key, eq, value = folder.name.partition("=")
        if eq and key == name and value:
            return (
                f"; the folder {folder.name!r} names it as a hive partition, which failcodes "
                "does not read (pyarrow reads a partition's value as a number where it can: "
                "question_id=007 and =7 are one): write the column into each file, as text"
            )
    return ""


def partitions_hint(path: str | Path) -> str:
    """A clause for a folder ``path`` of hive partitions (``system=A``, ``system=B``), or ""."""
    try:
        names = sorted(p.name for p in Path(path).iterdir() if p.is_dir() and "=" in p.name[1:])
    except OSError:
        return ""
    if not names:
        return ""
    shown = ", ".join(map(repr, names[:3])) + (", ..." if len(names) > 3 else "")
    return (
        f" (a folder of hive partitions, {shown}: failcodes reads files, not a partitioned "
        "folder; give its files, each with the partition's column written in as text)"
    )


class NarrowFloat(float):
    """A whole number read from a 32- or 16-bit float column past its exact range (``bound``).

    float32 holds every whole number up to 2**24 only: 16777217 is stored as 16777216, so an
    id column written as float32 lost digits (two ids one, or an id another's). Any other
    field reads it as the float; :func:`id_text` refuses it as an id.
    """

    bound: int


def narrow_float(value: Any, bound: int) -> Any:
    """``value`` as a :class:`NarrowFloat` where a whole number at or past ``bound``."""
    if type(value) is not float or not value.is_integer() or abs(value) < bound:
        return value
    out = NarrowFloat(value)
    out.bound = bound
    return out


#: Rows of a Parquet table turned into records at a time.
_PARQUET_ROWS = 1024


def checked_parquet_rows(
    path: Path,
    columns: Sequence[str] | None,
    required: Sequence[str],
    column_map: Mapping[str, str],
    *,
    convert: str | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a Parquet file, numbered from 1, its columns checked as for a CSV header."""
    pa, _ = pyarrow_modules()
    pf = open_parquet(path)  # its limits checked: it decodes to a bounded size
    names = list(pf.schema_arrow.names)
    header = [column_map.get(n, n) for n in names]
    check_columns(path, header, columns, required, convert=convert)
    kept = [(name, new) for name, new in zip(names, header, strict=True) if new]
    narrow = {
        f.name: 2**24 if pa.types.is_float32(f.type) else 2**11  # their significands' bits
        for f in pf.schema_arrow
        if pa.types.is_float32(f.type) or pa.types.is_float16(f.type)
    }
    line = 0
    try:
        for batch in pf.iter_batches(
            batch_size=_PARQUET_ROWS, columns=[n for n, _ in kept], use_threads=False
        ):
            # the batch's columns that may hold a text past MAX_CELL (only those are looked at)
            wide = [
                f.name
                for f, c in zip(batch.schema, batch.columns, strict=True)
                if c.nbytes > MAX_CELL
            ]
            for rec in batch.to_pylist():
                line += 1
                for name in narrow.keys() & rec.keys():
                    rec[name] = narrow_float(rec[name], narrow[name])
                for name in wide:
                    if _longest_text(rec[name]) > MAX_CELL:
                        raise InputError(
                            f"a text of over {MAX_CELL >> 20} M characters (no trace or label "
                            "cell is that long)",
                            path=path,
                            line=line,
                            field=dict(kept)[name],
                        )
                yield line, {new: rec[name] for name, new in kept}
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"not a readable Parquet file ({exc})", path=path) from None


def _longest_text(value: Any) -> int:
    """The length of the longest text in ``value`` (a cell's text, or its lists' and objects')."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return max(map(_longest_text, value), default=0)
    return 0


def table_rows(
    path: str | Path, *, as_shown: frozenset[str] = frozenset()
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for every row of any JSONL, CSV, Parquet or Excel table, as is.

    No column is required or refused (callers map foreign columns themselves); missing values
    (empty CSV cells, nulls) are left out of the record. Errors as for every reader: malformed
    JSON or CSV, a row with the wrong number of cells, a repeated CSV header, with the line.
    ``as_shown``: a sheet's columns whose numbers Excel shows otherwise are refused.
    """
    p = Path(path)
    if is_spreadsheet(p):
        yield from sheet_rows(p, as_shown=as_shown)
        return
    fmt = detect_format(p)
    if fmt is Format.JSONL:
        rows: Iterable[tuple[int, dict[str, Any]]] = iter_jsonl(p)
    elif fmt is Format.CSV:
        rows = checked_csv_rows(p, None, (), {})
    else:
        rows = checked_parquet_rows(p, None, (), {})
    for line, rec in rows:
        yield line, drop_nones(rec)


def csv_rows(
    path: str | Path, required: Sequence[str], *, delimiter: str = ","
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for every row of a foreign CSV (or TSV) file.

    Every ``required`` column must be in the header (its empty cells are ``""``); other empty
    cells are left out. Errors as for :func:`table_rows`, and text that is not UTF-8, with the
    file and line: for the adapters of published data sets (HealthVer, COVID-Fact).
    """
    yield from checked_csv_rows(Path(path), None, required, {}, delimiter)


def table_columns(path: str | Path) -> list[str] | None:
    """The header of a CSV or workbook, the column names of a Parquet file; None for JSONL."""
    p = Path(path)
    if is_spreadsheet(p):
        return sheet_header(p)
    fmt = detect_format(p)
    if fmt is Format.JSONL:
        return None
    if fmt is Format.PARQUET:
        return parquet_schema_names(p)
    with open_text(p) as fh:
        try:
            header = next(csv.reader(csv_lines(fh, p)), None)
        except UnicodeDecodeError as exc:
            raise decode_error(p, exc, ",") from None
        except csv.Error as exc:
            raise InputError(f"malformed CSV ({exc})", path=p, line=1) from None
    if header is None:
        raise InputError("empty file, expected a header row", path=p, line=1)
    _check_sep_line(p, header)
    return header


def drop_nones(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` without its missing values (``None``)."""
    return {k: v for k, v in record.items() if v is not None}


def _field_name(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _validation_error(
    exc: ValidationError,
    path: Path,
    line: int | None,
    *,
    foreign: bool = True,
    convert: str | None = None,
) -> InputError:
    errors = exc.errors()
    err = errors[0]
    loc = tuple(err.get("loc", ()))
    field = _field_name(loc) or None
    kind = err.get("type", "")
    # a foreign record usually lacks several fields and has several unknown ones at once: all
    # are named (a bare "and 12 more problems" sends the user hunting)
    named = {
        k: [_field_name(tuple(e.get("loc", ()))) for e in errors if e.get("type") == k]
        for k in ("missing", "extra_forbidden")
    }
    missing, unknown = named["missing"], named["extra_forbidden"]
    if kind == "missing":
        message = "missing required field" + _also(missing[1:])
        if missing == ["system"]:  # one file per system, named by its file (sysA.jsonl)?
            message += (
                " (a file per system? name each: failcodes ingest generic FILE --system NAME)"
            )
        if unknown:
            message += f"; unknown fields {listed(unknown)}"
    elif kind == "extra_forbidden":
        message = "unknown field" + _also(unknown[1:])
        if missing:
            message += f"; missing required fields {listed(missing)}"
    elif kind == "value_error":  # our own validators: their message says it all
        message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    elif kind in _EXPECTED:  # pydantic's "Input should be a valid string (got True)"
        message = f"expected {_EXPECTED[kind]}, got {described(err.get('input'))}"
    else:
        got = err.get("input")
        message = f"{err.get('msg', 'invalid value')} (got {clip(repr(got), 80)}){unseen_note(got)}"
    if field == "has_error" and kind == "missing" and len(unknown) > 1:
        message += f"; {WIDE_LABELS}"  # not the label rule's way: no column to rule on
    elif field == "has_error" and kind in ("bool_parsing", "bool_type", "missing"):  # 0.5, NaN
        message += (
            "; labels written other than true/false or 1/0 (ja/nein, a scale, blanks)? "
            "failcodes ingest generic-labels FILE -o OUT --label-rule 'has_error in {ERROR "
            "VALUES} -> error; has_error in {OTHER VALUES} -> no_error; otherwise -> skip'"
        )
    elif field == "verdict" and kind == "missing":  # a JSON null: no verdict
        message += f"; no verdict? {NO_VERDICT_WAY}"
    elif field == "passages" and isinstance(err.get("input"), str):  # a foreign table's cell
        message += "; passages as JSON text? failcodes ingest generic FILE -o NEW.jsonl reads it"
    if unknown and kind in named and foreign:
        message += f" ({map_hint(convert)})"
    counted = len(missing) + len(unknown) if kind in named else 1
    more = len(errors) - counted
    if more:
        message += f"; and {more} more problem{'s' if more > 1 else ''} in this record"
    return InputError(message, path=path, line=line, field=field)


#: What a field of these pydantic error kinds expects, said in the tool's words.
_EXPECTED = {
    "string_type": "text",
    # pydantic reads these (any case): 1/0, yes/no, y/n, true/false, t/f, on/off
    "bool_type": "true or false (or 1/0, yes/no)",
    "bool_parsing": "true or false (or 1/0, yes/no)",
}


def described(value: object) -> str:
    """A cell's value as a reader names it: ``the boolean true``, ``NaN (not a number)``."""
    import math

    if value is None:
        return "null (no value)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, float) and math.isnan(value):
        return "NaN (not a number: a missing value?)"
    if isinstance(value, decimal.Decimal):
        return f"the decimal number {value}" if value.is_finite() else f"the decimal {value}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, list | tuple):
        return f"a list {clip(repr(list(value)), 60)}"
    if isinstance(value, dict):
        return f"an object {clip(repr(value), 60)}"
    return clip(repr(value), 80) + unseen_note(value)


def _also(names: Sequence[str]) -> str:
    return f" (also {listed(names)})" if names else ""


def validate_record(
    model: type[M],
    record: Mapping[str, Any],
    path: str | Path,
    line: int | None,
    *,
    convert: str | None = None,
) -> M:
    """Validate one read record as ``model``.

    Raises :class:`InputError` naming the file, line and field of the first problem;
    ``convert``: the ingest command whose ``--map`` renames foreign fields (:func:`map_hint`).
    """
    from pydantic import ValidationError

    try:
        return model.model_validate(record)
    except ValidationError as exc:
        raise _validation_error(exc, Path(path), line, convert=convert) from None


def read_model_json(path: str | Path, model: type[M], *, what: str | None = None) -> M:
    """Read a whole JSON document (``panel.json``, ``summary.json``, a plan) as ``model``.

    Strict JSON (:func:`~failcodes.jsonio.read_json`); a problem is one :class:`InputError`
    naming the file, the line of the field and the field (``what``, e.g. "not a panel
    report", heads the message).
    """
    from pydantic import ValidationError

    src = Path(path)
    try:
        return model.model_validate(read_json(src))
    except ValidationError as exc:
        err = _validation_error(exc, src, None, foreign=False)  # a file failcodes wrote
        line = json_field_line(src, err.field) if err.field else None
        reason = f"{what}: {err.reason}" if what else err.reason
        raise InputError(reason, path=src, line=line, field=err.field) from None


def read_model_if_exists(path: str | Path, model: type[M], *, what: str | None = None) -> M | None:
    """:func:`read_model_json` of ``path``; None when there is no such file."""
    src = Path(path)
    if not src.exists() and not src.is_symlink():
        return None
    return read_model_json(src, model, what=what)


def read_models_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read a JSONL file of ``model`` objects (units, annotations, ...).

    Raises :class:`InputError` naming the file, line and field of the first problem.
    """
    src = Path(path)
    return [validate_record(model, record, src, line) for line, record in iter_jsonl(src)]


# ------------------------------------------------------------------------------------------
# Tables of models: required fields, CSV cells, a table staged for an atomic write
# ------------------------------------------------------------------------------------------


def required_fields(model: type[BaseModel]) -> list[str]:
    """The names of the fields of ``model`` that a record must have."""
    return [name for name, info in model.model_fields.items() if info.is_required()]


def csv_cell(value: Any) -> str:
    """A value as written in a CSV cell (missing: empty; flags: ``true``/``false``).

    Text a spreadsheet would run as a formula gets a quote in front (see
    :mod:`failcodes.csvcells`; the readers take it off).
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, StrEnum):
        return neutralise(value.value)
    if isinstance(value, str):
        return neutralise(value)
    return str(value)


#: A line break as the CSV reader counts lines (a text file read with ``newline=""``).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class CsvTable:
    """A CSV file being written: its header, then rows of values (see :func:`csv_cell`).

    A NUL in a cell is refused naming the file, the line the row starts on (as the reader
    counts lines: a cell may hold line breaks) and the column.
    """

    def __init__(self, fh: IO[str], path: Path, columns: Sequence[str]) -> None:
        self._writer = csv.writer(fh)
        self._writer.writerow(columns)
        self.path, self.columns, self._line = path, tuple(columns), 2

    def write(self, values: Sequence[Any]) -> None:
        """Write one row of ``values`` (in the order of the columns)."""
        cells = [csv_cell(v) for v in values]
        check_nul(cells, self.columns, self.path, self._line)
        self._writer.writerow(cells)
        self._line += 1 + sum(len(_LINE_BREAK.findall(c)) for c in cells if "\n" in c or "\r" in c)


#: Rows per row group of a Parquet file we write: a reader's parsed footer holds ~30 KB a
#: trace row group (1,024-row groups: ~34 MB at 10x paper scale; docs/architecture.md).
PARQUET_ROWS = 8192
#: Rows made into Arrow columns at a time (held in Python), a divisor of PARQUET_ROWS.
ARROW_ROWS = 1024


def stage_table(
    b: AtomicBatch,
    path: Path,
    model: type[BaseModel],
    rows: Iterable[BaseModel],
    csv_columns: Sequence[str],
    *,
    omit: Collection[str] = (),
    footer: Callable[[], dict[bytes, bytes] | None] | None = None,
) -> None:
    """Stage ``rows`` in ``b`` as ``path`` in its format (a CSV gets ``csv_columns``).

    ``rows`` are iterated once: JSONL is written as they come. ``omit`` names fields unset
    in every row, left out of the CSV and Parquet columns (JSONL leaves out unset fields).
    ``footer`` is called once every row is written: metadata for a Parquet file's footer
    (:func:`failcodes.engine.validated_marker`, sealed once the file is closed), or None.
    Parquet columns are the rows' attributes (:func:`arrow_table`): a row may be a model or
    any object with its fields.
    """
    fmt = detect_format(path)
    tmp = b.stage(path)
    if fmt is Format.JSONL:
        with tmp.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(row.model_dump_json(exclude_none=True) + "\n")
    elif fmt is Format.CSV:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            columns = [c for c in csv_columns if c not in omit]
            table = CsvTable(fh, path, columns)
            for row in rows:
                table.write([getattr(row, c) for c in columns])
    else:
        pa, pq = pyarrow_modules()
        keep_heap()
        schema = arrow_schema(model)
        if omit:
            schema = pa.schema([f for f in schema if f.name not in omit])
        # one row group per PARQUET_ROWS rows, written as they come (a paper-scale traces file
        # held as one table took 4 GB), made into Arrow ARROW_ROWS rows at a time
        with pq.ParquetWriter(tmp, schema) as writer:
            it, step = iter(rows), min(ARROW_ROWS, PARQUET_ROWS)
            tables = (
                arrow_table(schema, c) for c in iter(lambda: [*itertools.islice(it, step)], [])
            )
            for group in iter(lambda: [*itertools.islice(tables, PARQUET_ROWS // step)], []):
                writer.write_table(pa.concat_tables(group), row_group_size=PARQUET_ROWS)
                del group  # freed before the next is made
            extra = footer() if footer is not None else None
            if extra:
                writer.add_key_value_metadata(extra)
        if extra:
            from failcodes.engine import MARKER_KEY, seal

            if MARKER_KEY in extra:
                seal(tmp)  # the marker bound to the footer written (engine.seal)


#: glibc's ``mallopt`` parameters (malloc.h) and the values :func:`keep_heap` gives them: the
#: largest mmap threshold glibc's own adjustment reaches, and twice it as its trim threshold.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
KEPT_MMAP, KEPT_TRIM = 32 << 20, 64 << 20


def keep_heap() -> bool:
    """Let glibc keep up to :data:`KEPT_TRIM` bytes of freed heap for reuse (False: no glibc).

    A Parquet file is written a row group at a time, each group's text columns several MB
    of bytes (:func:`_text_buffers`), all freed once the group is written: glibc gave the
    top of its heap back to the system each time (it does past twice its mmap threshold,
    then ~4 MB: the largest block freed so far) and the next group faulted every page anew
    (issue 30: ~150,000 page faults, ~600 MB, in a paper-scale trace ingest's columns; on a
    virtual machine handing free pages back to its host each costs a host fault too). The
    thresholds set are those glibc's own adjustment reaches once a 32 MB block is freed.
    Nothing on another C library.
    """
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, KEPT_MMAP)) and bool(mallopt(M_TRIM_THRESHOLD, KEPT_TRIM))


def arrow_table(schema: Any, rows: Sequence[Any]) -> Any:
    """The Arrow table of ``rows``: each column the rows' attribute of its name (issue 30).

    Built column by column from the attributes (a nested list of structs from its flattened
    items and their offsets), with no record dict per row: ``Table.from_pylist`` of JSON-mode
    dumps cost 4.3 CPU-s of a 13 CPU-s paper-scale trace ingest. Each array is made from its
    buffers (:func:`_arrow_column`), not by ``pa.array`` of a list, which in pyarrow 26 imports
    pandas (~0.4 CPU-s, ~55 MB). Text enums are written as their values; the table equals
    ``from_pylist`` of the dumps.
    """
    pa, _ = pyarrow_modules()
    values = _fields_of(rows, schema.names)
    columns = [_arrow_column(pa, v, f.type) for v, f in zip(values, schema, strict=True)]
    return pa.Table.from_arrays(columns, schema=schema)


def string_array(values: Sequence[str | None]) -> Any:
    """An Arrow string array of Python strings (None: null), from buffers (no pandas import)."""
    pa, _ = pyarrow_modules()
    return _arrow_column(pa, list(values), pa.string())


def _fields_of(rows: Sequence[Any], names: Sequence[str]) -> list[list[Any]]:
    """The values of each field in ``names`` over ``rows``, one list a field.

    Rows of one msgspec struct type whose fields are ``names`` in that order (the vouched
    trace lines of :mod:`failcodes.tracelines` and their passages): one ``astuple`` a row,
    then a slice a field, where reading each field of each row (``attrgetter``) cost ~3x.
    Other rows (models) are read field by field.
    """
    kinds = set(map(type, rows))
    if len(kinds) == 1 and getattr(next(iter(kinds)), "__struct_fields__", None) == tuple(names):
        import msgspec

        flat = list(itertools.chain.from_iterable(map(msgspec.structs.astuple, rows)))
        return [flat[i :: len(names)] for i in range(len(names))]
    return [list(map(operator.attrgetter(name), rows)) for name in names]


#: bytes 0/1 -> ASCII "0"/"1" (validity and boolean bitmaps: see :func:`_bits`)
_DIGITS = bytes.maketrans(b"\x00\x01", b"01")


def _bits(flags: bytes) -> Any:
    """One byte 0/1 per value -> an Arrow bitmap (value i at bit i, least significant first).

    In C: the flags read backwards as a binary number, written little-endian.
    """
    pa, _ = pyarrow_modules()
    if not flags:
        return pa.py_buffer(b"")
    number = int(flags.translate(_DIGITS)[::-1], 2)
    return pa.py_buffer(number.to_bytes((len(flags) + 7) // 8, "little"))


def _arrow_column(pa: Any, values: list[Any], kind: Any) -> Any:
    """One column of :func:`arrow_table` (lists and structs of our models are never null).

    Text, integers, floats and booleans, each maybe missing (None), from their buffers: a
    validity bitmap where a value is missing, the values (missing ones as 0 or empty), and
    for text the UTF-8 bytes and their int32 offsets.
    """
    n = len(values)
    if pa.types.is_list(kind):
        offsets = _packed("i", list(itertools.accumulate(map(len, values), initial=0)))
        items = list(itertools.chain.from_iterable(values))
        inner = _arrow_column(pa, items, kind.value_type)
        starts = pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(offsets)])
        return pa.ListArray.from_arrays(starts, inner, type=kind)
    if pa.types.is_struct(kind):
        fields = _fields_of(values, [f.name for f in kind])
        children = [_arrow_column(pa, v, f.type) for v, f in zip(fields, kind, strict=True)]
        return pa.StructArray.from_arrays(children, fields=list(kind))
    if pa.types.is_string(kind):
        return _string_column(pa, values, kind)
    code = "q" if pa.types.is_int64(kind) else "d" if pa.types.is_float64(kind) else None
    if code is not None:
        with contextlib.suppress(TypeError):  # a None among them: counted below
            # every value given (the usual column): no pass to count missing ones
            data = pa.py_buffer(_packed(code, values))
            return pa.Array.from_buffers(kind, n, [None, data], null_count=0)
    missing = values.count(None)
    if missing == n and n:  # a field no row has (titles, gold flags): only zeros to write
        empty = _null_column(pa, kind, n)
        if empty is not None:
            return empty
    valid = _validity(values) if missing else None
    filled = [v if v is not None else 0 for v in values] if missing else values
    if pa.types.is_boolean(kind):
        data = _bits(bytes(map(bool, filled)))
    elif code is not None:
        data = pa.py_buffer(_packed(code, filled))
    else:  # pragma: no cover - our models have no other type (see _arrow_type)
        raise TypeError(f"no Arrow column of {kind}")
    return pa.Array.from_buffers(kind, n, [valid, data], null_count=missing)


def _validity(values: list[Any]) -> Any:
    """The validity bitmap of ``values`` (a value is valid where it is not None)."""
    return _bits(bytes(map(operator.is_not, values, itertools.repeat(None))))


def _string_column(pa: Any, values: list[Any], kind: Any) -> Any:
    """:func:`_arrow_column` of text (each value a ``str`` or None for missing)."""
    n = len(values)
    try:  # every value given (the usual column): no pass to count missing ones
        missing, text_buffers = 0, _text_buffers(values)
    except TypeError:  # a None among them fails the join (as any value but text does)
        missing = values.count(None)
        if missing == n:  # a field no row has (titles): only zeros to write
            return _null_column(pa, kind, n)
        text_buffers = _text_buffers([v if v is not None else "" for v in values])
    if text_buffers is None:  # past int32 offsets: pyarrow's own conversion
        return pa.array(values, type=kind)
    offsets, data = text_buffers
    valid = _validity(values) if missing else None
    buffers = [valid, pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(kind, n, buffers, null_count=missing)


def _text_buffers(texts: list[str]) -> tuple[Any, bytes] | None:
    """The int32 offsets and UTF-8 bytes of an Arrow string array of ``texts``.

    None when the bytes reach 2 GiB (past int32 offsets). ASCII texts (their join says
    so, a flag Python keeps) are joined and encoded once, each text's size its length (issue
    30: 0.38 -> 0.13 CPU-s for the passages' texts of a paper-scale trace ingest). Else, where
    no text holds a NUL the texts are joined with NUL between them and encoded once; the NULs'
    places give the offsets (numpy) and the bytes are the join without them (encoding each
    text, its size and a join of the pieces was ~0.09 of ~0.33 CPU-s of a 20,000-trace
    table's columns, the passages' texts alone). A NUL is one byte in UTF-8 and in no other
    character's bytes. Otherwise each text is encoded on its own.
    """
    import numpy as np

    n = len(texts)
    plain = "".join(texts)
    if plain.isascii():  # one byte a character: the lengths are the sizes
        if len(plain) >= 1 << 31:
            return None
        sizes = list(itertools.accumulate(map(len, texts), initial=0))
        return _packed("i", sizes), plain.encode("ascii")
    del plain
    joined = "\0".join(texts).encode("utf-8")
    size = len(joined) - max(n - 1, 0)
    if size >= 1 << 31:
        return None
    ends = np.flatnonzero(np.frombuffer(joined, np.uint8) == 0)
    if len(ends) == max(n - 1, 0):
        offsets = np.empty(n + 1, np.int32)
        offsets[0], offsets[n] = 0, size
        offsets[1:n] = ends - np.arange(n - 1)
        return offsets, joined.replace(b"\0", b"") if n > 1 else joined
    encoded = list(map(str.encode, texts))
    sizes = list(itertools.accumulate(map(len, encoded), initial=0))
    return _packed("i", sizes), b"".join(encoded)


def _packed(code: str, values: Sequence[Any]) -> bytes | array.array[Any]:
    """The bytes ``array.array(code, values)`` holds (native order: Arrow's, little-endian).

    By ``struct``: ``array`` converts each item through ``PyArg_Parse`` (~2.5x the time; a
    tenth of the columns' time of a paper-scale trace ingest). A value out of the type's
    range gets ``array``'s own error.
    """
    try:
        return struct.pack(f"={len(values)}{code}", *values)
    except struct.error:
        return array.array(code, values)


def _null_column(pa: Any, kind: Any, n: int) -> Any:
    """:func:`_arrow_column` of ``n`` missing values, its buffers zeros; None: another kind.

    The same buffers as the general path writes (no bit valid, each value 0 or empty), made
    without a pass over the values: a passage field no row fills was a third of the
    columns' time in a paper-scale trace ingest whose passages have no title or gold flag.
    """
    bits = pa.py_buffer(bytes((n + 7) // 8))
    if pa.types.is_string(kind):
        data = [pa.py_buffer(bytes(4 * (n + 1))), pa.py_buffer(b"")]
    elif pa.types.is_boolean(kind):
        data = [bits]
    elif pa.types.is_int64(kind) or pa.types.is_float64(kind):
        data = [pa.py_buffer(bytes(8 * n))]
    else:  # pragma: no cover - our models have no other type (see _arrow_type)
        return None
    return pa.Array.from_buffers(kind, n, [bits, *data], null_count=n)


# ------------------------------------------------------------------------------------------
# Arrow schemas derived from the pydantic models
# ------------------------------------------------------------------------------------------


def _arrow_type(annotation: Any) -> Any:
    pa, _ = pyarrow_modules()
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        if len(inner) != 1:  # pragma: no cover - our models never do this
            raise TypeError(f"unsupported union {annotation!r}")
        return _arrow_type(inner[0])
    if origin is tuple:
        return pa.list_(_arrow_type(get_args(annotation)[0]))
    if isinstance(annotation, type):
        from pydantic import BaseModel

        if issubclass(annotation, BaseModel):
            return pa.struct(arrow_schema(annotation))
        if issubclass(annotation, bool):
            return pa.bool_()
        if issubclass(annotation, int):
            return pa.int64()
        if issubclass(annotation, float):
            return pa.float64()
        if issubclass(annotation, str):
            return pa.string()
    raise TypeError(f"no Arrow type for {annotation!r}")  # pragma: no cover


def arrow_schema(model: type[BaseModel]) -> Any:
    """The Arrow schema of a Parquet table of ``model`` records (nested models as structs)."""
    pa, _ = pyarrow_modules()
    return pa.schema(
        [pa.field(name, _arrow_type(info.annotation)) for name, info in model.model_fields.items()]
    )


# ------------------------------------------------------------------------------------------
# Identifiers
# ------------------------------------------------------------------------------------------


#: Ids that are no id: Excel's error values (``#N/A``, ``#REF!``...: a formula that failed) and
#: the missing marks (``NA``, ``N/A``, ``nan``, ``null``) in every case, spelled out so that a
#: column of ids is looked up at once (``NO_ID.isdisjoint(ids)``, in C: ~20 ms a million ids).
NO_ID = ERRORS | frozenset(
    "".join(letters)
    for mark in MISSING_MARKS
    for letters in itertools.product(*({c, c.upper()} for c in mark))
)


def no_id_problem(value: object) -> str | None:
    """Why ``value`` is no id (an Excel error value or a missing mark, :data:`NO_ID`), or None.

    Such a cell was read as an id of its own: a system ``#N/A`` (a trace file, a CSV ingested)
    took the rows whose system cell a lookup failed on from their system, whose sentences then
    counted as having no claim (system B FN 1, TN 1 for FN 1, FP 1 and a third system, exit 0).
    """
    if not isinstance(value, str) or value not in NO_ID:
        return None
    what = (
        "Excel's error value (a formula that failed; the file holds its text)"
        if value in ERRORS
        else "a missing mark (no value)"
    )
    return f"{value!r} is {what}, not an id: fill the cell, or leave the row out"


def id_problem(value: object) -> str | None:
    """Why ``value`` is no usable id (blank, padded, or :func:`no_id_problem`), or None."""
    if not isinstance(value, str):
        return None
    if value and value == value.strip():
        return no_id_problem(value) if value in NO_ID else None
    why = "blank id (empty or spaces only)" if not value.strip() else f"id {value!r}"
    return f"{why}; expected the identifier alone, without spaces around it"


#: The ids a number may stand for (a JSONL number, a Parquet integer or float column, an Excel
#: cell): read as text by :func:`id_text` in every reader (ingest, labels, traces).
NUMBER_ID_FIELDS: tuple[str, ...] = ("question_id", "sentence_id", "claim_id")

#: Names a number may stand for (``"system": 7`` in JSONL, a Parquet integer column): read as
#: text as the ids are (:func:`name_text`), so JSONL's 7 and CSV's '7' name one system.
NUMBER_NAME_FIELDS: tuple[str, ...] = ("system",)

#: Past 2**53 a float no longer holds every whole number: an id's last digits may be lost.
_EXACT_FLOAT = 2**53
#: A number written in scientific notation with its exponent's sign, as a spreadsheet shows a
#: long number (``1.23457E+11``) or Python writes a float past 1e16 (``1.2345678901234568e+16``).
SHOWN_EXPONENT = r"[+-]?[0-9]+(?:\.[0-9]*)?[eE][+-][0-9]+"
_SHOWN_EXPONENT = re.compile(SHOWN_EXPONENT)


#: The same, one id a line of ids joined by newlines (:func:`first_in_exponent`, in C).
_SHOWN_EXPONENT_LINE = re.compile(f"^{SHOWN_EXPONENT}$", re.MULTILINE)


def exponent_problem(value: str) -> str:
    """Why ``value``, an id in scientific notation (``1.23457E+11``), is refused."""
    return (
        f"id {value!r} is a number as a spreadsheet shows it, in scientific notation: its last "
        "digits are lost (123456789012 and 123456789013 both show as 1.23457E+11); expected "
        "the id's digits: format the column as Text (or Number, 0 decimal places) and save again"
    )


def first_in_exponent(ids: Sequence[str | None]) -> int | None:
    """The position of the first of ``ids`` in scientific notation (:func:`id_text`), or None.

    The ids are searched at once, joined by newlines (a match across an id holding a newline
    is looked at again, one id at a time).
    """
    if not _SHOWN_EXPONENT_LINE.search("\n".join(filter(None, ids))):
        return None
    return next(
        (i for i, v in enumerate(ids) if v is not None and _SHOWN_EXPONENT.fullmatch(v)), None
    )


def name_text(value: object, *, path: str | Path, line: int | None, field: str) -> object:
    """A number given as a name (a system), as its text by :func:`id_text`'s rule.

    A CSV's system '7' was read and JSONL's 7 refused ('expected text, got the number 7'):
    one pipeline's systems numbered 1..n named alike in every format now. Anything but a
    number is left to the model (a boolean: 'expected text, got the boolean true').
    """
    if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal):
        return value
    return id_text(value, path=path, line=line, field=field)


def id_text(value: object, *, path: str | Path, line: int | None, field: str) -> object:
    """A number read as an id, as its text; anything else unchanged (the one rule, issue 30).

    A whole number is its decimal text: ``7`` and ``7.0`` (an integer column pandas widened to
    float for a missing value; Excel's every number) are ``"7"``. A float with a fraction
    (``4.5``: ``1.10`` and ``1.1`` are one float, so two ids would be one) or past 2**53 (its
    last digits may be lost) is refused naming the file, line and field: save the column as
    text, as is a bool (a true/false column is no ids); a Parquet DECIMAL is read as a
    float is (exact: a whole one is its integer's text, one with a fraction is refused). A
    text in scientific notation (``1.23457E+11``: a long number id as a spreadsheet shows and
    saves it to CSV, its last digits lost) is refused too.
    """
    if isinstance(value, ShownNumber):  # 7 in a cell formatted 000: the 007 Excel shows
        if value.shown is not None:
            return value.shown
        raise InputError(
            f"cell {value.cell} holds the number {int(value)}, shown through the number "
            f"format {value.format!r} (not as {int(value)}); expected the id as text: format "
            "the column as Text and type the ids as shown, or save the sheet as CSV UTF-8",
            path=path,
            line=line,
            field=field,
        )
    if type(value) is int:
        return str(value)
    if isinstance(value, bool):  # a true/false column taken for the ids
        raise InputError(
            f"id {str(value).lower()} is a boolean (true/false), not an id; expected text or "
            "a whole number: is this the column of the ids?",
            path=path,
            line=line,
            field=field,
        )
    if isinstance(value, decimal.Decimal):  # a Parquet DECIMAL column: exact, as its text
        if value.is_finite() and value == value.to_integral_value():
            return str(int(value))
        why = "a decimal number with a fraction" if value.is_finite() else "not a number"
        raise InputError(
            f"id {value} is {why}; expected text or a whole number: save the column as text",
            path=path,
            line=line,
            field=field,
        )
    if isinstance(value, datetime.date | datetime.time | datetime.timedelta):
        # "Input should be a valid string (got datetime.datetime(2026, 1, 2, 0, 0))" said
        # nothing of how an id becomes a date
        raise InputError(
            f"id {value} is a date or time, not text (a spreadsheet reads an id typed as 1-2 "
            "or 3/4 as a date): format the column as Text and type the ids again, or save "
            "them as text",
            path=path,
            line=line,
            field=field,
        )
    if isinstance(value, str) and _SHOWN_EXPONENT.fullmatch(value):
        # a CSV a spreadsheet saved writes a long number id as it shows it: 123456789012 and
        # 123456789013 were both '1.23457E+11', read as one sentence (n 3 for 4)
        raise InputError(exponent_problem(value), path=path, line=line, field=field)
    if isinstance(value, NarrowFloat):  # 16777217 in a float32 column: 16777216
        raise InputError(
            f"id {value:.0f} is in a {32 if value.bound == 2**24 else 16}-bit float column, at "
            f"or past {value.bound:,} (2**{value.bound.bit_length() - 1}), where such a float "
            "no longer holds every whole number (its last digits may be lost); expected text "
            "or a whole number: save the column as text or integers",
            path=path,
            line=line,
            field=field,
        )
    if type(value) is not float:
        return value
    if value.is_integer() and abs(value) < _EXACT_FLOAT:
        return str(int(value))
    if value.is_integer():
        why = "a float past 2**53 (its last digits may be lost)"
    elif value == value and abs(value) != float("inf"):
        why = "a number with a fraction (1.10 and 1.1 read as one number)"
    else:
        why = "not a number"
    raise InputError(
        f"id {value!r} is {why}; expected text or a whole number: save the column as text",
        path=path,
        line=line,
        field=field,
    )


# ------------------------------------------------------------------------------------------
# Fast JSONL lines: msgspec types for model fields, key counts of a raw line
# ------------------------------------------------------------------------------------------


def msgspec_type(annotation: Any, metadata: Sequence[Any]) -> Any:
    """The msgspec type of a pydantic field: the same type and bounds, enums as literals."""
    import msgspec

    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        return msgspec_type(inner[0], metadata) | None
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return Literal[tuple(v.value for v in annotation)]
    bounds = {
        key: getattr(m, key)
        for m in metadata
        for key in ("ge", "gt", "le", "lt")
        if getattr(m, key, None) is not None
    }
    if bounds:
        return Annotated[annotation, msgspec.Meta(**bounds)]
    return annotation


#: The UTF-8 byte order mark (Excel puts one before the first line of a text export).
UTF8_BOM = b"\xef\xbb\xbf"
