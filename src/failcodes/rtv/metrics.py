"""RtV metrics (seed 000): evidence support, hallucination, accuracy and agreement.

Also the accuracy-support gap, BM25 strength by verdict and sensitivity to k. Definitions
(over the *scored* items of a group; unscored items counted apart): docs/rtv.md. The kappas
delegate to failcodes.stats.agreement. An undefined value is ``None`` with the reason in
``undefined``, never 0 or NaN.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence

from pydantic import Field

from failcodes.contract import FrozenModel, StrictModel
from failcodes.rtv.evaluate import ItemResult
from failcodes.rtv.items import OrdinalScale
from failcodes.rtv.judge import RtvVerdict

CONSERVATIVE = frozenset({RtvVerdict.CONTRADICTED, RtvVerdict.NOT_FOUND})
STRICT = CONSERVATIVE | {RtvVerdict.OUT_OF_SCOPE}


class RtvSummary(StrictModel):
    """Every seed-000 figure for one group of items (e.g. one model, or model x domain)."""

    group: dict[str, str]
    k: int
    judge: str
    judge_heuristic: bool
    n: int = Field(description="Scored items.")
    n_unscored: int
    verdict_counts: dict[str, int]
    evidence_support_rate: float | None
    conservative_hallucination_rate: float | None
    strict_hallucination_rate: float | None
    quote_verified_rate: float | None = Field(
        description="Share of supported/contradicted verdicts whose quote was found verbatim."
    )
    mean_top1_bm25: float | None
    mean_top1_bm25_by_verdict: dict[str, float]
    n_human: int
    exact_accuracy: float | None
    binary_accuracy: float | None
    accuracy_support_gap: float | None
    kappa_linear: float | None
    kappa_quadratic: float | None
    undefined: dict[str, str] = Field(default_factory=dict)


def weighted_kappa(
    a: Sequence[int], b: Sequence[int], categories: Sequence[int], weights: str
) -> float | None:
    """Cohen's kappa of two raters with ``linear`` / ``quadratic`` / ``none`` weights.

    Delegates to :func:`failcodes.stats.agreement.agreement` over the ordinal ``categories``;
    None when kappa is undefined (e.g. both raters used a single category).
    """
    import numpy as np

    from failcodes.stats.agreement import agreement

    if len(a) != len(b):
        raise ValueError("raters must rate the same items")
    if weights not in ("linear", "quadratic", "none"):
        raise ValueError(f"unknown weights {weights!r}")
    if len(categories) < 2 or not a:
        return None
    ratings = np.column_stack([np.asarray(a, dtype=float), np.asarray(b, dtype=float)])
    res = agreement(
        ratings,
        "cohen",
        weights=None if weights == "none" else weights,
        categories=list(categories),
    )
    return res.value


def fleiss(ratings: Sequence[Sequence[int]], categories: Sequence[int]) -> float | None:
    """Fleiss' kappa for items x raters codes (failcodes.stats.agreement); None if undefined."""
    import numpy as np

    from failcodes.stats.agreement import agreement

    if not ratings:
        return None
    res = agreement(np.asarray(ratings, dtype=float), "fleiss", categories=list(categories))
    return res.value


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def summarize_group(
    results: Sequence[ItemResult], scale: OrdinalScale | None, group: Mapping[str, str]
) -> RtvSummary:
    """All figures for one group of results (same k and judge)."""
    import numpy as np  # (here: `rtv --help` builds the run's model, not its figures)

    scored = [r for r in results if r.verdict is not None]
    n = len(scored)
    counts = Counter(r.verdict.value for r in scored if r.verdict is not None)
    undefined: dict[str, str] = {}
    support = _rate(counts[RtvVerdict.SUPPORTED.value], n)
    cons = _rate(sum(counts[v.value] for v in CONSERVATIVE), n)
    strict = _rate(sum(counts[v.value] for v in STRICT), n)
    if n == 0:
        for key in (
            "evidence_support_rate",
            "conservative_hallucination_rate",
            "strict_hallucination_rate",
        ):
            undefined[key] = "no scored item"
    quoted = [r for r in scored if r.verdict in (RtvVerdict.SUPPORTED, RtvVerdict.CONTRADICTED)]
    qrate = _rate(sum(r.quote_verified for r in quoted), len(quoted))
    if not quoted:
        undefined["quote_verified_rate"] = "no supported or contradicted verdict"
    tops = [(r.verdict, r.top1_score) for r in scored if r.top1_score is not None]
    by_verdict: dict[str, list[float]] = defaultdict(list)
    for v, s in tops:
        if v is not None and s is not None:
            by_verdict[v.value].append(s)
    mean_top1 = float(np.mean([s for _, s in tops])) if tops else None
    human = [r for r in scored if r.item.human is not None]
    exact = binary = gap = kl = kq = None
    if scale is not None and human:
        m = [scale.code(r.item.response) for r in human]
        h = [scale.code(r.item.human or "") for r in human]
        exact = sum(x == y for x, y in zip(m, h, strict=True)) / len(human)
        binary = sum(
            scale.collapse(r.item.response) == scale.collapse(r.item.human or "") for r in human
        ) / len(human)
        cats = sorted(set(scale.levels.values()))
        kl = weighted_kappa(h, m, cats, "linear")
        kq = weighted_kappa(h, m, cats, "quadratic")
        if kl is None:
            undefined["kappa"] = "chance disagreement is zero (one category only)"
        if support is not None:
            gap = binary - support
    else:
        reason = "no scale given" if scale is None else "no item has a human answer"
        for key in ("exact_accuracy", "binary_accuracy", "accuracy_support_gap", "kappa"):
            undefined[key] = reason
    first = results[0] if results else None
    return RtvSummary(
        group=dict(group),
        k=first.k if first else 0,
        judge=first.judge if first else "",
        judge_heuristic=first.judge_heuristic if first else False,
        n=n,
        n_unscored=len(results) - n,
        verdict_counts={v.value: counts[v.value] for v in RtvVerdict},
        evidence_support_rate=support,
        conservative_hallucination_rate=cons,
        strict_hallucination_rate=strict,
        quote_verified_rate=qrate,
        mean_top1_bm25=mean_top1,
        mean_top1_bm25_by_verdict={k: float(np.mean(v)) for k, v in sorted(by_verdict.items())},
        n_human=len(human),
        exact_accuracy=exact,
        binary_accuracy=binary,
        accuracy_support_gap=gap,
        kappa_linear=kl,
        kappa_quadratic=kq,
        undefined=undefined,
    )


