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

**The interval failcodes reports** (:func:`share_estimates`). Wald's interval is only as good
as its variance estimate, and the variance of ``y - lam * yhat`` comes from the reviewed units
where the human and the judge *disagree*: with an accurate judge and 50 reviewed units there
are one to three, often none, and Wald's interval covers 0.6-0.9 instead of 0.95. So the
reported interval comes from a posterior instead (:func:`posterior`): a Jeffreys-type
Dirichlet(1/4, 1/4, 1/4, 1/4) prior on each stratum's judge x human table of reviewed units
(which gives the human share Jeffreys' Beta(1/2, 1/2)) and Beta(1/2, 1/2) on the judge's share
of the unreviewed ones, ``lam`` held at its PPI++ value. Its mean, variance and skewness are
fitted by a Beta distribution on ``[0, S]`` (:func:`beta_bounds`); the bounds are that
distribution's 2.5% and 97.5% quantiles. With ``lam = 0`` and one stratum this is exactly
Jeffreys' interval (Brown, Cai & DasGupta, *Statistical Science* 16, 2001). Where the reviewed
units hold fewer than :data:`FEW_DISAGREEMENTS` disagreements, fewer than
:data:`FEW_POSITIVES` units with (or without) the code, or a stratum has fewer than
:data:`SMALL_STRATUM` reviewed units, the interval carries a note (:func:`thin_evidence`): its
coverage there is not assured. A cell with fewer than :data:`MIN_REVIEWED` reviewed units gets
no estimate at all. ``bench/bench_ppi_coverage.py`` measures all of it over the design grid
of issue 26 (docs/review.md has the figures).

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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field

from failcodes.contract import FrozenModel
from failcodes.errors import StatisticsError

FloatArray = npt.NDArray[np.float64]

#: A stratum with fewer reviewed units than this makes the cell's interval carry a note.
SMALL_STRATUM = 10
#: Fewer reviewed units than this with (or without) the code: the interval carries a note.
#: 15, not 5: with 5, a rare code's replicates that happened to draw 5-14 reviewed units with
#: the code carried no note and covered 0.62-0.89 (17 cells of the issue-26 grid, e.g. a
#: 0.6/0.6 judge, 50 reviewed, prevalence 0.05); with 15 no cell's unnoted replicates cover
#: below 0.93 (bench/bench_ppi_coverage.py, seeds 0 and 1; docs/review.md).
FEW_POSITIVES = 15
#: Fewer reviewed units than this where the human and the judge disagree: the interval carries
#: a note (the corrected share's uncertainty comes from those units).
FEW_DISAGREEMENTS = 10
#: A cell with fewer reviewed units than this is too small to estimate: no interval is printed.
MIN_REVIEWED = 10
#: Pseudo-count added to each of the four cells (judge x human) of a stratum's reviewed units
#: by :func:`posterior`: a Dirichlet(1/4, 1/4, 1/4, 1/4) prior, which gives the human share the
#: Jeffreys Beta(1/2, 1/2) prior. (1/2 per cell, or 1/2 on the two disagreement cells only,
#: covered worse in bench/bench_ppi_coverage.py: down to 0.53 for rare codes.)
CELL_PRIOR = 0.25
#: Pseudo-count added to the judge's positive and negative codes among the unreviewed units: the
#: Jeffreys Beta(1/2, 1/2) prior on the judge's share.
UNLABELED_PRIOR = 0.5


def _arr(values: npt.ArrayLike) -> FloatArray:
    return np.asarray(values, dtype=np.float64)


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
        cls,
        y: npt.ArrayLike,
        yhat: npt.ArrayLike,
        yhat_unlabeled: npt.ArrayLike,
    ) -> Moments:
        """Sums of 1-d arrays.

        ``y`` and ``yhat``: human and judge codes of the reviewed units; ``yhat_unlabeled``:
        judge codes of the others.
        """
        y_a, yhat_a, u_a = _arr(y), _arr(yhat), _arr(yhat_unlabeled)
        if y_a.ndim != 1 or yhat_a.ndim != 1 or u_a.ndim != 1:
            raise StatisticsError("y, yhat and yhat_unlabeled must be one-dimensional")
        if y_a.shape != yhat_a.shape:
            raise StatisticsError(
                f"y has {y_a.size} values but yhat has {yhat_a.size}: one judge code per "
                "reviewed unit is needed"
            )
        if not (np.isfinite(y_a).all() and np.isfinite(yhat_a).all() and np.isfinite(u_a).all()):
            raise StatisticsError("codes must be finite numbers (no NaN)")
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


