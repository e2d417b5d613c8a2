"""SciFact adapter, official evaluator port and evidence P/R@k."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from failcodes.benchmarks import evidence as ev
from failcodes.benchmarks import scifact_eval
from failcodes.errors import InputError
from failcodes.ingest import scifact
from failcodes.verdicts import Verdict

BUNDLED = scifact.bundled_dir()


def _claim(cid: int, evidence: dict[str, list[dict[str, object]]]) -> scifact.SciFactClaim:
    return scifact.SciFactClaim.model_validate(
        {"id": cid, "claim": f"c{cid}", "evidence": evidence}
    )


def _pred(cid: int, evidence: dict[str, dict[str, object]]) -> scifact.SciFactPrediction:
    return scifact.SciFactPrediction.model_validate({"id": cid, "evidence": evidence})


@pytest.mark.parametrize("root", ["bundled", "shared"])
def test_evaluator_reproduces_official_fixture_exactly(root: str, shared: Any) -> None:
    base = (
        BUNDLED / "evaluator_fixture"
        if root == "bundled"
        else shared("scifact", "evaluator_fixture")
    )
    gold = scifact.read_claims(base / "gold_small.jsonl")
    preds = scifact.read_predictions(base / "predictions_small.jsonl")
    expected = json.loads((base / "expected_metrics_small.json").read_text())
    got = scifact_eval.evaluate(gold, preds)
    # allenai/scifact-evaluator fixture/expected_metrics_small.json: bitwise-equal floats.
    assert got.official() == expected
    # Counts behind it (hand-checked against the 10 fixture lines): 7 gold abstracts,
    # 6 predicted, 12 gold rationale sentences, 9 predicted sentences.
    assert got.counts["abstract_relevant"] == 7
    assert got.counts["abstract_retrieved"] == 6
    assert got.counts["sentence_relevant"] == 12
    assert got.counts["sentence_retrieved"] == 9


def test_evaluator_hand_computed_case() -> None:
    gold = [
        _claim(
            1,
            {
                "10": [
                    {"sentences": [1, 2], "label": "SUPPORT"},
                    {"sentences": [5], "label": "SUPPORT"},
                ]
            },
        )
    ]
    # Predicted 2,5,7,1: abstract label right; first 3 = {2,5,7} contains rationale {5}.
    # Sentences: 2 (rationale {1,2} fully predicted) ok, 5 ok, 7 no, 1 ok -> 3 of 4.
    preds = [
        _pred(
            1,
            {
                "10": {"label": "SUPPORT", "sentences": [2, 5, 7, 1]},
                "99": {"label": "CONTRADICT", "sentences": [0]},
            },
        )
    ]
    m = scifact_eval.evaluate(gold, preds)
    assert m.abstract_label_only_precision == 1 / 2  # 2 abstracts retrieved, 1 correct
    assert m.abstract_label_only_recall == 1.0
    assert m.abstract_rationalized_precision == 1 / 2
    assert m.sentence_selection_precision == 3 / 5  # 5 predicted sentences, 3 correct
    assert m.sentence_selection_recall == 1.0  # 3 gold sentences
    assert m.sentence_label_f1 == pytest.approx(2 * 0.6 * 1.0 / 1.6)


def test_evaluator_rejects_multivers_labels_unless_converted() -> None:
    gold = [_claim(1, {"10": [{"sentences": [1], "label": "CONTRADICT"}]})]
    preds = [
        _pred(
            1,
            {"10": {"label": "REFUTE", "sentences": [1]}, "11": {"label": "NEI", "sentences": []}},
        )
    ]
    with pytest.raises(InputError, match="not allowed"):
        scifact_eval.evaluate(gold, preds)
    m = scifact_eval.evaluate(gold, [scifact_eval.from_multivers(p) for p in preds])
    assert m.abstract_label_only_f1 == 1.0  # NEI abstract dropped, REFUTE == CONTRADICT
    with pytest.raises(InputError, match="do not match gold"):
        scifact_eval.evaluate(gold, [_pred(2, {})])


@pytest.mark.parametrize(
    ("labels", "verdict"),
    [
        ([], Verdict.NO_EVIDENCE),
        (["NEI"], Verdict.NO_EVIDENCE),
        (["NEI", "SUPPORT"], Verdict.SUPPORTED),
        (["REFUTE"], Verdict.REFUTED),
        (["CONTRADICT", "NEI"], Verdict.REFUTED),
        (["SUPPORT", "REFUTE"], Verdict.AMBIGUOUS),
    ],
)
def test_claim_verdict_rule(labels: list[str], verdict: Verdict) -> None:
    pred = _pred(1, {str(i): {"label": lab, "sentences": []} for i, lab in enumerate(labels)})
    assert scifact.claim_verdict(pred) == verdict


def test_load_bundled_four_systems() -> None:
    traces, labels = scifact.load(BUNDLED)
    assert len(traces) == 4 * 300
    assert {t.system for t in traces} == {
        "multivers-scifact",
        "multivers-healthver",
        "multivers-covidfact",
        "multivers-fever",
    }
    # SciFact SOURCE.md: dev labels 124 SUPPORT, 64 CONTRADICT, 112 NEI.
    assert len(labels) == 300
    assert sum(lab.has_error for lab in labels) == 64
    sci = [t for t in traces if t.system == "multivers-scifact"]
    # From the prediction file's label sets: 114 SUPPORT + 10 {NEI,SUPPORT} = 124 supported;
    # 61 REFUTE + 3 {NEI,REFUTE} = 64 refuted; 112 NEI only.
    counts = {v: sum(t.verdict == v for t in sci) for v in Verdict}
    assert counts[Verdict.SUPPORTED] == 124
    assert counts[Verdict.REFUTED] == 64
    assert counts[Verdict.NO_EVIDENCE] == 112
    cov = [t for t in traces if t.system == "multivers-covidfact"]
    assert sum(t.verdict == Verdict.AMBIGUOUS for t in cov) == 4  # {REFUTE, SUPPORT} claims
    # 209 gold (claim, abstract) pairs -> 209 gold passages per system.
    assert sum(len(t.passages) for t in sci) == 209
    t3 = next(t for t in sci if t.claim_id == "3")
    assert t3.passages[0].passage_id == "14717500:2,5,7"
    assert t3.passages[0].gold is True
    assert t3.passages[0].text.startswith("We propose as an alternative explanation")


def test_bundled_files_identical_to_shared(shared: Any) -> None:
    shared_dir = shared("scifact")
    pairs = [
        ("claims_dev.jsonl", "claims_dev.jsonl"),
        ("rationales_dev.tsv", "rte_scifact_from_covidfact_repo/dev.tsv"),
    ]
    pairs += [
        (f"multivers_predictions_dev/{c}_scifact_dev.jsonl",) * 2 for c in scifact.CHECKPOINTS
    ]
    for mine, theirs in pairs:
        assert (BUNDLED / mine).read_bytes() == (shared_dir / theirs).read_bytes()


def test_bad_inputs_name_file_line_field(tmp_path: Path) -> None:
    p = tmp_path / "preds.jsonl"
    p.write_text('{"id": 1, "evidence": {}}\n{"id": 2, "evidence": {"5": {"label": "MAYBE"}}}\n')
    with pytest.raises(InputError) as exc:
        scifact.read_predictions(p)
    assert exc.value.line == 2
    assert exc.value.field == "evidence.5.label"
    p.write_text('{"id": 1, "claim": "x", "evidence": {}}\n{"id": 1,\n')
    with pytest.raises(InputError, match="malformed JSON") as exc2:
        scifact.read_claims(p)
    assert exc2.value.line == 2


def test_evidence_at_k_hand_computed() -> None:
    qs = [
        ev.EvidenceQuery(query_id="a", ranked_gold=(False, True, True), n_gold=2),
        ev.EvidenceQuery(query_id="b", ranked_gold=(True,), n_gold=3),
        ev.EvidenceQuery(query_id="c", ranked_gold=(), n_gold=1),
        ev.EvidenceQuery(query_id="d", ranked_gold=(False, False), n_gold=0),
    ]
    r1 = ev.evidence_at_k(qs, 1)
    # precision@1 over a,b,d (c retrieved nothing): (0 + 1 + 0) / 3
    assert r1.precision == pytest.approx(1 / 3)
    # recall@1 over a,b,c (d has no gold): (0/2 + 1/3 + 0/1) / 3
    assert r1.recall == pytest.approx((1 / 3) / 3)
    assert r1.hit_rate == pytest.approx(1 / 3)
    r3 = ev.evidence_at_k(qs, 3)
    # precision@3: a 2/3, b 1/1, d 0/2 -> (2/3 + 1 + 0) / 3
    assert r3.precision == pytest.approx((2 / 3 + 1) / 3)
    assert r3.recall == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert (r3.n_no_retrieval, r3.n_no_gold) == (1, 1)
    empty = ev.evidence_at_k([], 1)
    assert empty.precision is None and "precision" in empty.undefined


def test_scifact_rationale_queries() -> None:
    gold = [_claim(1, {"10": [{"sentences": [1, 2], "label": "SUPPORT"}]})]
    preds = [_pred(1, {"10": {"label": "SUPPORT", "sentences": [2, 7]}})]
    (q,) = ev.scifact_rationale_queries(gold, preds)
    assert q.ranked_gold == (True, False)
    assert q.n_gold == 2


def test_registry_adapter_reads_bundled_dir() -> None:
    from failcodes.ingest import get_adapter
    from failcodes.ingest.base import AdapterOptions

    res = get_adapter("scifact").read([BUNDLED], AdapterOptions())
    res.traces = [t for t in res.traces if t.system == "multivers-fever"]
    assert {t.system for t in res.traces} == {"multivers-fever"}
    # fever file: 273 claims with no prediction, 20 SUPPORT, 7 REFUTE (label sets counted).
    assert Counter(t.verdict for t in res.traces) == {
        Verdict.NO_EVIDENCE: 273,
        Verdict.SUPPORTED: 20,
        Verdict.REFUTED: 7,
    }
    assert len(res.labels) == 300
