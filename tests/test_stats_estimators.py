"""Conger's kappa, alpha with a weight (metric) matrix, jackknife SE, null SE and z, interval
warnings, and weighted statistics on text labels (issue 14, pts 4, 6, 7)."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from failcodes.errors import StatisticsError
from failcodes.ratingsio import read_ratings_frame
from failcodes.stats import agreement as ag
from failcodes.stats import tables as tb
from failcodes.stats.bootstrap import interval_warning, jackknife_se, jackknife_values
from tests.conftest import reference_data

REF = "agreement-reference"


def _raw4raters() -> np.ndarray:
    path = reference_data(REF, "gwet2014_raw_4raters_12units.csv")
    return tb.ratings_from_frame(read_ratings_frame(path)).values


def _fleiss1971() -> np.ndarray:
    path = reference_data(REF, "fleiss1971_diagnoses_30patients_6raters.csv")
    return tb.ratings_from_frame(read_ratings_frame(path)).values


# Gwet (2014) raw_4raters through irrCAC (afergadis/irrCAC test/unit/irrCAC/raw/test_conger.py,
# the Python port of Gwet's R package): Conger's kappa value, pa and pe per weighting.
CUSTOM = np.array(
    [
        [1.00, 0.75, 0.50, 0.25, 0.00],
        [0.00, 1.00, 0.75, 0.50, 0.25],
        [0.25, 0.00, 1.00, 0.75, 0.50],
        [0.50, 0.25, 0.00, 1.00, 0.75],
        [0.75, 0.50, 0.25, 0.00, 1.00],
    ]
)


@pytest.mark.parametrize(
    ("weights", "value", "pa", "pe", "se"),
    # irrCAC conger() on raw_4raters (afergadis/irrCAC test_conger.py; R irrCAC
    # conger.kappa.raw): SEs as published; identity 0.149 from its interval (0.435, 1) with
    # t(11): (0.763 - 0.435) / 2.201
    [
        ("none", 0.763, 0.818, 0.233, 0.149),
        ("linear", 0.814, 0.939, 0.675, 0.145),
        ("quadratic", 0.858, 0.975, 0.827, 0.144),
        (CUSTOM, 0.763, 0.886, 0.521, 0.149),
    ],
)
def test_conger_reproduces_irrcac(weights, value, pa, pe, se) -> None:
    res = ag.agreement(_raw4raters(), "conger", weights=weights)
    assert res.value is not None and res.observed_agreement is not None
    assert round(res.value, 3) == value
    assert round(res.observed_agreement, 3) == pa
    assert round(res.chance_agreement or 0, 3) == pe
    assert res.se_method == "analytic" and round(res.se or 0, 3) == se


def _radical(q: int) -> np.ndarray:
    d = np.abs(np.subtract.outer(np.arange(q), np.arange(q))).astype(float)
    return 1 - np.sqrt(d) / np.sqrt(q - 1)


def _linear(q: int) -> np.ndarray:
    d = np.abs(np.subtract.outer(np.arange(q), np.arange(q))).astype(float)
    return 1 - d / (q - 1)


@pytest.mark.parametrize(
    ("matrix", "published", "se"),
    # irrCAC krippendorff() on raw_4raters (afergadis/irrCAC test_krippendorff.py): linear
    # 0.800 (SE 0.135), radical 0.772 (SE 0.140); quadratic 0.849 (SE 0.129) = Krippendorff
    # (2011) example C interval alpha
    [
        (_linear(5), 0.800, 0.135),
        (_radical(5), 0.772, 0.140),
        (1 - (1 - _linear(5)) ** 2, 0.849, 0.129),
    ],
)
def test_alpha_with_a_weight_matrix(matrix: np.ndarray, published: float, se: float) -> None:
    res = ag.agreement(_raw4raters(), "krippendorff", weights=matrix)
    assert res.value is not None and round(res.value, 3) == published
    assert res.weights == "custom"
    assert res.se_method == "analytic" and round(res.se or 0, 3) == se


@pytest.mark.parametrize(
    ("level", "published", "se"),
    # irrCAC krippendorff() on raw_4raters: identity 0.743 (SE 0.146), ratio 0.797 (SE 0.140)
    [("nominal", 0.743, 0.146), ("interval", 0.849, 0.129), ("ratio", 0.797, 0.140)],
)
def test_alpha_linearised_se_reproduces_irrcac(level: str, published: float, se: float) -> None:
    res = ag.agreement(_raw4raters(), "krippendorff", level=level)
    assert res.value is not None and round(res.value, 3) == published
    assert res.se_method == "analytic" and round(res.se or 0, 3) == se


def _irrcac_weights(name: str, q: int = 5) -> np.ndarray:
    """irrCAC's named weight matrices for categories 1..q, from the formulas of its docs
    (afergadis/irrCAC irrCAC/weights.py docstrings; R irrCAC bipolar.weights() etc.)."""
    c = np.arange(1.0, q + 1)
    k, l_ = np.meshgrid(c, c, indexing="ij")
    lo, hi = c.min(), c.max()
    if name == "ordinal":  # (|k - l| + 1) |k - l| / 2, scaled to max 1
        d = (np.abs(k - l_) + 1) * np.abs(k - l_) / 2
        return 1 - d / d.max()
    if name == "radical":
        return 1 - np.sqrt(np.abs(k - l_)) / np.sqrt(hi - lo)
    if name == "ratio":
        return 1 - ((k - l_) / (k + l_)) ** 2 / ((hi - lo) / (hi + lo)) ** 2
    if name == "circular":
        d = np.sin(np.pi * (k - l_) / (hi - lo + 1)) ** 2
        return 1 - d / d.max()
    assert name == "bipolar"
    den = (k + l_ - 2 * lo) * (2 * hi - k - l_)
    d = np.divide((k - l_) ** 2, den, out=np.zeros_like(den), where=k != l_)
    return 1 - d / d.max()


@pytest.mark.parametrize(
    ("name", "conger", "pa", "pe", "conger_se", "alpha", "alpha_se"),
    # irrCAC on raw_4raters with its named weights, as published in its test suite
    # (afergadis/irrCAC test/unit/irrCAC/raw/test_conger.py and test_krippendorff.py, MIT:
    # coefficient, pa, pe and se at 3 decimals; same values as R irrCAC 1.0's examples).
    [
        ("ordinal", 0.844, 0.968, 0.796, 0.144, 0.834, 0.131),
        ("radical", 0.788, 0.897, 0.515, 0.146, 0.772, 0.140),
        ("ratio", 0.812, 0.954, 0.756, 0.149, 0.797, 0.140),
        ("circular", 0.805, 0.902, 0.499, 0.147, 0.790, 0.141),
        ("bipolar", 0.845, 0.968, 0.796, 0.142, 0.835, 0.128),
    ],
)
def test_conger_and_alpha_with_every_irrcac_weighting(
    name: str,
    conger: float,
    pa: float,
    pe: float,
    conger_se: float,
    alpha: float,
    alpha_se: float,
) -> None:
    w = _irrcac_weights(name)
    c = ag.agreement(_raw4raters(), "conger", weights=w)
    a = ag.agreement(_raw4raters(), "krippendorff", weights=w)
    assert c.se_method == a.se_method == "analytic"
    got_c = (c.value, c.observed_agreement, c.chance_agreement, c.se)
    assert tuple(round(v or 0, 3) for v in got_c) == (conger, pa, pe, conger_se)
    assert (round(a.value or 0, 3), round(a.se or 0, 3)) == (alpha, alpha_se)


def _table(name: str) -> np.ndarray:
    """A reference table (letters a, b, c... as 1, 2, 3...), its unit column dropped."""
    path = reference_data("agreement-reference", name)
    rows = [line.split(",")[1:] for line in path.read_text().splitlines()[1:]]
    code = {c: float(i + 1) for i, c in enumerate("abcde")}

    def cell(v: str) -> float:
        return np.nan if v == "" else code[v] if v in code else float(v)

    return np.array([[cell(v) for v in r] for r in rows])


@pytest.mark.parametrize(
    ("name", "conger", "conger_se", "alpha", "alpha_se"),
    # irrCAC's published examples (tests/data/agreement-reference/SOURCE.md)
    [
        ("gwet2014_raw_5observers_15units.csv", 0.469, 0.117, 0.481, 0.114),
        ("irrcac_raw_gender_4raters_15units.csv", 0.166, 0.121, 0.143, 0.141),
        ("irrcac_raw_g1g2_4raters_14units.csv", 0.659, 0.146, 0.632, 0.150),
        ("irrcac_raw_ben_gerry_2raters_12units.csv", 0.657, 0.179, 0.665, 0.180),
    ],
)
def test_linearised_ses_on_irrcac_examples(
    name: str, conger: float, conger_se: float, alpha: float, alpha_se: float
) -> None:
    data = _table(name)
    c = ag.agreement(data, "conger")
    a = ag.agreement(data, "krippendorff")
    assert (round(c.value or 0, 3), round(c.se or 0, 3)) == (conger, conger_se)
    assert (round(a.value or 0, 3), round(a.se or 0, 3)) == (alpha, alpha_se)


def test_alpha_metric_matrix_equals_its_named_level() -> None:
    data = _raw4raters()
    interval = (np.subtract.outer(np.arange(5.0), np.arange(5.0)) / 4) ** 2
    assert ag.agreement(data, "krippendorff", weights=1 - interval).value == pytest.approx(
        ag.agreement(data, "krippendorff", level="interval").value
    )


def test_alpha_jackknife_equals_brute_force() -> None:
    # the delete-one-unit jackknife BCa's acceleration rests on (and pooled rows' SE)
    data = _raw4raters()
    est = ag.estimate(data, "krippendorff")
    assert est.plan is not None
    pairable = data[(~np.isnan(data)).sum(axis=1) >= 2]
    loo = np.array(
        [
            krippendorff.alpha(
                reliability_data=np.delete(pairable, i, axis=0).T,
                level_of_measurement="nominal",
                value_domain=[1.0, 2.0, 3.0, 4.0, 5.0],
            )
            for i in range(pairable.shape[0])
        ]
    )
    n = loo.size
    expected = np.sqrt((n - 1) / n * ((loo - loo.mean()) ** 2).sum())
    jack = jackknife_values(est.plan.columns, est.plan.finalize)
    assert jackknife_se(jack) == pytest.approx(expected)


def test_cohen_null_se_and_z_match_statsmodels() -> None:
    rng = np.random.default_rng(3)
    data = rng.integers(0, 3, size=(60, 2)).astype(float)
    data[:40, 1] = data[:40, 0]
    res = ag.agreement(data, "cohen")
    table = np.zeros((3, 3))
    for a, b in data.astype(int):
        table[a, b] += 1
    sm = cohens_kappa(table)
    assert res.value == pytest.approx(sm.kappa)
    assert res.se_null == pytest.approx(sm.std_kappa0)
    assert res.z == pytest.approx(sm.z_value)
    weighted = ag.agreement(data, "cohen", weights="linear")
    sm_w = cohens_kappa(table, wt="linear")
    assert weighted.se_null == pytest.approx(sm_w.std_kappa0)


def test_fleiss_null_z_on_fleiss_1971() -> None:
    res = ag.agreement(_fleiss1971(), "fleiss")
    # irr::kappam.fleiss(diagnoses): Kappa = 0.43, z = 17.7 (Fleiss, Nee & Landis 1979 SE)
    assert round(res.value or 0, 2) == 0.43
    assert round(res.z or 0, 1) == 17.7
    assert ag.agreement(_raw4raters(), "fleiss").se_null is None  # missing ratings: not defined


def test_warnings_name_their_reasons() -> None:
    perfect = np.tile([[0.0, 0.0], [1.0, 1.0]], (10, 1))
    res = ag.agreement(perfect, "cohen")
    assert res.ci_low == res.ci_high == 1.0
    assert res.warning is not None
    assert "zero-width" in res.warning and "only 20 units" in res.warning
    assert "boundary" in res.warning
    # percent agreement of 20 agreeing units of 20: Clopper-Pearson, low 0.025^(1/20) = 0.8316
    res = ag.agreement(perfect, "percent")
    assert (res.ci_low, res.ci_high, res.ci_method) == (
        pytest.approx(0.8315665),
        1.0,
        "clopper_pearson",
    )
    assert res.warning == "only 20 units (< 50); estimate on the boundary (1)"
    near = ag.agreement(np.vstack([perfect] * 3 + [[[0.0, 1.0]]]), "cohen", n_bootstrap=200, seed=0)
    assert near.warning is not None and "near the ceiling" in near.warning
    assert interval_warning(0.5, 0.3, 0.7, n=200) is None
    assert interval_warning(0.0, 0.0, 0.4, n_clusters=15, n_positives=3, bounds=(0, 1)) == (
        "only 15 clusters (< 20); only 3 positives (< 10); estimate on the boundary (0)"
    )


def test_metric_intervals_carry_warnings() -> None:
    from failcodes.metrics import bootstrap_intervals, counts_by_cluster
    from failcodes.stats.bootstrap import multinomial_weights

    # one question, recall 0/3: every resample is the sample, so no interval (session 30:
    # it was [0, 0] with "zero-width interval; only 1 clusters (< 20)")
    per = counts_by_cluster([0, 0, 0], [0, 0, 0], [True] * 3, [False] * 3, 1, 1)
    weights = multinomial_weights(1, 50, np.random.default_rng(0))
    recall = bootstrap_intervals(per, weights, 0.95)[0]["recall"]
    assert (recall.low, recall.high) == (None, None)
    assert recall.undefined_reason is not None
    assert recall.undefined_reason.startswith("one question: nothing to resample")
    # two questions: an interval, with its warning
    per = counts_by_cluster([0, 0, 1, 1], [0] * 4, [True] * 4, [False, True] * 2, 2, 1)
    weights = multinomial_weights(2, 50, np.random.default_rng(0))
    recall = bootstrap_intervals(per, weights, 0.95)[0]["recall"]
    assert recall.low is not None and recall.warning is not None
    assert "only 2 clusters (< 20)" in recall.warning


def test_weighted_stats_on_text_labels_need_categories(tmp_path: Path, agree) -> None:
    # K-QA-like ordinal text labels: alphabetical order would be high < low < mid
    frame = pd.DataFrame(
        {
            "item": range(8),
            "a": ["low", "mid", "high", "mid", "low", "high", "mid", "low"],
            "b": ["low", "high", "high", "mid", "mid", "high", "low", "low"],
        }
    )
    path = tmp_path / "labels.csv"
    frame.to_csv(path, index=False)
    code, out, err = agree(path, "--stat", "gwet_ac2", "--bootstrap", "0")
    assert code == 2 and "--categories" in err and len(err.strip().splitlines()) == 1
    code, out, err = agree(path, "--format", "json", "--bootstrap", "0")
    assert code == 0, err
    rows = {r["statistic"]: r for r in json.loads(out)}
    assert rows["gwet_ac2"]["value"] is None
    assert "--categories" in rows["gwet_ac2"]["undefined_reason"]
    code, out, err = agree(
        path, "--format", "json", "--bootstrap", "0", "--categories", "low,mid,high"
    )
    rows = {r["statistic"]: r for r in json.loads(out)}
    table = tb.ratings_from_frame(frame, categories=["low", "mid", "high"])
    expected = ag.agreement(
        table.values, "gwet_ac2", weights="quadratic", categories=table.categories
    )
    assert rows["gwet_ac2"]["value"] == pytest.approx(expected.value)
    with pytest.raises(StatisticsError, match="ordered categories"):
        tb.agreement_table(tb.ratings_from_frame(frame), ["fleiss"], weights="quadratic")


def test_cli_weights_matrix_reproduces_irrcac_linear(tmp_path: Path, agree) -> None:
    matrix = tmp_path / "linear.csv"
    matrix.write_text("\n".join(",".join(f"{v:g}" for v in row) for row in _linear(5)) + "\n")
    data = reference_data(REF, "gwet2014_raw_4raters_12units.csv")
    code, out, err = agree(data, "--weights-matrix", matrix, "--bootstrap", "0", "--format", "json")
    assert code == 0, err
    rows = {r["statistic"]: r for r in json.loads(out)}
    # irrCAC raw_4raters, linear weights: Fleiss 0.818, Conger 0.814, alpha 0.800
    assert round(rows["fleiss"]["value"], 3) == 0.818
    assert round(rows["conger"]["value"], 3) == 0.814
    assert round(rows["krippendorff"]["value"], 3) == 0.800
    assert rows["krippendorff"]["weights"] == "custom"
    bad = tmp_path / "bad.csv"
    bad.write_text("1,0\nx,1\n")
    code, _, err = agree(data, "--weights-matrix", bad)
    assert code == 2 and "bad.csv:2" in err and len(err.strip().splitlines()) == 1


def test_endpoint_mc_error_is_the_batch_spread() -> None:
    # 400 replicates in 10 batches of 40: the percentile endpoints of each batch, their
    # standard deviation (ddof 1) over sqrt(10); the larger of the two endpoints'
    from failcodes.stats.bootstrap import endpoint_mc_error, percentile_interval

    reps = np.random.default_rng(4).normal(0.6, 0.1, size=400)
    lows = [np.quantile(reps[b * 40 : (b + 1) * 40], 0.025) for b in range(10)]
    highs = [np.quantile(reps[b * 40 : (b + 1) * 40], 0.975) for b in range(10)]
    expected = max(np.std(lows, ddof=1), np.std(highs, ddof=1)) / np.sqrt(10)
    got = endpoint_mc_error(reps, percentile_interval)
    assert got == pytest.approx(expected)
    # fewer than 20 resamples a batch: no estimate
    assert endpoint_mc_error(reps[:150], percentile_interval) is None


def test_bootstrap_intervals_carry_their_mc_error_and_seed() -> None:
    res = ag.agreement(_raw4raters(), "fleiss", n_bootstrap=2000, seed=7)
    assert res.seed == 7 and res.n_bootstrap == 2000
    assert res.ci_mc_error is not None and 0 < res.ci_mc_error < 0.05
    # four times the resamples: about half the Monte Carlo error (it falls as 1/sqrt(B))
    more = ag.agreement(_raw4raters(), "fleiss", n_bootstrap=8000, seed=7)
    assert more.ci_mc_error is not None and more.ci_mc_error < 0.8 * res.ci_mc_error
    assert ag.agreement(_raw4raters(), "fleiss").ci_mc_error is None  # Wald: no resamples


def test_wald_near_the_ceiling_is_warned_at_any_n() -> None:
    # 200 units, two raters agreeing on 196 (kappa ~0.95): the BCa interval is fine from 100
    # units on, Wald's is not (bench/bench_coverage.py part A)
    data = np.array([[1.0, 1.0]] * 60 + [[0.0, 0.0]] * 136 + [[1.0, 0.0]] * 2 + [[0.0, 1.0]] * 2)
    wald = ag.agreement(data, "cohen")
    assert wald.value is not None and wald.value > 0.9
    assert wald.warning is not None and "Wald's interval under-covers" in wald.warning
    bca = ag.agreement(data, "cohen", n_bootstrap=1000, seed=1)
    assert bca.warning is None or "near the ceiling" not in bca.warning
