"""disagreements and metrics say how many sentences the labels cover (issue 30, i36map).

Before: with labels on 3 of a system's 4 sentences, ``disagreements`` said nothing of the
unlabelled one (it can be no FN/FP), and ``metrics`` said it only in a note after the tables.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failcodes import labelio, traceio
from failcodes.labels import Label, LabelIndex
from failcodes.metrics import coverage_line, label_coverage
from failcodes.tracecols import TraceColumns
from failcodes.traces import Trace
from failcodes.verdicts import Verdict
from tests.cli_helpers import run_cli

R, S = Verdict.REFUTED, Verdict.SUPPORTED


def coverage_traces(systems: dict[str, list[Verdict]]) -> list[Trace]:
    return [
        Trace(
            system=system,
            question_id="q1",
            sentence_id=f"s{i}",
            claim_id=f"s{i}c",
            claim="c",
            verdict=v,
        )
        for system, verdicts in systems.items()
        for i, v in enumerate(verdicts)
    ]


#: s0 error, s1 and s2 no error; s3 unlabelled.
LABELS = [
    Label(question_id="q1", sentence_id="s0", has_error=True),
    Label(question_id="q1", sentence_id="s1", has_error=False),
    Label(question_id="q1", sentence_id="s2", has_error=False),
]


def write_inputs(tmp_path: Path, traces: list[Trace]) -> list[str]:
    traceio.write_traces(tmp_path / "t.jsonl", traces)
    labelio.write_labels(tmp_path / "l.jsonl", LABELS)
    return ["--traces", str(tmp_path / "t.jsonl"), "--labels", str(tmp_path / "l.jsonl")]


def test_coverage_counted_by_hand() -> None:
    """A: s0..s3, 3 labelled; B: s0, s3 (claims in 2 sentences), 1 labelled -> 4 of 6."""
    traces = coverage_traces({"A": [R, S, R, S]}) + coverage_traces({"B": [S]})
    traces.append(traces[3].model_copy(update={"system": "B"}))
    cover = label_coverage(TraceColumns.from_traces(traces), LabelIndex(LABELS))
    assert cover == {"A": (3, 4), "B": (1, 2)}
    assert coverage_line(cover) == (
        "labels cover 4 of 6 sentences (A: 3 of 4, B: 1 of 2); the other 2 are left out "
        "(unlabelled)"
    )
    assert coverage_line({"A": (3, 3)}) is None  # all covered: no line


def test_disagreements_says_it_on_the_second_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """4 sentences, 3 labelled. Refuted: s0 TP, s1 TN, s2 FP; s3 (Supported) unlabelled."""
    args = ["disagreements", *write_inputs(tmp_path, coverage_traces({"A": [R, S, R, S]}))]
    code, out, err = run_cli([*args, "-o", str(tmp_path / "d.jsonl")], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Assumed: shared labels")
    assert lines[1] == "labels cover 3 of 4 sentences; the other 1 are left out (unlabelled)"
    assert out.rstrip().endswith(f"wrote 1 disagreements to {tmp_path / 'd.jsonl'}")


def test_metrics_says_it_on_the_second_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        ["metrics", *write_inputs(tmp_path, coverage_traces({"A": [R, S, R, S]}))], capsys
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Assumed: shared labels")
    assert lines[1] == "labels cover 3 of 4 sentences; the other 1 are left out (unlabelled)"
    written = tmp_path / "m.json"
    args = [
        "metrics",
        *write_inputs(tmp_path, coverage_traces({"A": [R, S, R, S]})),
        "-o",
        str(written),
    ]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert out.splitlines()[1] == lines[1]


def test_no_line_when_every_sentence_is_labelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = write_inputs(tmp_path, coverage_traces({"A": [R, S, R]}))
    for command in (["metrics"], ["disagreements", "-o", str(tmp_path / "d.jsonl")]):
        code, out, err = run_cli([*command, *args], capsys)
        assert code == 0, err
        assert "labels cover" not in out + err
