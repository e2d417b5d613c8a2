"""Session 32 (t32read): readers and writers red-teamed with shapes nobody tried.

Excel's error values as text in a trace file's texts (JSONL, Parquet: a frame
``pandas.read_excel`` read and saved). A CSV holding them is refused (t31read); the same text in
JSONL or Parquet was read. Hand-counted from the rows below: systems A and B each make claims c1
(sentence s1) and c2 (sentence s2), each claim with two retrieved passages p1, p2; A's and B's
claim texts and passages are the same, so ``judge retrieval`` has 2 claims x 2 passages = 4
(claim, passage) units and ``judge reasoning`` one unit per trace. With B's c2 claim text
'#VALUE!', main counted 6 retrieval units (c2's two passages judged again against '#VALUE!');
with B's c2 passage p2 '#REF!', 5 (the '#REF!' passage a unit of its own); a reasoning '#VALUE!'
was coded as the verifier's reasoning; all exit 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

_ROWS = [
    ("A", "s1", "c1", "refuted"),
    ("A", "s2", "c2", "supported"),
    ("B", "s1", "c1", "supported"),
    ("B", "s2", "c2", "refuted"),
]


def _records() -> list[dict[str, object]]:
    return [
        {"system": s, "question_id": "q1", "sentence_id": t, "claim_id": c, "claim": f"claim {c}",
         "verdict": v, "sentence": f"sentence {t}", "reasoning": f"because {c}",
         "retriever": "bm25",
         "passages": [{"passage_id": "p1", "rank": 1, "text": "Aspirin thins blood."},
                      {"passage_id": "p2", "rank": 2, "text": "Water is wet."}]}
        for s, t, c, v in _ROWS
    ]  # fmt: skip


def _set(records: list[dict[str, object]], field: str, value: str) -> None:
    """B's s2 row (line 4 of the JSONL, row 4 of the Parquet) gets ``value`` in ``field``."""
    row = records[3]
    if field.startswith("passages"):
        passages = row["passages"]
        assert isinstance(passages, list)
        passages[1]["text"] = value
    else:
        row[field] = value


def _write(tmp_path: Path, kind: str, records: list[dict[str, object]]) -> Path:
    path = tmp_path / f"t.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from failcodes.traceio import trace_arrow_schema

        # own: the tool's schema (the columnar scan reads it); else pyarrow's guess (int64
        # ranks: the exact reader's)
        schema = trace_arrow_schema() if kind == "own.parquet" else None
        pq.write_table(pa.Table.from_pylist(records, schema=schema), path)
    return path


def _units(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, traces: Path) -> int:
    run = tmp_path / f"run-{kind}"
    code, out, err = run_cli(
        ["judge", kind, "--from", str(traces), "--no-cache", "--dry-run", "--format", "json",
         "-o", str(run)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    units = json.loads(out)["units"]
    assert isinstance(units, int)
    return units


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "own.parquet"])
def test_the_hand_counts_without_an_excel_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # guard (passes on main too): 2 claims x 2 passages = 4 retrieval units; 4 traces, each
    # with a reasoning = 4 reasoning units
    traces = _write(tmp_path, kind, _records())
    assert _units(tmp_path, capsys, "retrieval", traces) == 4
    assert _units(tmp_path, capsys, "reasoning", traces) == 4


