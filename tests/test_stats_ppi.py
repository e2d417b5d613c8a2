"""Prediction-powered inference: hand-computed values and the ppi_py reference implementation."""

from __future__ import annotations

import math

import numpy as np
import ppi_py  # reference implementation, ppi-python 0.2.3 (test-only dependency)
import pytest
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from failcodes.errors import StatisticsError
from failcodes.stats.ppi import (
    Moments,
    Posterior,
    Stratum,
    beta_bounds,
    classical,
    combine_strata,
    posterior,
    ppi,
    ppi_mean,
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
    # the point estimate and its standard error are ppi_py's, combined over strata
    theta = float(w @ np.array(points))
    se = math.sqrt(float((w**2) @ np.array(variances)))
    assert result.corrected.estimate == pytest.approx(theta, rel=1e-10)
    assert result.corrected.se == pytest.approx(se, rel=1e-8)
    assert result.corrected.ci_method == "beta"
    assert result.corrected.ci_low < theta < result.corrected.ci_high
    assert result.n_units == int(sizes.sum())
    assert result.n_reviewed == 95
    # human: stratified mean of the reviewed codes
    human = float(w @ np.array([s[0].mean() for s in strata]))
    assert result.human.estimate == pytest.approx(human)
    # judge-only: the judge's share over every unit of the cell
    judge_ones = sum(s[1].sum() + s[2].sum() for s in strata)
    assert result.judge.estimate == pytest.approx(judge_ones / sizes.sum())


def test_posterior_moments_by_hand() -> None:
    # The 5 + 8 fixture: cells (human, judge) (1,1) 2, (1,0) 1, (0,1) 1, (0,0) 1. Each gets
    # 1/4: Dirichlet(2.25, 1.25, 1.25, 1.25), size 6. With lam the correction y - lam yhat is
    # 1 - lam, 1, -lam, 0 in those cells: mean sum m_c v_c, variance sum m_c (v_c - mu)^2 / 7,
    # third central moment 2 sum m_c (v_c - mu)^3 / (7 * 8). The unreviewed judge share:
    # Beta(3 + 1/2, 5 + 1/2), mean 3.5/9, variance 3.5 * 5.5 / (9^2 * 10), third moment
    # 2 * 3.5 * 5.5 * (5.5 - 3.5) / (9^3 * 10 * 11).
    lam = 0.4
    m = Moments.from_arrays(Y, YHAT, YHAT_U)
    shares = np.array([2.25, 1.25, 1.25, 1.25]) / 6
    values = np.array([1 - lam, 1, -lam, 0])
    mu_r = float(shares @ values)
    var_r = float(shares @ (values - mu_r) ** 2) / 7
    third_r = 2 * float(shares @ (values - mu_r) ** 3) / 56
    mu_u, var_u = 3.5 / 9, 3.5 * 5.5 / (81 * 10)
    third_u = 2 * 3.5 * 5.5 * 2.0 / (729 * 10 * 11)
    post = posterior(m, lam)
    assert float(post.mean) == pytest.approx(lam * mu_u + mu_r, rel=1e-12)
    assert float(post.variance) == pytest.approx(lam**2 * var_u + var_r, rel=1e-12)
    assert float(post.third) == pytest.approx(lam**3 * third_u + third_r, rel=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "scale", "flip"),
    [
        (3.5, 2.5, 1.0, False),
        (2.0, 30.0, 0.4, False),
        (3.0, 20.0, 0.3, True),
        (0.5, 40.5, 1.0, False),
    ],
)
def test_beta_bounds_recover_a_scaled_beta(a: float, b: float, scale: float, flip: bool) -> None:
    # A posterior that *is* scale * Beta(a, b) (or 1 minus it) gets that distribution's
    # quantiles back: the fit matches mean, variance and skewness (scipy's moments).
    mean, var, skew = (float(v) for v in beta_dist.stats(a, b, scale=scale, moments="mvs"))
    third = skew * var**1.5
    post = Posterior(
        mean=np.array(1 - mean if flip else mean),
        variance=np.array(var),
        third=np.array(-third if flip else third),
    )
    low, high = beta_bounds(post, 0.95)
    q_low, q_high = beta_dist.ppf([0.025, 0.975], a, b, scale=scale)
    if flip:
        q_low, q_high = 1 - q_high, 1 - q_low
    assert float(low) == pytest.approx(q_low, rel=1e-6)
    assert float(high) == pytest.approx(q_high, rel=1e-6)


