"""Comparing systems on the same units (seed 001, appendix A.9).

- Cochran's Q over k systems' paired binary outcomes (Cochran 1950), chi-square with k-1 df.
- Pairwise McNemar tests: exact two-sided binomial on the discordant pairs when there are
  fewer than ``exact_below`` (default 25) of them, else the continuity-corrected chi-square
  (Edwards 1948); Holm-corrected across pairs.
- Paired tests for differences in F1 and recall between systems against the same truth:
  approximate randomisation (swap the two systems' predictions per unit; Noreen 1989) or a
  paired bootstrap over units with the shifted-null p-value; Holm-corrected across pairs.
  Both are vectorised: per-unit TP/FP/FN columns times a (resamples x units) matrix.

With ``clusters`` (a question id per unit) every test takes the question as its unit: the
bootstrap resamples and the permutation swaps whole questions; Cochran's Q and McNemar use
question totals, under swapping the systems within whole questions (at k = 2
``(sum_k d_k)^2 / sum_k d_k^2``, d_k = b_k - c_k: Obuchowski 1998's statistic times K/(K-1),
Yang et al. 2010). With one unit per question each equals its unclustered form exactly.

Arrays in, :class:`~failcodes.stats.tests.TestResult` out. Units with a missing outcome for
any system are dropped (the tests are paired).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Literal

import numpy as np
import numpy.typing as npt

from failcodes.errors import StatisticsError
from failcodes.stats.arrays import float_array
from failcodes.stats.bootstrap import (
    DEFAULT_CHUNK,
    FloatArray,
    check_confidence,
    cluster_sums,
    make_rng,
    percentile_interval,
    resampling_weights,
)
from failcodes.stats.tests import TestResult, with_holm

Metric = Literal["f1", "recall"]
Method = Literal["permutation", "bootstrap"]


def _binary_matrix(
    outcomes: npt.ArrayLike, names: Sequence[str] | None, what: str = "outcomes"
) -> tuple[FloatArray, list[str]]:
    data = float_array(outcomes, what, ndim=2, expect="0/1 values", shape="2-D (units x systems)")
    k = data.shape[1]
    labels = list(names) if names is not None else [f"system_{j + 1}" for j in range(k)]
    if len(labels) != k:
        raise StatisticsError(f"got {len(labels)} system names for {k} columns")
    if len(set(labels)) != k:
        raise StatisticsError(f"system names must be unique, got {labels}")
    present = ~np.isnan(data)
    bad = present & (data != 0) & (data != 1)
    if bad.any():
        unit, col = np.argwhere(bad)[0]
        raise StatisticsError(
            f"{what} must be 0 or 1 (blank = missing); unit {unit}, system '{labels[col]}' "
            f"has {data[unit, col]}"
        )
    return data, labels


#: Question ids per unit (the bootstrap, permutation and McNemar/Cochran clusters), or None.
Clusters = npt.ArrayLike | None


def _complete(data: FloatArray) -> npt.NDArray[np.bool_]:
    """The units with an outcome for every column (the paired units)."""
    return np.asarray(~np.isnan(data).any(axis=1), dtype=np.bool_)


def _units_of(kept: FloatArray, clusters: Clusters, keep: npt.NDArray[np.bool_]) -> FloatArray:
    """The kept units' columns summed per question (the units themselves without ``clusters``)."""
    if clusters is None:
        return kept
    ids = np.asarray(clusters)
    if ids.shape != keep.shape:
        raise StatisticsError(f"got {ids.size} question ids for {keep.size} units")
    return cluster_sums(kept, ids[keep])


def _sign_flip_p(d: FloatArray) -> float:
    """Two-sided exact p of ``sum d`` when each question's sign is flipped with probability 1/2.

    The exact McNemar test swaps the two systems per unit (every d = +-1: the binomial); on
    question totals d_k it swaps them per question: the questions with |d_k| = v add
    v (2 B - m), B ~ Binomial(m, 1/2) for m such questions, and the values v are convolved.
    """
    from scipy import stats as sps  # lazy (see cochrans_q)

    steps, counts = np.unique(np.abs(d[d != 0]).astype(np.int64), return_counts=True)
    pmf: FloatArray = np.ones(1)
    for v, m in zip(steps.tolist(), counts.tolist(), strict=True):
        part = np.zeros(2 * v * m + 1)
        part[:: 2 * v] = sps.binom.pmf(np.arange(m + 1), m, 0.5)
        pmf = np.convolve(pmf, part).astype(np.float64)
    support = np.arange(pmf.size) - (pmf.size - 1) // 2
    return float(min(1.0, pmf[np.abs(support) >= abs(float(d.sum())) - 1e-9].sum()))


