"""Read and write traces, labels and sentences as JSONL, CSV or Parquet (by file extension).

Formats (see docs/trace-format.md):

- ``.jsonl``: one JSON object per line (blank lines are skipped); a trace's ``passages`` is a
  list of objects.
- ``.csv``: one row per record with a header; empty cells are missing values. Traces are two
  tables: ``X.csv`` (one row per trace, no passages column) and ``X.passages.csv`` (one row per
  passage, joined on ``system`` + ``claim_id``; see :func:`passages_path_for`). Reading a trace
  CSV without its passages table gives traces without passages.
- ``.parquet``: one row per record; a trace's ``passages`` is a ``list<struct>`` column.

Every problem raises :class:`~failcodes.errors.InputError` with the path, the 1-based line (CSV:
the physical line where the data row starts, the header being line 1; Parquet: the 1-based
row number), the field and what was expected. Writes are atomic: everything is written to
temporary files in the destination folder and moved into place with :func:`os.replace` only
when all of them are complete (:class:`AtomicBatch`).
"""

from __future__ import annotations

import csv
import json
import math
import re
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from failcodes.errors import InputError
from failcodes.fileio import AtomicBatch as AtomicBatch  # re-exported: io.AtomicBatch
from failcodes.labels import Label, check_labels_against_traces
from failcodes.sentences import Sentence
from failcodes.traces import Passage, Trace
from failcodes.verdicts import Verdict, normalize_verdict

M = TypeVar("M", bound=BaseModel)


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


_EXTENSIONS: dict[str, Format] = {
    ".jsonl": Format.JSONL,
    ".ndjson": Format.JSONL,
    ".csv": Format.CSV,
    ".parquet": Format.PARQUET,
    ".pq": Format.PARQUET,
}

#: Columns of the passages table of a trace CSV, in order (the join key first).
PASSAGE_KEY = ("system", "claim_id")


def detect_format(path: str | Path) -> Format:
    """Return the format of ``path`` from its extension, or raise :class:`InputError`."""
    suffix = Path(path).suffix.lower()
    try:
        return _EXTENSIONS[suffix]
    except KeyError:
        raise InputError(
            f"cannot tell the format from the extension {suffix or '(none)'!r}; "
            "expected .jsonl, .csv or .parquet",
            path=path,
        ) from None


def passages_path_for(path: str | Path) -> Path:
    """Return the passages table that goes with a trace CSV: ``X.csv`` -> ``X.passages.csv``."""
    p = Path(path)
    return p.with_name(f"{p.stem}.passages.csv")


# ------------------------------------------------------------------------------------------
# Atomic writes (see failcodes.fileio)
# ------------------------------------------------------------------------------------------


def _batched(batch: AtomicBatch | None, write: Callable[[AtomicBatch], None]) -> None:
    if batch is not None:
        write(batch)
        return
    with AtomicBatch() as own:
        write(own)


# ------------------------------------------------------------------------------------------
# Rows in, rows out
# ------------------------------------------------------------------------------------------


def _open_text(path: Path) -> IO[str]:
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_dir():
        raise InputError("is a folder, expected a file", path=path)
    return path.open(encoding="utf-8-sig", newline="")  # tolerate a BOM (Excel exports)


def _decode_error(path: Path, exc: UnicodeDecodeError) -> InputError:
    return InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=path)


def _rename(record: dict[str, Any], column_map: Mapping[str, str]) -> dict[str, Any]:
    """Apply a foreign->ours column map; an empty target drops the column."""
    if not column_map:
        return record
    out: dict[str, Any] = {}
    for key, value in record.items():
        new = column_map.get(key, key)
        if new:
            out[new] = value
    return out


#: Deepest nesting of arrays/objects a JSON input may have (traces need 4; the standard
#: library's parser would otherwise hit RecursionError on ~1000 levels of ``[``).
MAX_JSON_DEPTH = 64

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def _json_depth_exceeds(text: str, limit: int) -> bool:
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _BRACKET.finditer(_JSON_STRING.sub('""', text)):
        if match.group(0) in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _StrictJSONError(f"key {key!r} appears twice in one object", field=key)
            seen.add(key)
    return out