def _cell(positives: int, n: int = 40, big_n: int = 400, misses: int = 1) -> Stratum:
    # a judge that agrees with the human on all but ``misses`` reviewed units of each kind
    y = [1.0] * positives + [0.0] * (n - positives)
    yhat = (
        [0.0] * misses
        + [1.0] * (positives - misses)
        + [1.0] * misses
        + [0.0] * (n - positives - misses)
    )
    yhat_u = [1.0] * (big_n * positives // n) + [0.0] * (big_n - big_n * positives // n)
    return Stratum(y, yhat, yhat_u)


def test_human_share_of_one_stratum_is_jeffreys_interval() -> None:
    # lam = 0, one stratum: the posterior of the share is Beta(x + 1/2, n - x + 1/2)
    result = share_estimates([_cell(12, misses=5)])
    low, high = beta_dist.ppf([0.025, 0.975], 12.5, 28.5)
    assert result.human.estimate == pytest.approx(12 / 40)
    assert (result.human.ci_low, result.human.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert result.human.ci_method == "beta"


def test_corrected_interval_as_reported_by_hand() -> None:
    # 40 reviewed, 16 carry the code, the judge misses 5 of them and adds 5: lam from PPI++,
    # the interval from posterior() and beta_bounds() (each checked above), widened to hold
    # the estimate; 10 disagreements (>= 10), 16 with and 24 without the code (>= 15): no note.
    cell = _cell(16, misses=5)
    result = share_estimates([cell])
    m = Moments.from_arrays(cell.y, cell.yhat, cell.yhat_unlabeled)
    lam = float(tuned_lambda(m))
    assert result.lam == pytest.approx(lam)
    low, high = beta_bounds(posterior(m, lam), 0.95)
    assert result.corrected.ci_low == pytest.approx(min(float(low), result.corrected.estimate))
    assert result.corrected.ci_high == pytest.approx(max(float(high), result.corrected.estimate))
    assert result.disagreements == 10
    assert result.warning is None


def test_few_disagreements_are_noted() -> None:
    # an accurate judge: 2 of 40 reviewed units disagree -> the interval carries a note
    # (16 with and 24 without the code: that part of the rule is silent)
    result = share_estimates([_cell(16, misses=1)])
    assert result.disagreements == 2
    assert result.warning is not None
    assert result.warning == "coverage not assured: 2 disagreements (< 10)"
    # still a real interval around the estimate, narrower than the human-only one
    assert result.corrected.ci_low < result.corrected.estimate < result.corrected.ci_high
    assert result.corrected.ci_high - result.corrected.ci_low < (
        result.human.ci_high - result.human.ci_low
    )


def test_few_positives_are_noted() -> None:
    result = share_estimates([_cell(3, misses=1, n=60)])
    assert result.warning is not None
    assert "3 reviewed with the code (< 15)" in result.warning


def test_good_judge_gains_effective_sample_size() -> None:
    y, yhat, yhat_u = _sample(5, 200, 5000, 0.3)
    result = share_estimates([Stratum(y, yhat, yhat_u)])
    assert result.corrected.ci_high - result.corrected.ci_low < (
        result.human.ci_high - result.human.ci_low
    )
    assert result.effective_n > 200
    # one stratum: the human estimate gains nothing from strata
    assert result.effective_n_human == pytest.approx(200, rel=0.02)
    assert result.warning is None


def test_judge_code_strata_show_their_gain_in_effective_n() -> None:
    # Strata by the judge's code: within each the judge's code is constant, so lam = 0 and
    # the corrected share is the judge-stratified human one; its effective n says what the
    # strata (the judge) added: 20 + 20 reviewed of 100 + 900 units, human shares 18/20 and
    # 1/20 -> 0.1 * 0.9 + 0.9 * 0.05 = 0.135.
    pos = Stratum([1.0] * 18 + [0.0] * 2, [1.0] * 20, [1.0] * 80)
    neg = Stratum([1.0] * 1 + [0.0] * 19, [0.0] * 20, [0.0] * 880)
    result = share_estimates([pos, neg])
    assert result.lam == 0
    assert result.human.estimate == pytest.approx(0.135)
    assert result.corrected.estimate == pytest.approx(0.135)
    assert result.effective_n_human == pytest.approx(result.effective_n)
    # n_eff = 40 x (Jeffreys variance of 19 of 40) / (posterior variance of the strata):
    # Beta(19.5, 21.5) variance 19.5 * 21.5 / (41^2 * 42); per stratum the share's posterior
    # is Beta(18.5, 2.5) and Beta(1.5, 19.5) (prior 1/4 on each of 4 cells, 2 with y = 1);
    # V = 0.1^2 V_1 + 0.9^2 V_0 + between-strata term (0.1 (M_1 - M)^2 + 0.9 (M_0 - M)^2) / 1000
    m1, m0 = 18.5 / 21, 1.5 / 21
    v1, v0 = 18.5 * 2.5 / (21**2 * 22), 1.5 * 19.5 / (21**2 * 22)
    mean = 0.1 * m1 + 0.9 * m0
    var = 0.01 * v1 + 0.81 * v0 + (0.1 * (m1 - mean) ** 2 + 0.9 * (m0 - mean) ** 2) / 1000
    srs = 19.5 * 21.5 / (41**2 * 42)
    assert result.effective_n_human == pytest.approx(40 * srs / var)


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
        ([Stratum([1] * 10, [1] * 10, [0, 1]), Stratum([1], [1], [0, 1])], "fewer than 2 reviewed"),
        ([Stratum([1, 0], [1], [0])], "one judge code per reviewed unit"),
        ([Stratum([1, float("nan")], [1, 0], [0])], "finite"),
        ([Stratum([], [], [])], "no units"),
        ([Stratum([1, 2], [1, 0], [0])], "0/1 codes"),
        # a cell of 5 units with 2 reviewed printed "12.5 [12.5, 100.0]" with n_eff 32 (issue 26)
        ([Stratum([0, 1], [0, 1], [0, 0, 1])], "too small to estimate: 2 reviewed unit"),
    ],
)
def test_bad_input(strata: list[Stratum], message: str) -> None:
    with pytest.raises(StatisticsError, match=message):
        share_estimates(strata)


