"""Ingest-side shapes from t11red3's outside check (issue 30): each failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

# Three claims, each its own sentence, of one system; s1 no error (supported), s2 error
# (refuted), s3 error (supported). Under -m refuted: s2 TP, s3 FN, s1 TN.
VERDICTS = ["supported", "refuted", "supported"]
HAS_ERROR = [False, True, True]


def _traces(path: Path, ids: list[object]) -> Path:
    """A foreign trace Parquet file whose id columns hold ``ids`` (numbers: pandas' dtypes)."""
    table = {
        "system": ["A"] * 3,
        "question_id": [1, 1, 2],
        "sentence_id": ids,
        "claim_id": ids,
        "claim": ["x", "y", "z"],
        "verdict": VERDICTS,
    }
    pq.write_table(pa.table(table), path)
    return path


def _labels(path: Path, ids: list[object]) -> Path:
    pq.write_table(pa.table({"sentence_id": ids, "has_error": HAS_ERROR}), path)
    return path


def _metrics(
    traces: Path, labels: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    return run_cli([*args, "--format", "json"], capsys)


@pytest.mark.parametrize(
    ("trace_ids", "label_ids"),
    [
        ([1, 2, 3], [1, 2, 3]),  # int64 columns
        ([1.0, 2.0, 3.0], [1, 2, 3]),  # a float column: pandas widens ints for a missing value
        ([1, 2, 3], [1.0, 2.0, 3.0]),
    ],
)
def test_number_ids_read_alike_by_ingest_labels_and_metrics(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    trace_ids: list[object],
    label_ids: list[object],
) -> None:
    """`ingest generic` read int ids as text; generic-labels and metrics refused them.

    Before: "l.parquet:1, field 'sentence_id': Input should be a valid string (got 1)"
    (generic-labels, metrics), and float ids 1.0 refused by every reader, exit 2. One rule
    now (tableio.id_text): a whole number is its text, '1'.
    """
    traces = _traces(tmp_path / "t.parquet", trace_ids)
    labels = _labels(tmp_path / "l.parquet", label_ids)
    out = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(labels), "-o", str(out)], capsys)
    assert code == 0, err
    assert [json.loads(s)["sentence_id"] for s in out.read_text().splitlines()] == ["1", "2", "3"]
    written = tmp_path / "t.jsonl"
    code, _, err = run_cli(["ingest", "generic", str(traces), "-o", str(written)], capsys)
    assert code == 0, err
    rows = [json.loads(s) for s in written.read_text().splitlines()]
    assert [(r["question_id"], r["sentence_id"]) for r in rows] == [
        ("1", "1"),
        ("1", "2"),
        ("2", "3"),
    ]
    for given in (traces, written):  # the foreign file itself, and what ingest wrote
        code, stdout, err = _metrics(given, labels, capsys)
        assert code == 0, err
        (row,) = json.loads(stdout)
        # by hand: s1 supported/no error TN; s2 refuted/error TP; s3 supported/error FN
        assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 1, 1)
        assert row["recall"] == pytest.approx(1 / 2)  # TP / (TP + FN)