def _no_constant(name: str) -> Any:
    raise _StrictJSONError(f"{name} is not a number JSON allows; write null for a missing value")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _StrictJSONError(f"number {text[:40]} overflows to infinity")
    return value


class _StrictJSONError(ValueError):
    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def _find_lone_surrogate(value: Any, where: str = "") -> str | None:
    """Return the field path of the first string holding a lone surrogate, or None."""
    if isinstance(value, str):
        return (where or "(value)") if _LONE_SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            if _LONE_SURROGATE.search(key):
                return name
            found = _find_lone_surrogate(item, name)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _find_lone_surrogate(item, f"{where}[{index}]")
            if found:
                return found
    return None


_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant, parse_float=_finite_float
)


def parse_json(text: str, *, path: str | Path | None = None, line: int | None = None) -> Any:
    """Parse one JSON document or JSONL line strictly; THE JSON parser of every file reader.

    On top of :func:`json.loads` it refuses duplicate keys in an object (JSON leaves them
    undefined; the standard library keeps the last), ``NaN``/``Infinity`` and numbers that
    overflow to infinity, integers over Python's 4300-digit limit, nesting deeper than
    :data:`MAX_JSON_DEPTH` and escaped lone surrogates (not valid Unicode).
    Every problem raises :class:`InputError` with ``path`` and ``line`` (for a whole document,
    the line of a syntax error inside it).
    """
    if _json_depth_exceeds(text, MAX_JSON_DEPTH):
        raise InputError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", path=path, line=line)
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        col = f" at column {exc.colno}" if line is not None else ""
        raise InputError(f"malformed JSON ({exc.msg}{col})", path=path, line=where) from None
    except _StrictJSONError as exc:
        raise InputError(str(exc), path=path, line=line, field=exc.field) from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise InputError("JSON nested too deeply", path=path, line=line) from None
    except ValueError as exc:  # e.g. an integer with more than 4300 digits
        raise InputError(f"malformed JSON ({exc})", path=path, line=line) from None
    if _SURROGATE_ESCAPE.search(text):
        field = _find_lone_surrogate(value)
        if field is not None:
            raise InputError(
                "string holds a lone surrogate escape (\\ud800-\\udfff without its pair); "
                "expected valid Unicode",
                path=path,
                line=line,
                field=None if field == "(value)" else field,
            )
    return value


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, object)`` for each non-blank line of a JSONL file (for adapters).

    Raises :class:`InputError` with the line for malformed JSON or a non-object line (every
    line goes through :func:`parse_json`).
    """
    return _jsonl_rows(Path(path))


def read_json(path: str | Path) -> Any:
    """Read a whole JSON document (not JSONL) through :func:`parse_json`.

    Raises :class:`InputError` for a missing or unreadable file, text that is not UTF-8 and
    malformed JSON (with the line of the problem).
    """
    src = Path(path)
    if not src.exists():
        raise InputError("file not found", path=src)
    if src.is_dir():
        raise InputError("is a folder, expected a file", path=src)
    try:
        text = src.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=src) from None
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror}", path=src) from None
    return parse_json(text, path=src)


def peek_jsonl(path: str | Path) -> dict[str, Any] | None:
    """Return the first non-blank line of a JSONL file as an object, or None.

    None when the file cannot be read, the line is not JSON or not an object: for sniffing
    what a file holds; the real reader then reports the problem with its location.
    """
    try:
        with Path(path).open(encoding="utf-8") as fh:
            first = next((line for line in fh if line.strip()), "")
        obj = parse_json(first) if first else None
    except (OSError, UnicodeDecodeError, InputError):
        return None
    return obj if isinstance(obj, dict) else None


_FIELD_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def json_field_line(path: str | Path, field: str) -> int | None:
    """Return the 1-based line where ``field`` (e.g. ``results[1].claims[0].raw``) starts.

    For errors in whole-document JSON files (not JSONL): walks the text to the value the field
    path names. Returns None when the path cannot be followed (the error then has no line).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    parts: list[int | str] = [
        int(m.group(1)) if m.group(1) is not None else m.group(2)
        for m in _FIELD_PART.finditer(field)
    ]
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")

    def skip(pos: int) -> int:
        match = ws.match(text, pos)
        return match.end() if match else pos

    try:
        pos = skip(0)
        for part in parts:
            if isinstance(part, int):
                if text[pos] != "[":
                    return None
                pos = skip(pos + 1)
                for _ in range(part):
                    _, pos = decoder.raw_decode(text, pos)
                    pos = skip(pos)
                    if text[pos] != ",":
                        return None
                    pos = skip(pos + 1)
            else:
                if text[pos] != "{":
                    return None
                pos = skip(pos + 1)
                while True:
                    key, pos = decoder.raw_decode(text, pos)
                    pos = skip(pos)
                    if text[pos] != ":":
                        return None
                    pos = skip(pos + 1)
                    if key == part:
                        break
                    _, pos = decoder.raw_decode(text, pos)
                    pos = skip(pos)
                    if text[pos] != ",":
                        return None
                    pos = skip(pos + 1)
    except (ValueError, IndexError):
        return None
    return text.count("\n", 0, pos) + 1


