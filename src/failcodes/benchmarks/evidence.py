"""Evidence precision@k and recall@k against gold evidence.

Precision@k, recall@k and hit@k per query, macro-averaged over queries, queries without
retrieval (precision: ``n_no_retrieval``) or without gold (recall: ``n_no_gold``) left out and
counted: docs/benchmarks.md defines them.

A mean over zero queries is ``None`` with the reason in ``undefined``, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import Field

from failcodes.contract import FrozenModel
from failcodes.ingest.scifact import SciFactClaim, SciFactPrediction
from failcodes.traces import Trace


class EvidenceQuery(FrozenModel):
    """One query's ranked retrieval: a gold flag per retrieved item and the gold total."""

    query_id: str
    ranked_gold: tuple[bool, ...] = Field(description="Gold flag per retrieved item, by rank.")
    n_gold: int = Field(ge=0, description="How many gold items exist for the query.")


class EvidenceAtK(FrozenModel):
    """Evidence precision/recall/hit rate at one cut-off k."""

    k: int
    precision: float | None
    recall: float | None
    hit_rate: float | None
    n_queries: int
    n_no_retrieval: int
    n_no_gold: int
    undefined: dict[str, str] = Field(default_factory=dict)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def evidence_at_k(queries: Iterable[EvidenceQuery], k: int) -> EvidenceAtK:
    """Macro-averaged evidence precision@k, recall@k and hit@k (definitions in the module doc)."""
    if k < 1:
        raise ValueError("k must be >= 1")
    qs = list(queries)
    precisions: list[float] = []
    recalls: list[float] = []
    hits: list[float] = []
    for q in qs:
        top = q.ranked_gold[:k]
        n_hit = sum(top)
        if n_hit > q.n_gold:
            raise ValueError(f"query {q.query_id}: more gold hits than gold items")
        if top:
            precisions.append(n_hit / len(top))
        if q.n_gold:
            recalls.append(n_hit / q.n_gold)
            hits.append(1.0 if n_hit else 0.0)
    undefined: dict[str, str] = {}
    if not precisions:
        undefined["precision"] = "no query retrieved anything"
    if not recalls:
        undefined["recall"] = "no query has gold evidence"
        undefined["hit_rate"] = "no query has gold evidence"
    return EvidenceAtK(
        k=k,
        precision=_mean(precisions),
        recall=_mean(recalls),
        hit_rate=_mean(hits),
        n_queries=len(qs),
        n_no_retrieval=sum(1 for q in qs if not q.ranked_gold),
        n_no_gold=sum(1 for q in qs if q.n_gold == 0),
        undefined=undefined,
    )


def queries_from_traces(
    traces: Iterable[Trace], n_gold: dict[str, int] | None = None
) -> list[EvidenceQuery]:
    """Build queries from traces whose passages carry ``gold`` flags (one query per trace).

    ``n_gold`` (claim_id -> gold total) overrides the default denominator, which is the number
    of gold passages among the retrieved ones (i.e. recall *within* the retrieved list).
    Passages with ``gold is None`` count as not gold.
    """
    out: list[EvidenceQuery] = []
    for t in traces:
        ranked = tuple(p.gold is True for p in sorted(t.passages, key=lambda p: p.rank))
        total = sum(ranked) if n_gold is None else n_gold.get(t.claim_id, sum(ranked))
        out.append(EvidenceQuery(query_id=t.claim_id, ranked_gold=ranked, n_gold=total))
    return out


def scifact_rationale_queries(
    claims: Sequence[SciFactClaim], predictions: Sequence[SciFactPrediction]
) -> list[EvidenceQuery]:
    """Rationale-sentence retrieval of one SciFact system as evidence queries.

    Retrieved items are the predicted (abstract, sentence) pairs in the order the system lists
    them (abstracts in prediction order, sentences in listed order); NEI abstracts contribute
    their listed sentences too (MultiVerS lists none). Gold items are all gold rationale
    sentences of the claim.
    """
    by_id = {p.id: p for p in predictions}
    out: list[EvidenceQuery] = []
    for c in claims:
        gold = {(doc, s) for doc, rats in c.evidence.items() for r in rats for s in r.sentences}
        pred = by_id.get(c.id)
        items = (
            [(doc, s) for doc, dp in pred.evidence.items() for s in dp.sentences] if pred else []
        )
        out.append(
            EvidenceQuery(
                query_id=str(c.id), ranked_gold=tuple(it in gold for it in items), n_gold=len(gold)
            )
        )
    return out
