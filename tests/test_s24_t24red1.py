"""Session 24 red team (t24red1): the data path on shapes the tests did not use.

Each test failed on the code before its fix; the right values are counted by hand beside
the assertions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _traces(system: str, ids: list[str], verdicts: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "system": system,
            "question_id": "q1",
            "sentence_id": sid,
            "claim_id": f"{system}{i}",
            "claim": f"claim {i}",
            "verdict": verdict,
        }
        for i, (sid, verdict) in enumerate(zip(ids, verdicts, strict=True))
    ]


def _labels(ids: list[str], errors: list[bool]) -> list[dict[str, Any]]:
    return [
        {"question_id": "q1", "sentence_id": sid, "has_error": err}
        for sid, err in zip(ids, errors, strict=True)
    ]


@pytest.mark.parametrize(
    ("written", "how"),
    [
        ("q1:s0\u200b", "U+200B"),  # a zero-width space pasted after the id
        ("q1:\uff530", "U+FF53"),  # a fullwidth 's' (an East Asian input method)
        ("q1\uff1as0", "U+FF1A"),  # a fullwidth colon
    ],
)
def test_a_label_id_that_looks_like_a_traces_id_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, how: str
) -> None:
    # gpt: s0 refuted, s1 supported, s2 supported; labels s0 error, s1 error, s2 no error.
    # By hand TP 1 (s0), FN 1 (s1), TN 1 (s2). With s0's label written with a character
    # that shows as nothing (or in a fullwidth form) the label named no trace's sentence:
    # it counted as a sentence gpt made no claim for (a miss) and gpt's s0 went unlabelled:
    # TP 0, FN 2, TN 1, exit 0.
    ids = ["q1:s0", "q1:s1", "q1:s2"]
    traces = _jsonl(
        tmp_path / "t.jsonl", _traces("gpt", ids, ["refuted", "supported", "supported"])
    )
    good = _jsonl(tmp_path / "good.jsonl", _labels(ids, [True, True, False]))
    args = ["metrics", "--traces", str(traces), "-m", "refuted", "--format", "json"]
    code, out, err = run_cli([*args, "--labels", str(good)], capsys)
    assert code == 0, err
    row = json.loads(out)[0]
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 1, 1)
    bad = _jsonl(tmp_path / "bad.jsonl", _labels([written, *ids[1:]], [True, True, False]))
    code, out, err = run_cli([*args, "--labels", str(bad)], capsys)
    assert code == 2, out
    assert err.count("\n") == 1
    assert "bad.jsonl:1, field 'sentence_id'" in err
    assert "'q1:s0'" in err and how in err


def test_one_systems_sentence_id_with_a_zero_width_space_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # gpt and claude checked one answer (shared labels s0 error, s1 error, s2 no error);
    # claude's file writes s0 with a zero-width space after it. claude by hand: s0 refuted
    # (TP), s1 refuted (TP), s2 supported (TN): TP 2, TN 1. Read as written, claude's s0
    # claim was unlabelled and the labelled s0 one it made no claim for: TP 1, FN 1, TN 1,
    # exit 0 (said only as "claude: 3 of 4" on line 2).
    ids = ["q1:s0", "q1:s1", "q1:s2"]
    gpt = _jsonl(tmp_path / "gpt.jsonl", _traces("gpt", ids, ["refuted", "supported", "supported"]))
    odd = ["q1:s0\u200b", *ids[1:]]
    claude = _jsonl(
        tmp_path / "claude.jsonl", _traces("claude", odd, ["refuted", "refuted", "supported"])
    )
    labels = _jsonl(tmp_path / "labels.jsonl", _labels(ids, [True, True, False]))
    code, out, err = run_cli(
        [
            "metrics",
            "--traces",
            str(gpt),
            "--traces",
            str(claude),
            "--labels",
            str(labels),
            "-m",
            "refuted",
        ],
        capsys,
    )
    assert code == 2, out
    assert "labels.jsonl:1, field 'sentence_id'" in err
    assert "U+200B" in err and "'q1:s0'" in err
