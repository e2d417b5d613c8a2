"""The official SciFact evaluation (abstract- and sentence-level P/R/F1), re-implemented.

Follows the logic of github.com/allenai/scifact-evaluator ``evaluator/eval.py`` (Apache-2.0),
written afresh for failcodes; it reproduces ``fixture/expected_metrics_small.json`` exactly
(tests/test_scifact.py). Its definitions (Wadden et al. 2020, section 4: abstract-level label-only
and rationalized, sentence-level selection and label) are docs/benchmarks.md's. MultiVerS
writes REFUTE and NEI: :func:`from_multivers` maps REFUTE -> CONTRADICT and drops NEI abstracts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from failcodes.contract import FrozenModel
from failcodes.errors import InputError
from failcodes.ingest.scifact import PredictedDoc, SciFactClaim, SciFactPrediction

ALLOWED_LABELS = frozenset({"SUPPORT", "CONTRADICT"})
MAX_ABSTRACT_SENTS = 3


class SciFactMetrics(FrozenModel):
    """The official evaluator's twelve numbers plus the counts behind them."""

    abstract_label_only_precision: float
    abstract_label_only_recall: float
    abstract_label_only_f1: float
    abstract_rationalized_precision: float
    abstract_rationalized_recall: float
    abstract_rationalized_f1: float
    sentence_selection_precision: float
    sentence_selection_recall: float
    sentence_selection_f1: float
    sentence_label_precision: float
    sentence_label_recall: float
    sentence_label_f1: float
    counts: dict[str, int]

    def official(self) -> dict[str, float]:
        """The twelve metrics keyed as in the official ``--verbose`` output."""
        return {k: v for k, v in self.model_dump().items() if k != "counts"}


def _safe_divide(num: float, denom: float) -> float:
    return 0.0 if denom == 0 else num / denom


def _prf(relevant: int, retrieved: int, correct: int, title: str) -> dict[str, float]:
    precision = _safe_divide(correct, retrieved)
    recall = _safe_divide(correct, relevant)
    f1 = _safe_divide(2 * precision * recall, precision + recall)
    return {f"{title}_precision": precision, f"{title}_recall": recall, f"{title}_f1": f1}


def from_multivers(prediction: SciFactPrediction) -> SciFactPrediction:
    """Convert MultiVerS labels to the evaluator's: REFUTE -> CONTRADICT, NEI abstracts dropped."""
    evidence: dict[str, PredictedDoc] = {}
    for doc, dp in prediction.evidence.items():
        if dp.label == "NEI":
            continue
        label = "CONTRADICT" if dp.label == "REFUTE" else dp.label
        evidence[doc] = PredictedDoc(label=label, sentences=dp.sentences)
    return SciFactPrediction(id=prediction.id, evidence=evidence)


def _count_rationale_sents(gold: list[frozenset[int]], predicted: frozenset[int]) -> int:
    n = 0
    for ix in predicted:
        containing = [g for g in gold if ix in g]
        if len(containing) > 1:
            raise InputError(f"gold sentence {ix} belongs to two rationales")
        if containing and containing[0] <= predicted:
            n += 1
    return n


def evaluate(
    claims: Sequence[SciFactClaim],
    predictions: Sequence[SciFactPrediction],
    *,
    path: str | Path | None = None,
) -> SciFactMetrics:
    """Score predictions against gold claims exactly as the official SciFact evaluator does.

    ``path`` (the predictions file) names the file in the error for mismatched claims.
    """
    gold_ids, pred_ids = [c.id for c in claims], [p.id for p in predictions]
    if gold_ids != pred_ids:
        at = next(
            (i for i, (g, q) in enumerate(zip(gold_ids, pred_ids, strict=False)) if g != q),
            min(len(gold_ids), len(pred_ids)),
        )
        got = f"claim {pred_ids[at]}" if at < len(pred_ids) else "the end of the file"
        want = f"claim {gold_ids[at]}" if at < len(gold_ids) else "no more claims"
        raise InputError(
            f"predicted claims do not match gold (ids or order differ): expected {want} "
            f"as prediction {at + 1}, got {got}",
            path=path,
            line=at + 1 if at < len(pred_ids) else None,
            field="id",
        )
    ab: Counter[str] = Counter()
    se: Counter[str] = Counter()
    for claim, pred in zip(claims, predictions, strict=True):
        gold_label = {doc: rats[0].label for doc, rats in claim.evidence.items()}
        gold_rats = {
            doc: [frozenset(r.sentences) for r in rats] for doc, rats in claim.evidence.items()
        }
        ab["relevant"] += len(claim.evidence)
        se["relevant"] += sum(len(r) for rats in gold_rats.values() for r in rats)
        for doc, dp in pred.evidence.items():
            if dp.label not in ALLOWED_LABELS:
                raise InputError(
                    f"claim {pred.id}: label {dp.label!r} not allowed "
                    "(SUPPORT or CONTRADICT; convert MultiVerS output with from_multivers)",
                    field=f"evidence.{doc}.label",
                )
            # Abstract level.
            ab["retrieved"] += 1
            if doc in claim.evidence and dp.label == gold_label[doc]:
                ab["correct_label_only"] += 1
                first = frozenset(dp.sentences[:MAX_ABSTRACT_SENTS])
                if any(g <= first for g in gold_rats[doc]):
                    ab["correct_rationalized"] += 1
            # Sentence level.
            se["retrieved"] += len(dp.sentences)
            if doc in claim.evidence:
                n_correct = _count_rationale_sents(gold_rats[doc], frozenset(dp.sentences))
                se["correct_selection"] += n_correct
                if dp.label == gold_label[doc]:
                    se["correct_label"] += n_correct
    res: dict[str, float] = {}
    res |= _prf(ab["relevant"], ab["retrieved"], ab["correct_label_only"], "abstract_label_only")
    res |= _prf(
        ab["relevant"], ab["retrieved"], ab["correct_rationalized"], "abstract_rationalized"
    )
    res |= _prf(se["relevant"], se["retrieved"], se["correct_selection"], "sentence_selection")
    res |= _prf(se["relevant"], se["retrieved"], se["correct_label"], "sentence_label")
    counts = {f"abstract_{k}": ab[k] for k in ("relevant", "retrieved")}
    counts |= {f"abstract_{k}": ab[k] for k in ("correct_label_only", "correct_rationalized")}
    counts |= {f"sentence_{k}": se[k] for k in ("relevant", "retrieved")}
    counts |= {f"sentence_{k}": se[k] for k in ("correct_selection", "correct_label")}
    return SciFactMetrics(**res, counts=counts)
