"""The RtV verdict judge: protocol, canonical labels, quote check, offline heuristic judge.

A judge receives one item and its retrieved chunks and returns one of four verdicts, a
verbatim quote (checked by :func:`quote_in_passages`) and a rationale; any object with
``name``, ``heuristic`` and ``judge(item, passages)`` is one (:class:`VerdictJudge`; the LLM
judge: :mod:`failcodes.rtv.llm_judge`), and an unparsable answer raises
:class:`UnscoredAnswerError` (the item is unscored, never defaulted): docs/rtv.md, step 3. The
offline judge is a heuristic baseline, not a model, and is labelled so in its name and in
every rationale it writes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol, runtime_checkable

from failcodes.contract import FrozenModel
from failcodes.errors import FailcodesError
from failcodes.rtv.items import RtvItem
from failcodes.rtv.retrieval import RetrievedChunk
from failcodes.verdicts import Verdict


class RtvVerdict(StrEnum):
    """Seed 000's four verification verdicts."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    NOT_FOUND = "not found"
    OUT_OF_SCOPE = "out of scope"

    @property
    def canonical(self) -> Verdict:
        """The failcodes canonical verdict (contradicted -> refuted, not found -> no_evidence)."""
        return _CANONICAL[self]


_CANONICAL = {
    RtvVerdict.SUPPORTED: Verdict.SUPPORTED,
    RtvVerdict.CONTRADICTED: Verdict.REFUTED,
    RtvVerdict.NOT_FOUND: Verdict.NO_EVIDENCE,
    RtvVerdict.OUT_OF_SCOPE: Verdict.OUT_OF_SCOPE,
}

_FREE_TEXT = {
    "supported": RtvVerdict.SUPPORTED,
    "support": RtvVerdict.SUPPORTED,
    "contradicted": RtvVerdict.CONTRADICTED,
    "contradicts": RtvVerdict.CONTRADICTED,
    "contradiction": RtvVerdict.CONTRADICTED,
    "not found": RtvVerdict.NOT_FOUND,
    "not_found": RtvVerdict.NOT_FOUND,
    "notfound": RtvVerdict.NOT_FOUND,
    "out of scope": RtvVerdict.OUT_OF_SCOPE,
    "out_of_scope": RtvVerdict.OUT_OF_SCOPE,
    "out-of-scope": RtvVerdict.OUT_OF_SCOPE,
}


class UnscoredAnswerError(FailcodesError):
    """A judge answer that cannot be mapped to a verdict (kept as unscored with the reason)."""


def parse_verdict(raw: str) -> RtvVerdict:
    """Normalise a judge's free-text verdict to the canonical label, or raise (never default)."""
    key = " ".join(raw.strip().strip(".\"'").lower().replace("-", " ").split())
    if key in _FREE_TEXT:
        return _FREE_TEXT[key]
    raise UnscoredAnswerError(
        f"unknown verdict {raw!r} (expected supported, contradicted, not found or out of scope)"
    )


class JudgeDecision(FrozenModel):
    """What a judge returns for one item."""

    verdict: RtvVerdict
    quote: str
    rationale: str
    raw: str | None = None


@runtime_checkable
class VerdictJudge(Protocol):
    """Anything that can verify one item against its retrieved chunks."""

    name: str
    heuristic: bool

    def judge(self, item: RtvItem, passages: Sequence[RetrievedChunk]) -> JudgeDecision:
        """Return the verdict, verbatim quote and one-sentence rationale for ``item``."""


def _norm(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.lower().split())


def quote_in_passages(quote: str, passages: Sequence[RetrievedChunk]) -> bool:
    """True if the (non-empty) quote occurs verbatim in one retrieved chunk (normalised)."""
    q = _norm(quote)
    return bool(q) and any(q in _norm(p.chunk.text) for p in passages)


# ---------------------------------------------------------------- offline heuristic judge

