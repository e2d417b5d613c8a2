"""Session 13 lead's shapes: each with the hand-counted value or the exact line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

# two systems' verdicts, two raters and their majority in one table (one row per sentence)
RATED = """question_id,sentence_id,claim,gpt,claude,clin1,clin2,majority
q1,s1,Aspirin reduces fever,Supported,Supported,correct,correct,correct
q1,s2,Aspirin cures cancer,Supported,Refuted,wrong,wrong,wrong
q2,s3,Insulin lowers glucose,Refuted,Supported,correct,wrong,correct
q2,s4,Vitamin C prevents colds,NEI,Refuted,wrong,correct,wrong
"""


def test_unmapped_drop_names_the_rater_columns_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the label came from 'majority'; the raters clin1 and clin2 (who disagree on s3 and s4)
    # were dropped by --option unmapped=drop with no word
    table = tmp_path / "t.csv"
    table.write_text(RATED)
    args = ["ingest", "generic", str(table), "--verdict-column", "gpt", "--verdict-column",
            "claude", "--label-rule", "majority = wrong -> error", "--labels-out",
            str(tmp_path / "l.jsonl"), "-o", str(tmp_path / "t.jsonl"),
            "--option", "unmapped=drop"]  # fmt: skip
    code, _, err = run_cli(args, capsys)
    assert code == 0
    assert (
        "--option unmapped=drop left out 2 column(s) no field or option reads: clin1, clin2" in err
    )
    # 2 systems x 4 rows; s2 and s4 are 'wrong' by majority: 2 error / 2 no-error
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 8
    labels = [json.loads(x) for x in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert sorted(lb["sentence_id"] for lb in labels if lb["has_error"]) == ["s2", "s4"]
    # without the option the first unknown column is refused (unchanged)
    code, _, err = run_cli(args[:-2], capsys)
    assert code == 2 and "field 'clin1': unknown column" in err


def test_undefined_rows_carry_the_asked_confidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --confidence 0.5: the left-out gwet_ac2 row (quadratic weights on nominal numeric codes)
    # said confidence 0.95 in the JSON rows beside the others' 0.5
    table = tmp_path / "r.csv"
    table.write_text("unit,r1,r2\nu1,1,1\nu2,2,2\nu3,1,2\nu4,2,2\n")
    code, out, _ = run_cli(["agree", str(table), "--confidence", "0.5", "--format", "json"], capsys)
    assert code == 0
    rows = {r["statistic"]: r for r in json.loads(out)}
    # Cohen by hand: p_o = 3/4; r1 codes 1,2 at 1/2 each, r2 at 1/4, 3/4: p_e = 1/2; (3/4-1/2)/(1/2)
    assert rows["cohen"]["value"] == pytest.approx(0.5)
    assert rows["cohen"]["confidence"] == 0.5
    assert rows["gwet_ac2"]["value"] is None
    assert rows["gwet_ac2"]["confidence"] == 0.5
