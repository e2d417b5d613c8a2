"""Where a saturation project stands, as data (the CLI renders it)."""

from __future__ import annotations

from pydantic import Field

from failcodes.annotations import CoderKind, Status
from failcodes.contract import FrozenModel
from failcodes.recoding import RecodeMethod
from failcodes.saturation.models import AccumulationPoint, ProposalStatus, RoundPhase, StopState
from failcodes.saturation.review import latest_decisions
from failcodes.saturation.rounds import accumulation, latest_annotations, stop_state
from failcodes.saturation.store import ProjectStore


class RoundSummary(FrozenModel):
    """One round at a glance."""

    number: int
    phase: RoundPhase
    codebook_version: int
    units: int
    coded: int
    scored: int = Field(default=0, description="Coded units the judge scored (not unscored).")
    open_proposals: int
    duplicates: int
    decided: int
    new_patterns: int | None
    produced_version: int | None
    judge: str
    judge_kind: CoderKind
    proposer: str
    proposer_kind: CoderKind


class ProjectStatus(FrozenModel):
    """The whole project at a glance."""

    name: str
    root: str
    kind: str
    codebook: str
    versions: list[int]
    pool_size: int
    used_units: int
    rounds: list[RoundSummary]
    stop: StopState
    accumulation: list[AccumulationPoint]
    recode_flags: int
    recode_units: int
    unit_versions: dict[int, int] = Field(
        description="Coded units per codebook version of their newest annotation."
    )
    unscored_units: int = Field(
        default=0,
        description="Units whose newest annotation is unscored (the judge gave no valid "
        "answer): counted in unit_versions, but they hold no code.",
    )
    recoded_units: int = Field(
        description="Units whose current version `saturate recode` gave them by coding them "
        "again (each unit counted once, by its latest re-code)."
    )
    migrated_units: int = Field(
        description="Units whose current version a migration gave them, without a call (each "
        "unit counted once, by its latest re-code)."
    )
    stale_units: int = Field(description="Coded units still on an older version than the newest.")
    decisions: int
    reviewers: list[str]


def project_status(store: ProjectStore) -> ProjectStatus:
    """Collect the project's state from its files."""
    config = store.config()
    latest = latest_decisions(store)
    rounds = []
    for r in store.rounds():
        props = store.proposals(r.number)
        open_ = [p for p in props if p.status is ProposalStatus.OPEN]
        coded = store.round_annotations(r.number)
        rounds.append(
            RoundSummary(
                number=r.number,
                phase=r.phase,
                codebook_version=r.codebook_version,
                units=len(r.unit_ids),
                coded=len(coded),
                scored=sum(a.status is Status.SCORED for a in coded),
                open_proposals=len(open_),
                duplicates=len(props) - len(open_),
                decided=sum(1 for p in open_ if p.id in latest),
                new_patterns=r.new_patterns,
                produced_version=r.produced_version,
                judge=r.judge,
                judge_kind=r.judge_kind,
                proposer=r.proposer,
                proposer_kind=r.proposer_kind,
            )
        )
    flags = store.recode_flags()
    decisions = store.decisions()
    current = store.codebook()
    versions: dict[int, int] = {}
    unscored = 0
    for ann in latest_annotations(store).values():
        versions[ann.codebook.version] = versions.get(ann.codebook.version, 0) + 1
        unscored += ann.status is not Status.SCORED
    # how each unit reached its current version: its latest entry (versions ascending). Any
    # entry counted a unit re-coded to v2 then migrated to v3 in both: "v3: 80; 50 re-coded,
    # 43 migrated" (93 of 80 units) after two re-codes of 37 + 43 and 32 + 8
    latest_entry = {e.unit_id: e.method for e in store.recode_entries()}
    return ProjectStatus(
        name=config.name,
        root=str(store.root),
        kind=config.kind.value,
        codebook=f"{current.name}@{current.version}+{current.hash[:12]}",
        versions=store.versions(),
        pool_size=len(store.pool()),
        used_units=sum(r.units for r in rounds),
        rounds=rounds,
        stop=stop_state(store),
        accumulation=accumulation(store),
        recode_flags=len(flags),
        recode_units=len({f.unit_id for f in flags}),
        unit_versions=dict(sorted(versions.items())),
        unscored_units=unscored,
        recoded_units=sum(m is RecodeMethod.RECODED for m in latest_entry.values()),
        migrated_units=sum(m is RecodeMethod.MIGRATED for m in latest_entry.values()),
        stale_units=sum(n for v, n in versions.items() if v < current.version),
        decisions=len(decisions),
        reviewers=sorted({d.reviewer for d in decisions}),
    )