def ppi(m: Moments, lam: float | npt.ArrayLike | None = None) -> Estimates:
    """Prediction-powered mean and its variance; ``lam=None`` tunes it (PPI++)."""
    # a stratum reviewed in full (no unreviewed unit) is a census: its share is known (lam 0)
    if np.any((m.n < 2) & ((m.n < 1) | (m.n_unlabeled > 0))):
        raise StatisticsError("prediction-powered inference needs at least 2 reviewed units")
    lam_a = tuned_lambda(m) if lam is None else np.broadcast_to(_arr(lam), np.shape(m.n))
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


@dataclass(frozen=True)
class Posterior:
    """Posterior mean, variance and third central moment (arrays shaped like the moments)."""

    mean: FloatArray
    variance: FloatArray
    third: FloatArray


def _dirichlet_moments(
    values: Sequence[FloatArray], shares: Sequence[FloatArray], total: FloatArray
) -> Posterior:
    """Moments of ``sum_c v_c pi_c`` under a Dirichlet with means ``shares`` and size ``total``.

    Variance ``sum_c m_c (v_c - mu)**2 / (total + 1)``, third central moment
    ``2 sum_c m_c (v_c - mu)**3 / ((total + 1) (total + 2))`` (for Beta(a, b) these are the
    textbook ``ab / ((a+b)**2 (a+b+1))`` and ``2ab (b-a) / ((a+b)**3 (a+b+1) (a+b+2))``).
    """
    mu = sum(v * m for v, m in zip(values, shares, strict=True))
    second = sum(m * (v - mu) ** 2 for v, m in zip(values, shares, strict=True))
    third = sum(m * (v - mu) ** 3 for v, m in zip(values, shares, strict=True))
    return Posterior(
        mean=np.asarray(mu, dtype=np.float64),
        variance=np.asarray(np.maximum(second, 0.0) / (total + 1), dtype=np.float64),
        third=np.asarray(2 * third / ((total + 1) * (total + 2)), dtype=np.float64),
    )


def posterior(m: Moments, lam: npt.ArrayLike, prior: float = CELL_PRIOR) -> Posterior:
    """Posterior moments of each stratum's share ``lam mu_u + E[y - lam yhat]`` (0/1 codes).

    The reviewed units' judge x human table gets a Dirichlet(``prior`` x 4) prior and the
    unreviewed units' judge share ``mu_u`` a Beta(1/2, 1/2) one; ``lam`` is held fixed. Unlike
    the plug-in variance of :func:`ppi`, the posterior variance of the correction
    ``E[y - lam yhat]`` never collapses when the reviewed sample holds few or no units where
    the judge and the human disagree (the cells the correction's variance comes from). With
    ``lam = 0`` and one stratum the posterior of the human share is Beta(x + 1/2, n - x + 1/2),
    Jeffreys'.
    """
    lam_a = np.asarray(lam, dtype=np.float64)
    big_n = m.n_unlabeled
    used = np.where(big_n > 0, lam_a, 0.0)
    total = m.n + 4 * prior
    cells = [(x + prior) / total for x in cell_counts(m)]
    zero = np.zeros_like(used)
    # the correction's value in each cell: (1, 1) -> 1 - lam, (1, 0) -> 1, (0, 1) -> -lam
    rect = _dirichlet_moments([1 - used, zero + 1, -used, zero], cells, total)
    size = big_n + 2 * UNLABELED_PRIOR
    mu = (m.sum_u + UNLABELED_PRIOR) / size
    judge = _dirichlet_moments([zero + 1, zero], [mu, 1 - mu], size)
    return Posterior(
        mean=np.asarray(used * judge.mean + rect.mean, dtype=np.float64),
        variance=np.asarray(used**2 * judge.variance + rect.variance, dtype=np.float64),
        third=np.asarray(used**3 * judge.third + rect.third, dtype=np.float64),
    )


