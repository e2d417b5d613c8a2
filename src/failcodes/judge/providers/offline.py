"""The ``offline`` judge: a deterministic, rule-based **heuristic baseline** (no model).

It is labelled :attr:`CoderKind.HEURISTIC` and must be presented as a heuristic baseline
wherever its output appears. A dimension no rule recognises makes the unit unscored (with that
reason), never a default code. Its rules, per dimension: docs/architecture.md, "Module notes"
(and docs/judge.md).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from failcodes.annotations import NOT_ASSESSABLE, CoderKind
from failcodes.codebook import Dimension, Part
from failcodes.judge.providers.base import DirectResult
from failcodes.judge.schema import Answer, DimensionAnswer
from failcodes.traces import Passage
from failcodes.units import Unit, UnitKind
from failcodes.verdicts import Verdict

LABEL = "heuristic baseline"


def _words_of(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: A word: a run of Unicode letters and digits (with the combining marks of Latin, Hebrew,
#: Arabic and Indic scripts), read casefolded after NFC. Read as [a-z0-9] alone, German
#: 'Übelkeit' was 'belkeit' and 'für', 'Größe', French 'été', Spanish 'niño' were no word at
#: all: a claim with accents shared fewer words with its passage than the same text without
#: them, and its codes (and attribution) could differ. ASCII text reads exactly as before.
_WORD = re.compile(
    r"[\w\u0300-\u036f\u0591-\u05bd\u064b-\u065f\u0670\u0900-\u0963\u0966-\u0dff]+"
    r"(?:[.,][0-9]+)?"
)
#: A run of Chinese, Japanese or Korean script (and Thai, Lao: no spaces between words either):
#: the run is read as its character bigrams (a run of one character as itself). Read as
#: [a-z0-9] alone, a Chinese claim had no word: every passage was coded irrelevant, broader
#: scope and neutral, and (no capital to start on, no '.' to end on) truncated, so each
#: disagreement went to retrieval.
_CJK = re.compile(
    r"[\u0e00-\u0eff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
)
#: What splits words besides what _WORD leaves out: a CJK/Thai run (read as bigrams) and '_'
#: ([a-z0-9] split 'beta_blocker' in two; \w would not).
_NOT_WORD = re.compile(_CJK.pattern + "|_")
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])\s*(?=\S)")
#: A sentence's end in CJK text (the ideographic full stop, full-width ! and ?, closing quotes),
#: Devanagari (danda) and Arabic (question mark, Urdu full stop).
_CJK_ENDS = (
    "\u3002",
    "\uff01",
    "\uff1f",
    "\u3002\u300d",
    "\u3002\u300f",
    "\u3002\uff09",
    "\u0964",
    "\u061f",
    "\u06d4",
)
_STOP = _words_of(
    """
    a an the of in on at to for from by with and or but is are was were be been being it
    its this that these those as than then there their they them he she his her we our
    you your i not no nor do does did done has have had having can could may might must
    shall should will would which who whom whose what when where why how all any both
    each few more most other some such only own same so too very s t just also into over
    under about between through during before after above below up down out off again
    further once here if because while until
    """
)
_NEGATION = _words_of(
    """
    not no never none neither nor without cannot lack lacks absence absent fails
    """
)
_HEDGES = _words_of(
    """
    may might could possibly possible suggest suggests suggested likely unlikely unclear
    uncertain potentially appear appears seem seems limited preliminary
    """
)
_POPULATION = _words_of(
    """
    children child adults adult infants infant elderly older pregnant pregnancy women
    men adolescents adolescent neonates newborns patients mice rats animals
    """
)
#: Source / title cues of authoritative corpora (coded high on trust); ``scifact``: the SciFact
#: corpus, abstracts of peer-reviewed biomedical papers.
_TRUSTED = tuple(
    """
    pubmed pmc statpearls textbook guideline cochrane nih.gov .gov who.int nice.org cdc medic
    medrag uptodate scifact
    """.split()  # noqa: SIM905
)
#: Source / title cues of user-generated or commercial pages (coded low on trust).
_LOW_TRUST = tuple(
    """
    blog forum reddit quora facebook twitter tiktok youtube shop store sponsored advert
    """.split()  # noqa: SIM905
)
_SUPPORT_WORDS = ("supports the claim", "is supported", "supported", "confirms", "consistent with")
_REFUTE_WORDS = ("refute", "contradict", "not supported", "does not support", "inconsistent with")


#: Texts tokenised per process and kept: a claim is shared by its units (one per passage and
#: dimension rule), a passage by its rules and by the units of other claims; each was
#: tokenised again by every rule (22% of the judge at paper scale; issue 30).
_TOKENISED = 4096


def _spaced_words(text: str) -> list[str]:
    """The words of ``text`` between spaces and punctuation (NFC, casefolded; no CJK/Thai)."""
    return _WORD.findall(_NOT_WORD.sub(" ", unicodedata.normalize("NFC", text).casefold()))


@functools.lru_cache(maxsize=_TOKENISED)
def _words(text: str) -> tuple[str, ...]:
    words = _spaced_words(text)
    for run in _CJK.findall(text):
        words.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return tuple(words)


@functools.lru_cache(maxsize=_TOKENISED)
def _content(text: str) -> frozenset[str]:
    return frozenset(
        w[:6]
        for w in set(_words(text))
        if (w not in _STOP and len(w) > 2) or w.isdigit() or _CJK.match(w)
    )


def _overlap(claim: str, text: str) -> float:
    """Share of the claim's content words (6-letter stems) present in ``text``."""
    c = _content(claim)
    if not c:
        return 0.0
    return len(c & _content(text)) / len(c)