def with_json_line(exc: InputError) -> InputError:
    """Return ``exc`` with its line filled in from its JSON field path when it has none."""
    if exc.line is not None or exc.path is None or exc.field is None:
        return exc
    line = json_field_line(exc.path, exc.field)
    if line is None:
        return exc
    return InputError(exc.reason, path=exc.path, line=line, field=exc.field)


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open_text(path) as fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                obj = parse_json(raw.rstrip("\r\n"), path=path, line=lineno)
                if not isinstance(obj, dict):
                    raise InputError(
                        f"expected a JSON object, got {type(obj).__name__}", path=path, line=lineno
                    )
                yield lineno, obj
        except UnicodeDecodeError as exc:
            raise _decode_error(path, exc) from None


def _csv_rows(
    path: Path,
    columns: Sequence[str] | None,
    required: Sequence[str],
    column_map: Mapping[str, str],
) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open_text(path) as fh:
        try:
            reader = csv.reader(fh)
            try:
                header_raw = next(reader)
            except StopIteration:
                raise InputError("empty file, expected a header row", path=path, line=1) from None
            except csv.Error as exc:
                raise InputError(f"malformed CSV ({exc})", path=path, line=1) from None
            header = [column_map.get(h, h) for h in header_raw]
            _check_columns(path, header, columns, required)
            last = reader.line_num
            while True:
                try:
                    row = next(reader)
                except StopIteration:
                    break
                except csv.Error as exc:
                    raise InputError(f"malformed CSV ({exc})", path=path, line=last + 1) from None
                lineno, last = last + 1, reader.line_num
                if not row or all(not cell.strip() for cell in row):
                    continue
                if len(row) != len(header):
                    raise InputError(
                        f"expected {len(header)} cells (as in the header), got {len(row)}",
                        path=path,
                        line=lineno,
                    )
                yield lineno, {h: v for h, v in zip(header, row, strict=True) if h and v != ""}
        except UnicodeDecodeError as exc:
            raise _decode_error(path, exc) from None


def _check_columns(
    path: Path, header: Sequence[str], columns: Sequence[str] | None, required: Sequence[str]
) -> None:
    """Refuse repeated, unknown (``columns`` None: any name is known) and missing columns."""
    seen: set[str] = set()
    for name in header:
        if not name:
            continue
        if name in seen:
            raise InputError("column appears twice in the header", path=path, line=1, field=name)
        seen.add(name)
        if columns is not None and name not in columns:
            raise InputError(
                f"unknown column (expected some of: {', '.join(columns)}; "
                "rename foreign columns with --map FOREIGN=ours, drop with --map FOREIGN=)",
                path=path,
                line=1,
                field=name,
            )
    for name in required:
        if name not in seen:
            raise InputError(
                f"missing column (have: {', '.join(h for h in header if h)})",
                path=path,
                line=1,
                field=name,
            )


