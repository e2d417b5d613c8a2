"""Units: what a judge codes.

One (claim, passage) pair for retrieval, one (claim, passages, reasoning, verdict) for
verification.

A unit's id is a hash of exactly the content the judge sees, so a pair retrieved by several
retrievers is one unit (judged once) with several provenance entries. A unit's passage (of
either kind) is its text and the source and title its prompt shows beside it (and, in
verification, its id): one text under two sources is two units, each judged as its own source.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from failcodes.codebook import UnitKind as UnitKind
from failcodes.contract import FrozenModel
from failcodes.traces import Passage, Trace
from failcodes.verdicts import Verdict

if TYPE_CHECKING:  # disagreements imports metrics/pandas: keep units light at runtime
    from failcodes.disagreements import ClaimRecord, Disagreement


class Provenance(FrozenModel):
    """Where a unit occurs: one trace (and, for retrieval, one rank) of one system."""

    system: str
    question_id: str
    sentence_id: str
    claim_id: str
    rank: int | None = Field(default=None, description="Passage rank (retrieval units).")
    raw_verdict: str | None = Field(
        default=None, description="The verdict exactly as this pipeline wrote it (if known)."
    )


class Unit(FrozenModel):
    """One thing to code. ``id`` is derived from the judged content (see :func:`unit_id`)."""

    id: str
    kind: UnitKind
    claim: str
    passages: tuple[Passage, ...] = Field(
        description="One passage for retrieval units; all shown passages for verification."
    )
    reasoning: str | None = None
    verdict: Verdict | None = None
    provenance: tuple[Provenance, ...] = ()


def unit_id(
    kind: UnitKind,
    claim: str,
    passages: Sequence[Any],
    reasoning: str | None = None,
    verdict: Verdict | None = None,
) -> str:
    """Return the content id of a unit: same judged content, same id, across systems.

    The id is :func:`~failcodes.hashing.content_hash` of ``{"kind", "claim", "passages",
    "reasoning", "verdict"}``; the canonical JSON is assembled here field by field (keys in
    sorted order, each string JSON-encoded by msgspec, whose bytes equal the standard
    library's ``encode_basestring`` in UTF-8 on every code point; a lone surrogate raises
    ``UnicodeEncodeError`` in both), which gives the same bytes - and so the same ids, which
    key journals and caches - many times faster than serialising a dict per unit.

    ``passages``: a passage is a text shown alone, or anything with ``text``, ``source``,
    ``title`` and ``passage_id`` (a :class:`~failcodes.traces.Passage`, a reader's record),
    entered as the prompt shows it (:func:`passage_entry`; the id in verification only).
    """
    import msgspec

    encode = msgspec.json.encode
    shows_id = kind is UnitKind.VERIFICATION
    entries = b",".join(
        (
            encode(p)
            if isinstance(p, str)
            else passage_entry(
                encode(p.text), encode, p.source, p.title, p.passage_id if shows_id else None
            )
        )
        for p in passages
    )
    text = b"".join(
        (
            b'{"claim":',
            encode(claim),
            b',"kind":',
            encode(kind.value),
            b',"passages":[',
            entries,
            b'],"reasoning":',
            encode(reasoning) if reasoning is not None else b"null",
            b',"verdict":',
            encode(verdict.value) if verdict is not None else b"null",
            b"}",
        )
    )
    return hashlib.sha256(text).hexdigest()[:16]


def passage_entry(
    text_json: bytes,
    encode: Callable[[str], bytes],
    source: str | None,
    title: str | None,
    passage_id: str | None = None,
) -> bytes:
    """A unit's passage in its canonical JSON, given the text's JSON.

    The text alone when the prompt shows no id, no source and no title beside it (an empty
    one is not shown), so the id of such a passage is what it was before ids held them; else
    ``{"passage_id": ..., "source": ..., "text": ..., "title": ...}`` with ``null`` for those
    not shown (``passage_id`` only when given). The same text under two sources is then two
    units, each judged as its own source (it was one, coded as the first-seen source for
    both). ``passage_id``: given for a verification unit, whose prompt shows each passage's id
    (its reasoning may cite it: "PMID 31234", "abstract 13734012"); a retrieval prompt shows
    none. The prompts show a passage's rank too: rank is left out on purpose (a text two
    retrievers rank differently is one unit; a verification unit's passages are in rank
    order), and the judges read none.
    """
    if not source and not title and not passage_id:
        return text_json
    head = b'{"passage_id":' + encode(passage_id) + b"," if passage_id else b"{"
    return head + _shown(text_json, encode, source, title)


def _shown(
    text_json: bytes, encode: Callable[[str], bytes], source: str | None, title: str | None
) -> bytes:
    """:func:`passage_entry`'s object after its ``{`` or id: source, text and title."""
    return b"".join(
        (
            b'"source":',
            encode(source) if source else b"null",
            b',"text":',
            text_json,
            b',"title":',
            encode(title) if title else b"null",
            b"}",
        )
    )