def test_has_error_written_as_a_float_reads_alike_in_csv_and_parquet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pandas writes a has_error column with a missing value as floats: '1.0'/'0.0' in CSV.

    Before: the CSV was refused ("Input should be a valid boolean ... (got '0.0')") while
    the same frame saved as Parquet (1.0/0.0) was read as true/false. Both read now; a
    value no boolean (2.0) is refused alike in both.
    """
    csv = tmp_path / "l.csv"
    csv.write_text("sentence_id,has_error\n1,0.0\n2,1.0\n3,1.00\n")
    parquet = tmp_path / "l.parquet"
    pq.write_table(
        pa.table({"sentence_id": ["1", "2", "3"], "has_error": [0.0, 1.0, 1.0]}), parquet
    )
    traces = _traces(tmp_path / "t.parquet", [1, 2, 3])
    for labels in (csv, parquet):
        out = tmp_path / f"{labels.suffix[1:]}.jsonl"
        code, _, err = run_cli(["ingest", "generic-labels", str(labels), "-o", str(out)], capsys)
        assert code == 0, err
        read = [json.loads(s)["has_error"] for s in out.read_text().splitlines()]
        assert read == HAS_ERROR  # 0.0 -> false, 1.0 -> true, 1.00 -> true
        code, stdout, err = _metrics(traces, labels, capsys)
        assert code == 0, err
        (row,) = json.loads(stdout)
        assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 1, 1)  # as above
    csv.write_text("sentence_id,has_error\n1,0.0\n2,2.0\n")
    pq.write_table(pa.table({"sentence_id": ["1", "2"], "has_error": [0.0, 2.0]}), parquet)
    for labels, got in ((csv, "'2.0'"), (parquet, "the number 2.0")):
        out = tmp_path / "bad.jsonl"
        code, _, err = run_cli(["ingest", "generic-labels", str(labels), "-o", str(out)], capsys)
        assert code == 2
        assert err.strip().splitlines() == [
            f"failcodes: error: {labels}:{3 if labels is csv else 2}, field 'has_error': "
            f"expected true or false (or 1/0, yes/no), got {got}; labels "
            "written other than true/false or 1/0 (ja/nein, a scale, blanks)? failcodes ingest "
            "generic-labels FILE -o OUT --label-rule 'has_error in {ERROR VALUES} -> error; "
            "has_error in {OTHER VALUES} -> no_error; otherwise -> skip'"
        ]
        assert not out.exists()


def test_a_workbook_of_several_sheets_says_the_first_alone_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Round 1 on the first sheet, the final labels on the second: round 1 read, no word.

    s2 is no error in 'round1', an error in 'final'; with the verdicts below, metrics on
    round 1 gives TP 1 (s3) FP 1 (s2) TN 1 (s1), on the final sheet TP 2: the numbers differ
    with exit 0 both ways, so the first line says which sheet was read (still the first:
    documented, and an instructions sheet beside the table is common).
    """
    import openpyxl  # type: ignore[import-untyped]

    book = openpyxl.Workbook()
    first = book.active
    first.title = "round1"
    final = book.create_sheet("final")
    for sheet, s2 in ((first, False), (final, True)):
        sheet.append(["sentence_id", "has_error"])
        for row in (("s1", False), ("s2", s2), ("s3", True)):
            sheet.append(row)
    path = tmp_path / "labels.xlsx"
    book.save(path)
    out = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(path), "-o", str(out)], capsys)
    assert code == 0, err
    assert err.splitlines() == [
        f"failcodes: note: {path}: read its first sheet 'round1' alone; the workbook's 1 other "
        "sheet ('final') is not read (to read another, move it first)"
    ]
    assert [json.loads(s)["has_error"] for s in out.read_text().splitlines()] == [
        False,
        False,
        True,
    ]