@functools.lru_cache(maxsize=_TOKENISED)
def _numbers(text: str) -> frozenset[str]:
    return frozenset(n.replace(",", ".") for n in _NUMBER.findall(text))


def _has(words: frozenset[str], text: str) -> bool:
    return any(w in words for w in _words(text))


@dataclass(frozen=True)
class _Outcome:
    high: bool
    hints: tuple[str, ...] = ()
    note: str = ""
    borderline: bool = False
    assessable: bool = True


@functools.lru_cache(maxsize=_TOKENISED)
def _sentences(text: str) -> tuple[str, ...]:
    return tuple(_SENT_SPLIT.split(text.strip()))


def _best_sentence(claim: str, texts: Sequence[str]) -> str:
    best, score = "", -1.0
    for text in texts:
        for sent in _sentences(text):
            s = _overlap(claim, sent)
            if s > score and sent.strip():
                best, score = sent.strip(), s
    return best


#: Words the baseline quotes at most. It quoted its best sentence whole, and a passage without
#: sentence punctuation is one sentence: the whole passage, in each of the five retrieval
#: dimensions, in annotations.jsonl and again in the journal (about 60% of a unit's storage
#: at paper scale; issue 30).
QUOTE_WORDS = 20
_TOKEN = re.compile(r"\S+")


@functools.lru_cache(maxsize=1 << 16)
def _token_stems(token: str) -> tuple[str, ...]:
    """The 6-letter stems of the words of one whitespace-separated token.

    Tokens recur (a passage's vocabulary is small): found once each, not once per passage
    token (the quote's search was 17% of the offline judge at paper scale; issue 30).
    """
    return tuple(w[:6] for w in _spaced_words(token))


def _quote_span(claim: str, sentence: str) -> str:
    """The span of ``sentence`` that carries its evidence: at most :data:`QUOTE_WORDS` words.

    A sentence that short is quoted whole; a longer one by its run of ``QUOTE_WORDS``
    whitespace-separated words holding the most of the claim's content words (the first such
    run on a tie), cut from the sentence as it stands (a verbatim substring, so the quote check
    still finds it).
    """
    tokens = list(_TOKEN.finditer(sentence))
    if len(tokens) <= QUOTE_WORDS:
        return sentence
    stems = _content(claim)
    hits = [int(not stems.isdisjoint(_token_stems(t.group()))) for t in tokens]
    best = run = sum(hits[:QUOTE_WORDS])
    start = 0
    for i in range(QUOTE_WORDS, len(tokens)):
        run += hits[i] - hits[i - QUOTE_WORDS]
        if run > best:
            best, start = run, i - QUOTE_WORDS + 1
    return sentence[tokens[start].start() : tokens[start + QUOTE_WORDS - 1].end()]


# --- retrieval rules -------------------------------------------------------------------


def _entity(claim: str, p: Passage) -> _Outcome:
    ov = _overlap(claim, p.text)
    note = f"entity overlap {ov:.2f}"
    if ov >= 0.6:
        return _Outcome(True, note=note, borderline=ov < 0.7)
    if ov >= 0.3:
        return _Outcome(False, ("partial", "related", "mismatch"), note, ov >= 0.5)
    return _Outcome(False, ("irrelevant", "no_match", "unrelated", "mismatch"), note)


