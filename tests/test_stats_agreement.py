"""Agreement coefficients against published values and independent implementations."""

from __future__ import annotations

import csv
import itertools
from fractions import Fraction

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from failcodes import bundled
from failcodes.errors import StatisticsError
from failcodes.ratingsio import read_ratings_frame
from failcodes.stats import agreement as ag
from failcodes.stats.bootstrap import resampling_weights
from tests.conftest import reference_data

REF = ("agreement-reference",)


def _load(name: str) -> np.ndarray:
    path = reference_data(*REF, name)
    with path.open() as fh:
        rows = list(csv.reader(fh))[1:]
    return np.array([[float(v) if v else np.nan for v in row[1:]] for row in rows])


# ----------------------------------------------------------------- published worked examples

EX_A = "krippendorff2011_exampleA_binary_2coders_10units.csv"
EX_B = "krippendorff2011_exampleB_nominal_2coders_12units.csv"
EX_C = "krippendorff2011_exampleC_4coders_12units_missing.csv"
WIKI = "wikipedia_krippendorff_3coders_15units.csv"

PUBLISHED_ALPHA = [
    # Krippendorff K. (2011) "Computing Krippendorff's Alpha-Reliability", example A
    (EX_A, "nominal", 0.095),
    # Krippendorff (2011), example B
    (EX_B, "nominal", 0.692),
    # Krippendorff (2011), example C (4 coders, missing data), all four levels
    (EX_C, "nominal", 0.743),
    (EX_C, "ordinal", 0.815),
    (EX_C, "interval", 0.849),
    (EX_C, "ratio", 0.797),
    # Wikipedia "Krippendorff's alpha" example; fast-krippendorff docstring gives 0.691358
    (WIKI, "nominal", 0.691),
    # Wikipedia; fast-krippendorff docstring gives 0.810845
    (WIKI, "interval", 0.811),
]


@pytest.mark.parametrize(("name", "level", "published"), PUBLISHED_ALPHA)
def test_krippendorff_published_examples(name: str, level: str, published: float) -> None:
    res = ag.agreement(_load(name), "krippendorff", level=level)
    assert res.value is not None
    assert round(res.value, 3) == published
    assert res.undefined_reason is None


def test_expected_values_csv_all_reproduced() -> None:
    """Every row of expected_values.csv: published to its decimals, and the 7-digit re-run."""
    path = reference_data(*REF, "expected_values.csv")
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 8
    for row in rows:
        level = row["setting"].split("(")[0]
        res = ag.agreement(_load(row["data_file"]), "krippendorff", level=level)
        assert res.value is not None
        assert round(res.value, int(row["decimals_published"])) == float(row["expected"]), row
        assert res.value == pytest.approx(float(row["reproduced_value"]), abs=5e-8), row


def test_wikipedia_six_decimals() -> None:
    # fast-krippendorff docstring (krippendorff/krippendorff.py): 0.691358 and 0.810845
    data = _load(WIKI)
    assert round(ag.agreement(data, "krippendorff").value or 0, 6) == 0.691358
    assert round(ag.agreement(data, "krippendorff", level="interval").value or 0, 6) == 0.810845


# irrCAC 0.4.4 (Python port of Gwet's R irrCAC, run once by hand with categories=[1..5];
# not a dependency: it pins scipy==1.12 and pandas<3) on Krippendorff's example C.
IRRCAC_EX_C = [
    ("fleiss", "none", 0.7611692754, 0.1530192035),
    ("gwet_ac2", "none", 0.7754440681, 0.1429499506),
    ("brennan_prediger", "none", 0.7727272727, 0.1447166199),
    ("fleiss", "linear", 0.8179447671, 0.1485043555),
    ("gwet_ac2", "linear", 0.8587391364, 0.1173290219),
    ("brennan_prediger", "linear", 0.8484848485, 0.1233561245),
    ("fleiss", "quadratic", 0.8649350649, 0.1460336108),
    ("gwet_ac2", "quadratic", 0.9140007236, 0.1039622446),
    ("brennan_prediger", "quadratic", 0.9015151515, 0.1108943750),
]


@pytest.mark.parametrize(("stat", "weights", "value", "se"), IRRCAC_EX_C)
def test_gwet_family_matches_irrcac_example_c(stat: str, weights: str, value: float, se: float):
    res = ag.agreement(_load(EX_C), stat, weights=weights)
    assert res.value == pytest.approx(value, abs=1e-9)
    assert res.se == pytest.approx(se, abs=1e-9)


