"""Session 34 (h34scale): ``metrics`` at 100x paper scale, the bootstrap's blocks."""

from __future__ import annotations

import numpy as np
import pytest

from failcodes import metrics
from failcodes.stats.bootstrap import multinomial_weights


def test_a_block_of_the_bootstrap_draws_sixteen_resamples_at_100x_paper_scale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 100x paper scale (bench_engine --times 100): 100,000 questions, 4 systems. Each block
    # makes _summed of every cluster again; on main a block drew 262,144 // 100,000 = 2
    # resamples, so --bootstrap 200 made each question's 80 floats 100 times a mapping
    # (~80% of the bootstrap's time, 10.5-12.5 CPU-s of the two mappings' bootstrap against
    # 1.9-2.4 with blocks of 16). Here 32 resamples: 2 blocks of 16 (main: 16 blocks of 2).
    clusters = 100_000
    per_cluster = np.random.default_rng(3).integers(0, 3, size=(clusters, 4, 4))
    assert metrics._block_resamples(per_cluster) == 16
    made: list[int] = []
    summed = metrics._summed

    def counted(part: np.ndarray) -> np.ndarray:
        made.append(part.shape[0])
        return summed(part)

    monkeypatch.setattr(metrics, "_summed", counted)
    drawn = metrics.shared_bootstrap_intervals(
        [per_cluster], 32, np.random.default_rng([1, 2]), 0.9
    )[0]
    assert sum(made) == 2 * clusters  # every cluster's row made once a block, 2 blocks
    # the same intervals as one weight matrix of all 32 resamples (exact integer sums)
    whole = metrics.bootstrap_intervals(
        per_cluster, multinomial_weights(clusters, 32, np.random.default_rng([1, 2])), 0.9
    )
    assert drawn == whole


def test_the_block_floor_stays_within_its_memory_bound() -> None:
    # 1,000,000 clusters: 16 resamples would be 16M weight cells (128 MB of int64); the floor
    # takes (1 << 22) // 1,000,000 = 4. Paper scale (1,000 questions): 262 as before.
    assert metrics._block_resamples(np.zeros((1_000_000, 4, 4), dtype=np.int64)) == 4
    assert metrics._block_resamples(np.zeros((1_000, 4, 4), dtype=np.int64)) == 262
    # 400 systems of 3 questions: a resample's 16 x 400 squares bound it (40 resamples)
    assert metrics._block_resamples(np.zeros((3, 400, 4), dtype=np.int64)) == 40
