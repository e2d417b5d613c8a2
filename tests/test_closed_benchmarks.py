"""HealthVer and COVID-Fact adapters on the real files, plus evidence P/R@k on them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from failcodes.benchmarks.evidence import evidence_at_k, queries_from_traces
from failcodes.errors import InputError
from failcodes.ingest import get_adapter
from failcodes.ingest.base import AdapterOptions
from failcodes.ingest.covidfact import read_covidfact
from failcodes.ingest.healthver import oracle_verdict, read_healthver
from failcodes.verdicts import Verdict


def test_healthver_dev(shared: Any) -> None:
    traces = read_healthver(shared("healthver", "healthver_dev.csv"))
    # SOURCE.md: dev 1,917 evidence-claim pairs, 230 claims; Neutral 993, Supports 533,
    # Refutes 391.
    assert len(traces) == 230
    pols = Counter(p.gold_verdict for t in traces for p in t.passages)
    assert pols == {Verdict.NO_EVIDENCE: 993, Verdict.SUPPORTED: 533, Verdict.REFUTED: 391}
    assert sum(p.gold is True for t in traces for p in t.passages) == 533 + 391
    for t in traces:
        assert t.verdict == oracle_verdict([p.gold_verdict for p in t.passages if p.gold_verdict])
        assert [p.rank for p in t.passages] == list(range(1, len(t.passages) + 1))
    # Within-list recall at the full list is 1 by construction for claims with gold passages.
    full = evidence_at_k(queries_from_traces(traces), 1000)
    assert full.recall == 1.0


def test_healthver_oracle_rule() -> None:
    s, r, n = Verdict.SUPPORTED, Verdict.REFUTED, Verdict.NO_EVIDENCE
    assert oracle_verdict([n, s, n]) == s
    assert oracle_verdict([r, n]) == r
    assert oracle_verdict([s, r]) == Verdict.AMBIGUOUS
    assert oracle_verdict([n, n]) == n


def test_healthver_bad_label(tmp_path: Path) -> None:
    p = tmp_path / "h.csv"
    p.write_text("id,evidence,claim,label,topic_ip,question\n1,e,c,Supports,1,q\n2,e,c,Maybe,1,q\n")
    with pytest.raises(InputError) as exc:
        read_healthver(p)
    assert (exc.value.line, exc.value.field) == (3, "label")


def test_covidfact_recall_traces(shared: Any) -> None:
    root = shared("covidfact")
    claims = read_covidfact(root)
    # SOURCE.md: 401 test rows, recall 210 yes / 191 no; 271 refuted claims listed per sentence.
    assert len(claims) == 401
    assert sum(c.recall for c in claims) == 210
    res = get_adapter("covidfact").read([root], AdapterOptions())
    traces, labels = res.traces, res.labels
    assert sum(lab.has_error for lab in labels) == 271  # not_entailment rows
    split = [t for t in traces if len(t.passages) > 1]
    assert len(split) == 263  # 263 claims list 5 sentences (4 list 1; the rest are joined)
    by_id = {c.claim_id: c for c in claims}
    # The per-sentence gold flags agree with the published recall flag on every listed claim.
    for t in split:
        assert any(p.gold for p in t.passages) == by_id[t.claim_id].recall
    # Verdict = retrieval-bounded oracle: no evidence exactly when recall = 0.
    assert sum(t.verdict == Verdict.NO_EVIDENCE for t in traces) == 191
    n_gold = {c.claim_id: len(c.gold_evidence or ()) for c in claims}
    q = queries_from_traces(split, n_gold)
    at5 = evidence_at_k(q, 5)
    # hit@5 over listed claims equals their mean recall flag (80 of 263 recovered).
    assert at5.hit_rate == pytest.approx(80 / 263)
    assert at5.recall is not None and at5.precision is not None
    at1 = evidence_at_k(q, 1)
    assert at1.recall is not None and at1.recall <= at5.recall
