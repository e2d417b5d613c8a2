"""The leading zeros of the whole numbers inside an id: ``s007`` and ``s7`` written one way.

One file writes ``s007`` or ``claim-01`` where another writes ``s7`` or ``claim-1``: the same
unit, sentence or claim, compared exactly, became two. :func:`without_leading_zeros` writes
both alike so such a pair can be named (labels refuse it, ``agree`` says it).

Only whole numbers: a group of digits right after ``<digit>.`` is the fraction of a decimal
or a dotted version's later part (``v1.01``), where ``01`` and ``1`` are not one number
(1.01 and 1.1 differ; Perl versions read 1.01 < 1.1), so its zeros are kept. A version
scheme that reads ``1.01`` as ``1.1`` (PEP 440) is then compared exactly, as every id was
before zeros were folded: nothing is merged or refused as the same that may not be.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

#: Leading zeros of a whole number inside an id (``s007``, ``claim-01``, ``007``), kept for a
#: lone ``0`` and after ``<digit>.`` (``v1.01``: a fraction or a version's later part).
LEADING_ZEROS = re.compile(r"(?<![0-9])(?<![0-9]\.)0+(?=[0-9])")


def without_leading_zeros(text: str) -> str:
    """``text`` with the leading zeros of its whole numbers taken off (see the module)."""
    return LEADING_ZEROS.sub("", text)


def zero_twins(ids: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of distinct ids written alike once leading zeros are off (``'01'``, ``'1'``).

    The first id of each spelling met, then the other, in the order ``ids`` give them. Ids
    without a leading zero are not folded unless one has it (a study's question ids, each
    folded: ~55 ms per 100,000; the search for a zero first: a few).
    """
    ids = list(ids)
    search = LEADING_ZEROS.search
    if not any("0" in text and search(text) for text in ids):
        return []
    first: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for text in ids:
        seen = first.setdefault(without_leading_zeros(text), text)
        if seen != text:
            out.append((seen, text))
    return out


def question_twins_clause(pairs: Sequence[Sequence[str]]) -> str:
    """The first line's words on question ids told apart only by leading zeros ("" if none).

    As ``agree`` says of unit ids and labels refuse of sentence ids (a label meets one of
    them): such questions stay two, and the line says so. Questions are the cluster
    bootstrap's clusters and the counts of questions: question '01' of one file and '1' of
    another, one question, counted and resampled as two.
    """
    if not pairs:
        return ""
    shown = ", ".join(f"{a!r} and {b!r}" for a, b in pairs[:3])
    more = f" (and {len(pairs) - 3} more)" if len(pairs) > 3 else ""
    return (
        f"question ids that differ only in leading zeros are read as different questions "
        f"({shown}{more}): each a question of its own in the counts and the bootstrap's "
        "clusters; write them one "
        "way if they name one question"
    )
