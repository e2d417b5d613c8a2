"""Outside red-team of agreement, review and corrected shares, session 18 (t18red2).

Each test states the input, what failcodes gave before the fix, and the value computed by
hand (or published) beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import AGREE_JSON, run_cli

# three raters of 12 units (0/1) and the data set's own label of each unit, named `gt`
R1 = [1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0]
R2 = [1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0]
R3 = [0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1]
GT = [1, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 1]


def _rows() -> str:
    cells = zip(R1, R2, R3, GT, strict=True)
    return "".join(f"u{i},{a},{b},{c},{g}\n" for i, (a, b, c, g) in enumerate(cells))


def _fleiss(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[float, str]:
    code, out, err = run_cli(["agree", *args, "--stat", "fleiss", *AGREE_JSON], capsys)
    assert code == 0, err
    [row] = json.loads(out)
    return row["value"], row["notes"][0]


@pytest.mark.parametrize("name", ["gt", "label", "target", "y_true"])
def test_a_truth_column_beside_the_raters_is_not_one_more_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """`item_id,r1,r2,r3,gt`: the ground truth the raters were scored against was a fourth
    rater, Fleiss 0.193 for the raters' own -0.003, exit 0, the first line 'raters (4)'."""
    table = tmp_path / "r.csv"
    rows = _rows()
    table.write_text(f"item_id,r1,r2,r3,{name}\n" + rows, encoding="utf-8")
    value, line = _fleiss(capsys, str(table))
    # r1, r2, r3: units 3, 5, 8 unanimous (P_i 1), the 9 others split 2-1 (P_i 1/3):
    # P-bar 6/12; ones 17 of 36: p_e (17^2 + 19^2)/36^2 = 650/1296; (648 - 650)/646
    assert value == pytest.approx(-2 / 646)  # was 222/1150 = 0.193 with gt as a rater
    assert line.startswith(
        f"Assumed: raters (3): r1, r2, r3; left out: {name} (named like the data set's label "
        f"('{name}'); a rater? --raters r1,r2,r3,{name} keeps it)"
    )
    # the way through: named with --raters it is a rater (Fleiss 1971 over four: P_i 1 on
    # units 3, 5, 8, 1/2 on seven 3-1 units, 1/3 on two 2-2 units: P-bar 43/72; ones 23 of
    # 48: p_e 1154/2304; (1376 - 1154)/1150)
    value, _ = _fleiss(capsys, str(table), "--raters", f"r1,r2,r3,{name}")
    assert value == pytest.approx(222 / 1150)


def test_gt_among_raters_named_by_initials_stays_a_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`AB,CD,EF,GT`: every column is a rater's initials, so GT is one of them (said on the
    first line); a label `gt` beside `r1,r2,r3` is left out (above)."""
    table = tmp_path / "r.csv"
    rows = _rows()
    table.write_text("item_id,AB,CD,EF,GT\n" + rows, encoding="utf-8")
    value, line = _fleiss(capsys, str(table))
    assert value == pytest.approx(222 / 1150)  # four raters, by hand above
    assert line.startswith("Assumed: raters (4): AB, CD, EF, GT; unit ids")


@pytest.mark.parametrize("name", ["count", "Freq", "n", "weight"])
def test_a_table_of_rating_patterns_and_their_counts_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Two raters' 2x2 table as R's as.data.frame(table(a, b)) writes it: one row per pattern
    and its count. Read as given the count column was the unit ids and each pattern a unit:
    Cohen 0.0 over 4 'units' (two of each kind), exit 0. The 50 units give: p_o (20 + 15)/50
    = 0.7; a yes 25/50, b yes 30/50: p_e 0.5 x 0.6 + 0.5 x 0.4 = 0.5; (0.7 - 0.5)/0.5 = 0.4
    (sklearn's cohen_kappa_score of the expanded rows: 0.4)."""
    table, out = tmp_path / "t.csv", tmp_path / "a.json"
    table.write_text(f"a,b,{name}\nyes,yes,20\nyes,no,5\nno,yes,10\nno,no,15\n", encoding="utf-8")
    code, _, err = run_cli(["agree", str(table), "-o", str(out), "--bootstrap", "0"], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:1, field '{name}': column '{name}' is named like a count "
        f"and no two rows rate alike: is each row a rating pattern and '{name}' how many units "
        "had it (as R's as.data.frame(table(...)) writes it)? agreement needs one row per "
        f"unit: repeat each row '{name}' times (pandas: df.loc[df.index.repeat(df['{name}'])]);"
        " to read it as given, name the raters with --raters"
    )
    assert not out.exists()
    # the way through: the rows repeated, one per unit
    rows = "yes,yes\n" * 20 + "yes,no\n" * 5 + "no,yes\n" * 10 + "no,no\n" * 15
    table.write_text("a,b\n" + rows, encoding="utf-8")
    code, stdout, err = run_cli(["agree", str(table), "--stat", "cohen", *AGREE_JSON], capsys)
    assert code == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(0.4)


