"""The saturation loop driven by a scripted fake judge and proposer over six rounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.saturation import (
    Action,
    Decision,
    ProjectStore,
    ProposalDraft,
    ProposalStatus,
    RoundPhase,
    SaturationError,
    ScriptedCoder,
    ScriptedProposer,
    accumulation,
    record_decisions,
    run_round,
    stop_state,
)
from failcodes.saturation.rounds import latest_annotations

D = ProposalDraft

SCRIPT = {
    1: [
        D(
            dimension="scope",
            parent_subcode="different_context",
            name="Animal study",
            definition="The passage reports findings in animals, not in humans.",
        ),
        # same pattern in other words: folded into p01 (normalised names are equal)
        D(
            dimension="scope",
            parent_subcode="different_context",
            name="animal studies",
            definition="Evidence from mice or rats.",
        ),
        D(
            dimension="entity_match",
            parent_subcode="entity_mismatch",
            name="Wrong drug",
            definition="The passage is about another drug than the claim.",
        ),
        # already a subcode of the codebook (label "Exact scope")
        D(
            dimension="scope",
            parent_subcode="exact_scope",
            name="Exact scope",
            definition="Anything.",
        ),
    ],
    2: [
        # now an existing leaf (accepted in round 1)
        D(
            dimension="scope",
            parent_subcode="different_context",
            name="Animal studies",
            definition="Mice.",
        ),
        D(
            dimension="scope",
            parent_subcode="different_context",
            name="Paediatric population",
            definition="The passage studies children while the claim is about adults.",
        ),
        D(
            dimension="entity_match",
            parent_subcode="irrelevant",
            name="Off topic passage",
            definition="Passage about an unrelated subject.",
        ),
    ],
    3: [
        # repeats what the reviewer rejected in round 2
        D(
            dimension="entity_match",
            parent_subcode="irrelevant",
            name="off-topic passages",
            definition="Passage unrelated.",
        ),
    ],
    4: [
        D(
            dimension="scope",
            parent_subcode="different_context",
            name="Dose regimen differs",
            definition="Another dose or schedule than the claim.",
        ),
    ],
    # round 5: nothing proposed
}


def scripted_codes(pool_ids: list[str]) -> dict[str, dict[str, str]]:
    # unit i: different_context on scope if i % 3 == 0, entity_mismatch if i % 5 == 0,
    # high-quality codes otherwise
    codes: dict[str, dict[str, str]] = {}
    for i, uid in enumerate(pool_ids):
        c = {}
        if i % 3 == 0:
            c["scope"] = "different_context"
        if i % 5 == 0:
            c["entity_match"] = "entity_mismatch"
        codes[uid] = c
    return codes


def decide(store: ProjectStore, number: int, choices: dict[str, dict[str, str]]) -> None:
    decisions = [
        Decision(proposal_id=pid, round=number, reviewer="alice", via="test", **kw)  # type: ignore[arg-type]
        for pid, kw in choices.items()
    ]
    record_decisions(store, decisions)


def test_six_rounds_dedupe_versions_migration_and_stop_rule(project: ProjectStore) -> None:
    pool_ids = [u.id for u in project.pool()]
    codes = scripted_codes(pool_ids)
    coder = ScriptedCoder(codes=codes)
    proposer = ScriptedProposer(SCRIPT)

    # ---- round 1: 4 drafts -> 2 open, 1 folded twin, 1 duplicate of a subcode
    r1 = run_round(project, coder, proposer)
    assert r1.phase is RoundPhase.PROPOSED
    assert len(r1.unit_ids) == 5
    props = {p.id: p for p in project.proposals(1)}
    assert [p.status for p in props.values()] == [
        ProposalStatus.OPEN,
        ProposalStatus.DUPLICATE,
        ProposalStatus.OPEN,
        ProposalStatus.DUPLICATE,
    ]
    assert props["r0001-p02"].duplicate_of == "r0001-p01"
    assert props["r0001-p02"].similarity == 1.0  # "animal studies" == "animal study" normalised
    assert props["r0001-p01"].merged_from == ("r0001-p02",)
    assert props["r0001-p04"].duplicate_of == "subcode:exact_scope"
    assert props["r0001-p01"].leaf_id == "animal_study"
    # a new round cannot start while this one awaits review
    with pytest.raises(SaturationError, match="awaits review"):
        run_round(project, coder, proposer)
    decide(
        project,
        1,
        {
            "r0001-p01": {"action": Action.ACCEPT},
            "r0001-p03": {"action": Action.RENAME, "new_name": "Different drug class"},
        },
    )
    r1 = project.round(1)
    assert r1.phase is RoundPhase.CLOSED
    assert (r1.new_patterns, r1.produced_version) == (2, 2)
    v2 = project.codebook()
    assert (v2.version, v2.parent_version) == (2, 1)
    scope = v2.part(r1_kind := project.config().kind).dimension("scope")
    assert [leaf.id for s in scope.subcodes for leaf in s.leaves] == ["animal_study"]
    ent = v2.part(r1_kind).dimension("entity_match")
    assert [leaf.id for s in ent.subcodes for leaf in s.leaves] == ["different_drug_class"]
    assert "decided by alice" in v2.changelog
    changes = project.changes(2)
    assert changes is not None
    assert changes["parent_hash"] == project.codebook(1).hash
    assert sorted(changes["diff"]) == [
        "+ leaf animal_study (scope)",
        "+ leaf different_drug_class (entity_match)",
    ]
    assert changes["migration_map"]["codes"]["different_context"] == "different_context"
    assert {(m["dimension"], m["code"], m["action"]) for m in changes["migration"]} == {
        ("scope", "different_context", "recode"),
        ("entity_match", "entity_mismatch", "recode"),
    }

    # migration: exactly the round-1 units coded with a touched subcode are flagged
    index = {uid: i for i, uid in enumerate(pool_ids)}
    batch1 = r1.unit_ids
    expected_v2 = {(u, "scope") for u in batch1 if index[u] % 3 == 0} | {
        (u, "entity_match") for u in batch1 if index[u] % 5 == 0
    }
    flags = project.recode_flags()
    assert {(f.unit_id, f.dimension) for f in flags if f.new_version == 2} == expected_v2

    # ---- round 2: duplicate of the new leaf; accept one, reject one
    run_round(project, coder, proposer)
    props = {p.id: p for p in project.proposals(2)}
    assert props["r0002-p01"].duplicate_of == "leaf:animal_study"
    decide(
        project,
        2,
        {
            "r0002-p02": {"action": Action.ACCEPT},
            "r0002-p03": {"action": Action.REJECT},
        },
    )
    assert project.codebook().version == 3
    batch12 = set(batch1) | set(project.round(2).unit_ids)
    expected_v3 = {(u, "scope") for u in batch12 if index[u] % 3 == 0}
    assert {(f.unit_id, f.dimension) for f in project.recode_flags() if f.new_version == 3} == (
        expected_v3
    )

    # ---- round 3: only a repeat of the rejected proposal -> closes by itself, nothing new
    r3 = run_round(project, coder, proposer)
    assert r3.phase is RoundPhase.CLOSED
    assert project.proposals(3)[0].duplicate_of == "r0002-p03"
    assert r3.new_patterns == 0

    # ---- round 4: reviewer merges into an existing subcode: no new version
    run_round(project, coder, proposer)
    decide(
        project,
        4,
        {"r0004-p01": {"action": Action.MERGE, "target": "subcode:different_context"}},
    )
    assert project.round(4).new_patterns == 0
    assert project.codebook().version == 3
    assert not stop_state(project).saturated

    # ---- round 5: nothing proposed -> third round in a row without new patterns
    r5 = run_round(project, coder, proposer)
    assert r5.phase is RoundPhase.CLOSED
    state = stop_state(project)
    assert (state.rounds_without_new, state.saturated) == (3, True)
    with pytest.raises(SaturationError, match="saturated"):
        run_round(project, coder, proposer)

    # accumulation curve: 2, 1, 0, 0, 0 new; cumulative 2, 3, 3, 3, 3
    curve = accumulation(project)
    assert [(p.round, p.new_patterns, p.cumulative, p.codebook_version) for p in curve] == [
        (1, 2, 2, 2),
        (2, 1, 3, 3),
        (3, 0, 3, 3),
        (4, 0, 3, 3),
        (5, 0, 3, 3),
    ]
    # five rounds of five units, none drawn twice
    used = [u for r in project.rounds() for u in r.unit_ids]
    assert len(used) == 25 and len(set(used)) == 25

    # --force runs a sixth round anyway
    r6 = run_round(project, coder, proposer, force=True)
    assert r6.number == 6

    # the project can be continued from its files alone
    again = ProjectStore.open(project.root)
    assert stop_state(again).rounds_without_new == 4
    assert {d.reviewer for d in again.decisions()} == {"alice"}
    assert len(latest_annotations(again)) == 30


def test_decision_validation(project: ProjectStore) -> None:
    coder = ScriptedCoder()
    run_round(project, coder, ScriptedProposer(SCRIPT))
    bad_target = Decision(
        proposal_id="r0001-p01",
        round=1,
        action=Action.MERGE,
        target="leaf:nope",
        reviewer="bob",
        via="test",
    )
    with pytest.raises(SaturationError, match="merge target 'leaf:nope'"):
        record_decisions(project, [bad_target])
    dup = Decision(
        proposal_id="r0001-p02", round=1, action=Action.ACCEPT, reviewer="bob", via="test"
    )
    with pytest.raises(SaturationError, match="no open proposal"):
        record_decisions(project, [dup])
    assert project.decisions() == []  # nothing written when validation fails


def test_last_decision_wins_and_partial_review_keeps_round_open(project: ProjectStore) -> None:
    run_round(project, ScriptedCoder(), ScriptedProposer(SCRIPT))
    decide(project, 1, {"r0001-p01": {"action": Action.REJECT}})
    assert project.round(1).phase is RoundPhase.PROPOSED
    decide(project, 1, {"r0001-p01": {"action": Action.ACCEPT}})
    decide(project, 1, {"r0001-p03": {"action": Action.REJECT}})
    assert project.round(1).new_patterns == 1
    assert len(project.decisions()) == 3


def test_torn_journal_line_is_ignored_and_repaired(project: ProjectStore, tmp_path: Path) -> None:
    from failcodes.saturation.rounds import start_round

    coder = ScriptedCoder(calls_log=tmp_path / "calls.txt")
    proposer = ScriptedProposer({})
    record = start_round(project, coder, proposer)
    first = next(
        iter(
            coder.code(
                [u for u in project.pool() if u.id == record.unit_ids[0]], project.codebook()
            )
        )
    )
    project.append_annotation(1, first)
    with project.annotations_path(1).open("a") as fh:
        fh.write('{"unit_id": "half a li')  # a writer killed mid-line
    assert [a.unit_id for a in project.round_annotations(1)] == [record.unit_ids[0]]
    run_round(project, coder, proposer)
    lines = project.annotations_path(1).read_text().splitlines()
    assert len(lines) == 5  # torn line cut, 4 more units appended
    calls = (tmp_path / "calls.txt").read_text().split()
    assert calls[0] == record.unit_ids[0] and sorted(calls[1:]) == sorted(record.unit_ids[1:])


def test_resume_refuses_another_judge_once_coding_started(project: ProjectStore) -> None:
    from failcodes.saturation.rounds import start_round

    record = start_round(project, ScriptedCoder(name="judge-a"), ScriptedProposer({}))
    # nothing coded yet: another judge may take the round over
    again = start_round(project, ScriptedCoder(name="judge-b"), ScriptedProposer({}))
    assert (again.number, again.judge) == (1, "judge-b")
    unit = next(u for u in project.pool() if u.id == record.unit_ids[0])
    project.append_annotation(
        1, next(ScriptedCoder(name="judge-b").code([unit], project.codebook()))
    )
    with pytest.raises(SaturationError, match="started with judge 'judge-b'"):
        run_round(project, ScriptedCoder(name="judge-a"), ScriptedProposer({}))
