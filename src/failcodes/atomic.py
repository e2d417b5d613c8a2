"""Atomic fact-check records (seed 003): facts with verdict and human check, answer outcomes.

The data model shared by the reader (:mod:`failcodes.ingest.atomic`) and the diagnostics
(:mod:`failcodes.benchmarks.atomic`), so neither package imports the other.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from failcodes.contract import FrozenModel


class ErrorCategory(StrEnum):
    """Seed 003's human error categories for wrong atomic facts."""

    HALLUCINATION = "hallucination"
    INCORRECT_INFORMATION = "incorrect information"
    MISSING_INFORMATION = "missing information"
    LACK_OF_CONTEXT = "lack of context"


class AnswerOutcome(StrEnum):
    """How fact-checking changed the whole answer (human judgement)."""

    IMPROVED = "improved"
    UNCHANGED = "unchanged"
    WORSENED = "worsened"


class AtomicFact(FrozenModel):
    """One atomic fact with the pipeline verdict and the human evaluation."""

    system: str
    answer_id: str
    fact_id: str
    fact: str
    verdict_false: bool = Field(description="True if the pipeline's verdict is FALSE.")
    human_confirms: bool = Field(description="True if the human confirms the verdict.")
    error_category: ErrorCategory | None = None
    chunk_annotated: bool = False
    correct_chunk_rank: int | None = Field(
        default=None, ge=1, description="Rank of the correct chunk; None = not in the ranking."
    )

    @property
    def is_wrong(self) -> bool:
        """True if the fact is actually false (FALSE confirmed, or TRUE not confirmed)."""
        return self.verdict_false == self.human_confirms


class AtomicAnswer(FrozenModel):
    """One answer's outcome after fact-checking."""

    system: str
    answer_id: str
    outcome: AnswerOutcome