def test_tiny_stratum_is_noted() -> None:
    # a stratum of 5 units with 2 reviewed beside a 40-reviewed one: estimated, with a note
    result = share_estimates([Stratum([0, 1], [0, 1], [0, 0, 1]), _cell(12, misses=5)])
    assert result.warning is not None
    assert "a stratum < 10 reviewed" in result.warning


def test_constant_human_codes_never_give_a_zero_width_interval() -> None:
    # No reviewed unit carries the code, the judge gave it to one unreviewed unit: lam = 0,
    # the corrected share is the human-only 0/20 with Jeffreys' interval widened to hold 0.
    result = share_estimates([Stratum([0] * 20, [0] * 19 + [1], [1] + [0] * 80)])
    assert result.lam == 0
    high = beta_dist.ppf(0.975, 0.5, 20.5)
    assert result.corrected.estimate == 0
    assert result.corrected.ci_low == 0
    assert result.corrected.ci_high == pytest.approx(high)
    assert result.warning is not None
    assert result.warning.startswith("coverage not assured: one human code only")


def test_a_stratum_reviewed_in_full_is_a_census_however_small() -> None:
    """A 1-unit stratum drawn 1/1 (plan by system x code) must not void its whole cell.

    Stratum A: 20 units, 12 reviewed (3 coded 1, the judge agreeing on each), 8 unreviewed the
    judge coded 0. Stratum B: 1 unit, reviewed (coded 1 by both), none unreviewed.
    By hand: human = 20/21 x 3/12 + 1/21 x 1 = 6/21 = 0.285714.
    Corrected: in A, lam = cov / ((1 + n/N) var_all) = 0.1875 / (2.5 x (3 - 9/20)/19) = 0.5588,
    theta_A = 0.25 + 0.5588 x (0 - 0.25) = 0.110294 (ppi_py's ppi_mean_pointestimate gives
    0.1102941); B is known (lam 0): 1. Total 20/21 x 0.110294 + 1/21 = 0.152661.
    (Before: 'too small to estimate: 1 stratum/strata of the cell have fewer than 2 reviewed'.)
    """
    y = [1.0] * 3 + [0.0] * 9
    est = share_estimates(
        [
            Stratum(y=y, yhat=list(y), yhat_unlabeled=[0.0] * 8),
            Stratum(y=[1.0], yhat=[1.0], yhat_unlabeled=[]),
        ]
    )
    assert est.human.estimate == pytest.approx(6 / 21)
    assert est.corrected.estimate == pytest.approx(0.1526611, abs=1e-6)
    assert est.corrected.ci_low <= est.corrected.estimate <= est.corrected.ci_high
    # a 1-unit stratum with unreviewed units left is still refused
    with pytest.raises(StatisticsError, match="fewer than 2"):
        share_estimates(
            [
                Stratum(y=y, yhat=list(y), yhat_unlabeled=[0.0] * 8),
                Stratum(y=[1.0], yhat=[1.0], yhat_unlabeled=[0.0]),
            ]
        )


