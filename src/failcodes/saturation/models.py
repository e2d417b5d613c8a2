"""Contracts of a saturation project: configuration, rounds, proposals, decisions, stop rule.

Every model here is written to disk by :mod:`failcodes.saturation.store` as JSON, so a
project can be continued from its files alone (by another person, days later).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import Field

from failcodes.annotations import CoderKind
from failcodes.contract import FrozenModel
from failcodes.units import UnitKind

#: Default similarity at or above which two proposals (or a proposal and a leaf) are duplicates.
DEFAULT_SIMILARITY_THRESHOLD = 0.5
#: Default K of the stop rule: saturated after K consecutive rounds with no accepted pattern.
DEFAULT_STOP_K = 3
#: Default N of rare-leaf pruning: leaves supported by fewer than N units are listed.
DEFAULT_MIN_SUPPORT = 3


def _now() -> datetime:
    return datetime.now(UTC)


class ProjectConfig(FrozenModel):
    """Settings fixed when a saturation project is created (``project.json``)."""

    name: str = Field(description="Project name (also its default folder annotations/<name>/).")
    kind: UnitKind = Field(description="Which codebook part the project grows.")
    batch_size: int = Field(default=50, ge=1, description="Units drawn per round.")
    seed: int = Field(default=0, description="Seed of the per-round draws.")
    stratify_by_system: bool = Field(
        default=False, description="Draw each batch proportionally across provenance systems."
    )
    stop_k: int = Field(
        default=DEFAULT_STOP_K, ge=1, description="Consecutive rounds without new patterns."
    )
    min_support: int = Field(
        default=DEFAULT_MIN_SUPPORT, ge=1, description="Leaves with fewer units are prunable."
    )
    similarity_threshold: float = Field(
        default=DEFAULT_SIMILARITY_THRESHOLD,
        gt=0.0,
        le=1.0,
        description="Deduplication threshold (see failcodes.saturation.dedupe).",
    )
    codebook_name: str = Field(description="Name of the codebook being grown.")
    export_dir: str | None = Field(
        default=None,
        description="Also save every new version there as taxonomy YAML (e.g. taxonomy/); "
        "relative paths are relative to the working directory.",
    )
    created_at: datetime = Field(default_factory=_now)
    created_by: str | None = None


class RoundPhase(StrEnum):
    """Where a round is. Phases only move forward."""

    DRAWN = "drawn"  # batch chosen and written; coding may be partial
    CODED = "coded"  # every unit of the batch has an annotation in the journal
    PROPOSED = "proposed"  # proposals deduplicated and written; review file written
    CLOSED = "closed"  # every proposal decided; the next codebook version (if any) written


class RoundRecord(FrozenModel):
    """One round of the loop (``rounds/rNNNN/round.json``)."""

    number: int = Field(ge=1)
    codebook_version: int = Field(description="Version the batch was coded with.")
    unit_ids: tuple[str, ...] = Field(description="The batch, in draw order.")
    seed: int
    judge: str = Field(description="Coder spec that coded the batch.")
    judge_kind: CoderKind
    proposer: str = Field(description="Proposer spec.")
    proposer_kind: CoderKind
    phase: RoundPhase = RoundPhase.DRAWN
    started_at: datetime = Field(default_factory=_now)
    coded_at: datetime | None = None
    proposed_at: datetime | None = None
    closed_at: datetime | None = None
    new_patterns: int | None = Field(
        default=None, description="Accepted new leaves/subcodes (set when closed)."
    )
    produced_version: int | None = Field(
        default=None, description="Codebook version the round's decisions produced, if any."
    )


class ProposalDraft(FrozenModel):
    """What a proposer returns: one pattern the current codebook does not cover."""

    dimension: str = Field(description="Dimension (or step) id the pattern belongs to.")
    parent_subcode: str | None = Field(
        description="Subcode the leaf would roll up to; None proposes a new subcode."
    )
    name: str = Field(min_length=1, description="Short name of the pattern.")
    definition: str = Field(min_length=1, description="One-sentence definition.")
    example_unit_ids: tuple[str, ...] = Field(default=(), description="Units showing it.")
    notes: tuple[str, ...] = Field(
        default=(),
        description="What failcodes changed in the proposer's answer (e.g. example unit ids "
        "not in the batch, dropped).",
    )


class ProposalStatus(StrEnum):
    """Whether a proposal goes to review."""

    OPEN = "open"  # shown to reviewers
    DUPLICATE = "duplicate"  # matched an existing leaf or an earlier proposal; not reviewed


class Proposal(ProposalDraft):
    """A draft after deduplication, with its identity and provenance."""

    id: str = Field(description="rNNNN-pNN, unique in the project.")
    round: int
    leaf_id: str = Field(description="Id the new leaf (or subcode) would get.")
    proposer: str
    proposer_kind: CoderKind
    status: ProposalStatus = ProposalStatus.OPEN
    duplicate_of: str | None = Field(
        default=None, description="'leaf:ID', 'subcode:ID' or a proposal id this one repeats."
    )
    similarity: float | None = Field(default=None, description="Similarity to duplicate_of.")
    merged_from: tuple[str, ...] = Field(
        default=(), description="Later drafts of the same round folded into this one."
    )


class Action(StrEnum):
    """What a reviewer may decide about a proposal."""

    ACCEPT = "accept"  # add as proposed
    MERGE = "merge"  # covered by an existing leaf or subcode (target); no new code
    RENAME = "rename"  # add under a new name (and optionally definition)
    REJECT = "reject"  # not a pattern worth a code


#: Decisions that add a code to the next version.
ADDING_ACTIONS = frozenset({Action.ACCEPT, Action.RENAME})


class Decision(FrozenModel):
    """One human decision about one proposal (``decisions.jsonl``, append-only)."""

    proposal_id: str
    round: int
    action: Action
    reviewer: str = Field(min_length=1)
    decided_at: datetime = Field(default_factory=_now)
    via: str = Field(description="terminal, file, or auto-accept (never presented as human).")
    target: str | None = Field(default=None, description="Merge target: 'leaf:ID' or 'subcode:ID'.")
    new_name: str | None = None
    new_definition: str | None = None
    note: str | None = None


class StopState(FrozenModel):
    """The stop rule and where the project stands against it (``stop.json``)."""

    k: int
    closed_rounds: int
    rounds_without_new: int = Field(description="Trailing closed rounds with no new pattern.")
    saturated: bool
    thin_rounds: tuple[int, ...] = Field(
        default=(),
        description="Trailing rounds with no new pattern left out of the count: the judge "
        "scored fewer than min_scored of their units (a judge that answered nothing valid, or "
        "the pool's last few units), so they looked at too little to say nothing is new.",
    )
    min_scored: int = Field(default=0, description="Scored units a round needs to count.")

    def line(self) -> str:
        """``stop rule: N/K rounds without new patterns`` and the rounds left out of it."""
        text = f"stop rule: {self.rounds_without_new}/{self.k} rounds without new patterns"
        if self.saturated:
            text += " - SATURATED"
        if self.thin_rounds:
            rounds = ", ".join(str(n) for n in self.thin_rounds)
            text += (
                f"; not counted: round(s) {rounds} (the judge scored fewer than "
                f"{self.min_scored} of the round's units, half the batch size)"
            )
        return text


class AccumulationPoint(FrozenModel):
    """One closed round of the accumulation curve."""

    round: int
    new_patterns: int
    cumulative: int
    codebook_version: int = Field(description="Version in force after the round.")


class RecodeFlag(FrozenModel):
    """A unit coded under an older version that a codebook change touches."""

    unit_id: str
    coded_version: int
    new_version: int
    dimension: str
    reason: str


class PruneCandidate(FrozenModel):
    """A leaf supported by fewer units than the project's minimum."""

    leaf_id: str
    dimension: str
    parent_subcode: str
    label: str
    support: int
    unit_ids: tuple[str, ...]


class PruneAction(StrEnum):
    """What a person may decide about a rare leaf."""

    KEEP = "keep"
    DELETE = "delete"  # remove the leaf
    FOLD = "fold"  # remove the leaf, its definition becomes an inclusion rule of the parent
