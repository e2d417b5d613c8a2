"""A coded table as a tally: its distinct rows, each with how many rows it stands for.

The report reads the coded tables (``per_passage.csv``, ``per_trace.csv``) in chunks into a
tally of the columns its counts read (docs/architecture.md): a DataFrame of the distinct rows
in order of first appearance, plus :data:`ROWS`, :data:`PARTIAL`, :data:`FIRST` (and
:data:`REPEAT` in a table of units repeated across systems, :mod:`failcodes.unitrepeats`).
Every count made from a coded table goes through :func:`row_weights`, :func:`partial_rows`
and :func:`value_counts`, which give the same numbers for the table and for its tally.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from failcodes.annotations import NOT_ASSESSABLE

if TYPE_CHECKING:
    import pandas as pd

#: How many rows of the file a tally row stands for.
ROWS = "__rows__"
#: Whether those rows hold ``not_assessable`` in any column of the file.
PARTIAL = "__not_assessable__"
#: The 0-based index of the tally row's first row in the file.
FIRST = "__first_row__"
#: Whether the row repeats a (retriever, unit) an earlier row holds: counted once, there.
REPEAT = "__repeat__"


def is_tally(table: pd.DataFrame) -> bool:
    """Whether ``table`` is a tally (:func:`tally_chunks`), not the coded table itself."""
    return ROWS in table.columns


def row_weights(table: pd.DataFrame) -> pd.Series:
    """How many rows of the coded table each row of ``table`` stands for (1, or :data:`ROWS`).

    A row repeating a unit (:data:`REPEAT`) stands for none: its unit is counted at its first.
    """
    import pandas as pd

    weights = table[ROWS] if is_tally(table) else pd.Series(1, index=table.index, dtype="int64")
    if REPEAT in table.columns:
        weights = weights.where(~table[REPEAT].astype(bool), 0)
    return weights


def partial_rows(table: pd.DataFrame) -> pd.Series:
    """Whether each row holds ``not_assessable`` in any column."""
    if is_tally(table):
        return table[PARTIAL].astype(bool)
    return (table == NOT_ASSESSABLE).any(axis=1)


def value_counts(values: pd.Series, weights: pd.Series | None) -> pd.Series:
    """``values.value_counts()`` with each row counted ``weights`` times (None: once).

    ``weights`` are positional (``values`` may repeat an index, as an exploded column does).
    Same order as pandas' (by count, descending; ties in order of first appearance, which a
    tally keeps); missing values are left out.
    """
    import pandas as pd

    if weights is None or len(values) == 0:
        return values.value_counts()
    counts = pd.Series(weights.to_numpy()).groupby(values.to_numpy(), sort=False, dropna=True).sum()
    return counts.sort_values(ascending=False, kind="stable")


def tally_chunks(chunks: Iterable[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    """The tally over ``columns`` of a coded table read in ``chunks`` (index continuing)."""
    import pandas as pd

    parts = []
    for chunk in chunks:
        keys = chunk[list(columns)].copy()
        keys[PARTIAL] = (chunk == NOT_ASSESSABLE).any(axis=1)
        keys[FIRST] = chunk.index
        parts.append(_merged(keys, [*columns, PARTIAL], size=True))
    if not parts:
        empty = pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
        return empty.assign(
            **{
                PARTIAL: pd.Series(dtype=bool),
                FIRST: pd.Series(dtype="int64"),
                ROWS: pd.Series(dtype="int64"),
            }
        )
    tally = _merged(pd.concat(parts, ignore_index=True), [*columns, PARTIAL], size=False)
    return tally.sort_values(FIRST, kind="stable").reset_index(drop=True)


def _merged(frame: pd.DataFrame, keys: list[str], *, size: bool) -> pd.DataFrame:
    """One row per distinct ``keys`` (a missing value is a key): first row and row count.

    The rows are counted (``size``), or their :data:`ROWS` summed.
    """
    grouped = frame.groupby(keys, sort=False, dropna=False)
    if size:
        out = grouped[FIRST].agg(["min", "size"])
    else:
        out = grouped.agg(**{"min": (FIRST, "min"), "size": (ROWS, "sum")})
    return out.rename(columns={"min": FIRST, "size": ROWS}).reset_index()
