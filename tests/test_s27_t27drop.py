"""Session 27, helper t27drop: a system lost at one ingest of a study's data set (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest

HEAD = "question_id,sentence_id,claim_id,claim,verdict\n"
#: A's 2 rows; B's 2 rows, every verdict blank; C's 2 rows, both refuted.
A_CSV = HEAD + "q1,s1,c1,x,supported\nq2,s2,c2,y,refuted\n"
B_CSV = (
    "system," + HEAD + "B,q1,s1,c1,x,\nB,q2,s2,c2,y,\nC,q1,s1,c1,x,refuted\nC,q2,s2,c2,y,refuted\n"
)
LABELS = (
    '{"question_id": "q1", "sentence_id": "s1", "has_error": false}\n'
    '{"question_id": "q2", "sentence_id": "s2", "has_error": true}\n'
)
#: a.csv as system A, b.csv with B's blank verdicts dropped at its ingest, then the labels.
GONE_DATASET = (
    '[[datasets]]\nname = "d"\n\n'
    '[[datasets.ingest]]\nadapter = "generic"\npaths = ["a.csv"]\nsystem = "A"\n\n'
    '[[datasets.ingest]]\nadapter = "generic"\npaths = ["b.csv"]\n'
    'option = ["no_verdict=drop"]\n\n'
    '[[datasets.ingest]]\nadapter = "generic-labels"\npaths = ["l.jsonl"]\n\n'
    '[[datasets.pipelines]]\nsystem = "*"\nevidence = "none"\n'
)
#: B's every row left out (2 rows, no verdict): metrics and the report show A and C only.
GONE = (
    "no row of system(s) B (2 row(s) without a verdict, dropped: --option no_verdict=drop) "
    "of the input: left out at ingest, so every table shows A, C only"
)


def test_a_study_part_that_lost_every_row_of_a_system_names_it_in_metrics_and_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two traces ingests of one data set (parts, then a merge); b.csv's B has no verdict.

    Under ``option = ["no_verdict=drop"]`` the part of b.csv left out B's 2 rows (C's 2 kept).
    The parts were JSONL, which carry no record of rows left out, so the merged
    ``data/d.traces.parquet`` had none: metrics on it said 'every system answered every
    labelled question (2 systems)' for A and C with no word of B, and the report's run box
    had no 'Systems' row. Each part's ingest writes its record beside it, and the merge
    carries it: 2 rows dropped (B 2), 4 kept (A 2, C 2), B named as gone.
    """
    import failcodes
    from failcodes.dropped import read_dropped
    from tests.cli_helpers import run_cli, small_study

    root = tmp_path / "st"
    small_study(root, capsys, "gone", GONE_DATASET)
    (root / "a.csv").write_text(A_CSV, encoding="utf-8")
    (root / "b.csv").write_text(B_CSV, encoding="utf-8")
    (root / "l.jsonl").write_text(LABELS, encoding="utf-8")
    code, _, err = run_cli(["run", str(root)], capsys)
    assert code == 0, err
    merged = root / "data" / "d.traces.parquet"
    # the parts stay JSONL (their merge reads lines, 3.9x less CPU than from Parquet: bench/
    # bench_study_parts.py), each with the record of rows left out beside it
    part = root / "data" / "d.parts" / "2-b.traces.jsonl"
    assert read_dropped(part) is None  # JSONL: no footer
    beside = part.with_name(part.name + ".dropped.json")
    assert (
        beside.read_text(encoding="utf-8") == '{"by_system": {"B": 2}, "hollow": {}, "rows": 2}\n'
    )
    record = read_dropped(merged)
    assert record is not None  # main: None (the JSONL parts carried nothing to the merge)
    # by hand: B's 2 blank verdicts dropped; A's 2 and C's 2 rows kept
    assert (record.rows, record.kept, dict(record.by_system)) == (2, 4, {"B": 2})

    result = failcodes.run(
        failcodes.MetricsRequest(
            traces=[merged], labels=root / "data" / "d.labels.jsonl", mapping=["refuted"]
        )
    )
    assert result.vanished == GONE
    assert result.assumed is not None and result.assumed.startswith(GONE + "; ")
    # by hand: A TN (q1 supported, no error) + TP (q2 refuted, error); C FP + TP
    counts = {(m.system, m.tp, m.fp, m.fn, m.tn) for m in result.report.results}
    assert counts == {("A", 1, 0, 0, 1), ("C", 1, 1, 0, 0)}

    page = (root / "report" / "index.html").read_text(encoding="utf-8")
    assert f"<td>Systems</td><td>{GONE}</td>" in page


def test_a_merge_of_the_tools_parquet_carries_each_parts_record_of_rows_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ingest generic parts/*.parquet -o traces.parquet`` (docs/judging-at-scale.md's merge).

    Part 2 left out B's 2 rows and kept C's 2; part 1 (A, 2 rows) left none out. The merge
    read the rows and wrote no record: ``read_dropped`` of the merged file was None. Now it
    is part 2's record, the rows kept those of the merge: 2 dropped (B 2) of 6, 4 kept.
    """
    from failcodes.dropped import read_dropped
    from tests.cli_helpers import run_cli

    (tmp_path / "a.csv").write_text(A_CSV, encoding="utf-8")
    (tmp_path / "b.csv").write_text(B_CSV, encoding="utf-8")
    one, two, out = tmp_path / "1.parquet", tmp_path / "2.parquet", tmp_path / "t.parquet"
    code, _, err = run_cli(
        ["ingest", "generic", str(tmp_path / "a.csv"), "--system", "A", "-o", str(one)], capsys
    )
    assert code == 0, err
    drop = ["--option", "no_verdict=drop"]
    code, _, err = run_cli(
        ["ingest", "generic", str(tmp_path / "b.csv"), *drop, "-o", str(two)], capsys
    )
    assert code == 0, err
    assert read_dropped(one) is None
    code, _, err = run_cli(["ingest", "generic", str(one), str(two), "-o", str(out)], capsys)
    assert code == 0, err
    record = read_dropped(out)
    assert record is not None
    assert (record.rows, record.kept, dict(record.by_system)) == (2, 4, {"B": 2})
