"""Session 20, t20red4: files a researcher exports read as the table they see (issue 30).

Each test failed before its fix: the tool read a table other than the one the sheet shows,
exit 0. Expected values are hand-counted from the rows written here.
"""

from __future__ import annotations

import json
from pathlib import Path

from openpyxl import Workbook  # type: ignore[import-untyped]

from tests.cli_helpers import AGREE_JSON, run_cli

#: dr_b's first three cells hold 1.4, 2.4 and 3.4, formatted "0": Excel shows 1, 2, 3
DR_A = [1, 2, 3, 2, 1, 3, 2, 2, 1, 3]
DR_B = [1.4, 2.4, 3.4, 2, 1, 3, 2, 2, 1, 3]


def _rounded_book(path: Path, header: list[str], rows: list[list[object]], fmt: str) -> Path:
    book = Workbook()
    sheet = book.active
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    for cells in sheet.iter_rows(min_row=2, min_col=2):
        for cell in cells:
            cell.number_format = fmt
    book.save(path)
    return path


def test_ratings_excel_shows_rounded_are_refused_naming_the_cell(tmp_path, capsys) -> None:
    rows = [[i + 1, a, b] for i, (a, b) in enumerate(zip(DR_A, DR_B, strict=True))]
    path = _rounded_book(tmp_path / "r.xlsx", ["item", "dr_a", "dr_b"], rows, "0")
    code, out, err = run_cli(["agree", str(path), "--stat", "percent", *AGREE_JSON], capsys)
    # The sheet shows dr_b equal to dr_a on all 10 units (percent 10/10 = 1.0); read as held,
    # 1.4, 2.4, 3.4 were three categories of their own: percent 7/10 = 0.7 and Cohen's kappa
    # (0.7 - 0.24) / (1 - 0.24) = 0.605 (chance (3*2 + 4*3 + 3*2) / 100), exit 0
    assert code == 2, out
    assert "r.xlsx:2, field 'dr_b': cell C2 holds 1.4, which Excel shows as 1 " in err
    assert "(number format '0')" in err
    # every decimal shown (format 0.0): read as before, 7/10 agree
    path = _rounded_book(tmp_path / "s.xlsx", ["item", "dr_a", "dr_b"], rows, "0.0")
    code, out, err = run_cli(["agree", str(path), "--stat", "percent", *AGREE_JSON], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == 0.7  # 7 of 10 units equal


def test_a_label_column_excel_shows_rounded_is_refused(tmp_path, capsys) -> None:
    rows = [["s1", 3], ["s2", 1], ["s3", 2.6], ["s4", 1.2]]
    path = _rounded_book(tmp_path / "l.xlsx", ["sentence_id", "severity"], rows, "0")
    out_path = tmp_path / "l.jsonl"
    args = ["ingest", "generic-labels", str(path), "--label-rule", "severity = 3 -> error"]
    code, _, err = run_cli([*args, "-o", str(out_path)], capsys)
    # the sheet shows s3's severity as 3 (an error by the rule); read as held, 2.6 got
    # no_error (labels True, False, False, False), exit 0; the rule compares the text held
    assert code == 2, err
    assert "l.xlsx:4, field 'severity': cell B4 holds 2.6, which Excel shows as 3 " in err
    assert not out_path.exists()


def test_a_parquet_saved_with_its_pandas_index_reads_the_index_as_the_unit_ids(
    tmp_path, capsys
) -> None:
    import pandas as pd

    a = ["yes", "yes", "no", "no", "yes", "no", "yes", "yes"]
    b = ["yes", "no", "no", "no", "yes", "no", "yes", "no"]
    b[3] = None  # patient 20 rated by dr_a alone
    frame = pd.DataFrame({"patient": [5, 9, 12, 20, 21, 22, 30, 31], "dr_a": a, "dr_b": b})
    path = tmp_path / "r.parquet"
    frame.set_index("patient").to_parquet(path)  # the ids in pandas' index, not a column
    code, out, err = run_cli(["agree", str(path), "--stat", "percent", *AGREE_JSON], capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    # read as the rows numbered 1..8: 'unit ids: none found', the unit rated once named '4'
    assert row["unit_column"] == "patient"
    assert "1 unit rated by one rater only ('20')" in row["notes"][0]
    assert row["value"] == 5 / 7  # 7 patients rated twice, 5 agree (5, 12, 21, 22, 30)
    # the same patients twice (two exports joined): 10 rows read as 10 units, percent 0.7
    # and kappa 0.444, exit 0; by patient the table has 8 (6 of 8 agree)
    a, b = a + a[:2], ["yes", "no", "no", "no", "yes", "no", "yes", "no", "yes", "no"]
    frame = pd.DataFrame({"patient": [1, 2, 3, 4, 5, 6, 7, 8, 1, 2], "dr_a": a, "dr_b": b})
    frame.set_index("patient").to_parquet(path)
    code, out, err = run_cli(["agree", str(path), "--stat", "percent", *AGREE_JSON], capsys)
    assert code == 2, out
    assert "r.parquet:9, field 'patient': unit '1' is on two rows (first at line 1)" in err


def test_a_windows_1252_csv_names_its_character_and_the_way_through(tmp_path, capsys) -> None:
    path = tmp_path / "r.csv"
    # Excel's "CSV (Comma delimited)" on Windows: é is the one byte 0xE9, not UTF-8's C3 A9
    path.write_bytes("item,dr_a,dr_b\n1,élevé,faible\n".encode("cp1252"))
    code, _, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 2
    # 'item,dr_a,dr_b\n' is 15 bytes, '1,' 2 more: the first é is byte 17
    assert (
        "r.csv:2, field 'dr_a': not UTF-8 text (invalid continuation byte at byte 17); 'é' in "
        "Windows-1252 (Latin-1)? save the file as 'CSV UTF-8'"
    ) in err


def test_rows_of_empty_cells_under_a_ratings_csv_are_no_rows(tmp_path, capsys) -> None:
    rows = "".join(f"{i + 1},{a},{b}\n" for i, (a, b) in enumerate(zip(DR_A, DR_B, strict=True)))
    path = tmp_path / "r.csv"
    # Excel's CSV of a sheet formatted below its table: rows of commas alone
    path.write_text("item,dr_a,dr_b\n" + rows + ",,\n,,\n", encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), "--stat", "percent", *AGREE_JSON], capsys)
    # was refused: "r.csv:12, field 'item': empty unit cell ... delete it" (a row no one sees)
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["n_units"], row["value"]) == (10, 0.7)  # 7 of the 10 units read equal