def test_a_count_of_numeric_rating_patterns_is_refused_not_read_as_a_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 3x3 table of 1-3 ratings as pattern rows and `n`: the counts (0-12) share values with
    the ratings, so `n` was a third rater of 9 'units': Fleiss 0.015, exit 0."""
    table = tmp_path / "t.csv"
    counts = [12, 3, 1, 2, 9, 2, 0, 3, 8]
    rows = "".join(f"{a},{b},{c}\n" for (a, b), c in zip(_grid(), counts, strict=True))
    table.write_text("a,b,n\n" + rows, encoding="utf-8")
    code, _, err = run_cli(["agree", str(table), *AGREE_JSON], capsys)
    assert code == 2
    assert "column 'n' is named like a count and no two rows rate alike" in err


def _grid() -> list[tuple[int, int]]:
    return [(a, b) for a in (1, 2, 3) for b in (1, 2, 3)]


def test_a_count_of_the_raters_own_votes_is_still_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`r1,r2,r3,count` where count is how many raters said 1: a value computed from the
    ratings (left out, as before), not a frequency: no refusal."""
    table = tmp_path / "t.csv"
    table.write_text("r1,r2,r3,count\n1,0,1,2\n0,0,0,0\n1,1,1,3\n0,1,0,1\n", encoding="utf-8")
    value, line = _fleiss(capsys, str(table))
    # P_i: 1/3, 1, 1, 1/3: P-bar 2/3; ones 6 of 12: p_e 1/2; (2/3 - 1/2)/(1/2) = 1/3
    assert value == pytest.approx(1 / 3)
    assert "left out: count (named like a value computed from the ratings" in line


def test_a_small_table_of_one_row_per_rater_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """3 readers (rows) x 4 questions (columns): fewer than the six columns the transposed
    rule needed, so Q1..Q4 were four raters of 3 units: Fleiss -0.111, exit 0. The readers'
    own, transposed: units Q1 (y,y,y), Q2 (y,n,y), Q3 (n,n,n), Q4 (n,n,y): P_i 1, 1/3, 1,
    1/3, P-bar 2/3; p_y 6/12: p_e 1/2; (2/3 - 1/2)/(1/2) = 1/3."""
    table, out = tmp_path / "t.csv", tmp_path / "a.json"
    table.write_text("reader,Q1,Q2,Q3,Q4\nSmith,y,y,n,n\nJones,y,n,n,n\nLee,y,y,n,y\n")
    code, _, err = run_cli(["agree", str(table), "-o", str(out), "--bootstrap", "0"], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:1: 4 rater columns (Q1, Q2, Q3, ...) for 3 rows: is the "
        "table one row per rater and one column per unit? agreement needs one row per unit: "
        "transpose it (to read it as given, name the raters with --raters)"
    )
    assert not out.exists()
    table.write_text("unit,Smith,Jones,Lee\nQ1,y,y,y\nQ2,y,n,y\nQ3,n,n,n\nQ4,n,n,y\n")
    value, _ = _fleiss(capsys, str(table))
    assert value == pytest.approx(1 / 3)


