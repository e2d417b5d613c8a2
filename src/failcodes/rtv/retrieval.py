"""BM25 retrieval over one document's chunks (bm25s).

Scoring: bm25s ``method="lucene"`` by default (k1=1.5, b=0.75; idf = ln(1 + (N - df + 0.5) /
(df + 0.5)), term weight tf / (tf + k1 (1 - b + b dl / avgdl))). Okapi as in rank-bm25
multiplies each term weight by (k1 + 1): rankings are identical, scores differ by that factor.
Tokens: lower-cased words of 2+ characters,
English stop words removed, no stemming.
"""

from __future__ import annotations

from collections.abc import Sequence

from failcodes.contract import FrozenModel
from failcodes.rtv.chunking import Chunk

BM25_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


class RetrievedChunk(FrozenModel):
    """A chunk with its 1-based rank and BM25 score for one query."""

    chunk: Chunk
    rank: int
    score: float


def _tokens(texts: Sequence[str]) -> list[list[str]]:
    import bm25s  # lazy: bm25s (and numba where installed) cost ~0.3 s at start-up

    out = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    return [list(t) for t in out]


class BM25Index:
    """A BM25 index over a list of chunks."""

    def __init__(
        self, chunks: Sequence[Chunk], *, k1: float = 1.5, b: float = 0.75, method: str = "lucene"
    ) -> None:
        if method not in BM25_METHODS:
            raise ValueError(f"unknown BM25 method {method!r} (one of {', '.join(BM25_METHODS)})")
        if not chunks:
            raise ValueError("cannot index zero chunks")
        self.chunks = list(chunks)
        self.k1 = k1
        import bm25s  # lazy (see _tokens)

        tokens = _tokens([c.text for c in self.chunks])
        self._model: bm25s.BM25 | None = None
        if any(tokens):  # no indexable word at all (stop words, digits, 1-letter chunks):
            # bm25s fails on an empty vocabulary; every query then scores 0 everywhere
            self._model = bm25s.BM25(k1=k1, b=b, method=method)
            self._model.index(tokens, show_progress=False)

    def search(self, query: str, k: int) -> list[RetrievedChunk]:
        """Top ``k`` chunks (fewer if the document has fewer chunks), best first.

        Ties keep document order; a query with no indexed word scores 0 everywhere.
        """
        if k < 1:
            raise ValueError("k must be >= 1")
        k = min(k, len(self.chunks))
        q = _tokens([query])
        if not q[0] or self._model is None:
            return [
                RetrievedChunk(chunk=c, rank=i + 1, score=0.0)
                for i, c in enumerate(self.chunks[:k])
            ]
        scores = self._model.get_scores(q[0])
        order = sorted(range(len(self.chunks)), key=lambda i: (-float(scores[i]), i))[:k]
        return [
            RetrievedChunk(chunk=self.chunks[i], rank=r + 1, score=float(scores[i]))
            for r, i in enumerate(order)
        ]


def build_query(question: str, response: str, explanation: str | None) -> str:
    """Seed 000's retrieval query: question text + model response + explanation."""
    return " ".join(
        part.strip() for part in (question, response, explanation or "") if part.strip()
    )
