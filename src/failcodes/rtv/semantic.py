"""Optional semantic grounding diagnostic (seed 000): explanation vs retrieved chunks.

Runs only when ``sentence-transformers`` is installed *and* a local model path is given
(failcodes never downloads a model and does not depend on sentence-transformers). Per item:
cosine similarity of the explanation to each retrieved chunk (embeddings L2-normalised),
the maximum, the mean over the top k, and the rank of the best chunk. Across items: mean
similarity by verdict, Mann-Whitney U of max similarity for supported vs not supported
(two-sided; rank-biserial r = 2 U / (n1 n2) - 1 with U for supported), and Spearman's rho
between max similarity and the top-1 BM25 score. The verdicts remain the judge's.
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from failcodes.contract import FrozenModel, StrictModel
from failcodes.errors import ConfigError
from failcodes.rtv.evaluate import ItemResult
from failcodes.rtv.judge import RtvVerdict

if TYPE_CHECKING:  # numpy is imported where vectors are compared (`rtv --help` builds the models)
    import numpy as np
    from numpy.typing import NDArray


class ItemSimilarity(FrozenModel):
    """Semantic similarity of one item's explanation to its retrieved chunks."""

    item_id: str
    similarities: tuple[float, ...]
    max_similarity: float
    mean_similarity: float
    best_rank: int


class SemanticSummary(StrictModel):
    """The cross-item semantic diagnostics."""

    items: list[ItemSimilarity]
    mean_max_by_verdict: dict[str, float]
    mean_mean_by_verdict: dict[str, float]
    mann_whitney_u: float | None
    mann_whitney_p: float | None
    rank_biserial_r: float | None
    spearman_rho_bm25: float | None
    spearman_p_bm25: float | None
    undefined: dict[str, str]


def unavailable_reason(model_path: str | Path | None) -> str | None:
    """Why the diagnostic cannot run (None when it can)."""
    if model_path is None:
        return "no local model path given (--semantic-model)"
    if importlib.util.find_spec("sentence_transformers") is None:
        return "sentence-transformers is not installed (optional; pip install it to enable)"
    if not Path(model_path).exists():
        return f"model path {model_path} does not exist (models are never downloaded)"
    return None


def item_similarities(
    item_id: str, explanation: NDArray[np.floating[Any]], chunks: NDArray[np.floating[Any]]
) -> ItemSimilarity:
    """Cosine similarities of one explanation vector to the chunk vectors (rows)."""
    import numpy as np

    e = explanation / np.linalg.norm(explanation)
    c = chunks / np.linalg.norm(chunks, axis=1, keepdims=True)
    sims = c @ e
    best = int(np.argmax(sims))
    return ItemSimilarity(
        item_id=item_id,
        similarities=tuple(float(x) for x in sims),
        max_similarity=float(sims[best]),
        mean_similarity=float(sims.mean()),
        best_rank=best + 1,
    )


def summarize(results: Sequence[ItemResult], sims: Sequence[ItemSimilarity]) -> SemanticSummary:
    """Verdict-stratified means, Mann-Whitney and Spearman over items (pure)."""
    import numpy as np

    from failcodes.stats.tests import mann_whitney, spearman

    by_id = {s.item_id: s for s in sims}
    max_by: dict[str, list[float]] = defaultdict(list)
    mean_by: dict[str, list[float]] = defaultdict(list)
    sup: list[float] = []
    non: list[float] = []
    pairs: list[tuple[float, float]] = []
    for r in results:
        s = by_id.get(r.item.item_id)
        if s is None or r.verdict is None:
            continue
        max_by[r.verdict.value].append(s.max_similarity)
        mean_by[r.verdict.value].append(s.mean_similarity)
        (sup if r.verdict == RtvVerdict.SUPPORTED else non).append(s.max_similarity)
        if r.top1_score is not None:
            pairs.append((s.max_similarity, r.top1_score))
    undefined: dict[str, str] = {}
    u = p = rb = None
    if sup and non:
        mw = mann_whitney(sup, non)
        u, p, rb = mw.statistic, mw.p_value, mw.effect
    else:
        undefined["mann_whitney"] = "needs supported and not-supported items"
    rank = spearman([a for a, _ in pairs], [b for _, b in pairs])
    rho, sp = rank.effect, rank.p_value
    if rank.undefined_reason is not None:
        undefined["spearman"] = "needs >= 3 items with varying similarity and BM25 score"
    return SemanticSummary(
        items=list(sims),
        mean_max_by_verdict={k: float(np.mean(v)) for k, v in sorted(max_by.items())},
        mean_mean_by_verdict={k: float(np.mean(v)) for k, v in sorted(mean_by.items())},
        mann_whitney_u=u,
        mann_whitney_p=p,
        rank_biserial_r=rb,
        spearman_rho_bm25=rho,
        spearman_p_bm25=sp,
        undefined=undefined,
    )


def run(results: Sequence[ItemResult], model_path: str | Path) -> SemanticSummary:
    """Embed explanations and chunks with a local sentence-transformers model and summarise."""
    reason = unavailable_reason(model_path)
    if reason is not None:
        raise ConfigError(f"semantic diagnostic unavailable: {reason}")
    import numpy as np

    st = importlib.import_module("sentence_transformers")  # optional, never a dependency
    model = st.SentenceTransformer(str(model_path), device="cpu")
    sims: list[ItemSimilarity] = []
    for r in results:
        text = r.item.explanation or r.item.response
        if not r.passages or not text.strip():
            continue
        vecs = np.asarray(model.encode([text, *[p.chunk.text for p in r.passages]]))
        sims.append(item_similarities(r.item.item_id, vecs[0], vecs[1:]))
    return summarize(results, sims)
