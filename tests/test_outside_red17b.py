"""Outside red-team of agreement, review and corrected shares, session 17 (t17red2).

Each test states the input, what failcodes gave before the fix, and the value computed by
hand (or published) beside the assertion.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import AGREE_JSON, run_cli

# three readers (rows) x six questions (columns): one row per rater, one column per unit,
# under a header no rater word names
TRANSPOSED = "reader,Q1,Q2,Q3,Q4,Q5,Q6\nSmith,y,y,n,n,y,n\nJones,y,n,n,n,y,n\nLee,y,y,n,y,y,n\n"


def test_a_table_of_one_row_per_rater_under_no_rater_word_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read as given the six questions were six raters of three units ('Smith'...): Fleiss
    -0.111 at exit 0 (units Smith (y,y,n,n,y,n): P = (9+9-6)/30 = 12/30, Jones (y,n,n,n,y,n):
    (4+16-6)/30 = 14/30, Lee (y,y,n,y,y,n): 14/30; P-bar 4/9; p_y 9/18, p_e 1/2:
    (4/9 - 1/2)/(1/2) = -1/9), the first line naming Q1..Q6 as raters. Now refused (six or
    more rater columns, twice the rows), nothing written; transposed it reads the readers' own
    Fleiss 5/9."""
    table, out = tmp_path / "t.csv", tmp_path / "a.json"
    table.write_text(TRANSPOSED, encoding="utf-8")
    code, _, err = run_cli(["agree", str(table), "-o", str(out), "--bootstrap", "0"], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:1: 6 rater columns (Q1, Q2, Q3, ...) for 3 rows: is the "
        "table one row per rater and one column per unit? agreement needs one row per unit: "
        "transpose it (to read it as given, name the raters with --raters)"
    )
    assert not out.exists()
    # the way through: --raters reads it as given (the -1/9 above, now asked for)
    args = ["agree", str(table), "--raters", "Q1,Q2,Q3,Q4,Q5,Q6", "--stat", "fleiss", *AGREE_JSON]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(-1 / 9)
    # transposed: units Q1 (3 y), Q2 (2 y, 1 n), Q3 (3 n), Q4 (1 y, 2 n), Q5 (3 y), Q6 (3 n):
    # P = 1, 1/3, 1, 1/3, 1, 1; P-bar 7/9; p_y 9/18, p_e 1/2: (7/9 - 1/2)/(1/2) = 5/9
    # (Fleiss 1971)
    rows = "Q1,y,y,y\nQ2,y,n,y\nQ3,n,n,n\nQ4,n,n,y\nQ5,y,y,y\nQ6,n,n,n\n"
    table.write_text("unit,Smith,Jones,Lee\n" + rows)
    code, stdout, err = run_cli(["agree", str(table), "--stat", "fleiss", *AGREE_JSON], capsys)
    assert code == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(5 / 9)


# 1-3 ratings; r3's ratings of units 2 and 7 missing, written with a missing-value code
CODED = (
    "item,r1,r2,r3\n1,1,1,1\n2,2,2,{m}\n3,3,3,3\n4,1,2,1\n5,2,2,2\n6,3,2,3\n7,1,1,{m}\n8,2,3,2\n"
)


@pytest.mark.parametrize("code", ["999", "99", "9", "-9", "-1"])
def test_a_missing_value_code_among_ratings_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], code: str
) -> None:
    """SPSS's and Stata's missing codes (999, -9 ...) were ratings: interval alpha -0.046
    (the krippendorff package on the same cells with 999: -0.0464) for the 0.779 of the
    ratings given, nominal Fleiss 0.409 for 0.617, exit 0 and no word."""
    table, out = tmp_path / "m.csv", tmp_path / "a.json"
    table.write_text(CODED.format(m=code), encoding="utf-8")
    args = ["agree", str(table), "--level", "interval", "--stat", "krippendorff", "-o", str(out)]
    rc, _, err = run_cli([*args, "--bootstrap", "0"], capsys)
    assert rc == 2
    assert err.strip() == (
        f"failcodes: error: {table}:3, field 'r3': '{code}' among ratings 1-3: a missing-value "
        "code (SPSS and Stata write 9, 99, 999, -9 or -1; a survey 88, 98, 97 or -8 for don't "
        "know or refused)? leave the cell empty (it would be "
        "a rating of its own, far from the others); a rating indeed: list the categories with "
        "--categories"
    )
    assert not out.exists()
    # the cells left empty: krippendorff.alpha([[1,2,3,1,2,3,1,2], [1,2,3,2,2,2,1,3],
    # [1,nan,3,1,2,3,nan,2]], level_of_measurement="interval") = 0.778947...
    table.write_text(CODED.format(m=""), encoding="utf-8")
    rc, stdout, err = run_cli([*args[:-2], *AGREE_JSON], capsys)
    assert rc == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(0.7789473684210526)


