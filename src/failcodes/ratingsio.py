"""Ratings tables and weight matrices read from files (the edge of ``failcodes agree``).

:func:`read_ratings_frame` reads a ratings table (CSV, Excel, Parquet, JSONL) into a pandas
DataFrame for :mod:`failcodes.stats.tables` (statistics do no file reading); a CSV's cells
that no rating can be (``inf``, a decimal comma in a column of numbers) are refused with their
line and column. :func:`read_weight_matrix` reads a q x q agreement-weight matrix.
"""

from __future__ import annotations

import csv
import math
import os
import re
from pathlib import Path
from typing import Any

from failcodes import tableio
from failcodes.errors import ConfigError, InputError
from failcodes.fileio import not_found
from failcodes.jsonio import iter_jsonl
from failcodes.numbertext import underscore_clause
from failcodes.parquetio import open_parquet
from failcodes.sheetio import is_spreadsheet, sheet_rows

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
_INFINITE = re.compile(r"[+-]?inf(inity)?", re.IGNORECASE)


def read_ratings_frame(path: str | Path, sets: str | None = None) -> Any:
    """Read a ratings table (.csv, .xlsx, .parquet, .jsonl/.ndjson) into a pandas DataFrame.

    CSV cells are read as strings with blank = missing (NaN); Parquet keeps its types (a
    named pandas index is the column it was); JSONL rows become one record each, a list cell
    (Parquet's too) the text of its codes joined by ``sets`` (``agree --sets``), else refused; a
    workbook's first sheet is read as
    :mod:`failcodes.sheetio` reads it. A CSV whose header is one ``;``- or tab-separated cell,
    a repeated column, a short row, and (CSV or sheet) an ``inf`` cell or a decimal comma
    among numbers: one line naming the file, line and column.
    """
    import pandas as pd  # lazy: pandas costs ~0.2 s at start-up

    if not isinstance(path, str | os.PathLike):  # a DataFrame: TypeError from Path()
        raise ConfigError(
            f"path: expected a file's path, not {type(path).__name__}"
            + (
                " (a frame needs no reading: give it to ratings_from_frame)"
                if hasattr(path, "to_parquet")
                else ""
            )
        )
    p = Path(path)
    if not p.exists():
        raise not_found(p)
    if p.is_dir():
        raise InputError("is a folder, expected a file", path=p)
    suffix = p.suffix.lower()
    try:
        if suffix == ".csv" or is_spreadsheet(p):
            # the CSV reader refuses a repeated column and a short row naming the line, skips
            # rows of blank cells (Excel saves the rows formatted under the table), and gives
            # cells neutralised against formulas as they were (as ingest reads them)
            csv_file = suffix == ".csv"
            records = list(tableio.csv_rows(p, ()) if csv_file else sheet_rows(p, as_shown=True))
            header = tableio.table_columns(p) or []  # (a CSV's unnamed column: as pandas)
            header = [h or f"Unnamed: {i}" for i, h in enumerate(header)]
            frame = pd.DataFrame([rec for _, rec in records], columns=header)
            lines = [line for line, _ in records]
            hint = tableio.header_hint(header, "") if csv_file else ""
            if hint:
                raise InputError(hint, path=p, line=1)
            _check_rating_cells(frame, p, lines)
            if sets:
                _listed_text_cells(frame, p, lines, sets)
        elif suffix == ".parquet":
            table = open_parquet(p, index_read=True).read()  # limits checked: a bounded size
            # a column named twice (pyarrow allows it) became a frame whose column was itself
            # a frame: AttributeError traceback, exit 1
            tableio.check_columns(p, table.column_names, None, ())
            frame = table.to_pandas()
            named = [n for n in frame.index.names if n is not None and n not in frame.columns]
            if named:  # pandas' index (df.set_index('item')): its ids were left out, the
                # rows numbered 1..n (unit '4' for item 20); a nameless one (0..n-1) still is
                frame = frame.reset_index(level=named)
            lines = list(range(1, len(frame) + 1))
            _check_scalar_cells(frame, p, lines, sets)
        elif suffix in (".jsonl", ".ndjson"):
            rows = list(iter_jsonl(p))
            frame = pd.DataFrame([obj for _, obj in rows])
            lines = [line for line, _ in rows]
            _check_scalar_cells(frame, p, lines, sets)
        else:
            # a Label Studio export (JSON) had no way through named
            studio = (
                " (a Label Studio export? failcodes labelstudio import FILE -p PART -o "
                "reviews.jsonl, then agree reviews.jsonl)"
                if suffix == ".json"
                else ""
            )
            raise InputError(
                f"unknown ratings format '{suffix}'; use .csv, .xlsx, .parquet or .jsonl{studio}",
                path=p,
            )
    except (OSError, ValueError, csv.Error) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"cannot read ratings: {exc}", path=p) from exc
    if frame.empty:
        raise InputError("no ratings (expected one row per unit, one column per rater)", path=p)
    frame.attrs["lines"] = lines  # the file line of each row, for errors naming a row
    return frame


