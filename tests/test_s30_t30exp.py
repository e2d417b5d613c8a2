"""Session 30, t30exp: unit ids computed with each string encoded once (issue 30 speed).

``claim_unit_ids`` (what ``attribute`` computes for every claim) now encodes each passage once
for both the retrieval ids and the verification id. Ids key journals, caches and annotations:
they must not move. These tests pin them against ids worked out by hand (the canonical JSON
written out and hashed with hashlib) and against the standard library's serialiser
(``content_hash``), on the shapes the shared encoding branches on. The change is a speed
change: these tests pass on main's src too (the speed is measured in bench/bench_s30_exp.py).
"""

from __future__ import annotations

from failcodes.hashing import content_hash
from failcodes.traces import Passage
from failcodes.units import UnitKind, claim_unit_ids, retrieval_unit_digests, unit_id
from failcodes.verdicts import Verdict


def test_claim_unit_ids_hand_worked() -> None:
    # by hand: sha256 of the canonical JSON (sorted keys, no spaces), first 16 hex digits:
    # {"claim":"c","kind":"verification","passages":[{"passage_id":"p1","source":null,
    #  "text":"t","title":null}],"reasoning":"r","verdict":"refuted"} -> b14b4342be735c6c
    # {"claim":"c","kind":"retrieval","passages":["t"],"reasoning":null,"verdict":null}
    #  -> 98c6e20f8ac06d7a (a retrieval prompt shows no id; no source, no title: the text alone)
    digests, step = claim_unit_ids("c", [Passage(passage_id="p1", rank=1, text="t")], "r",
                                   Verdict.REFUTED)  # fmt: skip
    assert step == "b14b4342be735c6c"
    assert digests.hex() == "98c6e20f8ac06d7a"


def test_claim_unit_ids_are_the_canonical_json_on_every_shape() -> None:
    claim = 'A "claim" \u00e9 \\ \u2028'
    # (text, source, title, passage id): each branch of the shared encoding
    shown = [
        ('q " \\ \x00\x1f\t', "pubmed", "T", "p1"),
        ("\U0001f600 only source", "blog", None, "p2"),
        ("only title", None, "A title", ""),  # an empty id: not shown
        ("bare", None, None, ""),  # nothing beside it: the text alone in both
        ("id only", "", "", "p5"),  # empty source and title: not shown
    ]
    passages = [
        Passage(passage_id=i, rank=r + 1, text=t, source=s, title=n)
        for r, (t, s, n, i) in enumerate(shown)
    ]

    def entry(t: str, s: str | None, n: str | None, i: str | None) -> object:
        if not s and not n and not i:
            return t
        e = {"source": s or None, "text": t, "title": n or None}
        return {"passage_id": i, **e} if i else e

    for reasoning, verdict in (("Why\nnot.", Verdict.SUPPORTED), (None, Verdict.REFUTED)):
        digests, step = claim_unit_ids(claim, passages, reasoning, verdict)
        want = [
            content_hash({"kind": "retrieval", "claim": claim, "passages": [entry(t, s, n, None)],
                          "reasoning": None, "verdict": None})
            for t, s, n, _ in shown
        ]  # fmt: skip
        assert [digests[8 * k : 8 * k + 8].hex() for k in range(len(shown))] == want
        assert digests == retrieval_unit_digests(claim, passages)
        assert step == content_hash({"kind": "verification", "claim": claim,
                                     "passages": [entry(*p) for p in shown],
                                     "reasoning": reasoning, "verdict": verdict.value})  # fmt: skip
        assert step == unit_id(UnitKind.VERIFICATION, claim, passages, reasoning, verdict)
    assert claim_unit_ids(claim, [], None, Verdict.SUPPORTED)[0] == b""
