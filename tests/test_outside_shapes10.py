"""Shapes from redteam10's outside check (issue 30): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import failcodes as fc
from failcodes.errors import InputError
from tests.cli_helpers import run_cli


def _percent(frame: pd.DataFrame) -> float:
    (row,) = fc.agreement_table(fc.ratings_from_frame(frame), ["percent"])
    assert row.value is not None
    return row.value


def test_api_frame_with_a_rating_in_another_case_is_refused() -> None:
    # r1 wrote 'Yes' on item 3 where everyone else wrote 'yes'. Read as one category the
    # raters agree on all 5 items (percent 5/5 = 1.0); read as written, 'Yes' and 'yes' were
    # two categories and item 3 a disagreement: 4/5 = 0.8, exit 0 (the CLI refuses the same
    # table in one line; the Python API did not).
    frame = pd.DataFrame(
        {
            "item": [1, 2, 3, 4, 5],
            "r1": ["yes", "no", "Yes", "yes", "no"],
            "r2": ["yes", "no", "yes", "yes", "no"],
        }
    )
    with pytest.raises(InputError) as err:
        fc.ratings_from_frame(frame)
    assert err.value.field == "r1"
    assert "'Yes' is 'yes'" in str(err.value)
    frame.loc[2, "r1"] = "yes"
    assert _percent(frame) == pytest.approx(1.0)  # 5/5


def test_api_frame_with_a_date_rating_is_refused() -> None:
    # an Excel column read by pandas: 1/2 became a date; as a category it matched only
    # another identical date
    frame = pd.DataFrame(
        {"item": [1, 2], "r1": [pd.Timestamp("2024-01-02"), "3"], "r2": ["1/2", "3"]}
    )
    with pytest.raises(InputError, match="date or time"):
        fc.ratings_from_frame(frame)


def _boolean_column_table(path: Path, wrong: list[object]) -> None:
    table = pa.table(
        {
            "system": ["A"] * 4,
            "question_id": ["q"] * 4,
            "sentence_id": ["s0", "s1", "s2", "s3"],
            "claim": ["w", "x", "y", "z"],
            "verdict": ["refuted", "supported", "refuted", "supported"],
            "wrong": wrong,
        }
    )
    pq.write_table(table, path)


@pytest.mark.parametrize(
    ("wrong", "rule", "spelling"),
    [
        ([True, False, False, True], "wrong = 1 -> error", "'1', which no row has, and not 'True'"),
        ([1.0, 0.0, 0.0, 1.0], "wrong = true -> error", "'true', which no row has, and not '1.0'"),
        ([True, False, False, True], "wrong in {yes} -> error", "'yes', which no row has"),
    ],
)
def test_label_rule_naming_a_truth_value_the_rows_write_another_way_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    wrong: list[object],
    rule: str,
    spelling: str,
) -> None:
    # A Parquet column 'wrong' holding booleans (read as true/false) and the rule 'wrong = 1':
    # no row matched '1', so all four got the opposite label: 0 error / 4 no-error where the
    # column says 2 / 2 (s0 and s3 are True), exit 0 with a note "no row has '1'".
    path = tmp_path / "t.parquet"
    _boolean_column_table(path, wrong)
    args = ["ingest", "generic", str(path), "-o", str(tmp_path / "t.jsonl")]
    code, _, err = run_cli(
        [*args, "--labels-out", str(tmp_path / "l.jsonl"), "--label-rule", rule], capsys
    )
    assert code == 2
    assert err.count("\n") == 1 and spelling in err and "field 'wrong'" in err
    assert not (tmp_path / "l.jsonl").exists()


def test_label_rule_written_as_the_column_writes_it_labels_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the same column with the rule's value as the rows write it: s0 and s3 errors (True),
    # s1 and s2 not: 2 error / 2 no-error
    path = tmp_path / "t.parquet"
    _boolean_column_table(path, [True, False, False, True])
    labels = tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(path), "-o", str(tmp_path / "t.jsonl")]
    code, _, _ = run_cli(
        [*args, "--labels-out", str(labels), "--label-rule", "wrong = true -> error"], capsys
    )
    assert code == 0
    got = [json.loads(line) for line in labels.read_text().splitlines()]
    assert [(g["sentence_id"], g["has_error"]) for g in got] == [
        ("s0", True),
        ("s1", False),
        ("s2", False),
        ("s3", True),
    ]
