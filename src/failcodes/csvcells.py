"""CSV cells that are safe to open in a spreadsheet and read back as they were written.

A text cell a spreadsheet would run as a formula gets a ``'`` in front (OWASP's CSV-injection
rule), taken off again when failcodes reads it, and a NUL is refused where it would be
written: the rules are docs/trace-format.md's ("Safe to open in a spreadsheet"). Every CSV
writer of failcodes goes through :func:`neutralise` (:func:`safe_frame` for tables) and every
CSV reader through :func:`restore`; ``--raw-csv`` (:func:`raw_cells`) writes the values as
they are; :func:`check_nul` refuses a NUL naming the file, line and column.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from failcodes.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

#: What a spreadsheet reads as a formula's start (=+-@, tab or CR: OWASP), or a whole text
#: it reads as a formula's error value (``#REF!``, Excel's but ``#N/A``, a missing mark:
#: failcodes' CSV readers refuse such a bare cell as a formula that failed).
_FORMULA = r"(?:[=+\-@\t\r]|#(?:NULL!|DIV/0!|VALUE!|REF!|NAME\?|NUM!|GETTING_DATA)(?![^\n]))"
#: Text to neutralise: quotes (possibly none), then :data:`_FORMULA`.
_LEADING = re.compile(f"'*{_FORMULA}")
#: A line that starts like :data:`_LEADING` (in a column's cells joined by newlines).
_LEADING_LINE = re.compile(f"^'*{_FORMULA}", re.MULTILINE)
#: :data:`_LEADING_LINE` after the first line: a search for its newline first (~3x faster than
#: a ``^`` tried at every character).
_LATER_LINE = re.compile(f"\n'*{_FORMULA}")
#: A cell to restore: one quote or more, then :data:`_FORMULA`.
_NEUTRALISED = re.compile(f"'+{_FORMULA}")
#: A plain decimal number (what a spreadsheet reads as a number, not a formula).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

_RAW: ContextVar[bool] = ContextVar("failcodes_raw_csv", default=False)


@contextlib.contextmanager
def raw_cells(raw: bool = True) -> Iterator[None]:
    """Within the block, CSV writers write text as it is (``--raw-csv``), or neutralised."""
    token = _RAW.set(raw)
    try:
        yield
    finally:
        _RAW.reset(token)


def keep_raw() -> None:
    """From now on (to the end of the enclosing :func:`raw_cells`), write text as it is."""
    _RAW.set(True)


def leads_like_a_formula(text: str) -> bool:
    """Whether a line of ``text`` starts like a formula (:data:`_LEADING_LINE` finds one)."""
    return _LEADING_LINE.match(text) is not None or _LATER_LINE.search(text) is not None


def writes_raw() -> bool:
    """True inside :func:`raw_cells` (text written as it is)."""
    return _RAW.get()


def neutralise(text: str) -> str:
    """``text`` as a CSV cell: a quote in front when a spreadsheet would run it as a formula.

    A number stays as it is; inside :func:`raw_cells` every text does.
    """
    if not text or not _LEADING.match(text) or _RAW.get() or _NUMBER.fullmatch(text):
        return text
    return "'" + text


def restore(cell: str) -> str:
    """The value of a CSV cell :func:`neutralise` wrote (one leading quote taken off)."""
    return cell[1:] if cell[:1] == "'" and _NEUTRALISED.match(cell) else cell


def check_nul(cells: Sequence[str], columns: Sequence[str], path: Path, line: int) -> None:
    """Refuse a NUL in a cell about to be written to the CSV file ``path`` (its ``line``)."""
    for column, cell in zip(columns, cells, strict=False):
        if "\x00" in cell:
            raise InputError(
                "a NUL character, which a CSV cell cannot carry (failcodes reads a NUL in a "
                "CSV as binary data); write .jsonl or .parquet, or remove it from the input",
                path=path,
                line=line,
                field=str(column),
            )


def _text_column(series: pd.Series) -> bool:
    """True for a column that can hold text (object or string dtype)."""
    from pandas.api import types

    return bool(types.is_object_dtype(series.dtype) or types.is_string_dtype(series.dtype))


def safe_frame(frame: pd.DataFrame, path: str | Path, *, first_line: int = 2) -> pd.DataFrame:
    """``frame`` ready for ``to_csv``: its text cells neutralised, a NUL refused naming ``path``.

    The NUL's line is the row's in ``path`` (``first_line``: the frame's first row's; the
    header is line 1).

    Numbers (numeric columns, and text that is a number) are left as they are. A column is
    looked at as one string (its cells joined by newlines): only a column with a NUL, or
    with a line that starts like a formula, is gone through cell by cell. The result is a
    copy when a cell changes, else ``frame`` itself.
    """
    out = frame
    for i, column in enumerate(frame.columns):
        series = frame.iloc[:, i]
        if not _text_column(series):
            continue
        values = series.tolist()
        joined = "\n".join([v for v in values if isinstance(v, str)])
        if "\x00" in joined:
            for row, value in enumerate(values):
                if isinstance(value, str) and "\x00" in value:
                    check_nul([value], [str(column)], Path(path), row + first_line)
        if _RAW.get() or not leads_like_a_formula(joined):
            continue  # no cell to neutralise
        if out is frame:
            out = frame.copy()
        out.iloc[:, i] = [neutralise(v) if isinstance(v, str) else v for v in values]
    return out


def restore_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` read from a CSV with :func:`restore` applied to its text cells."""
    for i in range(frame.shape[1]):
        series = frame.iloc[:, i]
        if not _text_column(series):
            continue
        values = series.tolist()
        if any(isinstance(v, str) and v[:1] == "'" for v in values):
            frame.iloc[:, i] = [restore(v) if isinstance(v, str) else v for v in values]
    return frame


def read_frame(path: str | Path) -> pd.DataFrame:
    """A CSV table failcodes wrote, read by pandas, its cells restored (:func:`restore`).

    A FIFO or device named like the table is refused (a FIFO hung ``report`` without a word).
    """
    import pandas as pd

    from failcodes.fileio import check_regular_file

    return restore_frame(pd.read_csv(check_regular_file(path)))


def read_chunks(path: str | Path, rows: int, *, text: Sequence[str] = ()) -> Iterator[pd.DataFrame]:
    """:func:`read_frame` ``rows`` rows at a time (each chunk's index continues the last's).

    Every column is read (a row with a field too many is refused by pandas as in a whole
    read); the ``text`` columns as text, as written (not parsed as numbers or booleans).
    """
    import pandas as pd

    from failcodes.fileio import check_regular_file

    dtype = dict.fromkeys(text, str)
    with pd.read_csv(check_regular_file(path), chunksize=rows, dtype=dtype) as reader:
        for chunk in reader:
            yield restore_frame(chunk)


def line_of(path: str | Path, record: int, *, blanks: bool) -> int:
    """The line of the CSV file ``path`` (1-based) on which its record ``record`` starts.

    Records count from 1 (the header), a quoted cell's line breaks inside its record: pandas
    numbers records so, counting blank lines with ``blanks`` (its parser errors: "in line
    N") or skipping them without (a frame's row ``r`` is record ``r + 2``). For an error
    message: the file is read again with the stdlib reader, up to that record.
    """
    import csv

    with Path(path).open(encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh)
        number, start = 0, 1
        for cells in reader:
            if cells or blanks:
                number += 1
                if number == record:
                    return start
            start = reader.line_num + 1
    return start
