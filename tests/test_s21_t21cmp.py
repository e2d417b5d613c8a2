"""Session 21, t21cmp: compare takes the question as its unit when sentences share one.

The sentences of one answer are not independent; McNemar, Cochran's Q, the permutation and
the bootstrap treated them so (equal systems rejected in 6.5-12% of data sets at alpha 0.05,
1-6 sentences a question: docs/statistics.md). With a question id per unit they now swap or
resample whole questions, and with one unit per question they equal the unclustered tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from failcodes.stats import classification as cl
from failcodes.stats.tests import TestResult
from tests.cli_helpers import run_cli

# Obuchowski (1998)'s thyroid data (PET vs SPECT, 21 patients, glands clustered in patients),
# per patient a_k (both 1), b_k (PET 1, SPECT 0), c_k (PET 0, SPECT 1), d_k (both 0), as the
# CRAN package clust.bin.pair's thyroids example prints them (docs/reference/thyroids.html).
THYROID_A = [0, 2, 3, 1, 2, 4, 3, 2, 1, 1, 2, 2, 3, 2, 0, 2, 2, 2, 2, 1, 2]
THYROID_B = [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
THYROID_C = [2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0]
THYROID_D = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0]


def _glands() -> tuple[np.ndarray, list[str]]:
    rows: list[tuple[int, int]] = []
    ids: list[str] = []
    for k, counts in enumerate(zip(THYROID_A, THYROID_B, THYROID_C, THYROID_D, strict=True)):
        for pair, m in zip(((1, 1), (1, 0), (0, 1), (0, 0)), counts, strict=True):
            rows += [pair] * m
            ids += [f"p{k:02d}"] * m
    return np.array(rows, dtype=float), ids


def test_clustered_statistic_on_obuchowskis_thyroid_data() -> None:
    """Obuchowski (1998) in Yang et al. (2010)'s form: X2 = ((K-1)/K) (sum d_k)^2 / sum d_k^2,
    d_k = b_k - c_k; clust.bin.pair prints chi-square = 2.8571, p = 0.09097 for these data.
    By hand: d = -2, -1, -1, +1, -2, -1 on six patients (0 on the other 15), sum -6, sum of
    squares 4+1+1+1+4+1 = 12: (20/21) 36/12 = 2.857142. Cochran's Q on patient totals
    (k = 2) is the randomisation form (sum d)^2 / sum d^2 = 36/12 = 3.0 = 2.8571 x 21/20;
    so is McNemar's chi-square, without continuity correction (b + c = 1 + 7 = 8 discordant
    glands, so forced with exact_below=0). Unclustered, the glands as independent: Q = 36 / 8 = 4.5
    (p 0.034), not 3.0 (p 0.083)."""
    x, ids = _glands()
    assert x.shape == (len(ids), 2) and len(set(ids)) == 21
    q = cl.cochrans_q(x, clusters=ids)
    assert q.statistic == pytest.approx(3.0)
    assert q.statistic * 20 / 21 == pytest.approx(2.8571, abs=5e-5)  # the published value
    assert cl.cochrans_q(x).statistic == pytest.approx(36 / 8)  # glands as independent
    chi2 = cl.mcnemar(x[:, 0], x[:, 1], exact_below=0, clusters=ids)
    assert chi2.test == "mcnemar_chi2"
    assert chi2.statistic == pytest.approx(36 / 12)
    assert chi2.effect == pytest.approx(-6 / 51)  # (b - c) / n: 39 + 1 + 7 + 4 = 51 glands
    assert chi2.n == 51


def test_clustered_exact_mcnemar_flips_whole_questions() -> None:
    """q1: 2 sentences a=1, b=0 (d = +2); q2: 1 sentence a=1, b=0 (d = +1); q3: 2 sentences
    both 1. Swapping the systems per question: +-2 +-1 in {3, 1, -1, -3}, each 1/4, so the
    mid-p P(|S| > 3) + P(|S| = 3) / 2 = 0 + 1/4 (exact: 1/2). Per sentence (the binomial, 3
    discordant, all one way): 2/8 - P(X = 0) = 0.25 - 0.125 = 0.125 (Fagerland et al. 2013's
    mid-p; exact 0.25)."""
    a = [1, 1, 1, 1, 1]
    b = [0, 0, 0, 1, 1]
    ids = ["q1", "q1", "q2", "q3", "q3"]
    assert cl.mcnemar(a, b).p_value == pytest.approx(0.125)
    got = cl.mcnemar(a, b, clusters=ids)
    assert got.test == "mcnemar_midp"
    assert got.p_value == pytest.approx(0.25)
    # one unit per question: the binomial mid-p exactly (b=3, c=0 and b=4, c=1 by hand)
    assert cl.mcnemar(a, b, clusters=["u1", "u2", "u3", "u4", "u5"]).p_value == 0.125
    a2, b2 = [1, 1, 1, 1, 0, 1], [0, 0, 0, 0, 1, 1]
    single = cl.mcnemar(a2, b2, clusters=list("abcdef")).p_value
    assert single == pytest.approx(2 * (1 + 5) / 32 - 5 / 32)  # 2 P(X <= 1) - P(X = 1): 7/32


def test_clustered_cochrans_q_by_hand() -> None:
    """3 systems; q1 = sentences (1,0,1), (1,0,0); q2 = (1,1,1); q3 = (0,1,0). Question totals
    S = (2,0,1), (1,1,1), (0,1,0): C = (3,2,2), T = 7, sum S^2 = 9, R = (3,3,1), sum R^2 = 19:
    Q = (k-1)(k sum C^2 - T^2) / (k sum S^2 - sum R^2) = 2 (51 - 49) / (27 - 19) = 0.5.
    Unclustered (Cochran 1950): rows R = (2,1,3,1), sum R^2 = 15: 2 * 2 / (21 - 15) = 2/3."""
    x = np.array([[1, 0, 1], [1, 0, 0], [1, 1, 1], [0, 1, 0]], dtype=float)
    assert cl.cochrans_q(x).statistic == pytest.approx(2 / 3)
    assert cl.cochrans_q(x, clusters=["q1", "q1", "q2", "q3"]).statistic == pytest.approx(0.5)


def test_cluster_bootstrap_of_a_recall_difference_by_enumeration() -> None:
    """3 questions, all sentences positive: q1 2 sentences a finds, b misses; q2 2 sentences
    both find; q3 1 sentence a misses, b finds. Recall difference 0.2 = (2 - 1) / 5. Drawing
    3 questions with replacement (w1, w2, w3): d* = (2 w1 - w3) / (2 w1 + 2 w2 + w3) over 27
    equally likely draws; (3,0,0) gives 1, (0,0,3) gives -1, each 1/27 = 3.7% > 2.5%, so the
    95% percentile interval is [-1, 1]. |d* - 0.2| >= 0.2 holds for 18 of the 27 draws (all
    but (1,2,0)-type 1/3 and (1,1,1) 1/5), so p = 2/3. Resampling the 5 sentences instead,
    d* = -1 needs q3's sentence 5 times (1/3125 < 2.5%): the interval is narrower."""
    truth = np.ones(5)
    preds = np.array([[1, 0], [1, 0], [1, 1], [1, 1], [0, 1]], dtype=float)
    ids = ["q1", "q1", "q2", "q2", "q3"]

    def run(clusters: list[str] | None) -> TestResult:
        return cl.paired_metric_tests(
            truth,
            preds,
            ["a", "b"],
            metric="recall",
            method="bootstrap",
            n_resamples=2000,
            seed=7,
            clusters=clusters,
        )[0]

    got = run(ids)
    assert got.effect == pytest.approx(0.2)
    assert (got.ci_low, got.ci_high) == (-1.0, 1.0)
    assert got.p_value == pytest.approx(2 / 3, abs=0.04)  # Monte Carlo SE 0.0105
    flat = run(None)
    assert flat.ci_low is not None and flat.ci_low > -1.0