def cochrans_q(
    outcomes: npt.ArrayLike, names: Sequence[str] | None = None, *, clusters: Clusters = None
) -> TestResult:
    """Cochran's Q test that k >= 2 systems have the same success rate on paired units.

    ``(k-1) (k sum_j C_j^2 - T^2) / (k sum_q sum_j x_qj^2 - sum_q R_q^2)`` over units q
    (Cochran 1950; x binary, so sum_j x_qj^2 = R_q). With ``clusters``, over questions: x_qj is
    system j's successes in question q, the permutation variance of swapping systems within
    whole questions; at k = 2 it is ``(sum_q d_q)^2 / sum_q d_q^2`` (module docstring).
    """
    data, labels = _binary_matrix(outcomes, names)
    k = data.shape[1]
    if k < 2:
        raise StatisticsError(f"Cochran's Q needs at least 2 systems, got {k}")
    keep = _complete(data)
    n = int(keep.sum())
    x = _units_of(data[keep], clusters, keep)
    col = x.sum(axis=0)
    row = x.sum(axis=1)
    total = float(col.sum())
    denom = k * float((x**2).sum()) - float((row**2).sum())
    if n == 0 or denom <= 0:
        return TestResult(
            test="cochran_q",
            comparison="all",
            statistic=None,
            df=k - 1,
            p_value=None,
            n=n,
            undefined_reason=(
                "no unit has mixed outcomes across systems"
                if clusters is None
                else "no question's totals differ across systems"
            )
            + ": Q is 0/0"
            if n
            else "no unit has an outcome for every system",
        )
    from scipy import stats as sps  # lazy: scipy.stats costs ~0.3 s at start-up

    q = (k - 1) * (k * float((col**2).sum()) - total**2) / denom
    return TestResult(
        test="cochran_q",
        comparison=" vs ".join(labels) if k == 2 else "all",
        statistic=q,
        df=k - 1,
        p_value=float(sps.chi2.sf(q, k - 1)),
        n=n,
    )


def mcnemar(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    label: str = "a vs b",
    exact_below: int = 25,
    clusters: Clusters = None,
) -> TestResult:
    """McNemar's test on paired binary outcomes of two systems.

    Exact binomial (two-sided, ``statistic`` = min(b, c)) when the discordant pairs number
    fewer than ``exact_below``; otherwise chi-square with continuity correction
    ``(|b - c| - 1)^2 / (b + c)``. ``effect`` is the difference in success rates
    ``(b - c) / n``. With ``clusters``, swapped per question: exact sign flips of the
    questions' d_k = b_k - c_k, or ``(|sum d_k| - 1)^2 / sum d_k^2`` (module docstring).
    """
    x = np.column_stack([np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)])
    data, _ = _binary_matrix(x, ["a", "b"])
    keep = _complete(data)
    pairs = data[keep]
    n = pairs.shape[0]
    n10 = int(((pairs[:, 0] == 1) & (pairs[:, 1] == 0)).sum())
    n01 = int(((pairs[:, 0] == 0) & (pairs[:, 1] == 1)).sum())
    disc = n10 + n01
    effect = (n10 - n01) / n if n else None
    d = _units_of(data[keep, :1] - data[keep, 1:], clusters, keep)[:, 0]
    from scipy import stats as sps  # lazy (see cochrans_q)

    if disc < exact_below or not d.any():  # (every question's b_k = c_k: p 1)
        p = _sign_flip_p(d)
        return TestResult(
            test="mcnemar_exact",
            comparison=label,
            statistic=float(min(n10, n01)),
            p_value=p,
            effect=effect,
            effect_name="difference_in_rates",
            n=n,
        )
    chi2 = (abs(n10 - n01) - 1.0) ** 2 / float((d**2).sum())
    return TestResult(
        test="mcnemar_chi2",
        comparison=label,
        statistic=chi2,
        df=1,
        p_value=float(sps.chi2.sf(chi2, 1)),
        effect=effect,
        effect_name="difference_in_rates",
        n=n,
    )


