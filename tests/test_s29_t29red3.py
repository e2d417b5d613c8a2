"""Session 29 round 2 (t29red3): outside shapes at the command line, each counted by hand."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


#: Four sentences, one claim each (no claim id column: ``--option ids=claim`` makes them).
_CLAIMS = [
    ["q1", "s1", "Aspirin lowers fever."],
    ["q1", "s2", "Aspirin cures cancer."],
    ["q2", "s3", "Ibuprofen is an NSAID."],
    ["q2", "s4", "Ibuprofen is safe in late pregnancy."],
]


def test_ids_claim_folds_whitespace_so_a_claim_keeps_one_id_in_every_systems_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A's table carries the clinicians' claim labels (s2, s4 wrong); B's export of the same
    # claims has a trailing space on s2's text and a line break inside s4's (an Excel cell).
    # Both systems refute s2 and s4 and support s1 and s3: by hand, claim level, -m refuted,
    # each TP 2 (s2, s4), TN 2 (s1, s3). main hashed the raw text: B's s2 and s4 got other
    # claim ids than A's labels, left out as 'unlabelled': B n 2, TP 0, FP 0, FN 0, TN 2.
    verdict = {"s1": "supported", "s2": "refuted", "s3": "supported", "s4": "refuted"}
    wrong = {"s2", "s4"}
    a = _write_csv(
        tmp_path / "a.csv",
        ["question_id", "sentence_id", "claim", "verdict", "label"],
        [[q, s, c, verdict[s], "wrong" if s in wrong else "ok"] for q, s, c in _CLAIMS],
    )
    b_text = {"s2": "Aspirin cures cancer. ", "s4": "Ibuprofen is safe in\r\nlate pregnancy."}
    b = _write_csv(
        tmp_path / "b.csv",
        ["question_id", "sentence_id", "claim", "verdict"],
        [[q, s, b_text.get(s, c), verdict[s]] for q, s, c in _CLAIMS],
    )
    ids = ["--option", "ids=claim"]
    code, _, err = run_cli(
        [
            *("ingest", "generic", str(a), "-o", str(tmp_path / "a.jsonl"), "--system", "A"),
            *ids,
            *("--labels-out", str(tmp_path / "l.jsonl")),
            *("--label-rule", "label in {wrong} -> error"),
        ],
        capsys,
    )
    assert code == 0, err
    code, _, err = run_cli(
        ["ingest", "generic", str(b), "-o", str(tmp_path / "b.jsonl"), "--system", "B", *ids],
        capsys,
    )
    assert code == 0, err
    code, out, err = run_cli(
        [
            *("metrics", "--traces", str(tmp_path / "a.jsonl")),
            *("--traces", str(tmp_path / "b.jsonl"), "--labels", str(tmp_path / "l.jsonl")),
            *("-m", "refuted", "--level", "claim", "--format", "csv"),
        ],
        capsys,
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"A": (2, 0, 0, 2), "B": (2, 0, 0, 2)}
