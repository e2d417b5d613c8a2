"""Whole numbers written as floats, read as the whole number's text: ``2.0`` is ``2``.

pandas writes an integer column that has a missing value as floats: a class code ``2`` is the
float 2.0 in a Parquet file and the text ``2.0`` in a CSV of the same frame. Where a value is
compared as text (a verdict alias, a label rule's value), both read as ``2``, as the float
always did: the CSV's ``2.0`` matched no rule value ``2`` (every row got the other label).
"""

from __future__ import annotations

import re

#: A whole number written with a decimal point and zeros only after it (``2.0``, ``-1.00``).
_WHOLE = re.compile(r"([+-]?\d+)\.0*")


def whole_number_text(value: object) -> str | None:
    """``value``'s whole number as text when it is one written as a float, else None.

    The float 2.0 and the texts ``2.0``/``2.00`` (spaces around allowed) give ``"2"``; ``2``
    itself, ``2.5``, ``1e3`` and every other value give None (left as they are).
    """
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else None
    if isinstance(value, str):
        match = _WHOLE.fullmatch(value.strip())
        return str(int(match.group(1))) if match else None
    return None


def number_id(value: object) -> object:
    """A whole number given for an id or a name in Python, as its text; else ``value``.

    ``failcodes.Trace(**row)`` over a notebook's ``df.to_dict("records")`` (ids 1, 2, ... an
    integer column; 7.0 one pandas widened to float for a missing value) was refused by
    pydantic ("Input should be a valid string") where the same frame written to a file reads
    as "1", "7": the readers' rule (:func:`failcodes.tableio.id_text`). A bool, a float with a
    fraction or past 2**53, and anything else is left to the model, which refuses it; pandas'
    missing value (NaN, pd.NA) is None, as a blank cell is.
    """
    if type(value).__name__ == "NAType" or (isinstance(value, float) and value != value):
        return None  # pandas' missing value (pd.NA, NaN): missing, as a blank cell reads
    kind = getattr(getattr(value, "dtype", None), "kind", "")  # a numpy scalar's: i, u, f, b
    if isinstance(value, bool) or kind == "b":
        return value
    if isinstance(value, int) or kind in ("i", "u"):
        return str(int(value))  # type: ignore[call-overload]
    if isinstance(value, float) or kind == "f":
        number = float(value)  # type: ignore[arg-type]
        if number.is_integer() and abs(number) < 2**53:
            return str(int(number))
    return value


def reads_as_float(text: str) -> bool:
    """Whether ``float(text)`` reads ``text`` (``1e3``, `` 2 ``, ``nan`` and ``inf`` do)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def underscore_clause(value: object) -> str | None:
    """Why a number text with ``_`` in it is no number, or None for any other value.

    Python's number syntax groups digits with ``_`` (PEP 515): ``float("0_4")`` is 4.0 and
    ``float("1_0")`` 10.0, where a sheet, pandas and every other reader see no number. A
    support score ``0_4`` read as 4.0 (supported at any threshold) and a rating ``1_0`` as
    the category 10, exit 0. The clause says what Python read, when it read one.
    """
    if not (isinstance(value, str) and "_" in value):
        return None
    read = f" (it was read as {float(value):g})" if reads_as_float(value) else ""
    return f"an underscore is no part of a number{read}"