def pairwise_mcnemar(
    outcomes: npt.ArrayLike,
    names: Sequence[str] | None = None,
    *,
    exact_below: int = 25,
    clusters: Clusters = None,
) -> list[TestResult]:
    """McNemar for every pair of systems (same complete units), Holm-adjusted."""
    data, labels = _binary_matrix(outcomes, names)
    keep = _complete(data)
    x = data[keep]
    ids = None if clusters is None else np.asarray(clusters)[keep]
    results = [
        mcnemar(
            x[:, i],
            x[:, j],
            label=f"{labels[i]} vs {labels[j]}",
            exact_below=exact_below,
            clusters=ids,
        )
        for i, j in combinations(range(len(labels)), 2)
    ]
    return with_holm(results)


def compare_systems(
    outcomes: npt.ArrayLike,
    names: Sequence[str] | None = None,
    *,
    exact_below: int = 25,
    clusters: Clusters = None,
) -> list[TestResult]:
    """Cochran's Q over all systems followed by Holm-corrected pairwise McNemar tests."""
    return [
        cochrans_q(outcomes, names, clusters=clusters),
        *pairwise_mcnemar(outcomes, names, exact_below=exact_below, clusters=clusters),
    ]


def _metric(tp: FloatArray, fp: FloatArray, fn: FloatArray, metric: Metric) -> FloatArray:
    num = 2.0 * tp if metric == "f1" else tp
    den = 2.0 * tp + fp + fn if metric == "f1" else tp + fn
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def paired_metric_tests(
    truth: npt.ArrayLike,
    predictions: npt.ArrayLike,
    names: Sequence[str] | None = None,
    *,
    metric: Metric = "f1",
    method: Method = "permutation",
    n_resamples: int = 10_000,
    seed: int | np.random.Generator | None = None,
    confidence: float = 0.95,
    chunk: int = DEFAULT_CHUNK,
    clusters: Clusters = None,
) -> list[TestResult]:
    """Test the difference in F1 or recall for every pair of systems, Holm-adjusted.

    ``truth`` is the binary reference per unit (1 = positive, e.g. the sentence has an
    error), ``predictions`` (units x systems) each system's binary call. ``effect`` is
    ``metric(A) - metric(B)`` in the comparison "A vs B". The permutation p-value is
    ``(1 + #{|d*| >= |d|}) / (R + 1)``; the bootstrap one ``(1 + #{|d* - d| >= |d|}) / (R + 1)``
    with a percentile interval for the difference. With ``clusters`` (a question id per unit)
    the units swapped or resampled are the questions.
    """
    if metric not in ("f1", "recall"):
        raise StatisticsError(f"unknown metric {metric!r}; choose f1 or recall")
    if method not in ("permutation", "bootstrap"):
        raise StatisticsError(f"unknown method {method!r}; choose permutation or bootstrap")
    if n_resamples < 1:
        raise StatisticsError(f"number of resamples must be >= 1, got {n_resamples}")
    check_confidence(confidence)
    pred, labels = _binary_matrix(predictions, names, "predictions")
    y = np.asarray(truth, dtype=np.float64)
    if y.ndim != 1 or y.size != pred.shape[0]:
        raise StatisticsError(
            f"truth must be 1-D with one value per unit ({pred.shape[0]}), got shape {y.shape}"
        )
    joined, _ = _binary_matrix(np.column_stack([y, pred]), ["truth", *labels], "truth")
    keep = _complete(joined)
    joined = joined[keep]
    y, pred = joined[:, 0], joined[:, 1:]
    n, k = pred.shape
    if k < 2:
        raise StatisticsError(f"comparing systems needs at least 2 systems, got {k}")
    tp = pred * y[:, None]
    fp = pred * (1.0 - y[:, None])
    fn = (1.0 - pred) * y[:, None]
    observed = _metric(tp.sum(0), fp.sum(0), fn.sum(0), metric)
    pairs = list(combinations(range(k), 2))
    rng = make_rng(seed)
    if n == 0:
        raise StatisticsError("no unit has a truth value and a prediction from every system")
    if method == "permutation":
        # swapping unit i between A and B moves (tp_B - tp_A)_i from A to B, same for fp, fn
        cols = _units_of(
            np.hstack(
                [
                    np.column_stack([tp[:, j] - tp[:, i], fp[:, j] - fp[:, i], fn[:, j] - fn[:, i]])
                    for i, j in pairs
                ]
            ),
            clusters,
            keep,
        )
        shifts = np.empty((n_resamples, cols.shape[1]))
        done = 0
        while done < n_resamples:
            block = min(chunk, n_resamples - done)
            swap = (rng.random((block, cols.shape[0])) < 0.5).astype(np.float64)
            shifts[done : done + block] = swap @ cols
            done += block
    else:
        cols = _units_of(np.hstack([tp, fp, fn]), clusters, keep)
        sums = np.empty((n_resamples, cols.shape[1]))
        done = 0
        for w in resampling_weights(cols.shape[0], n_resamples, rng, chunk=chunk):
            sums[done : done + w.shape[0]] = w @ cols
            done += w.shape[0]
        boot = _metric(sums[:, :k], sums[:, k : 2 * k], sums[:, 2 * k :], metric)
    results = []
    tot = np.column_stack([tp.sum(0), fp.sum(0), fn.sum(0)])
    for p_idx, (i, j) in enumerate(pairs):
        label = f"{labels[i]} vs {labels[j]}"
        test = f"{method}_{metric}"
        d = float(observed[i] - observed[j])
        if not np.isfinite(d):
            results.append(
                TestResult(
                    test=test,
                    comparison=label,
                    statistic=None,
                    p_value=None,
                    effect_name=f"{metric}_difference",
                    n=n,
                    undefined_reason=f"{metric} is undefined for one system (no positives "
                    "and no predicted positives)"
                    if metric == "f1"
                    else "recall is undefined: no positive units",
                )
            )
            continue
        low = high = None
        if method == "permutation":
            s = shifts[:, 3 * p_idx : 3 * p_idx + 3]
            a = _metric(tot[i, 0] + s[:, 0], tot[i, 1] + s[:, 1], tot[i, 2] + s[:, 2], metric)
            b = _metric(tot[j, 0] - s[:, 0], tot[j, 1] - s[:, 1], tot[j, 2] - s[:, 2], metric)
            null = a - b
            null = null[np.isfinite(null)]
            extreme = int((np.abs(null) >= abs(d) - 1e-12).sum())
        else:
            diffs = boot[:, i] - boot[:, j]
            diffs = diffs[np.isfinite(diffs)]
            extreme = int((np.abs(diffs - d) >= abs(d) - 1e-12).sum())
            low, high, _ = percentile_interval(diffs, confidence)
            null = diffs
        results.append(
            TestResult(
                test=test,
                comparison=label,
                statistic=d,
                p_value=(1.0 + extreme) / (null.size + 1.0),
                effect=d,
                effect_name=f"{metric}_difference",
                ci_low=low,
                ci_high=high,
                n=n,
            )
        )
    return with_holm(results)


