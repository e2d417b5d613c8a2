"""Outside check of agreement and review, session 19 (t19out2): published tables re-shaped
the ways researchers save them.

Each test states the input, what failcodes gave before the fix, and the published value
(Krippendorff 2011, /work/shared/data/agreement-reference) beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest

from tests.cli_helpers import AGREE_JSON, run_cli

# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", example A: two coders,
# 10 units, binary; published nominal alpha 0.095 (krippendorff 0.9.0: 0.0952381)
MEG = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
OWEN = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
# example B: two coders, 12 units, nominal; published alpha 0.692 (krippendorff: 0.6919643)
BEN = [1, 1, 2, 2, 4, 3, 3, 3, 5, 4, 4, 1]
GERRY = [2, 1, 2, 2, 2, 3, 3, 3, 5, 4, 4, 4]


@pytest.mark.parametrize(
    ("name", "settled"),
    [
        # the settled code where the two split (units 1, 3, 6 -> 1; unit 9 -> 0)
        ("décision_finale", [0, 1, 1, 0, 0, 1, 0, 0, 0, 0]),
        # German 'agreement': the code both reached (here: either said 1)
        ("Einigung", [max(m, o) for m, o in zip(MEG, OWEN, strict=True)]),
        ("Endgültig", [0, 1, 1, 0, 0, 1, 0, 0, 0, 0]),
    ],
)
def test_a_settled_column_named_in_another_language_is_no_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, settled: list[int]
) -> None:
    """Before: read as a third rater, alpha 0.386 (décision_finale) / 0.445 (Einigung) at
    exit 0; two columns and one summary are too few for the value rule, so the name decides.
    Now left out (named on the first line): the two coders' published 0.095."""
    rows = ["unit,Meg,Owen," + name]
    rows += [f"{i},{m},{o},{s}" for i, (m, o, s) in enumerate(zip(MEG, OWEN, settled, strict=True))]
    path = tmp_path / "ratings.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), "--stat", "krippendorff", *AGREE_JSON], capsys)
    assert code == 0, err
    [row] = json.loads(out)
    assert row["raters"] == ["Meg", "Owen"]
    assert round(row["value"], 3) == 0.095  # Krippendorff (2011), example A


def _refusal(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    code, out, err = run_cli(["agree", str(path), "--bootstrap", "0"], capsys)
    assert code == 2 and out == ""
    return err.strip().splitlines()[-1]


TITLE = "Table 2: ratings by two coders"
WAY = (
    f"(line 1 holds one name, '{TITLE}': a title above the column names? the first "
    "non-empty row is the header, one name per column: delete the title row)"
)


@pytest.mark.parametrize(
    ("first", "said"),
    [
        (TITLE, "expected 1 cells (as in the header), got 3"),
        (TITLE + ",,", "a value in column B, which has no header name"),
    ],
)
def test_a_title_row_above_a_csv_header_names_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], first: str, said: str
) -> None:
    """Before: the refusal named no way through (no mention of the title row)."""
    rows = [first, "unit,Ben,Gerry"]
    rows += [f"{i},{b},{g}" for i, (b, g) in enumerate(zip(BEN, GERRY, strict=True))]
    path = tmp_path / "table2.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert _refusal(capsys, path) == f"failcodes: error: {path}:2: {said} {WAY}"
    # the way through: the title row deleted gives the published alpha (example B: 0.692)
    path.write_text("\n".join(rows[1:]) + "\n", encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), "--stat", "krippendorff", *AGREE_JSON], capsys)
    assert code == 0, err
    assert round(json.loads(out)[0]["value"], 3) == 0.692  # Krippendorff (2011), example B


def test_a_title_row_above_an_excel_header_names_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An Excel export: title in A1 (not merged), header on row 2. Before: 'a value in column
    B, which has no header name' and no more."""
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append([TITLE])
    sheet.append(["unit", "Ben", "Gerry"])
    for i, (b, g) in enumerate(zip(BEN, GERRY, strict=True)):
        sheet.append([i, b, g])
    path = tmp_path / "table2.xlsx"
    book.save(path)
    assert _refusal(capsys, path) == (
        f"failcodes: error: {path}:2: a value in column B, which has no header name {WAY}"
    )


def test_ratings_mixing_numbers_and_words_say_so_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Example B with Gerry's '2' of unit 0 written 'b' (the scale's letter, as Ben's codes
    are in another file): 'b' is a sixth category. Before: alpha 0.699 (krippendorff 0.9.0
    on [1,1,2,2,4,3,3,3,5,4,4,1] vs [6,1,2,2,2,3,3,3,5,4,4,4]: 0.6986899) beside the
    published 0.692, no word. Now the number stands (it is the table as given) and the first
    line says the ratings mix numbers and words."""
    gerry: list[object] = ["b", *GERRY[1:]]
    rows = ["unit,Ben,Gerry"]
    rows += [f"{i},{b},{g}" for i, (b, g) in enumerate(zip(BEN, gerry, strict=True))]
    path = tmp_path / "mixed.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), "--stat", "krippendorff", *AGREE_JSON], capsys)
    assert code == 0, err
    [row] = json.loads(out)
    assert round(row["value"], 4) == 0.6987  # krippendorff 0.9.0: 0.6986899
    assert (
        "the ratings mix numbers (1, 2, 3, 4) and words (b): each a category of its own "
        "('1' and 'b' never agree); one scale written two ways? write the ratings one way"
    ) in row["notes"][0]


def test_a_long_table_without_a_rater_column_names_the_way_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """RAGChecker's meta-evaluation saved as it comes (two rows per instance, one per
    annotator, no annotator field): the refusal asked for --long RATER_COLUMN,RATING_COLUMN,
    and the table has no rater column to name. Now it says to add one; with it (each
    instance's rows named 1 and 2) example B's two coders give the published 0.692."""
    rows = ["instance_id,dataset,label"]
    rows += [f"{i},kiwi,{v}" for i, pair in enumerate(zip(BEN, GERRY, strict=True)) for v in pair]
    path = tmp_path / "long.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert _refusal(capsys, path) == (
        f"failcodes: error: {path}:3, field 'instance_id': unit '0' is on two rows (first at "
        "line 2): one row per unit and rater? name the columns with --long "
        "RATER_COLUMN,RATING_COLUMN (no rater column? add one naming the rater of each row)"
    )
    rows = ["instance_id,dataset,annotator,label"]
    rows += [
        f"{i},kiwi,{k},{v}"
        for i, pair in enumerate(zip(BEN, GERRY, strict=True))
        for k, v in enumerate(pair, 1)
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run_cli(
        ["agree", str(path), "--long", "annotator,label", "--stat", "krippendorff", *AGREE_JSON],
        capsys,
    )
    assert code == 0, err
    assert round(json.loads(out)[0]["value"], 3) == 0.692  # Krippendorff (2011), example B
