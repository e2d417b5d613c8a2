import pandas as pd
import pytest

from failcodes.annotations import Annotation, CoderKind, Status
from failcodes.attribution import (
    Stage,
    Strategy,
    all_correct_rate,
    all_high_rate,
    attribute,
    attribution_summary,
    dominant_errors,
    per_passage_codes,
    per_trace_steps,
)
from failcodes.disagreements import ClaimRecord, Disagreement, DisagreementKind
from failcodes.errors import InputError
from failcodes.metrics import Level
from failcodes.traces import Passage, Trace
from failcodes.units import UnitKind, unit_id
from failcodes.verdicts import Verdict
from tests.judge_helpers import make_codebook

CB = make_codebook()
HIGH = CB.high_quality_codes(UnitKind.RETRIEVAL)
STEPS = CB.high_quality_codes(UnitKind.VERIFICATION)


def _p(rank: int, text: str, gold: bool | None = None) -> Passage:
    return Passage(passage_id=f"p{rank}-{text[:3]}", rank=rank, text=text, gold=gold)


def _t(system: str, claim_id: str, passages, retriever=None, reasoning=None, verifier=None):
    return Trace(
        system=system,
        question_id="q1",
        sentence_id="s1",
        claim_id=claim_id,
        claim=f"Claim {claim_id}.",
        verdict=Verdict.SUPPORTED,
        reasoning=reasoning,
        retriever=retriever,
        verifier=verifier,
        passages=tuple(passages),
    )


def _ann(kind: UnitKind, uid: str, codes: dict[str, str] | None, coder=CoderKind.LLM) -> Annotation:
    return Annotation(
        unit_id=uid,
        unit_kind=kind,
        codebook=CB.ref(),
        coder="x",
        coder_kind=coder,
        status=Status.SCORED if codes is not None else Status.UNSCORED,
        reason=None if codes is not None else "invalid",
        codes=codes or {},
    )


def _r(trace: Trace, rank: int, **override: str) -> Annotation:
    text = next(p.text for p in trace.passages if p.rank == rank)
    return _ann(
        UnitKind.RETRIEVAL,
        unit_id(UnitKind.RETRIEVAL, trace.claim, (text,)),
        {**HIGH, **override},
    )


# Scenario (hand-built): five traces of one claim set
A = _t("sysA", "c1", [_p(1, "alpha one."), _p(2, "alpha two.")], retriever="ret1")
B = _t("sysB", "c1", [_p(1, "beta one."), _p(2, "beta two.")], retriever="ret2")
C = _t("sysC", "c1", [_p(1, "gamma one."), _p(2, "gamma two.")], retriever="ret2")
D = _t("sysD", "c2", [_p(1, "delta.", gold=False), _p(2, "delta gold.", gold=True)])
E = _t("sysE", "c3", [_p(1, "eps.", gold=False), _p(2, "eps two.", gold=False)])
ANNS = [
    _r(A, 1, scope="broader_scope"),
    _r(A, 2),  # all five high -> A is a verification failure
    _r(B, 1, polarity="indirect"),
    _r(B, 2, chunking="incomplete_chunk", polarity="indirect"),  # none all-high -> retrieval
    _r(C, 1, entity_match="irrelevant"),  # C rank 2 uncoded -> undetermined
]


def test_codebook_and_gold_strategies_with_reasons() -> None:
    items = attribute([A, B, C, D, E], ANNS, CB)
    got = {i.system: (i.stage, i.strategy) for i in items}
    assert got == {
        "sysA": (Stage.VERIFICATION, "codebook"),
        "sysB": (Stage.RETRIEVAL, "codebook"),
        "sysC": (Stage.UNDETERMINED, "codebook"),
        "sysD": (Stage.VERIFICATION, "gold-evidence"),
        "sysE": (Stage.RETRIEVAL, "gold-evidence"),
    }
    reasons = {i.system: i.reason for i in items}
    assert reasons["sysA"].startswith("passage rank 2 is high quality on all 5 retrieval")
    assert reasons["sysB"] == (
        "none of the 2 retrieved passages is high quality on all 5 retrieval dimensions"
    )
    assert reasons["sysC"].startswith("1 of 2 retrieved passages not coded")
    assert reasons["sysD"].startswith("gold evidence retrieved at rank 2")
    assert reasons["sysE"] == "no gold passage among the retrieved passages"


def test_top_k_limits_the_evidence_considered() -> None:
    (a,) = attribute([A], ANNS, CB, top_k=1)
    # only rank 1 counts, and it has scope=broader_scope -> retrieval
    assert a.stage is Stage.RETRIEVAL and "top 1" in a.reason


