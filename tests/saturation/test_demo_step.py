"""The demo's saturation step: one offline round, a review file for a human, no decision."""

from __future__ import annotations

from pathlib import Path

import yaml

from failcodes.demo import STEPS, run_demo
from failcodes.saturation import ProjectStore, RoundPhase


def test_demo_step_writes_a_review_file_and_decides_nothing(tmp_path: Path) -> None:
    steps = [s for s in STEPS if s.name in ("study", "saturation")]
    assert [s.name for s in steps] == ["study", "saturation"]
    lines = [line for _, out in run_demo(tmp_path, steps) for line in out.lines]
    root = tmp_path / "saturation" / "demo-retrieval"
    store = ProjectStore.open(root)
    record = store.round(1)
    assert store.decisions() == []  # nothing accepted on the reviewer's behalf
    if record.phase is RoundPhase.PROPOSED:
        review = store.review_path(1)
        assert f"review file for a human: {review}" in lines
        data = yaml.safe_load(review.read_text())
        assert data["proposals"] and all(
            "heuristic baseline" in p["proposer"] for p in data["proposals"]
        )
    else:
        assert any("nothing to review" in line for line in lines)
    # running the demo again reuses the project instead of failing or drawing again
    list(run_demo(tmp_path, steps))
    assert ProjectStore.open(root).round_numbers() == [1]
