"""Canonical verifier verdicts and the alias tables that map pipelines' raw labels onto them."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from failcodes.errors import ConfigError, InputError
from failcodes.numbertext import whole_number_text
from failcodes.spelling import unseen_note


class Verdict(StrEnum):
    """The five canonical verdicts every pipeline's output is mapped onto."""

    SUPPORTED = "supported"
    REFUTED = "refuted"
    NO_EVIDENCE = "no_evidence"
    AMBIGUOUS = "ambiguous"
    OUT_OF_SCOPE = "out_of_scope"


#: Raw labels of the seeds' pipelines, matched case-insensitively after trimming.
#: MedScore (True/False), MedExpert pipeline (Supported/Refuted/No Evidence/Ambiguous),
#: seed 000's RtV evaluator (supported/contradicted/not found/out of scope), seed 003
#: (TRUE/FALSE), SciFact/MultiVerS (SUPPORT/CONTRADICT/NEI), HealthVer (Supports/Refutes/Neutral),
#: RAGChecker (Entailment/Contradiction/Neutral).
DEFAULT_ALIASES: dict[str, Verdict] = {
    "supported": Verdict.SUPPORTED,
    "support": Verdict.SUPPORTED,
    "supports": Verdict.SUPPORTED,
    "true": Verdict.SUPPORTED,
    "entailment": Verdict.SUPPORTED,
    "refuted": Verdict.REFUTED,
    "refutes": Verdict.REFUTED,
    "false": Verdict.REFUTED,
    "contradicted": Verdict.REFUTED,
    "contradict": Verdict.REFUTED,
    "contradiction": Verdict.REFUTED,
    "no_evidence": Verdict.NO_EVIDENCE,
    "no evidence": Verdict.NO_EVIDENCE,
    "not found": Verdict.NO_EVIDENCE,
    "not_found": Verdict.NO_EVIDENCE,
    "nei": Verdict.NO_EVIDENCE,
    "not enough info": Verdict.NO_EVIDENCE,
    "not_enough_info": Verdict.NO_EVIDENCE,  # FEVER-style spelling, as no_evidence/not_found
    "neutral": Verdict.NO_EVIDENCE,
    "ambiguous": Verdict.AMBIGUOUS,
    "out_of_scope": Verdict.OUT_OF_SCOPE,
    "out of scope": Verdict.OUT_OF_SCOPE,
}

#: Marks of a missing value a table writer leaves (R's write.csv ``NA``, Excel's ``#N/A``).
#: Not ``none`` or ``-``, which label sheets use for "no error".
MISSING_MARKS = frozenset({"na", "n/a", "#n/a", "nan", "null"})
#: In a verdict column, a row without a verdict (as an empty cell) unless ``--alias`` names
#: it: those and a spreadsheet's ``-``, a program's ``None``.
NO_VERDICT_MARKS = MISSING_MARKS | {"-", "none"}
#: The way through for rows with no verdict (a missing mark, a blank, a JSON null).
NO_VERDICT_WAY = "`ingest generic --option no_verdict=drop` leaves such rows out"


def normalize_verdict(
    raw: object,
    aliases: Mapping[str, Verdict] | None = None,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    field: str = "verdict",
) -> Verdict:
    """Map a raw verdict onto :class:`Verdict`, or raise an :class:`InputError` naming it.

    ``aliases`` extends (and may override) :data:`DEFAULT_ALIASES`; keys are compared
    case-insensitively and in one Unicode form (NFC: "möglicherweise Nein" typed composed
    names the decomposed words a macOS export writes, refused as unknown before). A whole
    number (a numeric class code) is looked up as its decimal text, so
    ``{"0": Verdict.SUPPORTED}`` maps ``0``, ``0.0`` and the text ``"0.0"`` (a text key of its
    own first). An unknown value is never defaulted.
    """
    table = dict(DEFAULT_ALIASES)
    if aliases:
        table.update({_text_key(k): v for k, v in aliases.items()})
    if isinstance(raw, Verdict):
        return raw
    if isinstance(raw, bool):
        key = "true" if raw else "false"
    elif isinstance(raw, str):
        key = _text_key(raw)
    elif isinstance(raw, int) or (isinstance(raw, float) and raw.is_integer()):
        # numeric class codes (0/1/2): matched as their decimal text, so --alias 0=supported
        # maps them; a float column that holds whole numbers (pandas, after a NaN) counts too
        key = str(int(raw))
    else:
        way = ""
        if isinstance(raw, dict):  # {"label": "SUPPORTS", "score": 0.9}: a JSON object
            way = (
                f"; flatten the records first, as pandas.json_normalize does, then `failcodes "
                f"ingest generic` with --map {field}.KEY=verdict"
            )
        raise InputError(
            f"expected a verdict string, got {type(raw).__name__} {raw!r}{way}",
            path=path,
            line=line,
            field=field,
        )
    whole = whole_number_text(raw) if isinstance(raw, str) else None
    try:
        # a code written as a float ('2.0': a CSV of a column pandas made float) is the code
        return table[key] if key in table or whole is None else table[whole]
    except KeyError:
        known = ", ".join(sorted({v.value for v in Verdict}))
        way = "map it with `failcodes ingest --alias RAW=CANONICAL`"
        if not key or key in NO_VERDICT_MARKS:  # R's NA, a blank: no verdict, no alias says
            way = f"a missing mark: {NO_VERDICT_WAY}"
        elif field is not None and key == _text_key(field):  # 'cat a.csv b.csv', read directly
            way = "the header again (its column's name): two files appended? delete the row"
        elif _is_score(key):  # 0.83: a support score or probability, not a label
            way = (
                "a number between 0 and 1: a score (an NLI or support probability)? `failcodes "
                "ingest generic` reads the column mapped to verdict as scores with --option "
                f"verdict_threshold=0.5; a class code: {way}"
            )
        elif key.rstrip(".!?;:,") in table:  # 'Supported.': a sentence's full stop
            word = key.rstrip(".!?;:,")
            way = f"{word!r} with punctuation: {way} ('{str(raw).strip()}={table[word].value}')"
        raise InputError(
            f"unknown verdict {raw!r}{unseen_note(raw)} (canonical verdicts: {known}; {way})",
            path=path,
            line=line,
            field=field,
        ) from None


