"""Traces: one claim as judged by one system (retriever x verifier x corpus).

This is failcodes' interchange format; every ingest adapter produces it. See
docs/trace-format.md and the JSON Schema from ``failcodes schema trace``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from failcodes.verdicts import Verdict


class Passage(BaseModel):
    """One retrieved passage shown to the verifier for a claim."""

    # NaN/Infinity scores are refused (a CSV "nan" cell or a Parquet NaN), not stored as null.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    passage_id: str = Field(description="Identifier of the passage in its corpus.")
    rank: int = Field(ge=1, description="1-based rank in the retriever's list.")
    text: str = Field(description="The passage text as the verifier saw it.")
    source: str | None = Field(default=None, description="Corpus or URL the passage came from.")
    title: str | None = Field(default=None, description="Title of the source document.")
    score: float | None = Field(default=None, description="The retriever's score, if any.")
    gold: bool | None = Field(
        default=None,
        description="True if the passage is gold evidence for the claim (closed benchmarks only).",
    )
    gold_verdict: Verdict | None = Field(
        default=None,
        description="Gold polarity of the passage towards the claim (closed benchmarks only, "
        "e.g. HealthVer Supports/Refutes/Neutral -> supported/refuted/no_evidence).",
    )


class Trace(BaseModel):
    """One claim as judged by one system."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str = Field(description="The retriever x verifier x corpus configuration.")
    question_id: str = Field(description="The question (or document) the answer responds to.")
    sentence_id: str = Field(description="The answer sentence the claim was decomposed from.")
    claim_id: str = Field(
        description="Unique within a system (files join on system + claim_id); same across systems."
    )
    claim: str = Field(description="The atomic claim text.")
    sentence: str | None = Field(default=None, description="The parent sentence text.")
    verdict: Verdict = Field(description="The verifier's canonical verdict.")
    raw_verdict: str | None = Field(
        default=None, description="The verdict exactly as the pipeline wrote it."
    )
    reasoning: str | None = Field(default=None, description="The verifier's reasoning trace.")
    verifier: str | None = Field(default=None, description="The verifier model name.")
    retriever: str | None = Field(default=None, description="The retriever name.")
    passages: tuple[Passage, ...] = Field(
        default=(), description="Retrieved passages in rank order."
    )

    @field_validator("passages")
    @classmethod
    def _unique_ranks(cls, passages: tuple[Passage, ...]) -> tuple[Passage, ...]:
        seen: set[int] = set()
        for passage in passages:
            if passage.rank in seen:
                raise ValueError(f"rank {passage.rank} appears twice; ranks must be unique")
            seen.add(passage.rank)
        return passages
