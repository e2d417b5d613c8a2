"""Clinical reference labels for answer sentences (or single claims)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Label(BaseModel):
    """The clinical reference for one sentence, or for one claim when ``claim_id`` is set.

    Claims inherit their parent sentence's label unless a claim-level label exists.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    sentence_id: str | None = Field(default=None, description="The labelled sentence.")
    claim_id: str | None = Field(default=None, description="The labelled claim (claim-level).")
    question_id: str | None = Field(default=None, description="The question, if known.")
    has_error: bool = Field(description="True if a clinician marked a factual error.")
    rationale: str | None = Field(default=None, description="The clinician's explanation.")
    severity: str | None = Field(default=None, description="e.g. Mild/Moderate/Severe.")
    annotator: str | None = Field(default=None, description="Who labelled it.")
    sentence: str | None = Field(default=None, description="The sentence text, if known.")

    @model_validator(mode="after")
    def _needs_a_target(self) -> Label:
        if self.sentence_id is None and self.claim_id is None:
            raise ValueError("a label needs a sentence_id or a claim_id")
        return self