def _scope(claim: str, p: Passage) -> _Outcome:
    missing_numbers = _numbers(claim) - _numbers(p.text)
    claim_pop = {w for w in _words(claim) if w in _POPULATION}
    text_pop = {w for w in _words(p.text) if w in _POPULATION}
    pop_mismatch = bool(claim_pop) and not (claim_pop & text_pop)
    ov = _overlap(claim, p.text)
    note = f"missing numbers {sorted(missing_numbers)}, population mismatch {pop_mismatch}"
    if not missing_numbers and not pop_mismatch and ov >= 0.5:
        return _Outcome(True, note=note, borderline=ov < 0.6)
    if ov < 0.3:
        return _Outcome(False, ("unrelated", "irrelevant", "broad", "mismatch"), note)
    return _Outcome(False, ("broad", "narrow", "partial", "mismatch", "different"), note)


def _trust(_claim: str, p: Passage) -> _Outcome:
    meta = f"{p.source or ''} {p.title or ''}".lower()
    if not meta.strip():
        return _Outcome(False, note="no source metadata: not assessable", assessable=False)
    if any(t in meta for t in _TRUSTED):
        return _Outcome(True, note=f"trusted source {p.source!r}")
    if any(t in meta for t in _LOW_TRUST):
        return _Outcome(False, ("unreliable", "untrust", "low", "non"), f"source {p.source!r}")
    # A source on neither list is not thereby untrustworthy (a clinicians' fact-check site
    # is as unknown to the rule as a shop page without a cue): the heuristic does not code it.
    return _Outcome(
        False,
        note=f"source {p.source!r} is not on the heuristic's list of authoritative corpora: "
        "not assessable",
        assessable=False,
    )


def _polarity(claim: str, p: Passage) -> _Outcome:
    ov = _overlap(claim, p.text)
    neg_claim = _has(_NEGATION, claim)
    neg_text = _has(_NEGATION, _best_sentence(claim, [p.text]))
    note = f"overlap {ov:.2f}, negation claim/passage {neg_claim}/{neg_text}"
    if ov < 0.3:
        return _Outcome(False, ("neutral", "irrelevant", "none", "no_", "absent"), note)
    if _has(_HEDGES, p.text):
        return _Outcome(False, ("indirect", "hedg", "weak", "implicit"), note + ", hedged")
    if ov < 0.5:
        return _Outcome(False, ("indirect", "implicit", "weak"), note, borderline=ov >= 0.45)
    return _Outcome(True, note=note + (", opposite polarity" if neg_claim != neg_text else ""))


def _chunk(_claim: str, p: Passage) -> _Outcome:
    text = p.text.strip()
    # a letter of a script without case (Chinese, Arabic, ...) starts a sentence as a capital does
    first = text[:1]
    caseless = first.isalpha() and not first.islower() and not first.isupper()
    starts_ok = bool(text) and (first.isupper() or first.isdigit() or first in "\"'(" or caseless)
    ends_ok = text.endswith((".", "!", "?", '."', ".)", ".'", *_CJK_ENDS))
    if starts_ok and ends_ok:
        return _Outcome(True, note="starts and ends on sentence boundaries")
    note = f"starts on boundary {starts_ok}, ends on boundary {ends_ok}"
    return _Outcome(False, ("incomplete", "truncat", "boundary", "fragment", "incorrect"), note)


# --- verification rules ----------------------------------------------------------------


def _best_passage(unit: Unit) -> tuple[Passage | None, float]:
    best, score = None, 0.0
    for p in unit.passages:
        s = _overlap(unit.claim, p.text)
        if best is None or s > score:
            best, score = p, s
    return best, score


def _selection(unit: Unit) -> _Outcome:
    best, score = _best_passage(unit)
    reasoning = unit.reasoning or ""
    if best is None:
        return _Outcome(False, ("no_evidence", "missing", "selective"), "no passages shown")
    used = _overlap(best.text[:400], reasoning)
    note = f"best passage rank {best.rank} (claim overlap {score:.2f}), reasoning uses {used:.2f}"
    if used >= 0.25 or score < 0.3:
        return _Outcome(True, note=note, borderline=0.25 <= used < 0.35)
    return _Outcome(False, ("selective", "ignor", "miss", "cherry"), note)


