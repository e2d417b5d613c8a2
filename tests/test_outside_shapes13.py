"""Ratings-table shapes of issue 30's outside check, session 10 (i36agree): each failed before.

Every value is worked by hand (the sum is beside it) or computed with statsmodels directly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from failcodes.errors import InputError
from failcodes.stats.tables import ratings_from_frame
from tests.cli_helpers import agree_percent_run, ratings_file, run_cli

AGREE = ["--bootstrap", "0", "--format", "json"]


def test_the_python_api_names_both_lines_of_a_unit_on_two_rows() -> None:
    # ratings_from_frame (a frame of its own) checks one row per unit as the CLI does, in one
    # pass with the row without a unit id: before, its own check said 'duplicate unit ids:
    # ['2']' naming no line
    frame = pd.DataFrame({"item": ["1", "2", "2"], "r1": ["a", "b", "a"], "r2": ["a", "b", "b"]})
    with pytest.raises(InputError) as err:
        ratings_from_frame(frame, source="r.csv")
    assert str(err.value) == (
        "r.csv:4, field 'item': unit '2' is on two rows (first at line 3): one row per unit "
        "and rater? pivot it to one column per rater: frame.pivot(index=UNIT, columns=RATER, "
        "values=RATING) (no rater column? add one naming the rater of each row)"
    )


@pytest.mark.parametrize(
    ("written", "folded"),
    [
        ("007", "7"),  # whole numbers: 7148eca's 007 / 7
        ("s007", "s7"),  # 2273f7e's s007 / s7
        ("claim-01", "claim-1"),
        ("u01", "u1"),  # 9487b16
        ("0", "0"),  # a lone zero is the number 0
        ("v01.1", "v1.1"),  # the whole part of a version or a decimal: 01 is 1
        ("v1.01", "v1.01"),  # after '<digit>.': a fraction (1.01 is not 1.1), kept
        ("1.007", "1.007"),
        ("a.01", "a.1"),  # after a letter and a dot: a whole number again
        ("2024-01-05", "2024-1-5"),
    ],
)
def test_only_whole_numbers_lose_their_leading_zeros(written: str, folded: str) -> None:
    from failcodes.idzeros import without_leading_zeros

    assert without_leading_zeros(written) == folded


def test_dotted_ids_differing_in_a_fraction_zero_are_two_sentences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Sentences v1.01 (a refuted claim) and v1.1 (a supported one); only v1.01 is labelled, an
    # error. Before: _fold took the 0 of '01' off, so the labels were refused as writing
    # 'v1.01' 'also as v1.1' (exit 2) though they are two sentences. By hand: v1.01 is the one
    # labelled sentence, flagged: TP 1, n 1 (v1.1 has no label and is not scored).
    traces = tmp_path / "t.csv"
    traces.write_text(
        "system,question_id,sentence_id,claim_id,claim,verdict\n"
        "A,q1,v1.01,c1,x,refuted\nA,q1,v1.1,c2,y,supported\n"
    )
    labels = tmp_path / "l.csv"
    labels.write_text("sentence_id,has_error\nv1.01,true\n")
    args = ["metrics", "--traces", str(traces), "--labels", str(labels), "-m", "refuted"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["n"], row["tp"], row["fp"], row["fn"], row["tn"]) == (1, 1, 0, 0, 0)
    # and s007 / s7 (whole numbers) are still refused: tests/test_outside_shapes12.py


@pytest.mark.parametrize(
    ("first", "fourth", "other"),
    [
        ("relevance and sufficiency", "sufficiency and relevance", "relevance and sufficiency"),
        ("relevance AND sufficiency", "sufficiency AND relevance", "relevance AND sufficiency"),
        (
            '"relevance, and sufficiency"',
            '"sufficiency, and relevance"',
            "relevance and sufficiency",
        ),
        ("relevance\uff0csufficiency", "sufficiency\uff0crelevance", "relevance\uff0csufficiency"),
        ("relevance\u3001sufficiency", "sufficiency\u3001relevance", "relevance\u3001sufficiency"),
    ],
)
def test_cells_joining_codes_with_and_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], first: str, fourth: str, other: str
) -> None:
    # Unit 1: {relevance, sufficiency} vs {relevance}; units 2, 3 agree; unit 4: the same set
    # written in two orders. As sets 3 of 4 units agree: percent 3/4 = 0.750 by hand (and
    # with the cells rewritten with ';' and --sets ';', below). Each cell was one category,
    # so unit 4 disagreed: percent 2/4 = 0.500, exit 0 (32b305f refused '&' and '+' only).
    path = tmp_path / "r.csv"
    rows = f"1,{first},relevance\n2,sufficiency,sufficiency\n3,relevance,relevance\n"
    path.write_text(f"item,r1,r2\n{rows}4,{fourth},{other}\n")
    args = ["agree", str(path), "--stat", "percent", *AGREE]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"failcodes: error: {path}:2, field 'r1': "), err
    assert "looks like a set of codes" in err and "--sets none" in err
    code, out, _ = run_cli([*args, "--sets", "none"], capsys)  # the way through, as before
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(2 / 4)
    fixed = tmp_path / "fixed.csv"  # the other way through: ';' and --sets ';'
    fixed.write_text(
        "item,r1,r2\n1,relevance;sufficiency,relevance\n2,sufficiency,sufficiency\n"
        "3,relevance,relevance\n4,sufficiency;relevance,relevance;sufficiency\n"
    )
    code, out, _ = run_cli(
        ["agree", str(fixed), "--stat", "percent", *AGREE, "--sets", ";"], capsys
    )
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(3 / 4)


@pytest.mark.parametrize("alone", ["scope", "search"])
def test_a_category_with_and_inside_whose_parts_are_not_ratings_stays_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], alone: str
) -> None:
    # 'search and retrieval' is one code: 'retrieval' is never a rating of its own (with
    # alone='search', one part is). Units: (sr, sr), (scope, scope), (sr, scope),
    # (scope|search, same): 3 of 4 agree, percent 0.750 by hand.
    path = ratings_file(
        tmp_path,
        "item,r1,r2\n1,search and retrieval,search and retrieval\n2,scope,scope\n"
        f"3,search and retrieval,scope\n4,{alone},{alone}\n",
    )
    code, out, err = agree_percent_run(path, capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(3 / 4)


# Four units, two raters: 1-5 scores (3,3), (4,4), (2,5), (1,1) or codes (yes,yes), (no,no),
# (yes,no), (no,no). Either way 3 of 4 units agree: percent 3/4 = 0.750 by hand.
SCORES = "1,3,3\n2,4,4\n3,2,5\n4,1,1\n"
CODES = "1,yes,yes\n2,no,no\n3,yes,no\n4,no,no\n"


@pytest.mark.parametrize(
    ("table", "line", "field", "before"),
    [
        # a row of descriptions under the header: read as unit 'unit id' whose raters
        # disagreed, percent 3/5 = 0.600 (548dc9a said it on the first line, exit 0)
        ("item,r1,r2\nunit id,rater 1 (MD),rater 2 (RN)\n" + CODES, 2, "item", 3 / 5),
        # '(1-5 scale)' under each rater: one more agreeing unit, 4/5 = 0.800, and the scores
        # read as text categories
        ("item,r1,r2\n(id),(1-5 scale),(1-5 scale)\n" + SCORES, 2, "item", 4 / 5),
        # without a unit column (row numbers): no word at all, 3/5 = 0.600
        (
            "r1,r2\nrater 1 (MD),rater 2 (RN)\n3,3\n4,4\n2,5\n1,1\n",
            2,
            "r1",
            3 / 5,
        ),
        # an Excel export's totals under the units (counts of 'yes'): (2, 1) disagree, 3/5
        ("item,r1,r2\n" + CODES + "Total,2,1\n", 6, "item", 3 / 5),
        # the means of the scores: (2.5, 3.25) disagree, 3/5 = 0.600
        ("item,r1,r2\n" + SCORES + "Mean,2.5,3.25\n", 6, "item", 3 / 5),
        # a totals row whose counts are scores too (2, 2): one more agreeing unit, 4/5
        ("item,r1,r2\n" + SCORES + "Total:,2,2\n", 6, "item", 4 / 5),
    ],
)
def test_a_row_of_descriptions_or_totals_is_refused_not_counted(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    table: str,
    line: int,
    field: str,
    before: float,
) -> None:
    path = ratings_file(tmp_path, table)
    args = ["agree", str(path), "--stat", "percent", *AGREE]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, ""), out
    assert err.startswith(f"failcodes: error: {path}:{line}, field '{field}': a row of "), err
    assert "delete the row" in err
    rows = table.splitlines()
    path.write_text("\n".join(r for i, r in enumerate(rows, 1) if i != line) + "\n")
    code, out, _ = run_cli(args, capsys)  # the row deleted: the 4 units' 0.750 by hand
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(3 / 4)
    if field == "item":  # --unit-column: every row a unit, as before, and said
        path.write_text(table)
        code, out, _ = run_cli([*args, "--unit-column", "item"], capsys)
        (row,) = json.loads(out)
        assert code == 0 and row["value"] == pytest.approx(before)
        assert f"line {line} is read as a unit (--unit-column given)" in row["notes"][0]


def test_a_long_tables_other_columns_are_said_on_the_first_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A and B's ratings on rows of (unit, rater, rating), and a third rater's beside them as
    # a column of its own, 'rater3' (repeated on each of the unit's rows), and a 'minutes'
    # column. Before: --long read A and B and dropped rater3 and minutes without a word,
    # Fleiss 0.467 standing as the table's. The value is A and B's (statsmodels, below); the
    # first line now says what was not read, and that rater3 holds ratings.
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    a, b, c = ["yes", "no", "yes", "no"], ["yes", "no", "no", "no"], ["no", "no", "yes", "no"]
    rows = [
        f"{u},{name},{r[u - 1]},{c[u - 1]},{u + 2}"
        for u in range(1, 5)
        for name, r in (("A", a), ("B", b))
    ]
    path = ratings_file(tmp_path, "unit,rater,rating,rater3,minutes\n" + "\n".join(rows) + "\n")
    two = fleiss_kappa(aggregate_raters(list(zip(a, b, strict=True)))[0])
    three = fleiss_kappa(aggregate_raters(list(zip(a, b, c, strict=True)))[0])
    # by hand: two, Pbar 3/4, Pe (3/8)^2 + (5/8)^2 = 34/64 -> 14/30; three, Pbar 2/3, Pe 5/9
    assert (two, three) == (pytest.approx(14 / 30), pytest.approx(0.25))
    args = ["agree", str(path), "--long", "rater,rating", "--stat", "fleiss", *AGREE]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["raters"] == ["A", "B"] and row["value"] == pytest.approx(two)
    first = row["notes"][0]
    assert "not read (the ratings are column 'rating'): rater3 (its values are ratings" in first
    assert first.endswith("'rater' and 'rating'), minutes"), first


@pytest.mark.parametrize(
    ("table", "raters", "value"),
    [
        # a notes column one of whose notes is 'yes' shared a value with the raters and was a
        # third rater: percent 0.417, exit 0. r1/r2 agree on units 1, 2, 4: 3/4 = 0.750
        (
            'item,r1,r2,notes\n1,yes,yes,clear\n2,no,no,\n3,yes,no,"r2 unsure, yes"\n4,no,no,yes\n',
            ["r1", "r2"],
            3 / 4,
        ),
        # each rater's code and confidence (both 1-3): four raters, percent 0.367. The codes
        # (1,1), (2,2), (1,2), (3,3), (2,1) agree on 3 of 5 units: 0.600
        (
            "item,R1 code,R1 confidence,R2 code,R2 confidence\n1,1,3,1,2\n2,2,2,2,3\n"
            "3,1,3,2,1\n4,3,1,3,3\n5,2,2,1,2\n",
            ["R1 code", "R2 code"],
            3 / 5,
        ),
        # every column so named: they are the ratings (3,3), (2,2), (1,3), (2,2): 3/4
        ("item,r1_confidence,r2_confidence\n1,3,3\n2,2,2\n3,1,3\n4,2,2\n", None, 3 / 4),
    ],
)
def test_a_note_or_confidence_column_is_no_rater(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    table: str,
    raters: list[str] | None,
    value: float,
) -> None:
    path = ratings_file(tmp_path, table)
    code, out, err = agree_percent_run(path, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(value)
    if raters is not None:
        assert row["raters"] == raters
        assert "named like a note, a confidence or a time" in row["notes"][0]
        assert all("not a rating" in why for why in row["left_out"].values())


def test_one_rater_beside_a_notes_column_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # r1 and its notes: which columns are raters cannot be told (before: notes was the
    # second rater: percent 0.333 over the 3 units with a note, exit 0)
    path = ratings_file(tmp_path, "item,r1,notes\n1,yes,ok\n2,no,\n3,yes,yes\n4,no,unsure\n")
    code, out, err = agree_percent_run(path, capsys)
    assert (code, out) == (2, "")
    assert "notes named like a note, a confidence or a time" in err and "--raters" in err


@pytest.mark.parametrize("mark", ["NA", ".", "-", "#N/A"])
def test_a_missing_mark_among_numeric_ratings_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mark: str
) -> None:
    # R's write.csv writes a missing rating NA (Stata '.', others '-' or '#N/A'). Unit 2 rated
    # by neither: among 1-5 scores the mark was a category and unit 2 one more agreeing unit,
    # percent 4/5 = 0.800, exit 0. Left empty, the 4 rated units (3,3), (2,5), (1,1), (3,3)
    # agree on 3: 0.750 by hand.
    path = ratings_file(tmp_path, f"item,r1,r2\n1,3,3\n2,{mark},{mark}\n3,2,5\n4,1,1\n5,3,3\n")
    args = ["agree", str(path), "--stat", "percent", *AGREE]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"failcodes: error: {path}:3, field 'r1': {mark!r} among numeric"), err
    assert "--categories" in err
    path.write_text("item,r1,r2\n1,3,3\n2,,\n3,2,5\n4,1,1\n5,3,3\n")
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(3 / 4)


def test_a_missing_mark_given_as_a_category_or_among_text_codes_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given in --categories, NA is a category: 4 of 5 units agree (0.800); among text codes
    # N/A may be an answer (not applicable), read as one when --categories lists it (without,
    # refused since session 11: test_outside_tables11): (yes,yes), (N/A,N/A), (no,yes),
    # (no,no) agree on 3 of 4
    path = ratings_file(tmp_path, "item,r1,r2\n1,3,3\n2,NA,NA\n3,2,5\n4,1,1\n5,3,3\n")
    args = ["agree", str(path), "--stat", "percent", *AGREE]
    code, out, err = run_cli([*args, "--categories", "1,2,3,4,5,NA"], capsys)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(4 / 5), err
    path.write_text("item,r1,r2\n1,yes,yes\n2,N/A,N/A\n3,no,yes\n4,no,no\n")
    code, out, err = run_cli([*args, "--categories", "no,yes,N/A"], capsys)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(3 / 4), err


def test_two_fields_of_each_rater_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each rater's error (0-2) and severity (0-2): four raters, percent 0.633, exit 0. By
    # hand, errors (1,1), (0,0), (1,0), (2,2), (0,0) agree on 4 of 5 units (0.800) and
    # severities (2,2), (0,1), (1,0), (2,2), (0,0) on 3 (0.600): --raters says which.
    path = ratings_file(
        tmp_path,
        "item,R1 error,R1 severity,R2 error,R2 severity\n1,1,2,1,2\n2,0,0,0,1\n3,1,1,0,0\n"
        "4,2,2,2,2\n5,0,0,0,0\n",
    )
    args = ["agree", str(path), "--stat", "percent", *AGREE]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"failcodes: error: {path}:1, field 'R1 severity': rater columns"), err
    assert "two fields ('error', 'severity') of the same raters" in err
    for raters, value in (("R1 error,R2 error", 4 / 5), ("R1 severity,R2 severity", 3 / 5)):
        code, out, _ = run_cli([*args, "--raters", raters], capsys)
        assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(value)


def test_roles_numbered_alike_are_four_raters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Physician 1, Physician 2, Nurse 1, Nurse 2 are four people, not two fields: units
    # (y,y,y,y), (n,n,n,n), (y,n,y,y), (n,n,n,n): percent is the mean over units of the
    # agreeing pairs, (6 + 6 + 3 + 6) / (4 * 6) = 21/24 = 0.875 by hand
    path = ratings_file(
        tmp_path,
        "item,Physician 1,Physician 2,Nurse 1,Nurse 2\n1,y,y,y,y\n2,n,n,n,n\n3,y,n,y,y\n"
        "4,n,n,n,n\n",
    )
    code, out, err = agree_percent_run(path, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert len(row["raters"]) == 4 and row["value"] == pytest.approx(21 / 24)


@pytest.mark.parametrize(
    ("table", "raters", "value"),
    [
        # each row's total of three raters' 0/1 codes was a fourth rater: percent 0.583,
        # exit 0. The three: units 1, 2, 5, 6 unanimous (1 each), units 3 and 4 one pair
        # of 3 agreeing (1/3 each): (4 + 2/3) / 6 = 0.778 by hand
        (
            "item,r1,r2,r3,total\n1,1,1,1,3\n2,0,0,0,0\n3,1,0,1,2\n4,0,0,1,1\n5,1,1,1,3\n"
            "6,0,0,0,0\n",
            ["r1", "r2", "r3"],
            (4 + 2 / 3) / 6,
        ),
        # an agreement flag (1: the two agreed) was a third rater: 0.556. r1/r2 agree on
        # units 1, 2, 4, 5: 4/6 = 0.667
        (
            "item,r1,r2,agree\n1,1,1,1\n2,0,0,1\n3,1,0,0\n4,0,0,1\n5,1,1,1\n6,0,1,0\n",
            ["r1", "r2"],
            4 / 6,
        ),
        # the number of raters per unit (2) among 1-3 scores was a third rater: percent
        # 0.667. r1/r2 agree on units 1, 2, 4: 3/4 = 0.750 by hand
        ("item,r1,r2,n_raters\n1,2,2,2\n2,3,3,2\n3,1,2,2\n4,2,2,2\n", ["r1", "r2"], 3 / 4),
    ],
)
def test_a_total_or_agreement_column_is_no_rater(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    table: str,
    raters: list[str],
    value: float,
) -> None:
    path = ratings_file(tmp_path, table)
    code, out, err = agree_percent_run(path, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["raters"] == raters and row["value"] == pytest.approx(value)
    assert "named like a value computed from the ratings" in row["notes"][0]


def test_a_row_naming_the_columns_above_text_ids_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'ID,Dr A,Dr B' under the header above ids q1..q4: the ids are text, so 548dc9a's rule
    # (a text id among numbers) missed it: unit 'ID' whose raters disagreed, percent 3/5 =
    # 0.600, no word. q1..q4: (yes,yes), (no,no), (yes,no), (no,no): 3/4 = 0.750 by hand.
    path = tmp_path / "r.csv"
    body = "q1,yes,yes\nq2,no,no\nq3,yes,no\nq4,no,no\n"
    path.write_text("item,r1,r2\nID,Dr A,Dr B\n" + body)
    args = ["agree", str(path), "--stat", "percent", *AGREE]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"failcodes: error: {path}:2, field 'item': a row of units"), err
    code, out, _ = run_cli([*args, "--unit-column", "item"], capsys)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(3 / 5)
    path.write_text("item,r1,r2\n" + body)
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(3 / 4)


def test_a_long_tables_row_naming_the_columns_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 'unit id,rater name,rating (yes/no)' under a long table's header: 'rater name' was a
    # third rater, of one unit 'unit id' (said only as a unit rated once), exit 0. A and B on
    # q1..q4 as above: 3/4 = 0.750 by hand.
    path = tmp_path / "r.csv"
    body = "".join(
        f"q{u},{r},{v}\n"
        for u, pair in enumerate([("yes", "yes"), ("no", "no"), ("yes", "no"), ("no", "no")], 1)
        for r, v in zip("AB", pair, strict=True)
    )
    path.write_text("unit,rater,rating\nunit id,rater name,rating (yes/no)\n" + body)
    args = ["agree", str(path), "--stat", "percent", *AGREE]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"failcodes: error: {path}:2, field 'unit': a row of units"), err
    path.write_text("unit,rater,rating\n" + body)
    code, out, _ = run_cli(args, capsys)
    (row,) = json.loads(out)
    assert code == 0 and row["raters"] == ["A", "B"] and row["value"] == pytest.approx(3 / 4)


@pytest.mark.parametrize(
    ("header", "first", "second", "line"),
    [
        # two wide exports appended, each with its header: unit 'item' rated 'r1' and 'r2'
        # (disagreeing), percent 3/5 = 0.600, exit 0; the 4 units agree on 3: 0.750 by hand
        ("item,r1,r2", "1,yes,yes\n2,no,no\n", "3,yes,no\n4,no,no\n", 4),
        # two long exports: 'rater' became a rater of unit 'unit', said only as rated once
        (
            "unit,rater,rating",
            "1,A,yes\n1,B,yes\n2,A,no\n2,B,no\n",
            "3,A,yes\n3,B,no\n4,A,no\n4,B,no\n",
            6,
        ),
    ],
)
def test_the_header_repeated_between_rows_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    header: str,
    first: str,
    second: str,
    line: int,
) -> None:
    path = ratings_file(tmp_path, f"{header}\n{first}{header}\n{second}")
    args = ["agree", str(path), "--stat", "percent", *AGREE]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"failcodes: error: {path}:{line}, field "), err
    assert "the header again" in err and "delete the row" in err
    path.write_text(f"{header}\n{first}{second}")
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(3 / 4)


@pytest.mark.parametrize("labelled", ["1 (low)", "1 - low", "1: low", "1 low"])
def test_a_number_with_its_label_beside_the_number_alone_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], labelled: str
) -> None:
    # r2 picked '1 (low)' from a drop-down where r1 typed 1: two categories, percent 2/4 =
    # 0.500 (units 1 and 3 'disagreeing'), exit 0, where the raters agree on all 4 units
    # (1.000 by hand, with the labels written one way)
    path = ratings_file(tmp_path, f"item,r1,r2\n1,1,{labelled}\n2,2,2\n3,3,3 (high)\n4,1,1\n")
    args = ["agree", str(path), "--stat", "percent", *AGREE]
    code, out, err = run_cli(args, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"failcodes: error: {path}:2, field 'r2': rating {labelled!r} and '1'")
    path.write_text("item,r1,r2\n1,1,1\n2,2,2\n3,3,3\n4,1,1\n")
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(1.0)


def test_a_range_of_numbers_is_no_label(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # '2-3' beside '2' is not a number with a label: read as before, (2-3, 2) disagreeing,
    # units 2-4 agreeing: 3/4
    path = ratings_file(tmp_path, "item,r1,r2\n1,2-3,2\n2,2,2\n3,3,3\n4,1,1\n")
    code, out, err = agree_percent_run(path, capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(3 / 4)


#: Two raters' one-hot codes: a column per (code, rater). By hand, per code (Cohen's kappa):
#: overreach A 1,1,0,0,1,0 / B 1,0,0,0,1,1: agree on u1 u3 u4 u5, p_o = 4/6; A and B give 1
#: to 3 of 6 each: p_e = 1/2 * 1/2 + 1/2 * 1/2 = 1/2; kappa (2/3 - 1/2) / (1/2) = 1/3.
#: conflict A 0,1,0,1,0,0 / B 0,1,1,1,0,0: agree on all but u3, p_o = 5/6; A 1 on 2/6, B on
#: 3/6: p_e = 1/3 * 1/2 + 2/3 * 1/2 = 1/2; kappa (5/6 - 1/2) / (1/2) = 2/3.
#: Read as four raters (before, exit 0): the 1s per unit of 4 are 2, 3, 1, 2, 2, 1, pairs
#: agreeing (2 + 2, 6, 6, 2 + 2, 2 + 2, 6) / 12 = 1/3, 1/2, 1/2, 1/3, 1/3, 1/2: p_o = 5/12;
#: 11 ones of 24: p_e = (121 + 169) / 576; Fleiss (5/12 - 290/576) / (286/576) = -0.175.
ONE_HOT = {
    "overreach": (("1", "1"), ("1", "0"), ("0", "0"), ("0", "0"), ("1", "1"), ("0", "1")),
    "conflict": (("0", "0"), ("1", "1"), ("0", "1"), ("1", "1"), ("0", "0"), ("0", "0")),
}


@pytest.mark.parametrize(
    "name",
    [
        "{code}_{rater}",  # field first, lettered raters: read as four raters before
        "{code} {rater}",
        "{rater}_{code}",  # the rater first: refused since session 11 (b375f39)
        "{role} {rater}",  # roles lettered alike (Dr A, Dr B, Nurse A, Nurse B): four people
    ],
)
def test_one_hot_codes_of_each_rater_are_refused_in_either_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    role = {"overreach": "Dr", "conflict": "Nurse"}
    cols = {(c, r): name.format(code=c, rater=r, role=role[c]) for c in ONE_HOT for r in "AB"}
    rows = [
        f"u{i + 1}," + ",".join(ONE_HOT[c][i]["AB".index(r)] for c, r in cols) for i in range(6)
    ]
    path = ratings_file(tmp_path, "unit," + ",".join(cols.values()) + "\n" + "\n".join(rows) + "\n")
    args = ["agree", str(path), "--stat", "fleiss", *AGREE]
    code, out, err = run_cli(args, capsys)
    if "{role}" in name:  # four people, as before: Fleiss by hand above
        assert code == 0, err
        assert json.loads(out)[0]["value"] == pytest.approx((5 / 12 - 290 / 576) / (286 / 576))
        return
    assert (code, out) == (2, "")
    over, conflict = [cols[("overreach", r)] for r in "AB"], [cols[("conflict", r)] for r in "AB"]
    assert err == (
        f"failcodes: error: {path}:1, field {conflict[0]!r}: rater columns {', '.join(over)} "
        f"and {', '.join(conflict)} look like two fields ('overreach', 'conflict') of the same "
        f"raters: each column would be a rater; name the rating's columns with --raters (e.g. "
        f"--raters '{','.join(over)}')\n"
    )
    for raters, kappa in ((over, 1 / 3), (conflict, 2 / 3)):  # the way through, by hand above
        way = ["agree", str(path), "--stat", "cohen", *AGREE, "--raters", ",".join(raters)]
        code, out, _ = run_cli(way, capsys)
        assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(kappa)
