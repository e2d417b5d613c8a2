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


@pytest.mark.parametrize(
    ("first", "fourth", "other"),
    [
        ('"x/y"', '"y/x"', '"x/y"'),  # a/b, as '/' joins codes in many exports
        ('"x\ny"', '"y\nx"', '"x\ny"'),  # a line break inside a spreadsheet cell (Alt+Enter)
        ('"[""x"", ""y""]"', '"[""y"", ""x""]"', '"[""x"", ""y""]"'),  # a JSON list
        ("\"['x', 'y']\"", "\"['y', 'x']\"", "\"['x', 'y']\""),  # pandas' to_csv of a list
    ],
)
def test_cells_joining_codes_another_way_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], first: str, fourth: str, other: str
) -> None:
    # Unit 1: {x, y} vs {x}; units 2, 3 agree; unit 4: {y, x} vs {x, y}. As sets, 3 of 4 units
    # agree (percent 0.750, by hand; `agree --sets /` gives it on the first shape). Each cell
    # was one category, so unit 4's two spellings of one set disagreed: percent 0.500, exit 0.
    path = tmp_path / "r.csv"
    path.write_text(f"item,r1,r2\n1,{first},x\n2,y,y\n3,x,x\n4,{fourth},{other}\n")
    args = ["agree", str(path), "--stat", "percent", "--bootstrap", "0", "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"failcodes: error: {path}:2, field 'r1': "), err
    assert "looks like a" in err and "--sets none" in err
    # the user's way through: --sets none reads each cell as one category, as before
    code, out, _ = run_cli([*args, "--sets", "none"], capsys)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(2 / 4)


def test_cells_joined_with_a_slash_read_as_sets_agree_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.csv"
    path.write_text("item,r1,r2\n1,x/y,x\n2,y,y\n3,x,x\n4,y/x,x/y\n")
    args = ["agree", str(path), "--stat", "percent", "--bootstrap", "0", "--format", "json"]
    code, out, _ = run_cli([*args, "--sets", "/"], capsys)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(3 / 4)  # by hand, above
