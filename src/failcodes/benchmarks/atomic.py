"""Atomic fact-check diagnostics (seed 003).

Verdict quality, error-category detection, answer-level outcomes and chunk-trace accuracy.

The confusion matrix (positive class: a FALSE verdict), the detection rate per error
category, the answer outcome shares and top-1/top-3 chunk-trace accuracy are defined in
docs/atomic-format.md ("What is computed").

Undefined values (zero denominators) are ``None`` with a reason, never 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import Field

from failcodes.atomic import AnswerOutcome as AnswerOutcome
from failcodes.atomic import AtomicAnswer as AtomicAnswer
from failcodes.atomic import AtomicFact as AtomicFact
from failcodes.atomic import ErrorCategory as ErrorCategory
from failcodes.contract import StrictModel


class AtomicReport(StrictModel):
    """Every seed-003 figure for one system."""

    system: str
    n_facts: int
    tp: int
    fp: int
    fn: int
    tn: int
    sensitivity: float | None
    specificity: float | None
    precision: float | None
    f1: float | None
    accuracy: float | None
    balanced_accuracy: float | None
    detection_rate: dict[str, float | None]
    category_counts: dict[str, int]
    n_answers: int
    outcome_shares: dict[str, float | None]
    n_chunk_annotated: int
    top1_chunk_accuracy: float | None
    top3_chunk_accuracy: float | None
    undefined: dict[str, str] = Field(default_factory=dict)


def _div(num: float, den: float) -> float | None:
    return num / den if den else None


def evaluate_system(
    system: str, facts: Sequence[AtomicFact], answers: Sequence[AtomicAnswer]
) -> AtomicReport:
    """All seed-003 figures for one system's facts and answers (definitions in module doc)."""
    tp = sum(f.verdict_false and f.human_confirms for f in facts)
    fp = sum(f.verdict_false and not f.human_confirms for f in facts)
    fn = sum(not f.verdict_false and not f.human_confirms for f in facts)
    tn = sum(not f.verdict_false and f.human_confirms for f in facts)
    undefined: dict[str, str] = {}
    sens = _div(tp, tp + fn)
    spec = _div(tn, tn + fp)
    prec = _div(tp, tp + fp)
    if sens is None:
        undefined["sensitivity"] = "no wrong fact (TP + FN = 0)"
    if spec is None:
        undefined["specificity"] = "no correct fact (TN + FP = 0)"
    if prec is None:
        undefined["precision"] = "no FALSE verdict (TP + FP = 0)"
    f1 = None
    if sens is not None and prec is not None and (sens + prec) > 0:
        f1 = 2 * prec * sens / (prec + sens)
    elif sens is not None and prec is not None:
        f1 = 0.0
    else:
        undefined["f1"] = "precision or sensitivity undefined"
    bal = (sens + spec) / 2 if sens is not None and spec is not None else None
    if bal is None:
        undefined["balanced_accuracy"] = "sensitivity or specificity undefined"
    cats = Counter(f.error_category for f in facts if f.error_category is not None)
    detected = Counter(
        f.error_category for f in facts if f.error_category is not None and f.verdict_false
    )
    detection = {c.value: _div(detected[c], cats[c]) for c in ErrorCategory}
    n_ans = len(answers)
    outc = Counter(a.outcome for a in answers)
    shares = {o.value: _div(outc[o], n_ans) for o in AnswerOutcome}
    if not n_ans:
        undefined["outcome_shares"] = "no answer-level outcome given"
    traced = [f for f in facts if f.chunk_annotated]
    top1 = _div(sum(f.correct_chunk_rank == 1 for f in traced), len(traced))
    top3 = _div(
        sum(f.correct_chunk_rank is not None and f.correct_chunk_rank <= 3 for f in traced),
        len(traced),
    )
    if not traced:
        undefined["chunk_trace"] = "no fact annotated with its correct chunk"
    return AtomicReport(
        system=system,
        n_facts=len(facts),
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        sensitivity=sens,
        specificity=spec,
        precision=prec,
        f1=f1,
        accuracy=_div(tp + tn, len(facts)),
        balanced_accuracy=bal,
        detection_rate=detection,
        category_counts={c.value: cats[c] for c in ErrorCategory},
        n_answers=n_ans,
        outcome_shares=shares,
        n_chunk_annotated=len(traced),
        top1_chunk_accuracy=top1,
        top3_chunk_accuracy=top3,
        undefined=undefined,
    )


def evaluate(facts: Sequence[AtomicFact], answers: Sequence[AtomicAnswer]) -> list[AtomicReport]:
    """One report per system, sorted by system name."""
    systems = sorted({f.system for f in facts} | {a.system for a in answers})
    return [
        evaluate_system(
            s, [f for f in facts if f.system == s], [a for a in answers if a.system == s]
        )
        for s in systems
    ]
