"""Ratings-table shapes that still gave a number at exit 0 (session 11, issue 30).

Each was run through ``failcodes agree`` before its fix (the number and exit are beside it);
every value asserted is worked by hand (the sum beside it) or by statsmodels directly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import (
    AGREE_JSON,
    agree_percent,
    agree_percent_run,
    agree_refused,
    ratings_file,
    run_cli,
)

# units 1-4: (3,3), (2,5), (1,1), (3,3) agree on 3 of 4: 0.750 by hand
SCORES = ["1,3,3", "2,2,5", "3,1,1", "4,3,3"]


@pytest.mark.parametrize(
    ("row", "before"),
    [
        # before: one more unit; (2.5,4) disagree: 3/5 = 0.600, exit 0
        ("Mean,2.5,4", 3 / 5),
        # the raters' sums (5,8) disagree: 3/5 = 0.600, exit 0
        ("Total,5,8", 3 / 5),
        # a subtotal whose counts are scores too (2,2): one more agreeing unit, 4/5 = 0.800
        ("Subtotal:,2,2", 4 / 5),
    ],
)
def test_a_total_row_between_the_units_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: str, before: float
) -> None:
    path = ratings_file(tmp_path, "\n".join(["item,r1,r2", *SCORES[:2], row, *SCORES[2:]]) + "\n")
    err = agree_refused(path, capsys)
    word = row.split(",")[0]
    assert err.startswith(
        f"failcodes: error: {path}:4, field 'item': a row of totals between the units? its "
        f"unit id {word!r} names a total; it would be read as one more unit: delete the row"
    ), err
    # --unit-column: every row a unit (the number before), and the first line says so
    code, out, _ = agree_percent_run(path, capsys, "--unit-column", "item")
    (result,) = json.loads(out)
    assert code == 0 and result["value"] == pytest.approx(before)
    assert "line 4 is read as a unit (--unit-column given)" in result["notes"][0]
    path.write_text("\n".join(["item,r1,r2", *SCORES]) + "\n")
    assert agree_percent(path, capsys) == pytest.approx(3 / 4)  # the row deleted


def test_a_unit_lettered_n_between_the_units_is_a_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ids A, B, N, C: 'N' (a count's word too) is a letter among letters, read as a unit:
    # (3,3), (2,5), (1,1), (3,3) agree on 3 of 4
    path = ratings_file(tmp_path, "item,r1,r2\nA,3,3\nB,2,5\nN,1,1\nC,3,3\n")
    assert agree_percent(path, capsys) == pytest.approx(3 / 4)


def test_two_fields_of_each_rater_named_field_first_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # error_R1, severity_R1, error_R2, severity_R2: four raters, percent 0.633, exit 0
    # (R1_error... was refused already). By hand, errors (1,1), (0,0), (1,0), (2,2), (0,0)
    # agree on 4 of 5 units (0.800), severities (2,2), (0,1), (1,0), (2,2), (0,0) on 3 (0.600)
    path = ratings_file(
        tmp_path,
        "item,error_R1,severity_R1,error_R2,severity_R2\n1,1,2,1,2\n2,0,0,0,1\n3,1,1,0,0\n"
        "4,2,2,2,2\n5,0,0,0,0\n",
    )
    err = agree_refused(path, capsys)
    assert err.startswith(f"failcodes: error: {path}:1, field 'severity_R1': rater columns"), err
    assert "two fields ('error', 'severity') of the same raters" in err
    assert agree_percent(path, capsys, "--raters", "error_R1,error_R2") == pytest.approx(4 / 5)
    assert agree_percent(path, capsys, "--raters", "severity_R1,severity_R2") == pytest.approx(
        3 / 5
    )


def test_roles_lettered_or_numbered_field_first_stay_raters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Physician A, Nurse A, Physician B, Nurse B are four people: units (y,y,y,y), (n,n,n,n),
    # (y,n,y,y): percent is the mean over units of agreeing pairs, (6 + 6 + 3) / 18 = 0.833
    path = ratings_file(
        tmp_path, "item,Physician A,Nurse A,Physician B,Nurse B\n1,y,y,y,y\n2,n,n,n,n\n3,y,n,y,y\n"
    )
    assert agree_percent(path, capsys) == pytest.approx(15 / 18)


@pytest.mark.parametrize("mark", ["NA", "N/A", "#N/A", "null"])
def test_a_missing_mark_among_text_codes_is_refused_asking_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mark: str
) -> None:
    # Before: the mark was a category, unit 2 one more agreeing unit: (yes,yes), (NA,NA),
    # (no,yes), (no,no): 3/4 = 0.750, exit 0. Missing: the 3 rated units agree on 2, 0.667.
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    path = ratings_file(tmp_path, f"item,r1,r2\n1,yes,yes\n2,{mark},{mark}\n3,no,yes\n4,no,no\n")
    err = agree_refused(path, capsys)
    assert err.startswith(f"failcodes: error: {path}:3, field 'r1': {mark!r} among text codes"), err
    assert err.rstrip().endswith(
        f"leave the cell empty; an answer: list the categories with --categories no,yes,{mark}"
    ), err
    # an answer (not applicable): a category, as before, now chosen
    assert agree_percent(path, capsys, "--categories", f"no,yes,{mark}") == pytest.approx(3 / 4)
    path.write_text("item,r1,r2\n1,yes,yes\n2,,\n3,no,yes\n4,no,no\n")  # missing
    assert agree_percent(path, capsys) == pytest.approx(2 / 3)
    code, out, _ = run_cli(["agree", str(path), *AGREE_JSON, "--stat", "fleiss"], capsys)
    # statsmodels on the 3 rated units: Pbar 2/3, Pe (3/6)^2 + (3/6)^2 = 1/2 -> 1/3
    want = fleiss_kappa(aggregate_raters([["yes", "yes"], ["no", "yes"], ["no", "no"]])[0])
    assert want == pytest.approx(1 / 3)
    assert code == 0 and json.loads(out)[0]["value"] == pytest.approx(want)


def test_none_or_a_dash_among_text_codes_is_an_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a severity 'none' is a code of its own (only the marks programs write are refused):
    # (minor,minor), (none,none), (major,minor), (none,none) agree on 3 of 4
    path = ratings_file(tmp_path, "item,r1,r2\n1,minor,minor\n2,none,none\n3,major,minor\n4,-,-\n")
    assert agree_percent(path, capsys) == pytest.approx(3 / 4)


def test_percentages_beside_numbers_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # r2's column formatted as numbers, r1's as percent: '90%' and '0.9' were two categories,
    # percent 0.500 where the raters agree on all 4 units (1.000), exit 0
    path = ratings_file(tmp_path, "item,r1,r2\n1,80%,80%\n2,90%,0.9\n3,50%,50%\n4,70%,0.7\n")
    err = agree_refused(path, capsys)
    assert err.startswith(
        f"failcodes: error: {path}:2, field 'r1': rating '80%' and '0.9' (line 3, column 'r2'): "
        "one rating scale written as percentages and as numbers"
    ), err
    path.write_text("item,r1,r2\n1,0.8,0.8\n2,0.9,0.9\n3,0.5,0.5\n4,0.7,0.7\n")
    assert agree_percent(path, capsys) == pytest.approx(1.0)  # 4 of 4
    # percentages alone are read, each a category: (80,80), (90,90), (50,60), (70,70): 3/4
    path.write_text("item,r1,r2\n1,80%,80%\n2,90%,90%\n3,50%,60%\n4,70%,70%\n")
    assert agree_percent(path, capsys) == pytest.approx(3 / 4)


def test_a_unit_id_with_spaces_around_it_is_not_a_unit_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # u1 rated by r1 on one row and by r2 on 'u1 ' (a merged export): two single-rated units,
    # percent 1/2 over u2, u3 = 0.500 with a note, exit 0. As one unit, u1 (yes,yes), u2
    # (no,no), u3 (yes,no) agree on 2 of 3 (0.667).
    path = ratings_file(tmp_path, "item,r1,r2\nu1,yes,\nu2,no,no\nu3,yes,no\nu1 ,,yes\n")
    err = agree_refused(path, capsys)
    assert err.startswith(
        f"failcodes: error: {path}:5, field 'item': unit 'u1 ' is 'u1' (line 2) with spaces "
        "around it: one unit on two rows"
    ), err
    path.write_text("item,r1,r2\nu1,yes,yes\nu2,no,no\nu3,yes,no\n")
    assert agree_percent(path, capsys) == pytest.approx(2 / 3)


def test_a_long_tables_mean_rows_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each rater's mean under the units of a long table: one more unit 'Mean' whose raters
    # disagreed (2.25, 3), percent 3/5 = 0.600, exit 0; the 4 units give 0.750 by hand
    rows = [
        f"{u},{r},{v}"
        for u, (a, b) in zip("1234", ((3, 3), (2, 5), (1, 1), (3, 3)), strict=True)
        for r, v in (("A", a), ("B", b))
    ]
    path = ratings_file(
        tmp_path, "\n".join(["unit,rater,rating", *rows, "Mean,A,2.25", "Mean,B,3"]) + "\n"
    )
    err = agree_refused(path, capsys)
    assert err.startswith(
        f"failcodes: error: {path}:10, field 'unit': a row of totals? its unit 'Mean' names a "
        "total; it would be read as one more unit: delete the row"
    ), err
    assert agree_percent(path, capsys, "--unit-column", "unit") == pytest.approx(3 / 5)  # as before
    path.write_text("\n".join(["unit,rater,rating", *rows]) + "\n")
    assert agree_percent(path, capsys) == pytest.approx(3 / 4)
