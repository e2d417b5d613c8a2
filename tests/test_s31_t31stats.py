"""Session 31 (t31stats): intervals where researchers use them (issue 30)."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from failcodes.stats.agreement import agreements


def _three_raters_three_splits() -> np.ndarray:
    """100 units, 3 raters, binary code: r1 alone gives it on u1-u3 (split 2-1), the rest 0."""
    codes = np.zeros((100, 3))
    codes[:3, 0] = 1.0
    return codes


def test_percent_and_bp_of_three_raters_hold_the_skew_of_few_split_units() -> None:
    """Three raters split 2-1 on 3 of 100 units (a code seen on 3 units, the seed's low
    prevalence): each split unit agrees on 1 of its 3 pairs, so percent agreement is a mean of
    per-unit shares, not a count, and had BCa's interval [0.953, 0.993] (2,000 resamples,
    seed 0): too tight on both sides (bench/bench_s31_stats.py part 2: such intervals covered
    0.910, Brennan-Prediger's 0.894, at 100 units, prevalence 0.02, with no warning; 0.849 at 50
    units, the upper bound below the truth).

    By hand: p_a = (97 * 1 + 3 * 1/3) / 100 = 0.98. Its standard error (mean of the per-unit
    shares): deviations 0.02 (97 units) and 1/3 - 0.98 = -0.646667 (3 units): sum of squares
    97 * 0.0004 + 3 * 0.418178 = 1.293333; / (100 * 99) -> se^2 = 1.306397e-4. Korn &
    Graubard's effective n* = 0.98 * 0.02 / 1.306397e-4 = 150.03, agreeing x* = 0.98 n* =
    147.03 (3.0 effective disagreeing units: the 3 split units). Clopper-Pearson's interval of
    x* of n* (statsmodels' proportion_confint(method='beta'), which takes non-integer counts):
    [0.9427, 0.9959], wider than BCa's on both sides, so it is the interval; Brennan-Prediger
    (q = 2, p_e = 1/2) maps it by 2 p - 1: [0.8853, 0.9917].
    """
    se2 = (97 * 0.02**2 + 3 * (1 / 3 - 0.98) ** 2) / (100 * 99)
    assert se2 == pytest.approx(1.306397e-4, rel=1e-6)
    n_eff = 0.98 * 0.02 / se2
    assert n_eff == pytest.approx(150.03, abs=0.01)
    low_ref, high_ref = proportion_confint(0.98 * n_eff, n_eff, alpha=0.05, method="beta")
    assert (round(low_ref, 4), round(high_ref, 4)) == (0.9427, 0.9959)
    rows = {
        r.statistic: r
        for r in agreements(
            _three_raters_three_splits(),
            ["percent", "brennan_prediger"],
            categories=[0.0, 1.0],
            n_bootstrap=2000,
            seed=0,
        )
    }
    pct, bp = rows["percent"], rows["brennan_prediger"]
    assert pct.value == pytest.approx(0.98)
    assert pct.se == pytest.approx(np.sqrt(se2))
    # main: [0.9533, 0.9933] (BCa)
    assert (pct.ci_low, pct.ci_high) == pytest.approx((low_ref, high_ref), abs=1e-9)
    assert bp.value == pytest.approx(0.96)
    # main: [0.9067, 0.9867]
    assert (bp.ci_low, bp.ci_high) == pytest.approx((2 * low_ref - 1, 2 * high_ref - 1), abs=1e-9)


def test_percent_of_three_raters_without_bootstrap_holds_the_same_interval() -> None:
    """--bootstrap 0: the Wald interval 0.98 -+ 1.96 * 0.011430 = [0.9576, 1.0] (clipped) is
    widened below to the same Clopper-Pearson bound of effective counts as above, 0.9427 (the
    upper bound 1.0 already holds 0.9959). main: 0.9576."""
    (pct,) = agreements(_three_raters_three_splits(), ["percent"], categories=[0.0, 1.0])
    assert pct.ci_method == "low clopper_pearson_effective, high wald"  # (t31mcn)
    assert pct.ci_low == pytest.approx(0.942671, abs=1e-6)
    assert pct.ci_high == 1.0


def test_brennan_prediger_of_two_raters_is_pabaks_exact_interval() -> None:
    """Two raters, binary code, all 6 units agree (3 coded 1 by both, 3 coded 0): Brennan-
    Prediger (q = 2, p_e = 1/2) is PABAK here, 1.0. PABAK's interval is Clopper-Pearson's of 6
    agreeing of 6 mapped by 2 p - 1: lower 0.025 ** (1/6) = exp(ln 0.025 / 6) = 0.540742, so
    2 * 0.540742 - 1 = 0.081484. main: Brennan-Prediger [1.0, 1.0] (BCa, zero width) beside
    PABAK's [0.081, 1.0] in the same table."""
    codes = np.zeros((6, 2))
    codes[:3] = 1.0
    rows = {
        r.statistic: r
        for r in agreements(
            codes, ["pabak", "brennan_prediger"], categories=[0.0, 1.0], n_bootstrap=2000, seed=0
        )
    }
    bp = rows["brennan_prediger"]
    assert bp.value == 1.0
    assert bp.ci_low == pytest.approx(2 * 0.025 ** (1 / 6) - 1, abs=1e-9)
    assert round(bp.ci_low, 6) == 0.081484
    assert bp.ci_high == 1.0
    assert bp.ci_method == "clopper_pearson"
    assert (rows["pabak"].ci_low, rows["pabak"].ci_high) == pytest.approx((bp.ci_low, 1.0))
