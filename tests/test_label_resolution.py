"""Claims inherit their sentence's label unless a claim-level label exists (issue 2)."""

from __future__ import annotations

import pytest

from failcodes.errors import InputError
from failcodes.labels import Label, check_labels_against_traces, resolve_claim_labels
from failcodes.traces import Trace
from failcodes.verdicts import Verdict


def _t(system: str, sid: str, cid: str, qid: str = "q1") -> Trace:
    return Trace(
        system=system,
        question_id=qid,
        sentence_id=sid,
        claim_id=cid,
        claim=cid,
        verdict=Verdict.SUPPORTED,
    )


TRACES = [
    _t("A", "s0", "c0"),
    _t("A", "s0", "c1"),
    _t("A", "s1", "c2"),
    _t("B", "s0", "c0"),
    _t("B", "s2", "c3"),
]


def test_inheritance_and_claim_override() -> None:
    sentence_s0 = Label(sentence_id="s0", has_error=True, rationale="dose wrong")
    claim_c1 = Label(claim_id="c1", sentence_id="s0", has_error=False)
    sentence_s1 = Label(sentence_id="s1", has_error=False)
    got = resolve_claim_labels(TRACES, [sentence_s0, claim_c1, sentence_s1])
    # By hand: c0 inherits s0 in both systems; c1 has its own label; c2 inherits s1;
    # c3 (sentence s2) has no label at all and is absent, never defaulted.
    assert got == {
        ("A", "c0"): sentence_s0,
        ("A", "c1"): claim_c1,
        ("A", "c2"): sentence_s1,
        ("B", "c0"): sentence_s0,
    }


def test_two_labels_for_one_sentence_is_an_error() -> None:
    with pytest.raises(InputError, match="two labels for sentence 's0'"):
        resolve_claim_labels(
            TRACES,
            [
                Label(sentence_id="s0", has_error=True, annotator="a"),
                Label(sentence_id="s0", has_error=False, annotator="b"),
            ],
        )


def test_check_labels_against_traces() -> None:
    labels = [
        Label(sentence_id="s0", has_error=True),  # fine
        Label(sentence_id="s9", has_error=True),  # unknown sentence, no question
        Label(sentence_id="s9", question_id="q1", has_error=False),  # known question: allowed
        Label(sentence_id="s9", question_id="q7", has_error=False),  # unknown question
        Label(sentence_id="s0", question_id="q2", has_error=False),  # wrong question
        Label(claim_id="c2", sentence_id="s0", has_error=False),  # c2 belongs to s1
        Label(claim_id="c9", has_error=False),  # unknown claim
    ]
    problems = check_labels_against_traces(labels, TRACES)
    assert [(p.position, p.field) for p in problems] == [
        (1, "sentence_id"),
        (3, "sentence_id"),
        (4, "question_id"),
        (5, "sentence_id"),
        (6, "claim_id"),
    ]


def test_claim_has_error_is_the_resolved_labels_flag() -> None:
    # by hand: c1's own label says no error; c0 inherits s0 (error); c2 inherits s1 (none);
    # c3's sentence s2 has no label (None); from model lists and from label columns alike
    from failcodes.labels import LabelColumns, LabelIndex

    labels = [
        Label(sentence_id="s0", has_error=True),
        Label(claim_id="c1", sentence_id="s0", has_error=False),
        Label(sentence_id="s1", has_error=False),
    ]
    columns = LabelColumns()
    for label in labels:
        columns.append(label)
    expected = {("s0", "c0"): True, ("s0", "c1"): False, ("s1", "c2"): False, ("s2", "c3"): None}
    for index in (LabelIndex(labels), LabelIndex(columns)):
        for (sid, cid), flag in expected.items():
            assert index.claim_has_error(sid, cid) is flag
            resolved = index.for_claim("q1", sid, cid)
            assert (resolved.has_error if resolved is not None else None) is flag