def _comprehension(unit: Unit) -> _Outcome:
    reasoning = unit.reasoning or ""
    texts = " ".join(p.text for p in unit.passages)
    ov = _overlap(reasoning, texts) if reasoning else 0.0
    neg_mismatch = _has(_NEGATION, _best_sentence(reasoning, [texts])) != _has(
        _NEGATION, _best_sentence(texts, [reasoning])
    )
    note = f"reasoning/passages overlap {ov:.2f}"
    if ov >= 0.3 and not neg_mismatch:
        return _Outcome(True, note=note, borderline=ov < 0.4)
    return _Outcome(False, ("misread", "misunder", "fail", "comprehension"), note)


def _inference(unit: Unit) -> _Outcome:
    _best, score = _best_passage(unit)
    decisive = unit.verdict in (Verdict.SUPPORTED, Verdict.REFUTED)
    note = f"verdict {unit.verdict}, best claim overlap {score:.2f}"
    if decisive and score < 0.5:
        return _Outcome(False, ("overreach", "beyond", "leap", "unsupported"), note)
    if not decisive and score >= 0.8:
        return _Outcome(False, ("conflict", "synthes", "under"), note, borderline=True)
    return _Outcome(True, note=note, borderline=0.5 <= score < 0.6)


def _confidence(unit: Unit) -> _Outcome:
    reasoning = unit.reasoning or ""
    best, score = _best_passage(unit)
    hedged_evidence = best is not None and _has(_HEDGES, best.text)
    hedged_reasoning = _has(_HEDGES, reasoning)
    decisive = unit.verdict in (Verdict.SUPPORTED, Verdict.REFUTED)
    note = f"hedged evidence {hedged_evidence}, hedged reasoning {hedged_reasoning}"
    if decisive and hedged_evidence and not hedged_reasoning:
        return _Outcome(False, ("overconfiden", "over"), note)
    if not decisive and score >= 0.8 and not hedged_evidence:
        return _Outcome(False, ("underconfiden", "under"), note, borderline=True)
    return _Outcome(True, note=note)


def _label_consistency(unit: Unit) -> _Outcome:
    tail = (unit.reasoning or "").lower()[-300:]
    says_refute = any(w in tail for w in _REFUTE_WORDS)
    says_support = not says_refute and any(w in tail for w in _SUPPORT_WORDS)
    note = f"conclusion words support/refute {says_support}/{says_refute}, verdict {unit.verdict}"
    if (unit.verdict is Verdict.SUPPORTED and says_refute) or (
        unit.verdict is Verdict.REFUTED and says_support
    ):
        return _Outcome(False, ("inconsisten", "mismatch", "contradict"), note)
    return _Outcome(True, note=note)


def _grounding(unit: Unit) -> _Outcome:
    reasoning = unit.reasoning or ""
    # what the prompt shows counts as evidence: the passages' ids, sources and titles too
    # (a verifier may cite an abstract id; the unit's id holds them)
    source = " ".join(
        [
            unit.claim,
            *(f"{p.text} {p.passage_id} {p.source or ''} {p.title or ''}" for p in unit.passages),
        ]
    )
    stray = _numbers(reasoning) - _numbers(source)
    quotes = re.findall(r"\"([^\"]{12,})\"", reasoning)
    missing_quotes = [q for q in quotes if " ".join(q.split()).lower() not in source.lower()]
    note = f"numbers not in the evidence {sorted(stray)}, unfound quotes {len(missing_quotes)}"
    if missing_quotes:
        return _Outcome(False, ("fabricat", "quote", "ungrounded", "halluc"), note)
    if stray:
        return _Outcome(False, ("ungrounded", "unsupported", "halluc", "fabricat"), note)
    return _Outcome(True, note=note)


_RetrievalRule = Callable[[str, Passage], _Outcome]
_VerificationRule = Callable[[Unit], _Outcome]

_RETRIEVAL_RULES: tuple[tuple[tuple[str, ...], _RetrievalRule], ...] = (
    (("entity",), _entity),
    (("scope",), _scope),
    (("trust", "source", "reliab", "credib"), _trust),
    (("polarity", "stance", "direction"), _polarity),
    (("chunk", "segment", "boundar"), _chunk),
)
_VERIFICATION_RULES: tuple[tuple[tuple[str, ...], _VerificationRule], ...] = (
    (("selection", "select"), _selection),
    (("comprehen", "understand"), _comprehension),
    (("inference", "infer"), _inference),
    (("confidence", "calibrat"), _confidence),
    (("label", "consisten"), _label_consistency),
    (("ground", "traceab", "attribut", "faithful"), _grounding),
)


def _match(dim: Dimension, keys: tuple[str, ...]) -> bool:
    hay = f"{dim.id} {dim.label}".lower()
    return any(k in hay for k in keys)


