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

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from failcodes.errors import InputError

SUFFIXES = (".xlsx", ".xlsm")
#: The values Excel shows for a formula that failed (read as text by openpyxl).
ERRORS = frozenset(
    {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA"}
)


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


#: What openpyxl raises on a workbook it cannot read: a damaged zip, XML or part.
def _unreadable() -> tuple[type[BaseException], ...]:
    import zipfile
    import zlib
    from xml.etree.ElementTree import ParseError

    from openpyxl.utils.exceptions import InvalidFileException  # type: ignore[import-untyped]

    return (
        InvalidFileException,
        zipfile.BadZipFile,
        zlib.error,
        ParseError,
        EOFError,
        KeyError,
        OSError,
        TypeError,
        ValueError,
    )


#: The first bytes of an OLE2 compound file: a password-protected .xlsx or an old .xls.
_OLE2 = bytes.fromhex("D0CF11E0A1B11AE1")


def _kind_hint(path: Path) -> str:
    """What a file that is no workbook most likely is, from its first bytes ("" if unsure)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(512)
    except OSError:
        return ""
    if not head:
        return "; the file is empty"
    if head.startswith(_OLE2):
        return (
            "; it is a password-protected workbook or an old .xls: save it in Excel as .xlsx "
            "without a password"
        )
    if head.startswith(b"PK"):
        return ""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return "; it is text (a CSV renamed .xlsx?): name it .csv"


#: A workbook that uncompresses past this is refused (reading it would take minutes).
MAX_UNPACKED = 4 << 30
#: ... and so is one past :data:`BOMB_MIN` bytes that packs tighter than :data:`BOMB_RATIO`:1
#: (real sheets pack 5-50:1; a zip bomb, megabytes that unpack to gigabytes, far more).
BOMB_MIN = 200 << 20
BOMB_RATIO = 200


def _check_size(path: Path) -> None:
    """Refuse a workbook whose parts unpack to too much: reading it hung (a zip bomb)."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        return  # load_workbook says what it is
    unpacked = sum(m.file_size for m in members)
    packed = sum(m.compress_size for m in members)
    bomb = any(
        m.file_size > BOMB_MIN and m.file_size > BOMB_RATIO * max(m.compress_size, 1)
        for m in members
    )
    if unpacked > MAX_UNPACKED or bomb:
        raise InputError(
            f"the workbook unpacks to {unpacked / (1 << 20):,.1f} MB from "
            f"{packed / (1 << 20):,.1f} MB (a zip bomb, or a sheet too large to read here): "
            "save the sheet as CSV",
            path=path,
        )


def _rows(path: Path) -> Iterator[tuple[int, tuple[Any, ...]]]:
    from openpyxl import load_workbook  # type: ignore[import-untyped]  # lazy: workbooks only

    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_dir():
        raise InputError("is a folder, expected a file", path=path)
    _check_size(path)
    unreadable = _unreadable()
    # opened here, so the file is closed however openpyxl fails (it left it open on a bad zip)
    with path.open("rb") as fh:
        try:
            book = load_workbook(fh, read_only=True, data_only=True)
        except unreadable as exc:
            raise InputError(
                f"not a readable Excel workbook ({exc}){_kind_hint(path)}", path=path
            ) from None
        yield from _book_rows(path, book, unreadable)


def _book_rows(
    path: Path, book: Any, unreadable: tuple[type[BaseException], ...]
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    try:
        try:
            sheets = book.worksheets
            if not sheets:
                raise InputError("the workbook has no worksheet", path=path)
            sheet = sheets[0]
            # the stored size (<dimension>) pads every row to the widest column: one stray
            # cell in column XFD made each row 16,384 cells (reading hung); rows come ragged
            sheet.reset_dimensions()
            rows = enumerate(sheet.iter_rows(values_only=True), start=1)
            while True:
                item = next(rows, None)
                if item is None:
                    return
                number, row = item
                yield number, tuple(_cell(v) for v in row)
        except unreadable as exc:  # a damaged sheet part (malformed XML, a bad cell value)
            raise InputError(f"not a readable Excel workbook ({exc})", path=path) from None
    finally:
        book.close()


_SHEET = re.compile(rb"<(?:\w+:)?sheet\b[^>]*?\br:id=\"([^\"]+)\"")
_MERGE = re.compile(rb"<(?:\w+:)?mergeCell\s+ref=\"([A-Z]+[0-9]+:[A-Z]+[0-9]+)\"")


def _first_sheet_part(archive: zipfile.ZipFile) -> str | None:
    """The zip member of the workbook's first sheet (from workbook.xml and its rels)."""
    try:
        found = _SHEET.search(archive.read("xl/workbook.xml"))
        rels = archive.read("xl/_rels/workbook.xml.rels")
    except KeyError:
        return None
    if found is None:
        return None
    rel = re.search(
        rb"<Relationship\b[^>]*\bId=\"" + re.escape(found.group(1)) + rb"\"[^>]*>", rels
    )
    target = re.search(rb"\bTarget=\"([^\"]+)\"", rel.group(0)) if rel else None
    if target is None:
        return None
    name = target.group(1).decode()
    return name.lstrip("/") if name.startswith("/") else f"xl/{name}"


#: A formula cell without a saved value (``<f>..</f><v></v>``, or no ``<v>`` at all).
_UNCACHED = re.compile(
    rb"<(?:\w+:)?c\s+r=\"([A-Z]+[0-9]+)\"[^>]*>\s*"
    rb"(?:<(?:\w+:)?f\b[^>]*/>|<(?:\w+:)?f\b[^>]*>[^<]*</(?:\w+:)?f>)"
    rb"\s*(?:<(?:\w+:)?v\s*/>|<(?:\w+:)?v>\s*</(?:\w+:)?v>)?\s*</(?:\w+:)?c>"
)


def scan_sheet(path: Path) -> tuple[list[str], str | None]:
    """The first sheet's merged ranges and its first formula cell with no saved value.

    Ranges as ``B2:B3``; the cell as ``B2`` (None if every formula has its value), read from
    the sheet's XML part. Read-only openpyxl reports neither (an unsaved formula reads as an
    empty cell); the part is streamed.
    """
    merges: list[str] = []
    uncached: str | None = None
    try:
        with zipfile.ZipFile(path) as archive:
            part = _first_sheet_part(archive)
            if part is None:
                return [], None
            with archive.open(part) as fh:
                tail = b""
                while chunk := fh.read(1 << 20):
                    text = tail + chunk
                    merges += [m.group(1).decode() for m in _MERGE.finditer(text)]
                    if uncached is None and (found := _UNCACHED.search(text)):
                        uncached = found.group(1).decode()
                    # a match cut at the chunk's end is found next time (twice: kept once)
                    tail = text[-400:]
    except (zipfile.BadZipFile, KeyError, OSError):
        return [], None
    return list(dict.fromkeys(merges)), uncached


def _check_cells(path: Path, header: list[str], header_line: int) -> None:
    """Refuse cells that read as empty though they are not.

    Cells merged over table rows (all but the first read as empty), a formula never computed
    (a program wrote the file; Excel saves each formula's value).
    """
    from openpyxl.utils.cell import (  # type: ignore[import-untyped]
        coordinate_to_tuple,
        range_boundaries,
    )

    merges, uncached = scan_sheet(path)
    for ref in merges:
        min_col, min_row, _, max_row = range_boundaries(ref)
        if max_row > header_line:
            column = min_col - 1
            raise InputError(
                f"merged cells {ref}: only the first cell of a merged block holds its value, "
                "the others read as empty; unmerge the cells and fill each one",
                path=path,
                line=max(min_row, header_line + 1),
                field=header[column] if column < len(header) else _column_letter(column),
            )
    if uncached is not None:
        row, col = coordinate_to_tuple(uncached)
        raise InputError(
            f"cell {uncached} holds a formula with no saved value (the file was written by a "
            "program, never opened in Excel): open and save it in Excel, or write the values",
            path=path,
            line=row,
            field=header[col - 1] if col - 1 < len(header) else _column_letter(col - 1),
        )


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


def _other_sheets(path: Path) -> str:
    """A hint naming the workbook's sheets when it has several ("" for one sheet)."""
    from openpyxl import load_workbook

    with path.open("rb") as fh:
        try:
            book = load_workbook(fh, read_only=True)
        except _unreadable():
            return ""
        try:
            names = list(book.sheetnames)
        finally:
            book.close()
    if len(names) < 2:
        return ""
    listed = ", ".join(repr(n) for n in names[:6]) + (", ..." if len(names) > 6 else "")
    return (
        f" (failcodes reads the first of the workbook's {len(names)} sheets: {listed}; move "
        "the table to the first sheet)"
    )


def sheet_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for every non-empty row under the header (missing cells left out).

    A value in a column without a header name is an error naming its row and column. A
    workbook of several sheets whose first sheet is empty, or has no rows under its header,
    is an error naming the sheets (the table is most likely on another).
    """
    p = Path(path)
    header: list[str] | None = None
    header_line = 1
    count = 0
    for line, cells in _rows(p):
        if all(c is None for c in cells):
            continue
        if header is None:
            header, header_line = _header(p, line, cells), line
            _check_cells(p, header, header_line)
            continue
        extra = [i for i, c in enumerate(cells) if c is not None and i >= len(header)]
        if extra:
            raise InputError(
                f"a value in column {_column_letter(extra[0])}, which has no header name",
                path=p,
                line=line,
            )
        failed = next((i for i, c in enumerate(cells) if isinstance(c, str) and c in ERRORS), None)
        if failed is not None:  # read as the text '#DIV/0!': a label, a rating category
            raise InputError(
                f"Excel error value {cells[failed]} (a formula that failed): fix or clear the cell",
                path=p,
                line=line,
                field=header[failed] if failed < len(header) else _column_letter(failed),
            )
        count += 1
        yield line, {name: c for name, c in zip(header, cells, strict=False) if c is not None}
    if header is None:
        raise InputError(
            f"empty worksheet, expected a header row{_other_sheets(p)}", path=p, line=1
        )
    if not count:
        hint = _other_sheets(p)
        if hint:
            raise InputError(f"no rows under the header{hint}", path=p, line=header_line)


def sheet_header(path: str | Path) -> list[str]:
    """The column names of the first worksheet (its first non-empty row)."""
    p = Path(path)
    for line, cells in _rows(p):
        if any(c is not None for c in cells):
            return _header(p, line, cells)
    raise InputError(f"empty worksheet, expected a header row{_other_sheets(p)}", path=p, line=1)
