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

import os
import posixpath
import re
import sys
import time
import xml.parsers.expat
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from failcodes.errors import InputError, mb
from failcodes.fileio import check_regular_file, kind_hint, say_note

SUFFIXES = (".xlsx", ".xlsm")
#: The values Excel shows for a formula that failed (read as text by openpyxl).
ERRORS = frozenset(
    {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA"}
)


def is_spreadsheet(path: str | Path) -> bool:
    """Whether ``path`` names an Excel workbook (by its extension)."""
    return Path(path).suffix.lower() in SUFFIXES


def column_letter(index: int) -> str:
    """The letter(s) of 0-based column ``index``, as Excel names it (0: A, 26: AA)."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


#: Excel's escape of a character in a text (ECMA-376 ST_Xstring, ``_xHHHH_``): it saves a
#: carriage return pasted into a cell as ``_x000D_``; openpyxl decodes none (a claim read
#: 'line one_x000D_' + line break + 'line two', the judge given that text). A surrogate code
#: is left as written (no text holds one alone).
_XSTRING = re.compile(r"_x([0-9A-Fa-f]{4})_")


def _unescaped(match: re.Match[str]) -> str:
    code = int(match.group(1), 16)
    return match.group(0) if 0xD800 <= code <= 0xDFFF else chr(code)


def _cell(value: Any) -> Any:
    if isinstance(value, str) and "_x" in value:
        value = _XSTRING.sub(_unescaped, value)
    if isinstance(value, str) and not value.strip():
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


class ShownNumber(int):
    """A whole number Excel shows through a number format that pads it (``000``: 7 as 007).

    Any other column reads it as the number; an id column (:func:`failcodes.tableio.id_text`)
    as Excel shows it (``shown``), or refuses it where that is not known (``shown`` None: a
    format with text or a sign beside its zeros, ``"S"000``, ``000-00``), naming ``cell``.
    """

    shown: str | None
    cell: str
    format: str


#: Zeros a number format pads a whole number to (``000``, ``00000``: Excel's zip code).
_PADDING = re.compile(r"0{2,}")
#: Zeros not after a decimal point: a format that pads (``"S"000``; not ``0.00``).
_PADS = re.compile(r"(?<![.0-9])0{2,}")


class RoundedNumber(float):
    """A number Excel shows otherwise by its number format (2.6 formatted ``0``: shown as 3).

    Rounded, scaled (1500 formatted ``0,``: 2) or hidden (a format's empty section, ``;;;``:
    an empty cell, ``shown`` ""). :func:`sheet_rows` reads it as ``held``, and says so.
    """

    held: int | float
    shown: str
    cell: str
    number_format: str


class HiddenText(str):
    """A text its cell's number format hides (``;;;``: an empty fourth section), as held."""

    held: str
    shown: str = ""
    cell: str
    number_format: str


#: The values Excel shows otherwise than held (read as ``held``).
_OTHERWISE = (RoundedNumber, HiddenText)

#: The ';' between a number format's sections (positive;negative;zero;text), not in quotes.
_SECTIONS = re.compile(r';(?=(?:[^"]*"[^"]*")*[^"]*$)')
#: A number format's parts that show no digit: quoted text, ``[colour]``, escaped characters.
_FORMAT_TEXT = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]|_.|\*.')


def _shown(value: float, fmt: str) -> str | None:
    """What ``fmt`` (a number format) shows of ``value`` where not the number held, else None.

    The format's section for the value (positive;negative;zero): empty shows nothing (""); its
    decimals, %, and thousands-scaling commas (``0,``: 1500 as 2); its text where it shows no
    digit (``0;-0;"none"``: 0 as none; ``#`` shows none of a zero). General, conditions, dates,
    scientific, fractions, text: None (left alone).
    """
    parts = _SECTIONS.split(fmt)
    if "[<" in fmt or "[>" in fmt or "[=" in fmt:
        return None
    index = 1 if value < 0 and len(parts) > 1 else 2 if value == 0 and len(parts) > 2 else 0
    if not parts[index]:
        return ""
    part = _FORMAT_TEXT.sub("", parts[index])
    if re.search(r"[eEyYmMdDhHsS/@]", part):
        return None  # General (up to 11 digits), scientific, a date, a fraction, text
    # the text the section shows beside its digits: a zero shown '-' (accounting) or 'none'
    text = re.sub(r"_.|\*.|\[[^\]]*\]|[0#?,%]", "", parts[index])
    text = re.sub(r'"([^"]*)"|\\(.)', lambda m: m[1] or m[2] or "", text).strip()
    if not re.search(r"[0#?]", part):  # no digit at all: the text alone
        return None if text == f"{value:g}" else text
    decimals = len(re.findall(r"[0#?]", part.partition(".")[2])) if "." in part else 0
    scale = sum(map(len, re.findall(r"(?<=[0#?]),+(?![0#?])", part)))
    number = Decimal(repr(value)) * 100 ** part.count("%") / 1000**scale
    shown = number.quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    if not shown and "0" not in part:  # '#' and '?' show no digit of a zero ('"-"??')
        return text
    if abs(shown - number) <= Decimal("1e-6") * max(1, abs(number)) and not (scale and value):
        return None  # (within 1e-6: 0.1 + 0.2 formatted 0.0, shown 0.3)
    return f"{shown}" + "%" * part.count("%")


def _by(number: RoundedNumber | HiddenText) -> str:
    """What makes Excel show ``number`` otherwise: its number format, or the sheet's option."""
    if number.number_format:
        return f"number format {number.number_format!r}"
    return "the sheet's option 'Show a zero in cells that have zero value' is off"