def test_a_sentence_id_of_two_questions_is_not_one_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Sentences numbered per answer (1, 2 in q1 and in q2), labels per sentence.

    q1's and q2's rows agree (1 wrong, 2 ok), so the rule's labels were merged into 2 labels
    under q1 ("1 error / 1 no-error", exit 0) for 4 sentences (2 errors); metrics then
    refused the labels. Refused at ingest now, naming the row and sentence_ids=question,
    with which the labels are 4 and, by hand, q1:1 refuted/wrong TP, q2:1 supported/wrong
    FN, q1:2 and q2:2 supported/ok TN: TP 1, FN 1, TN 2.
    """
    table = tmp_path / "tab.csv"
    table.write_text(
        "qid,sid,claim,verdict,gold\n"
        "q1,1,a,refuted,wrong\nq1,2,b,supported,ok\nq2,1,c,supported,wrong\nq2,2,d,supported,ok\n"
    )
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    args = ["ingest", "generic", str(table), "-o", str(traces), "--labels-out", str(labels)]
    args += ["--map", "qid=question_id", "--map", "sid=sentence_id", "--system", "A"]
    args += ["--label-rule", "gold = wrong -> error", "--option", "ids=claim"]
    args += ["--option", "label_level=sentence"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:4, field 'sentence_id': sentence '1' is under question "
        "'q2' here but 'q1' at line 2: a sentence id names one answer's sentence (numbered "
        "per answer? --option sentence_ids=question makes it 'q2:1')"
    ]
    assert not traces.exists() and not labels.exists()
    code, _, err = run_cli([*args, "--option", "sentence_ids=question"], capsys)
    assert code == 0, err
    assert len(labels.read_text().splitlines()) == 4
    code, stdout, err = _metrics(traces, labels, capsys)
    assert code == 0, err
    (row,) = json.loads(stdout)
    assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 1, 2)


def test_support_scores_off_the_threshold_scale_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scores written as percentages (90, 20, 40, 50) read with verdict_threshold=0.5.

    Every score is >= 0.5, so all 4 claims were supported with no word (exit 0): under -m
    non_supported no error flagged, recall 0 of the 2 labelled errors. The note now gives the
    split and the range (4 of 4 at or above; 20 to 90) and says every score is on one side.
    On the 0-1 scale (0.9, 0.2, 0.4, 0.5): 0.9 and 0.5 at or above, 2 below.
    """
    table = tmp_path / "s.csv"
    table.write_text("id,claim,prob\n1,a,90\n2,b,20\n3,c,40\n4,d,50\n")
    args = ["ingest", "generic", str(table), "-o", str(tmp_path / "t.jsonl")]
    args += ["--map", "id=claim_id", "--map", "prob=verdict", "--system", "S"]
    args += ["--option", "verdict_threshold=0.5"]
    code, _, err = run_cli(args, capsys)
    # (session 31: scores of 0 and up past 1 at a threshold of at most 1 are refused, naming
    # the first row past 1; they were said in this note alone, read as 4 of 4 supported)
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert "s.csv:2, field 'verdict': system 'S': scores from 20 to 90, past 1" in err
    table.write_text("id,claim,prob\n1,a,0.9\n2,b,0.2\n3,c,0.4\n4,d,0.5\n")
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert err.splitlines() == [
        "note: --option verdict_threshold=0.5: 2 of 4 scores at or above it (supported), 2 "
        "below (no_evidence); the scores run from 0.2 to 0.9"
    ]


def test_consensus_does_not_pool_two_answers_sentences_numbered_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """q1's s1 labelled by a, b, c (all error), q2's s1 by d, e (both no error).

    Pooled as one target (before): 'majority of 5: a, b, c, d, e' error under q1, q2's
    sentence gone, '0 unanimous, 1 split', exit 0. Refused now; with sentence_ids=question
    two labels, by hand q1:s1 3 of 3 error -> error, q2:s1 0 of 2 -> no error, both
    unanimous.
    """
    table = tmp_path / "votes.csv"
    table.write_text(
        "question_id,sentence_id,annotator,has_error\n"
        "q1,s1,a,true\nq1,s1,b,true\nq1,s1,c,true\nq2,s1,d,false\nq2,s1,e,false\n"
    )
    out = tmp_path / "l.jsonl"
    args = ["ingest", "generic-labels", str(table), "-o", str(out)]
    args += ["--option", "consensus=majority"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {table}:5, field 'question_id': sentence 's1' is under question "
        "'q2' here but 'q1' at line 2: its labels are two answers' sentences, not votes on "
        "one (numbered per answer? --option sentence_ids=question makes it 'q2:s1')"
    ]
    assert not out.exists()
    code, _, err = run_cli([*args, "--option", "sentence_ids=question"], capsys)
    assert code == 0, err
    got = [json.loads(s) for s in out.read_text().splitlines()]
    assert [(g["sentence_id"], g["has_error"]) for g in got] == [
        ("q1:s1", True),
        ("q2:s1", False),
    ]
    assert "2 unanimous, 0 split" in err


