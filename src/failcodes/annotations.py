"""Annotations: the codes a judge or a person gave one unit under one codebook version."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import Field, model_validator

from failcodes.codebook import CodebookRef as CodebookRef
from failcodes.codebook import UnitKind
from failcodes.contract import FrozenModel

NOT_ASSESSABLE = "not_assessable"
"""A code value meaning "this dimension could not be assessed from the unit".

Not a subcode of any dimension and never a low-quality code: e.g. the offline judge gives it
to the trustworthy-source dimension of a passage without source metadata, instead of coding a
missing source as an untrustworthy one. The all-high rule skips such dimensions
(:func:`failcodes.attribution.is_all_high`); tables show it as its own row. See
docs/attribution.md.
"""


def code_set_of(
    codes: dict[str, str], code_sets: dict[str, list[str]], dimension: str
) -> tuple[str, ...]:
    """Every code ``dimension`` is given (see :meth:`Annotation.code_set`)."""
    if dimension in code_sets:
        return tuple(code_sets[dimension])
    code = codes.get(dimension)
    return (code,) if code is not None else ()


def foreign_code(
    ann: Annotation, lists: Mapping[str, Sequence[str]]
) -> tuple[str, str, Sequence[str]] | None:
    """The first ``(dimension, code, the dimension's codes)`` of ``ann`` its list lacks, or None.

    ``lists``: dimension id -> its codes (:meth:`failcodes.codebook.Codebook.code_lists`);
    a dimension not listed is not checked, and ``not_assessable`` is an answer on any one.
    """
    for dim in sorted({*ann.codes, *ann.code_sets}):
        known = lists.get(dim)
        if known is None:
            continue
        for code in ann.code_set(dim):
            if code not in known and code != NOT_ASSESSABLE:
                return dim, code, known
    return None


class CoderKind(StrEnum):
    """Who produced an annotation."""

    LLM = "llm"
    HEURISTIC = "heuristic"  # the offline rule-based baseline: never presented as an LLM
    HUMAN = "human"


def panel_members(coder: str) -> list[str]:
    """The members of a judge panel's consensus coder ``panel(a+b)`` (``[]``: not a panel)."""
    if not (coder.startswith("panel(") and coder.endswith(")")):
        return []
    return coder[len("panel(") : -1].split("+")


def includes_heuristic(coder: str) -> bool:
    """Whether a panel consensus coder has the offline heuristic baseline among its members.

    A panel of the offline judge and a model is coded ``llm``: the ties the offline primary
    broke, and its votes, are the heuristic's, and no output said so.
    """
    return any(m.partition("#")[0] == "offline" for m in panel_members(coder))


HEURISTIC_NOTE = "heuristic baseline, not an LLM"


def judge_label(coder: str, kind: CoderKind) -> str:
    """The judge as shown to reviewers; the offline heuristic judge is labelled as such."""
    if kind is CoderKind.HEURISTIC:
        return f"{coder} ({HEURISTIC_NOTE})"
    if includes_heuristic(coder):  # a panel of the offline judge and a model
        return f"{coder} (includes the heuristic baseline)"
    return coder


class Status(StrEnum):
    """Whether the annotation carries codes."""

    SCORED = "scored"
    UNSCORED = "unscored"  # the judge's answer was unusable; ``reason`` says why


class Usage(FrozenModel):
    """Tokens and money spent on one annotation (zero for people and the offline judge)."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0


class DimensionEvidence(FrozenModel):
    """Why one dimension (step) got its code: the coder's rationale, quote and doubt."""

    rationale: str
    quote: str | None = None
    quote_found: bool | None = Field(
        default=None,
        description="Whether the quote occurs in the judged text (None: no quote to check).",
    )
    uncertain: bool = Field(default=False, description="The coder doubted this code.")


class Annotation(FrozenModel):
    """Codes for one unit: ``codes`` maps each dimension/step id to one subcode id.

    A dimension the coder could not assess holds :data:`NOT_ASSESSABLE` instead.

    A multi-label dimension also has every code it was given in ``code_sets`` (codebook
    order); ``codes`` then holds the first. Judge annotations (answer schema 2) carry one
    :class:`DimensionEvidence` per dimension in ``evidence``; ``rationale`` and ``quote`` are
    the unit-level fields of older judge annotations and of human review.
    """

    unit_id: str
    unit_kind: UnitKind
    codebook: CodebookRef
    coder: str = Field(description="Judge spec (offline, anthropic:MODEL...) or annotator name.")
    coder_kind: CoderKind
    status: Status = Status.SCORED
    reason: str | None = Field(default=None, description="Why the unit is unscored.")
    codes: dict[str, str] = Field(default_factory=dict)
    code_sets: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Every code of a multi-label dimension (codes[dim] is the first).",
    )
    leaves: dict[str, list[str]] = Field(
        default_factory=dict, description="Finer leaf codes per dimension, if any."
    )
    evidence: dict[str, DimensionEvidence] = Field(
        default_factory=dict,
        description="Per dimension: rationale, quote, quote check and doubt (judge answers).",
    )
    rationale: str | None = None
    quote: str | None = None
    quote_found: bool | None = Field(
        default=None,
        description="False when a quote does not occur in the judged text (any dimension's).",
    )
    proposal: str | None = Field(
        default=None, description="A new code the coder proposed (free text, from review)."
    )
    uncertain: bool = Field(
        default=False, description="The coder flagged low confidence (on any dimension)."
    )
    usage: Usage = Field(default_factory=Usage)
    lead_time_s: float | None = Field(default=None, description="Human annotation time.")
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    judge_shown: bool = Field(
        default=False,
        exclude_if=lambda shown: not shown,
        description="A review made with the judge's codes pre-selected (Label Studio showed "
        "its prediction: push --judged); written only when true.",
    )
    shown_judge: str | None = Field(
        default=None,
        exclude_if=lambda judge: judge is None,
        description="Whose codes were pre-selected: the model_version of the Label Studio "
        "prediction shown ('<codebook ref> <judge>', :meth:`shown_as`); written only when known.",
    )

    @model_validator(mode="after")
    def _sets_match_codes(self) -> Annotation:
        for dim, codes in self.code_sets.items():
            if not codes or self.codes.get(dim) != codes[0]:
                raise ValueError(
                    f"code_sets[{dim!r}] must be non-empty and start with codes[{dim!r}]"
                )
            twice = next((c for i, c in enumerate(codes) if c in codes[:i]), None)
            if twice is not None:  # read as a set it was the code once, unsaid
                raise ValueError(
                    f"code_sets[{dim!r}] names {twice!r} twice: a code set holds each code "
                    "once (a typo for another code, or a double entry?)"
                )
        return self

    def code_set(self, dimension: str) -> tuple[str, ...]:
        """Every code this annotation gives ``dimension`` (empty when it gives none)."""
        return code_set_of(self.codes, self.code_sets, dimension)

    def shown_as(self) -> str:
        """A judge annotation's Label Studio model_version: its codebook and its judge."""
        return f"{self.codebook} {judge_label(self.coder, self.coder_kind)}"

    def uncertain_dimensions(self) -> list[str]:
        """Dimensions flagged uncertain (every coded one for an old unit-level flag)."""
        if self.evidence:
            return [d for d, e in self.evidence.items() if e.uncertain]
        return list(self.codes) if self.uncertain else []


