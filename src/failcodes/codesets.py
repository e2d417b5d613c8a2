"""Several codes written into one cell: the separators, and the ways a cell splits on them.

A cell ``overreach;conflict`` beside cells ``overreach`` and ``conflict`` holds two codes.
``agree`` refuses such a cell unless ``--sets`` splits it (read as one category, ``a|b`` and
``b|a`` disagreed); a ``--label-rule`` naming ``dosage`` and ``interaction`` refuses a cell
``dosage;interaction`` that it would have given the other outcome. Both split a cell the same
way, here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

#: Separators that join codes into one cell (``a;b``, ``a|b``, ``a, b``, ``a/b``, ``a & b``,
#: ``a + b``, a line break inside a spreadsheet cell, the full-width ``；`` ``，`` and the
#: ideographic comma ``、`` of CJK input), and the word ``and`` (:data:`AND_JOINER`).
SET_SEPARATORS = (";", "|", ",", "/", "&", "+", "\n", "\uff1b", "\uff0c", "\u3001")

#: The word "and" joining codes (``relevance and sufficiency``, ``x AND y``, ``x, y and z``):
#: any case, with spaces around it. As for the separators, a cell is split only when every
#: part is a rating of its own elsewhere: ``search and retrieval`` stays one category when
#: ``search`` and ``retrieval`` are never written alone.
AND_JOINER = " and "
AND_PARTS = re.compile(r"\s*,?\s+and\s+|\s*,\s*", re.IGNORECASE)


def listed_items(code: str) -> list[str] | None:
    """The items of a cell written as a JSON or Python list (``["a", "b"]``, ``['a', 'b']``).

    pandas writes a list column to CSV that way; each spelling and order was a category.
    """
    if not (code.startswith("[") and code.endswith("]")):
        return None
    try:
        items = ast.literal_eval(code)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return [str(i).strip() for i in items] if isinstance(items, list) else None


def splits(value: str) -> Iterator[tuple[str | None, list[str]]]:
    """Each way ``value`` splits into two or more non-empty parts: ``(separator, parts)``.

    A cell written as a list first (:func:`listed_items`, separator None), then one
    separator at a time (:data:`SET_SEPARATORS`, then :data:`AND_JOINER`), the parts
    stripped. Whether the parts are codes is the caller's to say (each a value of its own
    elsewhere, or a value a rule names).
    """
    items = listed_items(value)
    if items is not None and len(items) > 1 and all(items):
        yield None, items
    for sep in (*SET_SEPARATORS, AND_JOINER):
        pieces = AND_PARTS.split(value) if sep == AND_JOINER else value.split(sep)
        parts = [p.strip() for p in pieces]
        if len(parts) > 1 and all(parts):
            yield sep, parts
