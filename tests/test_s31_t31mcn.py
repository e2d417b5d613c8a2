"""Session 31 (t31mcn): the agreement interval's method names the method of each bound;
McNemar's mid-p where b = c is Fagerland et al.'s (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from failcodes.stats.agreement import agreements
from failcodes.stats.classification import mcnemar
from tests.cli_helpers import run_cli


def _effective_cp(shares: list[float]) -> tuple[float, float]:
    """Clopper-Pearson's interval of Korn & Graubard's effective counts of a mean of per-unit
    shares (statsmodels' proportion_confint(method='beta') takes non-integer counts)."""
    x = np.asarray(shares)
    p, se2 = x.mean(), x.var(ddof=1) / x.size
    n_eff = p * (1 - p) / se2
    low, high = proportion_confint(p * n_eff, n_eff, alpha=0.05, method="beta")
    return float(low), float(high)


def test_both_bounds_of_the_effective_counts_are_not_labelled_bootstrap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three raters, 10 units: 7 unanimous, 3 split 2-1 (1 of 3 rater pairs agree): percent
    agreement (7 + 3/3) / 10 = 0.8. se^2 = (7 * 0.2^2 + 3 * (1/3 - 0.8)^2) / (10 * 9) =
    0.933333 / 90 = 0.0103704; n* = 0.8 * 0.2 / se^2 = 15.4286, x* = 12.3429; Clopper-Pearson
    [0.52377, 0.95534] (statsmodels), both wider than BCa's, so both are the interval's. main:
    the same bounds labelled 'bootstrap_bca' with a Monte Carlo error '±0.012' that neither
    bound has."""
    r1 = [1, 1, 1, 1, 0, 0, 0, 1, 0, 1]
    r2 = [1, 1, 1, 1, 0, 0, 0, 1, 0, 0]
    r3 = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0]
    table = tmp_path / "r.csv"
    table.write_text(
        "item,r1,r2,r3\n"
        + "".join(f"{i},{a},{b},{c}\n" for i, (a, b, c) in enumerate(zip(r1, r2, r3, strict=True)))
    )
    shares = [1.0] * 7 + [1 / 3] * 3
    assert np.var(shares, ddof=1) / 10 == pytest.approx(0.933333 / 90, rel=1e-6)
    low, high = _effective_cp(shares)
    assert (round(low, 5), round(high, 5)) == (0.52377, 0.95534)
    code, out, err = run_cli(["agree", str(table), "--stat", "percent", "--format", "json"], capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(0.8)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-9)
    assert row["ci_method"] == "clopper_pearson_effective"  # main: bootstrap_bca
    assert row["ci_mc_error"] is None  # main: 0.012
    code, out, err = run_cli(["agree", str(table), "--stat", "percent"], capsys)
    assert code == 0, err
    assert "[0.524, 0.955] clopper_pearson_effective" in out  # main: bootstrap_bca ±0.012
    assert "bootstrap_bca" not in out and "±" not in out


def _one_split_of_twenty(extra: bool) -> np.ndarray:
    """20 units, 3 raters: u0-u9 coded 1, u10-u19 coded 0; r3 says 0 on u0 (split 2-1); with
    ``extra`` also on u1, and r1 says 1 on u18 (3 split units)."""
    codes = np.zeros((20, 3))
    codes[:10] = 1.0
    codes[0, 2] = 0.0
    if extra:
        codes[1, 2] = 0.0
        codes[18, 0] = 1.0
    return codes


def test_one_bound_of_the_effective_counts_names_each_bounds_method() -> None:
    """One split unit of 20: p = (19 + 1/3) / 20 = 0.966667; se^2 = (19 * (1/30)^2 + (1/3 -
    0.966667)^2) / (20 * 19) = 0.422222 / 380 = 1/900, so se = 1/30; n* = 0.966667 * 0.033333
    * 900 = 29.0, x* = 28.033. Clopper-Pearson's lower bound 0.82413 is below BCa's; its upper
    0.99913 is not above BCa's 1.0 (resamples without the split unit): the lower bound is the
    effective counts', the upper the bootstrap's. main: 'bootstrap_bca' for both.
    Three split units (p = 0.9): Clopper-Pearson's upper bound is the interval's, BCa's lower
    one is wider than its own."""
    shares = [1 / 3] + [1.0] * 19
    assert np.var(shares, ddof=1) / 20 == pytest.approx(1 / 900)
    low, high = _effective_cp(shares)
    assert round(low, 5) == 0.82413 and high < 1.0
    (pct,) = agreements(
        _one_split_of_twenty(False), ["percent"], categories=[0.0, 1.0], n_bootstrap=2000, seed=0
    )
    assert pct.value == pytest.approx(0.966667, abs=1e-6)
    assert pct.ci_low == pytest.approx(low, abs=1e-9)
    assert pct.ci_high == 1.0
    assert pct.ci_method == "low clopper_pearson_effective, high bootstrap_bca"
    # the ± is the upper bound's alone: BCa's upper bound is 1.0 in every batch of 200
    # resamples (a resample without u0, (19/20)^20 = 36% of them, reads 1.0, far above the
    # 2.5% tail), so 0.0; main: 0.0067, the resampled lower bound's, which the interval does
    # not show
    assert pct.ci_mc_error == 0.0

    low3, high3 = _effective_cp([1 / 3] * 3 + [1.0] * 17)
    (pct3,) = agreements(
        _one_split_of_twenty(True), ["percent"], categories=[0.0, 1.0], n_bootstrap=2000, seed=0
    )
    assert pct3.value == pytest.approx(0.9)
    assert pct3.ci_high == pytest.approx(high3, abs=1e-9)
    assert pct3.ci_low is not None and pct3.ci_low < low3
    assert pct3.ci_method == "low bootstrap_bca, high clopper_pearson_effective"


def test_no_bootstrap_names_wald_for_the_bound_it_gave() -> None:
    """--bootstrap 0, the same one split unit of 20: Wald 0.966667 + 1.96 / 30 clips at 1.0 (it
    holds 0.99913), 0.966667 - 1.96 / 30 = 0.90133 is narrower than 0.82413: 'low
    clopper_pearson_effective, high wald'. main: 'wald'."""
    low, _ = _effective_cp([1 / 3] + [1.0] * 19)
    (pct,) = agreements(_one_split_of_twenty(False), ["percent"], categories=[0.0, 1.0])
    assert (pct.ci_low, pct.ci_high) == (pytest.approx(low, abs=1e-9), 1.0)
    assert pct.ci_method == "low clopper_pearson_effective, high wald"


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        # Fagerland, Lydersen & Laake 2013 (BMC Med Res Methodol 13:91), supplement "How to
        # calculate the McNemar mid-p test": "If n12 = n21, the mid-p-value equals 1 - 0.5
        # binompdf(n12, n, 0.5)" (R contingencytables' McNemar_midP_test_paired_2x2 alike):
        (1, 1, 1 - 0.5 * 2 / 4),  # 0.75
        (3, 3, 1 - 0.5 * 20 / 64),  # 0.84375
        # else 2 binomcdf(min, n, .5) - binompdf(min, n, .5): 2 * 6/32 - 5/32 = 7/32
        (1, 4, 7 / 32),  # 0.21875
    ],
)
def test_mcnemar_mid_p_is_fagerlands_where_b_equals_c(b: int, c: int, p: float) -> None:
    """A guard (passes on main too: the tool was right; 2 [P(X <= b) - P(X = b) / 2] = 1.0 at
    b = c is not the paper's rule)."""
    first = [1] * b + [0] * c + [1, 0]
    second = [0] * b + [1] * c + [1, 0]
    result = mcnemar(first, second)
    assert result.test == "mcnemar_midp"
    assert result.p_value == pytest.approx(p, abs=1e-12)