def review_twice(reviews: Iterable[tuple[str, Annotation]]) -> tuple[int, str] | None:
    """The first review that is an earlier one under another coder name (None: none is).

    ``reviews`` are (where it is, review); the answer is the repeat's index and the line that
    says so, naming the earlier one's place. A pull names reviewers by email, an import without
    ``--user`` by Label Studio's user id (``label-studio-user-3``): the same reviews pulled and
    imported were two reviewers, one person counted twice (Fleiss 0.467 -> 0.625 on 4 units).
    Told apart by what two people cannot share: the unit, the time to the microsecond, the
    lead time and the codes (a review with no lead time, not made in Label Studio's editor,
    matches none).
    """
    seen: dict[tuple[object, ...], tuple[str, Annotation]] = {}
    for i, (where, ann) in enumerate(reviews):
        if ann.lead_time_s is None:
            continue
        key = (ann.unit_id, ann.created_at, ann.lead_time_s, tuple(sorted(ann.codes.items())))
        first, was = seen.setdefault(key, (where, ann))
        if was.coder != ann.coder:
            return i, (
                f"the review of unit {ann.unit_id} by {ann.coder!r} is the one by "
                f"{was.coder!r} {first} (same time, lead time and codes): one Label Studio "
                "annotation under two coder names would count one person as two reviewers"
            )
    return None