def test_a_small_table_with_an_id_column_and_more_raters_than_units_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The small-table rule needs a unit column found by its values (or none): `item` named
    like an id over 3 units of 4 raters is read as it is (no false refusal)."""
    table = tmp_path / "t.csv"
    table.write_text("item,a,b,c,d\n1,y,y,y,y\n2,y,n,y,n\n3,n,n,n,n\n", encoding="utf-8")
    value, _ = _fleiss(capsys, str(table))
    # P_i 1, 1/3 (2-2 of 4: (2 + 2)/12), 1: P-bar 7/9; p_y 6/12: p_e 1/2; (7/9 - 1/2)/(1/2)
    assert value == pytest.approx(5 / 9)


def test_every_reviewer_named_like_a_consensus_is_named_with_the_way_to_read_it_otherwise(
    tmp_path: Path,
) -> None:
    """review/alice, bob, gold.smith@h.org and final_reviewer: both consensus-named reviewers
    were left out of reviewer vs reviewer agreement, the note naming only the first
    (final_reviewer) and no way to read either as a reviewer."""
    from tests.test_outside_red17b import _entity_fleiss

    e, p, i = "exact_entity", "partial_entity", "irrelevant"
    codes = {
        "offline": [e, e, p, i, e, p],
        "alice": [e, p, p, i, e, e],
        "bob": [e, e, i, i, p, p],
        "gold.smith@h.org": [e, e, p, i, e, p],
        "final_reviewer": [e, e, p, i, e, e],
    }
    got, inputs = _entity_fleiss(tmp_path, codes)
    # alice vs bob alone: -2/94 (tests/test_outside_red17b.py, by hand)
    assert got["alice vs bob"] == pytest.approx(-2 / 94)
    assert inputs.notes["agreement"] == [
        "Reviewer final_reviewer, gold.smith@h.org are named like a consensus (it settles the "
        "others' disagreements): compared with the judge, and left out of reviewer vs reviewer "
        "agreement, where it would raise the reviewers' own (a reviewer? name it otherwise: "
        "labelstudio import --user ID=NAME, or the coder field of its review file)"
    ]
    # said on stderr and in the run box too (`report` prints notes["assumed"])
    assert inputs.notes["assumed"] == [
        "Assumed: reviewer final_reviewer, gold.smith@h.org read as an adjudication (named "
        "like a consensus): its review counted where a unit has several, and left out of "
        "reviewer vs reviewer agreement; a reviewer? name it otherwise (labelstudio import "
        "--user ID=NAME, or the coder field of its review file)"
    ]


def test_two_raters_with_the_same_rating_on_every_unit_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dr_a` pasted twice (`dr_a`, `dr_a_2`) beside `dr_b`: two raters in perfect agreement
    raise Fleiss, with no word on the first line."""
    a = [1, 2, 2, 1, 3, 1, 2, 3, 3, 1]
    b = [1, 2, 1, 1, 3, 2, 2, 3, 1, 1]
    rows = "".join(f"{n},{x},{y},{x}\n" for n, (x, y) in enumerate(zip(a, b, strict=True)))
    table = tmp_path / "r.csv"
    table.write_text("id,dr_a,dr_b,dr_a_2\n" + rows, encoding="utf-8")
    value, line = _fleiss(capsys, str(table))
    # units: 7 with all three alike (P_i 1), 3 split 2-1 (P_i 1/3): P-bar (7 + 1)/10 = 0.8;
    # counts of 1, 2, 3 over 30 ratings (dr_a's twice): 2 x 4 + 5, 2 x 3 + 3, 2 x 3 + 2 =
    # 13, 9, 8: p_e (169 + 81 + 64)/900 = 314/900; (720 - 314)/(900 - 314) = 406/586
    assert value == pytest.approx(406 / 586)
    assert line.endswith(
        "dr_a and dr_a_2 gave the same rating to each of the 10 units both rated: one rater's "
        "ratings twice? (a copy reads as perfect agreement and raises the others')"
    )


