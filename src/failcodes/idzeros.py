"""The leading zeros of the whole numbers inside an id: ``s007`` and ``s7`` written one way.

One file writes ``s007`` or ``claim-01`` where another writes ``s7`` or ``claim-1``: the same
unit, sentence or claim, compared exactly, became two. :func:`without_leading_zeros` writes
both alike so such a pair can be named (labels refuse it, ``agree`` says it).

Only whole numbers: a group of digits right after ``<digit>.`` is the fraction of a decimal
or a dotted version's later part (``v1.01``), where ``01`` and ``1`` are not one number
(1.01 and 1.1 differ; Perl versions read 1.01 < 1.1), so its zeros are kept. A version
scheme that reads ``1.01`` as ``1.1`` (PEP 440) is then compared exactly, as every id was
before zeros were folded: nothing is merged or refused as the same that may not be.

:func:`date_sources` goes the other way for one artefact: an id a spreadsheet read as a date
(``1-2`` opened in Excel is the 2nd of January, saved back as ``2-Jan``) names the ids it may
have been.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import permutations, product

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


#: An id as a spreadsheet writes the date it read it as: ``2-Jan``, ``02-Jan-24``, ``Jan-32``,
#: ``1/2/2024``, ``2024-01-02``, ``02.01.2024`` (parts split on ``-``, ``/``, ``.``, a space).
_DATE_PARTS = re.compile(r"[-/. ]")
#: The shape of such an id, to pick them out cheaply (``filter(SHOWN_DATE.fullmatch, ids)``):
#: a number and a month's name (and a year), or three numbers; :func:`date_sources` says
#: which are dates.
SHOWN_DATE = re.compile(
    r"[0-9]{1,2}[-/. ][A-Za-z]{3,9}(?:[-/. ][0-9]{2,4})?|[A-Za-z]{3,9}[-/. ][0-9]{1,4}"
    r"|[0-9]{1,4}[-/.][0-9]{1,4}[-/.][0-9]{1,4}"
)
#: Such a part inside an id, between its ends or characters no date holds (``2-Jan:s0``: a
#: question id ``1-2`` saved as a date, then ``:s0``).
DATED_PART = re.compile(rf"(?<![A-Za-z0-9])(?:{SHOWN_DATE.pattern})(?![A-Za-z0-9])")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def date_sources(text: str) -> list[str]:
    """The ids a spreadsheet may have read as the date ``text`` shows ([] if it shows none).

    Excel reads a cell ``1-2`` or ``1/2`` as a date (the 2nd of January; the 1st of February
    where days come first) and saves the CSV as it shows it, ``2-Jan`` (``1-32``: January
    1932, ``Jan-32``; ``1-2-2024``: ``1/2/2024``; ``2024-01-02`` likewise). A date shown with
    a month's name (``2-Jan``, ``Jan-32``, ``2-Jan-24``), or by three numbers with a
    four-digit year or slashes (``1/2/2024``, ``2024-01-02``, ``02.01.2024``), gives its
    numbers in every order, joined by ``-``, ``/`` or ``.``, each as written and padded to two
    digits, a year also by its last two digits (a two-digit one also as 19xx and 20xx): a
    superset of what was typed, for a caller to look up among ids it knows.
    """
    if SHOWN_DATE.fullmatch(text) is None:
        return []
    parts = _DATE_PARTS.split(text)
    named = [p for p in parts if not p.isdigit()]
    if named:
        if len(named) > 1 or named[0][:3].lower() not in _MONTHS or len(named[0]) < 3:
            return []
        numbers = [str(_MONTHS.index(p[:3].lower()) + 1) if p in named else p for p in parts]
    elif len(parts) == 3 and ("/" in text or any(len(p) == 4 for p in parts)):
        numbers = parts
    else:
        return []
    if not all(n.isdigit() and len(n) in (1, 2, 4) for n in numbers):
        return []
    forms = [_number_forms(n) for n in numbers]
    out: set[str] = set()
    for order in permutations(range(len(numbers))):
        for chosen in product(*(forms[i] for i in order)):
            out.update(sep.join(chosen) for sep in "-/.")
    out.discard(text)
    return sorted(out)


def date_variants(text: str) -> list[str]:
    """``text`` with its first date-shaped part written as each id :func:`date_sources` gives.

    ``2-Jan:s0`` gives ``1-2:s0`` among others (sentence 0 of question ``1-2``, whose id a
    spreadsheet read as a date); ``2-Jan`` alone, ``1-2``. [] when no part shows a date.
    """
    found = DATED_PART.search(text)
    if found is None:
        return []
    head, tail = text[: found.start()], text[found.end() :]
    return [head + source + tail for source in date_sources(found.group())]


def _number_forms(number: str) -> set[str]:
    """A date's number as an id may have written it: as is, unpadded, padded, a year's two ways."""
    n = int(number)
    forms = {number, str(n), f"{n:02d}"}
    if len(number) == 4:  # 1-2-3 read as 2 January 2003, shown 1/2/2003
        forms.update({number[2:], str(int(number[2:]))})
    elif len(number) == 2:
        forms.update({f"19{number}", f"20{number}"})
    return forms