def _check_scalar_cells(frame: Any, file: Path, lines: list[int], sets: str | None) -> None:
    """Refuse a cell holding a list or an object (JSONL, Parquet): no rating is one.

    ``{"x": 1}`` was read as the text category "{'x': 1}", agreement computed, exit 0. A
    list of codes under ``sets`` is one text, its codes joined by ``sets``.
    """
    import numpy as np

    for column in frame.columns:
        cells = frame[column].tolist()
        joined = False
        for i, value in enumerate(cells):
            if not isinstance(value, dict | list | tuple | np.ndarray):
                line = lines[i] if i < len(lines) else None
                tableio.refuse_excel_error(value, file, line, str(column))  # '#REF!' a category
                _check_finite(value, file, line, column)
                continue
            codes = value.tolist() if isinstance(value, np.ndarray) else value
            line = lines[i] if i < len(lines) else None
            if sets and isinstance(codes, list | tuple):
                cells[i], joined = _joined_codes(codes, sets, file, line, column), True
                continue
            kind = "an object" if isinstance(value, dict) else "a list"
            hint = "; co-occurring codes? agree --sets ';' reads a list as a set"
            raise InputError(
                f"{kind} is not a rating (expected a number or a text per cell)"
                + (hint if kind == "a list" else ""),
                path=file,
                line=line,
                field=str(column),
            )
        if joined:
            frame[column] = cells


def _joined_codes(codes: Any, sets: str, file: Path, line: int | None, column: Any) -> str:
    """A list of codes as one text joined by ``sets``; [], [null] and ['a;b'] refused."""
    bad = [c for c in codes if not isinstance(c, str | int) or sets in str(c)]
    if not codes or bad:  # [] (no code, or not rated?), [null], ['a;b']
        why = f"a list of codes holding {bad[0]!r}" if bad else "an empty list of codes"
        raise InputError(
            f"{why} (codes are texts or whole numbers without {sets!r}; not rated: "
            "null; no code given: a code of its own, e.g. 'none')",
            path=file,
            line=line,
            field=str(column),
        )
    return sets.join(str(c).strip() for c in codes)


def _listed_text_cells(frame: Any, file: Path, lines: list[int], sets: str) -> None:
    """A CSV or sheet cell holding a list as text (``["a", "b"]``, ``['a', 'b']``) as its codes.

    pandas writes a list column to CSV so; under ``--sets ','`` the cell was split into the
    codes ``["a"`` and ``"b"]`` (``["a"]`` a third): exact-set Cohen 0.308 for 0.25, a row per
    fake code, exit 0. Read as JSONL's lists are; a bracketed cell that is no list is refused.
    """
    import ast
    import json

    for column in frame.columns:
        cells = frame[column].tolist()
        listed = False
        for i, value in enumerate(cells):
            text = value.strip() if isinstance(value, str) else ""
            if not (text.startswith("[") and text.endswith("]")):
                continue
            line = lines[i] if i < len(lines) else None
            items: Any = None
            for parse in (json.loads, ast.literal_eval):
                try:
                    items = parse(text)
                    break
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    continue
            if not isinstance(items, list):
                raise InputError(
                    f"{text!r} looks like a list written as text but reads as no JSON or Python "
                    f"list: write its codes joined by {sets!r} (or quote each code: "
                    '["a", "b"])',
                    path=file,
                    line=line,
                    field=str(column),
                )
            cells[i], listed = _joined_codes(items, sets, file, line, column), True
        if listed:
            frame[column] = cells


