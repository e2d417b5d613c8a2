"""compare --traces, and disagreements at claim level, say how many units the labels cover.

Issue 30 (i36cov), after 8dbaf89 (tests/test_label_coverage_line.py): ``compare --traces``
left unlabelled sentences out of every paired test without a word, and ``disagreements
--level claim`` printed no coverage line where ``metrics --level claim`` did (in claims).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.labels import LabelIndex
from failcodes.metrics import Level, label_coverage
from failcodes.tracecols import TraceColumns
from failcodes.traces import Trace
from failcodes.verdicts import Verdict
from tests.cli_helpers import run_cli
from tests.test_label_coverage_line import LABELS, coverage_traces, write_inputs

R, S = Verdict.REFUTED, Verdict.SUPPORTED


#: The line for two systems with s0..s3 each, s3 unlabelled: 3 + 3 of 4 + 4, counted by hand.
COMPARE_LINE = (
    "labels cover 6 of 8 sentences (A: 3 of 4, B: 3 of 4); the other 2 are left out (unlabelled)"
)


def test_compare_says_it_on_the_second_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A and B each 4 sentences, 3 labelled: the McNemar test pairs the 3 labelled ones."""
    args = [
        "compare",
        *write_inputs(tmp_path, coverage_traces({"A": [R, S, R, S], "B": [R, R, S, S]})),
    ]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Assumed: shared labels")
    assert lines[1] == COMPARE_LINE
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    payload = json.loads(out)
    assert payload["coverage"] == COMPARE_LINE
    # the F1/recall tests pair the 3 labelled sentences (s3 left out), not 4; Cochran and
    # McNemar pair the hits on the 1 positive one (s0)
    assert {row["test"]: row["n"] for row in payload["tests"]} == {
        "cochran_q": 1,
        "mcnemar_midp": 1,
        "permutation_f1": 3,
        "permutation_recall": 3,
    }


def test_compare_counts_only_the_systems_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """C (2 sentences, s0 and s3) is in the traces but not in --systems A,B: not counted."""
    traces = coverage_traces({"A": [R, S, R, S], "B": [R, R, S, S]})
    traces += [
        t.model_copy(update={"system": "C"}) for t in traces if t.sentence_id in ("s0", "s3")
    ][:2]
    args = ["compare", *write_inputs(tmp_path, traces), "--systems", "A,B"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert out.splitlines()[1] == COMPARE_LINE


def test_compare_no_line_when_every_sentence_is_labelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["compare", *write_inputs(tmp_path, coverage_traces({"A": [R, S, R], "B": [R, R, S]}))]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "labels cover" not in out + err


#: One system, s0..s3 with one claim each plus a second claim in s0: 5 claims; the sentence
#: labels of s0, s1, s2 label 4 of them (s0's two through their sentence), s3c none.
def _claim_traces() -> list[Trace]:
    traces = coverage_traces({"A": [R, S, R, S]})
    traces.insert(1, traces[0].model_copy(update={"claim_id": "s0c2"}))
    return traces


CLAIM_LINE = "labels cover 4 of 5 claims; the other 1 are left out (unlabelled)"


def test_claim_coverage_counted_by_hand() -> None:
    cover = label_coverage(
        TraceColumns.from_traces(_claim_traces()), LabelIndex(LABELS), Level.CLAIM
    )
    assert cover == {"A": (4, 5)}


def test_disagreements_at_claim_level_says_it_in_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refuted: s0c, s0c2 TP; s1c TN; s2c FP; s3c (Supported) unlabelled -> 1 disagreement."""
    args = [*write_inputs(tmp_path, _claim_traces()), "--level", "claim"]
    dis = ["disagreements", *args, "-o", str(tmp_path / "d.jsonl")]
    code, out, err = run_cli(dis, capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Assumed: shared labels")
    assert lines[1] == CLAIM_LINE
    assert out.rstrip().endswith(f"wrote 1 disagreements to {tmp_path / 'd.jsonl'}")
    # metrics at claim level says the same line (its n 4 and n_unlabelled 1)
    code, out, err = run_cli(["metrics", *args], capsys)
    assert code == 0, err
    assert out.splitlines()[1] == CLAIM_LINE
