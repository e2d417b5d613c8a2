"""Prediction-powered inference: hand-computed values and the ppi_py reference implementation."""

from __future__ import annotations

import math

import numpy as np
import ppi_py  # reference implementation, ppi-python 0.2.3 (test-only dependency)
import pytest
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

from failcodes.errors import StatisticsError
from failcodes.stats.ppi import (
    Moments,
    Stratum,
    classical,
    combine_strata,
    ppi,
    ppi_mean,
    score_interval,
    share_estimates,
    tuned_lambda,
)

# A small fixture worked out by hand: 5 reviewed units, 8 unreviewed ones.
Y = [1, 0, 1, 1, 0]
YHAT = [1, 0, 0, 1, 1]
YHAT_U = [1, 1, 0, 0, 0, 1, 0, 0]
Z95 = 1.959963984540054


def test_ppi_lambda_one_by_hand() -> None:
    # mean(yhat_u) = 3/8; y - yhat = [0, 0, 1, 0, -1], mean 0, population variance 2/5.
    # var(yhat_u) = 3/8 * 5/8 = 15/64; variance = (15/64)/8 + (2/5)/5.
    result = ppi_mean(Y, YHAT, YHAT_U, lam=1.0)
    assert result.estimate == pytest.approx(3 / 8)
    se = math.sqrt(15 / 64 / 8 + 2 / 5 / 5)
    assert result.se == pytest.approx(se)
    assert result.ci_low == pytest.approx(3 / 8 - Z95 * se)
    assert result.ci_high == pytest.approx(3 / 8 + Z95 * se)


def test_ppi_plus_plus_lambda_by_hand() -> None:
    # cov(y, yhat) = E[y yhat] - E[y] E[yhat] = 2/5 - 0.6 * 0.6 = 0.04.
    # yhat over all 13 units: 6 ones, sample variance (6 - 36/13) / 12 = 42/156.
    # lam = 0.04 / ((1 + 5/8) * 42/156) = 0.04 / 0.4375 = 16/175.
    lam = 16 / 175
    result = ppi_mean(Y, YHAT, YHAT_U)
    assert result.lam == pytest.approx(lam)
    # theta = lam * 3/8 + 0.6 - lam * 0.6
    assert result.estimate == pytest.approx(0.6 - lam * 0.225)
    # var(y - lam yhat) = var y - 2 lam cov + lam^2 var yhat = 0.24 - 0.08 lam + 0.24 lam^2
    var = lam**2 * (15 / 64) / 8 + (0.24 - 0.08 * lam + 0.24 * lam**2) / 5
    assert result.se == pytest.approx(math.sqrt(var))


def test_lambda_zero_is_the_classical_wald_interval() -> None:
    result = ppi_mean(Y, YHAT, YHAT_U, lam=0.0, confidence=0.9)
    assert result.estimate == pytest.approx(0.6)
    se = math.sqrt(0.24 / 5)
    assert result.ci_high - result.estimate == pytest.approx(norm.ppf(0.95) * se)


def _sample(seed: int, n: int, big_n: int, prevalence: float) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prevalence).astype(float)
    yhat = np.where(rng.random(n) < 0.85, y, 1 - y)
    truth_u = rng.random(big_n) < prevalence
    yhat_u = np.where(rng.random(big_n) < 0.85, truth_u, ~truth_u).astype(float)
    return y, yhat, yhat_u


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.3])
def test_matches_ppi_py(seed: int, lam: float | None) -> None:
    y, yhat, yhat_u = _sample(seed, 80 + 40 * seed, 1000, 0.2 + 0.1 * seed)
    ours = ppi_mean(y, yhat, yhat_u, lam=lam, confidence=0.95)
    point = np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam))[0]
    low, high = (np.ravel(b)[0] for b in ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=lam))
    assert ours.estimate == pytest.approx(point, rel=1e-12)
    assert ours.ci_low == pytest.approx(low, rel=1e-10)
    assert ours.ci_high == pytest.approx(high, rel=1e-10)


