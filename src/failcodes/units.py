"""Units: what a judge codes.

One (claim, passage) pair for retrieval, one (claim, passages, reasoning, verdict) for
verification.

A unit's id is a hash of exactly the content the judge sees, so a pair retrieved by several
retrievers is one unit (judged once) with several provenance entries.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from failcodes.hashing import content_hash
from failcodes.traces import Passage
from failcodes.verdicts import Verdict


class UnitKind(StrEnum):
    """Which codebook part applies to a unit."""

    RETRIEVAL = "retrieval"
    VERIFICATION = "verification"


class Provenance(BaseModel):
    """Where a unit occurs: one trace (and, for retrieval, one rank) of one system."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str
    question_id: str
    sentence_id: str
    claim_id: str
    rank: int | None = Field(default=None, description="Passage rank (retrieval units).")


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