def posterior_share(
    m: Moments,
    lam: npt.ArrayLike,
    weights: npt.ArrayLike,
    axis: int = -1,
    prior: float = CELL_PRIOR,
) -> Posterior:
    """Posterior moments of a (stratified) share of 0/1 codes (:func:`posterior`).

    The strata combine with their shares of units as weights: mean ``M = sum_h W_h M_h``,
    variance ``V = sum_h W_h**2 V_h + sum_h W_h (M_h - M)**2 / units`` (the last term: the
    strata's shares are themselves those of a sample of the population, as the judged units
    are in PPI), third central moment ``sum_h W_h**3 T_h``.
    """
    post = posterior(m, lam, prior)
    w = _arr(weights)
    w = w / w.sum(axis=axis, keepdims=True)
    mean = (w * post.mean).sum(axis=axis, keepdims=True)
    units = (m.n + m.n_unlabeled).sum(axis=axis)
    between = _safe_div((w * (post.mean - mean) ** 2).sum(axis=axis), units)
    return Posterior(
        mean=np.asarray(np.squeeze(mean, axis=axis), dtype=np.float64),
        variance=np.asarray((w * w * post.variance).sum(axis=axis) + between, dtype=np.float64),
        third=np.asarray((w**3 * post.third).sum(axis=axis), dtype=np.float64),
    )


def _beta_skewness(p: FloatArray, c: FloatArray) -> FloatArray:
    """Skewness of Beta(p r, (1-p) r) with ``r + 1 = c (1 - p) / p`` (see :func:`beta_bounds`)."""
    r1 = c * (1 - p) / p
    return np.asarray(
        2 * (1 - 2 * p) * np.sqrt(r1) / ((r1 + 1) * np.sqrt(p * (1 - p))), dtype=np.float64
    )


def beta_bounds(post: Posterior, confidence: float) -> tuple[FloatArray, FloatArray]:
    """Equal-tailed bounds of a Beta distribution on ``[0, S]`` with the posterior's moments.

    A share's posterior lives in [0, 1]. When one stratum carries most of the variance its
    shape is that stratum's Beta scaled by the stratum's weight, not a Beta on [0, 1] with the
    same mean and variance (which would be far more skewed and put the lower bound too high).
    So the fit matches three moments: mean ``M``, variance ``V`` and skewness ``g`` by a Beta
    with ``a + b = r`` and ``a / r = p`` scaled to [0, ``S = M / p``], ``S <= 1``; for a given
    ``p`` the variance fixes ``r + 1 = (M**2 / V) (1 - p) / p``, and ``p`` in ``[M, 1/2]``
    solves ``skewness(p) = g`` (bisection). ``p = M`` is the plain two-moment Beta on [0, 1]
    (exactly the posterior for one stratum with ``lam = 0``: Jeffreys' interval), used as well
    when the posterior is at least that skewed. A negative skewness is fitted the same way from
    the top (the share of units *without* the code). A mean outside (0, 1) (PPI++ can estimate
    a share below 0 when the judge over-codes), or a variance no Beta distribution has, gets the
    normal bounds ``M +- z sqrt(V)`` clipped to [0, 1] instead.
    """
    from scipy.special import betaincinv, ndtri  # lazy: scipy costs time at start-up

    raw = np.asarray(post.mean, dtype=np.float64)
    var = np.maximum(np.asarray(post.variance, dtype=np.float64), 1e-300)
    flip = np.asarray(post.third, dtype=np.float64) < 0
    mean = np.clip(np.where(flip, 1 - raw, raw), 1e-12, 1 - 1e-12)
    skew = np.abs(np.asarray(post.third, dtype=np.float64)) / var**1.5
    c = mean * mean / var
    ok = (raw > 0) & (raw < 1) & (mean * (1 - mean) > var)
    # p in [M, min(1/2, c / (1 + c))): r > 0 needs c (1 - p) / p > 1
    lo = np.minimum(mean, 0.5)
    hi = np.maximum(np.minimum(0.5, c / (1 + c) * (1 - 1e-9)), lo)
    at_lo = _beta_skewness(lo, c)
    p = lo.copy()
    search = ok & (skew < at_lo) & (hi > lo)
    a_, b_ = lo.copy(), hi.copy()
    for _ in range(60):  # bisection: skewness decreases in p
        mid = (a_ + b_) / 2
        higher = _beta_skewness(mid, c) > skew
        a_ = np.where(higher, mid, a_)
        b_ = np.where(higher, b_, mid)
    p = np.where(search, (a_ + b_) / 2, p)
    r = c * (1 - p) / p - 1
    ok &= r > 0
    r = np.where(ok, r, 1.0)
    scale = mean / p
    tail = (1 - confidence) / 2
    q_low = scale * betaincinv(p * r, (1 - p) * r, tail)
    q_high = scale * betaincinv(p * r, (1 - p) * r, 1 - tail)
    low = np.where(flip, 1 - q_high, q_low)
    high = np.where(flip, 1 - q_low, q_high)
    half = ndtri(1 - tail) * np.sqrt(var)
    return (
        np.asarray(np.where(ok, low, np.clip(raw - half, 0.0, 1.0)), dtype=np.float64),
        np.asarray(np.where(ok, high, np.clip(raw + half, 0.0, 1.0)), dtype=np.float64),
    )


