"""Shapes from i34red's outside check (issue 30): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def test_a_long_table_whose_units_were_each_rated_once_compares_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # item, annotator, code: A rated items 1-3, B items 4-6, so no unit has two ratings and
    # every coefficient is undefined (by hand: no rater pair on any unit). The ids did not
    # repeat, so the table was read as wide, its 'annotator' and 'code' columns as two raters
    # (no value in common): percent 0.000, Fleiss -0.358, exit 0.
    path = tmp_path / "r.csv"
    path.write_text("item,annotator,code\n1,A,x\n2,A,y\n3,A,x\n4,B,y\n5,B,x\n6,B,x\n")
    code, out, _ = run_cli(["agree", str(path), "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert {r["statistic"] for r in rows} >= {"percent", "fleiss", "krippendorff"}
    assert all(r["value"] is None for r in rows)
    assert rows[0]["raters"] == ["A", "B"]
    # the control: a wide table whose 'judge' column rates as 'human' does stays wide
    path.write_text("item,judge,human\n1,x,x\n2,y,x\n3,x,x\n")
    code, out, _ = run_cli(
        ["agree", str(path), "--bootstrap", "0", "--stat", "percent", "--format", "json"], capsys
    )
    assert code == 0
    assert json.loads(out)[0]["value"] == pytest.approx(2 / 3)  # items 1 and 3 of 3
