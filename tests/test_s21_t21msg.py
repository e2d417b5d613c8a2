"""Session 21 (t21msg): what a read assumed, and the refusals' ways through, said where read.

Each test failed on the code before its fix; the values are by hand, beside the assertions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli


def test_compare_says_rows_hidden_in_excel_on_its_assumed_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import openpyxl  # type: ignore[import-untyped]

    # units u1..u6, gpt/claude/truth; sheet row 3 (u2) hidden by a filter: read like the
    # others (6 units, where the sheet shows 5). compare said it on stderr only, not on its
    # Assumed line (the first) nor in --format json's 'assumed', as agree does (922a48a)
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(["unit", "gpt", "claude", "truth"])
    for i, row in enumerate([(1, 1, 1), (0, 1, 0), (1, 0, 1), (1, 1, 0), (0, 0, 0), (1, 1, 1)]):
        ws.append([f"u{i + 1}", *row])
    ws.row_dimensions[3].hidden = True
    path = tmp_path / "c.xlsx"
    book.save(path)
    hidden = "1 row is hidden in Excel (a filter?) and read like the others (sheet row 3)"
    code, out, _ = run_cli(["compare", str(path), "--truth", "truth"], capsys)
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("Assumed: systems (2): gpt, claude;")
    assert "every one of 6 units has every outcome" in first and hidden in first
    code, out, _ = run_cli(["compare", str(path), "--truth", "truth", "--format", "json"], capsys)
    assert code == 0
    assert hidden in json.loads(out)["assumed"]