# A 30 x 3 table with missing ratings (one unit rated once), one string per unit, '.' = NaN.
RANDOM_TABLE = (
    "421 323 333 .2. 4.3 444 444 11. .14 24. 422 42. ..4 1.1 .1. 4.4 111 44. 1.1 22. "
    "12. 222 42. 42. 333 .42 443 222 ..2 334"
)
# irrCAC 0.4.4, categories=[1, 2, 3, 4], same run as above.
IRRCAC_RANDOM = [
    ("fleiss", "none", 0.3806568315, 0.1359118130),
    ("gwet_ac2", "none", 0.4084124377, 0.1237689881),
    ("brennan_prediger", "none", 0.4017094017, 0.1262349851),
    ("fleiss", "quadratic", 0.4206696966, 0.1781525264),
    ("gwet_ac2", "quadratic", 0.4298741081, 0.1594918315),
    ("brennan_prediger", "quadratic", 0.3794871795, 0.1809815272),
]


def _table(spec: str) -> np.ndarray:
    return np.array([[np.nan if c == "." else float(c) for c in unit] for unit in spec.split()])


@pytest.mark.parametrize(("stat", "weights", "value", "se"), IRRCAC_RANDOM)
def test_gwet_family_matches_irrcac_random_missing(stat: str, weights: str, value, se) -> None:
    res = ag.agreement(_table(RANDOM_TABLE), stat, weights=weights, categories=[1, 2, 3, 4])
    assert res.value == pytest.approx(value, abs=1e-9)
    assert res.se == pytest.approx(se, abs=1e-9)
    # irrCAC reports p_a = 0.5512820513 (identity) / 0.8276353276 (quadratic) here
    assert res.observed_agreement == pytest.approx(
        0.5512820513 if weights == "none" else 0.8276353276, abs=1e-9
    )


# ----------------------------------------------------------------- hand-computed examples


def test_kappa_paradox_two_raters_hand_computed() -> None:
    """2x2 table (+,+)=118, (+,-)=5, (-,+)=2, (-,-)=0: the high-agreement paradox.

    By hand: p_o = 118/125; rater 1 says + 123 times, rater 2 120 times.
    Cohen p_e = (123*120 + 2*5)/125^2; AC1 pi_+ = (123+120)/250, p_e = 2 pi_+ (1 - pi_+);
    PABAK = 2 p_o - 1 = Brennan-Prediger for q = 2.
    """
    rows = [[1, 1]] * 118 + [[1, 0]] * 5 + [[0, 1]] * 2
    data = np.array(rows, dtype=float)
    po = Fraction(118, 125)
    pe_k = Fraction(123 * 120 + 2 * 5, 125**2)
    kappa = (po - pe_k) / (1 - pe_k)
    pi = Fraction(243, 250)
    pe_g = 2 * pi * (1 - pi)
    ac1 = (po - pe_g) / (1 - pe_g)
    assert ag.agreement(data, "cohen").value == pytest.approx(float(kappa), abs=1e-12)  # -0.0234
    assert float(kappa) == pytest.approx(-0.02339, abs=1e-5)
    assert ag.agreement(data, "gwet_ac1").value == pytest.approx(float(ac1), abs=1e-12)  # 0.9408
    assert float(ac1) == pytest.approx(0.94078, abs=1e-5)
    assert ag.agreement(data, "pabak").value == pytest.approx(float(2 * po - 1), abs=1e-12)  # 0.888
    assert ag.agreement(data, "brennan_prediger").value == pytest.approx(0.888, abs=1e-12)
    assert ag.agreement(data, "percent").value == pytest.approx(0.944, abs=1e-12)