def test_permutation_swaps_whole_questions() -> None:
    """q1: 2 positive sentences a finds, b misses; q2, q3: 1 positive sentence each, both
    miss. Recall difference 2/4 = 0.5. Swapping per question: +-2/4, |null| >= 0.5 always,
    p = 1. Per sentence: (+-1 +-1)/4, |null| >= 0.5 with probability 1/2."""
    truth = np.ones(4)
    preds = np.array([[1, 0], [1, 0], [0, 0], [0, 0]], dtype=float)

    def run(clusters: list[str] | None) -> float:
        r = cl.paired_metric_tests(
            truth, preds, ["a", "b"], metric="recall", n_resamples=2000, seed=3, clusters=clusters
        )[0]
        assert r.p_value is not None
        return r.p_value

    assert run(["q1", "q1", "q2", "q3"]) == 1.0
    assert run(None) == pytest.approx(0.5, abs=0.04)


def test_clustered_tests_keep_their_size_in_a_seeded_simulation() -> None:
    """200 data sets of 40 questions of 1-6 sentences, two equal systems whose calls share a
    per-question effect (logit recall 0 + N(0, 2^2) per system and question): McNemar on
    the sentences rejected at alpha 0.05 in far more than 5%; on question totals near 5%
    (a binomial 95% band for 200 sets at 0.05 reaches 0.085)."""
    rng = np.random.default_rng(20261204)
    flat = clustered = 0
    for _ in range(200):
        sizes = rng.integers(1, 7, 40)
        q = np.repeat(np.arange(40), sizes)
        effects = rng.normal(0.0, 2.0, (40, 2))[q]
        calls = (rng.random(effects.shape) < 1 / (1 + np.exp(-effects))).astype(float)
        p_flat = cl.mcnemar(calls[:, 0], calls[:, 1]).p_value
        p_clustered = cl.mcnemar(calls[:, 0], calls[:, 1], clusters=q).p_value
        assert p_flat is not None and p_clustered is not None
        flat += p_flat < 0.05
        clustered += p_clustered < 0.05
    assert flat / 200 > 0.15, flat
    assert clustered / 200 <= 0.085, clustered