def test_stratified_matches_per_stratum_ppi_py() -> None:
    strata = [_sample(10, 40, 300, 0.1), _sample(11, 30, 900, 0.5), _sample(12, 25, 120, 0.3)]
    result = share_estimates([Stratum(*s) for s in strata])
    sizes = np.array([len(s[0]) + len(s[2]) for s in strata], dtype=float)
    w = sizes / sizes.sum()
    points, variances = [], []
    for y, yhat, yhat_u in strata:
        points.append(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u))[0])
        low, high = (np.ravel(b)[0] for b in ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05))
        variances.append(((high - low) / (2 * Z95)) ** 2)
    theta = float(w @ np.array(points))
    se = math.sqrt(float((w**2) @ np.array(variances)))
    assert result.corrected.estimate == pytest.approx(theta, rel=1e-10)
    assert result.corrected.se == pytest.approx(se, rel=1e-8)
    # 25 positives of 95 reviewed (>= 10 each way): Wald's interval, ppi_py's standard error
    assert result.corrected.ci_method == "wald"
    assert result.corrected.ci_low == pytest.approx(theta - Z95 * se, rel=1e-8)
    assert result.corrected.ci_high == pytest.approx(theta + Z95 * se, rel=1e-8)
    assert result.n_units == int(sizes.sum())
    assert result.n_reviewed == 95
    # human-only: stratified mean of the reviewed codes
    human = float(w @ np.array([s[0].mean() for s in strata]))
    assert result.human.estimate == pytest.approx(human)
    # judge-only: the judge's share over every unit of the cell
    judge_ones = sum(s[1].sum() + s[2].sum() for s in strata)
    assert result.judge.estimate == pytest.approx(judge_ones / sizes.sum())