def test_a_level_next_to_the_scale_is_a_rating_not_a_missing_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-1 on a -1..1 scale (and 9 on 1-10) is a rating: not refused."""
    table = tmp_path / "s.csv"
    table.write_text("item,a,b\n1,-1,-1\n2,0,0\n3,1,1\n4,0,1\n")
    rc, stdout, err = run_cli(["agree", str(table), "--stat", "percent", *AGREE_JSON], capsys)
    assert rc == 0, err
    assert json.loads(stdout)[0]["value"] == pytest.approx(3 / 4)


def test_pooled_rows_over_one_dimension_are_that_dimensions_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Annotations coding one dimension of the bundled codebook (entity_match: 4 codes), alice
    vs the offline judge, the judge unscored on u3. The pooled rows read the units again
    without the dimension's code list: AC1 0.420 and Brennan-Prediger 0.400 (q = 3 codes
    observed) beside the dimension's own 0.496 and 0.467 (q = 4), exit 0."""
    from failcodes.annotations import Annotation, CoderKind, Status
    from failcodes.codebook import bundled
    from failcodes.units import UnitKind

    ref = bundled().ref()
    alice = ["exact_entity", "partial_entity", "irrelevant", "exact_entity", "exact_entity"]
    judge = ["exact_entity", "partial_entity", "partial_entity", None, "irrelevant"]
    anns = [
        Annotation(
            unit_id=f"u{i}",
            unit_kind=UnitKind.RETRIEVAL,
            codebook=ref,
            coder=coder,
            coder_kind=kind,
            status=Status.SCORED if code else Status.UNSCORED,
            reason=None if code else "no answer",
            codes={"entity_match": code} if code else {},
        )
        for coder, kind, codes in (
            ("alice", CoderKind.HUMAN, [*alice, "partial_entity"]),
            ("offline", CoderKind.HEURISTIC, [*judge, "partial_entity"]),
        )
        for i, code in enumerate(codes)
    ]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(a.model_dump_json() + "\n" for a in anns), encoding="utf-8")
    code, out, err = run_cli(["agree", str(path), *AGREE_JSON], capsys)
    assert code == 0, err
    rows = json.loads(out)
    got = {(r["scope"], r["statistic"]): r["value"] for r in rows if r["scope"] != "code"}
    # units both coded: u0, u1, u2, u4, u5; agree on u0, u1, u5: p_o 3/5.
    # pi (mean of each unit's r_ik / r_i): exact (1 + 1/2)/5 = 0.3, partial (1 + 1/2 + 1)/5 =
    # 0.5, irrelevant (1/2 + 1/2)/5 = 0.2; sum pi(1 - pi) = 0.62
    # AC1 (Gwet 2008): p_e = 0.62/(4 - 1); (0.6 - p_e)/(1 - p_e) = 0.4958
    # Brennan-Prediger: p_e = 1/4: (0.6 - 0.25)/0.75 = 0.4667
    ac1, bp = (0.6 - 0.62 / 3) / (1 - 0.62 / 3), (0.6 - 0.25) / 0.75
    assert got[("dimension", "gwet_ac1")] == pytest.approx(ac1)
    assert got[("dimension", "brennan_prediger")] == pytest.approx(bp)
    assert got[("pooled", "gwet_ac1")] == pytest.approx(ac1)  # was (0.6 - 0.31)/0.69 = 0.420
    assert got[("pooled", "brennan_prediger")] == pytest.approx(bp)  # was 0.400
    for stat in ("percent", "fleiss", "krippendorff"):
        assert got[("pooled", stat)] == pytest.approx(got[("dimension", stat)])