def _as(number: RoundedNumber | HiddenText) -> str:
    """How Excel shows ``number``: ``as 3``, ``as an empty cell``."""
    if not number.shown:
        return "as an empty cell"
    return (
        f"as {number.shown}"
        if re.fullmatch(r"-?[\d.]+%?", number.shown)
        else f"as {number.shown!r}"
    )


def _formatted(cell: Any, zeros: bool = True) -> Any:
    """A cell's value (:func:`_cell`), a :class:`ShownNumber` where its format pads it.

    A :class:`RoundedNumber` where its format shows it otherwise (rounded, scaled, hidden), or
    a zero where the sheet hides zeros (``zeros`` False: its option, number format "").
    """
    value = _cell(cell.value)
    if type(value) is str and getattr(cell, "has_style", False):
        parts = _SECTIONS.split(cell.number_format)
        if len(parts) > 3 and not parts[3]:  # ;;; hides text too: the sheet shows it empty
            text = HiddenText(value)
            text.held, text.cell, text.number_format = value, cell.coordinate, cell.number_format
            return text
    if type(value) in (int, float) and (getattr(cell, "has_style", False) or not zeros):
        fmt = cell.number_format
        shown = _shown(value, fmt)
        if shown is None and not zeros and value == 0:  # Excel shows an empty cell
            shown = fmt = ""
        if shown is not None:
            held = RoundedNumber(value)
            held.held, held.shown = value, shown
            held.cell, held.number_format = cell.coordinate, fmt
            return held
    if type(value) is float:
        return value
    if type(value) is not int or not getattr(cell, "has_style", False):
        return value
    fmt = cell.number_format
    if not _PADS.search(fmt):
        return value
    out = ShownNumber(value)
    out.cell, out.format = cell.coordinate, fmt
    out.shown = None
    if value >= 0 and _PADDING.fullmatch(fmt.split(";")[0]):
        out.shown = f"{value:0{len(fmt.split(';')[0])}d}"
    return out


#: What openpyxl raises on a workbook it cannot read: a damaged zip, XML or part.
def _unreadable() -> tuple[type[BaseException], ...]:
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


#: Limits read from the zip's central directory before any part is inflated. Real sheets
#: pack 5-25:1 (100,000 rows of one repeated value: 21:1, the cell references differ); a zip
#: bomb packs up to ~1,000:1. A part that unpacks past :data:`BOMB_MIN` bytes at over
#: :data:`BOMB_RATIO`:1 is refused, as is a part past :data:`MAX_PART` or a workbook past
#: :data:`MAX_UNPACKED` in all (openpyxl parses a sheet at ~2 MB/s: 256 MB is minutes).
MAX_UNPACKED = 1 << 30
MAX_PART = 256 << 20
BOMB_MIN = 4 << 20
BOMB_RATIO = 50
#: Reading one workbook (its scan and its rows) is stopped after this many seconds.
MAX_SECONDS = 120.0
#: openpyxl holds every shared string in memory before the first row (~170 bytes each, past
#: the clock): 5,000,000 short ones (a 37 MB workbook) took 0.85 GB and 45 CPU-s a reading.
MAX_SHARED_STRINGS = 2_000_000
#: The longest text of a cell read, in characters, a CSV cell's too (Excel holds 32,767;
#: another program may write more): a 17 MB workbook whose one shared text unpacked to 250 MB
#: took ingest 829 MB and wrote a JSONL line that metrics refuses (past 64 MB).
MAX_CELL = 64 << 20


def _too_large(path: Path, why: str) -> InputError:
    return InputError(
        f"{why} (a zip bomb, or a sheet too large to read here): save the sheet as CSV", path=path
    )


def _check_size(path: Path) -> None:
    """Refuse a workbook whose parts unpack to too much, from the zip's central directory.

    Nothing is inflated: each member's sizes are read from the directory (zipfile never
    inflates a member past the size written there, so the figures bound what is read).
    """
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # load_workbook says what it is
    for m in members:
        ratio = m.file_size / max(m.compress_size, 1)
        if m.file_size > MAX_PART or (m.file_size > BOMB_MIN and ratio > BOMB_RATIO):
            raise _too_large(
                path,
                f"the workbook's part {m.filename} unpacks to {mb(m.file_size)} from "
                f"{mb(m.compress_size)} ({ratio:,.0f}:1; at most {mb(MAX_PART)}, and "
                f"{BOMB_RATIO}:1 past {mb(BOMB_MIN)})",
            )
    unpacked = sum(m.file_size for m in members)
    if unpacked > MAX_UNPACKED:
        packed = sum(m.compress_size for m in members)
        raise _too_large(
            path,
            f"the workbook unpacks to {mb(unpacked)} from {mb(packed)} (at most "
            f"{mb(MAX_UNPACKED)})",
        )


