"""Prediction-powered inference (PPI, PPI++) for a human code's share: arrays in, estimates out.

The judge codes every unit; humans code a random sample of them. For one binary code
(1 = the unit carries it) let ``y`` be the human codes of the ``n`` reviewed units, ``yhat`` the
judge's codes of the same units and ``yhat_unlabeled`` the judge's codes of the ``N`` units
nobody reviewed. The prediction-powered estimate of the share of units carrying the code is

    theta = lam * mean(yhat_unlabeled) + mean(y - lam * yhat)

with variance ``lam**2 * var(yhat_unlabeled) / N + var(y - lam * yhat) / n`` and a Wald
interval (:func:`ppi_mean`). ``lam = 1`` is PPI (Angelopoulos, Bates, Fannjiang, Jordan &
Zrnic, *Science* 382, 2023); ``lam = 0`` is the classical human-only estimate; ``lam=None``
tunes ``lam`` to minimise the variance, clipped to [0, 1] (PPI++: Angelopoulos, Duchi & Zrnic
2023, arXiv:2311.01453, eq. for the mean), as ``ppi_py.ppi_mean_ci`` does:

    lam = cov(y, yhat) / ((1 + n / N) * var(yhat over all n + N units))

Variances follow ``ppi_py`` 0.2.3 (population variances, ``ddof=0``; the tuning variance of
``yhat`` over all units with ``ddof=1``), so the numbers match the reference implementation.

**The interval failcodes reports** (:func:`share_estimates`) is not Wald's (its variance rests
on the few reviewed units where human and judge disagree): for 0/1 codes PPI++ is (up to
``n / N``) ``sum W_j a_j`` over the judge's codes ``j``, so each part gets Clopper-Pearson's
exact interval and the parts combine by MOVER (:func:`mover_share`, :func:`corrected_interval`;
the human-only share likewise, :func:`human_interval`). Why, and the coverage measured over
the design grid (``bench/bench_ppi_coverage.py``): docs/review.md, "Which interval". A cell with
fewer than :data:`MIN_REVIEWED` reviewed units gets no estimate at all.

**Stratified plans.** When the review sample was drawn per stratum (system x judge's code),
each stratum gets its own estimate and its own tuned ``lam`` (the overall variance is a sum
over strata, so tuning each stratum alone minimises it; Fisch et al. 2024, "Stratified
prediction-powered inference"); the share is ``sum_h W_h theta_h`` with ``W_h`` the stratum's
share of units and variance ``sum_h W_h**2 var_h``. Strata drawn by the judge's code make the
"human-only" estimate a judge-stratified one (its weights come from the judge's codes):
:func:`effective_n` says what the stratification is worth.

The estimand is the share in the population the units come from (the judged units are a
sample of it, as in PPI).

Everything is computed from sums (:class:`Moments`), so one call can estimate any number of
codes, cells or simulated replicates at once by broadcasting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field

from failcodes.contract import FrozenModel
from failcodes.errors import StatisticsError

FloatArray = npt.NDArray[np.float64]
#: An interval of ``x`` positives in ``n`` at a confidence level: ``(low, high)`` arrays.
PartInterval = Callable[[npt.ArrayLike, npt.ArrayLike, float], tuple[FloatArray, FloatArray]]

#: :func:`ppi_mean` notes fewer labelled units than this where the values are not 0/1 codes.
SMALL_STRATUM = 10
#: A cell with fewer reviewed units than this is too small to estimate: no interval is printed.
MIN_REVIEWED = 10


def _arr(values: npt.ArrayLike) -> FloatArray:
    return np.asarray(values, dtype=np.float64)


def _same_index(y: object, yhat: object) -> None:
    """Refuse two pandas Series whose indexes differ: the codes are paired by position.

    ``ppi_mean(df.y, other.yhat)`` with ``other`` sorted another way paired each human code
    with another unit's judge code at no word: where the judge agreed on every unit, a
    standard error 2.2 times the aligned one (tests/test_s27_t27api.py).
    """
    y_index, yhat_index = getattr(y, "index", None), getattr(yhat, "index", None)
    if not hasattr(y_index, "equals") or not hasattr(yhat_index, "equals"):
        return  # not two Series (a list's .index is a method): no pandas import for it
    assert y_index is not None and yhat_index is not None
    if y_index.equals(yhat_index):
        return
    at = next(
        (i for i, (a, b) in enumerate(zip(y_index, yhat_index, strict=False)) if a != b),
        min(len(y_index), len(yhat_index)),
    )
    shown = [repr(ix[at]) if at < len(ix) else "(none)" for ix in (y_index, yhat_index)]
    raise StatisticsError(
        f"y and yhat are pandas Series whose indexes differ (position {at}: {shown[0]} in "
        f"y, {shown[1]} in yhat): their codes are paired by position; align them first "
        "(yhat.reindex(y.index)) or give arrays (.to_numpy())"
    )


@dataclass(frozen=True)
class Moments:
    """Sums over reviewed (``n``) and unreviewed (``n_unlabeled``) units; any array shape.

    Every field broadcasts: a scalar per field describes one sample, arrays of shape ``S``
    describe ``S`` independent samples (codes, cells, replicates), and strata go on an axis
    that :func:`combine_strata` sums over.
    """

    n: FloatArray
    sum_y: FloatArray
    sum_yhat: FloatArray
    sum_y2: FloatArray
    sum_yhat2: FloatArray
    sum_y_yhat: FloatArray
    n_unlabeled: FloatArray
    sum_u: FloatArray
    sum_u2: FloatArray

    @classmethod
    def from_arrays(
        cls, y: npt.ArrayLike, yhat: npt.ArrayLike, yhat_unlabeled: npt.ArrayLike
    ) -> Moments:
        """Sums of 1-d arrays.

        ``y`` and ``yhat``: human and judge codes of the reviewed units; ``yhat_unlabeled``:
        judge codes of the others.
        """
        _same_index(y, yhat)
        try:
            y_a, yhat_a, u_a = _arr(y), _arr(yhat), _arr(yhat_unlabeled)
        except (TypeError, ValueError) as exc:  # numpy's words ("could not convert string")
            raise StatisticsError(
                f"codes must be numbers (0/1: the code absent/present): {exc}"
            ) from None
        if y_a.ndim != 1 or yhat_a.ndim != 1 or u_a.ndim != 1:
            raise StatisticsError("y, yhat and yhat_unlabeled must be one-dimensional")
        if y_a.shape != yhat_a.shape:
            raise StatisticsError(
                f"y has {y_a.size} values but yhat has {yhat_a.size}: one judge code per "
                "reviewed unit is needed"
            )
        for name, arr in (("y", y_a), ("yhat", yhat_a), ("yhat_unlabeled", u_a)):
            bad = np.flatnonzero(~np.isfinite(arr))
            if bad.size:  # which array and where: "no NaN" left a notebook to search three
                raise StatisticsError(
                    f"codes must be finite numbers (no NaN): {name}[{bad[0]}] is {arr[bad[0]]}"
                    + (f" ({bad.size} such values)" if bad.size > 1 else "")
                    + "; leave a unit without a code out of all three"
                )
        return cls(
            n=_arr(y_a.size),
            sum_y=_arr(y_a.sum()),
            sum_yhat=_arr(yhat_a.sum()),
            sum_y2=_arr((y_a * y_a).sum()),
            sum_yhat2=_arr((yhat_a * yhat_a).sum()),
            sum_y_yhat=_arr((y_a * yhat_a).sum()),
            n_unlabeled=_arr(u_a.size),
            sum_u=_arr(u_a.sum()),
            sum_u2=_arr((u_a * u_a).sum()),
        )


@dataclass(frozen=True)
class Estimates:
    """Point estimates and variances (arrays shaped like the input moments)."""

    estimate: FloatArray
    variance: FloatArray
    lam: FloatArray


def _safe_div(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def tuned_lambda(m: Moments) -> FloatArray:
    """PPI++ power-tuning ``lam`` for the mean, clipped to [0, 1] (0 where undefined)."""
    n, big_n = m.n, m.n_unlabeled
    cov = m.sum_y_yhat / n - (m.sum_y / n) * (m.sum_yhat / n)
    total = n + big_n
    s_all = m.sum_yhat + m.sum_u
    var_all = _safe_div(m.sum_yhat2 + m.sum_u2 - s_all * s_all / total, total - 1)
    ratio = 1 + _safe_div(n, big_n)
    lam = _safe_div(cov, ratio * var_all)
    # without unreviewed units the judge adds nothing: lam = 0 (classical)
    lam = np.where(big_n > 0, lam, 0.0)
    return np.asarray(np.clip(lam, 0.0, 1.0), dtype=np.float64)


def _given_lam(lam: float | npt.ArrayLike) -> FloatArray:
    """A requested ``lam`` as an array, refused outside [0, 1] or NaN (PPI++'s range).

    PPI++ clips its tuned weight to [0, 1] (Angelopoulos, Duchi and Zrnic 2023, "PPI++"):
    0 is the human codes alone, 1 is PPI; a weight past 1 or below 0 gave an estimate and an
    interval as if it were a choice of the method (lam 1.5: 0.45 where lam 1 gives 0.5), and NaN
    gave NaN.
    """
    lam_a = _arr(lam)
    if not np.all((lam_a >= 0.0) & (lam_a <= 1.0)):  # NaN fails both
        raise StatisticsError(
            f"lam must be in [0, 1] (0 = human codes only, 1 = PPI; PPI++ tunes it within "
            f"[0, 1]; None tunes it), got {lam!s}"
        )
    return lam_a


def ppi(m: Moments, lam: float | npt.ArrayLike | None = None) -> Estimates:
    """Prediction-powered mean and its variance; ``lam=None`` tunes it (PPI++)."""
    # a stratum reviewed in full (no unreviewed unit) is a census: its share is known (lam 0)
    if np.any((m.n < 2) & ((m.n < 1) | (m.n_unlabeled > 0))):
        raise StatisticsError("prediction-powered inference needs at least 2 reviewed units")
    lam_a = tuned_lambda(m) if lam is None else np.broadcast_to(_given_lam(lam), np.shape(m.n))
    lam_a = np.where(m.n_unlabeled > 0, lam_a, 0.0)
    n, big_n = m.n, m.n_unlabeled
    mean_y, mean_h = m.sum_y / n, m.sum_yhat / n
    mean_u = _safe_div(m.sum_u, big_n)
    var_y = m.sum_y2 / n - mean_y**2
    var_h = m.sum_yhat2 / n - mean_h**2
    cov = m.sum_y_yhat / n - mean_y * mean_h
    var_u = _safe_div(m.sum_u2, big_n) - mean_u**2
    var_rect = np.maximum(var_y - 2 * lam_a * cov + lam_a**2 * var_h, 0.0)
    estimate = lam_a * mean_u + mean_y - lam_a * mean_h
    variance = lam_a**2 * _safe_div(np.maximum(var_u, 0.0), big_n) + var_rect / n
    return Estimates(
        estimate=np.asarray(estimate, dtype=np.float64),
        variance=np.asarray(variance, dtype=np.float64),
        lam=np.asarray(lam_a, dtype=np.float64),
    )


def classical(m: Moments) -> Estimates:
    """The human-only mean of the reviewed units and its variance (``lam = 0``)."""
    return ppi(m, lam=0.0)


def judge_only(m: Moments) -> Estimates:
    """The judge's mean over all units (reviewed or not) and its binomial-style variance.

    It estimates the human share only if the judge is unbiased; reported as it is.
    """
    total = m.n + m.n_unlabeled
    mean = _safe_div(m.sum_yhat + m.sum_u, total)
    var = np.maximum(_safe_div(m.sum_yhat2 + m.sum_u2, total) - mean**2, 0.0)
    return Estimates(
        estimate=mean, variance=_safe_div(var, total), lam=np.ones_like(mean, dtype=np.float64)
    )


def combine_strata(est: Estimates, weights: npt.ArrayLike, axis: int = -1) -> Estimates:
    """Stratified combination: ``sum_h W_h theta_h`` and ``sum_h W_h**2 var_h`` over ``axis``.

    ``weights`` are the strata's shares of units; they are normalised to sum to 1.
    """
    w = _arr(weights)
    if np.any(w < 0):
        raise StatisticsError("stratum weights must be non-negative")
    w = w / w.sum(axis=axis, keepdims=True)
    return Estimates(
        estimate=np.asarray((w * est.estimate).sum(axis=axis), dtype=np.float64),
        variance=np.asarray((w * w * est.variance).sum(axis=axis), dtype=np.float64),
        lam=np.asarray((w * est.lam).sum(axis=axis), dtype=np.float64),
    )


def cell_counts(m: Moments) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Reviewed units coded 1 by both, by the human only, by the judge only, by neither (0/1)."""
    both = m.sum_y_yhat
    human_only = m.sum_y - both
    judge_only = m.sum_yhat - both
    return both, human_only, judge_only, m.n - both - human_only - judge_only


def clopper_pearson(
    x: npt.ArrayLike, n: npt.ArrayLike, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """Clopper & Pearson's (1934) exact interval of ``x`` positives in ``n``; ``[0, 1]`` at n = 0.

    Bounds are Beta quantiles: ``Beta(x, n - x + 1)`` at ``(1 - confidence) / 2`` and
    ``Beta(x + 1, n - x)`` at ``(1 + confidence) / 2`` (0 at x = 0, 1 at x = n). ``x`` and ``n``
    may be effective (non-integer) counts, as Korn & Graubard (1998) use them for clustered
    samples.
    """
    from scipy.special import betaincinv  # lazy: scipy costs time at start-up

    x_a, n_a = _arr(x), _arr(n)
    tail = (1 - confidence) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        low = betaincinv(np.maximum(x_a, 1e-300), np.maximum(n_a - x_a + 1, 1e-300), tail)
        high = betaincinv(x_a + 1, np.maximum(n_a - x_a, 1e-300), 1 - tail)
    low = np.where((x_a > 0) & (n_a > 0), low, 0.0)
    high = np.where((x_a < n_a) & (n_a > 0), high, 1.0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def mover_share(
    n: npt.ArrayLike,
    x: npt.ArrayLike,
    units: npt.ArrayLike,
    confidence: float,
    axis: int = -1,
    part_interval: PartInterval | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(estimate, low, high)`` of the share ``sum_c W_c a_c`` over the cells on ``axis``.

    Each cell ``c`` holds ``units`` units (``W_c`` its share of them), ``n`` of them reviewed,
    ``x`` of those with the code. Its share ``a_c`` is ``x / n`` (1/2 where nothing in it was
    reviewed) with Clopper-Pearson's exact interval (``[0, 1]`` at n = 0); the cells combine by
    MOVER (Zou & Donner, *Statistics in Medicine* 27, 2008; Newcombe 1998's hybrid for two
    proportions): ``low = M - sqrt(sum_c W_c**2 (a_c - l_c)**2 + B)``, likewise ``high`` with
    ``u_c``, where ``B = z**2 sum_c W_c (a_c - M)**2 / units`` is the variance of the cells'
    shares of units (the units are a sample of the population, as in PPI). One cell: exactly
    Clopper-Pearson's interval.

    Where ``M <= 1/2`` ``low`` is the lower of MOVER's and :func:`beta_sum_lower`'s, and where
    ``M >= 1/2`` ``high`` the higher of MOVER's and 1 - :func:`beta_sum_lower` of the complement
    (``n - x`` of ``n``), so the complement's interval is 1 - this one: MOVER alone is too
    narrow on the skewed side when several cells hold a few positives (or negatives) each.
    The coverage that shows it (exact, tests/test_ppi_coverage._exact_coverage_by_code;
    simulated, ``bench/bench_ppi_coverage.py --grid accuracy``): docs/review.md.
    ``part_interval``: another exact interval per cell (the bench's candidates); Clopper-Pearson's
    by default.
    """
    from scipy.special import ndtri  # lazy: scipy costs time at start-up

    n_a, x_a, u_a = _arr(n), _arr(x), _arr(units)
    total = u_a.sum(axis=axis, keepdims=True)
    w = _safe_div(u_a, total)
    share = np.where(n_a > 0, _safe_div(x_a, n_a), 0.5)
    low_c, high_c = (part_interval or clopper_pearson)(x_a, n_a, confidence)
    est = (w * share).sum(axis=axis, keepdims=True)
    z = ndtri(0.5 + confidence / 2)
    between = z * z * _safe_div((w * (share - est) ** 2).sum(axis=axis), np.squeeze(total, axis))
    down = np.sqrt(((w * (share - low_c)) ** 2).sum(axis=axis) + between)
    up = np.sqrt(((w * (high_c - share)) ** 2).sum(axis=axis) + between)
    mid = np.squeeze(est, axis)
    extra = between / (z * z)
    # the tail toward the nearer end of [0, 1] is the skewed one
    low = np.where(
        mid <= 0.5,
        np.minimum(mid - down, beta_sum_lower(n_a, x_a, w, extra, confidence, axis)),
        mid - down,
    )
    high = np.where(
        mid >= 0.5,
        np.maximum(mid + up, 1 - beta_sum_lower(n_a, n_a - x_a, w, extra, confidence, axis)),
        mid + up,
    )
    return (
        np.asarray(mid, dtype=np.float64),
        np.asarray(np.clip(low, 0.0, 1.0), dtype=np.float64),
        np.asarray(np.clip(high, 0.0, 1.0), dtype=np.float64),
    )


def beta_sum_lower(
    n: FloatArray,
    x: FloatArray,
    w: FloatArray,
    extra: npt.ArrayLike,
    confidence: float,
    axis: int = -1,
) -> FloatArray:
    """Lower bound of ``sum_c w_c a_c``: a quantile of the sum of the cells' Clopper-Pearson Betas.

    Clopper-Pearson's lower bound of ``x`` in ``n`` is the ``(1 - confidence) / 2`` quantile
    of ``Beta(x, n - x + 1)``; for the weighted sum, that quantile of a Beta with the mean and
    variance of ``sum_c w_c Beta(x_c, n_c - x_c + 1)`` (plus ``extra``, the variance of the
    cells' shares of units). The binomial analogue of Fay & Feuer's gamma interval for a
    weighted sum of Poisson counts (*Statistics in Medicine* 16, 1997); one cell: exactly
    Clopper-Pearson's bound.
    """
    from scipy.special import betaincinv  # lazy: scipy costs time at start-up

    size = n + 1
    mean = (w * _safe_div(x, size)).sum(axis=axis)
    var = (w * w * _safe_div(x * (size - x), size * size * (size + 1))).sum(axis=axis) + extra
    k = np.maximum(_safe_div(mean * (1 - mean), var) - 1, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = betaincinv(
            np.maximum(mean * k, 1e-300), np.maximum((1 - mean) * k, 1e-300), (1 - confidence) / 2
        )
    return np.asarray(np.where(var > 0, bound, mean), dtype=np.float64)


def judge_cells(m: Moments, axis: int = -1) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Each stratum split by the judge's (0/1) code: ``(n, x, units)`` of its two parts.

    On ``axis`` the strata's judge-1 parts come first, then their judge-0 parts: reviewed
    units, reviewed units the human gave the code, and all units (reviewed or not) of each part.
    """
    both, human_only, judge_only_n, _ = cell_counts(m)
    n1 = both + judge_only_n
    return (
        np.concatenate([n1, m.n - n1], axis=axis),
        np.concatenate([both, human_only], axis=axis),
        np.concatenate([n1 + m.sum_u, m.n - n1 + m.n_unlabeled - m.sum_u], axis=axis),
    )


def human_interval(
    m: Moments, confidence: float, axis: int = -1, scale: npt.ArrayLike = 1.0
) -> tuple[FloatArray, FloatArray]:
    """The human share's interval: :func:`mover_share` over the plan's strata.

    ``scale``: each stratum's reviewed units as a share of its reviewed rows (Kish's effective
    sample size where rows repeat units; 1 otherwise).
    """
    s = _arr(scale)
    _, low, high = mover_share(m.n * s, m.sum_y * s, m.n + m.n_unlabeled, confidence, axis)
    return low, high


def corrected_interval(
    m: Moments,
    per_stratum: Estimates,
    confidence: float,
    axis: int = -1,
    scale: npt.ArrayLike = 1.0,
) -> tuple[FloatArray, FloatArray]:
    """The corrected share's interval as reported.

    Within each stratum the units are split by the judge's code (post-stratification: the
    judge's share of units is known from every unit, the human share within each part from the
    reviewed ones; for 0/1 codes this is the regression estimator PPI++ approximates), and
    :func:`mover_share` combines the parts. Given the judge's codes, the human codes within a
    part are a binomial sample of it, so each part's Clopper-Pearson interval holds whatever
    few disagreements the review drew. Widened, where needed, to hold the PPI++ point estimate.
    ``scale``: as :func:`human_interval`'s, one per part of :func:`judge_cells`.
    """
    n, x, units = judge_cells(m, axis)
    s = _arr(scale)
    _, low, high = mover_share(n * s, x * s, units, confidence, axis)
    weights = m.n + m.n_unlabeled
    est = np.clip(combine_strata(per_stratum, weights, axis=axis).estimate, 0.0, 1.0)
    return np.minimum(low, est), np.maximum(high, est)


def post_stratified(m: Moments, axis: int = -1) -> FloatArray:
    """The corrected share as reported: ``sum_c W_c a_c`` over :func:`judge_cells`' parts.

    ``W_c`` is a part's share of all units (reviewed or not; the judge coded every unit, so it
    is known), ``a_c`` the human share of its reviewed units: the centre :func:`mover_share`
    builds :func:`corrected_interval` around, and unbiased given its parts' reviews, where
    PPI++'s point (lam tuned on the same reviewed units, ``ppi_py``'s number) is biased low
    by O(1/n): -0.008 on a 0.05 share at 50 reviewed units and judge accuracy 0.95
    (``bench/bench_s29_ppi_seed.py`` part 3, docs/statistics.md). A part with no reviewed unit
    (all reviewed units of a stratum got one judge code) takes its stratum's human share, as
    PPI++ does there (its lam is 0: the reviewed judge codes do not vary); its interval
    ([0, 1] for that part) holds the point either way.
    """
    n, x, units = judge_cells(m, axis)
    stratum = _safe_div(m.sum_y, m.n)
    share = np.where(n > 0, _safe_div(x, n), np.concatenate([stratum, stratum], axis=axis))
    w = _safe_div(units, units.sum(axis=axis, keepdims=True))
    return np.asarray((w * share).sum(axis=axis), dtype=np.float64)


def effective_n(
    n: npt.ArrayLike, x: npt.ArrayLike, low: npt.ArrayLike, high: npt.ArrayLike, confidence: float
) -> FloatArray:
    """Reviewed units a simple random sample would need, human codes alone, for this width.

    ``n (w_srs / w)**2``: ``w`` the interval's width, ``w_srs`` the width of Clopper-Pearson's
    interval of the ``x`` of ``n`` reviewed units taken as one simple random sample (widths
    shrink as ``1 / sqrt(n)``): the judge's contribution, through PPI and through strata drawn
    by its codes.
    """
    n_a = _arr(n)
    srs_low, srs_high = clopper_pearson(x, n_a, confidence)
    width = np.maximum(_arr(high) - _arr(low), 1e-12)
    return np.asarray(n_a * ((srs_high - srs_low) / width) ** 2, dtype=np.float64)


def z_value(confidence: float) -> float:
    """Two-sided normal quantile for a confidence level in (0, 1)."""
    if not 0 < confidence < 1:
        raise StatisticsError(f"confidence must be in (0, 1), got {confidence}")
    from scipy.stats import norm  # lazy: scipy.stats costs ~0.3 s at start-up

    return float(norm.ppf(0.5 + confidence / 2))


# --------------------------------------------------------------------------- scalar results


class ShareInterval(FrozenModel):
    """One share with its estimate, SE and interval (within [0, 1], the range of a share).

    Not :class:`failcodes.metrics.Interval` (a bootstrap interval of a metric, the one
    ``Interval``): a share carries its point estimate and SE, and its JSON fields
    (``ci_low``/``ci_high``/``ci_method``) follow the other statistics contracts.
    """

    estimate: float = Field(description="Point estimate of the share.")
    se: float = Field(description="Standard error (plug-in, as ppi_py computes it).")
    ci_low: float
    ci_high: float
    ci_method: Literal["wald", "clopper-pearson"] = Field(
        description="'clopper-pearson': Clopper-Pearson's exact interval per cell (a plan "
        "stratum; for the corrected share, a stratum's units the judge coded 1 or 0), combined "
        "over cells by MOVER (mover_share); 'wald': estimate +- z se."
    )


class PPIResult(FrozenModel):
    """A prediction-powered mean with its interval, for one sample (arrays in, this out)."""

    estimate: float
    se: float
    ci_low: float = Field(description="Lower Wald bound (not clipped, as ppi_py returns it).")
    ci_high: float
    lam: float = Field(description="Weight on the judge: 1 = PPI, 0 = classical, tuned = PPI++.")
    confidence: float
    exact_low: float | None = Field(
        default=None,
        description="For 0/1 codes, the interval share_estimates reports for this sample: "
        "Clopper-Pearson per judge-code part combined by MOVER (corrected_interval), or "
        "Clopper-Pearson's of the labelled units where lam is 0 by request or no unit is "
        "unlabeled; None for other values.",
    )
    exact_high: float | None = None
    warning: str | None = Field(
        default=None,
        description="Why the Wald interval may not hold its coverage. For 0/1 codes always "
        "(Wald's interval is asymptotic and under-covers in the review regime, and a rule on the "
        "drawn codes would select its own failures): it names exact_low/exact_high. Else a "
        "zero-width interval or fewer than SMALL_STRATUM labelled units. First, for 0/1 "
        "codes, labelled units unlike a random draw (the judge's codes of labelled and "
        "unlabelled units, two-sided Fisher exact p < NOT_RANDOM_P).",
    )


#: What :func:`ppi_mean`'s note means: Wald's interval may not cover there.
NOTE_PREFIX = "coverage not assured"


#: Below this two-sided Fisher p-value the judge's codes of the labelled and the unlabelled
#: units look unlike a random draw (the report's test of reviews missing at random). A test at
#: 5%, so its words say it fails 1 honest random draw in 20 at most (3-5% measured); kept
#: rather than made stricter, which would miss most draws that favour the judge's 1s two to
#: one, where ppi_mean's estimate is biased (bench/bench_s29_ppi_seed.py, docs/statistics.md).
NOT_RANDOM_P = 0.05


def _drawn_unlike(m: Moments) -> str:
    """``ppi_mean``'s words when the judge's 1s are far likelier labelled than not ("" if not).

    PPI takes the labelled units as a random draw of all: 12 labelled of which the judge coded
    6, beside 40 unlabelled it coded 0, is a sample chosen by the judge's code.
    """
    a, n, c, big_n = (round(float(v)) for v in (m.sum_yhat, m.n, m.sum_u, m.n_unlabeled))
    if big_n == 0 or a + c in (0, n + big_n):
        return ""
    from scipy.stats import fisher_exact  # lazy: scipy.stats costs ~0.3 s at start-up

    p = float(fisher_exact([[a, n - a], [c, big_n - c]]).pvalue)
    if p >= NOT_RANDOM_P:
        return ""
    return (
        f"the labelled units look unlike a random draw of all: the judge coded 1 on {a} of "
        f"{n} labelled and {c} of {big_n} unlabelled (two-sided Fisher exact p = {p:.2g}; this "
        f"note shows below p = {NOT_RANDOM_P:g}, which at most 1 random draw in "
        f"{round(1 / NOT_RANDOM_P)} reaches), and PPI takes them as one (draw them at random, "
        "e.g. failcodes review plan, or stratify by the judge's code); "
    )


def _binary_note(m: Moments, se: float, exact: tuple[float, float]) -> str:
    """:func:`ppi_mean`'s note for 0/1 codes, whatever was drawn (the design, not the draw)."""
    _, human_only, judge_only_n, _ = cell_counts(m)
    zero = _drawn_unlike(m)
    zero += f"zero-width interval from {int(m.n)} labelled unit(s); " if se == 0 else ""
    refused = (
        f"; failcodes prints no share from fewer than {MIN_REVIEWED} reviewed units"
        if m.n < MIN_REVIEWED
        else ""
    )
    return (
        f"{NOTE_PREFIX}: {zero}Wald's interval is asymptotic and may not cover at "
        f"{int(m.n)} labelled units ({int(human_only + judge_only_n)} disagreements); the "
        f"exact interval, as failcodes reports a share, is [{exact[0]:.4f}, {exact[1]:.4f}] "
        f"(exact_low, exact_high){refused}"
    )


def _other_note(m: Moments, se: float) -> str | None:
    """:func:`ppi_mean`'s note for values other than 0/1 codes (None: no reason known)."""
    reasons = []
    if se == 0:
        reasons.append(f"zero-width interval from {int(m.n)} labelled unit(s)")
    if m.n < SMALL_STRATUM:
        reasons.append(f"{int(m.n)} labelled unit(s) (< {SMALL_STRATUM})")
    return f"{NOTE_PREFIX}: {', '.join(reasons)}" if reasons else None


def ppi_mean(
    y: npt.ArrayLike,
    yhat: npt.ArrayLike,
    yhat_unlabeled: npt.ArrayLike,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
) -> PPIResult:
    """Prediction-powered mean of ``y`` with its two-sided Wald interval (PPI++ by default).

    Same numbers as ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci`` with
    ``alpha = 1 - confidence``. Wald's interval is asymptotic: with 0/1 codes, an accurate
    judge and tens to hundreds of labelled units it rests on a handful of disagreements and
    covers as little as 0.2 (``bench/bench_ppi_coverage.py``, docs/review.md). So for 0/1
    codes ``exact_low``/``exact_high`` hold the interval :func:`share_estimates` reports for
    the same sample (Clopper-Pearson per judge-code part, MOVER; Clopper-Pearson of ``y``
    where ``lam=0`` is asked for or nothing is unlabeled) and ``warning`` always says the Wald
    interval may not cover, naming it: a note that fired on few disagreements left unnoted the
    draws with many, and those under-covered. Other values: ``warning`` on a zero-width
    interval or fewer than :data:`SMALL_STRATUM` labelled units.
    """
    z = z_value(confidence)
    moments = Moments.from_arrays(y, yhat, yhat_unlabeled)
    est = ppi(moments, lam=lam)
    theta, se = float(est.estimate), float(np.sqrt(est.variance))
    binary = all(np.isin(_arr(a), (0.0, 1.0)).all() for a in (y, yhat, yhat_unlabeled))
    exact: tuple[float, float] | None = None
    if binary:
        one = Moments(
            **{k: np.atleast_1d(getattr(moments, k)) for k in Moments.__dataclass_fields__}
        )
        if lam == 0 or moments.n_unlabeled == 0:  # the classical share: by the design, not the draw
            bounds = clopper_pearson(one.sum_y, one.n, confidence)
        else:
            one_est = Estimates(*(np.atleast_1d(a) for a in (est.estimate, est.variance, est.lam)))
            bounds = corrected_interval(one, one_est, confidence, axis=0)
        exact = (float(np.ravel(bounds[0])[0]), float(np.ravel(bounds[1])[0]))
    return PPIResult(
        estimate=theta,
        se=se,
        ci_low=theta - z * se,
        ci_high=theta + z * se,
        lam=float(est.lam),
        confidence=confidence,
        exact_low=exact[0] if exact else None,
        exact_high=exact[1] if exact else None,
        warning=_binary_note(moments, se, exact) if exact else _other_note(moments, se),
    )


@dataclass(frozen=True)
class Stratum:
    """One stratum of a review plan within a cell: codes of its reviewed and unreviewed units."""

    y: Sequence[float] | npt.NDArray[np.float64]
    yhat: Sequence[float] | npt.NDArray[np.float64]
    yhat_unlabeled: Sequence[float] | npt.NDArray[np.float64]
    #: The unit of each reviewed row, where rows may repeat a unit (None: every row its own).
    clusters: Sequence[str] | None = None


def kish_scale(
    clusters: Sequence[str], keep: Sequence[bool] | npt.NDArray[np.bool_] | None = None
) -> float:
    """Effective reviewed units per reviewed row: Kish's ``(sum m)**2 / sum m**2`` / ``sum m``.

    ``m`` is each unit's number of (kept) rows. A unit in ``m`` rows carries one review ``m``
    times: the rows' share is a mean of the units' codes weighted by ``m``, whose variance is
    that of ``(sum m)**2 / sum m**2`` independent units (Kish 1965, the design effect of
    weighting). 1 where no unit repeats.
    """
    if not clusters:
        return 1.0
    kept = list(clusters) if keep is None else [c for c, k in zip(clusters, keep, strict=True) if k]
    if not kept:
        return 1.0
    sizes = np.array(list(Counter(kept).values()), dtype=np.float64)
    return float(sizes.sum() / (sizes * sizes).sum())


class ShareEstimates(FrozenModel):
    """Judge-only, human-only and prediction-powered (corrected) shares of one cell."""

    n_units: int = Field(description="Units in the cell (reviewed + unreviewed).")
    n_reviewed: int = Field(description="Units of the cell in the estimation sample.")
    judge: ShareInterval = Field(
        description="Judge-only share over all units (uncorrected). Its interval (Wald) is of "
        "the judge's own share, not the human one: it covers the human share only where the "
        "judge is unbiased (bench/bench_ppi_coverage.py --grid accuracy: 0.000-0.518 per cell, "
        "0.000 in 136 of 144); "
        "the report shows no interval for it."
    )
    human: ShareInterval = Field(
        description="Human share from the reviewed units, weighted by the plan's strata "
        "(judge-stratified when the strata are the judge's codes: see effective_n_human)."
    )
    corrected: ShareInterval = Field(
        description="Corrected share: the judge's codes of every unit with the human codes of "
        "the reviewed ones. estimate: post-stratified by the judge's code (post_stratified: "
        "within each stratum, the share of units the judge coded 1 and 0 times the human "
        "share of each part's reviewed units), the centre its interval is built around and "
        "unbiased where PPI++'s point is biased low (corrected_ppi); with lam given, that "
        "PPI's point. se: PPI++'s plug-in standard error (ppi_py's)."
    )
    corrected_ppi: float = Field(
        description="PPI++'s point estimate (lam tuned on the reviewed units, combined over "
        "strata, clipped to [0, 1]): ppi_py's number (ppi_mean_pointestimate for one "
        "stratum), biased low by O(1/n) where the judge is accurate "
        "(bench/bench_s29_ppi_seed.py part 3); kept to compare with ppi_py."
    )
    lam: float = Field(
        description="PPI++'s weight on the judge (unit-weighted over strata), behind "
        "corrected_ppi and the standard error."
    )
    effective_n: float = Field(
        description="Reviewed units a simple random sample would need, human codes alone, for "
        "the corrected interval's width: the judge's whole contribution."
    )
    effective_n_human: float = Field(
        description="The same for the human estimate: above n_reviewed only through strata "
        "(the judge's contribution through stratification when they are its codes)."
    )
    disagreements: int = Field(
        description="Reviewed units whose human code differs from the judge's."
    )
    confidence: float


def _wald(est: Estimates, z: float) -> ShareInterval:
    theta, se = float(est.estimate), float(np.sqrt(est.variance))
    return ShareInterval(
        estimate=theta,
        se=se,
        ci_low=max(0.0, theta - z * se),
        ci_high=min(1.0, theta + z * se),
        ci_method="wald",
    )


def _exact(
    est: Estimates, bounds: tuple[FloatArray, FloatArray], point: FloatArray | None = None
) -> ShareInterval:
    # a share lies in [0, 1]: PPI's estimate need not (judge 1 on 3 of 10 reviewed, 9 of 90
    # not; humans 1 of the 3: lam 0.59, -0.018 beside its interval [0, 0.408]), and the clipped
    # one is nearer every share the cell can have (corrected_interval holds it already)
    return ShareInterval(
        estimate=float(np.clip(est.estimate if point is None else point, 0.0, 1.0)),
        se=float(np.sqrt(est.variance)),
        ci_low=float(bounds[0]),
        ci_high=float(bounds[1]),
        ci_method="clopper-pearson",
    )


def share_estimates(
    strata: Sequence[Stratum], *, confidence: float = 0.95, lam: float | None = None
) -> ShareEstimates:
    """Judge-only, human-only and corrected shares of one cell from its plan strata.

    Codes are 0/1. The corrected point is :func:`post_stratified`'s (the centre of its
    interval; PPI++'s, ``ppi_py``'s number combined over strata, is ``corrected_ppi``; with
    ``lam`` given, the point is that PPI's); standard errors are PPI++'s; the judge-only
    interval is Wald's; the human interval is :func:`human_interval`'s and the corrected one
    :func:`corrected_interval`'s (Clopper-Pearson per part, combined by MOVER), which holds
    both points. ``bench/bench_ppi_coverage.py`` measures their coverage
    (docs/review.md). Where a stratum's reviewed rows repeat units (``Stratum.clusters``), each
    part counts its effective reviewed units (:func:`kish_scale`), not its rows.

    Strata weights are their shares of the cell's units (reviewed + unreviewed). A cell with
    fewer than :data:`MIN_REVIEWED` reviewed units, or a stratum with unreviewed units and fewer
    than 2 reviewed ones (a stratum reviewed in full is a census, however small), makes the
    cell's estimate undefined
    (:class:`~failcodes.errors.StatisticsError`, whose message says why).
    """
    z_value(confidence)  # validates the level
    kept = [s for s in strata if len(s.y) + len(s.yhat_unlabeled) > 0]
    if not kept:
        raise StatisticsError("the cell has no units")
    moments = [Moments.from_arrays(s.y, s.yhat, s.yhat_unlabeled) for s in kept]
    for s in kept:
        for codes in (s.y, s.yhat, s.yhat_unlabeled):
            if not np.isin(_arr(codes), (0.0, 1.0)).all():
                raise StatisticsError("share estimates need 0/1 codes")
    n_reviewed = int(sum(int(m.n) for m in moments))
    if n_reviewed < MIN_REVIEWED:
        raise StatisticsError(
            f"too small to estimate: {n_reviewed} reviewed unit(s) in the cell "
            f"(at least {MIN_REVIEWED} needed)"
        )
    # a stratum reviewed in full (a census: no unreviewed unit) is known, however small: a
    # 1-unit stratum of a plan stratified by system x code (1/1 drawn) left its whole system
    # without an estimate
    short = [int(m.n) for m in moments if m.n < 2 and m.n_unlabeled > 0]
    if short:
        raise StatisticsError(
            f"too small to estimate: {len(short)} stratum/strata of the cell have fewer than 2 "
            "reviewed units"
        )
    stacked = Moments(
        **{
            name: np.stack([getattr(m, name) for m in moments])
            for name in Moments.__dataclass_fields__
        }
    )
    weights = stacked.n + stacked.n_unlabeled
    per_corrected, per_human = ppi(stacked, lam=lam), classical(stacked)
    corrected = combine_strata(per_corrected, weights, axis=0)
    human = combine_strata(per_human, weights, axis=0)
    _, human_only, judge_only_n, _ = cell_counts(stacked)
    # each stratum's effective reviewed units per row: all its rows, then its judge-1 and
    # judge-0 rows (the parts corrected_interval splits it into)
    clusters = [list(s.clusters) if s.clusters is not None else [] for s in kept]
    yhats = [_arr(s.yhat) for s in kept]
    scale_h = [kish_scale(c) for c in clusters]
    scale_c = [kish_scale(c, yh == 1) for c, yh in zip(clusters, yhats, strict=True)] + [
        kish_scale(c, yh == 0) for c, yh in zip(clusters, yhats, strict=True)
    ]
    human_bounds = human_interval(stacked, confidence, axis=0, scale=scale_h)
    corrected_bounds = corrected_interval(stacked, per_corrected, confidence, 0, scale_c)
    # the printed point is the centre the interval is built around (PPI++'s, tuned on the same
    # units, read 0.042 for a 0.05 share on average at n 50, judge accuracy 0.95)
    point = post_stratified(stacked, axis=0) if lam is None else corrected.estimate
    corrected_bounds = (
        np.minimum(corrected_bounds[0], point),
        np.maximum(corrected_bounds[1], point),
    )
    x_all = float(stacked.sum_y.sum())
    return ShareEstimates(
        n_units=int(weights.sum()),
        n_reviewed=n_reviewed,
        judge=_wald(combine_strata(judge_only(stacked), weights, axis=0), z_value(confidence)),
        human=_exact(human, human_bounds),
        corrected=_exact(corrected, corrected_bounds, point),
        corrected_ppi=float(np.clip(corrected.estimate, 0.0, 1.0)),
        lam=float(corrected.lam),
        effective_n=float(effective_n(n_reviewed, x_all, *corrected_bounds, confidence)),
        effective_n_human=float(effective_n(n_reviewed, x_all, *human_bounds, confidence)),
        disagreements=int((human_only + judge_only_n).sum()),
        confidence=confidence,
    )
