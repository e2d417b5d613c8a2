"""Session 32, helper t32agree: agree on designs the other tests do not use (a long table with
a time column, two marks of one rating, each rater's codes in slot columns, ...).

Each test names what main gave and the value worked by hand (or by an independent package)
beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import AGREE_JSON, ratings_file, run_cli

#: unit, rater, code and the time each row was made (an annotation tool's export): r1 and r2
#: agree on u1 (A, A) and u3 (B, B), not on u2 (B, A).
LONG_WITH_TIME = (
    "unit,rater,code,created_at\n"
    "u1,r1,A,2026-01-01T10:00:00Z\nu1,r2,A,2026-01-02T09:30:00Z\n"
    "u2,r1,B,2026-01-01T10:01:00Z\nu2,r2,A,2026-01-02T09:31:00Z\n"
    "u3,r1,B,2026-01-01T10:02:00Z\nu3,r2,B,2026-01-02T09:32:00Z\n"
)


@pytest.mark.parametrize("column", ["created_at", "when"])
def test_a_long_table_with_a_time_column_is_read_as_long_and_the_column_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    """Before: refused 'unit 'u1' is on two rows ...: one row per unit and rater? name the
    columns with --long RATER_COLUMN,RATING_COLUMN (no rater column? add one ...)' though
    the rater column is there (a 'seconds' column was read as long). Now read as long, the
    time column said as not read. By hand: 2 of 3 units alike, percent 2/3; Cohen: r1 A 1/3,
    B 2/3, r2 A 2/3, B 1/3, chance 2/9 + 2/9 = 4/9, (2/3 - 4/9) / (5/9) = 0.4."""
    path = ratings_file(tmp_path, LONG_WITH_TIME.replace("created_at", column))
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {r["statistic"]: r for r in json.loads(out)}
    assert rows["percent"]["value"] == pytest.approx(2 / 3)
    assert rows["cohen"]["value"] == pytest.approx(0.4)
    assert rows["percent"]["n_units"] == 3
    assert f"not read (the ratings are column 'code'): {column}" in rows["percent"]["notes"][0]


def test_a_long_table_not_found_as_long_names_its_rater_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two columns beside the rater (code and severity): which is the rating is the user's
    to say. Before the refusal said 'no rater column? add one' beside a column 'rater'."""
    text = "unit,rater,code,severity\nu1,r1,A,1\nu1,r2,A,2\nu2,r1,B,1\nu2,r2,A,2\n"
    code, _, err = run_cli(["agree", str(ratings_file(tmp_path, text)), *AGREE_JSON], capsys)
    assert code == 2
    assert "no rater column" not in err
    assert (
        "one row per unit and rater? name the columns with --long rater,RATING_COLUMN (the "
        "ratings: one of code, severity; the other columns are not read)"
    ) in err


