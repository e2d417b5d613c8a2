"""Session 33, helper h33agree: agree on shapes the other tests do not use (a long table of one
0/1 column per code, a survey's missing-value codes, ...).

Each test names what main gave and the value worked by hand (or by statsmodels) beside the
assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import failcodes
from failcodes.errors import InputError
from tests.cli_helpers import AGREE_JSON, ratings_file, run_cli

#: unit, rater and one 0/1 column per code (a multi-label export): a and b agree on overreach
#: on u1, u2, u4 (3 of 4) and on conflict on u2, u3, u4 (3 of 4).
LONG_ONE_HOT = (
    "unit,rater,overreach,conflict\nu1,a,1,0\nu1,b,1,1\nu2,a,0,1\nu2,b,0,1\n"
    "u3,a,1,1\nu3,b,0,1\nu4,a,0,0\nu4,b,0,0\n"
)


def test_a_long_table_of_one_column_per_code_is_not_told_by_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal named `--by rater` (the rater column taken for a round), which read the two
    codes' columns as two raters: percent 0.5, Cohen 0.0 of overreach against conflict, exit
    0. Now it names the rater column and each code's own agreement, `--long rater,overreach`:
    percent 3/4 by hand (u3 differs)."""
    path = ratings_file(tmp_path, LONG_ONE_HOT)
    code, _, err = run_cli(["agree", str(path)], capsys)
    assert code == 2
    assert "--by rater" not in err
    assert (
        "--long rater,RATING_COLUMN (the ratings: one of overreach, conflict; the other columns "
        "are not read; one 0/1 column per code? each code's agreement: --long rater,overreach, "
        "then the next)" in err
    )
    args = ["agree", str(path), "--long", "rater,overreach", "--stat", "percent", *AGREE_JSON]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(3 / 4)
    # from Python: the pivot with the rater column, not one table per rater
    frame = pd.read_csv(path)
    with pytest.raises(InputError) as caught:
        failcodes.ratings_from_frame(frame)
    said = str(caught.value)
    assert "frame[frame['rater'] == value]" not in said
    assert "frame.pivot(index=UNIT, columns='rater', values='overreach')" in said


def test_a_round_column_is_still_named_with_by(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wide table's rounds (`unit,round,r1,r2`) keep their `--by round` (only a column
    named like a rater is no round)."""
    text = "unit,round,r1,r2\nu1,1,A,A\nu1,2,A,B\nu2,1,B,B\nu2,2,B,B\n"
    code, _, err = run_cli(["agree", str(ratings_file(tmp_path, text))], capsys)
    assert code == 2 and "told apart by 'round' (1, 2)" in err and "--by round" in err


#: 1-3 ratings, r2's units 5 and 9 written with a survey's missing code
SURVEY = "id,r1,r2\n1,1,1\n2,2,2\n3,3,3\n4,1,2\n5,2,{m}\n6,3,3\n7,1,1\n8,2,3\n9,3,{m}\n10,1,1\n"


@pytest.mark.parametrize("missing", ["88", "98", "97", "77", "-8", "888"])
def test_a_survey_missing_code_among_ratings_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], missing: str
) -> None:
    """`88` (don't know) among 1-3 ratings was a category of its own: Cohen 0.452 (statsmodels
    cohens_kappa on the 10 units with 88 a category: 0.45205), said only as 'the numbers 1,
    2, 3, 88 read as unordered categories', exit 0. Now refused as 99 is; the cells left
    empty read the 0.619 of the 8 units rated (statsmodels: 0.61905)."""
    path = ratings_file(tmp_path, SURVEY.format(m=missing))
    code, _, err = run_cli(["agree", str(path), "--stat", "cohen"], capsys)
    assert code == 2
    assert f"'{missing}' among ratings 1-3: a missing-value code" in err
    path = ratings_file(tmp_path, SURVEY.format(m=""), "empty.csv")
    code, out, err = run_cli(["agree", str(path), "--stat", "cohen", *AGREE_JSON], capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(0.6190476190476191)


def test_a_seven_or_eight_on_a_scale_stays_a_rating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A single 7 or 8 is a rating of many scales (1-10): read, percent 4/5 by hand."""
    text = "id,a,b\n1,1,1\n2,5,5\n3,7,7\n4,10,9\n5,8,8\n"
    args = ["agree", str(ratings_file(tmp_path, text)), "--stat", "percent", *AGREE_JSON]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(4 / 5)


#: two data sets numbering their items alike: X's items 1-3 rated a/a, b/b, a/a by A/B (3 of 3
#: alike), Y's b/c, c/a, c/c (1 of 3)
TWO_DATA_SETS = (
    "dataset,item,annotator,label\nX,1,A,a\nX,1,B,a\nY,1,A,b\nY,1,B,c\nX,2,A,b\nX,2,B,b\n"
    "Y,2,A,c\nY,2,B,a\nX,3,A,a\nX,3,B,a\nY,3,A,c\nY,3,B,c\n"
)


