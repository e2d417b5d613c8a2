"""Atomic fact-check pipelines (seed 003) on a hand-made fixture with hand-computed values."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.benchmarks.atomic import evaluate
from failcodes.errors import InputError
from failcodes.ingest import get_adapter
from failcodes.ingest.atomic import read_atomic
from failcodes.ingest.base import AdapterOptions
from failcodes.metrics import compute_metrics
from failcodes.verdicts import Verdict

FIXTURE = Path(__file__).parent / "data" / "atomic" / "facts.jsonl"


def test_atomic_metrics_hand_computed() -> None:
    data = read_atomic(FIXTURE)
    a, b = evaluate(data.facts, data.answers)
    # sysA: TP f1,f2,f10; FP f3; FN f7,f8; TN f4,f5,f6,f9.
    assert (a.tp, a.fp, a.fn, a.tn) == (3, 1, 2, 4)
    assert a.sensitivity == pytest.approx(3 / 5)
    assert a.specificity == pytest.approx(4 / 5)
    assert a.precision == pytest.approx(3 / 4)
    assert a.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert a.accuracy == pytest.approx(7 / 10)
    assert a.balanced_accuracy == pytest.approx(0.7)
    # hallucination: f1 detected, f7 missed; incorrect f2 detected; missing f8 missed;
    # lack of context f10 detected.
    assert a.detection_rate == {
        "hallucination": 0.5,
        "incorrect information": 1.0,
        "missing information": 0.0,
        "lack of context": 1.0,
    }
    assert a.outcome_shares == {"improved": 0.25, "unchanged": 0.5, "worsened": 0.25}
    # chunk-annotated: f1(1) f2(2) f3(1) f4(1) f5(3) f6(not ranked) f10(4) -> 7 facts.
    assert a.n_chunk_annotated == 7
    assert a.top1_chunk_accuracy == pytest.approx(3 / 7)
    assert a.top3_chunk_accuracy == pytest.approx(5 / 7)
    # sysB: no wrong fact and no FALSE verdict -> sensitivity/precision undefined, not 0.
    assert b.system == "sysB"
    assert b.sensitivity is None and "sensitivity" in b.undefined
    assert b.precision is None and b.specificity == 1.0
    assert b.outcome_shares["improved"] is None
    assert b.detection_rate["hallucination"] is None


def test_atomic_traces_agree_with_failcodes_metrics() -> None:
    res = get_adapter("atomic").read([FIXTURE], AdapterOptions())
    assert len(res.traces) == 12 and len(res.labels) == 12
    f1 = next(t for t in res.traces if t.claim_id == "f1")
    assert f1.verdict == Verdict.REFUTED and f1.raw_verdict == "FALSE"
    assert [p.passage_id for p in f1.passages] == ["g12", "g40"]
    report = compute_metrics(res.traces, res.labels, ["refuted"], level="claim")
    row = next(r for r in report.results if r.system == "sysA")
    # Same confusion matrix as the seed-003 definitions above.
    assert (row.tp, row.fp, row.fn, row.tn) == (3, 1, 2, 4)


@pytest.mark.parametrize(
    ("line", "match", "field"),
    [
        (
            '{"answer_id": "a", "fact_id": "x", "fact": "t", "verdict": "MAYBE", '
            '"human_confirms": true}',
            "TRUE or FALSE",
            "verdict",
        ),
        (
            '{"answer_id": "a", "fact_id": "x", "fact": "t", "verdict": "TRUE", '
            '"human_confirms": true, "error_category": "hallucination"}',
            "judged correct",
            "error_category",
        ),
        (
            '{"answer_id": "a", "fact_id": "x", "fact": "t", "verdict": "TRUE", '
            '"human_confirms": false, "error_category": "typo"}',
            "",
            "error_category",
        ),
        ('{"type": "answer", "answer_id": "a", "outcome": "better"}', "", "outcome"),
    ],
)
def test_atomic_bad_input(tmp_path: Path, line: str, match: str, field: str) -> None:
    p = tmp_path / "f.jsonl"
    p.write_text(
        '{"answer_id": "a", "fact_id": "ok", "fact": "t", "verdict": "TRUE", '
        '"human_confirms": true}\n' + line + "\n"
    )
    with pytest.raises(InputError, match=match or None) as exc:
        read_atomic(p)
    assert exc.value.line == 2
    assert exc.value.field == field
