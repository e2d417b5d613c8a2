"""One name or text written two ways: case, runs of spaces and Unicode form folded.

``Yes`` and ``yes``, ``Dr  A`` and ``dr a``, a precomposed ``é`` and ``e`` with a combining
accent are each one key: :func:`spelling_key` writes both alike so a table can name (and
refuse) the pair, and a label rule compare two rows' texts; :func:`names_a_total` tells an id
that names a row of totals (a ratings table's, a labels table's). A leaf: no import beyond
the standard library, so the ingest path folds text without the statistics' pandas.
"""

from __future__ import annotations

import unicodedata


def spelling_key(text: str) -> str:
    """``text`` with case, runs of spaces and Unicode form folded: one name written two ways."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


#: Unit ids that name a row of totals or summaries under the units (compared as
#: :func:`spelling_key` writes them, without a trailing ``:``).
TOTAL_WORDS = frozenset(
    {
        "total",
        "totals",
        "grand total",
        "subtotal",
        "sum",
        "sums",
        "mean",
        "means",
        "average",
        "avg",
        "median",
        "overall",
        "count",
        "counts",
        "n",
        "sd",
        "std",
        "kappa",
        "agreement",
        "% agreement",
    }
)


def names_a_total(unit: str) -> bool:
    """True when a unit id names a total (:data:`TOTAL_WORDS`; not ``N``, a letter among ids)."""
    word = spelling_key(unit).rstrip(":")
    return len(word) > 1 and word in TOTAL_WORDS