def test_code_sets_joined_across_a_column_grouping_units_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--long annotator,label --sets ';' joined X's item 1 and Y's item 1 into one code set
    per annotator: exact-set percent 1/3 on 3 units (A {a, b} vs B {a, c}, {b, c} vs {a, b},
    {a, c} vs {a, c}) where the 6 units read 4/6, said only as codes joined and 'dataset' not
    read. Now the first line says the pairs whose rows differ in 'dataset' and names --by
    dataset, which reads X 3/3 and Y 1/3 by hand."""
    path = ratings_file(tmp_path, TWO_DATA_SETS)
    args = ["agree", str(path), "--long", "annotator,label", "--stat", "percent"]
    code, out, err = run_cli([*args, "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0, err
    [row] = [r for r in json.loads(out) if r.get("code") is None and r["weights"] == "none"]
    assert row["value"] == pytest.approx(1 / 3)
    assert any(
        "6 (unit, rater) pair(s) have rows of different 'dataset', joined into one code set: "
        "two units of one id? --by dataset gives each dataset its agreement" in n
        for n in row["notes"]
    )
    code, out, err = run_cli([*args, "--by", "dataset", *AGREE_JSON], capsys)
    assert code == 0, err
    assert [r["value"] for r in json.loads(out)] == pytest.approx([1.0, 1 / 3])


def test_a_missing_mark_among_text_codes_is_said_from_python() -> None:
    """From Python, '-' beside 'A'/'B' (a skipped unit) was a category of its own with no word
    in the notes: percent 0.4 (units 1, 2 of 5 alike) and Cohen 0.0625 (p_o 0.4; each rater
    A 2/5, B 2/5, '-' 1/5: p_e 9/25; (0.4 - 0.36) / 0.64), where agree's first line says it.
    Now the notes say it as agree does; the cells left empty (None) read percent 2/3 and
    Cohen 0.4 (p_o 2/3, p_e 4/9) by hand."""
    frame = pd.DataFrame({"r1": ["A", "B", "A", "-", "B"], "r2": ["A", "B", "B", "A", "-"]})
    res = failcodes.agreement_table(failcodes.ratings_from_frame(frame), ["percent", "cohen"])
    assert [r.value for r in res] == pytest.approx([0.4, 0.0625])
    assert (
        "'-' (2 rating(s), by r1, r2) read as a category: a missing rating? leave those cells "
        "empty" in res.notes
    )
    empty = frame.replace("-", None)
    res = failcodes.agreement_table(failcodes.ratings_from_frame(empty), ["percent", "cohen"])
    assert [r.value for r in res] == pytest.approx([2 / 3, 0.4])
    assert not any("read as a category" in n for n in res.notes)


@pytest.mark.parametrize(
    ("mark", "said"),
    [
        ("NR", "the ratings mix numbers (1, 2, 3) and words (NR): each a category of its own"),
        (0, "0 given by r2 alone (2 rating(s)), the others' lowest 1: a missing rating written 0?"),
    ],
)
def test_a_word_or_zero_among_numeric_ratings_is_said_from_python(mark: object, said: str) -> None:
    """From Python 'NR' (or 0) for two of r2's 1-3 ratings was a category of its own with no
    word in the notes: Cohen 0.452 (statsmodels cohens_kappa with it a category: 0.45205) for
    the 0.619 of the 8 units rated (0.61905), where agree's first line says it. Now the notes
    say it as agree does."""
    r2 = [1, 2, 3, 2, mark, 3, 1, 3, mark, 1]
    frame = pd.DataFrame({"r1": [1, 2, 3, 1, 2, 3, 1, 2, 3, 1], "r2": r2})
    if isinstance(mark, str):
        frame = frame.astype(str)
    res = failcodes.agreement_table(failcodes.ratings_from_frame(frame), ["cohen"])
    assert res[0].value == pytest.approx(0.4520547945205479)
    assert any(said in n for n in res.notes)
    empty = frame.replace(mark, None)
    res = failcodes.agreement_table(failcodes.ratings_from_frame(empty), ["cohen"])
    assert res[0].value == pytest.approx(0.6190476190476191)
    assert not any(said[:20] in n for n in res.notes)


def test_a_frame_refusal_names_an_integer_index_label_as_a_number() -> None:
    """A unit on two rows of a frame indexed by integers was named 'row np.int64(1)
    (position 1)' (numpy's repr); now 'row 1 (position 1)'."""
    frame = pd.DataFrame(
        {"r1": ["A", "B", "A", "B"], "r2": ["A", "B", "B", "B"]},
        index=pd.Index([1, 1, 2, 3], name="unit"),
    )
    with pytest.raises(InputError) as caught:
        failcodes.ratings_from_frame(frame)
    assert "row 1 (position 1)" in str(caught.value)
    assert "np.int64" not in str(caught.value)