def compare_against_truth(
    truth: npt.ArrayLike,
    predictions: npt.ArrayLike,
    names: Sequence[str] | None = None,
    *,
    metrics: Sequence[Metric] = ("f1", "recall"),
    method: Method = "permutation",
    n_resamples: int = 10_000,
    seed: int | np.random.Generator | None = None,
    exact_below: int = 25,
    clusters: Clusters = None,
) -> list[TestResult]:
    """Seed 001, appendix A.9: which systems detect the clinician-labelled errors.

    Cochran's Q and Holm-corrected pairwise McNemar over the units whose ``truth`` is 1 (each
    system's detected / missed, i.e. recall), then the paired ``metrics`` difference tests
    over all units (:func:`paired_metric_tests`, Holm within each metric).
    """
    y = np.asarray(truth, dtype=np.float64)
    pred = np.asarray(predictions, dtype=np.float64)
    positive = y == 1
    ids = None if clusters is None else np.asarray(clusters)
    results = compare_systems(
        pred[positive],
        names,
        exact_below=exact_below,
        clusters=None if ids is None else ids[positive],
    )
    for metric in metrics:
        results += paired_metric_tests(
            y,
            pred,
            names,
            metric=metric,
            method=method,
            n_resamples=n_resamples,
            seed=seed,
            clusters=ids,
        )
    return results
