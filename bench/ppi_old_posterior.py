"""The corrected interval failcodes reported before session 13, kept for comparison only.

A Jeffreys-type Dirichlet(1/4 x 4) posterior of each stratum's judge x human table of reviewed
units, ``lam`` at its PPI++ value, fitted by a three-moment Beta (failcodes.stats.ppi at
57176b4), and the rule that noted it (:func:`thin_evidence`, moved here from
``failcodes.stats.ppi``, where ``ppi_mean`` used it for Wald's interval until session 13)
("coverage not assured") below 10 disagreements, 15 reviewed units with (or without) the code,
or a stratum of fewer than 10 reviewed units.
``bench/bench_ppi_coverage.py`` prints it beside the interval reported now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from failcodes.stats.ppi import Estimates, FloatArray, Moments, cell_counts, combine_strata

CELL_PRIOR = 0.25
UNLABELED_PRIOR = 0.5
#: The old note: a stratum with fewer reviewed units than this.
SMALL_STRATUM = 10
#: The old note: fewer reviewed units than this with (or without) the code.
FEW_POSITIVES = 15
#: The old note: fewer reviewed units than this where the human and the judge disagree.
FEW_DISAGREEMENTS = 10


def _arr(values: npt.ArrayLike) -> FloatArray:
    return np.asarray(values, dtype=np.float64)


def _safe_div(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


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
