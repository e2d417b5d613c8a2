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

from failcodes.spelling import lookalike

#: Leading zeros of a whole number inside an id (``s007``, ``claim-01``, ``007``), kept for a
#: lone ``0`` and after ``<digit>.`` (``v1.01``: a fraction or a version's later part).
LEADING_ZEROS = re.compile(r"(?<![0-9])(?<![0-9]\.)0+(?=[0-9])")


def without_leading_zeros(text: str) -> str:
    """``text`` with the leading zeros of its whole numbers taken off (see the module)."""
    return LEADING_ZEROS.sub("", text)


def spelled_twins(ids: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of distinct ids written alike but for leading zeros, case, spacing or Unicode form.

    ``01`` and ``1``, ``q1`` and ``Q1``, ``café`` composed and decomposed, ``q1`` and ``q1``
    with a zero-width space (:func:`failcodes.spelling.lookalike`): question ids of one
    answer written two ways were two questions in the counts and the bootstrap's clusters
    (questions 3 for 2, exit 0; leading zeros alone were said). The first id of each
    spelling met, then the other, in the order ``ids`` give them. ASCII ids are folded by
    ``lower``, zeros only in an id holding a ``0``, spacing only in one holding two spaces
    or another space (100,000 question ids: a set of the folded ids, then nothing more
    where none falls together).
    """
    ids = list(ids)
    keys = [_spelled(text) for text in ids]
    if len(set(keys)) == len(set(ids)):
        return []
    first: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for text, key in zip(ids, keys, strict=True):
        seen = first.setdefault(key, text)
        if seen != text:
            out.append((seen, text))
    return out


def _spelled(text: str) -> str:
    """``text`` folded as :func:`spelled_twins` compares ids."""
    folded = single_spaced(text.lower() if text.isascii() else lookalike(text).casefold())
    return without_leading_zeros(folded) if "0" in folded else folded


#: Two spaces, or a space other than ' ', inside an id.
_SPACED = re.compile(r"\s\s|[^\S ]")


def single_spaced(text: str) -> str:
    """``text`` with each run of spacing as one ' ' (``'q1  s2'``, a tab, a line break inside).

    Returned as it is (no copy) where it holds no such run: the common case of an id.
    """
    return " ".join(text.split()) if _SPACED.search(text) else text


def _how(a: str, b: str) -> str:
    """How two twins differ: leading zeros, case, spacing or Unicode form."""
    a, b = without_leading_zeros(a), without_leading_zeros(b)
    if a == b:
        return "leading zeros"
    if a.split() == b.split():
        return "spacing"
    return "case" if a.casefold() == b.casefold() else "Unicode form"


def question_twins_clause(pairs: Sequence[Sequence[str]]) -> str:
    """The first line's words on question ids told apart only by spelling ("" if none).

    As ``agree`` says of unit ids and labels refuse of sentence ids (a label meets one of
    them): such questions stay two, and the line says so. Questions are the cluster
    bootstrap's clusters and the counts of questions: question '01' of one file and '1' of
    another (or 'q1' and 'Q1'), one question, counted and resampled as two.
    """
    if not pairs:
        return ""
    shown = ", ".join(f"{a!r} and {b!r}" for a, b in pairs[:3])
    more = f" (and {len(pairs) - 3} more)" if len(pairs) > 3 else ""
    kinds = list(dict.fromkeys(sorted((_how(a, b) for a, b in pairs), key=_KINDS.index)))
    how = " or ".join(kinds)
    return (
        f"question ids that differ only in {how} are read as different questions "
        f"({shown}{more}): each a question of its own in the counts and the bootstrap's "
        "clusters; write them one "
        "way if they name one question"
    )


#: The ways two question ids may differ, in the order the first line names them.
_KINDS = ["leading zeros", "case", "spacing", "Unicode form"]