def _entity_review(unit: str, code: str, coder: str) -> Any:
    from failcodes.annotations import Annotation, CoderKind
    from failcodes.codebook import bundled
    from failcodes.units import UnitKind
    from tests.test_review_plan import HIGH

    return Annotation(
        unit_id=unit,
        unit_kind=UnitKind.RETRIEVAL,
        codebook=bundled().ref(),
        coder=coder,
        coder_kind=CoderKind.HUMAN if coder != "offline" else CoderKind.HEURISTIC,
        codes={"entity_match": code, **HIGH},
    )


def _entity_fleiss(tmp_path: Path, codes: dict[str, list[str]]) -> tuple[dict[str, float], Any]:
    """Each coder's entity_match codes of units u0, u1, ... written as the run folder's judge
    run (``offline``) or review file; the report's Fleiss kappa by coders, and its inputs."""
    from failcodes.report.rundir import load_run_dir
    from tests.test_review_plan import write_reviews

    for coder, given in codes.items():
        where = "judge/d/retrieval/annotations" if coder == "offline" else f"review/{coder}"
        write_reviews(
            tmp_path / f"{where}.jsonl",
            [_entity_review(f"u{n}", c, coder) for n, c in enumerate(given)],
        )
    inputs = load_run_dir(tmp_path)
    assert inputs.agreement is not None
    rows = inputs.agreement
    fleiss = rows[(rows["statistic"] == "fleiss") & (rows["subject"] == "entity_match")]
    got = dict(zip(fleiss["coders"], fleiss["value"], strict=True))
    return got, inputs


def test_an_adjudicated_review_beside_the_reviewers_is_not_one_more_reviewer(
    tmp_path: Path,
) -> None:
    """review/alice.jsonl, bob.jsonl and adjudicated.jsonl (their adjudication) on 6 units.
    Reviewer vs reviewer agreement read the adjudication as a third reviewer: Fleiss 0.308
    for alice and bob's own -0.021, exit 0, no word."""
    e, p, i = "exact_entity", "partial_entity", "irrelevant"
    codes = {
        "offline": [e, e, p, i, e, p],
        "alice": [e, p, p, i, e, e],
        "bob": [e, e, i, i, p, p],
        "adjudicated": [e, e, p, i, e, p],
    }
    got, inputs = _entity_fleiss(tmp_path, codes)
    # alice vs bob: agree on u0, u3: p_o 2/6; pooled margins exact 5/12, partial 4/12,
    # irrelevant 3/12: p_e = (25 + 16 + 9)/144 = 50/144; (48/144 - 50/144)/(94/144) = -2/94
    assert got["alice vs bob"] == pytest.approx(-2 / 94)
    assert "adjudicated vs alice vs bob" not in got  # was 0.308
    assert got["adjudicated vs offline"] == pytest.approx(1.0)  # still compared with the judge
    assert inputs.notes["agreement"] == [
        "Reviewer adjudicated is named like a consensus (it settles the others' "
        "disagreements): compared with the judge, and left out of reviewer vs reviewer "
        "agreement, where it would raise the reviewers' own (a reviewer? name it otherwise: "
        "labelstudio import --user ID=NAME, or the coder field of its review file)"
    ]


