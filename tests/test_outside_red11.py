"""Outside red-team, session 11 (t11red1): shapes the other tests do not use.

Each test holds the value computed by hand beside its assertion, or the one-line refusal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.saturation import (
    Action,
    Decision,
    ProjectConfig,
    ProjectStore,
    ProposalDraft,
    SaturationError,
    ScriptedCoder,
    ScriptedProposer,
    accumulation,
    init_project,
    record_decisions,
    run_round,
)
from failcodes.units import UnitKind
from tests.saturation.satfixtures import make_pool, small_codebook

# ---------------------------------------------------------------------------------------
# saturate: a rename that restates a code of the codebook, or another addition of its round
# ---------------------------------------------------------------------------------------
_ANIMAL = ProposalDraft(
    dimension="scope",
    parent_subcode="different_context",
    name="Animal study",
    definition="The passage reports findings in animals, not in humans.",
)
_SCRIPT = {
    1: [_ANIMAL],
    2: [
        ProposalDraft(
            dimension="scope",
            parent_subcode="different_context",
            name="Paediatric population",
            definition="The passage studies children while the claim is about adults.",
        ),
        ProposalDraft(
            dimension="scope",
            parent_subcode="different_context",
            name="Dose regimen differs",
            definition="Another dose or schedule than the claim.",
        ),
    ],
}


def _decide(store: ProjectStore, number: int, choices: dict[str, dict[str, str]]) -> None:
    record_decisions(
        store,
        [
            Decision(proposal_id=pid, round=number, reviewer="alice", via="test", **kw)  # type: ignore[arg-type]
            for pid, kw in choices.items()
        ],
    )


@pytest.fixture
def two_rounds(tmp_path: Path) -> ProjectStore:
    """Round 1 accepted 'Animal study' (v2); round 2 awaits review with two proposals."""
    config = ProjectConfig(
        name="red11", kind=UnitKind.RETRIEVAL, batch_size=5, seed=7, codebook_name="testbook"
    )
    store = init_project(tmp_path / "proj", config, small_codebook(), make_pool())
    proposer = ScriptedProposer(_SCRIPT)
    run_round(store, ScriptedCoder(), proposer)
    _decide(store, 1, {"r0001-p01": {"action": Action.ACCEPT}})
    run_round(store, ScriptedCoder(), proposer)
    return store


def test_rename_to_an_existing_leaf_is_refused_not_counted_as_new(
    two_rounds: ProjectStore,
) -> None:
    # Before: renaming round 2's p01 to 'Animal study' (the label of the leaf round 1 added)
    # added leaf animal_study_2 with the same label and counted it as a new pattern:
    # accumulation r2 +2 (=3) where the distinct patterns are 2 (animal study, dose regimen).
    before = len(two_rounds.decisions())  # 1 (round 1's accept)
    with pytest.raises(
        SaturationError,
        match=r"r0002-p01: renamed to 'animal studies'.*"
        r"leaf:animal_study.*merge with target leaf:animal_study",
    ):
        _decide(
            two_rounds,
            2,
            {
                "r0002-p01": {"action": Action.RENAME, "new_name": "animal studies"},
                "r0002-p02": {"action": Action.ACCEPT},
            },
        )
    assert len(two_rounds.decisions()) == before == 1  # nothing written
    assert [p.cumulative for p in accumulation(two_rounds)] == [1]  # round 1's one pattern


def test_rename_onto_another_addition_of_the_round_is_refused(two_rounds: ProjectStore) -> None:
    # Before: p01 renamed 'Dose regimen differs' took id dose_regimen_differ; p02 accepted
    # with that proposed id: the decisions were written, then closing failed on a duplicate
    # id (exit 2, the round stuck with recorded decisions).
    with pytest.raises(
        SaturationError,
        match=r"r0002-p02: accepted as 'Dose regimen differs', "
        r"as r0002-p01 is in this round",
    ):
        _decide(
            two_rounds,
            2,
            {
                "r0002-p01": {"action": Action.RENAME, "new_name": "Dose regimen differs"},
                "r0002-p02": {"action": Action.ACCEPT},
            },
        )
    assert len(two_rounds.decisions()) == 1
    # a distinct name closes the round with 2 new patterns: 1 + 2 = 3 cumulative
    _decide(
        two_rounds,
        2,
        {
            "r0002-p01": {"action": Action.RENAME, "new_name": "Children only"},
            "r0002-p02": {"action": Action.ACCEPT},
        },
    )
    assert [p.cumulative for p in accumulation(two_rounds)] == [1, 3]