def test_compare_file_with_a_question_id_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FILE whose question_id column repeats: the first line says the tests take the question
    as the unit, and McNemar is the clustered one (mid-p 0.25 by hand, as above: q1 d = +2,
    q2 d = +1; per row it read 0.125 with "each row counts as one unit")."""
    csv = tmp_path / "preds.csv"
    rows = ["question_id,a,b", "q1,1,0", "q1,1,0", "q2,1,0", "q3,1,1", "q3,1,1"]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run_cli(["compare", str(csv), "--format", "json"], capsys)
    assert code == 0, err
    got = json.loads(out)
    assert (
        "the tests take the question as the unit: 2 of 3 questions hold several of the 5 rows"
        in (got["assumed"])
    ), got["assumed"]
    assert "each row counts as one unit" not in got["assumed"]
    mcnemar = next(r for r in got["tests"] if r["test"].startswith("mcnemar"))
    assert mcnemar["p_value"] == pytest.approx(0.25)


def test_compare_file_refuses_a_blank_question_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row with no question would be a question of its own, or of every blank row: refused
    in one line naming the row (line 3: the header is line 1)."""
    csv = tmp_path / "preds.csv"
    csv.write_text("question_id,a,b\nq1,1,0\n,1,0\nq2,0,1\n", encoding="utf-8")
    code, out, err = run_cli(["compare", str(csv)], capsys)
    assert code != 0 and out == ""
    assert err.count("\n") == 1
    assert f"{csv}:3, field 'question_id': blank question id" in err, err