def _panel(root: Path, splits: list[str]) -> None:
    """judge/ds/retrieval/panel.json of two members splitting on ``splits``."""
    from failcodes.codebook import bundled
    from failcodes.judge.panelrun import PanelReport
    from failcodes.units import UnitKind

    report = PanelReport(
        kind=UnitKind.RETRIEVAL,
        codebook=bundled().ref().name,
        members=["a", "b"],
        run_dirs={"a": "a", "b": "b"},
        cost_usd=0.0,
        units=[],
        split_units=splits,
        agreement=[],
        quotes=[],
    )
    run = root / "judge" / "ds" / "retrieval"
    run.mkdir(parents=True, exist_ok=True)
    (run / "panel.json").write_text(report.model_dump_json(), encoding="utf-8")


def test_a_plan_of_the_units_a_panel_split_on_gives_no_corrected_share(tmp_path: Path) -> None:
    """40 units, the judge panel split on 14 (u00..u12, u20); a plan file written by hand
    lists u00..u19 as its uniform draw (p = 1/2), 13 of them splits, every one reviewed
    (alice: irrelevant on the splits, the judge's code elsewhere). The corrected shares took
    them as a random sample: irrelevant 'corrected' 65.0 [40.8, 84.6] (13 of 20), though only
    14 of the 40 units (35%) are splits at all, exit 0. A uniform draw of 20 of 40 holds 7 of
    the 14 splits on average; 13 or more: sum_{k>=13} C(14,k) C(26,20-k) / C(40,20) = 6.8e-5."""
    from math import comb

    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind
    from tests.test_outside_red17b import _entity_review
    from tests.test_review_plan import half_reviewed_study

    judge = {f"u{n:02d}": "exact_entity" for n in range(40)}
    drawn = [f"u{n:02d}" for n in range(20)]
    splits = [f"u{n:02d}" for n in (*range(13), 20)]
    alice = [_entity_review(u, "irrelevant" if u in splits else judge[u], "alice") for u in drawn]
    half_reviewed_study(tmp_path, judge, drawn, alice)
    tail = sum(comb(14, k) * comb(26, 20 - k) for k in range(13, 15)) / comb(40, 20)
    assert tail == pytest.approx(6.8e-5, abs=1e-6)
    before = load_run_dir(tmp_path)  # no panel: the plan is taken as drawn
    assert UnitKind.RETRIEVAL in before.corrected
    _panel(tmp_path, splits)
    inputs = load_run_dir(tmp_path)
    assert UnitKind.RETRIEVAL not in inputs.corrected  # was a corrected table over u00..u19
    [note] = [n for notes in inputs.notes.values() for n in notes if "no random draw" in n]
    assert note == (
        "review plan 'p' is no random draw: 13 of its 20 estimation units are units the judge "
        f"panel split on, where a draw holds 7.0 (p = {tail:.1g}): drawn from the "
        "disagreements? its shares would be theirs, not the data set's, so its tables are "
        "shown uncorrected (give the splits as a targeted sample: --panel-splits); redraw it "
        f"with: failcodes review plan {tmp_path} -p retrieval -n 20 --seed 0 --dataset ds "
        "--name p"
    )


@pytest.mark.parametrize(
    ("one", "other"), [(("TRUE", "FALSE"), ("1", "0")), (("yes", "no"), ("y", "n"))]
)
def test_two_raters_with_no_rating_in_common_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], one: tuple[str, str], other: tuple[str, str]
) -> None:
    """`a` written TRUE/FALSE, `b` 1/0 (two exports): two raters who never agreed, Cohen
    0.000 [0.000, 0.000] at exit 0, where they agree on 5 of 6 units: a 1, 0, 1, 1, 0, 1 and
    b 1, 0, 1, 0, 0, 1: p_o 5/6, p_e 4/6 x 3/6 + 2/6 x 3/6 = 1/2, Cohen (5/6 - 1/2)/(1/2) =
    2/3."""
    a, b = [1, 0, 1, 1, 0, 1], [1, 0, 1, 0, 0, 1]
    rows = "".join(
        f"{n},{one[1 - x]},{other[1 - y]}\n" for n, (x, y) in enumerate(zip(a, b, strict=True))
    )
    table, out = tmp_path / "t.csv", tmp_path / "a.json"
    table.write_text("id,a,b\n" + rows, encoding="utf-8")
    code, _, err = run_cli(["agree", str(table), "-o", str(out), "--bootstrap", "0"], capsys)
    assert code == 2
    low, high = sorted(one), sorted(other)
    assert err.strip() == (
        f"failcodes: error: {table}:1, field 'b': rater columns 'a' and 'b' share no rating "
        f"(a: '{low[0]}', '{low[1]}'; b: '{high[0]}', '{high[1]}'): one scale written two "
        "ways? read so they never agree (kappa at or below 0); write the ratings one way (to "
        "read them as given, name the raters with --raters)"
    )
    assert not out.exists()
    rows = "".join(f"{n},{x},{y}\n" for n, (x, y) in enumerate(zip(a, b, strict=True)))
    table.write_text("id,a,b\n" + rows, encoding="utf-8")
    code, stdout, err = run_cli(["agree", str(table), "--stat", "cohen", *AGREE_JSON], capsys)
    assert code == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(2 / 3)


