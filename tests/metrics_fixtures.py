"""A hand-made fixture shared by the mapping, metrics and disagreement tests.

System "A", three questions, six labelled sentences, nine claims:

    q1  s1 (has_error=True)   c1 supported, c2 refuted
        s2 (False)            c3 no_evidence
    q2  s3 (True)             c4 ambiguous, c5 supported
        s4 (False)            c6 out_of_scope
    q3  s5 (True)             c7 supported
        s6 (False)            c8 supported, c9 no_evidence
        s7 (True)             -- no claim (labelled, with question_id)

Claim c1 also has its own claim-level label has_error=False (overrides s1's True).
"""

from __future__ import annotations

from failcodes.labels import Label
from failcodes.traces import Passage, Trace
from failcodes.verdicts import Verdict

S, R, NE, A, OOS = (
    Verdict.SUPPORTED,
    Verdict.REFUTED,
    Verdict.NO_EVIDENCE,
    Verdict.AMBIGUOUS,
    Verdict.OUT_OF_SCOPE,
)

CLAIMS: list[tuple[str, str, str, Verdict]] = [
    ("q1", "s1", "c1", S),
    ("q1", "s1", "c2", R),
    ("q1", "s2", "c3", NE),
    ("q2", "s3", "c4", A),
    ("q2", "s3", "c5", S),
    ("q2", "s4", "c6", OOS),
    ("q3", "s5", "c7", S),
    ("q3", "s6", "c8", S),
    ("q3", "s6", "c9", NE),
]

SENTENCE_LABELS = {"s1": True, "s2": False, "s3": True, "s4": False, "s5": True, "s6": False}


def trace(
    system: str, qid: str, sid: str, cid: str, verdict: Verdict, *, passages: int = 1
) -> Trace:
    """One trace with deterministic text, reasoning and passages."""
    return Trace(
        system=system,
        question_id=qid,
        sentence_id=sid,
        claim_id=cid,
        claim=f"claim {cid}",
        sentence=f"sentence {sid}",
        verdict=verdict,
        raw_verdict=verdict.value.title(),
        reasoning=f"reasoning for {cid} by {system}",
        verifier="v1",
        passages=tuple(
            Passage(passage_id=f"{cid}-p{i}", rank=i, text=f"passage {i} for {cid}")
            for i in range(1, passages + 1)
        ),
    )


def traces_a() -> list[Trace]:
    """System A's nine traces."""
    return [trace("A", q, s, c, v) for q, s, c, v in CLAIMS]


def labels(*, with_claim_label: bool = True, with_empty_sentence: bool = True) -> list[Label]:
    """Sentence labels (with question ids), optional c1 claim label and s7 (no claims)."""
    qid = {s: q for q, s, _, _ in CLAIMS}
    out = [
        Label(sentence_id=s, question_id=qid[s], has_error=e, rationale=f"why {s}")
        for s, e in SENTENCE_LABELS.items()
    ]
    if with_claim_label:
        out.append(Label(claim_id="c1", sentence_id="s1", question_id="q1", has_error=False))
    if with_empty_sentence:
        out.append(Label(sentence_id="s7", question_id="q3", has_error=True))
    return out