def _traces_and_labels(tmp_path: Path) -> list[str]:
    """Two systems, 5 error sentences in 4 questions: q0 (s0, s1) A flags both, B neither
    (d = +2); q1 A flags, B not (+1); q2 both flag (0); q3 B flags, A not (-1)."""
    from failcodes import labelio, traceio
    from failcodes.labels import Label
    from failcodes.traces import Trace

    units = [("q0", "s0"), ("q0", "s1"), ("q1", "s2"), ("q2", "s3"), ("q3", "s4")]
    calls = {"A": [1, 1, 1, 1, 0], "B": [0, 0, 0, 1, 1]}
    traces = [
        Trace(
            system=system,
            question_id=q,
            sentence_id=s,
            claim_id=f"{q}{s}c",
            claim="c",
            verdict="refuted" if flag else "supported",
        )
        for system, flags in calls.items()
        for (q, s), flag in zip(units, flags, strict=True)
    ]
    labels = [Label(question_id=q, sentence_id=s, has_error=True) for q, s in units]
    traceio.write_traces(tmp_path / "t.jsonl", traces)
    labelio.write_labels(tmp_path / "l.jsonl", labels)
    return ["--traces", str(tmp_path / "t.jsonl"), "--labels", str(tmp_path / "l.jsonl")]


def test_compare_traces_take_the_question_as_the_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """5 error sentences in 4 questions. McNemar A vs B on the sentences: b = 3, c = 1, mid-p
    2 P(Bin(4, 1/2) <= 1) - P(X = 1) = 10/16 - 4/16 = 0.375 (exact 0.625). On question totals
    d = +2, +1, 0, -1: +-2 +-1 +-1 over 8 sign patterns gives sums 4, 2, 2, 0, 0, -2, -2, -4:
    |S| > 2 in 2, |S| = 2 in 4, mid-p 2/8 + 4/16 = 0.5 (exact 0.75). The first line says the
    tests take the question as the unit."""
    code, out, err = run_cli(
        ["compare", *_traces_and_labels(tmp_path), "--resamples", "200", "--format", "json"],
        capsys,
    )
    assert code == 0, err
    got = json.loads(out)
    assert (
        "the tests take the question as the unit: 1 of 4 questions hold several of the 5 "
        "sentences" in got["assumed"]
    ), got["assumed"]
    mcnemar = next(r for r in got["tests"] if r["test"].startswith("mcnemar"))
    assert mcnemar["p_value"] == pytest.approx(0.5)
    assert cl.mcnemar([1, 1, 1, 1, 0], [0, 0, 0, 1, 1]).p_value == pytest.approx(0.375)


def test_compare_difference_interval_on_12_positives_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """60 units, 12 errors: a finds 10, b 6 (b's among a's), no false alarms: recall difference
    10/12 - 6/12 = 1/3 on 12 positives (>= 10), so main said nothing beside its interval. At
    10-14 positives such percentile intervals of a difference covered 0.934 (recall, 213
    intervals; t20s2c: 0.911 on about 10 positives), at 15 or more 0.946 (recall) and 0.951
    (F1, 408 intervals; 100-200 units, recall 0.9 vs 0.6: docs/statistics.md); compare's
    threshold for a difference is 15 positives."""
    csv = tmp_path / "preds.csv"
    calls = [(1, 1, 1)] * 6 + [(1, 1, 0)] * 4 + [(1, 0, 0)] * 2 + [(0, 0, 0)] * 48
    rows = ["unit,label,a,b"] + [f"u{i},{y},{a},{b}" for i, (y, a, b) in enumerate(calls)]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["compare", str(csv), "--truth", "label", "--method", "bootstrap"]
    code, out, err = run_cli([*args, "--resamples", "1000", "--format", "json"], capsys)
    assert code == 0, err
    recall = [r for r in json.loads(out)["tests"] if r["test"] == "bootstrap_recall"]
    assert [r["effect"] for r in recall] == [pytest.approx(1 / 3)]
    assert recall[0]["note"] == "interval: only 12 positives (< 15)", recall[0]
