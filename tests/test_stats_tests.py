"""System comparison tests and rank diagnostics against statsmodels/scipy and hand values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from failcodes.errors import StatisticsError
from failcodes.stats import classification as cl
from failcodes.stats import tests as st


def _systems(seed: int, n: int = 60, rates=(0.5, 0.6, 0.7, 0.4)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random((n, len(rates))) < np.array(rates)).astype(float)


@pytest.mark.parametrize("seed", range(5))
def test_cochrans_q_matches_statsmodels(seed: int) -> None:
    x = _systems(seed)
    ours = cl.cochrans_q(x)
    ref = sm_cochrans_q(x)
    assert ours.statistic == pytest.approx(ref.statistic, abs=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    assert ours.df == 3


def test_cochrans_q_hand_computed() -> None:
    # 3 systems, 4 units: rows 110, 100, 111, 010. Column totals T = (3, 3, 1), N = 7,
    # row totals L = (2, 1, 3, 1): Q = (k-1)(k sum T^2 - N^2) / (k N - sum L^2)
    # = 2 (3*19 - 49) / (21 - 15) = 16/6.
    x = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 1, 0]])
    assert cl.cochrans_q(x).statistic == pytest.approx(16 / 6)


def test_cochrans_q_undefined_without_mixed_units() -> None:
    res = cl.cochrans_q(np.array([[1, 1], [0, 0]]))
    assert res.statistic is None
    assert res.undefined_reason


@pytest.mark.parametrize("seed", range(5))
def test_mcnemar_matches_statsmodels_exact_and_chi2(seed: int) -> None:
    """Below 25 discordant pairs the mid-p (Fagerland et al. 2013): statsmodels' exact p minus
    the binomial probability of the observed min(b, c) (1 - that / 2 when b = c); above, the
    chi-square without continuity correction, statsmodels' to the last digit."""
    small = _systems(seed, n=20)
    big = _systems(seed, n=400)
    for x, exact in ((small, True), (big, False)):
        a, b = x[:, 0], x[:, 2]
        ours = cl.mcnemar(a, b)
        table = np.array(
            [
                [((a == 1) & (b == 1)).sum(), ((a == 1) & (b == 0)).sum()],
                [((a == 0) & (b == 1)).sum(), ((a == 0) & (b == 0)).sum()],
            ]
        )
        assert (table[0, 1] + table[1, 0] < 25) == exact
        ref = sm_mcnemar(table, exact=exact, correction=False)
        assert ours.test == ("mcnemar_midp" if exact else "mcnemar_chi2")
        if exact:
            b, c = table[0, 1], table[1, 0]
            point = sps.binom.pmf(min(b, c), b + c, 0.5)
            assert ours.statistic == ref.statistic
            assert ours.p_value == pytest.approx(
                ref.pvalue - point if b != c else 1 - point / 2, abs=1e-12
            )
        else:
            assert (ours.statistic, ours.p_value) == (ref.statistic, ref.pvalue)


def test_mcnemar_no_discordant_pairs() -> None:
    res = cl.mcnemar([1, 0, 1], [1, 0, 1])
    assert res.p_value == 1.0  # exact binomial with 0 trials
    assert res.effect == 0.0


def test_pairwise_mcnemar_holm() -> None:
    x = _systems(3, n=50)
    results = cl.pairwise_mcnemar(x, ["a", "b", "c", "d"])
    assert [r.comparison for r in results][:2] == ["a vs b", "a vs c"]
    raw = np.array([r.p_value for r in results])
    # Holm by hand: sort, multiply by (m - rank), running max, cap at 1
    order = np.argsort(raw)
    m = raw.size
    adj = np.minimum(1, np.maximum.accumulate(raw[order] * (m - np.arange(m))))
    expected = np.empty(m)
    expected[order] = adj
    assert [r.p_holm for r in results] == pytest.approx(expected.tolist())


def test_holm_hand_computed() -> None:
    # p = (0.01, 0.04, 0.03): sorted 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 -> max(0.04, 0.06)
    assert st.holm([0.01, 0.04, None, 0.03]) == pytest.approx([0.03, 0.06, None, 0.06])


