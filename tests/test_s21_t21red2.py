"""Session 21 red team (t21red2): agreement and review on shapes the tests did not use.

Each test failed on the code before its fix; the values are by hand, beside the assertions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli

# dr_a and dr_b on units u1..u10: agree on 7 (u3, u6, u10 differ); percent 7/10
_A = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1]
_B = [1, 0, 0, 1, 0, 1, 1, 0, 1, 0]


def _book(path: Path, **sheet: Any) -> Path:
    import openpyxl  # type: ignore[import-untyped]

    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["unit", "dr_a", "dr_b"])
    for i, (a, b) in enumerate(zip(_A, _B, strict=True)):
        ws.append([f"u{i + 1}", a, b])
    for row in sheet.get("hide", []):
        ws.row_dimensions[row].hidden = True
    for row in range(2, 12):
        ws.cell(row, 3).number_format = sheet.get("fmt", "General")
    if sheet.get("zeros") is False:
        ws.sheet_view.showZeros = False
    book.save(path)
    return path


def _agree_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    code, out, err = run_cli(["agree", *args, "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def test_rows_hidden_in_excel_are_said_on_the_assumed_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # sheet rows 4 and 5 (u3, u4) hidden by a filter: read like the others (percent 7/10,
    # where the rows the sheet shows give 7/8 (u3 hidden)). The note was a line of its own
    # under the Assumed line; a reader of the first line (the report repeats only it) missed it
    path = _book(tmp_path / "h.xlsx", hide=[4, 5])
    rows = _agree_json([str(path), "--stat", "percent"], capsys)
    assert rows[0]["value"] == pytest.approx(7 / 10)
    first = rows[0]["notes"][0]
    assert first.startswith("Assumed: raters (2): dr_a, dr_b;")
    assert "2 rows are hidden in Excel (a filter?) and read like the others (sheet rows 4, 5)" in (
        first
    )
    assert not any("hidden" in n for n in rows[0]["notes"][1:])  # said once, there
