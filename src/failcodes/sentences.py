"""Deterministic sentence splitting with character offsets, and the answer-sentence model.

The rule is docs/trace-format.md's "Sentence splitting" (line breaks always end a sentence;
``.``/``!``/``?`` then whitespace does unless after an abbreviation of :data:`ABBREVIATIONS`, an
initial or before a lower-case word); ``text[start:end] == sentence`` exactly. Same input,
same output, on every machine: no model, no locale, no external data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import Field

from failcodes.contract import FrozenModel

#: Words that end in "." without ending a sentence (lower case, without the final dot;
#: ``al``: et al.).
ABBREVIATIONS: frozenset[str] = frozenset(
    """
    dr mr mrs ms prof sr jr st vs v e.g i.e cf al approx fig figs no nos vol ref refs resp min
    max a.m p.m u.s u.k inc ltd co
    """.split()  # noqa: SIM905
)

_CLOSERS = "\"'\u201d\u2019)]*_"
_LINE = re.compile(r"[^\n]+")
# End punctuation, optional closers, then whitespace (the boundary is after the closers).
_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]*_]*(?=\s)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")


@dataclass(frozen=True)
class Span:
    """One sentence of a text: ``text == source[start:end]``."""

    start: int
    end: int
    text: str


def _is_abbreviation(chunk: str) -> bool:
    """True if ``chunk`` (text up to and including a single final '.') ends in an abbreviation."""
    match = _WORD_BEFORE.search(chunk)
    if match is None:
        return False
    word = match.group(1)
    if len(word) == 1 and word.isupper():  # an initial: "J. Smith"
        return True
    return word.lower() in ABBREVIATIONS


def split_sentences(text: str) -> list[Span]:
    """Split ``text`` into sentences by the documented rule, keeping exact character offsets."""
    spans: list[Span] = []
    for line in _LINE.finditer(text):
        line_start = line.start()
        body = line.group(0)
        cut = 0
        for end in _END.finditer(body):
            stop = end.end()
            punct = end.group(0)
            rest = body[stop:].lstrip()
            single_dot = punct.startswith(".") and len(punct.rstrip(_CLOSERS)) == 1
            if single_dot and _is_abbreviation(body[cut : end.start() + 1]):
                continue
            if rest[:1].islower():
                continue
            _add(spans, text, line_start + cut, line_start + stop)
            cut = stop
        _add(spans, text, line_start + cut, line_start + len(body))
    return spans


def _add(spans: list[Span], text: str, start: int, end: int) -> None:
    """Append the trimmed span ``text[start:end]`` unless it is blank."""
    chunk = text[start:end]
    stripped = chunk.strip()
    if not stripped:
        return
    lead = len(chunk) - len(chunk.lstrip())
    begin = start + lead
    spans.append(Span(begin, begin + len(stripped), stripped))


class Sentence(FrozenModel):
    """One answer sentence, as split from an answer: the unit clinicians label."""

    question_id: str = Field(description="The question (or answer document) it belongs to.")
    sentence_id: str = Field(description="Unique sentence id (question id + ':s' + index).")
    index: int = Field(ge=0, description="0-based position of the sentence in the answer.")
    start: int = Field(ge=0, description="Character offset of the first character.")
    end: int = Field(ge=0, description="Character offset one past the last character.")
    text: str = Field(description="The sentence text, exactly answer[start:end].")
    question: str | None = Field(default=None, description="The question text, if known.")


def sentence_id(question_id: str, index: int) -> str:
    """Return the id of the ``index``-th (0-based) sentence of an answer: ``'{qid}:s{index}'``."""
    return f"{question_id}:s{index}"


def answer_sentences(
    question_id: str, answer: str, *, question: str | None = None
) -> list[Sentence]:
    """Split ``answer`` and return its sentences with ids, offsets and texts."""
    return [
        Sentence(
            question_id=question_id,
            sentence_id=sentence_id(question_id, i),
            index=i,
            start=span.start,
            end=span.end,
            text=span.text,
            question=question,
        )
        for i, span in enumerate(split_sentences(answer))
    ]