def test_corrected_shares_count_the_adjudicated_review_of_a_unit_reviewed_twice(
    tmp_path: Path,
) -> None:
    """40 units, the judge exact_entity on even ones; u00..u19 drawn (p = 1/2). alice gave
    exact_entity on all 20, the consensus the judge's codes. The shares counted "the first
    coder by name", alice: human-only exact_entity 100.0 [83.2, 100.0] (Clopper-Pearson 20/20)
    where the adjudicated reviews give 10/20."""
    from failcodes.report.rundir import load_run_dir
    from failcodes.units import UnitKind
    from tests.test_review_plan import half_reviewed_study, write_reviews

    judge = {f"u{n:02d}": ("exact_entity" if n % 2 == 0 else "partial_entity") for n in range(40)}
    drawn = [f"u{n:02d}" for n in range(20)]
    alice = [_entity_review(u, "exact_entity", "alice") for u in drawn]
    half_reviewed_study(tmp_path, judge, drawn, alice)
    consensus = [_entity_review(u, judge[u], "consensus") for u in drawn]
    write_reviews(tmp_path / "review" / "consensus.jsonl", consensus)
    inputs = load_run_dir(tmp_path)
    [(caption, table)] = inputs.corrected[UnitKind.RETRIEVAL]
    exact = table[table["code"] == "exact_entity"].iloc[0]
    # 10 of 20 reviewed exact: Clopper-Pearson 95% [0.272, 0.728]; the judge agrees with
    # every review, so the corrected share is the judge's 20/40 = 50.0
    assert exact["human-only (%)"] == "50.0 [27.2, 72.8]"
    assert exact["corrected (%)"].startswith("50.0 [")
    assert exact["disagree"] == "0"
    assert (
        "20 unit(s) reviewed more than once (10 with different codes): consensus's (named "
        "like a consensus) where it has one, else the first coder by name (a dimension it "
        "left empty: the next coder's code) counted"
    ) in caption


def test_each_raters_test_and_retest_columns_are_not_four_raters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """a_t1, a_t2, b_t1, b_t2 (raters a and b, each at two time points) were four raters:
    Fleiss 0.385 at exit 0, mixing a's agreement with b and with a's own retest (units
    2y2n, 4y, 2y2n, 4n, 3y1n, 4n: P-bar 25/36; p_y 11/24, p_e 290/576:
    (400 - 290)/(576 - 290) = 110/286). Refused as two fields of the same raters, as
    a_round1/a_round2 already were."""
    table = tmp_path / "r.csv"
    rows = "1,y,y,n,n\n2,y,y,y,y\n3,n,n,y,y\n4,n,n,n,n\n5,y,y,n,y\n6,n,n,n,n\n"
    table.write_text("item,a_t1,a_t2,b_t1,b_t2\n" + rows, encoding="utf-8")
    code, _, err = run_cli(["agree", str(table), "--stat", "fleiss", *AGREE_JSON], capsys)
    assert code == 2
    assert err.strip() == (
        f"failcodes: error: {table}:1, field 'a_t2': rater columns a_t1, b_t1 and a_t2, b_t2 "
        "look like two fields ('t1', 't2') of the same raters: each column would be a rater; "
        "name the rating's columns with --raters (e.g. --raters 'a_t1,b_t1')"
    )
    # the way through: the first time point, a (y,y,n,n,y,n) vs b (n,y,y,n,n,n): p_o 1/2;
    # p_y 5/12, p_e (25 + 49)/144: (72 - 74)/(144 - 74) = -1/35
    args = ["agree", str(table), "--raters", "a_t1,b_t1", "--stat", "fleiss", *AGREE_JSON]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert json.loads(out)[0]["value"] == pytest.approx(-1 / 35)


def test_a_zero_one_rater_alone_gave_below_the_others_scale_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """r3's two missing 1-3 ratings written 0: a rating of its own (it may be one: a 0-3
    scale), at the interval level alpha 0.616 (the krippendorff package on the same cells
    too) for the 0.779 of the ratings given, and the first line said nothing. Now it asks."""
    table = tmp_path / "z.csv"
    table.write_text(CODED.format(m="0"), encoding="utf-8")
    args = ["agree", str(table), "--level", "interval", "--stat", "krippendorff", *AGREE_JSON]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    (row,) = json.loads(out)
    # krippendorff.alpha([[1,2,3,1,2,3,1,2], [1,2,3,2,2,2,1,3], [1,0,3,1,2,3,0,2]],
    # level_of_measurement="interval") = 0.615866...
    assert row["value"] == pytest.approx(0.615866388308977)
    assert row["notes"][0].endswith(
        "; 0 given by r3 alone (2 rating(s)), the others' lowest 1: a missing rating written "
        "0? leave those cells empty (read here as a rating)"
    )