def test_two_marks_for_one_rating_in_a_long_table_of_code_sets_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """r1's rows 'none' and '-' for u2 (no code, and a missing rating) were joined into the
    set {none, -}: exact-set percent 0.5 beside r2's 'none' (read 'none' alone: 3/4), a
    per-code row for '-', exit 0. Which mark holds no reader can tell: refused."""
    text = (
        "unit,rater,code\nu1,r1,A\nu1,r2,A\nu2,r1,none\nu2,r1,-\nu2,r2,none\n"
        "u3,r1,B\nu3,r2,B\nu4,r1,A\nu4,r2,B\n"
    )
    path = ratings_file(tmp_path, text)
    code, out, err = run_cli(["agree", str(path), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 2, out
    assert err.strip() == (
        f"failcodes: error: {path}:5, field 'code': '-' beside 'none' (line 4) for unit 'u2' "
        "and rater 'r1': their rows join into one code set, and two marks for one rating (no "
        "code, or a missing rating?): keep the row that holds (no code given: 'none' alone; a "
        "missing rating: no row)"
    )


#: Each rater's codes in two slot columns. The sets: u1 {A}/{A}, u2 {A,B}/{A}, u3 {B}/{B},
#: u4 {A,B}/{B,A}, u5 {C}/{B}, u6 {A}/{A,C}.
SLOTS = (
    "unit,r1_code1,r1_code2,r2_code1,r2_code2\n"
    "u1,A,,A,\nu2,A,B,A,\nu3,B,,B,\nu4,A,B,B,A\nu5,C,,B,\nu6,A,,A,C\n"
)


def test_each_raters_code_slots_are_read_as_one_code_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: refused as 'two fields ('code1', 'code2') of the same raters', the way named
    (--raters r1_code1,r2_code1) reading the first slot alone (r1's B on u2 and r2's C on
    u6 dropped). Now under --sets each rater's slots are one code set, said on the first line.

    By hand: exact sets alike on u1, u3, u4: percent 3/6. r1's sets {A} 2, {A,B} 2, {B} 1,
    {C} 1; r2's {A} 2, {B} 2, {A,B} 1, {A,C} 1: chance 4/36 + 2/36 + 2/36 = 2/9, Cohen
    (1/2 - 2/9) / (7/9) = 5/14. nltk 3.10 AnnotationTask(distance=masi_distance).alpha() on
    these sets: 0.4296296 (jaccard_distance: 0.45). Code B per unit: r1 0,1,1,1,0,0, r2
    0,0,1,1,1,0: alike 4/6, chance 1/2, Cohen 1/3. Code C: r1 on u5, r2 on u6: alike 4/6,
    chance 1/36 + 25/36, Cohen (24 - 26) / 10 = -0.2."""
    path = ratings_file(tmp_path, SLOTS)
    code, _, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 2
    assert (
        "look like each rater's codes in slots (r1: r1_code1 + r1_code2, r2: r2_code1 + "
        "r2_code2): --sets ';' reads each rater's slots as one code set"
    ) in err
    code, out, err = run_cli(["agree", str(path), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0, err
    rows = {(r.get("code"), r["statistic"], r["weights"]): r["value"] for r in json.loads(out)}
    assert rows[(None, "percent", "none")] == pytest.approx(0.5)
    assert rows[(None, "cohen", "none")] == pytest.approx(5 / 14)
    assert rows[(None, "krippendorff", "masi")] == pytest.approx(0.4296296, abs=1e-6)
    assert rows[(None, "krippendorff", "jaccard")] == pytest.approx(0.45)
    assert rows[("B", "cohen", "none")] == pytest.approx(1 / 3)
    assert rows[("C", "cohen", "none")] == pytest.approx(-0.2)
    first = json.loads(out)[0]["notes"][0]
    assert "raters (2): r1, r2" in first
    assert (
        "each rater's code slots read as one code set (r1: r1_code1 + r1_code2, r2: r2_code1 "
        "+ r2_code2; a rater's blank slots add no code, all blank: not rated)"
    ) in first
    # the Python layer: the same request, the same numbers
    import failcodes as fc

    result = fc.run(fc.AgreeRequest(file=path, sets=";", bootstrap=0), note=None)
    exact = {(r["statistic"], r["weights"]): r["value"] for r in result.rows if not r.get("code")}
    assert exact[("cohen", "none")] == pytest.approx(5 / 14)
    # a frame (no --sets there): the refusal names the request that reads the slots
    import pandas as pd

    with pytest.raises(fc.InputError, match="each rater's codes in slots"):
        fc.ratings_from_frame(pd.read_csv(path))


def test_a_mark_in_a_code_slot_beside_a_code_is_an_empty_slot_and_a_code_twice_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """r1's slots 'A', 'none' on u1 and r2's 'A', 'NA' on u2 are the sets {A} (said); r1
    left u3 blank (not rated). By hand: u1 {A}/{A}, u2 {A,B}/{A}, u4 {A,B}/{A,B}: percent
    2/3 on the 3 units both rated. A code in two slots of one rater is refused."""
    text = (
        "unit,r1_code1,r1_code2,r2_code1,r2_code2\nu1,A,none,A,\nu2,A,B,A,NA\nu3,,,B,\nu4,B,A,A,B\n"
    )
    code, out, err = run_cli(
        ["agree", str(ratings_file(tmp_path, text)), "--sets", ";", *AGREE_JSON], capsys
    )
    assert code == 0, err
    rows = json.loads(out)
    assert rows[0]["statistic"] == "percent"
    assert rows[0]["value"] == pytest.approx(2 / 3)
    assert rows[0]["n_units"] == 3
    assert "2 slot(s) holding a mark of no code beside a code read as empty" in rows[0]["notes"][0]
    twice = ratings_file(tmp_path, "unit,r1_code1,r1_code2,r2_code1,r2_code2\nu1,A,A,A,\n", "t.csv")
    code, _, err = run_cli(["agree", str(twice), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {twice}:2, field 'r1_code2': 'A' is in two of r1's code slots "
        "(r1_code1, r1_code2): a code set holds each code once (a double entry, or a typo for "
        "another code?): write it in one slot"
    )


#: Three raters of 10 units, binary, each the lone dissenter on some units (r1 on u5; r2 on
#: u2, u7, u10; r3 on u4, u6, u9), beside a column holding their majority.
R1, R2, R3 = "AABBBABBAB", "ABBBAAABAA", "AABAABBBBB"
MAJORITY = "AABBAABBAB"


@pytest.mark.parametrize(
    "name",
    ["golden", "silver_standard", "criterion_standard", "unanimous", "post_discussion", "verdict"],
)
def test_a_majority_column_named_so_is_no_fourth_rater(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Before: read as a fourth rater, Fleiss 0.298, said only as '(a covariate? --raters
    r1,r2,r3 leaves it out)'. By hand on r1..r3: u1, u3, u8 unanimous (P_i 1), the 7 others
    2-1 (P_i 1/3): mean (3 + 7/3) / 10 = 8/15; 'A' 14 of 30 ratings, chance (14/30)^2 +
    (16/30)^2 = 113/225; Fleiss (120/225 - 113/225) / (112/225) = 7/112 = 0.0625."""
    rows = "".join(
        f"u{i + 1},{a},{b},{c},{m}\n"
        for i, (a, b, c, m) in enumerate(zip(R1, R2, R3, MAJORITY, strict=True))
    )
    path = ratings_file(tmp_path, f"unit,r1,r2,r3,{name}\n{rows}")
    code, out, err = run_cli(["agree", str(path), "--stat", "fleiss", *AGREE_JSON], capsys)
    assert code == 0, err
    [row] = json.loads(out)
    assert row["value"] == pytest.approx(0.0625)
    assert row["n_raters"] == 3
    assert f"left out: {name} (named like" in row["notes"][0]


def test_compare_reads_a_golden_column_as_no_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """compare FILE id,sysA,sysB,golden read 'golden' as a third system (Cochran's Q over
    three, McNemar pairs 'sysA vs golden'), exit 0: now the reference refusal naming --truth,
    as 'gold' was."""
    text = "id,sysA,sysB,golden\n1,1,1,1\n2,0,1,1\n3,1,0,0\n4,0,0,0\n5,1,1,0\n"
    code, _, err = run_cli(["compare", str(ratings_file(tmp_path, text))], capsys)
    assert code == 2
    assert "column 'golden' is named like the reference" in err
    assert "give the reference with --truth golden" in err


def test_a_rating_made_again_later_in_a_long_table_is_said_not_joined_unsaid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """r1 rated u2 'B' on 1 January and 'A' on 5 January. The refusal named only --sets,
    which joins both into {A, B}: percent 2/3 (u2 {A,B} against r2's {A}), where the later
    rating kept gives 3/3 (u1 A/A, u2 A/A, u3 B/B), said only as codes joined. Now the
    refusal names the time column and the first line under --sets says it."""
    text = (
        "unit,rater,code,created_at\nu1,r1,A,2026-01-01\nu1,r2,A,2026-01-02\n"
        "u2,r1,B,2026-01-01\nu2,r2,A,2026-01-02\nu2,r1,A,2026-01-05\n"
        "u3,r1,B,2026-01-01\nu3,r2,B,2026-01-02\n"
    )
    path = ratings_file(tmp_path, text)
    code, _, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 2
    assert (
        "lines 4 and 6 differ in column 'created_at' (2026-01-01, 2026-01-05): a rating made "
        "again? keep the row that counts (--sets would join both)"
    ) in err
    code, out, err = run_cli(["agree", str(path), "--sets", ";", *AGREE_JSON], capsys)
    assert code == 0, err
    rows = json.loads(out)
    assert rows[0]["value"] == pytest.approx(2 / 3)  # the joined sets, as said
    assert (
        "1 (unit, rater) pair(s) have rows of different 'created_at', joined into one code "
        "set: a rating made again? keep the row that counts"
    ) in rows[0]["notes"][0]
    later = ratings_file(tmp_path, text.replace("u2,r1,B,2026-01-01\n", ""), "later.csv")
    code, out, err = run_cli(["agree", str(later), "--stat", "percent", *AGREE_JSON], capsys)
    assert json.loads(out)[0]["value"] == pytest.approx(1.0)


def test_compare_reads_a_confidence_column_as_no_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """compare FILE id,sysA,sysB,truth,confidence (a 0/1 confidence kept beside the systems)
    read 'confidence' as a third system: Cochran's Q over three and the Holm correction over
    3 pairs, sysA vs sysB p (Holm) 3 x 0.0625 = 0.1875 for the 0.0625 of the one pair, exit 0.
    Now refused naming --systems, as agree leaves such a column out; with --systems the one
    pair's Holm p is its own p."""
    a, b = "1101101011010110110011010", "1001001010010100100011000"
    t, c = "1101001011010110100011010", "1111111011111110111011111"
    rows = "".join(
        f"{i + 1},{w},{x},{y},{z}\n" for i, (w, x, y, z) in enumerate(zip(a, b, t, c, strict=True))
    )
    path = ratings_file(tmp_path, f"id,sysA,sysB,truth,confidence\n{rows}")
    code, _, err = run_cli(["compare", str(path), "--truth", "truth"], capsys)
    assert code == 2
    assert "column 'confidence' is named like a note, a confidence or a time" in err
    args = ["compare", str(path), "--truth", "truth", "--systems", "sysA,sysB"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    [pair] = [r for r in json.loads(out)["tests"] if r["test"] == "mcnemar_midp"]
    # on the 13 units the truth flags (recall's McNemar): A flags and B not on units 2, 10,
    # 15, 24, never the other way: b = 4, c = 0, mid-p 2 * (1/16 - 1/32) = 0.0625; one pair:
    # Holm the same
    assert pair["p_value"] == pytest.approx(0.0625)
    assert pair["p_holm"] == pytest.approx(0.0625)


def test_compare_reads_systems_all_named_with_such_a_word_as_systems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Systems whose every name holds such a word (`match_v1`, `match_v2`: a system called
    MATCH, two runs) are the systems, as agree keeps `r1_confidence`, `r2_confidence`: read,
    not refused. The same 25 units as above: b = 4, c = 0 on the 13 the truth flags,
    McNemar mid-p 2 * (1/16 - 1/32) = 0.0625 (one pair: Holm the same)."""
    a, b = "1101101011010110110011010", "1001001010010100100011000"
    t = "1101001011010110100011010"
    rows = "".join(
        f"{i + 1},{w},{x},{y}\n" for i, (w, x, y) in enumerate(zip(a, b, t, strict=True))
    )
    path = ratings_file(tmp_path, f"id,match_v1,match_v2,truth\n{rows}")
    code, out, err = run_cli(["compare", str(path), "--truth", "truth", "--format", "json"], capsys)
    assert code == 0, err
    [pair] = [r for r in json.loads(out)["tests"] if r["test"] == "mcnemar_midp"]
    assert pair["p_value"] == pytest.approx(0.0625)
    assert pair["p_holm"] == pytest.approx(0.0625)