_EXCEL = "(a formula that failed; the file holds its text): fix or clear the cell"


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "own.parquet"])
@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("claim", "#VALUE!", "claim"),  # main: 6 retrieval units for 4
        ("passages", "#REF!", "passages[1].text"),  # main: 5 for 4
        ("reasoning", "#VALUE!", "reasoning"),  # main: coded as the verifier's reasoning
        ("sentence", "#REF!", "sentence"),
        ("retriever", "#NAME?", "retriever"),
    ],
)
@pytest.mark.parametrize("command", ["retrieval", "reasoning", "ingest", "disagreements"])
def test_excel_error_text_in_a_trace_file_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    field: str,
    value: str,
    named: str,
    command: str,
) -> None:
    # main read each at exit 0 (the counts above); now one line naming the file, B's s2 row
    # (line 4 / Parquet row 4) and the field, as a CSV's cell is refused
    records = _records()
    _set(records, field, value)
    traces = _write(tmp_path, kind, records)
    out = tmp_path / "out.jsonl"
    if command == "ingest":
        args = ["ingest", "generic", str(traces), "-o", str(out)]
    elif command == "disagreements":
        labels = tmp_path / "labels.csv"
        labels.write_text("sentence_id,has_error\ns1,true\ns2,false\n", encoding="utf-8")
        args = ["disagreements", "--traces", str(traces), "--labels", str(labels), "-o", str(out)]
    else:
        args = ["judge", command, "--from", str(traces), "--no-cache", "--dry-run", "-o",
                str(tmp_path / "run")]  # fmt: skip
    code, _, err = run_cli(args, capsys)
    assert code == 2, err
    if (command, field, kind) == ("disagreements", "sentence", "own.parquet"):
        # the arrow scan reads no sentence text; the label check reads it, and refuses it
        assert err.strip().startswith(
            f"failcodes: error: {tmp_path / 'labels.csv'}:3, field 'sentence_id': sentence "
            "'s2' reads 'sentence s2' in the traces of system 'A' and '#REF!' in those of 'B'"
        )
    else:
        assert err.strip().splitlines()[-1] == (
            f"failcodes: error: {traces}:4, field '{named}': Excel error value {value} {_EXCEL}"
        )
    assert not out.exists()


@pytest.mark.parametrize("kind", ["jsonl", "own.parquet"])
def test_metrics_refuses_a_claim_that_is_an_excel_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # the columnar scans behind metrics (the msgspec block reader, the Parquet arrow scan):
    # main read B's c2 claim '#VALUE!' (with no sentence text to tell it from A's 'claim c2',
    # a label check refused it, naming other cause; with a sentence text, exit 0)
    records = _records()
    _set(records, "claim", "#VALUE!")
    traces = _write(tmp_path, kind, records)
    labels = tmp_path / "labels.csv"
    labels.write_text("sentence_id,has_error\ns1,true\ns2,false\n", encoding="utf-8")
    code, _, err = run_cli(["metrics", "--traces", str(traces), "--labels", str(labels)], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {traces}:4, field 'claim': Excel error value #VALUE! {_EXCEL}"
    )


@pytest.mark.parametrize("command", ["judge", "ingest"])
def test_an_escaped_hash_is_the_same_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # JSON may write '#' as \u0023: the fast readers (a line at a time for the judge's dry
    # run, a block of lines for ingest) look for both
    records = _records()
    _set(records, "passages", "#REF!")
    traces = tmp_path / "t.jsonl"
    lines = [json.dumps(r) for r in records]
    lines[3] = lines[3].replace('"#REF!"', '"\\u0023REF!"')
    traces.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    if command == "judge":
        args = ["judge", "retrieval", "--from", str(traces), "--no-cache", "--dry-run", "-o",
                str(tmp_path / "run")]  # fmt: skip
    else:
        args = ["ingest", "generic", str(traces), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        f"failcodes: error: {traces}:4, field 'passages[1].text': Excel error value #REF! {_EXCEL}"
    )
    assert not out.exists()


@pytest.mark.parametrize("value", ["#1 cause", "#REF! in the sheet", "#N/A"])
def test_text_merely_starting_with_a_hash_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    # guard (passes on main too): only a whole text equal to an error value is refused. B's
    # c2 passage p2 read as a text is a 5th unit (c1-p1, c1-p2, c2-p1, c2-'Water is wet.' and
    # c2-that text); '#N/A' is a missing mark (no passage: B's c2 keeps p1, A's unit), so 4
    records = _records()
    _set(records, "passages", value)
    traces = _write(tmp_path, "jsonl", records)
    expected = 4 if value == "#N/A" else 5
    assert _units(tmp_path, capsys, "retrieval", traces) == expected