def test_seed003_four_raters_high_prevalence_hand_computed() -> None:
    """Seed 003's situation: 4 raters agree on 85% of units, 4% are 2-2 ties, label '1'
    is highly prevalent, so Fleiss' kappa is low while AC1 stays high.

    85 units 1111, 11 units 1110, 4 units 1100. Per-unit agreement sum_k n_k(n_k-1)/12:
    1, 1/2, 1/3 -> P = (85 + 11/2 + 4/3)/100 = 551/600. pi_0 = (11 + 8)/400 = 19/400.
    Fleiss p_e = pi_0^2 + pi_1^2; AC1 p_e = 2 pi_0 pi_1 (q = 2).
    """
    rows = [[1, 1, 1, 1]] * 85 + [[1, 1, 1, 0]] * 11 + [[1, 1, 0, 0]] * 4
    data = np.array(rows, dtype=float)
    pa = Fraction(551, 600)
    p0 = Fraction(19, 400)
    pe_f = p0**2 + (1 - p0) ** 2
    pe_g = 2 * p0 * (1 - p0)
    fleiss = ag.agreement(data, "fleiss")
    ac1 = ag.agreement(data, "gwet_ac1")
    assert fleiss.value == pytest.approx(float((pa - pe_f) / (1 - pe_f)), abs=1e-12)
    assert fleiss.value == pytest.approx(0.0975, abs=1e-4)
    assert ac1.value == pytest.approx(float((pa - pe_g) / (1 - pe_g)), abs=1e-12)
    assert ac1.value == pytest.approx(0.9102, abs=1e-4)
    # statsmodels' Fleiss on the subject x category count table agrees
    counts = np.array([[0, 4]] * 85 + [[1, 3]] * 11 + [[2, 2]] * 4)
    assert fleiss.value == pytest.approx(fleiss_kappa(counts), abs=1e-12)


# ----------------------------------------------------------------- independent implementations