def beta_interval(
    m: Moments,
    lam: npt.ArrayLike,
    weights: npt.ArrayLike,
    confidence: float,
    axis: int = -1,
    prior: float = CELL_PRIOR,
) -> tuple[FloatArray, FloatArray]:
    """Interval for a (stratified) share of 0/1 codes from the strata's posteriors.

    The bounds are the quantiles of the Beta distribution with the posterior's mean and
    variance (:func:`posterior_share`, :func:`beta_bounds`: moment matching, exact for one
    stratum with ``lam = 0``, where this is Jeffreys' interval), so they stay in [0, 1] and are
    skewed away from 0 and 1 as a share's uncertainty is. ``bench/bench_ppi_coverage.py``
    measures the coverage.
    """
    return beta_bounds(posterior_share(m, lam, weights, axis=axis, prior=prior), confidence)


def corrected_interval(
    m: Moments, per_stratum: Estimates, weights: npt.ArrayLike, confidence: float, axis: int = -1
) -> tuple[FloatArray, FloatArray]:
    """The corrected share's interval as reported: :func:`beta_interval` with PPI++'s ``lam``.

    Widened, where needed, to hold the PPI++ point estimate (a share estimated 0 from no
    positive review gets the lower bound 0, as Brown, Cai & DasGupta 2001 do for Jeffreys').
    """
    low, high = beta_interval(m, per_stratum.lam, weights, confidence, axis=axis)
    est = np.clip(combine_strata(per_stratum, weights, axis=axis).estimate, 0.0, 1.0)
    return np.minimum(low, est), np.maximum(high, est)


def effective_n(
    m: Moments, lam: npt.ArrayLike, weights: npt.ArrayLike, axis: int = -1
) -> FloatArray:
    """Reviewed units a simple random sample would need for this estimate's posterior variance.

    ``n * V_srs / V`` with ``V`` the (stratified) posterior variance of the share
    (:func:`posterior_share`) and ``V_srs`` that of the human-only share of the same reviewed
    units taken as one simple random sample (Jeffreys' posterior): the judge's contribution,
    through ``lam`` and through strata drawn by its codes.
    """
    n = m.n.sum(axis=axis)
    var = posterior_share(m, lam, weights, axis=axis).variance
    x = m.sum_y.sum(axis=axis)
    a, b = x + 0.5, n - x + 0.5
    var_srs = a * b / ((a + b) ** 2 * (a + b + 1))
    return np.asarray(n * var_srs / np.maximum(var, 1e-300), dtype=np.float64)


@dataclass(frozen=True)
class Thin:
    """Where the reviewed units hold too little to rest an interval on (boolean arrays)."""

    disagreements: npt.NDArray[np.bool_]  # < FEW_DISAGREEMENTS units where human != judge
    positives: npt.NDArray[np.bool_]  # < FEW_POSITIVES units with (or without) the code
    small_stratum: npt.NDArray[np.bool_]  # a stratum with units but < SMALL_STRATUM reviewed

    def any(self) -> npt.NDArray[np.bool_]:
        """Where any reason applies: the interval carries a note."""
        return np.asarray(self.disagreements | self.positives | self.small_stratum)