def _hive(tmp_path: Path) -> Path:
    """A table hive-partitioned by system (pyarrow.parquet.write_to_dataset): system=A/, B/."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path / "hive"
    pq.write_to_dataset(pa.Table.from_pylist(_records()), root, partition_cols=["system"])
    return root


@pytest.mark.parametrize("command", ["metrics", "ingest"])
def test_a_hive_partition_part_is_refused_naming_its_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # main: "missing column (have: question_id, ...)" with no word of the folder system=A that
    # holds the column. It is not read from there: pyarrow reads question_id=007 and
    # question_id=7 folders both as the number 7 (two questions one), so the refusal says it.
    part = next((_hive(tmp_path) / "system=A").glob("*.parquet"))
    labels = tmp_path / "labels.csv"
    labels.write_text("sentence_id,has_error\ns1,true\ns2,false\n", encoding="utf-8")
    if command == "metrics":
        args, way = ["metrics", "--traces", str(part), "--labels", str(labels)], ""
    else:
        args = ["ingest", "generic", str(part), "-o", str(tmp_path / "o.jsonl")]
        way = "; or name it with --system"
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {part}:1, field 'system': missing column (have: question_id, "
        f"sentence_id, claim_id, claim, verdict, sentence, reasoning, retriever, passages{way}; "
        "the folder 'system=A' names it as a hive partition, which failcodes does not read "
        "(pyarrow reads a partition's value as a number where it can: question_id=007 and =7 "
        "are one): write the column into each file, as text)"
    )


def test_a_hive_partitioned_folder_is_refused_naming_its_partitions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # main: "cannot tell the format from the extension '(none)'" alone
    root = _hive(tmp_path)
    code, _, err = run_cli(
        ["ingest", "generic", str(root), "-o", str(tmp_path / "o.jsonl")], capsys
    )
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {root}: cannot tell the format from the extension '(none)'; "
        "expected .jsonl, .csv or .parquet (a folder of hive partitions, 'system=A', "
        "'system=B': failcodes reads files, not a partitioned folder; give its files, each with "
        "the partition's column written in as text)"
    )


def test_the_csv_writer_writes_an_excel_error_text_as_text(tmp_path: Path) -> None:
    # main's CSV writer wrote a text '#REF!' (a rationale given through the Python API) as the
    # bare cell #REF!: a spreadsheet shows a failed formula, and failcodes' CSV reader refused
    # it as one. Now written '#REF! as '=...' is (a spreadsheet shows the text), taken off on
    # reading: the cell reads back '#REF!'. '#N/A' (a missing mark) and '#REF! x' are texts.
    from failcodes.csvcells import neutralise, restore
    from failcodes.labelio import write_labels
    from failcodes.labelmodel import Label

    labels = tmp_path / "labels.csv"
    write_labels(labels, [Label(sentence_id="s1", has_error=True, rationale="#REF!")])
    cell = labels.read_text(encoding="utf-8").splitlines()[1].split(",")[4]
    assert (cell, restore(cell)) == ("'#REF!", "#REF!")
    for text in ("#VALUE!", "#DIV/0!", "#NAME?", "#NUM!", "#NULL!", "#GETTING_DATA"):
        assert (neutralise(text), restore(neutralise(text))) == (f"'{text}", text)
    for text in ("#N/A", "#REF! x", "#1", "'#REF!"):
        assert restore(neutralise(text)) == text
    assert neutralise("#N/A") == "#N/A"


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
@pytest.mark.parametrize("field", ["rationale", "annotator", "sentence"])
@pytest.mark.parametrize("command", ["metrics", "ingest"])
def test_excel_error_text_in_a_labels_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, field: str, command: str
) -> None:
    # a labels CSV cell '#REF!' is refused (t31read); the same frame saved as JSONL or Parquet
    # was read, exit 0 (an annotator '#REF!' an annotator of its own, a sentence '#REF!' the
    # label's sentence text). Now the same line, naming the row (2) and the field.
    rows = [
        {"sentence_id": "s1", "has_error": True, "rationale": "r1", "annotator": "ann1",
         "sentence": "sentence s1"},
        {"sentence_id": "s2", "has_error": False, "rationale": "r2", "annotator": "ann1",
         "sentence": "sentence s2"},
    ]  # fmt: skip
    rows[1][field] = "#REF!"
    source = tmp_path / f"l.{kind}"
    if kind == "jsonl":
        source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), source)
    traces = _write(tmp_path, "jsonl", _records())
    out = tmp_path / "o.csv"
    if command == "metrics":
        args = ["metrics", "--traces", str(traces), "--labels", str(source)]
    else:
        args = ["ingest", "generic-labels", str(source), "-o", str(out)]
    code, _, err = run_cli(args, capsys)
    assert code == 2, err
    assert err.strip() == (
        f"failcodes: error: {source}:2, field '{field}': Excel error value #REF! {_EXCEL}"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "kind"), [("ingest", "csv"), ("ingest", "xlsx"), ("metrics", "csv")]
)
def test_a_title_row_above_a_traces_header_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, command: str
) -> None:
    # main: "unknown column 'Study traces' (... --map FOREIGN=ours ...)" alone, pointing at a
    # --map or unmapped=drop (which then said "missing column claim_id (have: Study traces)");
    # generic-labels and agree named the title row. Now the traces readers name it too.
    head = "system,question_id,sentence_id,claim_id,claim,verdict"
    table = tmp_path / f"t.{kind}"
    if kind == "csv":
        table.write_text(f"Study traces\n{head}\nA,q1,s1,c1,x,refuted\n", encoding="utf-8")
    else:  # metrics reads no workbook (refused as one, naming ingest)
        import openpyxl

        book = openpyxl.Workbook()
        sheet = book.active
        assert sheet is not None
        for row in (["Study traces"], head.split(","), ["A", "q1", "s1", "c1", "x", "refuted"]):
            sheet.append(row)
        book.save(table)
    labels = tmp_path / "l.csv"
    labels.write_text("sentence_id,has_error\ns1,true\n", encoding="utf-8")
    if command == "ingest":
        args = ["ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl")]
    else:
        args = ["metrics", "--traces", str(table), "--labels", str(labels)]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.strip().startswith(f"failcodes: error: {table}:1, field 'Study traces': unknown")
    assert err.strip().endswith(
        " (line 1 holds one name, 'Study traces': a title above the column names? the first "
        "non-empty row is the header, one name per column: delete the title row)"
    )


def test_a_title_row_read_with_unmapped_drop_is_named_and_one_real_column_is_not_a_title(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # main: --option unmapped=drop dropped the title's one name, then "missing column (have:
    # Study traces)" with no word of the title row
    head = "system,question_id,sentence_id,claim_id,claim,verdict"
    table = tmp_path / "t.csv"
    table.write_text(f"Study traces\n{head}\nA,q1,s1,c1,x,refuted\n", encoding="utf-8")
    args = ["ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl")]
    code, _, err = run_cli([*args, "--option", "unmapped=drop"], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:1, field 'claim_id': missing column (have: Study traces; "
        "or claim_id from row numbers with --option ids=line) (line 1 holds one name, "
        "'Study traces': a title above the column names? the first non-empty row is the "
        "header, one name per column: delete the title row)"
    )
    # a file of one real column is missing the others: no title named
    table.write_text("claim\nx\n", encoding="utf-8")
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "a title above" not in err
    assert err.strip().startswith(f"failcodes: error: {table}:1, field 'claim_id': missing")
    assert not (tmp_path / "o.jsonl").exists()
