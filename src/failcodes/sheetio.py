"""Excel workbooks (``.xlsx``) read as tables: clinicians' labels and raters' sheets.

The first worksheet is the table: its first non-empty row is the header, every later row a
record whose line is the sheet's row number (the header's row is line 1 in a sheet that
starts at the top, as in a CSV). Empty cells (and cells holding only spaces) are missing
values; numbers keep their type (a whole number is an ``int``, so an id column reads as
``7``, not ``7.0``); a formula gives the value Excel last computed. A header cell that is
empty above data, or a column name given twice, is an error naming the row and column, as
for CSV files. Read through openpyxl (read-only mode: the sheet streams, rows are not all
held).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from failcodes.errors import InputError

SUFFIXES = (".xlsx", ".xlsm")


def is_spreadsheet(path: str | Path) -> bool:
    """Whether ``path`` names an Excel workbook (by its extension)."""
    return Path(path).suffix.lower() in SUFFIXES


def _column_letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def _cell(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _rows(path: Path) -> Iterator[tuple[int, tuple[Any, ...]]]:
    import zipfile

    from openpyxl import load_workbook  # type: ignore[import-untyped]  # lazy: workbooks only
    from openpyxl.utils.exceptions import InvalidFileException  # type: ignore[import-untyped]

    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_dir():
        raise InputError("is a folder, expected a file", path=path)
    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise InputError(f"not a readable Excel workbook ({exc})", path=path) from None
    try:
        if not book.worksheets:
            raise InputError("the workbook has no worksheet", path=path)
        sheet = book.worksheets[0]
        for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
            yield number, tuple(_cell(v) for v in row)
    finally:
        book.close()


def _header(path: Path, line: int, cells: tuple[Any, ...]) -> list[str]:
    names = [str(c).strip() if c is not None else "" for c in cells]
    while names and not names[-1]:
        names.pop()
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        column = _column_letter(i)
        if not name:
            raise InputError(
                f"empty header cell in column {column} (every column needs a name)",
                path=path,
                line=line,
            )
        if name in seen:
            raise InputError(
                f"column name given twice (columns {_column_letter(seen[name])} and {column})",
                path=path,
                line=line,
                field=name,
            )
        seen[name] = i
    return names


def sheet_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for every non-empty row under the header (missing cells left out).

    A value in a column without a header name is an error naming its row and column.
    """
    p = Path(path)
    header: list[str] | None = None
    for line, cells in _rows(p):
        if all(c is None for c in cells):
            continue
        if header is None:
            header = _header(p, line, cells)
            continue
        extra = [i for i, c in enumerate(cells) if c is not None and i >= len(header)]
        if extra:
            raise InputError(
                f"a value in column {_column_letter(extra[0])}, which has no header name",
                path=p,
                line=line,
            )
        yield line, {name: c for name, c in zip(header, cells, strict=False) if c is not None}
    if header is None:
        raise InputError("empty worksheet, expected a header row", path=p, line=1)


def sheet_header(path: str | Path) -> list[str]:
    """The column names of the first worksheet (its first non-empty row)."""
    p = Path(path)
    for line, cells in _rows(p):
        if any(c is not None for c in cells):
            return _header(p, line, cells)
    raise InputError("empty worksheet, expected a header row", path=p, line=1)
