"""Excel workbooks as tables: a clinician's label sheet, a raters' sheet, a pipeline export.

The workbooks are written here with openpyxl the way Excel stores them (numbers as numbers,
blank cells empty); expected values are hand-counted from the rows below or published.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook  # type: ignore[import-untyped]

from failcodes.errors import InputError
from failcodes.ingest import AdapterOptions, get_adapter
from failcodes.ratingsio import read_ratings_frame
from failcodes.sheetio import sheet_header, sheet_rows
from failcodes.tableio import table_rows
from tests.cli_helpers import run_cli
from tests.conftest import reference_data


def _book(path: Path, rows: list[list[Any]], *, sheet: str = "Labels") -> Path:
    book = Workbook()
    ws = book.active
    ws.title = sheet
    for row in rows:
        ws.append(row)
    book.save(path)
    return path


CLINICIAN = [
    ["Sentence ID", "Question", "Judgement", "Note"],
    [101, "q1", "incorrect", "wrong dose"],
    [102, "q1", "Correct", None],
    [],  # a blank row between blocks
    [103, "q2", "correct ", "   "],
]


def test_clinician_sheet_to_labels(tmp_path: Path) -> None:
    path = _book(tmp_path / "clinicians.xlsx", CLINICIAN)
    options = AdapterOptions(
        column_map={
            "Sentence ID": ("sentence_id",),
            "Question": ("question_id",),
            "Note": ("rationale",),
        },
        label_rule="Judgement = incorrect -> error",
    )
    labels = get_adapter("generic-labels").read([path], options).labels
    got = [(lb.sentence_id, lb.question_id, lb.has_error, lb.rationale) for lb in labels]
    # whole numbers are ids "101", not "101.0"; blank and space-only cells are missing
    assert got == [
        ("101", "q1", True, "wrong dose"),
        ("102", "q1", False, None),
        ("103", "q2", False, None),
    ]


def test_rows_keep_sheet_row_numbers(tmp_path: Path) -> None:
    path = _book(tmp_path / "c.xlsx", CLINICIAN)
    assert [line for line, _ in table_rows(path)] == [2, 3, 5]  # row 4 is blank
    assert sheet_header(path) == ["Sentence ID", "Question", "Judgement", "Note"]


def test_fleiss_1971_from_a_workbook(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame = read_ratings_frame(
        reference_data("agreement-reference", "fleiss1971_diagnoses_30patients_6raters.csv")
    )
    rows = [list(frame.columns)] + [[int(v) for v in r] for r in frame.itertuples(index=False)]
    path = _book(tmp_path / "raters.xlsx", rows)
    code, out, err = run_cli(["agree", str(path), "--stat", "fleiss", "--format", "json"], capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    # Fleiss (1971), Psychological Bulletin 76:378: kappa = 0.430
    assert round(float(row["value"]), 3) == 0.430
    assert (row["n_units"], row["n_raters"], row["unit_column"]) == (30, 6, "patient")


def test_pipeline_export_to_traces(tmp_path: Path) -> None:
    rows = [
        ["id", "claim", "prediction", "model"],
        [1, "Aspirin lowers stroke risk.", "SUPPORTED", "qwen"],
        [2, "The dose is 81 mg.", "REFUTED", "qwen"],
    ]
    path = _book(tmp_path / "run.xlsx", rows)
    options = AdapterOptions(
        column_map={"id": ("claim_id",), "prediction": ("verdict",), "model": ("system",)}
    )
    traces = get_adapter("generic").read([path], options).traces
    assert [(t.claim_id, t.sentence_id, t.verdict.value, t.system) for t in traces] == [
        ("1", "1", "supported", "qwen"),
        ("2", "2", "refuted", "qwen"),
    ]


@pytest.mark.parametrize(
    ("rows", "message", "line"),
    [
        ([["id", "code", "id"], [1, "a", 2]], "column name given twice (columns A and C)", 1),
        ([["id", None, "code"], [1, 2, "a"]], "empty header cell in column B", 1),
        ([["id", "code"], [1, "a"], [2, "b", "stray"]], "a value in column C", 3),
        ([[None], []], "empty worksheet", 1),
    ],
)
def test_bad_sheets(tmp_path: Path, rows: list[list[Any]], message: str, line: int) -> None:
    path = _book(tmp_path / "bad.xlsx", rows)
    with pytest.raises(InputError) as info:
        list(sheet_rows(path))
    assert message in info.value.reason and info.value.line == line


def test_not_a_workbook(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "labels.xlsx"
    path.write_text("sentence_id,has_error\n1,true\n")  # a CSV saved under the wrong name
    out = tmp_path / "l.jsonl"
    code, _, err = run_cli(["ingest", "generic-labels", str(path), "-o", str(out)], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "labels.xlsx: not a readable Excel workbook" in err
    assert not out.exists()


def test_a_stored_size_of_the_whole_sheet_is_not_padded(tmp_path: Path) -> None:
    # A workbook states its used range (<dimension ref="A1:XFD1048576"/> after one cell of
    # column XFD was formatted, or a whole column): read-only openpyxl padded every row to
    # 16,384 cells and yielded 1,048,576 rows, so reading two rows hung. The rows are read
    # as stored instead.
    import zipfile

    path = _book(tmp_path / "wide.xlsx", [["sentence_id", "has_error"], ["s1", True]])
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    assert '<dimension ref="A1:B2"/>' in sheet
    parts["xl/worksheets/sheet1.xml"] = sheet.replace("A1:B2", "A1:XFD1048576").encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in parts.items():
            z.writestr(name, data)
    assert list(sheet_rows(path)) == [(2, {"sentence_id": "s1", "has_error": True})]


def test_a_merge_in_the_header_row_alone_is_read(tmp_path: Path) -> None:
    # a header cell merged over the empty cell beside it (a wide title) leaves every table
    # cell its own value; a block merged over table rows is refused (tests/test_bad_inputs.py)
    book = Workbook()
    ws = book.active
    for row in [["sentence_id", "has_error"], ["s1", True], ["s2", False]]:
        ws.append(row)
    ws.merge_cells("B1:C1")
    book.save(tmp_path / "t.xlsx")
    assert list(sheet_rows(tmp_path / "t.xlsx")) == [
        (2, {"sentence_id": "s1", "has_error": True}),
        (3, {"sentence_id": "s2", "has_error": False}),
    ]


def test_a_zip_bomb_is_refused_before_reading(tmp_path: Path, monkeypatch) -> None:
    # megabytes that unpack to gigabytes kept openpyxl parsing for minutes; the workbook's
    # zip directory says how much each part unpacks to. Shown at a small scale: a sheet part
    # of 200,000 spaces packs to a few hundred bytes (ratio > 200), over a 100 KB floor.
    import zipfile

    import failcodes.sheetio as sheetio

    path = _book(tmp_path / "bomb.xlsx", [["sentence_id", "has_error"], ["s1", True]])
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    sheet = parts["xl/worksheets/sheet1.xml"]
    parts["xl/worksheets/sheet1.xml"] = sheet.replace(
        b"<sheetData>", b"<sheetData>" + b" " * 200_000
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data)
    assert list(sheet_rows(path)) == [(2, {"sentence_id": "s1", "has_error": True})]
    monkeypatch.setattr(sheetio, "BOMB_MIN", 100_000)
    with pytest.raises(InputError, match="a zip bomb, or a sheet too large to read here"):
        list(sheet_rows(path))


def test_a_formula_excel_computed_reads_as_its_value(tmp_path: Path) -> None:
    # Excel saves each formula's last value beside it (<f>1=1</f><v>1</v>): read as the value;
    # a formula with no saved value is refused (tests/test_bad_inputs.py)
    import zipfile

    path = _book(tmp_path / "f.xlsx", [["sentence_id", "has_error"], ["s1", "=1=1"]])
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    sheet = parts["xl/worksheets/sheet1.xml"]
    assert b'<c r="B2"><f>1=1</f><v></v></c>' in sheet
    parts["xl/worksheets/sheet1.xml"] = sheet.replace(
        b'<c r="B2"><f>1=1</f><v></v></c>', b'<c r="B2" t="b"><f>1=1</f><v>1</v></c>'
    )
    # Excel's own workbook.xml does not ask to compute every formula on opening (openpyxl's
    # does: fullCalcOnLoad, refused with a saved value, tests/test_outside_red14c.py)
    assert b' fullCalcOnLoad="1"' in parts["xl/workbook.xml"]
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(b' fullCalcOnLoad="1"', b"")
    with zipfile.ZipFile(path, "w") as z:
        for name, data in parts.items():
            z.writestr(name, data)
    assert list(sheet_rows(path)) == [(2, {"sentence_id": "s1", "has_error": True})]


def test_excels_escape_of_a_carriage_return_is_read_as_one(tmp_path: Path) -> None:
    # Excel saves a carriage return in a cell's text as _x000D_ (ECMA-376 ST_Xstring _xHHHH_);
    # main read it as those 7 characters: the claim 'line one_x000D_\nline two' went to the
    # trace and the judge. Now decoded: 'line one\r\nline two'; '_x005F_' (Excel's escape of
    # '_') is '_', so a literal '_x000D_' Excel saved as '_x005F_x000D_' stays that text.
    import re
    import zipfile

    book = Workbook()
    sheet = book.active
    sheet.append(["system", "question_id", "sentence_id", "claim_id", "claim", "verdict"])
    sheet.append(["A", "q1", "s1", "c1", "CLAIM", "refuted"])
    sheet.append(["A", "q1", "s2", "c2", "LITERAL", "supported"])
    plain = tmp_path / "plain.xlsx"
    book.save(plain)
    path = tmp_path / "excel.xlsx"
    with zipfile.ZipFile(plain) as zin, zipfile.ZipFile(path, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                text = data.decode("utf-8").replace("CLAIM", "line one_x000D_\nline two")
                text = text.replace("LITERAL", "a _x005F_x000D_ b")
                data = text.encode("utf-8")
                assert re.search("x000D", text)
            zout.writestr(item, data)
    claims = [rec["claim"] for _, rec in sheet_rows(path)]
    assert claims == ["line one\r\nline two", "a _x000D_ b"]