def _check_finite(value: Any, file: Path, line: int | None, column: Any) -> None:
    """Refuse an infinite rating: ``inf``, or a number past 1.8e308 (``1e400``) read as one.

    The statistics refused it naming no file ("ratings contain infinite values").
    """
    text = value.strip() if isinstance(value, str) else None
    if text is not None and _INFINITE.fullmatch(text):
        why = ""
    elif text is not None and _NUMBER.fullmatch(text) and math.isinf(float(text)):
        why = " is past the largest number, 1.8e308 (read as infinite), so it"
    elif isinstance(value, float) and math.isinf(value):  # Parquet's, a sheet's 1e400
        text, why = str(value), " (a number past 1.8e308?)"
    else:
        return
    shown = f"{text[:12]}... ({len(text)} characters)" if len(text) > 24 else text
    raise InputError(
        f"{shown!r}{why} is not a rating (write a number; leave the cell empty for a missing "
        "rating)",
        path=file,
        line=line,
        field=str(column),
    )


def _check_rating_cells(frame: Any, file: Path, lines: list[int]) -> None:
    """Refuse cells no rating can be, naming line and column (a CSV's cells are text).

    ``inf``: an infinite rating (statistics then failed naming no file). A column of numbers
    some of which have a decimal comma (``1,5``, European Excel): read as text categories.
    ``lines`` are the file lines of the rows (in a CSV a quoted line break counts; a sheet's
    row numbers).
    """
    if len(lines) != len(frame):
        return  # rows the CSV reader and pandas count differently: no line to name
    for column in frame.columns:
        cells = [(lines[i], v.strip()) for i, v in enumerate(frame[column]) if isinstance(v, str)]
        # 'inf' among numbers is an infinite rating; among text codes ('sup', 'inf':
        # superior, inferior) a code, refused before with no way through
        texts = any(not (_NUMBER.fullmatch(v) or _INFINITE.fullmatch(v)) for _, v in cells)
        for i, value in enumerate(frame[column]):
            if not (texts and isinstance(value, str)):
                _check_finite(value, file, lines[i], column)
        commas = [(line, v) for line, v in cells if _DECIMAL_COMMA.fullmatch(v)]
        if commas and all(_NUMBER.fullmatch(v) or _DECIMAL_COMMA.fullmatch(v) for _, v in cells):
            line, value = commas[0]
            raise InputError(
                f"{value!r} has a decimal comma (European Excel?): write {value.replace(',', '.')}"
                " (numbers with commas are read as text categories)",
                path=file,
                line=line,
                field=str(column),
            )


def read_weight_matrix(path: Path) -> list[list[float]]:
    """A weight matrix CSV: rows of numbers, no header (one clear line on anything else)."""
    if not path.exists():
        raise not_found(path)
    rows: list[list[float]] = []
    with path.open(newline="", encoding="utf-8", errors="replace") as fh:
        for line_no, row in enumerate(csv.reader(fh), 1):
            if not row:
                continue
            underscore = next(filter(None, map(underscore_clause, row)), None)  # '0_5': 5.0
            try:
                if underscore:
                    raise ValueError(underscore)
                rows.append([float(v) for v in row])
            except ValueError:
                raise InputError(
                    f"weight matrix cells must be numbers, got {row}"
                    + (f": {underscore}" if underscore else ""),
                    path=path,
                    line=line_no,
                ) from None
            if len(rows[-1]) != len(rows[0]):
                raise InputError(
                    f"expected {len(rows[0])} cells (as in the first row), got {len(row)}",
                    path=path,
                    line=line_no,
                )
    return rows
