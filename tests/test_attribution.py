import re

import pandas as pd
import pytest

from failcodes.annotations import NOT_ASSESSABLE, Annotation, CoderKind, Status
from failcodes.attribution import (
    ClaimAttribution,
    ItemAttribution,
    Stage,
    Strategy,
    assessed_dimensions,
    attribute,
    attribution_summary,
    attribution_table,
    dominant_errors,
    human_attributions,
    is_all_high,
    per_passage_codes,
    per_trace_steps,
    quality_rate,
)
from failcodes.disagreements import (
    ClaimRecord,
    Disagreement,
    DisagreementKind,
)
from failcodes.errors import ConfigError, InputError
from failcodes.metrics import Level
from failcodes.report.tables import code_shares
from failcodes.traces import (
    EvidenceSource,
    Passage,
    Trace,
    check_declared_systems,
    declared_source,
    parse_evidence_declarations,
)
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
    assert reasons["sysA"].startswith("passage rank 2 is high quality on every assessed retrieval")
    assert reasons["sysB"] == (
        "none of the 2 retrieved passages is high quality on every assessed retrieval "
        "dimension (of 5)"
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
    rates = quality_rate(pp, by="retriever", flag="all_high").set_index("retriever")
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
        # the passages as the prompt shows them (their ids too)
        return unit_id(UnitKind.VERIFICATION, t.claim, t.passages, t.reasoning, t.verdict)

    anns = [
        _ann(UnitKind.VERIFICATION, vid(t1), dict(STEPS)),
        _ann(UnitKind.VERIFICATION, vid(t2), {**STEPS, "inference": "overreach"}),
        _ann(UnitKind.VERIFICATION, vid(t3), dict(STEPS)),
    ]
    pt = per_trace_steps([t1, t2, t3], anns, CB)
    rates = quality_rate(pt, by="verifier", flag="all_correct").set_index("verifier")["rate"]
    assert rates.to_dict() == {"v1": 0.5, "v2": 1.0}
    dom = dominant_errors(pt, CB, UnitKind.VERIFICATION, by="verifier")
    assert dom.values.tolist() == [["v1", "inference", "overreach", "overreach", 1, 2, 0.5]]
    assert isinstance(pt, pd.DataFrame)


def test_annotations_of_another_codebook_are_refused() -> None:
    other = make_codebook(2)
    with pytest.raises(InputError, match="migrate it first"):
        attribute([A], ANNS, other)


# -- the evidence source decides which stages exist (docs/attribution.md) -----------------


def _src(trace: Trace, source: EvidenceSource | None) -> Trace:
    return trace.model_copy(update={"evidence_source": source})


def test_evidence_source_is_derived_when_undeclared() -> None:
    assert A.evidence is EvidenceSource.RETRIEVED  # passages
    bare = _t("sysX", "c9", [])
    assert bare.evidence is EvidenceSource.NONE  # no passages, no retriever: closed-book
    assert _t("sysX", "c9", [], retriever="bm25").evidence is EvidenceSource.RETRIEVED
    assert _src(bare, EvidenceSource.PROVIDED).evidence is EvidenceSource.PROVIDED


def test_closed_book_is_never_blamed_on_retrieval() -> None:
    # Before: a trace without passages -> retrieval ("no passage retrieved").
    bare = _t("sysX", "c9", [])
    (x,) = attribute([bare], [], CB)
    assert x.stage is Stage.VERIFICATION and x.evidence_source == "none"
    assert x.reason.startswith("closed-book pipeline (evidence source none)")
    # declared closed-book wins even over passages that are all poor (B -> retrieval otherwise)
    (b,) = attribute([_src(B, EvidenceSource.NONE)], ANNS, CB)
    assert b.stage is Stage.VERIFICATION
    # the retrieved pipeline without passages still blames its retriever
    (r,) = attribute([_t("sysX", "c9", [], retriever="bm25")], [], CB)
    assert (r.stage, r.reason) == (Stage.RETRIEVAL, "no passage retrieved")


def test_provided_evidence_goes_to_evidence_or_verification_never_retrieval() -> None:
    got = {
        t.system: attribute([_src(t, EvidenceSource.PROVIDED)], ANNS, CB)[0]
        for t in (A, B, C, D, E)
    }
    # A: rank 2 all-high -> verification; B: none all-high -> evidence (not retrieval);
    # C: rank 2 uncoded -> undetermined; D: gold given -> verification; E: no gold -> evidence
    assert {s: a.stage for s, a in got.items()} == {
        "sysA": Stage.VERIFICATION,
        "sysB": Stage.EVIDENCE,
        "sysC": Stage.UNDETERMINED,
        "sysD": Stage.VERIFICATION,
        "sysE": Stage.EVIDENCE,
    }
    assert got["sysB"].reason == (
        "none of the 2 passages of the provided evidence is high quality on every assessed "
        "retrieval dimension (of 5); no retrieval stage, the evidence given with the item was "
        "insufficient"
    )
    assert got["sysD"].reason.startswith("gold evidence provided at rank 2")
    assert got["sysE"].reason == "no gold passage among provided evidence"
    # provided evidence without any passage text: nothing to assess -> verification
    (n,) = attribute(
        [
            _t("sysX", "c9", [], retriever=None).model_copy(
                update={"evidence_source": EvidenceSource.PROVIDED}
            )
        ],
        [],
        CB,
    )
    assert n.stage is Stage.VERIFICATION and "no retrieval stage" in n.reason


def test_disagreements_carry_the_evidence_source_into_attribution() -> None:
    declared = parse_evidence_declarations(["sysB=provided"])
    rec = ClaimRecord(
        claim_id="c1",
        claim=B.claim,
        verdict=Verdict.SUPPORTED,
        maps_to_error=False,
        passages=B.passages,
        evidence_source=B.evidence,
    )
    d = Disagreement(
        id="fn-b",
        kind=DisagreementKind.FN,
        level=Level.SENTENCE,
        system="sysB",
        mapping="refuted",
        error_verdicts=("refuted",),
        question_id="q1",
        sentence_id="s1",
        label_has_error=True,
        predicted_error=False,
        claims=(rec,),
    )
    (before,) = attribute([d], ANNS, CB)
    assert before.stage is Stage.RETRIEVAL and before.evidence_source == "retrieved"
    # the claims with their declared source, as the inputs of attribute set it
    source = declared_source(declared, d.system)
    claims = tuple(c.model_copy(update={"evidence_source": source}) for c in d.claims)
    (after,) = attribute([d.model_copy(update={"claims": claims})], ANNS, CB)
    assert after.stage is Stage.EVIDENCE and after.evidence_source == "provided"
    table = attribution_table([after])
    assert list(table["evidence_source"]) == ["provided"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["closed"], "--evidence 'closed': 'closed' is not an evidence source"),
        (["=none"], "--evidence expects SOURCE or SYSTEM=SOURCE, got '=none'"),
        (["none", "provided"], "--evidence given twice for every system"),
        (["a=none", "a=provided"], "--evidence given twice for system 'a'"),
    ],
)
def test_bad_evidence_declarations(values: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_evidence_declarations(values)


def test_declarations_apply_per_system() -> None:
    declared = parse_evidence_declarations(["provided", "sysA=none"])
    out = {t.system: declared_source(declared, t.system) for t in (A, B)}
    assert out == {"sysA": EvidenceSource.NONE, "sysB": EvidenceSource.PROVIDED}
    with pytest.raises(ConfigError, match="names system 'sysZ', not in the input"):
        check_declared_systems({"sysZ": EvidenceSource.NONE}, ["sysA"])


# -- not assessable dimensions (offline judge: passage without source metadata) -----------


def test_not_assessable_dimension_is_left_out_of_the_all_high_rule() -> None:
    # B rank 1: four dimensions high, trust not assessable -> all-high over the assessed four
    na = _r(B, 1, trustworthy=NOT_ASSESSABLE)
    assert is_all_high(na, HIGH) is True
    assert assessed_dimensions(na, HIGH) == 4
    # a low code on an assessed dimension still fails it
    assert is_all_high(_r(B, 1, trustworthy=NOT_ASSESSABLE, scope="broader_scope"), HIGH) is False
    # nothing assessed at all -> nothing to go by (None, like an uncoded passage)
    nothing = _r(B, 1, **dict.fromkeys(HIGH, NOT_ASSESSABLE))
    assert is_all_high(nothing, HIGH) is None
    # attribution: B's rank 1 becomes usable evidence -> verification, not retrieval
    (b,) = attribute([B], [na, ANNS[3]], CB)
    assert b.stage is Stage.VERIFICATION and b.reason.startswith("passage rank 1")


def test_a_dimension_left_without_a_code_is_not_read_as_low() -> None:
    # Outside check (redteam2): a reviewer's tool left one choice empty. B rank 1 coded high on
    # four dimensions, no code on scope: whether it is all high cannot be told (None), not
    # False. Read as False, B's disagreement went to retrieval although the one coded passage
    # may be the usable one; now it is undetermined (a passage not coded, none usable).
    partial = _r(B, 1)
    partial = partial.model_copy(
        update={"codes": {k: v for k, v in partial.codes.items() if k != "scope"}}
    )
    assert is_all_high(partial, HIGH) is None
    # one coded dimension low: not all high whatever the missing one would have been
    low = partial.model_copy(update={"codes": {**partial.codes, "chunking": "truncated"}})
    assert is_all_high(low, HIGH) is False
    (b,) = attribute([B], [partial, ANNS[3]], CB)
    assert b.stage is Stage.UNDETERMINED


def test_not_assessable_in_the_tables() -> None:
    anns = [_r(A, 1, trustworthy=NOT_ASSESSABLE), _r(A, 2), _r(B, 1, scope="broader_scope")]
    pp = per_passage_codes([A, B], anns, CB)
    rows = pp.set_index(["retriever", "rank"])
    assert rows.loc[("ret1", 1), ["trustworthy", "assessed_dimensions", "all_high"]].tolist() == [
        NOT_ASSESSABLE,
        4,
        True,
    ]
    assert rows.loc[("ret1", 2), "assessed_dimensions"] == 5
    rates = quality_rate(pp, by="retriever", flag="all_high").set_index("retriever")
    # ret1: 2 coded, both all-high, one of them over 4 assessed dimensions
    assert rates.loc["ret1", ["coded", "all_high", "rate", "not_fully_assessed"]].tolist() == [
        2,
        2,
        1.0,
        1,
    ]
    assert rates.loc["ret2", ["coded", "all_high", "not_fully_assessed"]].tolist() == [1, 0, 0]
    # never a dominant error
    dom = dominant_errors(pp, CB, UnitKind.RETRIEVAL, by="retriever")
    assert NOT_ASSESSABLE not in set(dom["subcode"])
    # Table 8 shape: a not_assessable row under the dimension, shares add up to 1
    shares = code_shares(pp, CB.part(UnitKind.RETRIEVAL), by="retriever", flag="all_high")
    trust = shares[shares["dimension"] == "trustworthy"].set_index("code")
    assert trust.loc[NOT_ASSESSABLE, "ret1"] == 0.5
    assert trust["ret1"].sum() == pytest.approx(1.0)
    assert trust.loc[NOT_ASSESSABLE, "ret2"] == 0.0
    last = shares.iloc[-1]
    assert last["label"] == "All assessable dimensions high quality"
    assert (last["ret1"], last["ret2"]) == (1.0, 0.0)
    # a dimension where nothing is unassessed gets no extra row
    assert NOT_ASSESSABLE not in set(shares[shares["dimension"] == "scope"]["code"])


def test_a_multi_claim_disagreement_says_why_not_only_where() -> None:
    # Before: "all 2 claims: verification", with no reason (MedScore closed-book sentences).
    recs = tuple(
        ClaimRecord(
            claim_id=f"c{i}",
            claim=f"Claim {i}.",
            verdict=Verdict.SUPPORTED,
            maps_to_error=False,
            evidence_source=EvidenceSource.NONE,
        )
        for i in range(2)
    )
    fn = Disagreement(
        id="fn-closed",
        kind=DisagreementKind.FN,
        level=Level.SENTENCE,
        system="medscore",
        mapping="refuted",
        error_verdicts=("refuted",),
        question_id="q1",
        sentence_id="s1",
        label_has_error=True,
        predicted_error=False,
        claims=recs,
    )
    (item,) = attribute([fn], [], CB)
    assert item.stage is Stage.VERIFICATION and item.evidence_source == "none"
    assert item.reason == (
        "all 2 claims: verification; closed-book pipeline (evidence source none): no retrieval "
        "stage, the verifier answered from its own knowledge"
    )
    # same stage for different reasons: each claim's reason is listed
    mixed_src = (recs[0], recs[1].model_copy(update={"evidence_source": EvidenceSource.PROVIDED}))
    (item2,) = attribute([fn.model_copy(update={"claims": mixed_src})], [], CB)
    assert item2.stage is Stage.VERIFICATION
    assert item2.reason.startswith("all 2 claims: verification (c0: closed-book pipeline")
    assert "c1: evidence provided with the item" in item2.reason
    assert item2.evidence_source == "none+provided"


def test_post_hoc_citation_is_never_blamed_on_retrieval() -> None:
    # B's passages are all poor (retrieval when retrieved); written first, cited after:
    # the claim did not depend on them
    (b,) = attribute([_src(B, EvidenceSource.POST_HOC)], ANNS, CB)
    assert (b.stage, b.evidence_source) == (Stage.VERIFICATION, "post-hoc")
    assert b.reason == (
        "post-hoc citation (evidence source post-hoc): the answer was written before its "
        "evidence was retrieved, so retrieval did not cause the claim; a poor citation is a "
        "citation failure, not this error's cause; its 2 citation(s) are not judged"
    )


def test_citations_of_closed_book_and_post_hoc_systems_are_never_judged_passages() -> None:
    from failcodes.units import build_units

    cited = {s: _src(A, s) for s in EvidenceSource}
    # A has 2 passages: 2 retrieval units when retrieved or provided, none as citations
    got = {s.value: len(build_units([t], UnitKind.RETRIEVAL)) for s, t in cited.items()}
    assert got == {"retrieved": 2, "provided": 2, "none": 0, "post-hoc": 0}
    # no Table 8 row (per_passage.csv, the review plan's strata) either
    rows = per_passage_codes(list(cited.values()), ANNS, CB)
    assert sorted(set(rows["passage_id"])) == ["p1-alp", "p2-alp"]
    assert len(rows) == 4  # retrieved and provided: 2 passages each
    # the citations stay on the trace
    assert [p.text for p in cited[EvidenceSource.NONE].passages] == ["alpha one.", "alpha two."]


def _claim(
    claim_id: str, stage: Stage, strategy: Strategy, source: EvidenceSource
) -> ClaimAttribution:
    return ClaimAttribution(
        system="s",
        question_id="q",
        sentence_id="q:s0",
        claim_id=claim_id,
        evidence_source=source,
        strategy=strategy,
        stage=stage,
        reason="r",
    )


def _item(item_id: str, *claims: ClaimAttribution, stage: Stage) -> ItemAttribution:
    return ItemAttribution(
        item_id=item_id,
        system="s",
        question_id="q",
        sentence_id="q:s0",
        stage=stage,
        strategy="codebook",
        reason="r",
        claims=claims,
    )


def test_human_attributions_use_the_same_rule_on_the_reviewers_decisions() -> None:
    ret_, ver = Stage.RETRIEVAL, Stage.VERIFICATION
    cb, ret = Strategy.CODEBOOK, EvidenceSource.RETRIEVED
    items = [
        # one claim, one passage the reviewer found all-high: retrieval -> verification
        _item("a", _claim("c1", ret_, cb, ret), stage=ret_),
        # two passages, both reviewed, neither all-high: retrieval stays
        _item("b", _claim("c2", ret_, cb, ret), stage=ret_),
        # two passages, one not reviewed: no human stage
        _item("c", _claim("c3", ver, cb, ret), stage=ver),
        # a claim judged by codes and a closed-book one (fixed): verification + verification
        _item(
            "d",
            _claim("c4", ret_, cb, ret),
            _claim("c5", ver, cb, EvidenceSource.NONE),
            stage=Stage.MIXED,
        ),
        # provided evidence the reviewer found insufficient: evidence (not retrieval)
        _item("e", _claim("c6", ver, cb, EvidenceSource.PROVIDED), stage=ver),
        # gold evidence: no judge code enters, the stage stands and counts as reviewed
        _item("f", _claim("c7", ver, Strategy.GOLD_EVIDENCE, ret), stage=ver),
        # a reviewer who assessed no dimension: undetermined, by the same rule
        _item("g", _claim("c8", ret_, cb, ret), stage=ret_),
    ]
    units = {
        ("s", "c1"): ["u1"],
        ("s", "c2"): ["u2", "u3"],
        ("s", "c3"): ["u4", "u5"],
        ("s", "c4"): ["u6"],
        ("s", "c5"): ["u7"],
        ("s", "c6"): ["u8"],
        ("s", "c7"): ["u9"],
        ("s", "c8"): ["u10"],
    }
    flags = {"u1": True, "u2": False, "u3": False, "u4": True, "u6": True, "u8": False, "u10": None}
    got = {p.item_id: p for p in human_attributions(items, units, flags)}
    assert {k: p.human for k, p in got.items()} == {
        "a": ver,
        "b": ret_,
        "c": None,
        "d": ver,
        "e": Stage.EVIDENCE,
        "f": ver,
        "g": Stage.UNDETERMINED,
    }
    assert got["b"].units == ("u2", "u3")
    assert got["d"].units == ("u6",)  # the closed-book claim's citations are not judged
    assert got["f"].units == ()
    assert got["a"].judge is ret_
