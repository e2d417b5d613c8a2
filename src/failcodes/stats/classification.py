"""Comparing systems on the same units (seed 001, appendix A.9).

Cochran's Q over k systems' paired binary outcomes, pairwise McNemar (mid-p below
``exact_below`` discordant pairs, else chi-square without correction; ``mcnemar="exact"``: the
classic forms) and paired F1/recall differences (approximate randomisation or paired
bootstrap), Holm-corrected across pairs; with ``clusters`` every test takes the question as
its unit. The forms, their sources and measured sizes: docs/statistics.md ("Comparing systems").

Arrays in, :class:`~failcodes.stats.tests.TestResult` out. Units with a missing outcome for
any system are dropped (the tests are paired).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import combinations, permutations
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
#: McNemar's forms: the mid-p and the uncorrected chi-square, or the exact and the corrected.
McNemarForm = Literal["midp", "exact"]


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


def _sign_flip_p(d: FloatArray, *, mid: bool = True) -> float:
    """Two-sided mid-p of ``sum d`` when each question's sign is flipped with probability 1/2.

    ``P(|S| > |s|) + P(|S| = |s|) / 2`` (1 when every d is 0; not ``mid``: the exact
    ``P(|S| >= |s|)``). Per unit (every d = +-1) S is the binomial of the McNemar mid-p test
    (Fagerland et al. 2013: the exact p minus the probability of the observed b where b != c;
    where b = c, ``1 - P(X = b) / 2``, their supplement's rule and R contingencytables'
    ``McNemar_midP_test_paired_2x2``: 0.75 at b = c = 1, 0.84375 at b = c = 3, not
    2 P(X <= b) - P(X = b) = 1); on question totals d_k the systems are swapped per question:
    the questions with |d_k| = v add v (2 B - m), B ~ Binomial(m, 1/2) for m such
    questions, and the values v are convolved. The binomial is exact integers over 2^m (scipy's
    pmf read 0.5000000000000002 for 1 of 2, and b = c = 1 a mid-p of 0.7500000000000001).
    """
    if not d.any():  # no discordant question: nothing to test
        return 1.0
    steps, counts = np.unique(np.abs(d[d != 0]).astype(np.int64), return_counts=True)
    pmf: FloatArray = np.ones(1)
    for v, m in zip(steps.tolist(), counts.tolist(), strict=True):
        part = np.zeros(2 * v * m + 1)
        part[:: 2 * v] = [math.comb(m, i) / 2**m for i in range(m + 1)]
        pmf = np.convolve(pmf, part).astype(np.float64)
    gap = np.abs(np.arange(pmf.size) - (pmf.size - 1) // 2) - abs(float(d.sum()))
    return float(min(1.0, pmf[gap > 1e-9].sum() + pmf[np.abs(gap) <= 1e-9].sum() / (1 + mid)))


#: Cochran's Q's chi-square is trusted from this many cells of units with mixed outcomes (units
#: times systems; Tate & Brown 1970, the rule R's CVST ``cochranq.test`` applies, below which
#: it permutes): 4 such units of 3 systems read p 0.779 where the exact p is 1.
TATE_BROWN_CELLS = 24
#: Arrangements of one unit's outcomes, and states of the column totals, the exact p enumerates.
_EXACT_LIMIT = 200_000


def _q_exact_p(x: FloatArray) -> float | None:
    """Cochran's Q's exact p: each unit's outcomes permuted among the systems (Patil 1975).

    Q grows with ``sum_j C_j^2`` given the units' row totals, so the p is the probability that
    the column totals' sum of squares reaches the observed one when each unit's (or
    question's) values are assigned to the systems in a uniformly random order. Units whose
    values are alike shift every arrangement alike and are left out. The column totals are
    enumerated unit by unit as sorted tuples (the arrangements are exchangeable). None when
    the enumeration would pass :data:`_EXACT_LIMIT`.
    """
    rows = [tuple(int(v) for v in r) for r in np.rint(x).tolist() if len(set(r)) > 1]
    k = x.shape[1]
    if math.factorial(k) > _EXACT_LIMIT:  # a unit's orders are listed: 20 systems, 20! of them
        return None
    observed = sum(c * c for c in np.sum(rows, axis=0).tolist()) if rows else 0
    states: dict[tuple[int, ...], float] = {(0,) * k: 1.0}
    for row in rows:
        count = math.factorial(k)
        for m in Counter(row).values():
            count //= math.factorial(m)
        if count * len(states) > _EXACT_LIMIT:
            return None
        ways = set(permutations(row))
        step: dict[tuple[int, ...], float] = {}
        for state, prob in states.items():
            for way in ways:
                key = tuple(sorted(c + v for c, v in zip(state, way, strict=True)))
                step[key] = step.get(key, 0.0) + prob / len(ways)
        states = step
    return min(1.0, sum(p for s, p in states.items() if sum(c * c for c in s) >= observed))


def _q_small_sample(x: FloatArray, clusters: Clusters) -> str | None:
    """Cochran's Q's note when too few units have mixed outcomes for its chi-square (k >= 3).

    With two systems compare names the McNemar row's small-sample p instead.
    """
    k = x.shape[1]
    mixed = int(sum(len(set(r)) > 1 for r in x.tolist()))
    if k < 3 or not mixed or mixed * k >= TATE_BROWN_CELLS:
        return None
    what = "unit(s)" if clusters is None else "question(s)"
    exact = _q_exact_p(x)
    return (
        f"few units for the chi-square: {mixed} {what} with mixed outcomes x {k} systems = "
        f"{mixed * k} < {TATE_BROWN_CELLS} (Tate & Brown 1970), its p may be off; "
        + (
            f"exact permutation p {exact:.4g}"
            if exact is not None
            else "read the McNemar rows (small-sample forms)"
        )
    )


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
    q = p = reason = None
    if not n:
        reason = "no unit has an outcome for every system"
    elif denom <= 0:
        reason = (
            "no unit has mixed outcomes across systems"
            if clusters is None
            else "no question's totals differ across systems"
        ) + ": Q is 0/0"
    else:
        from scipy import stats as sps  # lazy: scipy.stats costs ~0.3 s at start-up

        q = (k - 1) * (k * float((col**2).sum()) - total**2) / denom
        p = float(sps.chi2.sf(q, k - 1))
    return TestResult(
        test="cochran_q",
        comparison=" vs ".join(labels) if k == 2 else "all",  # defined or not: one rule
        statistic=q,
        df=k - 1,
        p_value=p,
        n=n,
        undefined_reason=reason,
        note=None if p is None else _q_small_sample(x, clusters),
    )


def mcnemar(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    label: str = "a vs b",
    exact_below: int = 25,
    clusters: Clusters = None,
    form: McNemarForm = "midp",
) -> TestResult:
    """McNemar's test on paired binary outcomes of two systems.

    Mid-p binomial (two-sided, ``statistic`` = min(b, c)) when the discordant pairs (with
    ``clusters``, the questions whose d_k is not 0) number fewer than ``exact_below``;
    otherwise the chi-square ``(b - c)^2 / (b + c)`` (no continuity correction; module
    docstring). ``effect`` is the difference in success rates ``(b - c) / n``. With
    ``clusters``, swapped per question: the mid-p of sign flips of the questions' d_k = b_k -
    c_k, or ``(sum d_k)^2 / sum d_k^2``. ``form="exact"``: the exact binomial (sign flips) and
    ``(|b - c| - 1)^2 / (b + c)``, tests ``mcnemar_exact`` and ``mcnemar_chi2_corrected``
    (statsmodels ``mcnemar(exact=True)`` / ``(correction=True)``).
    """
    if form not in ("midp", "exact"):
        raise StatisticsError(f"unknown McNemar form {form!r}; choose midp or exact")
    exact = form == "exact"
    x = np.column_stack([np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)])
    data, _ = _binary_matrix(x, ["a", "b"])
    keep = _complete(data)
    pairs = data[keep]
    n = pairs.shape[0]
    n10 = int(((pairs[:, 0] == 1) & (pairs[:, 1] == 0)).sum())
    n01 = int(((pairs[:, 0] == 0) & (pairs[:, 1] == 1)).sum())
    if not n:  # a p of 1 on no unit read as "no difference" and entered Holm's family
        return TestResult(
            test=f"mcnemar_{form}",
            comparison=label,
            statistic=None,
            p_value=None,
            effect_name="difference_in_rates",
            n=0,
            undefined_reason="no unit has an outcome for both systems",
        )
    effect = (n10 - n01) / n
    d = _units_of(data[keep, :1] - data[keep, 1:], clusters, keep)[:, 0]
    from scipy import stats as sps  # lazy (see cochrans_q)

    # the test's independent terms are its discordant units, or questions when clustered: 40
    # discordant sentences in 4 questions (d_k = 10 each) read chi-square p 0.0455 where the
    # sign flips of 4 questions give the mid-p 0.0625
    if int(np.count_nonzero(d)) < exact_below or not d.any():  # (every b_k = c_k: p 1)
        test, stat, df = f"mcnemar_{form}", float(min(n10, n01)), None
        p = _sign_flip_p(d, mid=not exact)
    else:
        test = "mcnemar_chi2_corrected" if exact else "mcnemar_chi2"
        stat, df = (abs(n10 - n01) - exact) ** 2 / float((d**2).sum()), 1
        p = float(sps.chi2.sf(stat, 1))
    return TestResult(
        test=test,
        comparison=label,
        statistic=stat,
        df=df,
        p_value=p,
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
    form: McNemarForm = "midp",
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
            form=form,
        )
        for i, j in combinations(range(len(labels)), 2)
    ]
    for k, (i, j) in enumerate(combinations(range(len(labels)), 2)):
        both = int(_complete(data[:, [i, j]]).sum())
        if not results[k].n and both:  # 'no unit has an outcome for both' of a pair with 4
            results[k] = results[k].model_copy(
                update={
                    "undefined_reason": f"no unit has an outcome for every system (the pairs "
                    f"are tested on the units all {len(labels)} have; this pair has {both}: "
                    f"--systems {labels[i]},{labels[j]} tests it on them)"
                }
            )
    return with_holm(results)


def compare_systems(
    outcomes: npt.ArrayLike,
    names: Sequence[str] | None = None,
    *,
    exact_below: int = 25,
    clusters: Clusters = None,
    mcnemar: McNemarForm = "midp",
) -> list[TestResult]:
    """Cochran's Q over all systems followed by Holm-corrected pairwise McNemar tests."""
    return [
        cochrans_q(outcomes, names, clusters=clusters),
        *pairwise_mcnemar(
            outcomes, names, exact_below=exact_below, clusters=clusters, form=mcnemar
        ),
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
        d = float(observed[i] - observed[j])
        reason = low = high = p = None
        # no positive unit: recall is 0/0, and F1 0 (2TP = 0) or 0/0, undefined in metrics
        # (with one, 2TP + FP + FN > 0); a difference of 0, p 1, read as a test on them
        if not y.any():
            reason = f"{metric} is undefined: no positive units" + (
                " (recall is 0/0, as metrics shows it)" if metric == "f1" else ""
            )
        elif method == "permutation":
            s = shifts[:, 3 * p_idx : 3 * p_idx + 3]
            a = _metric(tot[i, 0] + s[:, 0], tot[i, 1] + s[:, 1], tot[i, 2] + s[:, 2], metric)
            b = _metric(tot[j, 0] - s[:, 0], tot[j, 1] - s[:, 1], tot[j, 2] - s[:, 2], metric)
            null = a - b
            null = null[np.isfinite(null)]
            p = (1.0 + int((np.abs(null) >= abs(d) - 1e-12).sum())) / (null.size + 1.0)
        else:
            diffs = boot[:, i] - boot[:, j]
            diffs = diffs[np.isfinite(diffs)]
            low, high, _ = percentile_interval(diffs, confidence)
            p = (1.0 + int((np.abs(diffs - d) >= abs(d) - 1e-12).sum())) / (diffs.size + 1.0)
        value = None if reason else d
        results.append(
            TestResult(
                test=f"{method}_{metric}",
                comparison=f"{labels[i]} vs {labels[j]}",
                statistic=value,
                p_value=p,
                effect=value,
                effect_name=f"{metric}_difference",
                ci_low=low,
                ci_high=high,
                n=n,
                undefined_reason=reason,
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
    mcnemar: McNemarForm = "midp",
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
        mcnemar=mcnemar,
    )
    if not positive.any():  # (not "no unit has an outcome": the units are not positive)
        why = (
            "no positive unit (truth 1): Cochran's Q and McNemar compare the systems' hits "
            "on the positive units"
        )
        results = [r.model_copy(update={"undefined_reason": why}) for r in results]
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