#: What follows the passage in a retrieval unit's canonical JSON (see :func:`unit_id`).
_RETRIEVAL_TAIL = b'],"reasoning":null,"verdict":null}'


def retrieval_unit_digests(claim: str, passages: Iterable[Any]) -> bytes:
    """The ids of the retrieval units (``claim``, passage) for ``passages``, 8 raw bytes each.

    A passage is anything with ``text``, ``source`` and ``title`` (a
    :class:`~failcodes.traces.Passage`, a reader's record). ``digests[8 * i : 8 * i + 8].hex()
    == unit_id(RETRIEVAL, claim, (p,))``: the bytes
    hashed are exactly :func:`unit_id`'s. The claim's part of the canonical JSON is hashed
    once (the hash state copied per passage) and each text is JSON-encoded by msgspec, whose
    string encoding equals the standard library's ``encode_basestring`` in UTF-8 on every
    code point (checked for all of them; lone surrogates raise in both), several times faster.
    """
    import msgspec

    encode = msgspec.json.encode
    state = hashlib.sha256(b'{"claim":' + encode(claim) + b',"kind":"retrieval","passages":[')
    out = bytearray()
    for p in passages:
        h = state.copy()
        h.update(passage_entry(encode(p.text), encode, p.source, p.title))
        h.update(_RETRIEVAL_TAIL)
        out += h.digest()[:8]
    return bytes(out)


def claim_unit_ids(
    claim: str, passages: Sequence[Any], reasoning: str | None, verdict: Verdict
) -> tuple[bytes, str]:
    """:func:`retrieval_unit_digests` of ``passages`` and the verification unit's id, together.

    The bytes hashed are exactly theirs; each string (the claim, each passage's text, source
    and title) is JSON-encoded once for both (issue 30: ``attribute`` encoded each passage
    twice, one of its largest costs above reading its inputs).
    """
    import msgspec

    encode = msgspec.json.encode
    claim_json = encode(claim)
    state = hashlib.sha256(b'{"claim":' + claim_json + b',"kind":"retrieval","passages":[')
    out = bytearray()
    entries = []
    for p in passages:
        text_json, source, title, passage_id = encode(p.text), p.source, p.title, p.passage_id
        # passage_entry's object (its id added in verification); the text alone without one
        shown = _shown(text_json, encode, source, title)
        alone = b"{" + shown if source or title else text_json
        h = state.copy()
        h.update(alone)
        h.update(_RETRIEVAL_TAIL)
        out += h.digest()[:8]
        if passage_id:
            entries.append(b'{"passage_id":' + encode(passage_id) + b"," + shown)
        else:
            entries.append(alone)
    text = b"".join(
        (
            b'{"claim":',
            claim_json,
            b',"kind":"verification","passages":[',
            b",".join(entries),
            b'],"reasoning":',
            encode(reasoning) if reasoning is not None else b"null",
            b',"verdict":',
            encode(verdict.value) if verdict is not None else b"null",
            b"}",
        )
    )
    return bytes(out), hashlib.sha256(text).hexdigest()[:16]


ProvenanceKey = tuple[str, str, str, str, int | None, str | None]


def _provenance_key(trace: Trace, rank: int | None) -> ProvenanceKey:
    return (
        trace.system,
        trace.question_id,
        trace.sentence_id,
        trace.claim_id,
        rank,
        trace.raw_verdict,
    )


def _units(
    kind: UnitKind,
    found: dict[str, tuple[Trace, tuple[Passage, ...]]],
    where: dict[str, dict[ProvenanceKey, None]],
) -> list[Unit]:
    """Build each unit once (fields come from validated traces: no second validation)."""
    out = []
    for uid, (trace, passages) in found.items():
        provenance = tuple(
            Provenance.model_construct(
                system=s, question_id=q, sentence_id=sid, claim_id=c, rank=rank, raw_verdict=raw
            )
            for s, q, sid, c, rank, raw in where[uid]
        )
        verification = kind is UnitKind.VERIFICATION
        out.append(
            Unit.model_construct(
                id=uid,
                kind=kind,
                claim=trace.claim,
                passages=passages,
                reasoning=trace.reasoning if verification else None,
                verdict=trace.verdict if verification else None,
                provenance=provenance,
            )
        )
    return out