def _keyfuncs(by: Sequence[str]) -> Callable[[ItemResult], tuple[str, ...]]:
    def key(r: ItemResult) -> tuple[str, ...]:
        vals = []
        for name in by:
            if name == "model":
                vals.append(r.item.model)
            elif name == "group":
                vals.append(r.item.group or "(none)")
            elif name == "doc_id":
                vals.append(r.item.doc_id)
            else:
                raise ValueError(f"cannot group by {name!r} (model, group, doc_id)")
        return tuple(vals)

    return key


def summarize(
    results: Sequence[ItemResult], scale: OrdinalScale | None, by: Sequence[str] = ("model",)
) -> list[RtvSummary]:
    """One summary per value of ``by`` (any of model, group, doc_id), sorted by key."""
    key = _keyfuncs(by)
    groups: dict[tuple[str, ...], list[ItemResult]] = defaultdict(list)
    for r in results:
        groups[key(r)].append(r)
    return [
        summarize_group(rs, scale, dict(zip(by, k, strict=True)))
        for k, rs in sorted(groups.items())
    ]


class KSensitivityRow(FrozenModel):
    """Support and hallucination rates of one model at one k."""

    model: str
    k: int
    n: int
    evidence_support_rate: float | None
    conservative_hallucination_rate: float | None
    strict_hallucination_rate: float | None


def k_sensitivity(results_by_k: Mapping[int, Sequence[ItemResult]]) -> list[KSensitivityRow]:
    """Seed 000's sensitivity analysis: the rates per model for each k (e.g. 1, 3, 5)."""
    rows: list[KSensitivityRow] = []
    for k in sorted(results_by_k):
        for s in summarize(results_by_k[k], None, ("model",)):
            rows.append(
                KSensitivityRow(
                    model=s.group["model"],
                    k=k,
                    n=s.n,
                    evidence_support_rate=s.evidence_support_rate,
                    conservative_hallucination_rate=s.conservative_hallucination_rate,
                    strict_hallucination_rate=s.strict_hallucination_rate,
                )
            )
    return rows


class FleissResult(FrozenModel):
    """Fleiss' kappa across models (internal agreement) for one group."""

    group: str
    kappa: float | None
    n_items: int
    n_models: int
    reason: str | None = None


def fleiss_across_models(
    items_results: Sequence[ItemResult], scale: OrdinalScale, by_group: bool = False
) -> list[FleissResult]:
    """Fleiss' kappa of the models' answers over questions every model answered.

    Questions are matched by :attr:`RtvItem.key`; a question answered twice by one model is an
    error (ValueError).
    """
    models = sorted({r.item.model for r in items_results})
    groups: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for r in items_results:
        g = (r.item.group or "(none)") if by_group else "all"
        per_model = groups[g][r.item.key]
        if r.item.model in per_model:
            raise ValueError(f"model {r.item.model!r} answers question {r.item.key!r} twice")
        per_model[r.item.model] = scale.code(r.item.response)
    out: list[FleissResult] = []
    cats = sorted(set(scale.levels.values()))
    for g, questions in sorted(groups.items()):
        rows = [[q[m] for m in models] for q in questions.values() if len(q) == len(models)]
        reason: str | None
        if len(models) < 2 or not rows:
            kappa, reason = None, "needs >= 2 models answering the same questions"
        else:
            kappa = fleiss(rows, cats)
            reason = None if kappa is not None else "all answers identical"
        out.append(
            FleissResult(
                group=g, kappa=kappa, n_items=len(rows), n_models=len(models), reason=reason
            )
        )
    return out
