"""Task export with predictions, and Label Studio exports mapped back (no server)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.errors import InputError
from failcodes.labelstudio.results import annotations_from_export
from failcodes.labelstudio.tasks import build_tasks, model_version, select_judged
from failcodes.units import UnitKind
from tests.labelstudio_helpers import judged, retrieval_unit, toy_codebook, verification_unit


def test_tasks_carry_unit_id_and_judge_codes_as_predictions() -> None:
    cb = toy_codebook()
    units = [retrieval_unit(i) for i in range(3)] + [verification_unit(0)]
    ann = {u.id: judged(u, cb, i) for i, u in enumerate(units[:2])}
    tasks = build_tasks([*units, units[0]], cb, UnitKind.RETRIEVAL, ann)
    # 3 retrieval units (the repeated one and the verification unit are not tasks)
    assert [t["data"]["failcodes_unit_id"] for t in tasks] == [u.id for u in units[:3]]
    first = tasks[0]
    assert first["data"]["claim"] == "Claim 0: statins lower LDL."
    assert first["data"]["passage"] == "[1] p0 (Doc 0)\nPassage 0 about statins."
    assert first["data"]["failcodes_codebook"] == str(cb.ref())
    pred = first["predictions"][0]
    assert pred["model_version"] == f"toy@1+{cb.hash[:12]} anthropic:claude-test"
    # judge_codes(0) = exact_entity, exact_scope; judge_codes(1) = partial_entity, broader_scope
    assert [(r["from_name"], r["value"]["choices"]) for r in pred["result"]] == [
        ("entity", ["exact_entity"]),
        ("scope", ["exact_scope"]),
    ]
    assert all(r["to_name"] == "claim" and r["type"] == "choices" for r in pred["result"])
    assert [r["value"]["choices"][0] for r in tasks[1]["predictions"][0]["result"]] == [
        "partial_entity",
        "broader_scope",
    ]
    assert "entity: partial_entity (Partial Entity)" in tasks[1]["data"]["proposal"]
    assert "Rationale: rationale 1" in tasks[1]["data"]["proposal"]
    assert "predictions" not in tasks[2]
    assert tasks[2]["data"]["proposal"] == "No judge proposal for this unit."


def test_verification_task_shows_all_passages_verdict_and_reasoning() -> None:
    cb = toy_codebook()
    (task,) = build_tasks([verification_unit(4)], cb, UnitKind.VERIFICATION)
    assert task["data"]["passages"] == "[1] p0\nFirst 4\n\n[2] p1\nSecond 4"
    assert task["data"]["verdict"] == "supported"
    assert task["data"]["reasoning"] == "Because."


def test_offline_judge_is_labelled_heuristic_and_unscored_has_no_prediction() -> None:
    cb = toy_codebook()
    u0, u1 = retrieval_unit(0), retrieval_unit(1)
    heur = judged(u0, cb, 0, coder="offline")
    unscored = judged(u1, cb, 1, coder="offline").model_copy(
        update={"status": Status.UNSCORED, "reason": "no JSON in answer", "codes": {}}
    )
    tasks = build_tasks([u0, u1], cb, UnitKind.RETRIEVAL, {u0.id: heur, u1.id: unscored})
    mv = tasks[0]["predictions"][0]["model_version"]
    assert mv == f"{cb.ref()} offline (heuristic baseline, not an LLM)"
    assert model_version(cb, heur) == mv
    assert "heuristic baseline" in tasks[0]["data"]["proposal"]
    assert "predictions" not in tasks[1]
    assert "no usable answer: no JSON in answer" in tasks[1]["data"]["proposal"]


def test_select_judged_needs_one_judge_and_the_same_codebook() -> None:
    cb = toy_codebook()
    u = retrieval_unit(0)
    a, b = judged(u, cb, 0, "judge-a"), judged(u, cb, 1, "judge-b")
    with pytest.raises(InputError, match="several judges \\(judge-a, judge-b\\)"):
        select_judged([a, b], cb)
    assert select_judged([a, b], cb, "judge-b")[u.id].codes == b.codes
    with pytest.raises(InputError, match="no annotations by judge 'judge-c'"):
        select_judged([a, b], cb, "judge-c")
    other = a.model_copy(update={"codebook": a.codebook.model_copy(update={"hash": "f" * 64})})
    with pytest.raises(InputError, match="not toy@1"):
        select_judged([other], cb)


# ---------------------------------------------------------------------------------------------
# Export files mapped back. The shape is what Label Studio 1.23.2 returns from
# GET /api/projects/{id}/export?exportType=JSON (seen on the test server): completed_by is a
# user id, lead_time in seconds, textarea values under value.text.


def choice(dim: str, code: str) -> dict[str, Any]:
    return {"from_name": dim, "to_name": "claim", "type": "choices", "value": {"choices": [code]}}


def text(name: str, value: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "claim", "type": "textarea", "value": {"text": [value]}}


def exported(project: int = 7) -> list[dict[str, Any]]:
    cb = toy_codebook()
    tasks = build_tasks([retrieval_unit(i) for i in range(2)], cb, UnitKind.RETRIEVAL)
    out = []
    for n, t in enumerate(tasks, start=1):
        out.append(
            {
                "id": 100 + n,
                "annotations": [],
                "drafts": [],
                "predictions": [],
                "data": t["data"],
                "meta": {},
                "project": project,
            }
        )
    out[0]["annotations"] = [
        {
            "id": 1,
            "completed_by": 3,
            "result": [
                choice("entity", "partial_entity"),
                choice("scope", "broader_scope"),
                text("comment", "passage is about adults"),
                text("other_code", "population_mismatch: adults vs children"),
            ],
            "was_cancelled": False,
            "created_at": "2026-11-30T00:26:00.530173Z",
            "updated_at": "2026-11-30T00:26:00.530193Z",
            "lead_time": 12.5,
            "task": 101,
            "project": project,
        },
        {
            "id": 2,
            "completed_by": 4,
            "result": [choice("entity", "not_a_code"), choice("scope", "exact_scope")],
            "was_cancelled": False,
            "updated_at": "2026-11-30T00:27:00Z",
            "lead_time": 3,
        },
    ]
    out[1]["annotations"] = [
        {"id": 3, "completed_by": 3, "result": [], "was_cancelled": True, "lead_time": 1.0},
        {
            "id": 4,
            "completed_by": {"id": 9, "email": "carol@example.org"},
            "result": [choice("entity", "irrelevant"), choice("novelty", "new")],
            "was_cancelled": False,
            "lead_time": 2.0,
        },
    ]
    return out


def test_export_maps_to_human_annotations_with_problems_reported() -> None:
    cb = toy_codebook()
    data = exported()
    res = annotations_from_export(
        data, cb, UnitKind.RETRIEVAL, users={3: "alice@example.org"}, project=7
    )
    assert res.tasks == 2
    assert res.projects == [7]
    by = {(a.unit_id, a.coder): a for a in res.annotations}
    u0, u1 = (t["data"]["failcodes_unit_id"] for t in data)
    alice = by[(u0, "alice@example.org")]
    assert alice.codes == {"entity": "partial_entity", "scope": "broader_scope"}
    assert alice.coder_kind is CoderKind.HUMAN
    assert alice.lead_time_s == 12.5
    assert alice.rationale == "passage is about adults"
    assert alice.proposal == "population_mismatch: adults vs children"
    assert alice.codebook == cb.ref()
    assert alice.created_at.isoformat() == "2026-11-30T00:26:00.530193+00:00"
    # user 4 is not in the users map; the unknown choice is dropped, the valid one kept
    bob = by[(u0, "label-studio-user-4")]
    assert bob.codes == {"scope": "exact_scope"}
    assert bob.lead_time_s == 3.0
    skipped = by[(u1, "alice@example.org")]
    assert skipped.status is Status.UNSCORED and skipped.codes == {}
    carol = by[(u1, "carol@example.org")]
    assert carol.codes == {"entity": "irrelevant"}
    messages = sorted(p.message for p in res.problems)
    assert messages == [
        "no code for dimension 'scope'",
        "unknown choice 'not_a_code' in dimension 'entity' (valid: exact_entity, "
        "partial_entity, irrelevant); not kept",
        "unknown dimension 'novelty'; not kept",
    ]
    bad = next(p for p in res.problems if p.value == "not_a_code")
    assert (bad.task_id, bad.unit_id, bad.coder, bad.dimension) == (
        101,
        u0,
        "label-studio-user-4",
        "entity",
    )
    assert len(res.annotations) == 4


def test_same_coder_twice_keeps_latest() -> None:
    cb = toy_codebook()
    data = exported()
    again = copy.deepcopy(data[0]["annotations"][0])
    again["updated_at"] = "2026-12-01T00:00:00Z"
    again["result"] = [choice("entity", "irrelevant"), choice("scope", "exact_scope")]
    data[0]["annotations"].insert(0, again)
    res = annotations_from_export(data, cb, UnitKind.RETRIEVAL, users={3: "alice"})
    alice = [a for a in res.annotations if a.coder == "alice" and a.status is Status.SCORED]
    assert [a.codes["entity"] for a in alice] == ["irrelevant"]
    assert any("several annotations by the same coder" in p.message for p in res.problems)


def test_an_annotation_submitted_with_no_choice_is_not_a_review() -> None:
    # A reviewer pressed Submit with nothing chosen (outside check, redteam2: an export edited
    # as a reviewer's tool would leave it, `"result": []`, not cancelled). It was kept as a
    # SCORED annotation with no codes: `review status` counted the unit reviewed, and the
    # corrected attribution read it as "no passage high quality" (-> retrieval).
    cb = toy_codebook()
    data = exported()
    data[1]["annotations"] = [
        {"id": 5, "completed_by": 3, "result": [], "was_cancelled": False, "lead_time": 4.0},
        {
            "id": 6,
            "completed_by": 4,
            "result": [text("comment", "cannot tell")],
            "was_cancelled": False,
        },
    ]
    res = annotations_from_export(data, cb, UnitKind.RETRIEVAL, users={3: "alice", 4: "bob"})
    u1 = data[1]["data"]["failcodes_unit_id"]
    empty = {a.coder: a for a in res.annotations if a.unit_id == u1}
    assert set(empty) == {"alice", "bob"}
    for ann in empty.values():  # a comment alone is no code either
        assert ann.status is Status.UNSCORED
        assert ann.reason == "submitted with no code in Label Studio"
        assert ann.codes == {}
    assert empty["bob"].rationale == "cannot tell"


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d[1]["data"].pop("failcodes_unit_id"), "task 102 has no failcodes_unit_id"),
        (
            lambda d: d[0]["data"].update(failcodes_codebook="other@2+abc"),
            "task 101 was made for codebook other@2+abc, not toy@1",
        ),
        (
            lambda d: d[0]["data"].update(failcodes_unit_kind="verification"),
            "task 101 holds a verification unit, not retrieval",
        ),
        (lambda d: d[1].update(project=8), "task 102 belongs to Label Studio project 8, not 7"),
        (lambda d: d.__setitem__(0, "x"), "task 1 is not a Label Studio task object"),
    ],
)
def test_export_from_another_project_is_rejected(mutate: Any, needle: str) -> None:
    data = exported()
    mutate(data)
    with pytest.raises(InputError) as info:
        annotations_from_export(
            data, toy_codebook(), UnitKind.RETRIEVAL, project=7, source="x.json"
        )
    assert needle in info.value.one_line()
    assert info.value.one_line().startswith("x.json: ")


def test_export_must_be_a_list() -> None:
    with pytest.raises(InputError, match="expected a list of tasks"):
        annotations_from_export({"tasks": []}, toy_codebook(), UnitKind.RETRIEVAL)


def test_annotation_round_trips_through_json() -> None:
    res = annotations_from_export(exported(), toy_codebook(), UnitKind.RETRIEVAL)
    for a in res.annotations:
        assert Annotation.model_validate_json(a.model_dump_json()) == a
