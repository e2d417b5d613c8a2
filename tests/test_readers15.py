"""Session 15 readers hardening (issue 30: validate once at the boundary).

Each test failed before its fix: a bad input the analysis commands read gets one line naming
the file, the line (and field where known) and what was expected, exit 2, nothing written.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli, write_jsonl
from tests.judge_helpers import make_traces


def _rows() -> list[dict[str, object]]:
    return [t.model_dump(mode="json", exclude_none=True) for t in make_traces(2)]


def _labels(path: Path) -> Path:
    path.write_text("sentence_id,has_error,annotator\nq0-s1,true,a\nq1-s1,false,a\n")
    return path


LONG = "a line of over 2 MB (no trace or label record is that long: a JSON document? name it .json)"


@pytest.mark.parametrize("command", ["metrics", "disagreements"])
@pytest.mark.parametrize("which", ["traces", "labels"])
def test_a_long_line_of_a_foreign_jsonl_is_refused_by_the_analysis(
    tmp_path, capsys, monkeypatch, command, which
) -> None:
    # metrics/disagreements read traces with a byte reader of no line bound (a 200 MB line:
    # 506 MB peak, exit 0), labels with one that held the line before the exact reader
    # refused it (460 MB). Now ingest's bound (jsonio.MAX_LINE, 64 MB; 2 MB here), refused
    # once that much is read: a 24 MB line costs under 12 MB (was 48 MB, traced here), the
    # 200 MB one 158 MB peak (104 MB without it)
    from failcodes import jsonio

    monkeypatch.setattr(jsonio, "MAX_LINE", 2 << 20)
    rows = _rows()
    traces, labels = write_jsonl(tmp_path / "t.jsonl", rows), _labels(tmp_path / "l.csv")
    out = tmp_path / "out" / ("d.jsonl" if command == "disagreements" else "m.json")
    assert run_cli([command, "--traces", str(traces), "--labels", str(labels)], capsys)[0] in (
        0,
        2,  # (disagreements: no -o) a first run loads the modules before memory is traced
    )
    if which == "traces":
        rows[1] = {**rows[1], "reasoning": "x" * (24 << 20)}
        bad = write_jsonl(traces, rows)
    else:
        long = {"sentence_id": "q1-s1", "has_error": False, "annotator": "a", "x": "y" * (24 << 20)}
        first = {"sentence_id": "q0-s1", "has_error": True, "annotator": "a"}
        labels = bad = write_jsonl(tmp_path / "l.jsonl", [first, long])
    args = [command, "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    tracemalloc.start()
    try:
        code, _, err = run_cli(args, capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (code, err.strip().splitlines()) == (2, [f"failcodes: error: {bad}:2: {LONG}"])
    assert not out.parent.exists()
    assert peak < 12 << 20


def test_a_killed_ingest_leaves_no_temporary_file_behind_the_next_run(tmp_path, capsys) -> None:
    # kill -9 during ingest left its hidden .t.jsonl.XXXXXXXX.tmp beside the output, never
    # removed (one per killed run: a 300,000-trace ingest left 15 MB each). Now a temporary
    # file's name tells its process; the next write in that folder removes a dead one's.
    import os
    import signal
    import subprocess
    import sys
    import time

    src = tmp_path / "many.jsonl"
    row = '{"question_id": "q%d", "sentence_id": "s%d", "sentence": "A.", "verdict": "refuted", '
    row += '"system": "a"}\n'
    src.write_text("".join(row % (i, i) for i in range(300_000)))
    out = tmp_path / "out"
    out.mkdir()
    (out / ".notes.tmp").write_text("mine")  # a user's own hidden file: kept
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-m", "failcodes", "ingest", "generic", str(src), "-o"]
    proc = subprocess.Popen([*cmd, str(out / "t.jsonl")], env=env, stderr=subprocess.DEVNULL)
    try:
        for _ in range(1200):  # until its temporary file is there (at most 120 s)
            if any(p.name.startswith(".t.jsonl.") for p in out.iterdir()):
                break
            assert proc.poll() is None, "the ingest ended before it was killed"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    left = sorted(p.name for p in out.iterdir())
    assert len(left) == 2 and left[1].startswith(".t.jsonl.")  # what the kill leaves
    small = write_jsonl(tmp_path / "t.jsonl", _rows())
    code, _, _ = run_cli(["ingest", "generic", str(small), "-o", str(out / "t.jsonl")], capsys)
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [".notes.tmp", "t.jsonl"]


def _id_workbook(path: Path, number_format: str) -> Path:
    """Labels whose sentence ids are the numbers 7, 8, 70 in cells of ``number_format``."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["question_id", "sentence_id", "has_error", "annotator"])
    for n, error in [(7, True), (8, False), (70, False)]:
        sheet.append([f"q{n}", n, error, "a"])
    for row in range(2, 5):
        sheet.cell(row=row, column=2).number_format = number_format
    book.save(path)
    return path


def test_an_excel_id_shown_zero_padded_is_read_as_shown(tmp_path, capsys) -> None:
    # 7 in a cell formatted 000 (Excel shows 007) was read '7': labels of 007, 008, 070 did
    # not join traces of those ids (refused: "no trace has sentence_id '7', but one has
    # '007'"), or joined another sentence 7. Now read as Excel shows it.
    labels = _id_workbook(tmp_path / "l.xlsx", "000")
    got = tmp_path / "l.jsonl"
    assert run_cli(["ingest", "generic-labels", str(labels), "-o", str(got)], capsys)[0] == 0
    assert [json.loads(x)["sentence_id"] for x in got.read_text().splitlines()] == [
        "007",
        "008",
        "070",
    ]
    rows = [
        {"question_id": f"q{int(s)}", "sentence_id": s, "claim_id": s, "claim": f"C {s}."}
        for s in ("007", "008", "070")
    ]
    traces = write_jsonl(
        tmp_path / "t.jsonl", [{**r, "verdict": "refuted", "system": "a"} for r in rows]
    )
    args = ["metrics", "--traces", str(traces), "--labels", str(got), "--format", "json"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    row = json.loads(out)[0]
    # every sentence flagged; the one error (007) found: TP 1, FP 2 (008, 070), FN 0, TN 0
    assert code == 0
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 2, 0, 0)


@pytest.mark.parametrize("number_format", ['"S"000', "000-00", "(000)"])
def test_an_excel_id_shown_with_text_around_its_zeros_is_refused(
    tmp_path, capsys, number_format
) -> None:
    # "S"000 shows 7 as S007, 000-00 as 000-07, (000) as (007): read as '7' at exit 0
    labels = _id_workbook(tmp_path / "l.xlsx", number_format)
    got = tmp_path / "out" / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(labels), "-o", str(got)], capsys)
    assert (code, err.strip().splitlines()) == (
        2,
        [
            f"failcodes: error: {labels}:2, field 'sentence_id': cell B2 holds the number 7, "
            f"shown through the number format {number_format!r} (not as 7); expected the id "
            "as text: format the column as Text and type the ids as shown, or save the sheet "
            "as CSV UTF-8"
        ],
    )
    assert not got.parent.exists()