def test_spreadsheet_booleans_beside_ones_and_zeros_are_one_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An xlsx column of booleans beside one of 1/0: read as 1 and 0 (no refusal): Cohen 2/3
    as by hand above."""
    import pandas as pd

    path = tmp_path / "t.xlsx"
    frame = pd.DataFrame(
        {"id": range(6), "a": [True, False, True, True, False, True], "b": [1, 0, 1, 0, 0, 1]}
    )
    frame.to_excel(path, index=False)
    code, stdout, err = run_cli(["agree", str(path), "--stat", "cohen", *AGREE_JSON], capsys)
    assert code == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(2 / 3)


def test_a_count_named_n_beside_the_ratings_is_no_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`id,r1,r2,r3,n` with n the ratings each row holds (3, or 2 where r3 is blank): its
    values are ratings too, so it was a fourth rater, Fleiss 0.289 at exit 0."""
    table = tmp_path / "r.csv"
    rows = "1,1,2,1,3\n2,3,3,3,3\n3,2,2,,2\n4,1,1,2,3\n5,3,2,3,3\n6,2,2,2,3\n"
    table.write_text("id,r1,r2,r3,n\n" + rows, encoding="utf-8")
    value, line = _fleiss(capsys, str(table))
    # r1..r3 (Fleiss with missing ratings, Gwet 2014: P_i over the pairs a unit has): P_i
    # 1/3, 1, 1 (two raters), 1/3, 1/3, 1: P-bar 4/6; pi_k = mean of r_ik / r_i: 1: (2/3 +
    # 2/3)/6 = 2/9, 2: (1/3 + 1 + 1/3 + 1/3 + 1)/6 = 1/2, 3: (1 + 2/3)/6 = 5/18; p_e =
    # (16 + 81 + 25)/324 = 122/324; (4/6 - 122/324)/(1 - 122/324) = (216 - 122)/202
    assert value == pytest.approx(94 / 202)
    assert "left out: n (named like a value computed from the ratings ('n'" in line


def test_a_small_table_of_three_raters_and_no_ids_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No unit column at all: more raters than rows is not taken for a transposed table
    (`a,b,c` over 2 units, Fleiss: P_i 1, 1/3; p_1 5/6: p_e 26/36; (2/3 - 26/36)/(10/36))."""
    table = tmp_path / "r.csv"
    table.write_text("a,b,c\n1,1,1\n0,1,1\n", encoding="utf-8")
    value, _ = _fleiss(capsys, str(table))
    assert value == pytest.approx(-0.2)


def test_scores_on_a_fine_scale_that_never_tie_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Numbers alone may share no value (0-100 scores): read, no refusal. Interval alpha of
    [[10, 40, 70], [12, 45, 66]] (krippendorff.alpha(..., "interval") = 0.988579)."""
    table = tmp_path / "r.csv"
    table.write_text("id,a,b\n1,10,12\n2,40,45\n3,70,66\n", encoding="utf-8")
    args = ["agree", str(table), "--level", "interval", "--stat", "krippendorff", *AGREE_JSON]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(0.988579, abs=1e-6)