def thin_evidence(m: Moments, axis: int = -1) -> Thin:
    """Why the reported interval may not hold its coverage, summed over strata on ``axis``."""
    _, human_only, judge_only, _ = cell_counts(m)
    disagree = (human_only + judge_only).sum(axis=axis)
    positives, n = m.sum_y.sum(axis=axis), m.n.sum(axis=axis)
    has_units = (m.n + m.n_unlabeled) > 0
    return Thin(
        disagreements=np.asarray(disagree < FEW_DISAGREEMENTS),
        positives=np.asarray(np.minimum(positives, n - positives) < FEW_POSITIVES),
        small_stratum=np.asarray(np.any(has_units & (m.n < SMALL_STRATUM), axis=axis)),
    )


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
    ci_method: Literal["wald", "beta"] = Field(
        description="'beta': quantiles of the posterior's Beta fit (see beta_bounds; Jeffreys' "
        "interval for a human-only share); 'wald': estimate +- z se."
    )


class PPIResult(FrozenModel):
    """A prediction-powered mean with its interval, for one sample (arrays in, this out)."""

    estimate: float
    se: float
    ci_low: float = Field(description="Lower Wald bound (not clipped, as ppi_py returns it).")
    ci_high: float
    lam: float = Field(description="Weight on the judge: 1 = PPI, 0 = classical, tuned = PPI++.")
    confidence: float
    warning: str | None = Field(
        default=None,
        description="Why the Wald interval may not hold its coverage: a zero-width interval; for "
        "0/1 codes the reasons of share_estimates' notes (thin_evidence), else fewer than "
        "SMALL_STRATUM labelled units.",
    )


