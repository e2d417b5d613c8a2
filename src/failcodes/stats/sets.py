"""Agreement on set-valued codes: a coder may give one unit several codes of one dimension.

A multi-label dimension (a reasoning step whose low-quality codes co-occur, seed 001 Table 9)
is answered with a *set* of codes. Reading only its first code hides a missed co-occurring
code: a judge that gives ``{overreach}`` where the clinician gave ``{overreach,
conflict_synthesis_failure}`` would agree perfectly. Here each set is one value: exact-set
statistics, and Krippendorff's alpha with the MASI or the Jaccard distance (partial credit),
as docs/statistics.md ("Co-occurring codes") defines them.

The distinct sets observed are the categories, and the distance matrix between them is the
``1 - w`` of a custom agreement-weight matrix, so alpha, its jackknife standard error and its
bootstrap intervals come from :mod:`failcodes.stats.agreement` unchanged (the coincidence
matrix of Krippendorff 2011 with a custom metric). NLTK's ``AnnotationTask(distance=
masi_distance).alpha()`` gives the same value (tests/test_agreement_sets.py, to 1e-9).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np

from failcodes.errors import StatisticsError
from failcodes.stats.agreement import AgreementResult, agreements
from failcodes.stats.bootstrap import FloatArray
from failcodes.stats.names import SET_DISTANCES

CodeSet = frozenset[str]

#: Exact-set statistics per scope (a set agrees only with an equal set).
EXACT_MULTI_RATER = ("percent", "fleiss", "krippendorff")
EXACT_PAIR = ("percent", "cohen", "krippendorff")


def jaccard_distance(a: Collection[str], b: Collection[str]) -> float:
    """``1 - |A & B| / |A | B|`` (0 for two empty sets)."""
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return 0.0 if union == 0 else 1.0 - len(sa & sb) / union


def masi_distance(a: Collection[str], b: Collection[str]) -> float:
    """MASI distance (Passonneau 2006): ``1 - Jaccard * M``, M = 1, 2/3, 1/3 or 0.

    M is 1 when the sets are equal, 2/3 when one is a subset of the other, 1/3 when they
    overlap but each has codes of its own, 0 when they are disjoint.
    """
    sa, sb = set(a), set(b)
    both = len(sa & sb)
    union = len(sa | sb)
    if union == 0 or sa == sb:
        return 0.0
    if both == min(len(sa), len(sb)):
        m = 2.0 / 3.0
    elif both > 0:
        m = 1.0 / 3.0
    else:
        m = 0.0
    return 1.0 - both / union * m


_DISTANCE: dict[str, Callable[[Collection[str], Collection[str]], float]] = {
    "masi": masi_distance,
    "jaccard": jaccard_distance,
}


def set_categories(sets: Sequence[Sequence[CodeSet | None]]) -> list[CodeSet]:
    """The distinct sets of a table, in a fixed order (by size, then by sorted codes)."""
    seen = {s for row in sets for s in row if s is not None}
    return sorted(seen, key=lambda s: (len(s), sorted(s)))


def encode(sets: Sequence[Sequence[CodeSet | None]], categories: Sequence[CodeSet]) -> FloatArray:
    """Units x raters of category indices into ``categories`` (NaN where missing)."""
    index = {s: float(i) for i, s in enumerate(categories)}
    return np.array(
        [[np.nan if s is None else index[s] for s in row] for row in sets], dtype=np.float64
    ).reshape(len(sets), len(sets[0]) if sets else 0)


def distance_matrix(categories: Sequence[CodeSet], distance: str) -> FloatArray:
    """The q x q distance between the category sets under ``distance`` (masi or jaccard)."""
    if distance not in _DISTANCE:
        raise StatisticsError(
            f"unknown set distance {distance!r}; choose one of {', '.join(SET_DISTANCES)}"
        )
    fn = _DISTANCE[distance]
    q = len(categories)
    out = np.zeros((q, q))
    for i in range(q):
        for j in range(i + 1, q):
            out[i, j] = out[j, i] = fn(categories[i], categories[j])
    return out


def set_agreements(
    sets: Sequence[Sequence[CodeSet | None]],
    exact: Sequence[str] = EXACT_MULTI_RATER,
    *,
    n_bootstrap: int = 0,
    seed: int | None = None,
    confidence: float = 0.95,
    clusters: Sequence[str] | None = None,
) -> list[AgreementResult]:
    """Agreement on a units x raters table of code sets (None = missing).

    ``exact`` statistics treat each distinct set as one category; then Krippendorff's alpha
    with each of :data:`SET_DISTANCES` (``weights`` in the result names the distance). Rows without
    a set are dropped (as :func:`~failcodes.stats.agreement.agreements` does); ``clusters``
    gives one id per row for the cluster bootstrap (pooled dimensions).
    """
    cats = set_categories(sets)
    if not cats:
        raise StatisticsError("no unit has a code set")
    values = encode(sets, cats)
    index = np.arange(len(cats), dtype=np.float64)
    ids = None if clusters is None else np.asarray(clusters)

    def run(stats: Sequence[str], weights: FloatArray | None) -> list[AgreementResult]:
        return agreements(
            values,
            stats,
            weights=weights,
            categories=index,
            n_bootstrap=n_bootstrap,
            seed=seed,
            confidence=confidence,
            clusters=ids,
        )

    out = run(exact, None) if exact else []
    for name in SET_DISTANCES:
        [alpha] = run(["krippendorff"], 1.0 - distance_matrix(cats, name))
        out.append(alpha.model_copy(update={"weights": name}))
    return out
