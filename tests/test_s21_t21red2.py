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


@pytest.mark.parametrize(
    ("fmt", "cell", "shows"),
    [
        # the zero section is a text: 0 shown 'none'
        ('0;-0;"none"', "C3 holds 0", "as 'none' (number format '0;-0;\"none\"')"),
        # Excel's accounting format: its zero section '"-"??' shows a dash, no digit
        (
            '_(* #,##0_);_(* (#,##0);_(* "-"??_);_(@_)',
            "C3 holds 0",
            "as '-' (number format '_(* #,##0_);_(* (#,##0);_(* \"-\"??_);_(@_)')",
        ),
        # a positive section with no digit: 1 shown 'yes'
        ('"yes";;"no"', "C2 holds 1", "as 'yes'"),
        # '#' shows no digit of a zero: an empty cell
        ("#,###", "C3 holds 0", "as an empty cell (number format '#,###')"),
    ],
)
def test_a_number_a_format_shows_as_text_is_refused_in_a_ratings_sheet(
    fmt: str, cell: str, shows: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # dr_b's cells formatted so: the sheet shows dr_a 0 beside dr_b 'none' (or '-', or an
    # empty cell) on u2, u5, u6, u8 ('yes' for each 1 in the third). Read as held, percent
    # 7/10 and Cohen 0.4 (dr_a 6 ones of 10, dr_b 5: p_e 0.6 * 0.5 + 0.4 * 0.5 = 0.5,
    # (0.7 - 0.5) / 0.5) at exit 0, for a sheet whose dr_b shows words (or nothing) there
    path = _book(tmp_path / "f.xlsx", fmt=fmt)
    code, _, err = run_cli(["agree", str(path), "--bootstrap", "0"], capsys)
    assert code == 2
    assert f"field 'dr_b': cell {cell}, which Excel shows {shows}" in err


def test_zeros_the_sheet_hides_are_refused_in_a_ratings_sheet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the sheet's option 'Show a zero in cells that have zero value' off: every 0 shows as an
    # empty cell (dr_a's first on u2, B3), a missing rating to the reader of the sheet, which
    # shows u1, u3, u4, u7, u9 rated 1 by both (and u10 by dr_a alone); read as held, percent
    # 7/10 at exit 0
    path = _book(tmp_path / "z.xlsx", zeros=False)
    code, _, err = run_cli(["agree", str(path), "--bootstrap", "0"], capsys)
    assert code == 2
    assert (
        "field 'dr_a': cell B3 holds 0, which Excel shows as an empty cell (the sheet's option "
        "'Show a zero in cells that have zero value' is off)"
    ) in err
    # the option on (the default): read, percent 7/10
    rows = _agree_json([str(_book(tmp_path / "y.xlsx")), "--stat", "percent"], capsys)
    assert rows[0]["value"] == pytest.approx(7 / 10)


# code sets of r1 and r2 on u1..u10 (co-occurring codes a, b, c)
_R1 = [["a"], ["a", "b"], ["b"], ["c"], ["a", "c"], ["a"], ["b", "c"], ["a", "b"], ["c"], ["a"]]
_R2 = [["a"], ["a"], ["b"], ["b", "c"], ["a", "c"], ["b"], ["b", "c"], ["b", "a"], ["a"], ["a"]]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_list_cells_are_read_as_code_sets_under_sets(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A list cell was refused even with --sets ';' (whose way through the refusal named):
    # a JSONL or Parquet of code lists could not be read as sets at all. NLTK's
    # AnnotationTask on these frozensets (binary, masi_distance, jaccard_distance): kappa
    # 0.5062, alpha 0.5190, alpha(MASI) 0.5297, alpha(Jaccard) 0.5230; exact sets equal on
    # u1, u3, u5, u7, u8 (['b', 'a'] is ['a', 'b']) and u10: 6 of 10
    import pandas as pd

    frame = pd.DataFrame({"unit": [f"u{i + 1}" for i in range(10)], "r1": _R1, "r2": _R2})
    path = tmp_path / f"s{suffix}"
    if suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    rows = _agree_json([str(path), "--sets", ";"], capsys)
    got = {(r.get("code"), r["statistic"], r["weights"]): r["value"] for r in rows}
    assert got[(None, "percent", "none")] == pytest.approx(6 / 10)
    assert got[(None, "cohen", "none")] == pytest.approx(0.5062, abs=1e-4)
    assert got[(None, "krippendorff", "none")] == pytest.approx(0.5190, abs=1e-4)
    assert got[(None, "krippendorff", "masi")] == pytest.approx(0.5297, abs=1e-4)
    assert got[(None, "krippendorff", "jaccard")] == pytest.approx(0.5230, abs=1e-4)
    # per code, by hand: a given by r1 on u1,u2,u5,u6,u8,u10 and r2 on u1,u2,u5,u8,u9,u10:
    # p_o 8/10, both 6/10: p_e 0.6*0.6 + 0.4*0.4 = 0.52, kappa (0.8 - 0.52)/0.48 = 0.5833
    assert got[("a", "cohen", "none")] == pytest.approx(0.28 / 0.48)
    # c: r1 u4,u5,u7,u9; r2 u4,u5,u7: p_o 9/10, p_e 0.4*0.3 + 0.6*0.7 = 0.54, 0.36/0.46
    assert got[("c", "cohen", "none")] == pytest.approx(0.36 / 0.46)


def test_an_empty_list_of_codes_is_refused_under_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # [] is no code given, or not rated: neither is told; null is a missing rating
    path = tmp_path / "e.jsonl"
    path.write_text(
        '{"unit": "u1", "r1": ["a"], "r2": ["a"]}\n{"unit": "u2", "r1": [], "r2": ["b"]}\n'
    )
    code, _, err = run_cli(["agree", str(path), "--sets", ";", "--bootstrap", "0"], capsys)
    assert code == 2
    assert "e.jsonl:2, field 'r1': an empty list of codes (codes are texts" in err


def test_units_rated_by_unequal_numbers_of_raters_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three raters, r0 missing on u4..u6: u1..u3 hold 3 ratings, u4..u6 2. Fleiss (1971)
    # needs as many ratings on every unit (statsmodels' fleiss_kappa stops on this table);
    # the value is Gwet's (2014) generalisation, by hand: per-unit agreement
    # u1 x,x,x 1; u2 y,y,y 1; u3 x,x,y 1/3; u4 x,y 0; u5 y,y 1; u6 x,x 1: mean 13/18;
    # pi_x = (1 + 0 + 2/3 + 1/2 + 0 + 1) / 6 = 19/36, pi_y 17/36,
    # p_e = (361 + 289) / 1296 = 650/1296; kappa = (13/18 - 650/1296) / (1 - 650/1296).
    # It was said only as 'missing ratings: r0 rated 3 of 6 units', as for a design that
    # gives every unit two (where Fleiss 1971 holds).
    path = tmp_path / "r.csv"
    path.write_text("unit,r0,r1,r2\nu1,x,x,x\nu2,y,y,y\nu3,x,x,y\nu4,,x,y\nu5,,y,y\nu6,,x,x\n")
    rows = _agree_json([str(path), "--stat", "fleiss"], capsys)
    pa, pe = 13 / 18, 650 / 1296
    assert rows[0]["value"] == pytest.approx((pa - pe) / (1 - pe))
    assert (
        "; units rated by unequal numbers of raters (3 with 3, 3 with 2 ratings): fleiss, conger, "
        "gwet_ac1/ac2 and brennan_prediger in Gwet's (2014) form"
    ) in rows[0]["notes"][0]
    # every unit rated by two of the three (r0 on u1..u3, r1 on u4..u6...): Fleiss (1971)
    # holds, nothing more said
    path.write_text("unit,r0,r1,r2\nu1,x,x,\nu2,y,,y\nu3,,x,y\nu4,x,y,\n")
    rows = _agree_json([str(path), "--stat", "fleiss"], capsys)
    assert "unequal numbers" not in rows[0]["notes"][0]


@pytest.mark.parametrize("first", [True, False])
def test_numeric_code_sets_on_the_first_row_are_read_under_sets(
    first: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Codes 1-3, u1 coded {1, 2} by both. With u1 the first row it was refused as "a row of
    # units or descriptions under the header? its ratings ('1;2', '2;1') are text where
    # every other row's are numbers"; the same table with u1 second was read. By hand, exact
    # sets equal on u1, u2, u4 of 4: percent 3/4.
    rows = ["u1,1;2,2;1", "u2,1,1", "u3,3,2", "u4,2,2"]
    if not first:
        rows = [rows[1], rows[0], *rows[2:]]
    path = tmp_path / "r.csv"
    path.write_text("unit,r1,r2\n" + "\n".join(rows) + "\n")
    got = _agree_json([str(path), "--sets", ";", "--stat", "percent"], capsys)
    assert got[0]["value"] == pytest.approx(3 / 4)


def test_an_annotation_file_says_units_coded_by_unequal_numbers_of_coders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The ratings of test_units_rated_by_unequal_numbers_of_raters_are_said as an annotation
    # file (x exact_entity, y partial_entity; carol codes u1..u3 only): entity Fleiss by hand
    # (13/18 - 650/1296) / (1 - 650/1296) in Gwet's form. The first line said nothing of it
    # (not even which coder coded fewer units).
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.units import UnitKind
    from tests.judge_helpers import write_codebook
    from tests.labelstudio_helpers import toy_codebook

    cb = toy_codebook()
    word = {"x": "exact_entity", "y": "partial_entity"}
    table = {"u1": "xxx", "u2": "yyy", "u3": "xxy", "u4": "xy", "u5": "yy", "u6": "xx"}
    lines = []
    for unit, codes in table.items():
        for coder, code in zip(["alice", "bob", "carol"][-len(codes) :], codes, strict=True):
            ann = Annotation(
                unit_id=unit,
                unit_kind=UnitKind.RETRIEVAL,
                codebook=cb.ref(),
                coder=coder,
                coder_kind=CoderKind.HUMAN,
                codes={"entity": word[code], "scope": "exact_scope"},
            )
            lines.append(ann.model_dump_json())
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(lines) + "\n")
    book = write_codebook(tmp_path / "cb.yaml", cb)
    rows = _agree_json([str(path), "--codebook", str(book)], capsys)
    fleiss = [
        r
        for r in rows
        if (r.get("scope"), r.get("dimension"), r["statistic"]) == ("dimension", "entity", "fleiss")
    ]
    pa, pe = 13 / 18, 650 / 1296
    assert fleiss[0]["value"] == pytest.approx((pa - pe) / (1 - pe))
    assert (
        "; units rated by unequal numbers of coders (3 with 3, 3 with 2 ratings): fleiss, "
        "gwet_ac1 and brennan_prediger in Gwet's (2014) form"
    ) in rows[0]["notes"][0]


def test_a_label_studio_export_given_to_agree_names_the_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Label Studio JSON export (a list of tasks) was refused as "unknown ratings format
    # '.json'" with no way through: the reviews are read by `labelstudio import` first
    path = tmp_path / "export.json"
    path.write_text('[{"id": 1, "data": {}, "annotations": []}]')
    code, _, err = run_cli(["agree", str(path), "--bootstrap", "0"], capsys)
    assert code == 2
    assert "(a Label Studio export? failcodes labelstudio import FILE -p PART -o " in err