def _parquet_rows(
    path: Path,
    columns: Sequence[str] | None,
    required: Sequence[str],
    column_map: Mapping[str, str],
) -> Iterator[tuple[int, dict[str, Any]]]:
    pa, pq = pyarrow_modules()
    if not path.exists():
        raise InputError("file not found", path=path)
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"not a readable Parquet file ({exc})", path=path) from None
    header = [column_map.get(n, n) for n in table.column_names]
    _check_columns(path, header, columns, required)
    table = table.rename_columns(header)
    drop = [n for n in header if not n]
    if drop:
        table = table.drop_columns(drop)
    yield from enumerate(table.to_pylist(), start=1)


def table_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for every row of any JSONL, CSV or Parquet table, as it is.

    No column is required or refused (callers map foreign columns themselves); missing values
    (empty CSV cells, nulls) are left out of the record. Errors as for every reader: malformed
    JSON or CSV, a row with the wrong number of cells, a repeated CSV header, with the line.
    """
    p = Path(path)
    fmt = detect_format(p)
    if fmt is Format.JSONL:
        rows: Iterable[tuple[int, dict[str, Any]]] = _jsonl_rows(p)
    elif fmt is Format.CSV:
        rows = _csv_rows(p, None, (), {})
    else:
        rows = _parquet_rows(p, None, (), {})
    for line, rec in rows:
        yield line, _drop_nones(rec)


def table_columns(path: str | Path) -> list[str] | None:
    """The header of a CSV or the column names of a Parquet file; None for JSONL."""
    p = Path(path)
    fmt = detect_format(p)
    if fmt is Format.JSONL:
        return None
    if fmt is Format.PARQUET:
        pa, pq = pyarrow_modules()
        try:
            return list(pq.read_schema(p).names)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"not a readable Parquet file ({exc})", path=p) from None
    with _open_text(p) as fh:
        try:
            header = next(csv.reader(fh), None)
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"malformed CSV ({exc})", path=p, line=1) from None
    if header is None:
        raise InputError("empty file, expected a header row", path=p, line=1)
    return header


def trace_from_record(
    record: dict[str, Any],
    path: str | Path,
    line: int,
    aliases: Mapping[str, Verdict] | None = None,
) -> Trace:
    """Validate one trace record (our field names) exactly as :func:`read_traces` does.

    The verdict goes through the alias table (the raw text kept in ``raw_verdict``); nested
    passages may be objects with missing values left out. Errors name path, line and field.
    """
    return _prepare_trace(dict(record), Path(path), line, aliases, {})


def _drop_nones(record: Mapping[str, Any]) -> dict[str, Any]:
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
    exc: ValidationError, path: Path, line: int | None, prefix: str = ""
) -> InputError:
    err = exc.errors()[0]
    loc = tuple(err.get("loc", ()))
    field = _field_name(((prefix,) if prefix else ()) + loc) or None
    kind = err.get("type", "")
    if kind == "missing":
        message = "missing required field"
    elif kind == "extra_forbidden":
        message = "unknown field (rename foreign fields with --map FOREIGN=ours)"
    elif kind == "value_error":  # our own validators: their message says it all
        message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    else:
        got = repr(err.get("input"))
        got = got if len(got) <= 80 else got[:77] + "..."
        message = f"{err.get('msg', 'invalid value')} (got {got})"
    more = len(exc.errors()) - 1
    if more:
        message += f"; and {more} more problem{'s' if more > 1 else ''} in this record"
    return InputError(message, path=path, line=line, field=field)


def _validate(model: type[M], record: Mapping[str, Any], path: Path, line: int | None) -> M:
    try:
        return model.model_validate(record)
    except ValidationError as exc:
        raise _validation_error(exc, path, line) from None


def read_models_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read a JSONL file of ``model`` objects (units, annotations, ...).

    Raises :class:`InputError` naming the file, line and field of the first problem.
    """
    src = Path(path)
    return [_validate(model, record, src, line) for line, record in _jsonl_rows(src)]


# ------------------------------------------------------------------------------------------
# Generic flat models (labels, sentences)
# ------------------------------------------------------------------------------------------


def _required(model: type[BaseModel]) -> list[str]:
    return [name for name, info in model.model_fields.items() if info.is_required()]


