"""Session 29, helper t29red2: the brief's named shapes (a majority column under names the
tests did not use, co-occurring codes) through ``agree`` and the Python library layer.

Each test names what main gave and the value worked by hand (or by an independent package)
beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import failcodes as fc
from failcodes.errors import FailcodesError
from tests.cli_helpers import AGREE_JSON, run_cli

#: Three raters of six units and their row-wise majority. By hand (Fleiss 1971, n = 3):
#: P_i = 1 on the unanimous u1, u3, u6 and (2^2 + 1 - 3) / 6 = 1/3 on the others, mean
#: 54/81; p_a = 10/18, p_b = 8/18, P_e = (100 + 64) / 324 = 41/81; kappa = (54 - 41) /
#: (81 - 41) = 13/40 = 0.325 (statsmodels' fleiss_kappa gives the same). Read as a fourth
#: rater (n = 4): P_i 1 or (9 + 1 - 4) / 12 = 0.5, mean 0.75; p_a = 13/24, P_e = 290/576;
#: kappa = (432 - 290) / (576 - 290) = 142/286 = 0.4965.
RATERS = {
    "r1": ["a", "a", "b", "a", "b", "a"],
    "r2": ["a", "a", "b", "b", "b", "a"],
    "r3": ["a", "b", "b", "b", "a", "a"],
}
MAJORITY = ["a", "a", "b", "b", "b", "a"]


@pytest.mark.parametrize("name", ["maj", "MAJ", "gold2", "consensus1"])
def test_a_majority_column_under_an_abbreviated_or_numbered_name_is_no_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Before: 'maj' (majority's usual abbreviation) and a consensus word with a number
    ('gold2', 'consensus1') were read as a fourth rater: Fleiss 0.4965 for the three raters'
    0.325, the first line calling the column a covariate at most. Now left out by name, as
    'majority' and 'gold' are, through agree, AgreeRequest and ratings_from_frame alike."""
    frame = pd.DataFrame({"unit": [f"u{i}" for i in range(1, 7)], **RATERS, name: MAJORITY})
    path = tmp_path / "ratings.csv"
    frame.to_csv(path, index=False)
    code, out, _ = run_cli(
        ["agree", str(path), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"], capsys
    )
    assert code == 0
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(13 / 40)  # by hand above (a 4th rater: 142/286)
    assert row["raters"] == ["r1", "r2", "r3"]
    assert name in row["left_out"]
    table = fc.ratings_from_frame(frame)
    assert table.raters == ["r1", "r2", "r3"]
    (api,) = fc.agreement_table(table, ["fleiss"])
    assert api.value == pytest.approx(13 / 40)


def test_a_numbered_series_named_like_referees_stays_the_raters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'ref1', 'ref2', 'ref3' (referees) are numbered raters, not consensus columns: Fleiss
    13/40 over the three (by hand above). A lone 'ref2' beside them would be left out; a
    series of two or more is not. Beside it, a lone 'gold2' is left out (main read it as a
    fourth rater: 142/286)."""
    frame = pd.DataFrame({"unit": range(1, 7), **{f"ref{i}": RATERS[f"r{i}"] for i in (1, 2, 3)}})
    path = tmp_path / "refs.csv"
    frame.to_csv(path, index=False)
    code, out, _ = run_cli(
        ["agree", str(path), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"], capsys
    )
    assert code == 0
    (row,) = json.loads(out)
    assert row["raters"] == ["ref1", "ref2", "ref3"]
    assert row["value"] == pytest.approx(13 / 40)
    frame["gold2"] = MAJORITY
    (api,) = fc.agreement_table(fc.ratings_from_frame(frame), ["fleiss"])
    assert api.value == pytest.approx(13 / 40)  # main: 142/286, gold2 a fourth rater


def test_a_long_table_whose_rater_is_maj_leaves_it_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long table (item, annotator, code) whose fourth annotator is 'MAJ' (the majority):
    main read it as a rater with no word (Fleiss 142/286); the three annotators give 13/40
    (by hand above)."""
    lines = ["item,annotator,code"]
    for i in range(6):
        for rater, codes in (*RATERS.items(), ("MAJ", MAJORITY)):
            lines.append(f"u{i + 1},{rater},{codes[i]}")
    path = tmp_path / "long.csv"
    path.write_text("\n".join(lines) + "\n")
    code, out, _ = run_cli(
        ["agree", str(path), "--stat", "fleiss", "--bootstrap", "0", "--format", "json"], capsys
    )
    assert code == 0
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(13 / 40)
    assert row["raters"] == ["r1", "r2", "r3"]


def _refusal(frame: pd.DataFrame, **kw: object) -> str:
    with pytest.raises(FailcodesError) as caught:
        fc.ratings_from_frame(frame, **kw)  # type: ignore[arg-type]
    return str(caught.value)


def test_python_refusals_name_what_python_takes_not_agree_flags() -> None:
    """From Python, three refusals named agree's flags or garbled them: a unit on two rows
    named '--long RATER_COLUMN,RATING_COLUMN' (ratings_from_frame has no such keyword: the
    way is a pivot); one-hot columns read "name the rating's columns with raters=['(e.g.']
    raters=['overreach_A', 'overreach_B'])" and named 'line 1' (the header; a frame has no
    lines); a cell joining codes named '--sets' and '--sets none'."""
    twice = pd.DataFrame({"unit": [1, 1, 2, 3], "r1": list("abab"), "r2": list("abbb")})
    said = _refusal(twice)
    assert "--long" not in said
    assert "frame.pivot(index=UNIT, columns=RATER, values=RATING)" in said
    onehot = pd.DataFrame(
        {
            "unit": [1, 2, 3, 4],
            "overreach_A": [0, 1, 0, 1],
            "overreach_B": [0, 1, 1, 1],
            "conflict_A": [1, 0, 0, 0],
            "conflict_B": [1, 0, 0, 1],
        }
    )
    said = _refusal(onehot)
    assert "['(e.g.']" not in said
    assert "raters= (e.g. raters=['overreach_A', 'overreach_B'])" in said
    assert "line 1" not in said and "the column names" in said
    joined = pd.DataFrame({"unit": [1, 2, 3, 4], "r1": ["a", "b", "a;b", "b"], "r2": list("abba")})
    said = _refusal(joined)
    assert "--sets" not in said
    assert "failcodes.AgreeRequest(file=..., sets=';')" in said
    assert "categories=[...]" in said


def test_a_joined_cell_is_one_category_when_python_lists_it() -> None:
    """The refusal's other way through, each cell one category (agree --sets none), had no
    Python counterpart: categories=['a', 'b', 'a;b'] was refused as a set of codes too. Now
    the list reads 'a;b' as the category it names. By hand: r1 a, b, a;b, b; r2 a, b, b, a:
    p_o = 2/4; margins r1 (1/4, 2/4, 1/4), r2 (2/4, 2/4, 0): p_e = 1/8 + 1/4 = 3/8; Cohen =
    (1/2 - 3/8) / (5/8) = 0.2."""
    frame = pd.DataFrame({"unit": [1, 2, 3, 4], "r1": ["a", "b", "a;b", "b"], "r2": list("abba")})
    table = fc.ratings_from_frame(frame, categories=["a", "b", "a;b"])
    values = {r.statistic: r.value for r in fc.agreement_table(table, ["percent", "cohen"])}
    assert values["percent"] == pytest.approx(0.5)
    assert values["cohen"] == pytest.approx(0.2)
    with pytest.raises(FailcodesError, match="not in the category list"):
        fc.ratings_from_frame(frame, categories=["a", "b"])  # 'a;b' unlisted: still refused


@pytest.mark.parametrize("name", ["maj", "gold2"])
def test_compare_reads_a_maj_column_as_the_reference_not_a_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """compare FILE shares agree's consensus words: a 'maj' or 'gold2' column (the
    clinicians' majority) beside two systems' outcomes was a third system (Cochran's Q over
    sysA, sysB and it). Now refused in one line asking for --truth, as 'majority' is."""
    path = tmp_path / "outcomes.csv"
    path.write_text(f"unit,sysA,sysB,{name}\nu1,1,1,1\nu2,0,1,0\nu3,1,0,1\nu4,0,0,0\n")
    code, out, err = run_cli(["compare", str(path)], capsys)
    assert code == 2
    assert not out
    assert f"--truth {name}" in err and err.count("\n") == 1


def test_an_infinite_rating_in_a_frame_names_its_column_and_row() -> None:
    """agree refuses 'inf' in a CSV naming file, line and column; from Python
    ratings_from_frame read it as a number and agreement_table stopped with "ratings contain
    infinite values; use NaN for missing ratings", naming neither column nor row."""
    frame = pd.DataFrame({"unit": ["u1", "u2", "u3"], "r1": [1.0, float("inf"), 2.0]})
    frame["r2"] = [1.0, 2.0, 2.0]
    said = _refusal(frame.set_index("unit"))
    assert "field 'r1'" in said and "row 'u2' (position 1)" in said
    assert "'inf' is not a rating" in said
    said = _refusal(pd.DataFrame({"unit": [1, 2, 3], "r1": ["1", "-Infinity", "2"], "r2": "1"}))
    assert "field 'r1'" in said and "row 1" in said


def test_inf_among_text_codes_is_a_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'sup' and 'inf' (superior, inferior: anatomical codes) were refused by agree as an
    infinite rating ("'inf' is not a rating (write a number ...)"), with no way through. By
    hand: r1 sup, inf, inf, sup; r2 sup, sup, inf, inf: p_o = 2/4, every margin 1/2, p_e =
    1/2, Cohen 0.0. (ratings_from_frame read them so already.)"""
    path = tmp_path / "sites.csv"
    path.write_text("unit,r1,r2\nu1,sup,sup\nu2,inf,sup\nu3,inf,inf\nu4,sup,inf\n")
    code, out, err = run_cli(
        ["agree", str(path), "--stat", "percent", "--stat", "cohen", *AGREE_JSON], capsys
    )
    assert code == 0, err
    values = {r["statistic"]: r["value"] for r in json.loads(out)}
    assert values == {"percent": pytest.approx(0.5), "cohen": pytest.approx(0.0)}
    path.write_text("unit,r1,r2\nu1,1,1\nu2,inf,2\nu3,2,2\n")  # among numbers: refused still
    code, _, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 2 and f"{path}:3, field 'r1': 'inf' is not a rating" in err


def test_python_categories_naming_a_used_category_twice_are_refused_as_agree_refuses() -> None:
    """categories=['a', 'b', 'A'] ('A' nobody gave, 'a' given): main counted 'A' in q, AC1
    0.780 where agree refuses --categories a,b,A. By hand, r1 a b a a b a, r2 a b b a b a:
    p_o = 5/6, pi_a = 7/12, pi_b = 5/12; q = 2: p_e = 2 (7/12)(5/12) = 70/144, AC1 =
    (5/6 - 70/144) / (1 - 70/144) = 0.6757; q = 3: p_e = (70/144) / 2, AC1 = 0.7798. A third
    category spelt apart ('c') is a scale's unused category and stays counted."""
    frame = pd.DataFrame({"unit": range(1, 7), "r1": list("abaaba"), "r2": list("abbaba")})
    for twin in ("A", "b "):
        with pytest.raises(FailcodesError, match=f"categories names {twin!r}, which no rater"):
            fc.ratings_from_frame(frame, categories=["a", "b", twin])
    (ac1,) = fc.agreement_table(fc.ratings_from_frame(frame, categories=["a", "b"]), ["gwet_ac1"])
    assert ac1.value == pytest.approx((5 / 6 - 70 / 144) / (1 - 70 / 144))  # 0.6757
    table = fc.ratings_from_frame(frame, categories=["a", "b", "c"])
    (ac1,) = fc.agreement_table(table, ["gwet_ac1"])
    assert ac1.value == pytest.approx((5 / 6 - 35 / 144) / (1 - 35 / 144))  # 0.7798


@pytest.mark.parametrize(
    ("name", "summary"),
    [
        ("avg_score", [2.33, 4.33, 3.33, 5.0, 1.33, 2.33]),  # the raters' mean, 2 decimals
        ("median", [2, 4, 3, 5, 1, 2]),  # the raters' median
    ],
)
def test_an_avg_or_median_column_beside_the_raters_is_no_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, summary: list[float]
) -> None:
    """A column of the raters' mean named 'avg_score', or their 'median', was a fourth rater
    ('mean' and 'average' were left out by name): interval alpha 0.8968 / 0.8885 for the
    three raters' 0.8514 (krippendorff 0.9.0, alpha(level_of_measurement='interval') of the
    3 x 6 and 4 x 6 tables), the first line calling it "a covariate?" at most."""
    frame = pd.DataFrame(
        {
            "unit": [f"u{i}" for i in range(1, 7)],
            "r1": [2, 4, 3, 5, 1, 2],
            "r2": [2, 4, 3, 5, 2, 2],
            "r3": [3, 5, 4, 5, 1, 3],
            name: summary,
        }
    )
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    args = ["agree", str(path), "--stat", "krippendorff", "--level", "interval", *AGREE_JSON]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    (row,) = json.loads(out)
    assert row["raters"] == ["r1", "r2", "r3"] and name in row["left_out"]
    assert row["value"] == pytest.approx(0.8513986013986015)  # krippendorff, 3 raters
