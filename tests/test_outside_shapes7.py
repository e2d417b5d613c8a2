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
    # and in the JSON's notes (they lacked it: the note was printed by the reader)
    said = err.splitlines()[0].removeprefix("failcodes: note: ")
    assert said in json.loads(out)[0]["notes"][0]  # (on the line of the shape assumed)
    sheet.row_dimensions[3].hidden = False
    sheet.row_dimensions[5].hidden = False
    book.save(path)
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    assert "hidden" not in err
    assert json.loads(out)[0]["value"] == pytest.approx(4 / 6)


def test_a_panel_or_ref_column_is_left_out_of_the_raters_and_said_with_how_to_keep_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`expert_panel` and `ref` (the physicians' majority) were read as raters, exit 0.

    By hand, units y/y/y, n/n/n, y/y/n, n/n/y, the panel and ref columns both y, n, y, n.
    The three physicians: per-unit agreement 1, 1, 1/3, 1/3, mean 2/3; y 6 of 12, chance
    1/2; Fleiss (2/3 - 1/2) / (1/2) = 1/3. Read as five raters (before): c3 is y/y/n/y/y
    (4 y, 1 n: (4*3 + 1*0) / (5*4) = 3/5), c4 likewise 3/5; mean (1 + 1 + 3/5 + 3/5) / 4 = 4/5;
    y 5 + 0 + 4 + 1 = 10 of 20, chance 1/2;
    Fleiss (4/5 - 1/2) / (1/2) = 3/5. A rater named `final_reader` is left out by name too:
    the first line says so and gives the --raters value that keeps it.
    """
    path = tmp_path / "p.csv"
    path.write_text(
        "case_id,dr_a,dr_b,dr_c,expert_panel,ref\n"
        "c1,y,y,y,y,y\nc2,n,n,n,n,n\nc3,y,y,n,y,y\nc4,n,n,y,n,n\n"
    )
    args = ["agree", str(path), "--stat", "fleiss", "--bootstrap", "0"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    row = json.loads(out)[0]
    assert row["raters"] == ["dr_a", "dr_b", "dr_c"]
    assert row["value"] == pytest.approx(1 / 3)
    code, out, err = run_cli([*args, "--raters", "dr_a,dr_b,dr_c,expert_panel,ref", "--format",
                              "json"], capsys)  # fmt: skip
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(3 / 5)
    path.write_text("case_id,dr_a,dr_b,final_reader\nc1,y,y,y\nc2,n,n,n\nc3,y,y,n\nc4,n,n,y\n")
    code, out, err = run_cli(["agree", str(path), "--stat", "percent", "--bootstrap", "0"], capsys)
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith(
        "Assumed: raters (2): dr_a, dr_b; left out: final_reader (named like a consensus "
        "column ('final'); a rater? --raters dr_a,dr_b,final_reader keeps it); "
    )
    # dr_a and dr_b agree on all 4 units; final_reader kept: per-unit 1, 1, 1/3, 1/3 = 2/3
    code, out, err = run_cli(["agree", str(path), "--stat", "percent", "--bootstrap", "0",
                              "--raters", "dr_a,dr_b,final_reader", "--format", "json"],
                             capsys)  # fmt: skip
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(2 / 3)


def test_compare_refuses_a_panel_column_among_the_systems_as_agree_leaves_it_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One rule for both commands: `expert_panel` among the systems of `compare FILE` was
    read as one more system (a column of Cochran's Q), exit 0; it is refused as `gold` is."""
    path = tmp_path / "o.csv"
    path.write_text("unit,sysA,sysB,expert_panel\nu1,1,0,1\nu2,0,0,0\nu3,1,1,1\nu4,0,1,1\n")
    code, _, err = run_cli(["compare", str(path), "--resamples", "100"], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"failcodes: error: {path}:1, field 'expert_panel': column 'expert_panel' is named like "
        "the reference or a consensus of the systems (holds 'panel'), not a system: give the "
        "reference with --truth expert_panel (F1 and recall differences), or name the system "
        "columns with --systems (a majority vote compared as a system too)"
    ]


def _fonts_lack(text: str) -> bool:
    """Whether none of matplotlib's sans-serif fonts found here has a glyph for ``text``."""
    import matplotlib as mpl
    from matplotlib import font_manager

    paths = {
        font_manager.findfont(font_manager.FontProperties(family=[f]))
        for f in mpl.rcParams["font.sans-serif"]
    }
    return all(
        any(font_manager.get_font(p).get_char_index(ord(c)) == 0 for c in text) for p in paths
    )


@pytest.mark.skipif(not _fonts_lack("模型"), reason="a CJK font is installed here")
def test_a_figure_label_the_fonts_cannot_draw_is_said_beside_the_figure_and_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A system named 模型β was drawn as empty boxes in the recall figure's labels, said only
    by matplotlib warnings (one per glyph and format) on stderr.

    The tutorial's answers keyed by system, sysA renamed 模型β (β is in DejaVu Sans, 模 and 型
    are in no installed font here): the figure's caption and one stderr line of `failcodes
    report` name the 2 characters and the figure; matplotlib's own warnings are not repeated.
    """
    answers = Path(__file__).resolve().parent.parent / "docs" / "tutorial"
    data = tmp_path / "ans.jsonl"
    data.write_text((answers / "answers-by-system.jsonl").read_text().replace('"sysA"', '"模型β"'))
    study = tmp_path / "st"
    assert run_cli(["init", str(study)], capsys)[0] == 0
    (study / "failcodes.toml").write_text(
        'name = "cjk"\ncodebook = "medical-fact-check.v1.yaml"\n[[datasets]]\nname = "a"\n'
        '[[datasets.ingest]]\nadapter = "generic"\npaths = ["../ans.jsonl"]\nlabels = true\n'
        'option = ["rows=answers.*.claims[]", "sentence_ids=question", "label_scope=system"]\n'
        'map = ["#=question_id", "answers.*.claims#=sentence_id", "answers.*=system", '
        '"answers.*.model=verifier", "question=", "cited=passages", "url=source", '
        '"snippet=text"]\nlabel_rule = "expert = incorrect -> error"\n'
        '[[datasets.pipelines]]\nsystem = "*"\nevidence = "post-hoc"\nverdict = "supported"\n'
        '[metrics]\nmappings = ["refuted"]\nbootstrap = 50\n'
    )
    code, _, run_err = run_cli(["run", str(study)], capsys)
    assert code == 0, run_err
    code, _, err = run_cli(["report", str(study)], capsys)
    assert code == 0, err
    note = (
        "figures recall_f1: the installed fonts have no glyph for 2 character(s) of the labels "
        "(模 型), drawn as empty boxes; the tables give the names (install a font that has "
        "them, e.g. Noto Sans CJK, and build the report again)"
    )
    assert note in err.splitlines()
    # `failcodes run` says the same line once (it was only in report.log and the caption)
    assert run_err.splitlines().count(note) == 1, run_err
    assert "Glyph" not in run_err
    assert "Glyph" not in err  # matplotlib's per-glyph warnings are said once, by the line
    html = (study / "report" / "index.html").read_text()
    assert f"({note}) <span" in html  # the caption, then its files
