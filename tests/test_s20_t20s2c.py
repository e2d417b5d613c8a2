"""Session 20, t20s2c: P/R/F1-family intervals on few events say so beside them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from failcodes.metrics import Interval, bootstrap_intervals
from failcodes.stats.bootstrap import multinomial_weights
from tests.cli_helpers import run_cli


def _intervals(rows: list[list[int]]) -> dict[str, Interval]:
    per_cluster = np.asarray(rows, dtype=np.int64)[:, None, :]  # (questions, 1 system, 4)
    weights = multinomial_weights(len(rows), 1000, np.random.default_rng(0))
    return bootstrap_intervals(per_cluster, weights, 0.95)[0]


def test_percentile_interval_on_few_events_carries_a_warning() -> None:
    """40 questions of 2 claims, 4 of them with one false alarm, no clinician error:
    accuracy = specificity = 76/80 = 0.95, 4 units on the ratio's rarer side (< 10), so the
    percentile interval is used; with 40 questions, 80 units, 1000 resamples no other reason
    fired and it was shown with no word. Unwarned, such intervals covered 0.889 (claim-level
    accuracy, 40 one-sentence questions of 1-3 claims, prevalence 5%, recall 0.5, false
    alarms 5%, 400 data sets, seed [20261204, 40, 5, 50, True]; docs/statistics.md)."""
    iv = _intervals([[0, 1, 0, 1]] * 4 + [[0, 0, 0, 2]] * 36)
    note = (
        "only 4 units on the rarer side of its ratio (< 10): a percentile interval, "
        "which under-covers"
    )
    for name in ("accuracy", "specificity"):
        got = iv[name]
        assert got.method == "percentile"
        assert got.warning == note, (name, got.warning)


def test_studentized_interval_on_enough_events_stays_unwarned() -> None:
    """12 of the 40 questions with a false alarm: 68/80 = 0.85, 12 >= 10 on the rarer side:
    studentized, and nothing to say."""
    iv = _intervals([[0, 1, 0, 1]] * 12 + [[0, 0, 0, 2]] * 28)
    for name in ("accuracy", "specificity"):
        got = iv[name]
        assert got.method == "studentized"
        assert got.warning is None, (name, got.warning)


def test_compare_bootstrap_interval_of_a_difference_says_why_it_may_not_cover(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`compare preds.csv --truth label --method bootstrap`: two systems with the same calls on
    8 units gave recall and F1 differences 0 with interval [0, 0] and note null. Now the note
    says why: zero width, 8 units (< 50), 3 positives (< 10). Percentile intervals of such
    differences covered 0.40-0.79 at 20 units, 0.67-0.94 at 40 (recall 0.9 vs 0.6, prevalence
    10-20%, 300 seeded data sets a cell: docs/statistics.md)."""
    csv = tmp_path / "preds.csv"
    rows = ["unit,label,a,b"] + [
        f"u{i},{y},{p},{p}" for i, (y, p) in enumerate(zip("11100000", "10101000", strict=True))
    ]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["compare", str(csv), "--truth", "label", "--method", "bootstrap"]
    code, out, err = run_cli([*args, "--resamples", "1000", "--format", "json"], capsys)
    assert code == 0, err
    tests = [r for r in json.loads(out)["tests"] if r["ci_low"] is not None]
    assert {r["test"] for r in tests} == {"bootstrap_f1", "bootstrap_recall"}
    for r in tests:
        assert (r["ci_low"], r["ci_high"]) == (0.0, 0.0)  # the same calls: every resample 0
        assert r["note"] == (  # 3 positives: "11100000"
            "interval: zero-width interval; only 8 units (< 50); only 3 positives (< 15)"
        ), r


def test_compare_bootstrap_interval_on_few_positives_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """60 units, 6 of them errors; a finds 5, b 2, no false alarms: recall difference
    5/6 - 2/6 = 0.5 on 6 positives, 60 units (>= 50), so no other reason: the note said
    nothing. Recall-difference intervals at 100 units, prevalence 0.1 (about 10 positives)
    covered 0.907 (docs/statistics.md)."""
    csv = tmp_path / "preds.csv"
    calls = [(1, 1, 1)] * 2 + [(1, 1, 0)] * 3 + [(1, 0, 0)] + [(0, 0, 0)] * 54
    rows = ["unit,label,a,b"] + [f"u{i},{y},{a},{b}" for i, (y, a, b) in enumerate(calls)]
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["compare", str(csv), "--truth", "label", "--method", "bootstrap"]
    code, out, err = run_cli([*args, "--resamples", "1000", "--format", "json"], capsys)
    assert code == 0, err
    recall = [r for r in json.loads(out)["tests"] if r["test"] == "bootstrap_recall"]
    assert [r["effect"] for r in recall] == [0.5]
    assert recall[0]["note"] == "interval: only 6 positives (< 15)", recall[0]