def test_share_estimates_effective_n_and_clipping() -> None:
    result = share_estimates([Stratum(Y, YHAT, YHAT_U)])
    var_h = 0.24 / 5
    assert result.effective_n == pytest.approx(5 * var_h / result.corrected.se**2)
    # human-only with lam = 0 and one stratum: Wilson's interval for 3/5, from statsmodels
    low, high = proportion_confint(3, 5, alpha=0.05, method="wilson")
    assert (result.human.ci_low, result.human.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert result.human.ci_method == "score"
    # 3 of 5 reviewed units carry the code (< 10): the corrected share gets the score interval
    assert result.corrected.ci_method == "score"
    assert result.warning is not None and "fewer than 10" in result.warning


def test_few_positives_corrected_score_interval_by_hand() -> None:
    # The 5 + 8 fixture, PPI++ (lam = 16/175 as in test_ppi_plus_plus_lambda_by_hand):
    # t = 0.6 - 0.225 lam. The score bounds solve (t - theta)^2 = z^2 V(theta) with
    # V(theta) = lam^2 var_u / N + (theta (1 - theta) - 2 lam (p11 - theta q) + lam^2 var_h) / n,
    # var_u = 15/64, N = 8, n = 5, p11 = 2/5, q = 3/5, var_h = 6/25. Expanded:
    # a theta^2 + b theta + c = 0 with a = 1 + z^2/n, b = -(2t + z^2 (1 + 2 lam q) / n),
    # c = t^2 - z^2 (lam^2 var_u / N + (lam^2 var_h - 2 lam p11) / n).
    lam, z, n = 16 / 175, Z95, 5
    t = 0.6 - 0.225 * lam
    a = 1 + z**2 / n
    b = -(2 * t + z**2 * (1 + 2 * lam * 0.6) / n)
    c = t**2 - z**2 * (lam**2 * (15 / 64) / 8 + (lam**2 * 0.24 - 2 * lam * 0.4) / n)
    root = math.sqrt(b * b - 4 * a * c)
    low, high = (-b - root) / (2 * a), (-b + root) / (2 * a)
    assert 0 < low < t < high < 1  # neither bound is clipped here
    result = share_estimates([Stratum(Y, YHAT, YHAT_U)])
    assert result.lam == pytest.approx(lam)
    assert result.corrected.estimate == pytest.approx(t)
    assert result.corrected.ci_low == pytest.approx(low, rel=1e-12)
    assert result.corrected.ci_high == pytest.approx(high, rel=1e-12)


def _cell(positives: int, n: int = 40, big_n: int = 400) -> Stratum:
    # a judge that agrees with the human on all but one reviewed unit of each kind
    y = [1.0] * positives + [0.0] * (n - positives)
    yhat = [0.0] + [1.0] * (positives - 1) + [1.0] + [0.0] * (n - positives - 1)
    yhat_u = [1.0] * (big_n * positives // n) + [0.0] * (big_n - big_n * positives // n)
    return Stratum(y, yhat, yhat_u)


@pytest.mark.parametrize(
    ("positives", "method", "note"),
    [(9, "score", "carry"), (10, "wald", None), (30, "wald", None), (31, "score", "lack")],
)
def test_interval_rule_at_ten_codes(positives: int, method: str, note: str | None) -> None:
    # 40 reviewed units: score interval when fewer than 10 carry (or lack) the code, else Wald
    cell = _cell(positives)
    result = share_estimates([cell])
    assert result.corrected.ci_method == method
    if note is None:
        assert result.warning is None
        # the Wald path is ppi_py's interval (clipped to [0, 1])
        low, high = (
            np.ravel(v)[0]
            for v in ppi_py.ppi_mean_ci(
                np.array(cell.y), np.array(cell.yhat), np.array(cell.yhat_unlabeled), alpha=0.05
            )
        )
        assert result.corrected.ci_low == pytest.approx(max(0.0, low), rel=1e-10)
        assert result.corrected.ci_high == pytest.approx(min(1.0, high), rel=1e-10)
    else:
        assert result.warning is not None
        assert f"fewer than 10 reviewed units {note} the code: score interval" in result.warning


def test_good_judge_gains_effective_sample_size() -> None:
    y, yhat, yhat_u = _sample(5, 200, 5000, 0.3)
    result = share_estimates([Stratum(y, yhat, yhat_u)])
    assert result.corrected.se < result.human.se
    assert result.effective_n > 200
    assert result.warning is None


def test_binary_counts_give_the_same_moments() -> None:
    counts = Moments.from_binary_counts(
        both=2, human_only=1, judge_only=1, n=5, n_unlabeled=8, unlabeled_positive=3
    )
    arrays = Moments.from_arrays(Y, YHAT, YHAT_U)
    for name in Moments.__dataclass_fields__:
        assert float(getattr(counts, name)) == float(getattr(arrays, name)), name
    assert float(tuned_lambda(counts)) == pytest.approx(16 / 175)


def test_vectorised_over_replicates() -> None:
    samples = [_sample(s, 50, 400, 0.25) for s in range(4)]
    stacked = Moments(
        **{
            name: np.array([float(getattr(Moments.from_arrays(*s), name)) for s in samples])
            for name in Moments.__dataclass_fields__
        }
    )
    est = ppi(stacked)
    for i, s in enumerate(samples):
        assert est.estimate[i] == pytest.approx(ppi_mean(*s).estimate)
    both = combine_strata(classical(stacked), [1, 1, 1, 1], axis=0)
    assert float(both.estimate) == pytest.approx(np.mean([s[0].mean() for s in samples]))


def test_no_unreviewed_units_falls_back_to_classical() -> None:
    result = ppi_mean(Y, YHAT, [])
    assert result.lam == 0.0
    assert result.estimate == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("strata", "message"),
    [
        ([Stratum([1], [1], [0, 1])], "fewer than 2 reviewed"),
        ([Stratum([1, 0], [1], [0])], "one judge code per reviewed unit"),
        ([Stratum([1, float("nan")], [1, 0], [0])], "finite"),
        ([Stratum([], [], [])], "no units"),
        ([Stratum([1, 2], [1, 0], [0])], "0/1 codes"),
    ],
)
def test_bad_input(strata: list[Stratum], message: str) -> None:
    with pytest.raises(StatisticsError, match=message):
        share_estimates(strata)


def test_score_interval_by_hand_for_ppi() -> None:
    # One stratum, lam = 1 (PPI): the bounds solve (t - theta)^2 = z^2 V(theta) with
    # V(theta) = var_u / N + (theta (1 - theta) - 2 (p11 - theta q) + var_h) / n,
    # t = 3/8, var_u = 15/64, N = 8, n = 5, p11 = 2/5, q = 3/5, var_h = 6/25.
    m = Moments.from_arrays(Y, YHAT, YHAT_U)
    est = ppi(m, lam=1.0)
    low_a, high_a = score_interval(m, est, 1.0, Z95, axis=0)
    result = {"low": float(low_a), "high": float(high_a)}

    def gap(theta: float) -> float:
        v = 15 / 64 / 8 + (theta * (1 - theta) - 2 * (0.4 - theta * 0.6) + 0.24) / 5
        return (3 / 8 - theta) ** 2 - Z95**2 * v

    assert result["low"] > 0
    assert gap(result["low"]) == pytest.approx(0, abs=1e-12)
    # the upper root lies above 1 (1 itself is inside the region), so the bound is clipped
    assert gap(1.0) < 0
    assert result["high"] == 1.0


def test_constant_human_codes_never_give_a_zero_width_interval() -> None:
    # No reviewed unit carries the code, the judge gave it to one unreviewed unit: lam = 0,
    # the corrected share is the human-only 0/20 with Wilson's interval, not [0, 0].
    result = share_estimates([Stratum([0] * 20, [0] * 19 + [1], [1] + [0] * 80)])
    assert result.lam == 0
    low, high = proportion_confint(0, 20, alpha=0.05, method="wilson")
    assert result.corrected.estimate == 0
    assert (result.corrected.ci_low, result.corrected.ci_high) == (
        pytest.approx(low, abs=1e-12),
        pytest.approx(high),
    )
    assert result.corrected.ci_method == "score"
    assert result.warning == "the reviewed units all have the same human code"
