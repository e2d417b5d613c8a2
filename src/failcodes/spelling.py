"""One name or text written two ways: case, runs of spaces and Unicode form folded.

``Yes`` and ``yes``, ``Dr  A`` and ``dr a``, a precomposed ``é`` and ``e`` with a combining
accent are each one key: :func:`spelling_key` writes both alike so a table can name (and
refuse) the pair, and a label rule compare two rows' texts; :func:`names_a_total` tells an id
that names a row of totals (a ratings table's, a labels table's). A leaf: no import beyond
the standard library, so the ingest path folds text without the statistics' pandas.
"""

from __future__ import annotations

import re
import unicodedata

#: Characters that show as nothing: soft hyphen, zero-width space and joiners, direction marks,
#: word joiner, byte-order mark (Unicode's format characters met in pasted text): 'ye\u200bs'
#: beside 'yes' was a category of its own, percent 0.500 for 0.583, with no word.
_UNSEEN = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def spelling_key(text: str) -> str:
    """``text`` with case, runs of spaces, Unicode form and unseen characters folded."""
    return " ".join(_UNSEEN.sub("", unicodedata.normalize("NFC", text)).casefold().split())


#: Dashes a name may be typed with for ``-`` (hyphen, non-breaking hyphen, en and em dash,
#: minus...): ``GPT–4o`` beside ``GPT-4o`` was scored as a second system that looks the same.
_DASHES = str.maketrans(
    dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d", "-")
)


#: Cyrillic and Greek letters drawn as a Latin one (Unicode's confusables, those of one
#: letter): ``gpt-4о`` with a Cyrillic ``о`` (a name pasted from a paper or a web page) beside
#: ``gpt-4o`` was scored as a second system that looks the same, each with half the answers
#: (a spurious row TP 0, FN 2, TN 2, exit 0); NFKC keeps them apart.
_HOMOGLYPHS = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501\u04bb\u051b\u051d\u04cf"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405\u0423"
    "\u03bf\u03bd\u03c1\u03b9\u03ba"
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
    "aeopcyxijsdhqwlABEKMHOPCTXIJSYovpikABEZHIKMNOPTYX",
)


def lookalike(text: str) -> str:
    """``text`` as it shows: NFKC, unseen characters left out, dashes written ``-``; case kept.

    NFKC writes a fullwidth ``ｓ`` or ``：`` as ``s``, ``:``; a Cyrillic or Greek letter drawn as
    a Latin one is written as that letter (:data:`_HOMOGLYPHS`).

    An id pasted with a zero-width space after it, or typed in an East Asian input method's
    fullwidth form, names no trace's sentence though it looks like one (t24red1).
    """
    shown = _UNSEEN.sub("", unicodedata.normalize("NFKC", text))
    return shown.translate(_DASHES).translate(_HOMOGLYPHS)


def first_unseen_difference(text: str, other: str) -> str | None:
    """The first character of ``text`` or ``other`` that :func:`lookalike` folds, as ``U+XXXX``.

    For a message naming two ids that look alike (None when neither has such a character),
    with the character's Unicode name (``U+043E CYRILLIC SMALL LETTER O``): the code point
    alone left the reader to look it up.
    """
    for ch in text + other:
        if lookalike(ch) != unicodedata.normalize("NFC", ch):
            return f"U+{ord(ch):04X} {unicodedata.name(ch, 'a format character')}"
    return None


def two_ways(text: str, other: str) -> str:
    """How ``text`` and ``other`` (one :func:`name_key`) differ, for a refusal's parenthesis.

    ``case, spacing or Unicode form``, or the look-alike character named: ``gpt-4о`` beside
    ``gpt-4o`` was refused as written another way "(case, spacing or Unicode form)", which
    the two names, alike to the eye, are not (a Cyrillic ``о``).
    """
    odd = first_unseen_difference(text, other)
    if odd is None:
        return "case, spacing or Unicode form"
    return f"a character that looks like another: {odd}"


#: Characters that show as a space and are not one (no-break, thin, figure, ideographic...).
_ODD_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")


def unseen_note(text: object) -> str:
    r"""A clause naming the first invisible character of ``text``, or ``''``.

    For a value refused as no word of a fixed vocabulary (a verdict, a label, a code): a
    ``No\u00a0Evidence`` pasted from a web page or a word processor was refused as
    ``'No\xa0Evidence'``, which a reader takes for the very words asked for. The clause names
    the character (``U+00A0 NO-BREAK SPACE``) and how it shows.
    """
    if not isinstance(text, str):
        return ""
    found = _ODD_SPACES.search(text) or _UNSEEN.search(text)
    if found is None:
        return ""
    ch = found.group()
    shows = "a space" if _ODD_SPACES.match(ch) else "nothing"
    name = unicodedata.name(ch, "a format character")
    return (
        f"; it holds U+{ord(ch):04X} {name}, which shows as {shows} (pasted from a web page "
        "or a word processor?): retype the value"
    )


def name_key(name: str) -> str:
    """A system's name as :func:`spelling_key` folds it, as it shows (:func:`lookalike`).

    Its dashes written ``-`` and NFKC: ``ｇｐｔ`` typed fullwidth in one file beside ``gpt`` in
    another was scored as a second system, each with half the answers (n 2 and n 2 for one
    system's n 4, exit 0). A column name too (:func:`~failcodes.tableio.header_hint`): a
    zero-width space pasted after ``verdict`` showed the refused name as the expected one.
    """
    return spelling_key(lookalike(name))


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