class _Clock:
    """The time bound of one workbook's reading (:data:`MAX_SECONDS`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.deadline = time.monotonic() + MAX_SECONDS

    def check(self) -> None:
        if time.monotonic() > self.deadline:
            raise _too_large(self.path, f"reading the workbook took over {MAX_SECONDS:.0f} s")


def check_workbook(path: Path) -> SheetScan:
    """Check a workbook before openpyxl reads it; return its first sheet's scan.

    A missing file, a folder or a special file; parts that unpack to too much (from the zip
    directory); a sheet whose XML declares a DOCTYPE or entities (an entity expansion bomb).
    """
    check_regular_file(path)
    _check_size(path)
    scan = scan_sheet(path, _Clock(path))
    if scan.hidden is not None:
        # failcodes reads the first sheet; a hidden one (an old copy, a lookup list) is not
        # what the person who made the workbook sees: its rows were read without a word
        raise InputError(
            f"the workbook's first sheet {scan.hidden!r} is hidden in Excel, and failcodes "
            f"reads the first sheet{_other_sheets(path, hint=False)}: move the table to the "
            "first place, or delete the hidden sheet",
            path=path,
        )
    if scan.hidden_cell is not None:
        # a column hidden in Excel (a draft rater, an old verdict) was read like any other:
        # a hidden rater column entered every coefficient (Fleiss over 3 raters for 2)
        column = scan.hidden_cell.rstrip("0123456789")
        raise InputError(
            f"column {column} is hidden in Excel and holds values (first at "
            f"{scan.hidden_cell}), and failcodes reads every column: unhide it (it will be "
            "read), or delete it",
            path=path,
            line=1,
            field=column,
        )
    if scan.broken is not None:
        why, line, letter = scan.broken
        raise InputError(
            f"{why}: open and save it in Excel, or save the sheet as CSV",
            path=path,
            line=line,
            field=letter,
        )
    if scan.hidden_row_count:
        _say(path, hidden_rows_note(path, scan))
    return scan


#: The notes already said of a workbook, (path, size, mtime, note): one note per file however
#: many times a command reads it (its header, then its rows).
_SAID: set[tuple[str, int, int, str]] = set()
#: The notes of the command reading now (see :func:`notes_into`), if it keeps them.
_NOTES: ContextVar[list[str] | None] = ContextVar("sheet_notes", default=None)


@contextmanager
def notes_into(notes: list[str]) -> Iterator[None]:
    """Workbooks read in this block add what they say (hidden rows) to ``notes`` too, once.

    For a command whose result carries notes (``agree``'s JSON): the line on stderr stays.
    """
    token = _NOTES.set(notes)
    try:
        yield
    finally:
        _NOTES.reset(token)


def hidden_rows_note(path: Path, scan: SheetScan) -> str:
    """The note saying that rows hidden in Excel (a filter) were read, with their numbers."""
    n = scan.hidden_row_count
    shown = ", ".join(str(r) for r in scan.hidden_rows) + (
        ", ..." if n > len(scan.hidden_rows) else ""
    )
    rows = "row is" if n == 1 else "rows are"
    return (
        f"{path}: {n} {rows} hidden in Excel (a filter?) and read like the "
        f"others (sheet row{'s' if n > 1 else ''} {shown}); failcodes reads every row: "
        "delete the rows to leave them out"
    )


def other_sheets_note(path: Path, scan: SheetScan) -> str:
    """The note saying that the first of the workbook's sheets is read, the others not."""
    others = scan.sheets[1:]
    listed = ", ".join(repr(n) for n in others[:6]) + (", ..." if len(others) > 6 else "")
    return (
        f"{path}: read its first sheet {scan.sheets[0]!r} alone; the workbook's "
        f"{len(others)} other sheet{'s' if len(others) > 1 else ''} ({listed}) "
        f"{'are' if len(others) > 1 else 'is'} not read (to read another, move it first)"
    )


def _say(path: Path, note: str) -> None:
    """Say ``note`` on stderr, once per file, and add it to the command's notes (if kept).

    What a workbook's reading assumes of its shape: the first sheet is the table (of a round 1
    and a final round, the final second, round 1 was read), every row is read (a filtered view
    is read whole, not as the sheet shows it). Not refused, said; and added to the command's
    notes where it keeps them (:func:`notes_into`).
    """
    notes = _NOTES.get()
    if notes is not None and note not in notes:
        notes.append(note)
    if say_note(note):  # a caller's note (failcodes.run): each call says it
        return
    stat = path.stat()
    key = (os.fspath(path.resolve()), stat.st_size, stat.st_mtime_ns, note)
    if key in _SAID:
        return
    _SAID.add(key)
    print(f"failcodes: note: {note}", file=sys.stderr)


def _rows(
    path: Path, clock: _Clock, scan: SheetScan | None = None
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """The first sheet's rows; with ``scan`` (of that sheet), none past its last value's row."""
    from openpyxl import load_workbook  # type: ignore[import-untyped]  # lazy: workbooks only

    unreadable = _unreadable()
    # opened here, so the file is closed however openpyxl fails (it left it open on a bad zip)
    with path.open("rb") as fh:
        try:
            book = load_workbook(fh, read_only=True, data_only=True)
        except unreadable as exc:
            raise InputError(
                f"not a readable Excel workbook ({exc}){kind_hint(path)}", path=path
            ) from None
        yield from _book_rows(path, book, unreadable, clock, scan)


def _book_rows(
    path: Path,
    book: Any,
    unreadable: tuple[type[BaseException], ...],
    clock: _Clock,
    scan: SheetScan | None,
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
            checked = None if scan is None or scan.failed else scan
            if checked is not None and checked.sheets[:1] != [sheet.title]:
                # the scan found the workbook and its first sheet by the package's
                # relationships (Excel's), openpyxl by its content types and the sheet's
                # relationship id: a workbook without _rels/.rels (or with other relationship
                # types) was read with every check of the scan skipped (merged cells read as
                # empty, rows out of order, hidden columns...), exit 0
                raise InputError(
                    f"the workbook's sheet {sheet.title!r} is not named by its package as "
                    "Excel names it (_rels/.rels and the workbook's relationships: a program "
                    "wrote it), so it cannot be checked before it is read: open and save it "
                    "in Excel, or save the sheet as CSV",
                    path=path,
                )
            # rows formatted down to the sheet's end (1,048,576, each with a styled empty
            # cell) took openpyxl ~21 CPU-s past the last value: the scan of the same sheet
            # knows the last row holding a value
            last = None if checked is None else checked.last_value_row
            rows = enumerate(sheet.iter_rows(), start=1)
            while True:
                item = next(rows, None)
                if item is None:
                    return
                number, row = item
                if last is not None and number > last:
                    return
                if not number % 1024:
                    clock.check()
                yield number, tuple(_formatted(c, checked is None or checked.zeros) for c in row)
        except unreadable as exc:  # a damaged sheet part (malformed XML, a bad cell value)
            raise InputError(f"not a readable Excel workbook ({exc})", path=path) from None
    finally:
        book.close()


_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_OFFICE_DOCUMENT = _REL_NS + "/officeDocument"
_WORKSHEET = _REL_NS + "/worksheet"
_SHARED_STRINGS = _REL_NS + "/sharedStrings"
_STRICT_DOCUMENT = "http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument"


class _StrictError(Exception):
    """The package is Strict Open XML (ISO 29500 Strict), which openpyxl does not read."""


class _RefusedError(Exception):
    """An XML part declares a DOCTYPE or an entity (defusedxml's rule)."""


def _local(name: str) -> str:
    """The local name of an expat element or attribute name ``"uri local"``."""
    return name.rpartition(" ")[2]


def _parse_part(
    archive: zipfile.ZipFile,
    name: str,
    start: Callable[[str, dict[str, str]], None],
    clock: _Clock,
    *,
    text: Callable[[str], None] | None = None,
    end: Callable[[str], None] | None = None,
) -> None:
    """Stream the zip member ``name`` through expat (namespaces resolved), chunk by chunk.

    ``start``/``end`` get each element's local name (``start`` its attributes by local
    name too); a DOCTYPE or an entity declaration stops the parse (:class:`_RefusedError`).
    """
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")

    def refuse(*_: object) -> None:
        raise _RefusedError

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse

    def on_start(tag: str, attrs: dict[str, str]) -> None:
        # a sheet's million cells name no attribute by namespace (`r`, `s`, `t`): their
        # names are kept, without a new dict each (1,048,576 rows: 7.3 -> 6.5 CPU-s)
        if any(" " in k for k in attrs):
            attrs = {_local(k) if not k.startswith(_REL_NS) else k: v for k, v in attrs.items()}
        start(_local(tag), attrs)

    parser.StartElementHandler = on_start
    if end is not None:
        parser.EndElementHandler = lambda tag: end(_local(tag))
    if text is not None:
        parser.CharacterDataHandler = text
    with archive.open(name) as fh:
        while chunk := fh.read(1 << 20):
            parser.Parse(chunk, False)
            clock.check()
    parser.Parse(b"", True)


def _relationships(
    archive: zipfile.ZipFile, part: str, clock: _Clock
) -> list[tuple[str, str, str]]:
    """``(id, type, member)`` of each relationship of ``part`` (its ``_rels`` file)."""
    folder, _, base = part.rpartition("/")
    rels_name = f"{folder}/_rels/{base}.rels" if folder else f"_rels/{base}.rels"
    found: list[tuple[str, str, str]] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        if tag == "Relationship" and attrs.get("TargetMode") != "External":
            target = attrs.get("Target", "")
            member = (
                target.lstrip("/")
                if target.startswith("/")
                else posixpath.normpath(posixpath.join(folder, target))
            )
            found.append((attrs.get("Id", ""), attrs.get("Type", ""), member))

    _parse_part(archive, rels_name, start, clock)
    return found


def _workbook_part(archive: zipfile.ZipFile, clock: _Clock) -> str | None:
    """The workbook part: by the package's relationship (Excel's way), else as openpyxl finds it.

    openpyxl takes the part [Content_Types].xml gives a workbook's type: a writer that left
    ``_rels/.rels`` out or empty (EPPlus/ImportExcel did) was refused though openpyxl reads it,
    and the scan's checks run on it so. A Strict Open XML package (Excel's "Strict Open XML
    Spreadsheet"), whose parts openpyxl reads as no worksheet, is refused saying so.
    """
    try:
        package = _relationships(archive, "", clock)
    except KeyError:  # no _rels/.rels
        package = []
    if any(t == _STRICT_DOCUMENT for _, t, _ in package):
        raise _StrictError
    book = next((m for _, t, m in package if t == _OFFICE_DOCUMENT), None)
    if book is not None:
        return book
    parts: dict[str, str] = {}

    def start(tag: str, attrs: dict[str, str]) -> None:
        if tag == "Override":
            parts.setdefault(attrs.get("ContentType", ""), attrs.get("PartName", "").lstrip("/"))

    from openpyxl.xml.constants import XLSM, XLSX, XLTM, XLTX  # type: ignore[import-untyped]

    _parse_part(archive, "[Content_Types].xml", start, clock)  # as _find_workbook_part, in order
    return next((parts[t] for t in (XLTM, XLTX, XLSM, XLSX) if t in parts), None)


def _first_sheet_part(
    archive: zipfile.ZipFile, clock: _Clock, scan: SheetScan
) -> tuple[str, str, str, list[str]] | None:
    """The workbook's first worksheet (zip member, name, state) and all its sheets' names.

    The state is ``visible``, ``hidden``...; the names in the workbook's order. From the
    package's relationships and the workbook part, which also sets ``scan.recalc``.
    """
    book = _workbook_part(archive, clock)
    if book is None:
        return None
    ids: list[tuple[str, str, str]] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        if tag == "sheet":
            rel = attrs.get(f"{_REL_NS} id", "")
            ids.append((rel, attrs.get("name", ""), attrs.get("state", "visible")))
        elif tag == "calcPr":
            scan.recalc = attrs.get("fullCalcOnLoad") in ("1", "true")

    _parse_part(archive, book, start, clock)
    sheets = {i: m for i, t, m in _relationships(archive, book, clock) if t == _WORKSHEET}
    scan.shared_texts = _count_shared_strings(archive, book, clock)
    names = [name for i, name, _ in ids if i in sheets]
    return next(((sheets[i], name, state, names) for i, name, state in ids if i in sheets), None)


def _count_shared_strings(archive: zipfile.ZipFile, book: str, clock: _Clock) -> int:
    """The shared texts counted under the clock; past :data:`MAX_SHARED_STRINGS`, refused."""
    count = chars = 0

    def start(tag: str, _attrs: dict[str, str]) -> None:
        nonlocal count, chars
        if tag == "si":
            count, chars = count + 1, 0
            if count > MAX_SHARED_STRINGS:
                raise _TooManyStringsError

    def text(data: str) -> None:
        nonlocal chars
        chars += len(data)
        if chars > MAX_CELL:
            raise _LongTextError(f"the workbook's shared text {count}")

    for _, kind, member in _relationships(archive, book, clock):
        if kind == _SHARED_STRINGS:
            _parse_part(archive, member, start, clock, text=text)
    return count


class _TooManyStringsError(Exception):
    """The shared-strings table holds more than :data:`MAX_SHARED_STRINGS` strings."""


class _LongTextError(Exception):
    """A cell's text (or a shared text) past :data:`MAX_CELL` characters: where, the cell."""

    def __init__(self, where: str, row: int | None = None, column: str | None = None) -> None:
        super().__init__(where)
        self.where, self.row, self.column = where, row, column


#: How many hidden rows' numbers the note names (it gives the count of all).
HIDDEN_ROWS_SHOWN = 5


@dataclass
class SheetScan:
    """What read-only openpyxl does not report about the first sheet, from its XML.

    ``merges``: its merged ranges (``B2:B3``); ``uncached``: its first formula cell with no
    saved value (``B2``; None if every formula has its value).
    """

    merges: list[str] = field(default_factory=list)
    uncached: str | None = None
    #: the first sheet's name when Excel hides it (state hidden or veryHidden), else None
    hidden: str | None = None
    #: the first cell holding a value in a column Excel hides (``D2``), else None
    hidden_cell: str | None = None
    #: rows Excel hides (a filtered view, or hidden by hand) that hold values: how many,
    #: and the first :data:`HIDDEN_ROWS_SHOWN` sheet row numbers
    hidden_row_count: int = 0
    hidden_rows: list[int] = field(default_factory=list)
    last_hidden_row: int = 0
    #: the names of the workbook's worksheets, in order (the first is the one read)
    sheets: list[str] = field(default_factory=list)
    #: the last row holding a value or a formula (0: none); the rows below are not read
    last_value_row: int = 0
    #: the workbook asks Excel to compute every formula again on opening (fullCalcOnLoad)
    recalc: bool = False
    #: its first formula cell with a saved value (``D2``), else None
    formula: str | None = None
    #: the first row or cell openpyxl would misread without a word (why, the sheet row, the
    #: column letter of a cell), else None
    broken: tuple[str, int, str | None] | None = None
    #: how many texts the workbook's shared-strings table holds
    shared_texts: int = 0
    #: zeros shown as zeros (False: the sheet's option 'Show a zero in cells that have zero
    #: value' is off, ``<sheetView showZeros="0">``: Excel shows them as empty cells)
    zeros: bool = True
    #: the scan could not read a part (a damaged zip or XML: openpyxl says what is wrong)
    failed: bool = False


class _CellScan:
    """Expat handlers finding merged ranges and formula cells without a saved value."""

    def __init__(self) -> None:
        self.scan = SheetScan()
        self.row = 0
        self.col = 0
        self.cell: str | None = None
        self.formula = False
        self.value = False
        self.in_value = False
        #: (first, last) 1-based columns the sheet hides (``<col hidden="1">``)
        self.hidden_columns: list[tuple[int, int]] = []
        #: whether the current row is hidden (``<row hidden="1">``: a filter, or by hand)
        self.row_hidden = False
        #: characters of the current cell's text (None: not in a cell)
        self.chars: int | None = None
        #: the current cell's type (``t``) and, for a shared text or a TRUE/FALSE, its value
        self.kind = "n"
        self.raw = ""

    def broken(self, why: str, letter: str | None = None) -> None:
        """Keep the first thing openpyxl would misread: rows and cells are read as given."""
        if self.scan.broken is None:
            self.scan.broken = (why, self.row, letter)

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "col" and attrs.get("hidden") in ("1", "true"):
            first = _int(attrs.get("min"), 0)
            self.hidden_columns.append((first, _int(attrs.get("max"), first)))
        elif tag == "row":
            row = _int(attrs.get("r"), self.row + 1)
            if row <= self.row:
                after = "is given twice" if row == self.row else f"comes after row {self.row}"
                self.row = row
                self.broken(f"sheet row {row} {after}{_DISORDER}")
            self.row = row
            self.col = 0
            self.row_hidden = attrs.get("hidden") in ("1", "true")
        elif tag == "c":
            ref = attrs.get("r")  # optional: a cell without one is the next in its row
            col = _ref_column(ref) if ref else self.col + 1
            if col <= self.col:
                letter = column_letter(col - 1)
                after = (
                    "is given twice"
                    if col == self.col
                    else f"comes after {column_letter(self.col - 1)}{self.row} in its row"
                )
                self.broken(f"cell {letter}{self.row} {after}{_DISORDER}", letter)
            self.col = col
            self.cell = ref or f"{column_letter(self.col - 1)}{self.row}"
            self.formula = self.value = False
            self.chars = 0
            self.kind, self.raw = attrs.get("t", "n"), ""
        elif tag == "f":
            self.formula = True
        elif tag == "v":
            self.in_value = True
        elif tag == "is":  # an inline string is the cell's value
            self.value = True
        elif tag == "mergeCell":
            self.scan.merges.append(attrs.get("ref", ""))
        elif tag == "sheetView" and attrs.get("showZeros") in ("0", "false"):
            self.scan.zeros = False

    def text(self, data: str) -> None:
        if self.in_value:
            if data.strip():
                self.value = True
            if self.kind in ("s", "b"):
                self.raw += data
        if self.chars is not None:
            self.chars += len(data)
            if self.chars > MAX_CELL:
                column = column_letter(self.col - 1)
                raise _LongTextError(f"cell {self.cell}", self.row, column)

    def end(self, tag: str) -> None:
        if tag == "v":
            self.in_value = False
            return
        if tag != "c":
            return
        self.chars = None
        if self.kind == "s" and self.value:  # (inline: every text cell of Excel's workbooks)
            raw = self.raw
            if not (raw.isdigit() and int(raw) < self.scan.shared_texts):
                self.check_value()
        elif self.kind == "b" and self.value and self.raw not in ("0", "1"):
            self.check_value()
        if not (self.value or self.formula):
            return
        self.scan.last_value_row = max(self.scan.last_value_row, self.row)
        if self.row_hidden and self.scan.last_hidden_row != self.row:
            self.scan.last_hidden_row = self.row
            self.scan.hidden_row_count += 1
            if len(self.scan.hidden_rows) < HIDDEN_ROWS_SHOWN:
                self.scan.hidden_rows.append(self.row)
        if self.formula and not self.value and self.scan.uncached is None:
            self.scan.uncached = self.cell
        elif self.formula and self.scan.formula is None:
            self.scan.formula = self.cell
        elif self.scan.hidden_cell is None and any(
            a <= self.col <= b for a, b in self.hidden_columns
        ):
            self.scan.hidden_cell = self.cell

    def check_value(self) -> None:
        """A shared text the workbook holds (openpyxl: IndexError, exit 1), TRUE/FALSE as 0/1.

        A TRUE/FALSE cell holding 2 read as true; Excel writes 0 or 1.
        """
        raw, letter = self.raw.strip(), column_letter(self.col - 1)
        if self.kind == "b" and raw not in ("0", "1"):
            self.broken(
                f"cell {self.cell} is a TRUE/FALSE cell holding {raw[:20]!r} (Excel writes 0 "
                "or 1: the file is damaged)",
                letter,
            )
        elif self.kind == "s" and not (raw.isdigit() and int(raw) < self.scan.shared_texts):
            self.broken(
                f"cell {self.cell} refers to shared text {raw[:20]!r}, of the "
                f"{self.scan.shared_texts} the workbook holds (numbered from 0: the file is "
                "damaged)",
                letter,
            )


#: Why a row or cell the XML gives out of order is refused (:meth:`_CellScan.broken`).
#: openpyxl reads them as given: a row after a later one was left out (the reading ends at
#: the last row holding a value), a cell given twice read as its second value (true, then
#: false: false), exit 0; Excel writes them in order (and repairs a file that is not).
_DISORDER = (
    " in the sheet's XML (out of order or given twice: a program wrote it; read as given, a "
    "value would be lost)"
)


def _int(text: str | None, default: int) -> int:
    return int(text) if text is not None and text.isdigit() else default


def _ref_column(ref: str) -> int:
    """The 1-based column of a cell reference (``C4`` -> 3)."""
    letters = ref.rstrip("0123456789").lstrip("$").upper()
    number = 0
    for ch in letters:
        number = number * 26 + ord(ch) - 64
    return number


def scan_sheet(path: Path, clock: _Clock | None = None) -> SheetScan:
    """The first sheet's merged ranges and first formula cell with no saved value.

    Read with an XML parser (expat, streamed; any quoting, attribute order or namespace
    prefix), never by pattern: read-only openpyxl reports neither (an unsaved formula reads
    as an empty cell). A part that declares a DOCTYPE or an entity is refused.
    """
    cells = _CellScan()
    clock = clock or _Clock(path)
    try:
        with zipfile.ZipFile(path) as archive:
            first = _first_sheet_part(archive, clock, cells.scan)
            if first is None:
                return cells.scan
            part, name, state, cells.scan.sheets = first
            if state != "visible":
                cells.scan.hidden = name
            _parse_part(archive, part, cells.start, clock, text=cells.text, end=cells.end)
    except _TooManyStringsError:
        raise _too_large(
            path,
            f"the workbook holds over {MAX_SHARED_STRINGS:,} distinct texts (its shared "
            "strings, all held in memory before the first row)",
        ) from None
    except _LongTextError as exc:
        raise InputError(
            f"{exc.where}: a text of over {MAX_CELL >> 20} M characters (no trace or label cell "
            "is that long)",
            path=path,
            line=exc.row,
            field=exc.column,
        ) from None
    except _RefusedError:
        raise InputError(
            "the workbook's XML declares a DOCTYPE or an entity (no spreadsheet program "
            "writes one; an entity expansion bomb?): save the sheet again as .xlsx or as CSV",
            path=path,
        ) from None
    except _StrictError:
        raise InputError(
            "the workbook is saved as Strict Open XML (Excel's 'Strict Open XML Spreadsheet'), "
            "which failcodes does not read (openpyxl finds no sheet in it): save it as 'Excel "
            "Workbook (.xlsx)', or save the sheet as CSV",
            path=path,
        ) from None
    except KeyError:  # a part the package names is not in it: none found, as Excel names it
        return SheetScan()
    except (zipfile.BadZipFile, OSError, ValueError, xml.parsers.expat.ExpatError):
        return SheetScan(failed=True)  # openpyxl says what is wrong (a damaged zip or part)
    cells.scan.merges = list(dict.fromkeys(cells.scan.merges))
    return cells.scan


def _check_cells(path: Path, scan: SheetScan, header: list[str], header_line: int) -> None:
    """Refuse cells that read as empty though they are not.

    Cells merged over table rows (all but the first read as empty), a formula never computed
    (a program wrote the file; Excel saves each formula's value).
    """
    from openpyxl.utils.cell import (  # type: ignore[import-untyped]
        coordinate_to_tuple,
        range_boundaries,
    )

    for ref in scan.merges:
        try:
            min_col, min_row, _, max_row = range_boundaries(ref)
        except (ValueError, TypeError):
            raise InputError(
                f"merged cells with a range that is none ({ref!r}): save the sheet again", path=path
            ) from None
        if min_row is None or max_row is None or min_col is None:
            raise InputError(
                f"merged cells over whole rows or columns ({ref}): unmerge the cells and "
                "fill each one",
                path=path,
            )
        if max_row > header_line:
            column = min_col - 1
            raise InputError(
                f"merged cells {ref}: only the first cell of a merged block holds its value, "
                "the others read as empty; unmerge the cells and fill each one",
                path=path,
                line=max(min_row, header_line + 1),
                field=header[column] if column < len(header) else column_letter(column),
            )
    uncached = scan.uncached
    recomputed = scan.formula if scan.recalc else None
    if uncached is None and recomputed is not None:
        # XlsxWriter saves 0 for every formula and asks Excel to compute them on opening: a
        # label column =IF(C2="wrong",1,0) read as 0 in every row (no error flagged anywhere)
        row, col = coordinate_to_tuple(recomputed.replace("$", ""))
        raise InputError(
            f"cell {recomputed} holds a formula whose saved value is not Excel's (the "
            "workbook asks Excel to compute every formula on opening: a program such as "
            "XlsxWriter wrote it, saving 0): open and save it in Excel, or write the values",
            path=path,
            line=row,
            field=header[col - 1] if col - 1 < len(header) else column_letter(col - 1),
        )
    if uncached is not None:
        try:
            row, col = coordinate_to_tuple(uncached.replace("$", ""))
        except (ValueError, TypeError):
            raise InputError(
                f"cell {uncached!r} holds a formula with no saved value: open and save it in "
                "Excel, or write the values",
                path=path,
            ) from None
        raise InputError(
            f"cell {uncached} holds a formula with no saved value (the file was written by a "
            "program, never opened in Excel): open and save it in Excel, or write the values",
            path=path,
            line=row,
            field=header[col - 1] if col - 1 < len(header) else column_letter(col - 1),
        )


def title_hint(header: Sequence[object], line: int) -> str:
    """The way through when the header row holds one name only (a title above the names?).

    A table saved with its caption above the header ('Table 2: ratings by two coders') was
    refused at the next row with no way through ("expected 1 cells", "no header name").
    """
    names = [str(h).strip() for h in header if h is not None and str(h).strip()]
    if len(names) != 1:
        return ""
    return (
        f" (line {line} holds one name, {names[0][:60]!r}: a title above the column names? "
        "the first non-empty row is the header, one name per column: delete the title row)"
    )


def _title_merge(path: Path, scan: SheetScan, line: int, column: int) -> None:
    """Refuse with a clear line when ``column`` (0-based) of header row ``line`` is merged.

    A title merged across the columns above the column names (``Clinician labels (round 2)``
    over A1:C1) was read as the header: the error named a value "in column B, which has no
    header name" on the row of the real header. (A header cell merged over an empty column
    with nothing under it is read as it is.)
    """
    from openpyxl.utils.cell import range_boundaries

    for ref in scan.merges:
        try:
            min_col, min_row, max_col, max_row = range_boundaries(ref)
        except (ValueError, TypeError):
            continue  # _check_cells names it
        if None in (min_col, min_row, max_col, max_row):
            continue
        if min_row <= line <= max_row and min_col < column + 1 <= max_col:
            raise InputError(
                f"merged cells {ref} in the header row (a title above the column names?): "
                "the first non-empty row is the header, one name per column; delete the "
                "title row, or unmerge the cells and name each column",
                path=path,
                line=line,
            )


def _header(path: Path, line: int, cells: tuple[Any, ...]) -> list[str]:
    names = [str(c).strip() if c is not None else "" for c in cells]
    while names and not names[-1]:
        names.pop()
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        column = column_letter(i)
        if not name:
            # pandas' to_excel (its row index, no name) or a table starting in column B
            lead = "; pandas' row index (to_excel(index=False)) or a table that starts further "
            lead += f"right? delete column {column}"
            raise InputError(
                f"empty header cell in column {column} (every column needs a name)"
                + (lead if not any(names[:i]) else ""),
                path=path,
                line=line,
            )
        if name in seen:
            raise InputError(
                f"column name given twice (columns {column_letter(seen[name])} and {column})",
                path=path,
                line=line,
                field=name,
            )
        seen[name] = i
    return names


def _other_sheets(path: Path, *, hint: bool = True) -> str:
    """A hint naming the workbook's sheets when it has several ("" for one sheet).

    ``hint=False``: the names alone (`` (sheets: 'a', 'b')``).
    """
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
    if not hint:
        return f" (its sheets: {listed})"
    return (
        f" (failcodes reads the first of the workbook's {len(names)} sheets: {listed}; move "
        "the table to the first sheet)"
    )


def sheet_rows(
    path: str | Path, *, as_shown: bool | frozenset[str] = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for every non-empty row under the header (missing cells left out).

    A value in a column without a header name is an error naming its row and column. A
    workbook of several sheets whose first sheet is empty, or has no rows under its header,
    is an error naming the sheets (the table is most likely on another). A number its format
    shows otherwise (1.4 shown as 1) is read as held, and said; refused where ``as_shown`` (every
    column: a rating; or the columns named: a label rule's, compared as text).
    """
    p = Path(path)
    clock = _Clock(p)
    scan = check_workbook(p)
    header: list[str] | None = None
    header_line = 1
    count = rounded = 0
    first: RoundedNumber | HiddenText | None = None
    for line, cells in _rows(p, clock, scan):
        if all(c is None for c in cells):
            continue
        if header is None:
            named = [c is not None and str(c).strip() != "" for c in cells]
            while named and not named[-1]:
                named.pop()
            if not all(named):  # an empty header cell: under a merged title?
                _title_merge(p, scan, line, named.index(False))
            header, header_line = _header(p, line, cells), line
            _check_cells(p, scan, header, header_line)
            continue
        extra = [i for i, c in enumerate(cells) if c is not None and i >= len(header)]
        if extra:
            _title_merge(p, scan, header_line, extra[0])
            raise InputError(
                f"a value in column {column_letter(extra[0])}, which has no header name"
                + title_hint(header, header_line),
                path=p,
                line=line,
            )
        failed = next((i for i, c in enumerate(cells) if isinstance(c, str) and c in ERRORS), None)
        if failed is not None:  # read as the text '#DIV/0!': a label, a rating category
            raise InputError(
                f"Excel error value {cells[failed]} (a formula that failed): fix or clear the cell",
                path=p,
                line=line,
                field=header[failed] if failed < len(header) else column_letter(failed),
            )
        marked = [i for i, c in enumerate(cells) if type(c) in _OTHERWISE]
        if marked:
            first = first or cells[marked[0]]
            # 2.6 shown as 3: a rating of its own beside the 3s (none agreeing), a label
            # rule's '2.6' where the sheet shows '3'
            bad = [i for i in marked if as_shown is True or header[i] in (as_shown or ())]
            if bad:
                shown = bad[0]
                cell = cells[shown]
                raise InputError(
                    f"cell {cell.cell} holds {cell.held!r}, which Excel shows {_as(cell)} "
                    f"({_by(cell)}): the value held would be read; "
                    + (
                        "show the values as held (number format General), or round them (=ROUND)"
                        if cell.number_format
                        else "turn the option on (Excel: File > Options > Advanced) to see them"
                    ),
                    path=p,
                    line=line,
                    field=header[shown] if shown < len(header) else column_letter(shown),
                )
            rounded += len(marked)
            cells = tuple(c.held if type(c) in _OTHERWISE else c for c in cells)
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
    if first is not None:
        _say(
            p,
            f"{p}: {rounded} cell{'s hold values' if rounded > 1 else ' holds a value'} "
            f"Excel shows otherwise by a number format (first {first.cell}: {first.held!r}, "
            f"shown {_as(first)}, {_by(first)}), read as held, not as shown",
        )
    if len(scan.sheets) > 1:  # said once the rows are read: a bad row's error stays one line
        _say(p, other_sheets_note(p, scan))


@contextmanager
def first_sheet_hint() -> Iterator[None]:
    """A refusal of a workbook's header, raised in the block, names the sheets when it has several.

    A README or codebook sheet before the table: ``ingest generic`` refused "unknown column
    'This workbook holds ...'" (the README's first line), ``generic-labels`` "unknown fields
    About", with no word that failcodes reads the first sheet and the table was on another
    (the note saying so comes once the rows are read). Header-level refusals only: at the
    header's line, or an unknown field at the row under it; a later row's stays as it is.
    """
    try:
        yield
    except InputError as exc:
        where = Path(exc.path) if exc.path is not None else None
        if where is None or exc.line is None or not is_spreadsheet(where) or "sheets" in exc.reason:
            raise
        try:
            header = next(
                (
                    n
                    for n, cells in _rows(where, _Clock(where), check_workbook(where))
                    if any(c is not None for c in cells)
                ),
                1,
            )
        except InputError:
            raise exc from None
        if exc.line > header and not (exc.line == header + 1 and "unknown field" in exc.reason):
            raise
        hint = _other_sheets(where)
        if not hint:
            raise
        raise InputError(exc.reason + hint, path=exc.path, line=exc.line, field=exc.field) from None


def sheet_header(path: str | Path) -> list[str]:
    """The column names of the first worksheet (its first non-empty row)."""
    p = Path(path)
    scan = check_workbook(p)
    for line, cells in _rows(p, _Clock(p), scan):
        if any(c is not None for c in cells):
            return _header(p, line, cells)
    raise InputError(f"empty worksheet, expected a header row{_other_sheets(p)}", path=p, line=1)
