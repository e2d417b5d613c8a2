"""Session 20, t20s2c: P/R/F1-family intervals on few events say so beside them."""

from __future__ import annotations

import numpy as np

from failcodes.metrics import Interval, bootstrap_intervals
from failcodes.stats.bootstrap import multinomial_weights


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
