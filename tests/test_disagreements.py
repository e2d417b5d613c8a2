"""Disagreements on the hand-made fixture (tests/metrics_fixtures.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.disagreementio import read_disagreements
from failcodes.disagreements import (
    Disagreement,
    DisagreementKind,
    count_by_kind,
    find_disagreements,
)
from failcodes.errors import InputError
from failcodes.metrics import compute_metrics
from failcodes.verdicts import Verdict
from tests.judge_helpers import write_disagreements
from tests.metrics_fixtures import labels, trace, traces_a


def test_sentence_disagreements_refuted() -> None:
    # refuted flags s1 only (see test_mapping.py). Labels: s1 T, s2 F, s3 T, s4 F, s5 T, s6 F.
    # FN = labelled error not flagged: s3, s5. FP = flagged without label: none.
    ds = find_disagreements(traces_a(), labels(), "refuted", without_claims="exclude")
    assert [(d.sentence_id, d.kind) for d in ds] == [
        ("s3", DisagreementKind.FN),
        ("s5", DisagreementKind.FN),
    ]
    s3 = ds[0]
    assert s3.system == "A" and s3.question_id == "q2" and s3.mapping == "refuted"
    assert [c.claim_id for c in s3.claims] == ["c4", "c5"]
    assert [c.verdict for c in s3.claims] == [Verdict.AMBIGUOUS, Verdict.SUPPORTED]
    assert [c.maps_to_error for c in s3.claims] == [False, False]
    assert s3.claims[0].reasoning == "reasoning for c4 by A"
    assert s3.claims[0].passages[0].text == "passage 1 for c4"
    assert s3.label_rationale == "why s3"
    assert s3.sentence == "sentence s3"
    assert s3.error_claim_ids == ()


def test_sentence_disagreements_strict_have_fp_causes() -> None:
    # strict flags s1, s2, s4, s6: FP = s2 (c3 NE), s4 (c6 OOS), s6 (c9 NE); FN = s3, s5.
    ds = find_disagreements(traces_a(), labels(), "strict", without_claims="exclude")
    kinds = {d.sentence_id: d.kind.value for d in ds}
    assert kinds == {"s2": "FP", "s3": "FN", "s4": "FP", "s5": "FN", "s6": "FP"}
    s6 = next(d for d in ds if d.sentence_id == "s6")
    assert s6.error_claim_ids == ("c9",)
    assert s6.predicted_error is True and s6.label_has_error is False


@pytest.mark.parametrize("mapping", ["refuted", "refuted+no_evidence", "non_supported", "strict"])
@pytest.mark.parametrize("level", ["sentence", "claim"])
def test_counts_equal_metrics_fn_fp(mapping: str, level: str) -> None:
    ds = find_disagreements(traces_a(), labels(), mapping, level=level)
    (r,) = compute_metrics(traces_a(), labels(), [mapping], level=level).results
    assert count_by_kind(ds).get(("A", mapping), {"FN": 0, "FP": 0}) == {"FN": r.fn, "FP": r.fp}


def test_claim_level_uses_claim_label() -> None:
    # refuted at claim level: FN c4, c5, c7 (c1 has its own label False, so it is no FN).
    ds = find_disagreements(traces_a(), labels(), "refuted", level="claim")
    assert [d.claim_id for d in ds] == ["c4", "c5", "c7"]
    assert all(len(d.claims) == 1 and d.claims[0].label_has_error for d in ds)


def test_without_claims_policy_no_error_adds_empty_fn() -> None:
    ds = find_disagreements(traces_a(), labels(), "refuted", without_claims="no_error")
    s7 = next(d for d in ds if d.sentence_id == "s7")
    assert s7.kind is DisagreementKind.FN and s7.claims == ()


def test_ids_are_stable_and_unique() -> None:
    a = find_disagreements(traces_a(), labels(), "non_supported")
    b = find_disagreements(list(reversed(traces_a())), labels(), "non_supported")
    assert [d.id for d in a] == [d.id for d in b]
    assert len({d.id for d in a}) == len(a)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    traces = [*traces_a(), trace("B", "q1", "s1", "c1", Verdict.SUPPORTED, passages=3)]
    ds = find_disagreements(traces, labels(), "strict")
    out = write_disagreements(tmp_path / f"d{suffix}", ds)
    assert read_disagreements(out) == ds
    assert [p.name for p in tmp_path.iterdir()] == [f"d{suffix}"]  # no temp file left


def test_round_trip_empty(tmp_path: Path) -> None:
    for suffix in (".jsonl", ".parquet"):
        assert read_disagreements(write_disagreements(tmp_path / f"e{suffix}", [])) == []


def test_read_errors_name_file_line_field(tmp_path: Path) -> None:
    (d,) = find_disagreements(traces_a(), labels(), "refuted")[:1]
    rec = d.model_dump(mode="json")
    rec["kind"] = "XX"
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(d.model_dump(mode="json")) + "\n" + json.dumps(rec) + "\n")
    with pytest.raises(InputError) as info:
        read_disagreements(path)
    assert str(info.value).startswith(f"{path}:2, field 'kind'")
    path.write_text("{not json\n")
    with pytest.raises(InputError, match=r"bad.jsonl:1: malformed JSON"):
        read_disagreements(path)
    with pytest.raises(InputError, match=r"use \.jsonl or \.parquet"):
        write_disagreements(tmp_path / "x.csv", [])


def test_model_documents_every_field() -> None:
    schema = Disagreement.model_json_schema()
    assert schema["properties"]["kind"]["description"].startswith("FN = clinician error missed")
