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
    assert "r.xlsx:2, field 'dr_b': cell C2 holds 1.4, which Excel shows rounded" in err
    assert "(number format '0')" in err
    # every decimal shown (format 0.0): read as before, 7/10 agree
    path = _rounded_book(tmp_path / "s.xlsx", ["item", "dr_a", "dr_b"], rows, "0.0")
    code, out, err = run_cli(["agree", str(path), "--stat", "percent", *AGREE_JSON], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == 0.7  # 7 of 10 units equal


def test_a_label_column_excel_shows_rounded_is_said(tmp_path, capsys) -> None:
    rows = [["s1", 3], ["s2", 1], ["s3", 2.6], ["s4", 1.2]]
    path = _rounded_book(tmp_path / "l.xlsx", ["sentence_id", "severity"], rows, "0")
    out_path = tmp_path / "l.jsonl"
    args = ["ingest", "generic-labels", str(path), "--label-rule", "severity = 3 -> error"]
    code, _, err = run_cli([*args, "-o", str(out_path)], capsys)
    assert code == 0, err
    # the sheet shows s3's severity as 3 (an error by the rule); 2.6 is read, and said
    assert "2 cells hold numbers Excel shows rounded by a number format (first B4: 2.6" in err
    labels = [json.loads(line)["has_error"] for line in out_path.read_text().splitlines()]
    assert labels == [True, False, False, False]  # as held: only s1's 3 is 3