def test_class_codes_written_as_floats_read_alike_in_csv_and_parquet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pandas writes 0/1/2 codes of a column with a missing value as 0.0, 2.0 in a CSV.

    The same frame as Parquet (floats) read 2.0 as the code 2 (verdict alias and label
    rule); from the CSV the verdict '0.0' was refused and, worse, the rule `gold in {2} ->
    error` matched no '2.0' cell: 0 error / 4 no-error labels with exit 0 and a note "no row
    has '2'". Now '2.0' is the code 2 wherever a float 2.0 is. By hand: gold 0, 2, 2, 0 ->
    c2 and c3 errors; codes 0, 2, 1, 0 -> supported, refuted, no_evidence, supported; under
    -m refuted: c2 TP, c3 FN, c1 and c4 TN. A rule written {2.0} reads the same.
    """
    table = tmp_path / "f.csv"
    table.write_text("id,claim,code,gold\n1,a,0.0,0.0\n2,b,2.0,2.0\n3,c,1.0,2.0\n4,d,0.0,0.0\n")
    parquet = tmp_path / "f.parquet"
    frame = {"id": ["1", "2", "3", "4"], "claim": ["a", "b", "c", "d"]}
    frame |= {"code": [0.0, 2.0, 1.0, 0.0], "gold": [0.0, 2.0, 2.0, 0.0]}
    pq.write_table(pa.table(frame), parquet)
    for source in (table, parquet):
        for rule in ("gold in {2} -> error", "gold in {2.0} -> error"):
            traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
            args = ["ingest", "generic", str(source), "-o", str(traces), "--labels-out"]
            args += [str(labels), "--map", "id=claim_id", "--map", "code=verdict"]
            args += ["--system", "S", "--alias", "0=supported", "--alias", "1=no_evidence"]
            args += ["--alias", "2=refuted", "--label-rule", rule]
            code, _, err = run_cli(args, capsys)
            assert code == 0, err
            assert "2 error / 2 no-error sentence labels" in err
            code, stdout, err = _metrics(traces, labels, capsys)
            assert code == 0, err
            (row,) = json.loads(stdout)
            assert (row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 0, 1, 2)


def test_a_null_item_of_a_passage_list_is_no_passage_as_a_blank_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--passage-column on a Parquet list<string> column holding nulls.

    A blank item was dropped but a null one refused with "holds text or a list of texts, got
    list" (it was a list). Now a null is no passage, as a blank: claim 1 keeps 't1', claim 2
    't2' and 't3', ranked 1.. in order; a number in the list is named as such.
    """
    path = tmp_path / "p.parquet"
    evidence = pa.array([[None, "t1"], ["t2", None, "t3"]], pa.list_(pa.string()))
    table = {"id": ["1", "2"], "claim": ["a", "b"], "verdict": ["supported", "refuted"]}
    pq.write_table(pa.table({**table, "ev": evidence}), path)
    out = tmp_path / "t.jsonl"
    args = ["ingest", "generic", str(path), "-o", str(out), "--map", "id=claim_id"]
    args += ["--system", "S", "--passage-column", "ev=src"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    rows = [json.loads(s) for s in out.read_text().splitlines()]
    assert [[(p["rank"], p["text"]) for p in r["passages"]] for r in rows] == [
        [(1, "t1")],
        [(1, "t2"), (2, "t3")],
    ]
    numbers = pa.array([[1, 2], [3]], pa.list_(pa.int64()))
    pq.write_table(pa.table({**table, "ev": numbers}), path)
    out.unlink()
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {path}:1, field 'ev': a passage column holds text or a list of "
        "texts, got a list holding int"
    ]
    assert not out.exists()