def _f1(tp: float, fp: float, fn: float) -> float:
    return 2 * tp / (2 * tp + fp + fn)


def test_permutation_f1_matches_naive_loop() -> None:
    rng = np.random.default_rng(8)
    y = (rng.random(120) < 0.4).astype(float)
    pa = np.where(rng.random(120) < 0.85, y, 1 - y)
    pb = np.where(rng.random(120) < 0.7, y, 1 - y)
    res = cl.paired_metric_tests(y, np.column_stack([pa, pb]), ["A", "B"], n_resamples=300, seed=4)
    # naive: regenerate the same swap draws, swap predictions, recompute F1 from scratch
    gen = np.random.default_rng(4)
    swaps = gen.random((300, 120)) < 0.5

    def f1(pred: np.ndarray) -> float:
        return _f1((pred * y).sum(), (pred * (1 - y)).sum(), ((1 - pred) * y).sum())

    observed = f1(pa) - f1(pb)
    null = np.array([f1(np.where(s, pb, pa)) - f1(np.where(s, pa, pb)) for s in swaps])
    p = (1 + (np.abs(null) >= abs(observed) - 1e-12).sum()) / 301
    assert res[0].effect == pytest.approx(observed)
    assert res[0].p_value == pytest.approx(p)
    assert res[0].p_holm == pytest.approx(p)  # a single comparison


def test_bootstrap_recall_interval_and_detects_large_difference() -> None:
    rng = np.random.default_rng(2)
    y = (rng.random(300) < 0.5).astype(float)
    good = np.where(rng.random(300) < 0.95, y, 1 - y)
    bad = np.where(rng.random(300) < 0.6, y, 1 - y)
    same = good.copy()
    res = cl.paired_metric_tests(
        y,
        np.column_stack([good, bad, same]),
        ["g", "b", "s"],
        metric="recall",
        method="bootstrap",
        n_resamples=2000,
        seed=0,
    )
    by = {r.comparison: r for r in res}
    assert by["g vs b"].p_holm is not None and by["g vs b"].p_holm < 0.01
    assert by["g vs b"].ci_low is not None and by["g vs b"].ci_low > 0
    assert by["g vs s"].effect == 0.0
    assert by["g vs s"].p_value == 1.0


def test_metric_tests_errors() -> None:
    with pytest.raises(StatisticsError, match="0 or 1"):
        cl.paired_metric_tests([1, 0], [[1, 2], [0, 0]])
    with pytest.raises(StatisticsError, match="one value per unit"):
        cl.paired_metric_tests([1, 0, 1], [[1, 1], [0, 0]])
    with pytest.raises(StatisticsError, match="unknown metric"):
        cl.paired_metric_tests([1, 0], [[1, 1], [0, 0]], metric="precision")  # type: ignore[arg-type]


def test_recall_undefined_without_positives() -> None:
    res = cl.paired_metric_tests([0, 0, 0], [[1, 0], [0, 0], [0, 1]], metric="recall")
    assert res[0].p_value is None
    assert "no positive" in (res[0].undefined_reason or "")


def test_mann_whitney_hand_computed_and_scipy() -> None:
    x, y = [1, 2, 3, 4, 5], [3, 4, 5, 6, 7, 8]
    res = st.mann_whitney(x, y)
    # U_x = 0.5 (3=3) + 1.5 (4>3, 4=4) + 2.5 (5>3,4; 5=5) = 4.5; r = 2*4.5/30 - 1 = -0.7
    assert res.statistic == 4.5
    assert res.effect == pytest.approx(-0.7)
    assert res.p_value == pytest.approx(sps.mannwhitneyu(x, y).pvalue)
    assert res.z is not None and res.z < 0


def test_spearman_hand_computed() -> None:
    # ranks differ by (1, 1, 1, 1, 0): rho = 1 - 6*4 / (5*(25-1)) = 0.8
    res = st.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert res.statistic == pytest.approx(0.8)
    assert res.p_value == pytest.approx(sps.spearmanr([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]).pvalue)


def test_spearman_constant_is_undefined() -> None:
    res = st.spearman([1, 1, 1, 1], [1, 2, 3, 4])
    assert res.statistic is None
    assert "constant" in (res.undefined_reason or "")