def test_ppi_mean_says_when_its_wald_interval_may_not_cover() -> None:
    # Outside check (i35red): 5 audited units, all coded 1 by the human and the judge, beside
    # 200 unaudited units the judge codes about half 1. ppi_py gives lam 0 (y is constant),
    # estimate 1, se 0: the interval [1, 1] from 5 units. The numbers stay ppi_py's; the
    # result now says the interval may not cover (it said nothing).
    u = np.random.default_rng(0).integers(0, 2, 200)
    result = ppi_mean(np.ones(5), np.ones(5), u)
    assert (result.estimate, result.se, result.ci_low, result.ci_high) == (1.0, 0.0, 1.0, 1.0)
    assert result.warning == (
        "coverage not assured: zero-width interval from 5 labelled unit(s), one human code "
        "only, 0 disagreements (< 10), a stratum < 10 reviewed"
    )
    # The hand fixture: 5 reviewed, y = [1, 0, 1, 1, 0] (2 without the code), 2 disagreements.
    assert ppi_mean(Y, YHAT, YHAT_U).warning == (
        "coverage not assured: 2 reviewed without the code (< 15), 2 disagreements (< 10), "
        "a stratum < 10 reviewed"
    )
    # 200 reviewed, 100 with the code, 30 disagreements (15 each way): no reason applies.
    y = np.array([1.0] * 100 + [0.0] * 100)
    yhat = y.copy()
    yhat[:15], yhat[100:115] = 0.0, 1.0
    assert ppi_mean(y, yhat, u).warning is None
    # Not 0/1 values: only the size of the labelled sample (and a zero width) is judged.
    assert ppi_mean([0.5, 2.0, 3.1], [0.4, 2.2, 3.0], [1.0, 2.0]).warning == (
        "coverage not assured: 3 labelled unit(s) (< 10)"
    )
    values = np.linspace(0.0, 3.0, 12)
    assert ppi_mean(values, values + 0.1, [1.0, 2.0]).warning is None
