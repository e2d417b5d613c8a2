"""Units: what a judge codes.

One (claim, passage) pair for retrieval, one (claim, passages, reasoning, verdict) for
verification.

A unit's id is a hash of exactly the content the judge sees, so a pair retrieved by several
retrievers is one unit (judged once) with several provenance entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from failcodes.codebook import UnitKind
from failcodes.hashing import content_hash
from failcodes.traces import Passage, Trace
from failcodes.verdicts import Verdict

if TYPE_CHECKING:  # disagreements imports metrics/pandas: keep units light at runtime
    from failcodes.disagreements import Disagreement


__all__ = [
    "Provenance",
    "Unit",
    "UnitKind",
    "build_units",
    "disagreement_traces",
    "retrieval_units",
    "traces_without_reasoning",
    "unit_id",
    "verification_units",
]


class Provenance(BaseModel):
    """Where a unit occurs: one trace (and, for retrieval, one rank) of one system."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str
    question_id: str
    sentence_id: str
    claim_id: str
    rank: int | None = Field(default=None, description="Passage rank (retrieval units).")
    raw_verdict: str | None = Field(
        default=None, description="The verdict exactly as this pipeline wrote it (if known)."
    )


class Unit(BaseModel):
    """One thing to code. ``id`` is derived from the judged content (see :func:`unit_id`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

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
    passage_texts: tuple[str, ...],
    reasoning: str | None = None,
    verdict: Verdict | None = None,
) -> str:
    """Return the content id of a unit: same judged content, same id, across systems."""
    return content_hash(
        {
            "kind": kind.value,
            "claim": claim,
            "passages": list(passage_texts),
            "reasoning": reasoning,
            "verdict": verdict.value if verdict is not None else None,
        }
    )


def _provenance(trace: Trace, rank: int | None) -> Provenance:
    return Provenance(
        system=trace.system,
        question_id=trace.question_id,
        sentence_id=trace.sentence_id,
        claim_id=trace.claim_id,
        rank=rank,
        raw_verdict=trace.raw_verdict,
    )


def _merge(
    order: list[str], seen: dict[str, Unit], prov: dict[str, list[Provenance]], unit: Unit
) -> None:
    """Add ``unit`` (with one provenance entry) to the ordered, deduplicated collection."""
    if unit.id not in seen:
        order.append(unit.id)
        seen[unit.id] = unit
        prov[unit.id] = []
    entries = prov[unit.id]
    for entry in unit.provenance:
        if entry not in entries:
            entries.append(entry)


def retrieval_units(traces: Iterable[Trace], *, top_k: int | None = None) -> list[Unit]:
    """Return one retrieval unit per distinct (claim, passage text), in first-seen order.

    A pair retrieved by several systems (or twice by one) is one unit whose ``provenance``
    lists every (system, question, sentence, claim, rank) it occurs at. ``top_k`` keeps only
    passages ranked ``<= top_k``. The unit keeps the first-seen passage object (id, source,
    title); only its text and the claim enter the id.
    """
    order: list[str] = []
    seen: dict[str, Unit] = {}
    prov: dict[str, list[Provenance]] = {}
    for trace in traces:
        for passage in trace.passages:
            if top_k is not None and passage.rank > top_k:
                continue
            uid = unit_id(UnitKind.RETRIEVAL, trace.claim, (passage.text,))
            unit = Unit(
                id=uid,
                kind=UnitKind.RETRIEVAL,
                claim=trace.claim,
                passages=(passage,),
                provenance=(_provenance(trace, passage.rank),),
            )
            _merge(order, seen, prov, unit)
    return [seen[uid].model_copy(update={"provenance": tuple(prov[uid])}) for uid in order]


def verification_units(traces: Iterable[Trace], *, top_k: int | None = None) -> list[Unit]:
    """Return one verification unit per distinct (claim, passages, reasoning, verdict).

    Traces without a reasoning text are skipped (there is nothing to code); callers can
    compare counts with :func:`traces_without_reasoning`. ``top_k`` limits the passages shown
    to the judge to those ranked ``<= top_k``.
    """
    order: list[str] = []
    seen: dict[str, Unit] = {}
    prov: dict[str, list[Provenance]] = {}
    for trace in traces:
        if trace.reasoning is None or not trace.reasoning.strip():
            continue
        passages = tuple(p for p in trace.passages if top_k is None or p.rank <= top_k)
        uid = unit_id(
            UnitKind.VERIFICATION,
            trace.claim,
            tuple(p.text for p in passages),
            trace.reasoning,
            trace.verdict,
        )
        unit = Unit(
            id=uid,
            kind=UnitKind.VERIFICATION,
            claim=trace.claim,
            passages=passages,
            reasoning=trace.reasoning,
            verdict=trace.verdict,
            provenance=(_provenance(trace, None),),
        )
        _merge(order, seen, prov, unit)
    return [seen[uid].model_copy(update={"provenance": tuple(prov[uid])}) for uid in order]


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
    seen: set[tuple[str, str, str, str]] = set()
    out: list[Trace] = []
    for d in disagreements:
        for c in d.claims:
            key = (d.system, d.question_id, d.sentence_id, c.claim_id)
            if key in seen:
                continue
            seen.add(key)
            out.append(
                Trace(
                    system=d.system,
                    question_id=d.question_id,
                    sentence_id=d.sentence_id,
                    claim_id=c.claim_id,
                    claim=c.claim,
                    sentence=d.sentence,
                    verdict=c.verdict,
                    raw_verdict=c.raw_verdict,
                    reasoning=c.reasoning,
                    verifier=c.verifier,
                    retriever=c.retriever,
                    passages=c.passages,
                    evidence_source=c.evidence_source,
                )
            )
    return out