def _records(
    path: Path,
    model: type[BaseModel],
    column_map: Mapping[str, str],
    columns: Sequence[str] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    fmt = detect_format(path)
    cols = list(columns if columns is not None else model.model_fields)
    if fmt is Format.JSONL:
        for line, rec in _jsonl_rows(path):
            yield line, _drop_nones(_rename(rec, column_map))
    elif fmt is Format.CSV:
        yield from _csv_rows(path, cols, _required(model), column_map)
    else:
        for line, rec in _parquet_rows(path, cols, _required(model), column_map):
            yield line, _drop_nones(rec)


def _read_flat(
    path: str | Path, model: type[M], column_map: Mapping[str, str] | None
) -> list[tuple[int, M]]:
    p = Path(path)
    return [
        (line, _validate(model, rec, p, line)) for line, rec in _records(p, model, column_map or {})
    ]


def read_labels(
    path: str | Path,
    *,
    column_map: Mapping[str, str] | None = None,
    traces: Sequence[Trace] | None = None,
    seen: dict[tuple[str, str, str | None], tuple[Path, int]] | None = None,
) -> list[Label]:
    """Read clinical labels; with ``traces``, also check that every label's target exists.

    Two labels for the same target (sentence or claim) by the same annotator are an error, as
    is (with ``traces``) a label for a sentence or claim the traces do not contain (see
    :func:`failcodes.labels.check_labels_against_traces` for the exact rule). ``seen`` lets a
    caller check duplicates across several files.
    """
    p = Path(path)
    located = _read_flat(p, Label, column_map)
    seen = {} if seen is None else seen
    for line, label in located:
        kind, key = ("claim", label.claim_id) if label.claim_id else ("sentence", label.sentence_id)
        assert key is not None
        k = (kind, key, label.annotator)
        if k in seen:
            first_path, first_line = seen[k]
            where = f"line {first_line}" if first_path == p else f"{first_path}:{first_line}"
            raise InputError(
                f"duplicate label for {kind} {key!r}"
                + (f" by {label.annotator!r}" if label.annotator else "")
                + f" (first at {where})",
                path=p,
                line=line,
                field=f"{kind}_id",
            )
        seen[k] = (p, line)
    labels = [label for _, label in located]
    if traces is not None:
        validate_labels(labels, traces, path=p, lines=[line for line, _ in located])
    return labels


def validate_labels(
    labels: Sequence[Label],
    traces: Sequence[Trace],
    *,
    path: str | Path | None = None,
    lines: Sequence[int] | None = None,
) -> None:
    """Raise :class:`InputError` for the first label whose sentence or claim is not in traces."""
    problems = check_labels_against_traces(labels, traces)
    if problems:
        first = problems[0]
        line = lines[first.position] if lines is not None else first.position + 1
        extra = f" ({len(problems) - 1} more such labels)" if len(problems) > 1 else ""
        raise InputError(first.message + extra, path=path, line=line, field=first.field)


def write_labels(
    path: str | Path, labels: Iterable[Label], *, batch: AtomicBatch | None = None
) -> None:
    """Write labels atomically in the format given by the extension of ``path``."""
    _write_flat(path, Label, list(labels), batch)


def read_sentences(path: str | Path) -> list[Sentence]:
    """Read answer sentences (see :class:`failcodes.sentences.Sentence`)."""
    return [s for _, s in _read_flat(path, Sentence, None)]


def write_sentences(
    path: str | Path, sentences: Iterable[Sentence], *, batch: AtomicBatch | None = None
) -> None:
    """Write answer sentences atomically in the format given by the extension of ``path``."""
    _write_flat(path, Sentence, list(sentences), batch)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, StrEnum):
        return value.value
    return str(value)