def _text_key(text: str) -> str:
    """A verdict's text as looked up: trimmed, one Unicode form (NFC), lower case."""
    return unicodedata.normalize("NFC", text.strip()).lower()


#: Default aliases other than a canonical verdict's own words: said where read (a detector's
#: true, FEVER's NOT ENOUGH INFO, NLI's neutral), as data may mean them otherwise.
_SAID = frozenset(k for k, v in DEFAULT_ALIASES.items() if k.replace(" ", "_") != v.value)


def alias_word(raw: object, aliased: frozenset[str] = frozenset()) -> str | None:
    """The default alias ``raw`` is read by (``'true'``, ``'nei'``...), or None.

    None for a canonical verdict's own words and for a word ``aliased`` (``--alias`` keys, as
    :func:`_text_key` writes them) names.
    """
    if isinstance(raw, bool):
        key = "true" if raw else "false"
    elif isinstance(raw, str):
        key = _text_key(raw)
    else:
        return None
    return key if key in _SAID and key not in aliased else None


def aliased_keys(aliases: Mapping[str, object]) -> frozenset[str]:
    """``--alias`` keys as :func:`alias_word` compares them (true or false names both)."""
    keys = frozenset(_text_key(str(k)) for k in aliases)
    return keys | {"true", "false"} if keys & {"true", "false"} else keys


#: How :func:`truths_line`'s two sentences begin: ``failcodes run`` says them beside the log.
READ_MARKS = ("verdict(s) true/false read as", "verdicts read by the default aliases")


def truths_line(counts: Mapping[str, int], way: str = "give") -> str:
    """What reading verdicts by the default aliases assumed (``counts``: per alias word).

    A detector's true (hallucinated) read as supported inverts every count (TP 0, FP 1, FN 1,
    TN 0 for TP 1, TN 1); FEVER's or NLI's words were read with no word at all (a reader whose
    NEI meant something else was not told). ``way``: how the aliases are given.
    """
    said = []
    count = counts.get("true", 0) + counts.get("false", 0)
    if count:
        said.append(
            f"{count:,} verdict(s) true/false read as supported/refuted (true: the claim "
            f"holds); if true marks an error, {way} --alias true=refuted --alias false=supported"
        )
    words = sorted(w for w in counts if w not in ("true", "false") and counts[w])
    if words:
        read = ", ".join(f"{w!r} as {DEFAULT_ALIASES[w].value} ({counts[w]:,})" for w in words)
        said.append(
            f"verdicts read by the default aliases: {read}; if one means otherwise, {way} "
            "--alias WORD=CANONICAL"
        )
    return "; ".join(said)


#: ``raw_verdict`` of a claim whose verdict the pipeline asserted rather than verified (a
#: long-form answer's claims, no verifier): ``ingest --verdict supported``. Reviewers see
#: "supported (asserted by the system, no verifier)", not a verifier's word.
ASSERTED = "asserted by the system"


def parse_verdict_declarations(values: Sequence[str]) -> dict[str, Verdict]:
    """Parse ``--verdict`` values: ``supported`` (every system) or ``SYSTEM=supported``.

    Returns system -> verdict, with ``"*"`` for the plain form (as ``--evidence``). A value
    that is not a canonical verdict, or a system declared twice, is a ConfigError.
    """
    return per_system(values, Verdict, ("--verdict", "VERDICT", "a canonical verdict"))


_E = TypeVar("_E", bound=StrEnum)


def per_system(values: Sequence[str], kind: type[_E], words: tuple[str, str, str]) -> dict[str, _E]:
    """Parse ``VALUE`` (key ``"*"``: every system) or ``SYSTEM=VALUE`` option values.

    ``words``: the option, its value's name and what a value of ``kind`` is, for the errors.
    """
    option, name, what = words
    known = ", ".join(v.value for v in kind)
    out: dict[str, _E] = {}
    for item in values:
        system, sep, value = item.rpartition("=")
        key = system.strip() if sep else "*"
        if sep and not key:
            raise ConfigError(f"{option} expects {name} or SYSTEM={name}, got {item!r}")
        try:
            parsed = kind(value.strip())
        except ValueError:
            raise ConfigError(
                f"{option} {item!r}: {value.strip()!r} is not {what} ({known})"
            ) from None
        if key in out:
            who = "every system" if key == "*" else f"system {key!r}"
            raise ConfigError(f"{option} given twice for {who}")
        out[key] = parsed
    return out


def _is_score(key: str) -> bool:
    """Whether a verdict cell is a fraction between 0 and 1 (``0.83``, ``.5``), not a code.

    A verifier's probability column given as the verdict was refused with the alias way
    alone (one ``--alias 0.83=...`` per score).
    """
    try:
        value = float(key)
    except ValueError:
        return False
    return 0 < value < 1
