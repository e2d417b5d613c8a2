"""Outside red-team of the human review side (session 11): Label Studio exports, review files,
human vs judge agreement and the corrected shares, on shapes the other tests do not use."""

from __future__ import annotations

from typing import Any

from failcodes.annotations import Status
from failcodes.labelstudio.results import annotations_from_export
from failcodes.labelstudio.tasks import build_tasks
from failcodes.units import UnitKind
from tests.labelstudio_helpers import retrieval_unit, toy_codebook


def _choice(dim: str, *codes: str, **extra: Any) -> dict[str, Any]:
    item = {
        "from_name": dim,
        "to_name": "claim",
        "type": "choices",
        "value": {"choices": list(codes)},
    }
    item.update(extra)
    return item


def _task(n: int, annotations: list[dict[str, Any]]) -> dict[str, Any]:
    data = build_tasks([retrieval_unit(n)], toy_codebook(), UnitKind.RETRIEVAL)[0]["data"]
    return {"id": 100 + n, "data": data, "annotations": annotations, "project": 7}


def _ann(by: int, result: list[dict[str, Any]], at: str = "2026-11-30T00:00:00Z") -> dict[str, Any]:
    return {"completed_by": by, "result": result, "was_cancelled": False, "updated_at": at}


def test_a_dimension_chosen_twice_in_one_annotation_is_not_kept() -> None:
    # One annotation whose result holds 'entity' twice: exact_entity (the task's choice) and
    # irrelevant (a region's choice, id 'reg1'). Before: the later item replaced the earlier
    # without a word (codes {'entity': 'irrelevant'}, exit 0). Expected: neither is kept (the
    # reviewer's answer cannot be told), a problem names the dimension and both choices;
    # 'scope' is kept; the same choice given twice is one answer.
    result = [
        _choice("entity", "exact_entity"),
        _choice("scope", "exact_scope"),
        _choice("entity", "irrelevant", id="reg1"),
    ]
    same = [_choice("entity", "irrelevant"), _choice("scope", "exact_scope")] * 2
    got = annotations_from_export(
        [_task(0, [_ann(3, result)]), _task(1, [_ann(3, same)])],
        toy_codebook(),
        UnitKind.RETRIEVAL,
    )
    first, second = got.annotations
    assert first.status is Status.SCORED
    assert first.codes == {"scope": "exact_scope"}
    assert second.codes == {"entity": "irrelevant", "scope": "exact_scope"}
    assert [str(p) for p in got.problems] == [
        f"task 100 (unit {first.unit_id}), coder label-studio-user-3: two different choices "
        "in 'entity' (exact_entity and irrelevant); not kept"
    ]


def test_a_time_without_offset_is_utc_and_the_latest_annotation_is_kept() -> None:
    # One coder annotated task 0 twice: at 10:00 written without an offset, at 09:00Z. Before:
    # TypeError (offset-naive vs offset-aware), a traceback, exit 1. Label Studio's times are
    # UTC: 10:00 is the later, so its code (irrelevant) is kept, and a third annotation with no
    # time at all still compares.
    late = _ann(3, [_choice("entity", "irrelevant"), _choice("scope", "exact_scope")])
    late["updated_at"] = "2026-11-30T10:00:00"
    early = _ann(
        3,
        [_choice("entity", "exact_entity"), _choice("scope", "exact_scope")],
        "2026-11-30T09:00:00Z",
    )
    untimed = _ann(4, [_choice("entity", "exact_entity"), _choice("scope", "exact_scope")])
    del untimed["updated_at"]
    got = annotations_from_export(
        [_task(0, [late, early, untimed])], toy_codebook(), UnitKind.RETRIEVAL
    )
    by = {a.coder: a for a in got.annotations}
    assert by["label-studio-user-3"].codes["entity"] == "irrelevant"
    assert by["label-studio-user-3"].created_at.isoformat() == "2026-11-30T10:00:00+00:00"
    assert by["label-studio-user-4"].codes["entity"] == "exact_entity"