def _choose(dim: Dimension, outcome: _Outcome) -> str:
    if outcome.high:
        return dim.high_quality_code
    low = [s for s in dim.subcodes if not s.high_quality]
    for hint in outcome.hints:
        for sub in low:
            if hint in f"{sub.id} {sub.label}".lower():
                return sub.id
    return low[0].id if low else dim.high_quality_code


@dataclass(frozen=True)
class _DimensionPlan:
    """One dimension of a part: its rule and the code each outcome picks (found once)."""

    dim: Dimension
    retrieval: _RetrievalRule | None
    verification: _VerificationRule | None
    choices: dict[tuple[bool, tuple[str, ...]], str]

    def choose(self, outcome: _Outcome) -> str:
        key = (outcome.high, outcome.hints)
        code = self.choices.get(key)
        if code is None:
            code = self.choices[key] = _choose(self.dim, outcome)
        return code


def _plan(part: Part) -> list[_DimensionPlan]:
    """Each dimension's rules: the first of each kind whose keys match its id or label."""
    plans: list[_DimensionPlan] = []
    for dim in part.dimensions:
        rrule = next((r for keys, r in _RETRIEVAL_RULES if _match(dim, keys)), None)
        vrule = next((r for keys, r in _VERIFICATION_RULES if _match(dim, keys)), None)
        plans.append(_DimensionPlan(dim, rrule, vrule, {}))
    return plans


#: The heuristic baseline's model name (``offline`` alone), part of a run's identity: bumped
#: whenever its rules change what it writes, so a resumed run never mixes two versions' units
#: (v3: a quote is a 20-word span of the best sentence, no longer the passage five times; v4:
#: grounding reads what the prompt shows, the passages' titles, no longer their ids; v5: the
#: verification prompt shows the ids, and grounding reads them again; v6: Chinese, Japanese and
#: Korean text is read as character bigrams, and a sentence of a caseless script or ending on
#: '。' is on a boundary).
OFFLINE_MODEL = "heuristic-v6"


class OfflineCoder:
    """Deterministic rule-based coder: the heuristic baseline (``--judge offline``)."""

    spec = "offline"
    provider = "offline"
    model = OFFLINE_MODEL
    coder_kind = CoderKind.HEURISTIC
    label = LABEL

    def __init__(self) -> None:
        # the rules of each part coded so far (the part kept, so its id stays its own): the
        # rule and code lookups by words in ids and labels were redone per unit and dimension
        self._plans: dict[int, tuple[Part, list[_DimensionPlan]]] = {}

    def _rules(self, part: Part) -> list[_DimensionPlan]:
        known = self._plans.get(id(part))
        if known is None or known[0] is not part:
            known = self._plans[id(part)] = (part, _plan(part))
        return known[1]

    def code(self, unit: Unit, part: Part) -> DirectResult:
        """Code ``unit`` with the rules above; unscored if a dimension has no rule.

        Every dimension gets its rule's note as rationale, the passage (or reasoning)
        sentence closest to the claim as quote (its :func:`_quote_span`: at most
        :data:`QUOTE_WORDS` words), and ``uncertain`` when its rule was borderline.
        """
        outcomes: list[tuple[_DimensionPlan, _Outcome]] = []
        for plan in self._rules(part):
            outcome: _Outcome | None = None
            if unit.kind is UnitKind.RETRIEVAL:
                if plan.retrieval is not None:
                    outcome = plan.retrieval(unit.claim, unit.passages[0])
            elif plan.verification is not None:
                outcome = plan.verification(unit)
            if outcome is None:
                dim = plan.dim
                return DirectResult(
                    None, f"offline heuristic has no rule for dimension '{dim.id}' ({dim.label})"
                )
            outcomes.append((plan, outcome))
        texts = [p.text for p in unit.passages]
        if unit.kind is UnitKind.VERIFICATION and unit.reasoning:
            texts = [*texts, unit.reasoning]
        quote = _quote_span(unit.claim, _best_sentence(unit.claim, texts))
        dims = {
            plan.dim.id: DimensionAnswer(
                rationale=f"{LABEL} (rule-based, no model): {outcome.note}",
                quote=quote,
                codes=(plan.choose(outcome) if outcome.assessable else NOT_ASSESSABLE,),
                uncertain=outcome.borderline,
            )
            for plan, outcome in outcomes
        }
        multi = tuple(d.id for d in part.dimensions if d.multi_label)
        return DirectResult(Answer(dimensions=dims, multi_label=multi))