def test_forced_codebook_strategy_ignores_gold_flags() -> None:
    (d,) = attribute([D], [], CB, strategy=Strategy.CODEBOOK)
    assert d.stage is Stage.UNDETERMINED and d.strategy == "codebook"


def test_unscored_passage_never_counts_as_high() -> None:
    ann = _ann(UnitKind.RETRIEVAL, unit_id(UnitKind.RETRIEVAL, A.claim, ("alpha two.",)), None)
    (a,) = attribute([A], [ANNS[0], ann], CB)
    assert a.stage is Stage.UNDETERMINED


def test_disagreements_use_their_causing_claims() -> None:
    def rec(t: Trace, maps: bool) -> ClaimRecord:
        return ClaimRecord(
            claim_id=t.claim_id,
            claim=t.claim,
            verdict=t.verdict,
            maps_to_error=maps,
            passages=t.passages,
            retriever=t.retriever,
        )

    b2 = B.model_copy(update={"claim_id": "c9"})
    fn = Disagreement(
        id="fn1",
        kind=DisagreementKind.FN,
        level=Level.SENTENCE,
        system="sysX",
        mapping="refuted",
        error_verdicts=("refuted",),
        question_id="q1",
        sentence_id="s1",
        label_has_error=True,
        predicted_error=False,
        claims=(rec(A, False), rec(b2, False)),
    )
    fp = fn.model_copy(
        update={
            "id": "fp1",
            "kind": DisagreementKind.FP,
            "label_has_error": False,
            "predicted_error": True,
            "error_claim_ids": ("c9",),
        }
    )
    items = {i.item_id: i for i in attribute([fn, fp], ANNS, CB)}
    # FN: both claims count; A's evidence was fine (verification), B's was not (retrieval)
    assert items["fn1"].stage is Stage.MIXED
    assert items["fn1"].reason == "claims split (c1: verification; c9: retrieval)"
    # FP: only the claim that raised the false alarm counts
    assert items["fp1"].stage is Stage.RETRIEVAL and len(items["fp1"].claims) == 1
    summary = attribution_summary(items.values())
    assert summary.loc[0, "mixed"] == 1 and summary.loc[0, "retrieval"] == 1


def test_rates_and_dominant_errors_per_retriever() -> None:
    pp = per_passage_codes([A, B, C], ANNS, CB)
    assert len(pp) == 6
    rates = all_high_rate(pp).set_index("retriever")
    # ret1 (A): 2 coded, 1 all-high -> 0.5; ret2 (B, C): 3 coded of 4 rows, 0 all-high
    assert rates.loc["ret1", ["coded", "all_high", "rate"]].tolist() == [2, 1, 0.5]
    assert rates.loc["ret2", ["rows", "coded", "all_high", "rate"]].tolist() == [4, 3, 0, 0.0]
    dom = dominant_errors(pp, CB, UnitKind.RETRIEVAL, by="retriever", top=2)
    ret2 = dom[dom["retriever"] == "ret2"]
    # ret2 coded: B1 polarity=indirect, B2 polarity=indirect + chunking, C1 irrelevant
    assert ret2[["subcode", "count", "coded"]].values.tolist() == [
        ["indirect", 2, 3],
        ["incomplete_chunk", 1, 3],
    ]
    assert ret2["share"].tolist() == pytest.approx([2 / 3, 1 / 3])


def test_all_correct_rate_per_verifier() -> None:
    t1 = _t("s1", "c1", [_p(1, "x.")], reasoning="R1.", verifier="v1")
    t2 = _t("s2", "c1", [_p(1, "x.")], reasoning="R2.", verifier="v1")
    t3 = _t("s3", "c1", [_p(1, "x.")], reasoning="R3.", verifier="v2")

    def vid(t: Trace) -> str:
        return unit_id(UnitKind.VERIFICATION, t.claim, ("x.",), t.reasoning, t.verdict)

    anns = [
        _ann(UnitKind.VERIFICATION, vid(t1), dict(STEPS)),
        _ann(UnitKind.VERIFICATION, vid(t2), {**STEPS, "inference": "overreach"}),
        _ann(UnitKind.VERIFICATION, vid(t3), dict(STEPS)),
    ]
    pt = per_trace_steps([t1, t2, t3], anns, CB)
    rates = all_correct_rate(pt).set_index("verifier")["rate"]
    assert rates.to_dict() == {"v1": 0.5, "v2": 1.0}
    dom = dominant_errors(pt, CB, UnitKind.VERIFICATION, by="verifier")
    assert dom.values.tolist() == [["v1", "inference", "overreach", "overreach", 1, 2, 0.5]]
    assert isinstance(pt, pd.DataFrame)


def test_annotations_of_another_codebook_are_refused() -> None:
    other = make_codebook(2)
    with pytest.raises(InputError, match="migrate it first"):
        attribute([A], ANNS, other)
