"""Session 33 (lead): a label rule on a column named as the error's absence (``no_error``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_csv
from tests.test_s29_t29red import _SENTENCES, _refuted_counts


@pytest.mark.parametrize("column", ["no_error", "error_free", "no_hallucination"])
def test_a_label_rule_on_a_column_named_as_the_errors_absence_reading_it_inverted_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    # The column is 1 on s1 and s3 (no error: supported), 0 on s2 and s4 (the errors, both
    # refuted): by hand TP 2, TN 2 under -m refuted. '{column} = 1 -> error' made s1 and s3 the
    # errors: TP 0, FP 2, FN 2, TN 0 at exit 0 on main (h33red2's left item: d2371f7 refused
    # --map no_error=has_error, not the label rule). Refused now, naming the rule the other way.
    table = write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", column],
        [[q, s, "1" if v == "supported" else "0"] for q, s, _, v in _SENTENCES],
    )
    out = tmp_path / "l.jsonl"
    args = ["ingest", "generic-labels", str(table), "-o", str(out), "--label-rule"]
    code, _, err = run_cli([*args, f"{column} = 1 -> error"], capsys)
    assert code == 2 and not out.exists(), err
    assert len(err.strip().splitlines()) == 1
    assert f"column {column!r} is named as if its true value marks a correct sentence" in err
    assert f"give '{column} = 0 -> error'" in err
    # the way it names reads it right: TP 2, TN 2
    code, _, err = run_cli([*args, f"{column} = 0 -> error"], capsys)
    assert code == 0, err
    assert _refuted_counts(tmp_path, out, capsys) == {"A": (2, 0, 0, 2)}