def _write_flat(
    path: str | Path, model: type[BaseModel], rows: Sequence[BaseModel], batch: AtomicBatch | None
) -> None:
    pa, pq = pyarrow_modules()
    fmt = detect_format(path)
    columns = list(model.model_fields)

    def write(b: AtomicBatch) -> None:
        tmp = b.stage(path)
        if fmt is Format.JSONL:
            with tmp.open("w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(row.model_dump_json(exclude_none=True) + "\n")
        elif fmt is Format.CSV:
            with tmp.open("w", encoding="utf-8", newline="") as fh:
                writer = csv.writer(fh)
                writer.writerow(columns)
                for row in rows:
                    writer.writerow([_cell(getattr(row, c)) for c in columns])
        else:
            schema = _arrow_schema(model)
            data = [row.model_dump(mode="json") for row in rows]
            pq.write_table(pa.Table.from_pylist(data, schema=schema), tmp)

    _batched(batch, write)


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
        if issubclass(annotation, BaseModel):
            return _arrow_struct(annotation)
        if issubclass(annotation, bool):
            return pa.bool_()
        if issubclass(annotation, int):
            return pa.int64()
        if issubclass(annotation, float):
            return pa.float64()
        if issubclass(annotation, str):
            return pa.string()
    raise TypeError(f"no Arrow type for {annotation!r}")  # pragma: no cover


def _arrow_struct(model: type[BaseModel]) -> Any:
    pa, _ = pyarrow_modules()
    return pa.struct(
        [pa.field(name, _arrow_type(info.annotation)) for name, info in model.model_fields.items()]
    )


def _arrow_schema(model: type[BaseModel]) -> Any:
    pa, _ = pyarrow_modules()
    return pa.schema(
        [pa.field(name, _arrow_type(info.annotation)) for name, info in model.model_fields.items()]
    )


def trace_arrow_schema() -> Any:
    """Return the Arrow schema of a trace Parquet file (passages as ``list<struct>``)."""
    return _arrow_schema(Trace)


# ------------------------------------------------------------------------------------------
# Traces
# ------------------------------------------------------------------------------------------

TRACE_COLUMNS: tuple[str, ...] = tuple(n for n in Trace.model_fields if n != "passages")
PASSAGE_COLUMNS: tuple[str, ...] = (*PASSAGE_KEY, *Passage.model_fields)


def _prepare_trace(
    record: dict[str, Any],
    path: Path,
    line: int,
    aliases: Mapping[str, Verdict] | None,
    column_map: Mapping[str, str],
) -> Trace:
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
            _drop_nones(_rename(p, column_map)) if isinstance(p, dict) else p for p in passages
        ]
    elif isinstance(passages, list):
        record["passages"] = [_drop_nones(p) if isinstance(p, dict) else p for p in passages]
    return _validate(Trace, record, path, line)


def read_traces(
    path: str | Path,
    *,
    passages_path: str | Path | None = None,
    aliases: Mapping[str, Verdict] | None = None,
    column_map: Mapping[str, str] | None = None,
    seen: dict[tuple[str, str], tuple[Path, int]] | None = None,
    default_system: str | None = None,
) -> list[Trace]:
    """Read traces from JSONL, CSV (+ passages table) or Parquet.

    ``aliases`` add raw-verdict spellings (see :func:`failcodes.verdicts.normalize_verdict`);
    when the verdict cell is not already canonical, the raw text is kept in ``raw_verdict``.
    ``column_map`` renames foreign columns (``{"claim_text": "claim"}``; an empty target drops
    a column); it applies to trace and passage fields alike. For CSV, ``passages_path``
    defaults to :func:`passages_path_for` (used if it exists). ``seen`` lets a caller check
    ``(system, claim_id)`` uniqueness across several files. ``default_system`` fills the
    ``system`` of records that have none (the column may then be absent).
    """
    p = Path(path)
    cmap = dict(column_map or {})
    fmt = detect_format(p)
    out: list[Trace] = []
    seen = {} if seen is None else seen
    lines: dict[tuple[str, str], int] = {}
    required = [n for n in _required(Trace) if not (default_system and n == "system")]
    if fmt is Format.JSONL:
        rows: Iterable[tuple[int, dict[str, Any]]] = (
            (line, _drop_nones(_rename(rec, cmap))) for line, rec in _jsonl_rows(p)
        )
    elif fmt is Format.CSV:
        rows = _csv_rows(p, TRACE_COLUMNS, required, cmap)
    else:
        rows = (
            (line, _drop_nones(rec))
            for line, rec in _parquet_rows(p, tuple(Trace.model_fields), required, cmap)
        )
    for line, rec in rows:
        if default_system and "system" not in rec:
            rec["system"] = default_system
        trace = _prepare_trace(rec, p, line, aliases, cmap)
        key = (trace.system, trace.claim_id)
        if key in seen:
            first_path, first_line = seen[key]
            where = f"line {first_line}" if first_path == p else f"{first_path}:{first_line}"
            raise InputError(
                f"duplicate (system, claim_id) = ({trace.system!r}, {trace.claim_id!r}); "
                f"first at {where}",
                path=p,
                line=line,
                field="claim_id",
            )
        seen[key] = (p, line)
        lines[key] = len(out)
        out.append(trace)
    if fmt is Format.CSV:
        side = Path(passages_path) if passages_path is not None else passages_path_for(p)
        if passages_path is not None or side.exists():
            out = _attach_passages(out, lines, side, cmap, p)
    elif passages_path is not None:
        raise InputError(
            "a separate passages table is only used with CSV traces", path=passages_path
        )
    return out


