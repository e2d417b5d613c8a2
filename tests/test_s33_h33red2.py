"""Session 33 (h33red2): a has_error column named as the error's absence (``no_error``)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from failcodes.polarity import names_absent_error
from tests.cli_helpers import metrics_counts, run_cli

#: Four sentences, one claim each, one system A: s2 and s4 refuted, s1 and s3 supported.
_SENTENCES = [
    ["q1", "q1:s1", "Aspirin lowers fever.", "supported"],
    ["q1", "q1:s2", "Aspirin cures cancer.", "refuted"],
    ["q2", "q2:s1", "Ibuprofen is an NSAID.", "supported"],
    ["q2", "q2:s2", "Ibuprofen is safe in late pregnancy.", "refuted"],
]


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def _refuted_counts(
    tmp_path: Path, labels: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, tuple[int, int, int, int]]:
    """``metrics -m refuted`` of system A's traces of :data:`_SENTENCES` against ``labels``."""
    traces = _write_csv(
        tmp_path / "t.csv",
        ["system", "question_id", "sentence_id", "claim_id", "claim", "sentence", "verdict"],
        [["A", q, s, f"{s}:c1", text, text, v] for q, s, text, v in _SENTENCES],
    )
    code, stdout, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted",
         "--format", "csv"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    return metrics_counts(stdout, "refuted")


@pytest.mark.parametrize(
    "column", ["no_error", "error_free", "without_error", "no_hallucination", "not_wrong"]
)
def test_a_has_error_column_named_as_the_errors_absence_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    # The column is true on s1 and s3 (no error), false on s2 and s4: by hand the errors are s2
    # and s4, both refuted, so under -m refuted TP 2, TN 2. main read true as has_error: error
    # labels on s1 and s3, metrics TP 0, FP 2, FN 2, TN 0, exit 0 (h33red2).
    table = _write_csv(
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
