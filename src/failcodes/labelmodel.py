"""The clinical reference label: :class:`Label`, a pydantic model of its own module.

Apart from :mod:`failcodes.labels` (the functions over labels), so that
:class:`~failcodes.labelcols.LabelColumns` builds one where asked for and a labels file is read
and written without importing pydantic (issue 30).
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from failcodes.contract import FrozenModel
from failcodes.numbertext import number_id, whole_number_text


class Label(FrozenModel):
    """The clinical reference for one sentence, or for one claim when ``claim_id`` is set.

    Claims inherit their parent sentence's label unless a claim-level label exists.
    """

    sentence_id: str | None = Field(default=None, description="The labelled sentence.")
    claim_id: str | None = Field(default=None, description="The labelled claim (claim-level).")
    question_id: str | None = Field(default=None, description="The question, if known.")
    has_error: bool = Field(description="True if a clinician marked a factual error.")
    rationale: str | None = Field(default=None, description="The clinician's explanation.")
    severity: str | None = Field(default=None, description="e.g. Mild/Moderate/Severe.")
    annotator: str | None = Field(default=None, description="Who labelled it.")
    sentence: str | None = Field(default=None, description="The sentence text, if known.")
    system: str | None = Field(
        default=None,
        description="The system whose answer was labelled: the label then applies to that "
        "system's traces only (each system judged on its own answer). Unset: one shared "
        "label for every system's traces (one answer verified by every system). In one "
        "labels file either every label names its system or none does.",
    )

    @field_validator("sentence_id", "claim_id", "question_id", "system", mode="before")
    @classmethod
    def _number_as_text(cls, value: object) -> object:
        """An id given as a number from Python is its text, as the readers read it."""
        return number_id(value)

    @field_validator("has_error", mode="before")
    @classmethod
    def _float_text(cls, value: object) -> object:
        """``'1.0'``/``'0.0'`` as true/false, as the floats 1.0/0.0 read (issue 30).

        pandas writes a boolean column with a missing value as floats: a CSV holds ``1.0``, a
        Parquet file of the same frame 1.0, which pydantic reads as true; the CSV was refused.
        Any other value (``2.0``, ``0.5``) is left to pydantic, which refuses it in both.
        """
        whole = whole_number_text(value) if type(value) is str else None
        return value if whole not in ("0", "1") else whole == "1"

    @model_validator(mode="after")
    def _needs_a_target(self) -> Label:
        if self.sentence_id is None and self.claim_id is None:
            message = "a label needs a sentence_id or a claim_id"
            if self.sentence is not None:  # a sheet of sentence texts and their labels
                message += (
                    " (labels keyed by the sentence's text? give each the traces' sentence_id: "
                    "join the table to them on the text first)"
                )
            elif self.question_id is not None:  # a table of answers' labels: no way named
                message += (
                    " (labels of whole answers, one per question? metrics score sentences "
                    "(or claims): each label needs the id of the sentence it judges; an "
                    "answer's label is no label of each of its sentences)"
                )
            raise ValueError(message)
        return self
