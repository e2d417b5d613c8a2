"""Session 20, t20s2b: a sheet's numbers read as Excel shows them, or refused (issue 30).

Each test failed before its fix: agree read a number the sheet does not show (a format's empty
section hides it; a thousands-scaling comma shows 1400 as 1), exit 0. Expected values are
hand-counted from the rows written here.
"""

from __future__ import annotations

import json
from pathlib import Path

from openpyxl import Workbook  # type: ignore[import-untyped]

from tests.cli_helpers import AGREE_JSON, run_cli


def _book(path: Path, rows: list[list[object]], formats: dict[str, str]) -> Path:
    book = Workbook()
    sheet = book.active
    sheet.append(["item", "dr_a", "dr_b"])
    for i, row in enumerate(rows, start=1):
        sheet.append([i, *row])
    for ref, fmt in formats.items():
        sheet[ref].number_format = fmt
    book.save(path)
    return path


def _agree(path: Path, capsys: object) -> tuple[int, str, str]:
    return run_cli(["agree", str(path), "--stat", "percent", *AGREE_JSON], capsys)


#: dr_b's zeros (units 2, 4, 5, 7) formatted 0;-0;;@ (Excel's "hide zeros"): shown empty
HIDE_A = [1, 0, 1, 1, 0, 1, 0, 1, 1, 0]
HIDE_B = [1, 0, 1, 0, 0, 1, 0, 1, 1, 1]


def test_ratings_a_format_hides_are_refused_naming_the_cell(tmp_path, capsys) -> None:
    rows = [[a, b] for a, b in zip(HIDE_A, HIDE_B, strict=True)]
    zeros = {f"C{n}": "0;-0;;@" for n in range(2, 12)}
    code, out, err = _agree(_book(tmp_path / "z.xlsx", rows, zeros), capsys)
    # The sheet shows dr_b empty on units 2, 4, 5, 7: 6 units rated by both, 5 of 6 equal
    # (unit 10: 0 vs 1); read as held, 10 units, 8 of 10 equal (percent 0.8), exit 0
    assert code == 2, out
    assert "z.xlsx:3, field 'dr_b': cell C3 holds 0, which Excel shows as an empty cell" in err
    assert "(number format '0;-0;;@')" in err
    # ';;;' hides every value: C5 holds 0 (unit 4), shown empty
    code, out, err = _agree(_book(tmp_path / "h.xlsx", rows, {"C5": ";;;"}), capsys)
    assert code == 2, out
    assert "cell C5 holds 0, which Excel shows as an empty cell (number format ';;;')" in err
    # 0;-0;;@ on a cell holding 1: its section (positive) shows it, read as before, 8/10
    code, out, err = _agree(_book(tmp_path / "o.xlsx", rows, {"C2": "0;-0;;@"}), capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == 0.8


#: dr_b's first three cells hold 1400, 2000, 3000 formatted "0,": Excel shows 1, 2, 3
SCALE_A = [1, 2, 3, 2, 1, 3, 2, 2, 1, 3]
SCALE_B = [1400, 2000, 3000, 2, 1, 3, 2, 2, 1, 3]


def test_ratings_a_format_scales_are_refused_naming_the_cell(tmp_path, capsys) -> None:
    rows = [[a, b] for a, b in zip(SCALE_A, SCALE_B, strict=True)]
    commas = {"C2": "0,", "C3": "0,", "C4": "0,"}
    code, out, err = _agree(_book(tmp_path / "k.xlsx", rows, commas), capsys)
    # The sheet shows dr_b equal to dr_a on all 10 units (1.0); read as held, 1400, 2000,
    # 3000 were categories of their own: 7 of 10 equal (percent 0.7), exit 0
    assert code == 2, out
    assert "k.xlsx:2, field 'dr_b': cell C2 holds 1400, which Excel shows as 1 " in err
    assert "(number format '0,')" in err
    # millions: 1,400,000 formatted 0.0,, is shown 1.4 (1400000 / 1000**2)
    rows[0][1] = 1_400_000
    code, out, err = _agree(_book(tmp_path / "m.xlsx", rows, {"C2": "0.0,,"}), capsys)
    assert code == 2, out
    assert "cell C2 holds 1400000, which Excel shows as 1.4 (number format '0.0,,')" in err
    # 1500 formatted 0,: 1.5 shown as 2 (Excel rounds half away from zero)
    rows[0][1] = 1500
    code, out, err = _agree(_book(tmp_path / "r.xlsx", rows, {"C2": "0,"}), capsys)
    assert "cell C2 holds 1500, which Excel shows as 2 (number format '0,')" in err
    # a comma between digits separates thousands (#,##0 shows 1400 as 1,400): read as before
    rows[0][1] = 1400
    code, out, err = _agree(_book(tmp_path / "s.xlsx", rows, {"C2": "#,##0"}), capsys)
    assert code == 0, err
    # 7 of 10 equal: units 1-3 hold 1 vs 1400, 2 vs 2000, 3 vs 3000, each shown as held
    assert json.loads(out)[0]["value"] == 0.7


def test_a_label_rule_column_excel_shows_otherwise_is_refused(tmp_path, capsys) -> None:
    out_path = tmp_path / "l.jsonl"
    for fmt, held, shown in ((";;;", 3, "an empty cell"), ("0,", 2600, "3")):
        book = Workbook()
        sheet = book.active
        for row in (["sentence_id", "severity"], ["s1", 3], ["s2", 1], ["s3", held]):
            sheet.append(row)
        sheet["B4"].number_format = fmt
        book.save(tmp_path / "l.xlsx")
        args = ["ingest", "generic-labels", str(tmp_path / "l.xlsx"), "-o", str(out_path)]
        code, _, err = run_cli([*args, "--label-rule", "severity = 3 -> error"], capsys)
        # read as held, exit 0: s3 (shown empty) got error by its hidden 3; 2600 (shown 3)
        # got no_error where the sheet shows 3, an error by the rule
        assert code == 2, err
        assert (
            f"l.xlsx:4, field 'severity': cell B4 holds {held}, which Excel shows as {shown}" in err
        )
        assert not out_path.exists()


def test_ratings_text_a_format_hides_is_refused(tmp_path, capsys) -> None:
    rows = [[a, b] for a, b in zip(["yes", "no"] * 5, ["yes", "no"] * 5, strict=True)]
    rows[1][1] = "yes"  # unit 2: dr_b 'yes', hidden by ;;; (Excel shows C3 empty)
    code, out, err = _agree(_book(tmp_path / "t.xlsx", rows, {"C3": ";;;"}), capsys)
    # The sheet shows 9 units rated by both, 9 of 9 equal (percent 1.0); read as held, 10
    # units, 9 of 10 equal (0.9), exit 0
    assert code == 2, out
    assert "t.xlsx:3, field 'dr_b': cell C3 holds 'yes', which Excel shows as an empty cell" in err
    # ;; (three sections: no text section) shows text as it is: read as before, 9/10
    code, out, err = _agree(_book(tmp_path / "u.xlsx", rows, {"C3": ";;"}), capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == 0.9