_STOP = frozenset(
    """
    a an the and or of to in on for with by from at as is are was were be been being this that
    these those it its their there which who whom what when where how than then also into onto
    about over under after before between during trial study report reported authors
    participants yes probably
    """.split()  # noqa: SIM905
)
_NEGATION = frozenset(
    """
    not no never without none neither nor cannot unclear absent lack lacking
    """.split()  # noqa: SIM905
)
_NO_CLAIM = frozenset(
    {"no information", "not applicable", "n/a", "na", "ni", "none", "not reported", ""}
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENT = re.compile(r"(?<=[.!?])\s+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _content(text: str) -> set[str]:
    return {w for w in _words(text) if (len(w) >= 3 or w.isdigit()) and w not in _STOP}


def _negated(text: str) -> bool:
    return any(w in _NEGATION or w.endswith("n't") for w in _words(text))


def _numbers(text: str) -> set[str]:
    return {w for w in _words(text) if any(ch.isdigit() for ch in w)}


class OfflineHeuristicJudge:
    """Deterministic rule-based judge: a heuristic baseline, NOT a language model.

    Rules, in order: (1) a response that asserts nothing checkable (no information / not
    applicable / empty) -> out of scope; (2) the claim's content words are those of the
    explanation (or of the response when there is none); the best retrieved sentence is the one
    covering most of them (ties: better rank, earlier sentence); (3) coverage below
    ``min_coverage`` -> not found; (4) otherwise contradicted if exactly one of claim and
    sentence carries a negation cue, or if the sentence has numbers and a number of the claim
    is not among them; else supported.
    The quote is the best sentence verbatim (empty for not found / out of scope).
    """

    heuristic = True

    def __init__(self, min_coverage: float = 0.5) -> None:
        self.min_coverage = min_coverage
        self.name = "offline-heuristic (heuristic baseline, not an LLM)"

    def judge(self, item: RtvItem, passages: Sequence[RetrievedChunk]) -> JudgeDecision:
        """Apply the rules of the class docstring to one item."""
        tag = "Heuristic baseline: "
        if item.response.strip().lower() in _NO_CLAIM:
            return JudgeDecision(
                verdict=RtvVerdict.OUT_OF_SCOPE,
                quote="",
                rationale=tag + f"the response {item.response!r} asserts nothing checkable.",
            )
        claim_text = (
            item.explanation if item.explanation and item.explanation.strip() else item.response
        )
        words = _content(claim_text)
        if not words:
            return JudgeDecision(
                verdict=RtvVerdict.OUT_OF_SCOPE,
                quote="",
                rationale=tag + "the explanation has no content word to check.",
            )
        best: tuple[float, str] = (0.0, "")
        for p in sorted(passages, key=lambda r: r.rank):
            for sent in _SENT.split(p.chunk.text):
                cov = len(words & _content(sent)) / len(words)
                if cov > best[0]:
                    best = (cov, sent.strip())
        coverage, sentence = best
        shared = round(coverage * len(words))
        if coverage < self.min_coverage:
            return JudgeDecision(
                verdict=RtvVerdict.NOT_FOUND,
                quote="",
                rationale=tag
                + f"no retrieved sentence covers at least {self.min_coverage:.0%} of the "
                f"explanation's {len(words)} content words (best {shared}).",
            )
        neg_mismatch = _negated(claim_text) != _negated(sentence)
        cn, sn = _numbers(claim_text), _numbers(sentence)
        num_mismatch = bool(sn) and bool(cn - sn)
        if neg_mismatch or num_mismatch:
            why = "negation differs" if neg_mismatch else "numbers differ"
            return JudgeDecision(
                verdict=RtvVerdict.CONTRADICTED,
                quote=sentence,
                rationale=tag
                + f"the quoted sentence shares {shared} of {len(words)} content words but its "
                f"{why}.",
            )
        return JudgeDecision(
            verdict=RtvVerdict.SUPPORTED,
            quote=sentence,
            rationale=tag
            + f"the quoted sentence shares {shared} of {len(words)} content words with the "
            "explanation, with matching negation and numbers.",
        )