def retrieval_units(traces: Iterable[Trace], *, top_k: int | None = None) -> list[Unit]:
    """Return one retrieval unit per distinct (claim, passage text), in first-seen order.

    A pair retrieved by several systems (or twice by one) is one unit whose ``provenance``
    lists every (system, question, sentence, claim, rank) it occurs at. The citations of a
    ``none`` or ``post-hoc`` trace (:data:`~failcodes.traces.CITING_SOURCES`) make no unit.
    ``top_k`` keeps only passages ranked ``<= top_k``. The unit keeps the first-seen passage
    object; its text, the source and title its prompt shows and the claim make the id (its
    id and rank do not: a text two retrievers rank differently is one unit).
    """
    found: dict[str, tuple[Trace, tuple[Passage, ...]]] = {}
    where: dict[str, dict[ProvenanceKey, None]] = {}
    for trace in traces:
        for passage in trace.evidence_passages:  # a closed-book system's citations: none
            if top_k is not None and passage.rank > top_k:
                continue
            uid = unit_id(UnitKind.RETRIEVAL, trace.claim, (passage,))
            if uid not in found:
                found[uid] = (trace, (passage,))
                where[uid] = {}
            where[uid][_provenance_key(trace, passage.rank)] = None
    return _units(UnitKind.RETRIEVAL, found, where)


def verification_units(traces: Iterable[Trace], *, top_k: int | None = None) -> list[Unit]:
    """Return one verification unit per distinct (claim, passages, reasoning, verdict).

    Traces without a reasoning text are skipped (there is nothing to code); callers can
    compare counts with :func:`traces_without_reasoning`. ``top_k`` limits the passages shown
    to the judge to those ranked ``<= top_k``.
    """
    found: dict[str, tuple[Trace, tuple[Passage, ...]]] = {}
    where: dict[str, dict[ProvenanceKey, None]] = {}
    for trace in traces:
        if trace.reasoning is None or not trace.reasoning.strip():
            continue
        passages = tuple(p for p in trace.passages if top_k is None or p.rank <= top_k)
        uid = unit_id(UnitKind.VERIFICATION, trace.claim, passages, trace.reasoning, trace.verdict)
        if uid not in found:
            found[uid] = (trace, passages)
            where[uid] = {}
        where[uid][_provenance_key(trace, None)] = None
    return _units(UnitKind.VERIFICATION, found, where)


def traces_without_reasoning(traces: Iterable[Trace]) -> int:
    """Count traces that carry no reasoning text (and so yield no verification unit)."""
    return sum(1 for t in traces if t.reasoning is None or not t.reasoning.strip())


def build_units(traces: Iterable[Trace], kind: UnitKind, *, top_k: int | None = None) -> list[Unit]:
    """Return the deduplicated units of ``kind`` for ``traces``."""
    if kind is UnitKind.RETRIEVAL:
        return retrieval_units(traces, top_k=top_k)
    return verification_units(traces, top_k=top_k)


def disagreement_traces(disagreements: Iterable[Disagreement]) -> list[Trace]:
    """Return the traces behind disagreements: one per claim record, in order.

    A claim shared by several disagreements (e.g. under two mappings) appears once per
    (system, question, sentence, claim).
    """
    return once_per_claim(((d, c) for d in disagreements for c in d.claims), claim_trace)


def once_per_claim(pairs: Iterable[tuple[Any, Any]], trace: Callable[..., Trace]) -> list[Trace]:
    """``trace(disagreement, claim)`` of each (system, question, sentence, claim) once, in order."""
    seen: set[tuple[str, str, str, str]] = set()
    out: list[Trace] = []
    for d, c in pairs:
        key = (d.system, d.question_id, d.sentence_id, c.claim_id)
        if key not in seen:
            seen.add(key)
            out.append(trace(d, c))
    return out


def claim_trace(disagreement: Disagreement, claim: ClaimRecord) -> Trace:
    """The trace of one claim record of a disagreement (its sentence's fields and its own)."""
    return Trace(
        system=disagreement.system,
        question_id=disagreement.question_id,
        sentence_id=disagreement.sentence_id,
        claim_id=claim.claim_id,
        claim=claim.claim,
        sentence=disagreement.sentence,
        verdict=claim.verdict,
        raw_verdict=claim.raw_verdict,
        reasoning=claim.reasoning,
        verifier=claim.verifier,
        retriever=claim.retriever,
        passages=claim.passages,
        evidence_source=claim.evidence_source,
    )
