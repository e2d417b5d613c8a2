"""Session 30 (t30ppi): the corrected share prints the point its interval is built around.

Before: share_estimates' corrected.estimate was PPI++'s point (lam tuned on the same reviewed
units, ppi_py's number), biased low by O(1/n) where the judge is accurate (-0.007 on a 0.05
share at 50 reviewed units, judge accuracy 0.95: bench/bench_s29_ppi_seed.py part 3), while
its interval was built around the post-stratified estimate (per judge-code part, unbiased
at the same sd): the printed point was not the centre of its own interval. Now the point is
the post-stratified one; PPI++'s stays beside it as ``corrected_ppi`` (issue 30).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import ppi_py
import pytest

from failcodes.stats.ppi import Stratum, ppi_mean, share_estimates
from tests.cli_helpers import run_cli, write_text


def test_the_corrected_point_is_post_stratified_and_inside_its_interval() -> None:
    """20 reviewed units: the judge coded 1 on 4 (the human agreed on 3), 0 on 16 (the human
    coded 1 on 1 of them); 80 unreviewed, the judge coded 1 on 6.

    By hand, post-stratified by the judge's code: the judge-1 part holds 4 + 6 = 10 of the 100
    units, human share 3/4; the judge-0 part 16 + 74 = 90 units, human share 1/16:
    0.10 x 0.75 + 0.90 x 0.0625 = 0.075 + 0.05625 = 0.13125.
    PPI++ (Angelopoulos, Duchi & Zrnic 2023): mean y = mean yhat = 0.2, E[y yhat] = 0.15, cov
    0.11; the judge's codes over all 100 units (10 ones) vary by (10 - 1) / 99 = 0.090909; lam
    = 0.11 / ((1 + 20/80) x 0.090909) = 0.968; point = 0.968 x 6/80 + 0.2 - 0.968 x 0.2 =
    0.0726 + 0.0064 = 0.079 (ppi_py's ppi_mean_pointestimate gives the same)."""
    y = [1.0, 1.0, 1.0, 0.0] + [1.0] + [0.0] * 15
    yhat = [1.0] * 4 + [0.0] * 16
    rest = [1.0] * 6 + [0.0] * 74
    got = share_estimates([Stratum(y, yhat, rest)])
    assert got.corrected.estimate == pytest.approx(0.13125, abs=1e-12)
    assert got.lam == pytest.approx(0.968, abs=1e-12)
    assert got.corrected_ppi == pytest.approx(0.079, abs=1e-12)
    reference = np.ravel(ppi_py.ppi_mean_pointestimate(np.array(y), np.array(yhat), np.array(rest)))
    assert got.corrected_ppi == pytest.approx(float(reference[0]), rel=1e-12)
    # the printed point lies inside its printed interval (and so does PPI++'s)
    assert got.corrected.ci_low <= got.corrected.estimate <= got.corrected.ci_high
    assert got.corrected.ci_low <= got.corrected_ppi <= got.corrected.ci_high
    # the library's ppi_mean stays ppi_py's number
    assert ppi_mean(y, yhat, rest).estimate == pytest.approx(0.079, abs=1e-12)


def test_a_part_with_no_reviewed_unit_takes_its_strata_human_share() -> None:
    """10 reviewed units, all coded 0 by the judge, the human coded 1 on 2 of them; 90
    unreviewed, the judge coded 1 on 10. No reviewed unit tells the human share of the
    judge-1 part (10 units): it takes the stratum's human share, 2/10, as PPI++ does (its lam
    is 0: the reviewed judge codes do not vary). By hand: 0.10 x 0.2 + 0.90 x 0.2 = 0.2 (the
    interval's centre puts 1/2 there, its interval [0, 1]: 0.10 x 0.5 + 0.90 x 0.2 = 0.23;
    the point still lies inside the interval)."""
    y = [1.0, 1.0] + [0.0] * 8
    got = share_estimates([Stratum(y, [0.0] * 10, [1.0] * 10 + [0.0] * 80)])
    assert got.corrected.estimate == pytest.approx(0.2)
    assert got.corrected_ppi == pytest.approx(0.2)
    assert got.lam == 0.0
    assert got.corrected.ci_low <= 0.2 <= got.corrected.ci_high


def test_two_strata_weigh_each_part_by_its_units() -> None:
    """Stratum A: 40 units; 10 reviewed, the judge coded 1 on 5 (the human agreed on 4) and 0
    on 5 (the human coded 1 on none); of the 30 unreviewed the judge coded 1 on 5. Stratum B:
    60 units; 12 reviewed, judge 1 on 2 (human 2 of 2), judge 0 on 10 (human 1 of 10); 48
    unreviewed, judge 1 on 8.

    By hand: A's judge-1 part 10 units x 4/5 = 8, judge-0 part 30 x 0 = 0; B's judge-1 part
    10 units x 2/2 = 10, judge-0 part 50 x 1/10 = 5; (8 + 0 + 10 + 5) / 100 = 0.23.
    PPI++ per stratum (lam as ppi_py tunes it): A: mean y 0.4, mean yhat 0.5, E[y yhat] 0.4,
    cov 0.2; the judge's codes over A's 40 units (10 ones) vary by (10 - 2.5) / 39 = 0.19231;
    lam = 0.2 / ((1 + 10/30) x 0.19231) = 0.78; theta_A = 0.78 x 5/30 + 0.4 - 0.78 x 0.5 =
    0.14; B: mean y 0.25, mean yhat 1/6, E[y yhat] 1/6, cov 1/6 - 1/24 = 0.125; (10 - 100/60)
    / 59 = 0.141243; lam = 0.125 / ((1 + 12/48) x 0.141243) = 0.708; theta_B = 0.708 x 8/48 +
    0.25 - 0.708 x 1/6 = 0.25. Combined 0.4 x 0.14 + 0.6 x 0.25 = 0.206."""
    a = Stratum([1.0] * 4 + [0.0] * 6, [1.0] * 5 + [0.0] * 5, [1.0] * 5 + [0.0] * 25)
    b = Stratum([1.0, 1.0, 1.0] + [0.0] * 9, [1.0, 1.0] + [0.0] * 10, [1.0] * 8 + [0.0] * 40)
    got = share_estimates([a, b])
    assert got.corrected.estimate == pytest.approx(0.23)
    assert got.corrected_ppi == pytest.approx(0.206)
    assert got.corrected.ci_low <= 0.23 <= got.corrected.ci_high


def test_compare_says_interval_once_before_few_resamples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """compare's note beside a bootstrap interval from 5 resamples read "interval: interval
    from only 5 bootstrap resamples (fewer than 200 ...": the word twice (t29cmp's left item).
    60 units in 60 questions, truth 1 on 30; A right on all, B on 45 of 60 (no other reason
    fires: 60 units >= 50, 60 questions >= 20, 30 positives >= 15)."""
    rows = ["question_id,unit_id,gold,A,B"]
    for i in range(60):
        gold = int(i < 30)
        rows.append(f"q{i},u{i},{gold},{gold},{gold if i % 4 else 1 - gold}")
    path = write_text(tmp_path / "rows.csv", "\n".join(rows) + "\n")
    args = ["compare", str(path), "--truth", "gold", "--unit-column", "unit_id"]
    args += ["--systems", "A,B", "--method", "bootstrap", "--resamples", "5", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    notes = [r["note"] for r in json.loads(out)["tests"] if r["test"].startswith("bootstrap_")]
    assert notes and all(
        n.startswith("interval: from only 5 bootstrap resamples (fewer than 200") for n in notes
    ), notes


def test_metrics_on_one_question_prints_no_interval() -> None:
    """Every unit in one question: each cluster-bootstrap resample draws that question once,
    so every resample is the sample and the 'interval' was the point twice ([81.8, 81.8]*,
    "zero-width interval; only 1 clusters (< 20)"). Now no interval and why. 30 units of one
    question: truth 1 on 12; the system flags 10 of them and 2 of the 18 others: recall 10/12."""
    from failcodes.metrics import ONE_QUESTION, bootstrap_intervals, counts_by_cluster
    from failcodes.stats.bootstrap import multinomial_weights

    label = np.array([True] * 12 + [False] * 18)
    pred = np.array([True] * 10 + [False] * 2 + [True] * 2 + [False] * 16)
    per = counts_by_cluster(np.zeros(30, dtype=int), np.zeros(30, dtype=int), label, pred, 1, 1)
    assert per[0, 0].tolist() == [10, 2, 2, 16]  # tp, fp, fn, tn
    got = bootstrap_intervals(per, multinomial_weights(1, 200, np.random.default_rng(0)), 0.95)
    for name in ("precision", "recall", "f1"):
        ci = got[0][name]
        assert (ci.low, ci.high) == (None, None)
        assert ci.undefined_reason == ONE_QUESTION
        assert ci.undefined_reason.startswith("one question: nothing to resample")


def test_metrics_cli_says_why_one_question_has_no_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """20 sentences of one question, one claim each; the clinician marks an error on s0-s7;
    system A says refuted on s0-s5 and s8: under `-m refuted` TP 6, FN 2, FP 1, TN 11
    (recall 6/8 = 75.0). With --bootstrap it printed [75.0, 75.0]* and "zero-width interval;
    only 1 clusters (< 20)"; now no interval and one line saying why."""
    from failcodes import labelio, traceio
    from failcodes.labels import Label
    from failcodes.verdicts import Verdict
    from tests.metrics_fixtures import trace

    refuted = {0, 1, 2, 3, 4, 5, 8}
    traces = [
        trace("A", "q0", f"s{i}", f"c{i}", Verdict.REFUTED if i in refuted else Verdict.SUPPORTED)
        for i in range(20)
    ]
    labels = [Label(sentence_id=f"s{i}", question_id="q0", has_error=i < 8) for i in range(20)]
    traceio.write_traces(tmp_path / "t.jsonl", traces)
    labelio.write_labels(tmp_path / "l.csv", labels)
    args = ["metrics", "--traces", str(tmp_path / "t.jsonl"), "--labels", str(tmp_path / "l.csv")]
    args += ["-m", "refuted", "--bootstrap", "200"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["tp"], row["fn"], row["fp"], row["tn"]) == (6, 2, 1, 11)
    assert row["recall"] == pytest.approx(0.75)
    assert row["recall_ci_low"] is None and row["recall_ci_high"] is None
    assert row["recall_ci_undefined_reason"].startswith("one question: nothing to resample")
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    said = [line for line in (out + err).splitlines() if "no interval (one question" in line]
    assert len(said) == 1, out + err
    assert "75.0, 75.0" not in out
