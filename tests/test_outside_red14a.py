"""Outside red-team of the data path, session 14 (t14red1): shapes the other tests do not use.

Each test states the input, what main gave at exit 0 before the fix, and what it gives now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

#: Shared sentence labels of two questions, two sentences each: q1s0 and q2s1 are errors.
_LABELS = {"q1s0": True, "q1s1": False, "q2s0": False, "q2s1": True}


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _system_file(path: Path, system: str, sid: str, refuted: set[str]) -> Path:
    """One system's traces: a claim per labelled sentence, its id written as ``sid`` makes it."""
    rows: list[dict[str, object]] = [
        {
            "system": system,
            "question_id": key[:2],
            "sentence_id": sid.format(q=key[:2], s=key[2:]),
            "claim_id": f"{key}c0",
            "claim": f"claim of {key}",
            "verdict": "refuted" if key in refuted else "supported",
        }
        for key in _LABELS
    ]
    return _jsonl(path, rows)


def test_one_systems_file_numbering_its_sentences_another_way_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One file per system: sysA writes the labels' ids (q1s0), sysB's file q1-s0. Each flags
    # q1s0 and q2s1, the two errors: TP 2, FN 0 for both. main gave sysA TP 2 / TN 2 and
    # sysB TP 0, FN 2, TN 2 (recall 0/2 for 2/2) at exit 0: each labelled sentence was one
    # sysB "made no claim for" (no error flagged), its own four sentences unlabelled.
    a = _system_file(tmp_path / "a.jsonl", "sysA", "{q}{s}", {"q1s0", "q2s1"})
    b = _system_file(tmp_path / "b.jsonl", "sysB", "{q}-{s}", {"q1s0", "q2s1"})
    labels = _jsonl(
        tmp_path / "labels.jsonl",
        [{"sentence_id": k, "question_id": k[:2], "has_error": v} for k, v in _LABELS.items()],
    )
    for command in ("metrics", "disagreements"):
        out = tmp_path / f"{command}.json"
        args = [command, "--traces", str(a), "--traces", str(b), "--labels", str(labels)]
        code, _, err = run_cli([*args, "-m", "refuted", "-o", str(out)], capsys)
        assert code == 2
        assert err.strip().splitlines() == [
            f"failcodes: error: {labels}:1, field 'sentence_id': no sentence of system 'sysB' "
            "is labelled in the 2 labelled question(s) it made claims in (question 'q1': its "
            "'q1-s0', the labels' 'q1s0'): each labelled sentence would count as one it made no "
            "claim for (no error flagged) and its own as unlabelled; write its sentence ids as "
            "the labels do, or, if each system wrote its own answer, give the labels a system "
            "column (labels per system)"
        ]
        assert not out.exists()
    # written alike, both are scored on their own claims: TP 2, FP 0, FN 0, TN 2 each
    b = _system_file(tmp_path / "b.jsonl", "sysB", "{q}{s}", {"q1s0", "q2s1"})
    out = tmp_path / "m.json"
    args = ["metrics", "--traces", str(a), "--traces", str(b), "--labels", str(labels)]
    code, _, _ = run_cli([*args, "-m", "refuted", "-o", str(out)], capsys)
    assert code == 0
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["system"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in rows] == [
        ("sysA", 2, 0, 0, 2),
        ("sysB", 2, 0, 0, 2),
    ]
