"""Data shapes the seventh outside check tried (redteam7, 2026-12-02): values by hand.

Each test failed on the code before its fix (rows hidden in Excel read without a word, a
summary column read as a rater, a figure whose labels the fonts lack).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def test_rows_hidden_by_an_excel_filter_are_read_and_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A filtered sheet (site B's rows hidden) was read whole without a word, exit 0.

    Filters are common, so the rows are read (as before) and the first stderr line says so,
    once however many times the command reads the file. Rows (sheet rows 2-7): y/y (A),
    n/n (B, row 3), y/n (A), n/y (B, row 5), y/y (A), n/n (A). All six read: agree on 4 of
    6, percent 4/6 = 2/3; the visible four alone would give 3/4 (the number the sheet's
    viewer expects is not the one computed: hence the note).
    """
    import openpyxl  # type: ignore[import-untyped]

    rows = [("y", "y", "A"), ("n", "n", "B"), ("y", "n", "A"), ("n", "y", "B"),
            ("y", "y", "A"), ("n", "n", "A")]  # fmt: skip
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["item", "dr_a", "dr_b", "site"])
    for i, row in enumerate(rows):
        sheet.append([f"i{i}", *row])
    sheet.auto_filter.ref = "A1:D7"
    sheet.row_dimensions[3].hidden = True
    sheet.row_dimensions[5].hidden = True
    path = tmp_path / "f.xlsx"
    book.save(path)
    args = ["agree", str(path), "--raters", "dr_a,dr_b", "--stat", "percent", "--bootstrap", "0"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    assert err.splitlines()[0] == (
        f"failcodes: note: {path}: 2 rows are hidden in Excel (a filter?) and read like the "
        "others (sheet rows 3, 5); failcodes reads every row: delete the rows to leave them out"
    )
    assert err.count("hidden in Excel") == 1  # said once (the header and the rows read)
    assert json.loads(out)[0]["value"] == pytest.approx(4 / 6)
    sheet.row_dimensions[3].hidden = False
    sheet.row_dimensions[5].hidden = False
    book.save(path)
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    assert "hidden" not in err
    assert json.loads(out)[0]["value"] == pytest.approx(4 / 6)
