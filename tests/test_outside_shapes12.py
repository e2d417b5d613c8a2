"""Shapes from i35red's outside check (issue 30): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

# Three raters on 12 units and their row-wise majority (random.seed(1) draws, written out).
R1 = ["yes", "yes", "no", "yes", "no", "no", "yes", "yes", "no", "yes", "no", "yes"]
R2 = ["yes", "no", "no", "no", "no", "no", "no", "yes", "yes", "yes", "yes", "yes"]
R3 = ["no", "no", "yes", "yes", "yes", "yes", "yes", "yes", "no", "no", "no", "no"]


@pytest.mark.parametrize(
    "name", ["MajorityVote", "GoldLabel", "FinalLabel", "majorityLabel", "groundtruth"]
)
def test_a_camel_case_consensus_column_is_left_out_of_the_raters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # Before: the name was one word ('majorityvote'), held no consensus word, and 12 rows are
    # too few for the value rule, so the majority was a fourth rater: Fleiss 0.082 for the
    # three raters' -0.226 (statsmodels' fleiss_kappa, below), exit 0.
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    majority = [max(set(t), key=t.count) for t in zip(R1, R2, R3, strict=True)]
    path = tmp_path / "r.csv"
    rows = zip(range(12), R1, R2, R3, majority, strict=True)
    path.write_text(f"item,r1,r2,r3,{name}\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    three = fleiss_kappa(aggregate_raters(list(zip(R1, R2, R3, strict=True)))[0])
    four = fleiss_kappa(aggregate_raters(list(zip(R1, R2, R3, majority, strict=True)))[0])
    assert (round(three, 3), round(four, 3)) == (-0.226, 0.082)
    args = ["agree", str(path), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    (row,) = json.loads(out)
    assert row["raters"] == ["r1", "r2", "r3"] and name in row["left_out"]
    assert row["value"] == pytest.approx(three)