def _random_table(rng: np.random.Generator, n: int, m: int, q: int, missing: float) -> np.ndarray:
    truth = rng.integers(0, q, size=n)
    data = np.where(rng.random((n, m)) < 0.6, truth[:, None], rng.integers(0, q, size=(n, m)))
    data = data.astype(float)
    data[rng.random((n, m)) < missing] = np.nan
    return data


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_cohen_matches_sklearn_and_statsmodels(seed: int, weights: str) -> None:
    rng = np.random.default_rng(seed)
    data = _random_table(rng, 80, 2, 4, missing=0.15)
    res = ag.agreement(data, "cohen", weights=weights, categories=[0, 1, 2, 3])
    both = data[~np.isnan(data).any(axis=1)].astype(int)
    sk = cohen_kappa_score(
        both[:, 0], both[:, 1], weights=None if weights == "none" else weights, labels=[0, 1, 2, 3]
    )
    assert res.value == pytest.approx(sk, abs=1e-12)
    assert res.n_units == both.shape[0]
    table = np.zeros((4, 4))
    np.add.at(table, (both[:, 0], both[:, 1]), 1)
    sm = cohens_kappa(table, wt=None if weights == "none" else weights)
    assert res.value == pytest.approx(sm.kappa, abs=1e-12)
    assert res.se == pytest.approx(sm.std_kappa, abs=1e-12)  # Fleiss-Cohen-Everitt 1969


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_matches_statsmodels_complete_data(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    data = _random_table(rng, 60, 5, 3, missing=0.0)
    counts = np.stack([(data == k).sum(axis=1) for k in range(3)], axis=1)
    assert ag.agreement(data, "fleiss").value == pytest.approx(fleiss_kappa(counts), abs=1e-12)


def _naive_gwet(data: np.ndarray, w: np.ndarray, kind: str) -> float:
    """Direct transcription of Gwet (2014) eqs. with loops over units and rater pairs."""
    q = w.shape[0]
    units = [[int(v) for v in row if not np.isnan(v)] for row in data]
    units = [u for u in units if u]
    pa_terms = []
    for u in units:
        if len(u) < 2:
            continue
        pairs = [w[a, b] for a, b in itertools.permutations(u, 2)]
        pa_terms.append(sum(pairs) / len(pairs))
    pa = sum(pa_terms) / len(pa_terms)
    pi = np.array([sum(u.count(k) / len(u) for u in units) / len(units) for k in range(q)])
    if kind == "fleiss":
        pe = float(sum(w[k, j] * pi[k] * pi[j] for k in range(q) for j in range(q)))
    elif kind == "gwet":
        pe = float(w.sum() / (q * (q - 1)) * sum(p * (1 - p) for p in pi))
    else:
        pe = float(w.sum() / q**2)
    return (pa - pe) / (1 - pe)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
def test_gwet_family_matches_naive_loops_with_missing(seed: int, weights: str) -> None:
    rng = np.random.default_rng(200 + seed)
    data = _random_table(rng, 40, 4, 5, missing=0.3)
    w, _ = ag.weight_matrix(weights, 5)
    cats = [0, 1, 2, 3, 4]
    for stat, kind in [("fleiss", "fleiss"), ("gwet_ac2", "gwet"), ("brennan_prediger", "bp")]:
        res = ag.agreement(data, stat, weights=weights, categories=cats)
        assert res.value == pytest.approx(_naive_gwet(data, w, kind), abs=1e-12), stat


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_coincidence_plan_matches_package(seed: int, level: str) -> None:
    """The per-unit coincidence columns used by the bootstrap give the package's alpha."""
    rng = np.random.default_rng(300 + seed)
    data = _random_table(rng, 50, 4, 5, missing=0.35) + 1.0
    est = ag.estimate(data, "krippendorff", level=level)
    direct = krippendorff.alpha(reliability_data=data.T, level_of_measurement=level)
    assert est.value == pytest.approx(direct, abs=1e-12)
    assert est.plan is not None
    from_plan = est.plan.value_from_sums(est.plan.columns.sum(axis=0))[0]
    assert from_plan == pytest.approx(direct, abs=1e-12)


def test_bootstrap_replicates_equal_naive_package_loop() -> None:
    """Vectorised replicates == calling krippendorff.alpha on each resampled table."""
    rng = np.random.default_rng(5)
    data = _random_table(rng, 30, 3, 4, missing=0.2)
    data = data[~np.isnan(data).all(axis=1)]
    for level in ("nominal", "ordinal"):
        est = ag.estimate(data, "krippendorff", level=level)
        assert est.plan is not None
        weights = next(resampling_weights(data.shape[0], 5, np.random.default_rng(9)))
        fast = est.plan.finalize(weights @ est.plan.columns)
        for b in range(5):
            resampled = np.repeat(data, weights[b].astype(int), axis=0)
            slow = krippendorff.alpha(
                reliability_data=resampled.T,
                level_of_measurement=level,
                value_domain=[0.0, 1.0, 2.0, 3.0],
            )
            assert fast[b] == pytest.approx(slow, abs=1e-12)


# ----------------------------------------------------------------- RAGChecker meta-evaluation


def _ragchecker(label: str) -> np.ndarray:
    """RAGChecker human meta-evaluation labels, as bundled (equal to the original JSON:
    tests/test_stats_bundled.py checks that where ../shared is present)."""
    frame = read_ratings_frame(bundled.path("ragchecker", "meta_eval_human_labels.csv"))
    part = frame[frame["dimension"] == label.removesuffix("_label")]
    return part[["annotator_1", "annotator_2"]].astype(float).to_numpy()


@pytest.mark.parametrize(
    ("label", "cohen", "quadratic", "alpha_ordinal"),
    [
        # ragchecker SOURCE.md (computed there, not published): Cohen / quadratic / ordinal
        ("correctness_label", 0.311, 0.633, 0.587),
        ("completeness_label", 0.463, 0.718, 0.683),
        ("overall_label", 0.413, 0.699, 0.684),
    ],
)
def test_ragchecker_meta_evaluation(label, cohen, quadratic, alpha_ordinal) -> None:
    data = _ragchecker(label)
    assert data.shape == (280, 2)
    assert round(ag.agreement(data, "cohen").value or 0, 3) == cohen
    # overall quadratic is 0.698499..: SOURCE.md's 0.699 is a double rounding of 0.6985
    assert ag.agreement(data, "cohen", weights="quadratic").value == pytest.approx(
        quadratic, abs=1e-3
    )
    assert round(ag.agreement(data, "krippendorff", level="ordinal").value or 0, 3) == alpha_ordinal


# ----------------------------------------------------------------- degenerate data


def test_one_category_only() -> None:
    data = np.ones((6, 3))
    assert ag.agreement(data, "percent").value == 1.0
    for stat in ("fleiss", "gwet_ac1", "brennan_prediger", "krippendorff"):
        res = ag.agreement(data, stat)
        assert res.value is None
        assert res.undefined_reason
    # With the full binary category list, AC1 and BP are defined (= 1), kappa/alpha are not.
    assert ag.agreement(data, "gwet_ac1", categories=[0, 1]).value == pytest.approx(1.0)
    assert ag.agreement(data, "brennan_prediger", categories=[0, 1]).value == pytest.approx(1.0)
    assert ag.agreement(data, "fleiss", categories=[0, 1]).value is None
    two = ag.agreement(data[:, :2], "cohen", categories=[0, 1])
    assert two.value is None
    assert "chance agreement is 1" in (two.undefined_reason or "")
    assert ag.agreement(data[:, :2], "pabak", categories=[0, 1]).value == pytest.approx(1.0)
    assert ag.agreement(data[:, :2], "pabak").value is None


def test_perfect_agreement_with_variation_is_one() -> None:
    data = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2], [1, 1, np.nan]])
    for res in ag.agreements(data, level="ordinal"):
        assert res.value == pytest.approx(1.0), res.statistic


