"""Session 33 (h33red2): a has_error column named as the error's absence (``no_error``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes.polarity import names_absent_error
from tests.cli_helpers import run_cli, write_csv
from tests.test_s29_t29red import _SENTENCES, _refuted_counts


@pytest.mark.parametrize(
    "column", ["no_error", "error_free", "without_error", "no_hallucination", "not_wrong"]
)
def test_a_has_error_column_named_as_the_errors_absence_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    # The column is true on s1 and s3 (no error), false on s2 and s4: by hand the errors are s2
    # and s4, both refuted, so under -m refuted TP 2, TN 2. main read true as has_error: error
    # labels on s1 and s3, metrics TP 0, FP 2, FN 2, TN 0, exit 0 (h33red2).
    table = write_csv(
        tmp_path / "l.csv",
        ["question_id", "sentence_id", column],
        [[q, s, "true" if v == "supported" else "false"] for q, s, _, v in _SENTENCES],
    )
    out = tmp_path / "l.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(table), "-o", str(out), "--map", f"{column}=has_error"],
        capsys,
    )
    assert code == 2 and not out.exists()
    assert f"--map {column}=has_error: the column's name says true means correct" in err
    assert len(err.strip().splitlines()) == 1
    # the way it names reads it right: TP 2, TN 2
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(table), "-o", str(out), "--label-rule",
         f"{column} = false -> error"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert _refuted_counts(tmp_path, out, capsys) == {"A": (2, 0, 0, 2)}


def test_names_that_flag_an_error_or_say_nothing_plain_are_not_read_as_its_absence() -> None:
    for name in ("no_error", "error_free", "is_error_free", "harmless", "low_risk", "no_errors"):
        assert names_absent_error(name), name
    for name in ("has_error", "is_hallucination", "not_supported", "non_factual", "not_safe",
                 "error_corrected", "error", "no_issue", "correct_no_error_label"):  # fmt: skip
        assert not names_absent_error(name), name
