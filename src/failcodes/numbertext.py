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


def reads_as_float(text: str) -> bool:
    """Whether ``float(text)`` reads ``text`` (``1e3``, `` 2 ``, ``nan`` and ``inf`` do)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