def test_fewer_than_two_raters_per_unit() -> None:
    data = np.array([[0, np.nan], [np.nan, 1], [1, np.nan]])
    for stat in ("percent", "fleiss", "krippendorff", "gwet_ac1", "cohen", "pabak"):
        res = ag.agreement(data, stat)
        assert res.value is None
        assert res.undefined_reason
        assert res.n_units == 0


def test_units_with_single_rating_are_not_pairable_but_count_for_propensities() -> None:
    # Gwet: pi_k averages over units with >= 1 rating; p_a only over units with >= 2.
    data = np.array([[0, 0], [1, 1], [1, np.nan]])
    res = ag.agreement(data, "gwet_ac1")
    pi1 = (0 + 1 + 1) / 3
    pe = 2 * pi1 * (1 - pi1)
    assert res.value == pytest.approx((1 - pe) / (1 - pe))
    assert res.n_units == 2


@pytest.mark.parametrize("seed", range(20))
def test_never_unexplained_nan(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = _random_table(rng, int(rng.integers(1, 6)), 2, int(rng.integers(1, 3)), 0.5)
    if np.isnan(data).all():
        return
    for res in ag.agreements(data, n_bootstrap=20, seed=seed):
        assert (res.value is None) == (res.undefined_reason is not None)
        if res.value is not None:
            assert np.isfinite(res.value)


# ----------------------------------------------------------------- intervals


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    data = _load(EX_C)
    one = ag.agreements(data, n_bootstrap=300, seed=11)
    two = ag.agreements(data, n_bootstrap=300, seed=11)
    assert [r.model_dump() for r in one] == [r.model_dump() for r in two]
    for res in one:  # percent and Brennan-Prediger of 3+ raters: both bounds are effective
        # counts' (session 31), and AC1's (session 32: [0.363, 0.971] where BCa read
        # [0.438, 0.939], as percent's [0.450, 0.983]), the others BCa's
        shares = res.statistic in ("percent", "brennan_prediger", "gwet_ac1")
        assert res.ci_method == ("clopper_pearson_effective" if shares else "bootstrap_bca")
        assert res.ci_low is not None and res.ci_high is not None
        assert res.ci_low <= (res.value or 0) <= res.ci_high


def test_bootstrap_sd_close_to_analytic_se_large_sample() -> None:
    rng = np.random.default_rng(42)
    data = _random_table(rng, 3000, 2, 3, missing=0.0)
    est = ag.estimate(data, "cohen")
    assert est.plan is not None and est.se is not None
    from failcodes.stats.bootstrap import resampled_block_sums

    reps = est.plan.finalize(
        resampled_block_sums([est.plan.columns], 800, np.random.default_rng(1))[0]
    )
    assert np.std(reps) == pytest.approx(est.se, rel=0.1)


def test_wald_interval_without_bootstrap() -> None:
    res = ag.agreement(_load(EX_B), "cohen")
    assert res.ci_method == "wald"
    assert res.se is not None and res.value is not None
    assert res.ci_low == pytest.approx(res.value - 1.959963984540054 * res.se)


# ----------------------------------------------------------------- errors


def test_precise_errors() -> None:
    with pytest.raises(StatisticsError, match="exactly two raters"):
        ag.agreement(np.zeros((3, 3)), "cohen")
    with pytest.raises(StatisticsError, match="unknown statistic"):
        ag.agreement(np.zeros((3, 2)), "kappa")
    with pytest.raises(StatisticsError, match="outside the category list"):
        ag.agreement(np.array([[1, 2], [3, 3]]), "fleiss", categories=[1, 2])
    with pytest.raises(StatisticsError, match="2 x 2"):
        ag.agreement(np.array([[0, 1], [1, 1]]), "cohen", weights=np.eye(3))
    with pytest.raises(StatisticsError, match="diagonal"):
        ag.agreement(np.array([[0, 1], [1, 1]]), "cohen", weights=np.zeros((2, 2)))
    with pytest.raises(StatisticsError, match="non-negative"):
        ag.agreement(np.array([[-1, 1], [1, 1]]), "krippendorff", level="ratio")
    with pytest.raises(StatisticsError, match="infinite"):
        ag.agreement(np.array([[np.inf, 1], [1, 1]]), "fleiss")
    with pytest.raises(StatisticsError, match="unknown level"):
        ag.agreement(np.array([[0, 1], [1, 1]]), "krippendorff", level="cardinal")


def test_pattern_compressed_bootstrap_matches_dense_distribution() -> None:
    """Pooling identical units (multinomial over patterns) leaves the bootstrap law unchanged."""
    from failcodes.stats.bootstrap import resampled_block_sums

    rng = np.random.default_rng(21)
    data = _random_table(rng, 400, 3, 3, missing=0.1)
    est = ag.estimate(data, "krippendorff", level="ordinal")
    assert est.plan is not None
    cols = est.plan.columns
    fast = est.plan.finalize(resampled_block_sums([cols], 3000, np.random.default_rng(1))[0])
    dense = est.plan.finalize(
        resampled_block_sums([cols], 3000, np.random.default_rng(2), compress=False)[0]
    )
    # same distribution up to Monte Carlo error (sd of a quantile ~ 0.002 here)
    for q in (0.025, 0.5, 0.975):
        assert np.quantile(fast, q) == pytest.approx(np.quantile(dense, q), abs=0.01)
    assert np.std(fast) == pytest.approx(np.std(dense), rel=0.08)


def test_distinct_rows_use_the_dense_path() -> None:
    from failcodes.stats.bootstrap import resampled_block_sums

    cols = np.random.default_rng(0).random((50, 3))  # all rows distinct: nothing to pool
    got = resampled_block_sums([cols], 7, np.random.default_rng(5))[0]
    weights = next(resampling_weights(50, 7, np.random.default_rng(5)))
    np.testing.assert_allclose(got, weights @ cols)


@pytest.mark.parametrize("seed", range(3))
def test_custom_weight_matrix_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(400 + seed)
    data = _random_table(rng, 60, 2, 3, missing=0.0)
    agree_w = np.array([[1.0, 0.8, 0.0], [0.8, 1.0, 0.3], [0.0, 0.3, 1.0]])
    res = ag.agreement(data, "cohen", weights=agree_w, categories=[0, 1, 2])
    assert res.weights == "custom"
    table = np.zeros((3, 3))
    np.add.at(table, (data[:, 0].astype(int), data[:, 1].astype(int)), 1)
    # statsmodels takes a 2-D matrix as disagreement weights: 1 - agreement weights
    ref = cohens_kappa(table, weights=1.0 - agree_w)
    assert res.value == pytest.approx(ref.kappa, abs=1e-12)
    assert res.se == pytest.approx(ref.std_kappa, abs=1e-12)
    quad, _ = ag.weight_matrix("quadratic", 3)
    assert ag.agreement(data, "cohen", weights=quad).value == pytest.approx(
        ag.agreement(data, "cohen", weights="quadratic").value, abs=1e-15
    )


def test_keyed_cohen_plan_dense_and_compressed_paths_agree() -> None:
    """Cohen's cells are keyed columns; both bootstrap paths give the same replicates law,
    and the dense path equals multinomial weights times the materialised one-hot matrix."""
    from failcodes.stats.bootstrap import KeyedBlock, resampled_block_sums

    rng = np.random.default_rng(77)
    data = _random_table(rng, 300, 2, 4, missing=0.1)
    est = ag.estimate(data, "cohen")
    assert est.plan is not None and isinstance(est.plan.columns, KeyedBlock)
    block = est.plan.columns
    n = block.keys.size  # units with at least one rating
    dense_sums = resampled_block_sums([block], 5, np.random.default_rng(3), compress=False)[0]
    weights = next(resampling_weights(n, 5, np.random.default_rng(3)))
    np.testing.assert_allclose(dense_sums, weights @ block.dense())
    point = est.plan.value_from_sums(block.dense().sum(axis=0))[0]
    assert point == pytest.approx(est.value, abs=1e-12)
    fast = est.plan.finalize(resampled_block_sums([block], 3000, np.random.default_rng(1))[0])
    slow = est.plan.finalize(
        resampled_block_sums([block], 3000, np.random.default_rng(2), compress=False)[0]
    )
    assert np.std(fast) == pytest.approx(np.std(slow), rel=0.08)
    assert np.median(fast) == pytest.approx(np.median(slow), abs=0.01)


def test_many_categories_cohen_bootstrap_is_cheap() -> None:
    # 60 categories: 3,600 possible cells; no dense units x q^2 matrix is built
    data = np.random.default_rng(0).integers(0, 60, (5000, 2)).astype(float)
    res = ag.agreement(data, "cohen", n_bootstrap=500, seed=1)
    assert res.n_bootstrap_valid == 500
    assert res.ci_low is not None and res.ci_low < (res.value or 0) < (res.ci_high or 0)
