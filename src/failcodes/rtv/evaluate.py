"""Run retrieve-then-verify over items and turn the results into failcodes traces and labels."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pydantic import Field

from failcodes.contract import FrozenModel
from failcodes.errors import InputError
from failcodes.labels import Label
from failcodes.rtv.chunking import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP, chunk_text
from failcodes.rtv.items import OrdinalScale, RtvItem
from failcodes.rtv.judge import (
    JudgeDecision,
    RtvVerdict,
    UnscoredAnswerError,
    VerdictJudge,
    quote_in_passages,
)
from failcodes.rtv.retrieval import BM25Index, RetrievedChunk, build_query
from failcodes.traces import EvidenceSource, Passage, Trace

DEFAULT_K = 5


class RtvConfig(FrozenModel):
    """Retrieval parameters (seed 000 defaults)."""

    chunk_size: int = Field(default=DEFAULT_CHUNK_SIZE, gt=0)
    overlap: int = Field(default=DEFAULT_OVERLAP, ge=0)
    k: int = Field(default=DEFAULT_K, ge=1)
    bm25_method: str = "lucene"
    k1: float = 1.5
    b: float = 0.75


class ItemResult(FrozenModel):
    """The outcome of retrieve-then-verify for one item at one k."""

    item: RtvItem
    k: int
    query: str
    passages: tuple[RetrievedChunk, ...]
    verdict: RtvVerdict | None = Field(description="None when the judge answer was unscored.")
    quote: str = ""
    quote_verified: bool = Field(
        default=False, description="The quote occurs verbatim in the retrieved chunks."
    )
    rationale: str = ""
    unscored_reason: str | None = None
    judge: str
    judge_heuristic: bool

    @property
    def top1_score(self) -> float | None:
        """BM25 score of the best chunk (None if nothing was retrieved)."""
        return self.passages[0].score if self.passages else None


def build_indexes(documents: Mapping[str, str], config: RtvConfig) -> dict[str, BM25Index]:
    """One BM25 index per document over its overlapping chunks."""
    out: dict[str, BM25Index] = {}
    for doc_id, text in documents.items():
        chunks = chunk_text(text, doc_id, size=config.chunk_size, overlap=config.overlap)
        if not chunks:
            raise InputError(f"document {doc_id!r} is empty")
        out[doc_id] = BM25Index(chunks, k1=config.k1, b=config.b, method=config.bm25_method)
    return out


def run(
    items: Sequence[RtvItem],
    indexes: Mapping[str, BM25Index],
    judge: VerdictJudge,
    k: int,
    *,
    progress: Callable[[int], None] | None = None,
) -> list[ItemResult]:
    """Retrieve the top ``k`` chunks of each item's document and have ``judge`` verify it."""
    results: list[ItemResult] = []
    for item in items:
        if item.doc_id not in indexes:
            known = ", ".join(sorted(indexes)[:10])
            raise InputError(
                f"item {item.item_id!r}: no document {item.doc_id!r} (known: {known})",
                field="doc_id",
            )
        query = build_query(item.question, item.response, item.explanation)
        passages = tuple(indexes[item.doc_id].search(query, k))
        try:
            decision: JudgeDecision | None = judge.judge(item, passages)
            reason = None
        except UnscoredAnswerError as exc:
            decision, reason = None, exc.one_line()
        results.append(
            ItemResult(
                item=item,
                k=k,
                query=query,
                passages=passages,
                verdict=decision.verdict if decision else None,
                quote=decision.quote if decision else "",
                quote_verified=decision is not None and quote_in_passages(decision.quote, passages),
                rationale=decision.rationale if decision else "",
                unscored_reason=reason,
                judge=judge.name,
                judge_heuristic=judge.heuristic,
            )
        )
        if progress:
            progress(1)
    return results


def system_name(result: ItemResult) -> str:
    """``MODEL | bm25@k | JUDGE``: the generator evaluated, the retrieval, the verifier."""
    return f"{result.item.model} | bm25@{result.k} | {result.judge}"


def to_traces(results: Sequence[ItemResult], config: RtvConfig) -> list[Trace]:
    """Scored results as failcodes traces (unscored ones are left out and reported apart).

    One trace per item: question_id = doc_id, sentence_id = claim_id = item_id, claim = the
    model's response and explanation, reasoning = quote check + rationale.
    """
    traces: list[Trace] = []
    for r in results:
        if r.verdict is None:
            continue
        it = r.item
        claim = it.response if not it.explanation else f"{it.response}: {it.explanation}"
        check = "verified verbatim" if r.quote_verified else "NOT found in retrieved text"
        reasoning = f"{r.rationale} Quote ({check}): {r.quote!r}" if r.quote else r.rationale
        traces.append(
            Trace(
                system=system_name(r),
                question_id=it.doc_id,
                sentence_id=it.item_id,
                claim_id=it.item_id,
                claim=claim,
                sentence=it.question,
                verdict=r.verdict.canonical,
                raw_verdict=r.verdict.value,
                reasoning=reasoning,
                verifier=r.judge,
                retriever=f"bm25s-{config.bm25_method} k={r.k} chunks={config.chunk_size}/"
                f"{config.overlap}",
                evidence_source=EvidenceSource.RETRIEVED,
                passages=tuple(
                    Passage(
                        passage_id=p.chunk.chunk_id,
                        rank=p.rank,
                        text=p.chunk.text,
                        source=it.doc_id,
                        score=p.score,
                    )
                    for p in r.passages
                ),
            )
        )
    return traces


def to_labels(results: Sequence[ItemResult], scale: OrdinalScale) -> list[Label]:
    """Human reference labels: ``has_error`` = the model's answer differs from the human one.

    Only items with a ``human`` answer get a label; answers off the scale are an InputError.
    """
    labels: list[Label] = []
    seen: set[str] = set()
    for r in results:
        it = r.item
        if it.human is None or it.item_id in seen:
            continue
        seen.add(it.item_id)
        try:
            wrong = scale.code(it.response) != scale.code(it.human)
        except ValueError as exc:
            raise InputError(f"item {it.item_id!r}: {exc}", field="response/human") from None
        labels.append(
            Label(
                sentence_id=it.item_id,
                question_id=it.doc_id,
                has_error=wrong,
                rationale=f"human answer {it.human!r}, model answer {it.response!r}",
                annotator="human reference",
                sentence=it.question,
            )
        )
    return labels
