"""Prediction-powered inference (PPI, PPI++) for a human code's share: arrays in, estimates out.

The judge codes every unit; humans code a uniform random sample of them. For one binary code
(1 = the unit carries it) let ``y`` be the human codes of the ``n`` reviewed units, ``yhat`` the
judge's codes of the same units and ``yhat_unlabeled`` the judge's codes of the ``N`` units
nobody reviewed. The prediction-powered estimate of the share of units carrying the code is

    theta = lam * mean(yhat_unlabeled) + mean(y - lam * yhat)

with variance ``lam**2 * var(yhat_unlabeled) / N + var(y - lam * yhat) / n`` and a Wald
interval (:func:`ppi_mean`). For 0/1 codes :func:`score_interval` gives a Wilson-type
interval; failcodes uses it for the human-only share (Wilson's interval) and, for the
corrected share, only where the normal approximation is known to fail: fewer than
:data:`FEW_POSITIVES` reviewed units carry (or lack) the code (see :func:`share_estimates`).

``lam = 1`` is PPI (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, *Science* 382,
2023); ``lam = 0`` is the classical human-only estimate; ``lam=None`` tunes ``lam`` to
minimise the variance, clipped to [0, 1] (PPI++: Angelopoulos, Duchi & Zrnic 2023,
arXiv:2311.01453, eq. for the mean), as ``ppi_py.ppi_mean_ci`` does:

    lam = cov(y, yhat) / ((1 + n / N) * var(yhat over all n + N units))

Variances follow ``ppi_py`` 0.2.3 (population variances, ``ddof=0``; the tuning variance of
``yhat`` over all units with ``ddof=1``), so the numbers match the reference implementation.

**Stratified plans.** When the review sample was drawn per stratum (system x judge's code),
each stratum gets its own estimate and its own tuned ``lam`` (the overall variance is a sum
over strata, so tuning each stratum alone minimises it; Fisch et al. 2024, "Stratified
prediction-powered inference"); the share is ``sum_h W_h theta_h`` with ``W_h`` the stratum's
share of units and variance ``sum_h W_h**2 var_h``.

The estimand is the share in the population the units come from (the judged units are a
sample of it, as in PPI); the interval covers it at the nominal rate for large ``n``
(``bench/bench_ppi.py`` measures the coverage on simulated judges).

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

#: Below this many reviewed units in a stratum the Wald interval is flagged as unreliable.
SMALL_STRATUM = 10
#: Below this many reviewed units with (or without) the code the normal approximation behind
#: Wald's interval fails (the "success-failure condition", at least 10 successes and 10
#: failures); the corrected share then gets the score interval (:func:`share_estimates`).
FEW_POSITIVES = 10


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

    @classmethod
    def from_binary_counts(
        cls,
        *,
        both: npt.ArrayLike,
        human_only: npt.ArrayLike,
        judge_only: npt.ArrayLike,
        n: npt.ArrayLike,
        n_unlabeled: npt.ArrayLike,
        unlabeled_positive: npt.ArrayLike,
    ) -> Moments:
        """Sums of 0/1 codes from counts.

        Reviewed units coded 1 by both, by the human only, by the judge only; reviewed units;
        unreviewed units and those the judge coded 1.
        """
        b, h, j = _arr(both), _arr(human_only), _arr(judge_only)
        u = _arr(unlabeled_positive)
        return cls(
            n=_arr(n),
            sum_y=b + h,
            sum_yhat=b + j,
            sum_y2=b + h,
            sum_yhat2=b + j,
            sum_y_yhat=b,
            n_unlabeled=_arr(n_unlabeled),
            sum_u=u,
            sum_u2=u,
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
    if np.any(m.n < 2):
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


def score_interval(
    m: Moments, est: Estimates, weights: npt.ArrayLike, z: float, axis: int = -1
) -> tuple[FloatArray, FloatArray]:
    """Wilson-type score interval for a (stratified) prediction-powered share of 0/1 codes.

    The Wald interval uses the variance estimated at the estimate; with few positive codes
    among the reviewed units (a rare code) that variance is too small exactly when the
    estimate is too low, and coverage falls below nominal. As Wilson (1927) does for one
    proportion, the
    interval here holds every share ``theta`` with ``(theta_hat - theta)**2 <= z**2 V(theta)``,
    where ``V`` evaluates the human codes' variance ``theta_h (1 - theta_h)`` and their
    covariance with the judge's, ``p11_h - theta_h q_h``, at the hypothesised share
    (every stratum shifted by the same amount). ``V`` is quadratic in ``theta``, so the bounds
    are the roots of a quadratic. With ``lam = 0`` and one stratum it is Wilson's interval.
    Bounds are clipped to [0, 1].
    """
    n, big_n, lam, t = m.n, m.n_unlabeled, est.lam, est.estimate
    mean_u = _safe_div(m.sum_u, big_n)
    var_u = np.maximum(_safe_div(m.sum_u2, big_n) - mean_u**2, 0.0)
    q = m.sum_yhat / n
    p11 = m.sum_y_yhat / n
    var_h = np.maximum(m.sum_yhat2 / n - q**2, 0.0)
    imputed = lam**2 * _safe_div(var_u, big_n)
    v0 = np.maximum(imputed + (t * (1 - t) - 2 * lam * (p11 - t * q) + lam**2 * var_h) / n, 0.0)
    slope = 1 - 2 * t + 2 * lam * q
    w = _arr(weights)
    w = w / w.sum(axis=axis, keepdims=True)
    w2n = w * w / n
    qa = 1 + z * z * w2n.sum(axis=axis)
    qb = -z * z * (w2n * slope).sum(axis=axis)
    qc = -z * z * (w * w * v0).sum(axis=axis)
    disc = np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
    centre = (w * t).sum(axis=axis)
    low = np.clip(centre + (-qb - disc) / (2 * qa), 0.0, 1.0)
    high = np.clip(centre + (-qb + disc) / (2 * qa), 0.0, 1.0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def z_value(confidence: float) -> float:
    """Two-sided normal quantile for a confidence level in (0, 1)."""
    if not 0 < confidence < 1:
        raise StatisticsError(f"confidence must be in (0, 1), got {confidence}")
    from scipy.stats import norm  # lazy: scipy.stats costs ~0.3 s at start-up

    return float(norm.ppf(0.5 + confidence / 2))


# --------------------------------------------------------------------------- scalar results


class Interval(FrozenModel):
    """One share with its interval (clipped to [0, 1], the range of a share)."""

    estimate: float = Field(description="Point estimate of the share.")
    se: float = Field(description="Standard error (plug-in).")
    ci_low: float
    ci_high: float
    ci_method: Literal["wald", "score"] = Field(
        description="'score': Wilson-type (see score_interval); 'wald': estimate +- z se."
    )


class PPIResult(FrozenModel):
    """A prediction-powered mean with its interval, for one sample (arrays in, this out)."""

    estimate: float
    se: float
    ci_low: float = Field(description="Lower Wald bound (not clipped, as ppi_py returns it).")
    ci_high: float
    lam: float = Field(description="Weight on the judge: 1 = PPI, 0 = classical, tuned = PPI++.")
    confidence: float


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
    ``alpha = 1 - confidence``.
    """
    z = z_value(confidence)
    est = ppi(Moments.from_arrays(y, yhat, yhat_unlabeled), lam=lam)
    theta, se = float(est.estimate), float(np.sqrt(est.variance))
    return PPIResult(
        estimate=theta,
        se=se,
        ci_low=theta - z * se,
        ci_high=theta + z * se,
        lam=float(est.lam),
        confidence=confidence,
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
    judge: Interval = Field(description="Judge-only share over all units (uncorrected).")
    human: Interval = Field(description="Human-only share from the reviewed units.")
    corrected: Interval = Field(description="Prediction-powered (PPI++) share.")
    lam: float = Field(description="Weight given to the judge (unit-weighted over strata).")
    effective_n: float = Field(
        description="Reviewed units the human-only estimate would need for the corrected "
        "estimate's variance (n * var_human / var_corrected)."
    )
    confidence: float
    warning: str | None = Field(
        default=None, description="Why the interval may be unreliable (small strata, ...)."
    )


def _wald(est: Estimates, z: float) -> Interval:
    theta, se = float(est.estimate), float(np.sqrt(est.variance))
    return Interval(
        estimate=theta,
        se=se,
        ci_low=max(0.0, theta - z * se),
        ci_high=min(1.0, theta + z * se),
        ci_method="wald",
    )


def _score(
    m: Moments, per_stratum: Estimates, combined: Estimates, weights: FloatArray, z: float
) -> Interval:
    low, high = score_interval(m, per_stratum, weights, z, axis=0)
    return Interval(
        estimate=float(combined.estimate),
        se=float(np.sqrt(combined.variance)),
        ci_low=float(low),
        ci_high=float(high),
        ci_method="score",
    )


def few_codes(positives: npt.ArrayLike, n_reviewed: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Where fewer than :data:`FEW_POSITIVES` reviewed units carry, or lack, the code.

    There the corrected share gets the score interval, not Wald's (:func:`share_estimates`).
    """
    pos, n = _arr(positives), _arr(n_reviewed)
    return np.asarray(np.minimum(pos, n - pos) < FEW_POSITIVES)


def share_estimates(
    strata: Sequence[Stratum],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> ShareEstimates:
    """Judge-only, human-only and corrected shares of one cell from its plan strata.

    Codes are 0/1. The judge-only interval is Wald's; the human-only one is a score interval
    (:func:`score_interval` with ``lam = 0``: Wilson's for one stratum). The corrected one is

    - Wald's, as ``ppi_py`` computes it (clipped to [0, 1]), when at least
      :data:`FEW_POSITIVES` (10) reviewed units of the cell carry the code and at least 10 lack
      it: the textbook "success-failure condition" for the normal approximation of a share
      (e.g. Diez, Cetinkaya-Rundel & Barr, *OpenIntro Statistics*, 4th ed., 2019, sec. 5.1);
    - otherwise the Wilson-type score interval around the same PPI++ estimate
      (:func:`score_interval`), as Brown, Cai & DasGupta (*Statistical Science* 16, 2001)
      recommend over Wald's for a share with few successes: Wald's variance, estimated at a
      low estimate, is too small exactly when the estimate is too low.
      ``bench/bench_ppi.py`` measures it: at prevalence 0.05 with 200 reviewed units (about 10
      positive reviews) Wald covers 0.924, this rule 0.97 (20,000 replicates), with widths
      within 5% of Wald's; it does not fire in the other settings.

    Where tuning gives the judge no weight in any stratum (``lam = 0``, e.g. every reviewed unit
    has the same human code) the corrected estimate *is* the human-only one, and so is its
    (score) interval: never the zero-width Wald interval of a constant sample.

    Strata weights are their shares of the cell's units (reviewed + unreviewed). A stratum
    with units but fewer than 2 reviewed ones makes the cell's estimate undefined
    (:class:`~failcodes.errors.StatisticsError`).
    """
    z = z_value(confidence)
    kept = [s for s in strata if len(s.y) + len(s.yhat_unlabeled) > 0]
    if not kept:
        raise StatisticsError("the cell has no units")
    moments = [Moments.from_arrays(s.y, s.yhat, s.yhat_unlabeled) for s in kept]
    for s in kept:
        for codes in (s.y, s.yhat, s.yhat_unlabeled):
            if not np.isin(_arr(codes), (0.0, 1.0)).all():
                raise StatisticsError("share estimates need 0/1 codes")
    short = [int(m.n) for m in moments if m.n < 2]
    if short:
        raise StatisticsError(
            f"{len(short)} stratum/strata of the cell have fewer than 2 reviewed units"
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
    judge = combine_strata(judge_only(stacked), weights, axis=0)
    n_reviewed = int(stacked.n.sum())
    var_c, var_h = float(corrected.variance), float(human.variance)
    effective_n = n_reviewed * var_h / var_c if var_c > 0 else float(n_reviewed)
    warnings: list[str] = []
    if int(stacked.n.min()) < SMALL_STRATUM:
        warnings.append(f"a stratum has fewer than {SMALL_STRATUM} reviewed units")
    positives = float(stacked.sum_y.sum())
    few = bool(few_codes(positives, n_reviewed))
    if positives == 0 or positives == n_reviewed:
        warnings.append("the reviewed units all have the same human code")
    elif few:
        warnings.append(
            f"fewer than {FEW_POSITIVES} reviewed units "
            + ("carry" if positives < n_reviewed / 2 else "lack")
            + " the code: score interval instead of Wald's (conservative; bench/bench_ppi.py)"
        )
    return ShareEstimates(
        n_units=int(weights.sum()),
        n_reviewed=n_reviewed,
        judge=_wald(judge, z),
        human=_score(stacked, per_human, human, weights, z),
        corrected=_score(stacked, per_corrected, corrected, weights, z)
        if few or bool(np.all(per_corrected.lam == 0))
        else _wald(corrected, z),
        lam=float(corrected.lam),
        effective_n=effective_n,
        confidence=confidence,
        warning="; ".join(warnings) or None,
    )
