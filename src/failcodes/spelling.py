"""One name or text written two ways: case, runs of spaces and Unicode form folded.

``Yes`` and ``yes``, ``Dr  A`` and ``dr a``, a precomposed ``é`` and ``e`` with a combining
accent are each one key: :func:`spelling_key` writes both alike so a table can name (and
refuse) the pair, and a label rule compare two rows' texts. A leaf: no import beyond the
standard library, so the ingest path folds text without the statistics' pandas.
"""

from __future__ import annotations

import unicodedata


def spelling_key(text: str) -> str:
    """``text`` with case, runs of spaces and Unicode form folded: one name written two ways."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


__all__ = ["spelling_key"]
