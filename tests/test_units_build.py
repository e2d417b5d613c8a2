from failcodes.traces import Passage, Trace
from failcodes.units import (
    Provenance,
    UnitKind,
    build_units,
    retrieval_units,
    traces_without_reasoning,
    unit_id,
    verification_units,
)
from failcodes.verdicts import Verdict
from tests.judge_helpers import P_GOOD, make_traces


def test_retrieval_units_dedup_across_systems_with_provenance() -> None:
    traces = make_traces(2)
    units = retrieval_units(traces)
    # per claim: P_GOOD shared by sysA and sysB, P_FRAGMENT (sysA), P_WEB (sysB) -> 3 units;
    # 2 claims -> 6 units (12 (claim, passage) occurrences in total).
    assert len(units) == 6
    shared = units[0]
    assert shared.id == unit_id(UnitKind.RETRIEVAL, traces[0].claim, (P_GOOD.text,))
    assert shared.provenance == (
        Provenance(system="sysA", question_id="q0", sentence_id="q0-s1", claim_id="q0-c1", rank=1),
        Provenance(system="sysB", question_id="q0", sentence_id="q0-s1", claim_id="q0-c1", rank=1),
    )
    assert sum(len(u.provenance) for u in units) == 8


def test_same_trace_twice_is_one_provenance_entry() -> None:
    t = make_traces(1)[0]
    units = retrieval_units([t, t])
    assert [len(u.provenance) for u in units] == [1, 1]


def test_top_k_filters_by_rank() -> None:
    units = retrieval_units(make_traces(1), top_k=1)
    assert len(units) == 1 and units[0].passages[0].rank == 1


def test_verification_units_skip_traces_without_reasoning() -> None:
    traces = make_traces(1)
    bare = traces[0].model_copy(update={"reasoning": None, "system": "sysC"})
    units = verification_units([*traces, bare])
    # sysA and sysB differ in verdict and reasoning -> 2 units; sysC has no reasoning.
    assert len(units) == 2
    assert traces_without_reasoning([*traces, bare]) == 1
    assert units[0].verdict is Verdict.SUPPORTED
    assert units[0].provenance[0].rank is None
    assert units[0].id == unit_id(
        UnitKind.VERIFICATION,
        traces[0].claim,
        tuple(p.text for p in traces[0].passages),
        traces[0].reasoning,
        Verdict.SUPPORTED,
    )


def test_identical_verification_content_is_one_unit() -> None:
    p = Passage(passage_id="x", rank=1, text="Text.")
    kw = {
        "question_id": "q",
        "sentence_id": "s",
        "claim_id": "c",
        "claim": "C.",
        "verdict": "supported",
    }
    a = Trace(system="A", reasoning="R.", passages=(p,), **kw)
    b = Trace(system="B", reasoning="R.", passages=(p,), **kw)
    units = build_units([a, b], UnitKind.VERIFICATION)
    assert len(units) == 1
    assert [pr.system for pr in units[0].provenance] == ["A", "B"]