def _attach_passages(
    traces: list[Trace],
    index: Mapping[tuple[str, str], int],
    path: Path,
    column_map: Mapping[str, str],
    traces_path: Path,
) -> list[Trace]:
    grouped: dict[int, list[tuple[int, Passage]]] = {}
    ranks: dict[tuple[int, int], int] = {}
    for line, rec in _csv_rows(
        path, PASSAGE_COLUMNS, (*PASSAGE_KEY, *_required(Passage)), column_map
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
        passage = _validate(Passage, rec, path, line)
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
    path: str | Path, traces: Iterable[Trace], *, batch: AtomicBatch | None = None
) -> list[Path]:
    """Write traces atomically; returns the files written (CSV: the table and its passages).

    A CSV always gets its ``X.passages.csv`` (header only when no trace has passages), so a
    stale passages table from an earlier run can never be paired with new traces.
    """
    pa, pq = pyarrow_modules()
    p = Path(path)
    fmt = detect_format(p)
    rows = list(traces)
    written = [p]

    def write(b: AtomicBatch) -> None:
        tmp = b.stage(p)
        if fmt is Format.JSONL:
            with tmp.open("w", encoding="utf-8") as fh:
                for t in rows:
                    fh.write(t.model_dump_json(exclude_none=True) + "\n")
        elif fmt is Format.CSV:
            with tmp.open("w", encoding="utf-8", newline="") as fh:
                writer = csv.writer(fh)
                writer.writerow(TRACE_COLUMNS)
                for t in rows:
                    writer.writerow([_cell(getattr(t, c)) for c in TRACE_COLUMNS])
            side = passages_path_for(p)
            written.append(side)
            side_tmp = b.stage(side)
            with side_tmp.open("w", encoding="utf-8", newline="") as fh:
                writer = csv.writer(fh)
                writer.writerow(PASSAGE_COLUMNS)
                for t in rows:
                    for ps in t.passages:
                        writer.writerow(
                            [t.system, t.claim_id]
                            + [_cell(getattr(ps, c)) for c in Passage.model_fields]
                        )
        else:
            table = pa.Table.from_pylist(
                [t.model_dump(mode="json") for t in rows], schema=_arrow_schema(Trace)
            )
            pq.write_table(table, tmp)

    _batched(batch, write)
    return written


def read_ratings_frame(path: str | Path) -> Any:
    """Read a ratings table (.csv, .parquet, .jsonl/.ndjson) into a pandas DataFrame.

    CSV cells are read as strings with blank = missing (NaN); Parquet keeps its types;
    JSONL rows become one record each. The table adapters in :mod:`failcodes.stats.tables`
    take the frame from here (statistics do no file reading).
    """
    import pandas as pd  # lazy: pandas costs ~0.2 s at start-up

    p = Path(path)
    if not p.exists():
        raise InputError("file not found", path=p)
    suffix = p.suffix.lower()
    try:
        if suffix == ".csv":
            return pd.read_csv(p, dtype=str, keep_default_na=False, na_values=[""])
        if suffix == ".parquet":
            return pd.read_parquet(p)
        if suffix in (".jsonl", ".ndjson"):
            return pd.DataFrame([obj for _, obj in iter_jsonl(p)])
    except (OSError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"cannot read ratings: {exc}", path=p) from exc
    raise InputError(f"unknown ratings format '{suffix}'; use .csv, .parquet or .jsonl", path=p)