def _wald_warning(m: Moments, se: float, binary: bool) -> str | None:
    """Why :func:`ppi_mean`'s interval may not cover (None: no reason known)."""
    reasons = []
    if se == 0:
        reasons.append(f"zero-width interval from {int(m.n)} labelled unit(s)")
    if binary:  # one stratum: the design share_estimates notes on
        one = Moments(**{k: np.atleast_1d(getattr(m, k)) for k in Moments.__dataclass_fields__})
        _, human_only, judge_only_n, _ = cell_counts(m)
        disagreements = int(human_only + judge_only_n)
        notes = _notes(thin_evidence(one, axis=0), disagreements, int(m.sum_y), int(m.n))
        reasons.extend(n.removeprefix(f"{NOTE_PREFIX}: ") for n in notes)
    elif m.n < SMALL_STRATUM:
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
    ``alpha = 1 - confidence``. Wald's interval under-covers with few labelled units or few
    disagreements (docs/review.md), so ``warning`` says when it may not cover: a zero-width
    interval, and for 0/1 codes the reasons :func:`share_estimates` notes (whose Beta interval
    is the one to report for a share).
    """
    z = z_value(confidence)
    moments = Moments.from_arrays(y, yhat, yhat_unlabeled)
    est = ppi(moments, lam=lam)
    theta, se = float(est.estimate), float(np.sqrt(est.variance))
    binary = all(np.isin(_arr(a), (0.0, 1.0)).all() for a in (y, yhat, yhat_unlabeled))
    return PPIResult(
        estimate=theta,
        se=se,
        ci_low=theta - z * se,
        ci_high=theta + z * se,
        lam=float(est.lam),
        confidence=confidence,
        warning=_wald_warning(moments, se, binary),
    )


@dataclass(frozen=True)
class Stratum:
    """One stratum of a review plan within a cell: codes of its reviewed and unreviewed units."""

    y: Sequence[float] | npt.NDArray[np.float64]
    yhat: Sequence[float] | npt.NDArray[np.float64]
    yhat_unlabeled: Sequence[float] | npt.NDArray[np.float64]


class ShareEstimates(FrozenModel):
    """Judge-only, human-only and prediction-powered (corrected) shares of one cell."""

    n_units: int = Field(description="Units in the cell (reviewed + unreviewed).")
    n_reviewed: int = Field(description="Units of the cell in the estimation sample.")
    judge: ShareInterval = Field(description="Judge-only share over all units (uncorrected).")
    human: ShareInterval = Field(
        description="Human share from the reviewed units, weighted by the plan's strata "
        "(judge-stratified when the strata are the judge's codes: see effective_n_human)."
    )
    corrected: ShareInterval = Field(description="Prediction-powered (PPI++) share.")
    lam: float = Field(description="Weight given to the judge (unit-weighted over strata).")
    effective_n: float = Field(
        description="Reviewed units a simple random sample would need, human codes alone, for "
        "the corrected estimate's (posterior) variance: the judge's whole contribution."
    )
    effective_n_human: float = Field(
        description="The same for the human estimate: above n_reviewed only through strata "
        "(the judge's contribution through stratification when they are its codes)."
    )
    disagreements: int = Field(
        description="Reviewed units whose human code differs from the judge's."
    )
    confidence: float
    warning: str | None = Field(
        default=None, description="Why the interval may not hold its coverage (thin_evidence)."
    )


def _wald(est: Estimates, z: float) -> ShareInterval:
    theta, se = float(est.estimate), float(np.sqrt(est.variance))
    return ShareInterval(
        estimate=theta,
        se=se,
        ci_low=max(0.0, theta - z * se),
        ci_high=min(1.0, theta + z * se),
        ci_method="wald",
    )


def _beta(
    m: Moments, per_stratum: Estimates, weights: FloatArray, confidence: float
) -> ShareInterval:
    combined = combine_strata(per_stratum, weights, axis=0)
    low, high = corrected_interval(m, per_stratum, weights, confidence, axis=0)
    return ShareInterval(
        estimate=float(combined.estimate),
        se=float(np.sqrt(combined.variance)),
        ci_low=float(low),
        ci_high=float(high),
        ci_method="beta",
    )


#: What a note means: the reported interval's coverage there (bench/bench_ppi_coverage.py,
#: docs/review.md: 0.79-1.00 over the design grid of issue 26).
NOTE_PREFIX = "coverage not assured"


def _notes(thin: Thin, disagreements: int, positives: int, n_reviewed: int) -> list[str]:
    reasons: list[str] = []
    if positives in (0, n_reviewed):
        reasons.append("one human code only")
    elif bool(thin.positives):
        which = "with" if positives < n_reviewed / 2 else "without"
        count = min(positives, n_reviewed - positives)
        reasons.append(f"{count} reviewed {which} the code (< {FEW_POSITIVES})")
    if bool(thin.disagreements):
        reasons.append(f"{disagreements} disagreements (< {FEW_DISAGREEMENTS})")
    if bool(thin.small_stratum):
        reasons.append(f"a stratum < {SMALL_STRATUM} reviewed")
    return [f"{NOTE_PREFIX}: {', '.join(reasons)}"] if reasons else []


def share_estimates(
    strata: Sequence[Stratum],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> ShareEstimates:
    """Judge-only, human-only and corrected shares of one cell from its plan strata.

    Codes are 0/1. Point estimates and standard errors are PPI++'s (``ppi_py``'s numbers,
    combined over strata); the judge-only interval is Wald's; the human and the corrected
    intervals are :func:`corrected_interval`'s (the posterior's Beta fit; Jeffreys' interval for
    the human share of one stratum), with a note where :func:`thin_evidence` finds too little
    to rest them on. ``bench/bench_ppi_coverage.py`` measures their coverage (docs/review.md).

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
    judge = combine_strata(judge_only(stacked), weights, axis=0)
    _, human_only, judge_only_n, _ = cell_counts(stacked)
    disagreements = int((human_only + judge_only_n).sum())
    positives = int(stacked.sum_y.sum())
    thin = thin_evidence(stacked, axis=0)
    notes = _notes(thin, disagreements, positives, n_reviewed)
    return ShareEstimates(
        n_units=int(weights.sum()),
        n_reviewed=n_reviewed,
        judge=_wald(judge, z_value(confidence)),
        human=_beta(stacked, per_human, weights, confidence),
        corrected=_beta(stacked, per_corrected, weights, confidence),
        lam=float(corrected.lam),
        effective_n=float(effective_n(stacked, per_corrected.lam, weights, axis=0)),
        effective_n_human=float(effective_n(stacked, per_human.lam, weights, axis=0)),
        disagreements=disagreements,
        confidence=confidence,
        warning="; ".join(notes) or None,
    )
