"""Session 30 (t30att): the readers attacked with inputs spreadsheets and writers really make.

Each test writes the file a real program writes (Excel's CSV, openpyxl, pyarrow) and asserts
what is read, or the one line that refuses it; expected values are hand-counted from the rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from failcodes.errors import InputError
from failcodes.tableio import first_in_exponent, id_text, narrow_float
from tests.cli_helpers import run_cli

RULE = "label = incorrect -> error"


def test_an_id_a_spreadsheet_showed_in_scientific_notation_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Excel shows a number of 12+ digits in a General column as 1.23457E+11 and saves that
    # text to CSV: sentences 123456789012 (claim c1, supported) and 123456789013 (claim c2,
    # refuted), both errors, became one sentence '1.23457E+11'. Read so, sentence level under
    # 'refuted': the merged sentence TP (any claim refuted), s3 FN, s4 FP: n 3, TP 1, FN 1,
    # FP 1, recall 1/2; the real table is n 4, TP 1 (…013), FN 2 (…012, s3), FP 1, recall 1/3.
    table = tmp_path / "t.csv"
    table.write_text(
        "question_id,sentence_id,claim_id,claim,verdict,system,label\n"
        "q1,1.23457E+11,c1,Aspirin helps,supported,A,incorrect\n"
        "q1,1.23457E+11,c2,Dose is 5g,refuted,A,incorrect\n"
        "q2,3,c3,Water is wet,supported,A,incorrect\n"
        "q2,4,c4,Sky green,refuted,A,correct\n",
        encoding="utf-8",
    )
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--label-rule", RULE,
         "--labels-out", str(tmp_path / "l.jsonl")], capsys
    )  # fmt: skip
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:2, field 'sentence_id': id '1.23457E+11' is a number as a "
        "spreadsheet shows it, in scientific notation: its last digits are lost (123456789012 "
        "and 123456789013 both show as 1.23457E+11); expected the id's digits: format the "
        "column as Text (or Number, 0 decimal places) and save again"
    )
    assert not out.exists() and not (tmp_path / "l.jsonl").exists()


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("1.23457E+11", True),  # Excel's General format of 123456789012
        ("1E+15", True),  # Excel, a round number
        ("1.2345678901234568e+16", True),  # Python's repr of a float id past 1e16
        ("-4.5E-03", True),
        ("2E10", False),  # no exponent sign: a plate well, a code, not a shown number
        ("E+11", False),
        ("s1.23457E+11", False),
        ("123456789012", False),
    ],
)
def test_only_a_shown_exponent_is_refused_as_an_id(text: str, refused: bool) -> None:
    if refused:
        with pytest.raises(InputError, match="scientific notation"):
            id_text(text, path="t.csv", line=2, field="sentence_id")
    else:
        assert id_text(text, path="t.csv", line=2, field="sentence_id") == text


@pytest.mark.parametrize("sep", [",", ";"])
def test_excels_sep_line_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sep: str
) -> None:
    # Excel writes 'sep=,' above the header when asked for it (and reads it back); it was read
    # as a header of one column 'sep=': "unknown column 'sep='" (or, for labels, a missing
    # sentence_id), no word of the line to delete
    labels = tmp_path / "l.csv"
    labels.write_text(
        f"sep={sep}\n" + "sentence_id,has_error\ns1,true\n".replace(",", sep), encoding="utf-8"
    )
    code, _, err = run_cli(
        ["ingest", "generic-labels", str(labels), "-o", str(tmp_path / "o.jsonl")], capsys
    )
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {labels}:1: the first line 'sep={sep}' is the separator line Excel "
        "writes, not the header: delete the line (the column names are on the line below it)"
    )
    assert not (tmp_path / "o.jsonl").exists()


def test_a_labels_jsonl_id_in_scientific_notation_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the labels' fast reader (JSONL, the tool's own label format) kept '1.23457E+11' as the
    # id: with traces whose two sentences 123456789012 (c1 supported) and 123456789013 (c2
    # refuted) both read so, metrics counted n 3 (TP 1, FN 1, FP 1) for the table's n 4.
    # The traces here hold the digits: traces holding '1.23457E+11' are refused first now
    # (tests/test_s30_t30left.py), and this test is the labels reader's
    traces = tmp_path / "t.jsonl"
    rows = [
        ("q1", "123456789012", "c1", "supported"),
        ("q1", "123456789013", "c2", "refuted"),
        ("q2", "3", "c3", "supported"),
        ("q2", "4", "c4", "refuted"),
    ]
    traces.write_text(
        "".join(
            json.dumps(
                {"system": "A", "question_id": q, "sentence_id": s, "claim_id": c,
                 "claim": c, "verdict": v, "passages": []}
            ) + "\n"
            for q, s, c, v in rows
        ),
        encoding="utf-8",
    )  # fmt: skip
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        '{"sentence_id": "3", "question_id": "q2", "has_error": true}\n'
        '{"sentence_id": "1.23457E+11", "question_id": "q1", "has_error": true}\n'
        '{"sentence_id": "4", "question_id": "q2", "has_error": false}\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(
        ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"], capsys
    )
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {labels}:2, field 'sentence_id': id '1.23457E+11' is a number as a "
        "spreadsheet shows it, in scientific notation: its last digits are lost (123456789012 "
        "and 123456789013 both show as 1.23457E+11); expected the id's digits: format the "
        "column as Text (or Number, 0 decimal places) and save again"
    )


def test_first_in_exponent_finds_the_id_not_a_line_inside_one() -> None:
    # ids joined by newlines: 's\n1E+5' holds a line '1E+5' but is no number
    assert first_in_exponent(["s1", "s\n1E+5", "s2"]) is None
    assert first_in_exponent(["s1", None, "2E+05", "1E+5"]) == 2


@pytest.mark.parametrize("suffix", [".xls", ".xlsb", ".ods", ".numbers"])
def test_another_spreadsheet_format_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    # an old .xls (or .xlsb, LibreOffice's .ods, Apple's .numbers) given to ingest generic was
    # told "expected .jsonl, .csv or .parquet": no word that a .xlsx of it is read
    table = tmp_path / f"t{suffix}"
    table.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504)  # an OLE header (.xls)
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl")], capsys
    )
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}: cannot tell the format from the extension '{suffix}'; "
        "expected .jsonl, .csv or .parquet (a spreadsheet in another format: save it as an "
        "Excel Workbook, .xlsx, which `failcodes ingest generic` and `generic-labels` read, or "
        "as CSV UTF-8)"
    )


def test_pandas_table_orient_json_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # DataFrame.to_json(orient='table') was read as one record: "no verdict (this row's
    # columns: schema, data)", as if the verdict column were missing
    import pandas as pd

    table = tmp_path / "t.json"
    frame = pd.DataFrame({"question_id": ["q1"], "claim": ["a"], "verdict": ["supported"]})
    frame.to_json(table, orient="table")
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(tmp_path / "o.jsonl"), "--system", "A"], capsys
    )
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:1: a table as pandas' DataFrame.to_json writes it with "
        "orient='table' (not a row per object): write the rows with df.to_json(PATH, "
        "orient='records'), or a .jsonl file with df.to_json(PATH, orient='records', lines=True)"
    )


def test_a_float32_id_column_past_2_24_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a float32 column holds every whole number up to 2**24 only: sentence ids 16777216 and
    # 16777217 are both stored as 16777216, so two sentences (claims c1 supported, c2 refuted)
    # were read as one (its label written once: 3 sentence labels for 4 rows of 4 sentences)
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = tmp_path / "t.parquet"
    ids = pa.array([16777216.0, 16777217.0, 3.0, 4.0], pa.float32())
    assert ids.to_pylist()[:2] == [16777216.0, 16777216.0]  # the digit lost on writing
    pq.write_table(
        pa.table(
            {"question_id": ["q1", "q1", "q2", "q2"], "sentence_id": ids,
             "claim_id": ["c1", "c2", "c3", "c4"], "claim": ["a", "b", "c", "d"],
             "verdict": ["supported", "refuted", "supported", "refuted"],
             "label": ["incorrect", "incorrect", "incorrect", "correct"]}
        ),
        table,
    )  # fmt: skip
    out = tmp_path / "o.jsonl"
    code, _, err = run_cli(
        ["ingest", "generic", str(table), "-o", str(out), "--system", "A", "--label-rule", RULE,
         "--labels-out", str(tmp_path / "l.jsonl")],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:1, field 'sentence_id': id 16777216 is in a 32-bit float "
        "column, at or past 16,777,216 (2**24), where such a float no longer holds every whole "
        "number (its last digits may be lost); expected text or a whole number: save the "
        "column as text or integers"
    )
    assert not out.exists()


def test_a_float32_id_below_2_24_and_a_float32_score_are_read() -> None:
    # the bound is the id's alone: 3.0 in a float32 column is the id '3'; a float32 score of
    # 2**24 is a number like any other
    assert id_text(narrow_float(3.0, 2**24), path="t.parquet", line=1, field="sentence_id") == "3"
    assert narrow_float(16777216.0, 2**24) == 16777216.0
