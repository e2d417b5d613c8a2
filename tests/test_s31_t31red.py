"""Session 31 (t31red): data shapes nobody tried, run as a researcher would, counted by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import metrics_counts, run_cli

#: Two answers of three sentences, one claim each; the system's verdict is right on all six
#: (refuted on the three errors, supported on the rest): TP 3, FP 0, FN 0, TN 3 by hand.
#: (text, verdict, the clinician's error, the sentence's character offset in the answer)
_ANSWERS = {
    "q1": [
        ("Aspirin lowers fever.", "refuted", True, 0),
        ("It is an NSAID.", "supported", False, 22),
        ("It cures cancer.", "refuted", True, 38),
    ],
    "q2": [
        ("Ibuprofen is safe.", "supported", False, 0),
        ("It treats viral infections.", "refuted", True, 19),
        ("Take it with food.", "supported", False, 47),
    ],
}


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _offset_study(folder: Path, *, texts: bool) -> tuple[Path, Path]:
    """Traces numbered by place (q1:0, q1:1, q1:2), labels keyed by character offset."""
    traces, labels = [], []
    for q, sentences in _ANSWERS.items():
        for i, (text, verdict, error, offset) in enumerate(sentences):
            sid = f"{q}:{i}"
            traces.append(
                {
                    "system": "gpt",
                    "question_id": q,
                    "sentence_id": sid,
                    "claim_id": sid,
                    "claim": text,
                    "sentence": text,
                    "verdict": verdict,
                }
            )
            label: dict[str, object] = {
                "question_id": q,
                "sentence_id": f"{q}:{offset}",
                "has_error": error,
            }
            if texts:
                label["sentence"] = text
            labels.append(label)
    return _jsonl(folder / "t.jsonl", traces), _jsonl(folder / "l.jsonl", labels)


@pytest.mark.parametrize("command", ["metrics", "disagreements"])
def test_labels_keyed_by_character_offset_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # Main read them: 'q1:0'/'q2:0' met their traces, the four offsets (q1:22, q1:38, q2:19,
    # q2:47) none, so they counted as labelled sentences without claims (no error flagged):
    # q1:0 TP, q1:22 TN, q1:38 FN, q2:0 TN, q2:19 FN, q2:47 TN -> TP 1, FP 0, FN 2, TN 3,
    # recall 1/3 for the system's 3/3, exit 0, said only as "labels cover 6 of 10".
    traces, labels = _offset_study(tmp_path, texts=False)
    extra = ["-o", str(tmp_path / "d.jsonl")] if command == "disagreements" else []
    code, out, err = run_cli(
        [command, "--traces", str(traces), "--labels", str(labels), *extra], capsys
    )
    assert code == 2, out
    assert err.count("\n") == 1, err
    assert "l.jsonl:2, field 'sentence_id'" in err  # q1:22, the first label without a trace
    assert "number sentences otherwise than the traces in 2 answers" in err
    assert "'q1:22', 'q1:38'" in err and "'q1:1', 'q1:2' with claims have no label" in err
    assert not (tmp_path / "d.jsonl").exists()


def test_labels_numbered_from_1_for_traces_from_0_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Labels q1:1..q1:3 for traces q1:0..q1:2 (the reverse of the from-0 check): main put
    # each label on the sentence before its own, the last on none. By hand on main: q1:1
    # (error) on 'It is an NSAID.' supported FN, q1:2 (none) on q1:2 refuted FP, q1:3 (error)
    # no claim FN, q2:1 (none) refuted FP, q2:2 (error) supported FN, q2:3 (none) no claim
    # TN -> TP 0, FP 2, FN 3, TN 1 for the system's TP 3, TN 3, exit 0.
    traces, _ = _offset_study(tmp_path, texts=False)
    labels = _jsonl(
        tmp_path / "l1.jsonl",
        [
            {"question_id": q, "sentence_id": f"{q}:{i + 1}", "has_error": error}
            for q, sentences in _ANSWERS.items()
            for i, (_, _, error, _) in enumerate(sentences)
        ],
    )
    code, out, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert (code, out) == (2, ""), out
    assert "l1.jsonl:3, field 'sentence_id'" in err  # q1:3, the first without a trace
    assert "labels 'q1:3' name no trace's sentence, past the last with claims, 'q1:2'" in err
    assert "numbers from 1 where the traces count from 0" in err


def test_offset_labels_read_as_given_when_they_give_their_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The way through the refusal names (the labels give their sentence's text): read as
    # given, the counts above by hand (TP 1, FN 2, TN 3), as for sentences without claims.
    traces, labels = _offset_study(tmp_path, texts=True)
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"gpt": (1, 0, 2, 3)}


def test_a_labelled_subset_beside_a_claimless_last_sentence_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not the pattern: in each answer the clinicians labelled q:0 and a claimless closing
    # sentence q:9 (an error in q1, none in q2) and left q:1, q:2 unlabelled (2 skipped, 1
    # label without a trace). By hand: q1:0 refuted/error TP, q1:9 no claim/error FN,
    # q2:0 supported/no error TN, q2:9 no claim/no error TN -> TP 1, FP 0, FN 1, TN 2.
    traces, _ = _offset_study(tmp_path, texts=False)
    labels = _jsonl(
        tmp_path / "subset.jsonl",
        [
            {"question_id": "q1", "sentence_id": "q1:0", "has_error": True},
            {"question_id": "q1", "sentence_id": "q1:9", "has_error": True},
            {"question_id": "q2", "sentence_id": "q2:0", "has_error": False},
            {"question_id": "q2", "sentence_id": "q2:9", "has_error": False},
        ],
    )
    code, out, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "--format", "csv"], capsys
    )
    assert code == 0, err
    assert metrics_counts(out, "refuted") == {"gpt": (1, 0, 1, 2)}
