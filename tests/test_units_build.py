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
    claim = traces[0].claim
    assert shared.id == unit_id(UnitKind.RETRIEVAL, claim, (P_GOOD,))
    assert shared.provenance == (
        Provenance(system="sysA", question_id="q0", sentence_id="q0-s1", claim_id="q0-c1", rank=1),
        Provenance(system="sysB", question_id="q0", sentence_id="q0-s1", claim_id="q0-c1", rank=1),
    )
    assert sum(len(u.provenance) for u in units) == 8


def test_one_text_under_two_sources_is_two_units_each_shown_as_its_own() -> None:
    # the judge is shown the source and title beside the text: P_GOOD's text from a blog under
    # sysB is another unit (it was P_GOOD's, shown as pubmed for both); a title counts, an
    # empty source or title is not shown (the text-only id, as before ids held them)
    a, b = make_traces(1)
    blog = P_GOOD.model_copy(update={"source": "healthblog"})
    titled = P_GOOD.model_copy(update={"title": "Metformin"})
    plain = P_GOOD.model_copy(update={"source": "", "title": ""})
    c, d, e = (
        b.model_copy(update={"system": s, "passages": (p,)})
        for s, p in (("sysC", blog), ("sysD", titled), ("sysE", plain))
    )
    units = [u for u in retrieval_units([a, c, d, e]) if u.passages[0].text == P_GOOD.text]
    shown = [(u.passages[0].source, u.passages[0].title) for u in units]
    assert shown == [("pubmed", None), ("healthblog", None), ("pubmed", "Metformin"), ("", "")]
    assert [[p.system for p in u.provenance] for u in units] == [
        ["sysA"],
        ["sysC"],
        ["sysD"],
        ["sysE"],
    ]
    assert units[3].id == unit_id(UnitKind.RETRIEVAL, a.claim, (P_GOOD.text,))


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
        traces[0].passages,
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
