"""Review of session 16's refusals and numbers (t17rev): false refusals and their way through.

Each test states the input, what main gave before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def _jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _trace(question: str, sentence: str, claim: str, verdict: str) -> dict[str, object]:
    return {
        "system": "A",
        "question_id": question,
        "sentence_id": sentence,
        "claim_id": claim,
        "claim": f"claim of {sentence}",
        "verdict": verdict,
    }


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_labels_and_traces_both_numbered_from_zero_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    # Both number each answer's sentences from 0, and sentence 0 of both answers (a preamble)
    # gave no claim: traces q1:1, q1:2, q2:1; every sentence labelled (q1:0..q1:2, q2:0..q2:1).
    # 3e00fce refused it as labels numbered from 0 for traces numbered from 1 ("number the
    # labels as the traces do": they are), exit 2, no way through. No trace is numbered past
    # its answer's last label, so nothing shows a shift. By hand: q1:0 ok, no claim (TN);
    # q1:1 error, refuted (TP); q1:2 ok, supported (TN); q2:0 ok, no claim (TN); q2:1 ok,
    # refuted (FP): n 5, TP 1, FP 1, FN 0, TN 3.
    traces = _jsonl(
        tmp_path / "t.jsonl",
        [
            _trace("q1", "q1:1", "c1", "refuted"),
            _trace("q1", "q1:2", "c2", "supported"),
            _trace("q2", "q2:1", "c3", "refuted"),
        ],
    )
    labels = _jsonl(
        tmp_path / "l.jsonl",
        [
            {"question_id": "q1", "sentence_id": "q1:0", "has_error": False},
            {"question_id": "q1", "sentence_id": "q1:1", "has_error": True},
            {"question_id": "q1", "sentence_id": "q1:2", "has_error": False},
            {"question_id": "q2", "sentence_id": "q2:0", "has_error": False},
            {"question_id": "q2", "sentence_id": "q2:1", "has_error": False},
        ],
    )
    if suffix == ".parquet":  # the study's own Parquet (the engine's groups path)
        own = tmp_path / "t.parquet"
        assert run_cli(["ingest", "generic", str(traces), "-o", str(own)], capsys)[0] == 0
        traces = own
    m = tmp_path / "m.json"
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, _, err = run_cli([*args, "--format", "json", "-o", str(m)], capsys)
    assert code == 0, err
    rows = json.loads(m.read_text(encoding="utf-8"))
    assert [(r["n"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [(5, 1, 1, 0, 3)]
